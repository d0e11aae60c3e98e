"""Tests for fastbudget.datasets: generators, chunked readers, standardizer, paper loaders."""
import bz2
import csv
import gzip
import io
import itertools
import lzma
import math
import sys
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import sparse
from scipy.stats import ncx2, norm
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from fastbudget.base import NotFittedError
from fastbudget.datasets import (
    PAPER_DATASETS, StreamingStandardizer, collect, load_paper_dataset, make_checkerboard,
    make_drifting_gaussians, make_gauss, make_streamsvm_synthetic, make_waveform, read_csv,
    read_libsvm, stream_chunks,
)
from fastbudget.datasets import _source
from fastbudget.datasets.generators import BLOCK


# =========================================================================== generators
GEN_CASES = [
    ("checkerboard", lambda n, s: make_checkerboard(n, noise=0.15, random_state=s), 2, {"noise": 0.15}),
    ("gauss", lambda n, s: make_gauss(n, random_state=s), 2, {}),
    ("waveform", lambda n, s: make_waveform(n, random_state=s), 21, {}),
    ("streamsvm_C", lambda n, s: make_streamsvm_synthetic("C", n, random_state=s), 5, {}),
    ("drifting_gaussians", lambda n, s: make_drifting_gaussians(n, drift=1e-3, random_state=s), 3,
     {"drift": 1e-3}),
]


@pytest.mark.parametrize("name,make,d,kw", GEN_CASES)
def test_generator_contract(name, make, d, kw):
    X, y = make(5000, 3)
    assert X.shape == (5000, d) and X.dtype == np.float64 and X.flags.c_contiguous
    assert y.dtype.kind == "i" and set(np.unique(y)) == {-1, 1}
    X2, y2 = make(5000, 3)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    X3, _ = make(5000, 4)
    assert not np.array_equal(X, X3)
    # prefix property across a block boundary
    Xp, yp = make(BLOCK + 17, 3)
    assert np.array_equal(Xp, X[:BLOCK + 17]) and np.array_equal(yp, y[:BLOCK + 17])
    # a Generator as random_state is accepted and deterministic given its state
    Xa, _ = make(10, np.random.default_rng(5))
    Xb, _ = make(10, np.random.default_rng(5))
    assert np.array_equal(Xa, Xb)


@pytest.mark.parametrize("name,make,d,kw", GEN_CASES)
def test_stream_chunks_independent_of_chunk_size(name, make, d, kw):
    n = 2 * BLOCK + 333
    X, y = make(n, 11)
    for cs in (1000, 4096, 5000, 3 * BLOCK):
        chunks = list(stream_chunks(name, n, cs, random_state=11, **kw))
        assert all(c[0].shape[0] == cs for c in chunks[:-1])
        assert chunks[-1][0].shape[0] == n - cs * (len(chunks) - 1)
        assert np.array_equal(np.concatenate([c[0] for c in chunks]), X)
        assert np.array_equal(np.concatenate([c[1] for c in chunks]), y)


def test_stream_chunks_small_chunks_and_endless():
    X, y = make_gauss(300, random_state=2)
    got = list(itertools.islice(stream_chunks("gauss", None, 7, random_state=2), 43))
    assert np.array_equal(np.concatenate([c[0] for c in got])[:300], X)
    assert np.array_equal(np.concatenate([c[1] for c in got])[:300], y)


def test_stream_chunks_errors():
    with pytest.raises(ValueError, match="Unknown generator"):
        stream_chunks("nope", 10, 5)
    with pytest.raises(ValueError, match="Unknown parameters"):
        stream_chunks("gauss", 10, 5, noise=0.1)
    with pytest.raises(ValueError, match="chunk_size"):
        stream_chunks("gauss", 10, 0)
    with pytest.raises(ValueError, match="noise"):
        make_checkerboard(10, noise=1.5)
    with pytest.raises(ValueError, match="random_state"):
        make_gauss(10, random_state="x")


def test_checkerboard_board_and_noise():
    X, y = make_checkerboard(200000, random_state=0)
    assert X.min() >= 0.0 and X.max() < 4.0
    parity = (np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2
    assert np.array_equal(y, np.where(parity == 0, 1, -1))
    # uniform: every cell holds about 1/16 of the points
    cells = np.floor(X[:, 0]) * 4 + np.floor(X[:, 1])
    counts = np.bincount(cells.astype(int), minlength=16)
    p = 1 / 16
    assert np.all(np.abs(counts / 200000 - p) < 5 * math.sqrt(p * (1 - p) / 200000))
    Xn, yn = make_checkerboard(200000, noise=0.15, random_state=0)
    assert np.array_equal(X, Xn)  # same positions, only labels flipped
    rate = np.mean(yn != y)
    assert abs(rate - 0.15) < 5 * math.sqrt(0.15 * 0.85 / 200000)


def _gauss_bayes_accuracy():
    # the quadratic Bayes boundary is the circle 3(x1 + 2/3)^2 + 3 x2^2 = 8 ln 4 + 16/3
    r2 = (8 * math.log(4) + 16 / 3) / 3
    c = np.array([-2 / 3, 0.0])
    inside_neg = ncx2.cdf(r2, 2, float(np.sum(c ** 2)))
    outside_pos = ncx2.sf(r2 / 4, 2, float(np.sum((np.array([2.0, 0.0]) - c) ** 2) / 4))
    return 0.5 * inside_neg + 0.5 * outside_pos


def test_gauss_bayes_accuracy():
    exact = _gauss_bayes_accuracy()
    assert abs(exact - 0.815) < 1e-3  # the paper's ~81.5 %
    n = 400000
    X, y = make_gauss(n, random_state=7)
    log_neg = -0.5 * (X ** 2).sum(1)
    log_pos = -math.log(4) - ((X - [2.0, 0.0]) ** 2).sum(1) / 8
    acc = np.mean(np.where(log_pos > log_neg, 1, -1) == y)
    assert abs(acc - exact) < 5 * math.sqrt(exact * (1 - exact) / n)
    # class-conditional moments
    assert abs(np.mean(y == 1) - 0.5) < 5 * math.sqrt(0.25 / n)
    np.testing.assert_allclose(X[y == -1].mean(0), [0, 0], atol=0.01)
    np.testing.assert_allclose(X[y == 1].mean(0), [2, 0], atol=0.02)
    np.testing.assert_allclose(np.cov(X[y == 1].T), 4 * np.eye(2), atol=0.05)


def test_waveform_matches_uci_file(shared_data):
    data = np.loadtxt(gzip.open(shared_data / "waveform" / "waveform-21.tsv.gz"), skiprows=1)
    Xg, yg = make_waveform(60000, binary=False, random_state=0)
    assert set(np.unique(yg)) == {0, 1, 2}
    for c in range(3):
        A = data[data[:, -1] == c, :-1]
        B = Xg[yg == c]
        se = np.sqrt(A.var(0) / len(A) + B.var(0) / len(B))
        z = np.abs(A.mean(0) - B.mean(0)) / se
        assert z.max() < 4.5, (c, z.max())
        # sd: the file's per-attribute sds agree within 10 %
        np.testing.assert_allclose(A.std(0), B.std(0), rtol=0.1)
    _, yb = make_waveform(60000, binary=True, random_state=0)
    assert np.array_equal(yb, np.where(yg == 0, -1, 1))


@pytest.mark.parametrize("name,d", [("A", 2), ("B", 3), ("C", 5)])
def test_streamsvm_synthetic_linear_separability(name, d):
    from sklearn.linear_model import LogisticRegression
    X, y = make_streamsvm_synthetic(name, 20000, random_state=1)
    assert X.shape == (20000, d)
    Xt, yt = make_streamsvm_synthetic(name, 40000, random_state=2)
    acc = LogisticRegression().fit(X, y).score(Xt, yt)
    assert abs(acc - 0.85) < 0.015
    X9, y9 = make_streamsvm_synthetic(name, 40000, separability=0.965, random_state=2)
    acc9 = LogisticRegression().fit(X9[:20000], y9[:20000]).score(X9[20000:], y9[20000:])
    assert abs(acc9 - 0.965) < 0.01
    with pytest.raises(ValueError, match="'A', 'B' or 'C'"):
        make_streamsvm_synthetic("D", 10)


def test_drifting_gaussians_static_and_drift():
    n = 100000
    X, y = make_drifting_gaussians(n, noise=0.0, random_state=3)
    np.testing.assert_allclose(X[y == 1].mean(0), [1, 0, 0], atol=0.02)
    np.testing.assert_allclose(X[y == -1].mean(0), [-1, 0, 0], atol=0.02)
    _, yn = make_drifting_gaussians(n, noise=0.05, random_state=3)
    assert abs(np.mean(yn != y) - 0.05) < 5 * math.sqrt(0.05 * 0.95 / n)
    # drifting: the class axis turns by drift * t
    drift = math.pi / 2 / n
    Xd, yd = make_drifting_gaussians(n, noise=0.0, drift=drift, random_state=3)
    late = slice(n - 5000, n)
    m = (Xd[late][yd[late] == 1].mean(0) - Xd[late][yd[late] == -1].mean(0)) / 2
    theta = drift * (n - 2500)
    np.testing.assert_allclose(m, [math.cos(theta), math.sin(theta), 0], atol=0.05)
    # a test set at the end of the stream, and continuation with start
    Xe, ye = make_drifting_gaussians(20000, noise=0.0, drift=drift, at_time=n, random_state=4)
    me = (Xe[ye == 1].mean(0) - Xe[ye == -1].mean(0)) / 2
    np.testing.assert_allclose(me, [math.cos(drift * n), math.sin(drift * n), 0], atol=0.03)
    Xs, ys = make_drifting_gaussians(1000, drift=drift, start=5000, random_state=3)
    Xf, yf = make_drifting_gaussians(6000, drift=drift, random_state=3)
    assert np.array_equal(Xs, Xf[5000:]) and np.array_equal(ys, yf[5000:])


# =========================================================================== readers
def _write(path, data, comp):
    opener = {"plain": open, "gz": gzip.open, "bz2": bz2.open, "xz": lzma.open}[comp]
    with opener(path, "wb") as f:
        f.write(data)


def _sparse_problem(rng, n=2500, d=40, density=0.2):
    A = sparse.random(n, d, density=density, random_state=np.random.RandomState(1), format="csr")
    A.data = rng.standard_normal(A.data.shape[0]) * 10.0 ** rng.integers(-6, 6, A.data.shape[0])
    y = rng.choice([-1.0, 1.0, 2.0], n)
    return A, y


@pytest.mark.parametrize("comp", ["plain", "gz", "bz2", "xz"])
def test_read_libsvm_matches_sklearn(tmp_path, rng, comp, monkeypatch):
    monkeypatch.setattr(_source, "BLOCK_BYTES", 4096)  # many block boundaries
    A, y = _sparse_problem(rng)
    raw = tmp_path / "raw.svm"
    dump_svmlight_file(A, y, str(raw))
    path = tmp_path / f"data.{ {'plain': 'txt', 'gz': 'gz', 'bz2': 'bz2', 'xz': 'xz'}[comp] }"
    _write(path, raw.read_bytes(), comp)
    Xs, ys = load_svmlight_file(str(raw), n_features=A.shape[1])
    for cs in (1, 333, 10000):
        chunks = list(read_libsvm(path, chunk_size=cs))
        assert all(c[0].shape[0] <= cs and c[0].flags.c_contiguous for c in chunks)
        assert all(c[0].shape[0] == cs for c in chunks[:-1])
        X, yy = collect(chunks)
        # the first pass finds the largest index (the last column is used here)
        assert A.getnnz(0)[-1] > 0 and X.shape[1] == A.shape[1]
        assert np.array_equal(X, Xs.toarray())
        assert np.array_equal(yy, ys)


def test_read_libsvm_real_file_matches_sklearn(shared_data):
    p = shared_data / "adult_a9a" / "a9a.t.gz"
    Xs, ys = load_svmlight_file(str(p), n_features=123)
    X, y = collect(read_libsvm(p, n_features=123, chunk_size=7000))
    assert np.array_equal(X, Xs.toarray()) and np.array_equal(y, ys)


def test_read_libsvm_zero_based_and_comments():
    data = b"# header comment\n\n1 0:1.5 2:2 # trailing\n-1 qid:3 1:-4e-2\n"
    X, y = collect(read_libsvm(io.BytesIO(data)))
    assert np.array_equal(X, [[1.5, 0, 2], [0, -0.04, 0]]) and np.array_equal(y, [1, -1])
    X1, _ = collect(read_libsvm(io.BytesIO(b"1 1:1.5 3:2\n")))
    assert np.array_equal(X1, [[1.5, 0, 2]])
    X2, _ = collect(read_libsvm(io.BytesIO(b"1 1:1.5 3:2\n"), zero_based=True))
    assert np.array_equal(X2, [[0, 1.5, 0, 2]])
    X3, _ = collect(read_libsvm(io.BytesIO(b"1 1:1.5\n-1 3:2\n"), n_features=5))
    assert X3.shape == (2, 5)
    with pytest.raises(ValueError, match="line 2: feature index 0 .* zero_based=False"):
        collect(read_libsvm(io.BytesIO(b"1 1:1\n1 0:1\n"), zero_based=False))


class _NonSeekable(io.RawIOBase):
    def __init__(self, data):
        self._b = io.BytesIO(data)

    def readable(self):
        return True

    def seekable(self):
        return False

    def readinto(self, b):
        return self._b.readinto(b)


def test_read_libsvm_non_seekable_infers_from_first_chunk():
    data = b"".join(b"1 1:1 4:2\n" for _ in range(10)) + b"-1 9:3\n"
    it = read_libsvm(_NonSeekable(data), chunk_size=10)
    X, _ = next(it)
    assert X.shape == (10, 4)
    with pytest.raises(ValueError, match=r"line 11: feature index 9 .*inferred from the first chunk.*n_features"):
        next(it)
    X, _ = collect(read_libsvm(_NonSeekable(data), chunk_size=10, n_features=9))
    assert X.shape == (11, 9) and X[10, 8] == 3
    # seekable file object: a first pass sees the whole file
    X, _ = collect(read_libsvm(io.BytesIO(data), chunk_size=10))
    assert X.shape == (11, 9)


def test_read_libsvm_later_zero_index_in_auto_mode():
    data = b"1 1:1\n" * 5 + b"1 0:1\n"
    with pytest.raises(ValueError, match="line 6: feature index 0.*first chunk.*zero_based=True"):
        collect(read_libsvm(_NonSeekable(data), chunk_size=5))


@pytest.mark.parametrize("line,pattern", [
    (b"1 3\n", "token '3' is not of the form index:value"),
    (b"1 a:3\n", "the feature index in 'a:3' is not a non-negative integer"),
    (b"1 3:1 2:1\n", "feature index 2 .* sorted and unique"),
    (b"1 3:1 3:1\n", "feature index 3 .* sorted and unique"),
    (b"1 2:\n", "token '2:' has no value after ':'"),
    (b"1 2:x\n", "value of feature index 2 'x' is not a number"),
    (b"abc 2:1\n", "label 'abc' is not a number"),
    (b"1 9:1\n", r"feature index 9 is beyond n_features=5"),
])
def test_read_libsvm_errors_name_file_and_line(tmp_path, line, pattern, monkeypatch):
    monkeypatch.setattr(_source, "BLOCK_BYTES", 16)
    path = tmp_path / "bad.svm"
    good = b"1 1:0.5 2:1\n\n# comment\n" + b"-1 3:2\n" * 7
    path.write_bytes(good + line + b"1 1:1\n")
    with pytest.raises(ValueError, match=f"bad.svm, line 11: {pattern}"):
        collect(read_libsvm(path, n_features=5, chunk_size=4))


def test_reader_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.svm"):
        read_libsvm(tmp_path / "nothere.svm")
    with pytest.raises(FileNotFoundError, match="nothere.csv"):
        read_csv(str(tmp_path / "nothere.csv"))
    p = tmp_path / "plain.gz"
    p.write_bytes(b"1 1:1\n")
    with pytest.raises(ValueError, match="gzip"):
        collect(read_libsvm(p))
    z = tmp_path / "data.zip"
    z.write_bytes(b"PK\x03\x04junk")
    with pytest.raises(ValueError, match="zip compression is not supported"):
        collect(read_libsvm(z))
    z2 = tmp_path / "data.bin"
    z2.write_bytes(b"\x28\xb5\x2f\xfdjunk")
    with pytest.raises(ValueError, match="zstd compression is not supported"):
        collect(read_csv(z2))
    # gzip content under a plain name is recognised by its magic bytes
    g = tmp_path / "data.txt"
    g.write_bytes(gzip.compress(b"1 2:1\n"))
    X, _ = collect(read_libsvm(g))
    assert np.array_equal(X, [[0, 1]])
    # truncated gzip
    t = tmp_path / "trunc.gz"
    t.write_bytes(gzip.compress(b"1 2:1\n" * 1000)[:-30])
    with pytest.raises(ValueError, match="trunc.gz"):
        collect(read_libsvm(t))
    with pytest.raises(ValueError, match="chunk_size"):
        read_libsvm(g, chunk_size=0)


def test_read_from_stdin(monkeypatch):
    data = b"1 1:1 2:0.5\n-1 3:2\n" * 50
    for payload in (data, gzip.compress(data)):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(payload)))
        X, y = collect(read_libsvm("-", chunk_size=30))
        assert X.shape == (100, 3) and y.sum() == 0 and X[1, 2] == 2
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(b"1,2,3\n4,5,6\n"))))
    X, y = collect(read_csv("-"))
    assert np.array_equal(X, [[1, 2], [4, 5]]) and np.array_equal(y, [3, 6])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"1 1:1\n1 5:1\n")))
    with pytest.raises(ValueError, match="<stdin>, line 2: feature index 5"):
        collect(read_libsvm("-", chunk_size=1))


def test_stdin_subprocess(tmp_path):
    import subprocess
    p = tmp_path / "d.svm.bz2"
    p.write_bytes(bz2.compress(b"1 1:1\n-1 2:2\n" * 10))
    code = ("from fastbudget.datasets import read_libsvm, collect\n"
            "X, y = collect(read_libsvm('-', n_features=2, chunk_size=3))\n"
            "print(X.shape, X.sum(), y.sum())")
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], stdin=open(p, "rb"), capture_output=True,
                         cwd=root, check=True, text=True).stdout
    assert out.strip() == "(20, 2) 30.0 0.0"


# ---------------------------------------------------------------- number parsing is exact
_float_tokens = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False, width=32).map(lambda v: f"{v:.7g}"),
    st.tuples(st.integers(-10**20, 10**20), st.integers(-30, 30)).map(lambda t: f"{t[0]}e{t[1]}"),
    st.tuples(st.integers(0, 10**12), st.integers(0, 10**9), st.sampled_from(["", "-", "+"]))
    .map(lambda t: f"{t[2]}{t[0]}.{t[1]:09d}"),
    st.sampled_from(["+.5", "5.", "-0", "1E5", "0.000", "1e-400",
                     "00012", "-0.0e+0", "123456789012345678901234567890"]),
)


@pytest.mark.parametrize("tok", ["nan", "inf", "-inf", "1e400"])
def test_non_finite_numbers_are_refused(tok):
    """Python's float parses these; a stream learner cannot use them, so the readers say
    where they are (the estimators would only say that X contains NaN or infinity)."""
    with pytest.raises(ValueError, match=f"line 1: value in feature column 0 '{tok}' is not a finite"):
        collect(read_csv(io.BytesIO(f"{tok},1\n".encode()), header=False))
    with pytest.raises(ValueError, match=f"line 1: value of feature index 1 '{tok}' is not a finite"):
        collect(read_libsvm(io.BytesIO(f"1 1:{tok}\n".encode())))


@settings(max_examples=60, deadline=None)
@given(st.lists(_float_tokens, min_size=1, max_size=30))
def test_number_parsing_is_bit_exact(tokens):
    csv_line = ",".join(tokens).encode() + b",1\n"
    X, _ = collect(read_csv(io.BytesIO(csv_line), header=False))
    svm_line = ("1 " + " ".join(f"{i + 1}:{t}" for i, t in enumerate(tokens)) + "\n").encode()
    Xs, _ = collect(read_libsvm(io.BytesIO(svm_line)))
    ref = np.array([float(t) for t in tokens])
    for got in (X[0], Xs[0]):
        assert np.array_equal(got.view(np.int64), ref.view(np.int64)) or (
            np.array_equal(np.isnan(got), np.isnan(ref))
            and np.array_equal(got[~np.isnan(got)].view(np.int64), ref[~np.isnan(ref)].view(np.int64)))


# ---------------------------------------------------------------- CSV
def test_read_csv_sniffing_header_and_labels():
    X, y = collect(read_csv(io.BytesIO(b"0\t1\ttarget\n1.5\t2\t0\n3\t4\t1\n")))
    assert np.array_equal(X, [[1.5, 2], [3, 4]]) and np.array_equal(y, [0, 1])
    X, y = collect(read_csv(io.BytesIO(b"  1   2  7\n 3 4   8 \n"), label_column=0))
    assert np.array_equal(X, [[2, 7], [4, 8]]) and np.array_equal(y, [1, 3])
    X, y = collect(read_csv(io.BytesIO(b"\xef\xbb\xbfa,b,c\r\n1, 2, 3\r\n\r\n4 ,5,6"), label_column="b"))
    assert np.array_equal(X, [[1, 3], [4, 6]]) and np.array_equal(y, [2, 5])
    X, y = collect(read_csv(io.BytesIO(b"A,1,2\nZ,3,4\n"), label_column=0, label_type="str"))
    assert np.array_equal(X, [[1, 2], [3, 4]]) and list(y) == ["A", "Z"]
    X, y = collect(read_csv(io.BytesIO(b"1;2\n3;4\n"), delimiter=";", label_column=None))
    assert np.array_equal(X, [[1, 2], [3, 4]]) and y is None
    X, y = collect(read_csv(io.StringIO("1,2\n3,4\n")))  # text-mode file object
    assert np.array_equal(X, [[1], [3]])
    X, y = collect(read_csv(io.BytesIO(b"")))
    assert X.shape[0] == 0
    with pytest.raises(ValueError, match="not in the header"):
        collect(read_csv(io.BytesIO(b"a,b\n1,2\n"), label_column="c"))
    with pytest.raises(ValueError, match="delimiter"):
        read_csv(io.BytesIO(b""), delimiter=",,")


@pytest.mark.parametrize("text,label_column,want_y,want_X", [
    (b"T,2,8\nI,5,12\n", 0, ["T", "I"], [[2, 8], [5, 12]]),        # UCI letter: no header
    (b"a,b,label\n1,2,0\n3,4,1\n", -1, [0.0, 1.0], [[1, 2], [3, 4]]),
    (b"a,b,label\n\n1,2,cat\n3,4,dog\n", -1, ["cat", "dog"], [[1, 2], [3, 4]]),
    (b"a,b,label\n1,2,cat\n3,4,dog\n", "label", ["cat", "dog"], [[1, 2], [3, 4]]),
    (b"1\t2\tyes\n3\t4\tno\n", -1, ["yes", "no"], [[1, 2], [3, 4]]),
    (b"1,2,0\n3,4,1\n", -1, [0.0, 1.0], [[1, 2], [3, 4]]),
    (b"1,2,+1\n3,4,-1\n", -1, [1.0, -1.0], [[1, 2], [3, 4]]),
    (b"0\t1\t2\ttarget\n1\t2\t5\t0\n3\t4\t6\t1\n", -1, [0.0, 1.0], [[1, 2, 5], [3, 4, 6]]),
    (b"0,1,2,3\n1,2,5,0\n3,4,6,1\n", -1, [0.0, 1.0], [[1, 2, 5], [3, 4, 6]]),
    (b"0,1,2,3\n1,2,5,cat\n3,4,6,dog\n", -1, ["cat", "dog"], [[1, 2, 5], [3, 4, 6]]),
])
def test_read_csv_label_type_auto(text, label_column, want_y, want_X):
    X, y = collect(read_csv(io.BytesIO(text), label_column=label_column, label_type="auto"))
    assert np.array_equal(X, want_X)
    assert list(y) == want_y
    assert (y.dtype.kind == "f") == isinstance(want_y[0], float)


def test_read_csv_header_of_column_numbers():
    # also with numeric labels (the default): PMLB's and pandas' headers are not rows
    X, y = collect(read_csv(io.BytesIO(b"0,1,2,target\n1,2,5,0\n")))
    assert np.array_equal(X, [[1, 2, 5]]) and list(y) == [0.0]
    X, y = collect(read_csv(io.BytesIO(b"0,1,2,3\n1,2,5,0\n")))
    assert np.array_equal(X, [[1, 2, 5]]) and list(y) == [0.0]
    # a data line that merely starts low is data
    X, y = collect(read_csv(io.BytesIO(b"0,1,3,1\n1,2,5,0\n")))
    assert X.shape == (2, 3)


def test_read_csv_label_type_auto_needs_a_numeric_label_throughout():
    # decided on the first data line: a later text label is an error that names its line
    with pytest.raises(ValueError, match="line 2.*label 'x' is not a number"):
        collect(read_csv(io.BytesIO(b"1,2,0\n3,4,x\n"), label_type="auto"))
    with pytest.raises(ValueError, match="label_type"):
        read_csv(io.BytesIO(b""), label_type="text")


def test_read_csv_string_labels_across_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(_source, "BLOCK_BYTES", 50)
    rows = [(chr(65 + i % 26), i, 2 * i) for i in range(200)]
    p = tmp_path / "l.csv.gz"
    _write(p, "".join(f"{a},{b},{c}\n" for a, b, c in rows).encode(), "gz")
    chunks = list(read_csv(p, label_column=0, label_type="str", chunk_size=7))
    X, y = collect(chunks)
    assert list(y) == [r[0] for r in rows]
    assert np.array_equal(X, [[r[1], r[2]] for r in rows])


@pytest.mark.parametrize("line,pattern", [
    (b"1,2\n", "expected 3 fields .* separated by ',', found 2"),
    (b"1,2,3,4\n", "expected 3 fields .* found 4"),
    (b"1,,3\n", "field 2 is empty"),
    (b"1,x,3\n", "value in feature column 1 'x' is not a number"),
    (b"1,2,?\n", "label '\\?' is not a number"),
])
def test_read_csv_errors_name_file_and_line(tmp_path, line, pattern, monkeypatch):
    monkeypatch.setattr(_source, "BLOCK_BYTES", 8)
    p = tmp_path / "bad.csv"
    p.write_bytes(b"a,b,c\n" + b"1,2,3\n" * 5 + b"\n" + line)
    with pytest.raises(ValueError, match=f"bad.csv, line 8: {pattern}"):
        collect(read_csv(p, chunk_size=2))


def test_read_csv_matches_loadtxt(tmp_path, rng):
    A = rng.standard_normal((3000, 12)) * 10.0 ** rng.integers(-5, 5, (3000, 12))
    p = tmp_path / "m.tsv.bz2"
    buf = io.StringIO()
    np.savetxt(buf, A, delimiter="\t", fmt="%.15g")
    _write(p, buf.getvalue().encode(), "bz2")
    X, y = collect(read_csv(p, label_column=3, chunk_size=1000))
    ref = np.loadtxt(io.StringIO(buf.getvalue()), delimiter="\t")
    assert np.array_equal(X, np.delete(ref, 3, axis=1)) and np.array_equal(y, ref[:, 3])


# ---------------------------------------------------------------- constant memory
@pytest.mark.parametrize("fmt", ["csv", "libsvm"])
def test_readers_stream_in_constant_memory(tmp_path, fmt, monkeypatch):
    monkeypatch.setattr(_source, "BLOCK_BYTES", 1 << 18)
    n, d, chunk = 200_000, 5, 1000
    rng = np.random.default_rng(0)
    A = np.round(rng.standard_normal((n, d)), 4)
    p = tmp_path / f"big.{fmt}.gz"
    with gzip.open(p, "wb", compresslevel=1) as f:
        for i in range(0, n, 20000):
            part = A[i:i + 20000]
            if fmt == "csv":
                lines = "\n".join(",".join(f"{v:.4f}" for v in r) + ",1" for r in part.tolist())
            else:
                lines = "\n".join("1 " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(r))
                                  for r in part.tolist())
            f.write((lines + "\n").encode())
    reader = read_csv(p, chunk_size=chunk) if fmt == "csv" else read_libsvm(p, n_features=d, chunk_size=chunk)
    next(reader)  # compile and warm up outside the measurement
    tracemalloc.start()
    rows, total = 1, 0.0
    for X, _ in reader:
        rows += 1
        total += X[:, 0].sum()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    full = n * d * 8
    assert rows == n // chunk
    # one chunk (40 kB) plus about three read blocks (256 KiB each); the data itself is 8 MB
    assert peak < 4 * _source.BLOCK_BYTES + 4 * chunk * d * 8 < full / 3, peak
    assert abs(total - A[chunk:, 0].sum()) < 1e-6


# =========================================================================== standardizer
def test_standardizer_fit_matches_numpy(rng):
    X = rng.standard_normal((5000, 6)) * [1, 10, 1e-3, 5, 1, 1] + [0, 1e6, -3, 2, 7, 0]
    X[:, 5] = 3.3  # constant column
    ref_mean, ref_sd = X.mean(0), X.std(0)
    sc = StreamingStandardizer().fit(X)
    np.testing.assert_allclose(sc.mean_, ref_mean, rtol=1e-13)
    np.testing.assert_allclose(sc.scale_[:5], ref_sd[:5], rtol=1e-9)
    assert sc.scale_[5] == 1.0
    # one pass over chunks gives the same statistics
    sc2 = StreamingStandardizer().fit((X[i:i + 333], None) for i in range(0, 5000, 333))
    np.testing.assert_allclose(sc2.mean_, ref_mean, rtol=1e-13)
    np.testing.assert_allclose(sc2.scale_[:5], ref_sd[:5], rtol=1e-9)
    assert sc2.scale_[5] == 1.0 and sc2.n_samples_seen_ == 5000
    Xc = X.copy()
    Z = sc2.transform(X)
    assert np.array_equal(X, Xc)  # input untouched
    np.testing.assert_allclose(Z[:, :5].mean(0), 0, atol=1e-9)
    np.testing.assert_allclose(Z[:, :5].std(0), 1, rtol=1e-9)
    assert np.all(np.abs(Z[:, 5]) < 1e-12)
    np.testing.assert_allclose(sc2.inverse_transform(Z), X, rtol=1e-12)


def test_standardizer_fit_on_reader(tmp_path, rng):
    A = rng.standard_normal((2000, 3)) * [1, 2, 3]
    p = tmp_path / "s.csv"
    np.savetxt(p, A, delimiter=",", fmt="%.17g")
    sc = StreamingStandardizer().fit(read_csv(p, label_column=None, chunk_size=128))
    np.testing.assert_allclose(sc.mean_, A.mean(0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(sc.scale_, A.std(0), rtol=1e-12)


def test_standardizer_warmup_window_and_stream(rng):
    X = rng.standard_normal((1000, 3)) + [0, 5, -5]
    y = rng.choice([-1, 1], 1000)
    sc = StreamingStandardizer(n_warmup=250)
    for i in range(0, 1000, 100):
        sc.partial_fit(X[i:i + 100])
    np.testing.assert_allclose(sc.mean_, X[:250].mean(0), rtol=1e-13)
    np.testing.assert_allclose(sc.scale_, X[:250].std(0), rtol=1e-12)
    assert sc.frozen_ and sc.n_samples_seen_ == 250
    chunks = [(X[i:i + 64], y[i:i + 64]) for i in range(0, 1000, 64)]
    out = list(StreamingStandardizer(n_warmup=250).transform_stream(iter(chunks)))
    assert [o[0].shape[0] for o in out] == [c[0].shape[0] for c in chunks]
    Z = np.concatenate([o[0] for o in out])
    np.testing.assert_allclose(Z, (X - X[:250].mean(0)) / X[:250].std(0), rtol=1e-12, atol=1e-12)
    assert np.array_equal(np.concatenate([o[1] for o in out]), y)
    # stream shorter than the window: statistics of everything
    out = list(StreamingStandardizer(n_warmup=5000).transform_stream(c[0] for c in chunks))
    np.testing.assert_allclose(np.concatenate(out), (X - X.mean(0)) / X.std(0), rtol=1e-12, atol=1e-12)


def test_standardizer_errors():
    with pytest.raises(NotFittedError):
        StreamingStandardizer().transform(np.ones((2, 2)))
    sc = StreamingStandardizer().fit(np.arange(6.0).reshape(3, 2))
    with pytest.raises(ValueError, match="3 features, but the standardizer was fitted with 2"):
        sc.transform(np.ones((2, 3)))
    with pytest.raises(ValueError, match="n_warmup"):
        StreamingStandardizer(n_warmup=0).partial_fit(np.ones((2, 2)))
    with pytest.raises(ValueError, match="no rows"):
        StreamingStandardizer().fit(iter([]))


# =========================================================================== loaders
# rows / features / positives as stated in the SOURCE.md files (and the paper's binary tasks)
SOURCE_COUNTS = {
    "adult": (32561 + 16281, 123, 7841 + 3846),
    "adult_paper": (30162, 123, 7508),
    "banana": (5300, 2, 2376),
    "ijcnn": (49990 + 91701, 22, 4853 + 8712),
    "letter": (20000, 16, None),
    "pendigits": (7494 + 3498, 16, 780 + 719 + 720 + 719 + 719 + 363 + 336 + 336 + 336 + 336),
    "shuttle": (43500 + 14500, 9, 43500 - 34108 + 14500 - 11478),
    "usps": (7291 + 2007, 256, 1194 + 658 + 664 + 542 + 644 + 359 + 166 + 170 + 166 + 177),
    "waveform": (5000, 21, 1647 + 1696),
    "covtype": (20000, 54, 9814),
    "mnist_0v1": (1000, 784, 500),
    "mnist_8v9": (1000, 784, 500),
    "w8a": (14951, 300, 454),
    "australian": (690, 14, 307),
    "german": (1000, 24, 700),
    "heart": (270, 13, 120),
    "ionosphere": (351, 34, 225),
    "sonar": (208, 60, 97),
    "mushrooms": (8124, 117, 3916),
    "thyroid": (215, 5, 65),
    "ripley": (1250, 2, 625),
}
GIVEN_SPLITS = {"adult": (32561, 16281), "adult_paper": (21048, 9114), "ijcnn": (49990, 91701), "letter": (16000, 4000),
                "pendigits": (7494, 3498), "shuttle": (43500, 14500), "usps": (7291, 2007),
                "waveform": (4000, 1000), "ripley": (250, 1000), "banana": (4300, 1000),
                "thyroid": (140, 75), "covtype": (16000, 4000), "mnist_0v1": (800, 200)}


def test_loader_table_is_complete():
    assert set(SOURCE_COUNTS) == set(PAPER_DATASETS)


@pytest.mark.parametrize("name", sorted(SOURCE_COUNTS))
def test_paper_loader_counts(shared_data, name):
    Xa, ya, Xb, yb = load_paper_dataset(name, shared_data)
    n, d, pos = SOURCE_COUNTS[name]
    assert Xa.shape[0] + Xb.shape[0] == n and Xa.shape[1] == d and Xb.shape[1] == d
    for X, y in ((Xa, ya), (Xb, yb)):
        assert X.dtype == np.float64 and X.flags.c_contiguous and np.isfinite(X).all()
        assert y.shape == (X.shape[0],) and set(np.unique(y)) <= {-1, 1}
    assert set(np.unique(ya)) == {-1, 1}
    if Xb.shape[0]:
        assert set(np.unique(yb)) == {-1, 1}
    if pos is not None:
        assert (ya == 1).sum() + (yb == 1).sum() == pos
    if name in GIVEN_SPLITS:
        assert (Xa.shape[0], Xb.shape[0]) == GIVEN_SPLITS[name]


def test_adult_paper_rows_are_the_complete_uci_rows(shared_data):
    # Platt's a9a coding: 14 one-hot groups (1-based indices); a missing value leaves its group
    # empty. UCI adult.data has '?' in workclass 1,836, occupation 1,843, native-country 583 times.
    groups = [(1, 5), (6, 13), (14, 18), (19, 34), (35, 39), (40, 46), (47, 60), (61, 66),
              (67, 71), (72, 73), (74, 75), (76, 77), (78, 82), (83, 123)]
    Xa, _, _, _ = load_paper_dataset("adult", shared_data)
    counts = np.stack([Xa[:, lo - 1:hi].sum(1) for lo, hi in groups], axis=1)
    assert counts.max() == 1
    empty = counts == 0
    assert [int(empty[:, j].sum()) for j in (1, 6, 13)] == [1836, 1843, 583]
    assert not np.delete(empty, [1, 6, 13], axis=1).any()
    complete = Xa[~empty.any(axis=1)]
    Pa, _, Pb, _ = load_paper_dataset("adult_paper", shared_data)
    both = np.vstack([Pa, Pb])
    assert np.array_equal(both[np.lexsort(both.T)], complete[np.lexsort(complete.T)])


def test_letter_binarisation_against_csv_module(shared_data):
    with open(shared_data / "letter" / "letter-recognition.data", newline="") as f:
        rows = list(csv.reader(f))
    ref = np.array([1 if r[0] >= "N" else -1 for r in rows])
    ref_X = np.array([[float(v) for v in r[1:]] for r in rows])
    Xa, ya, Xb, yb = load_paper_dataset("letter", shared_data)
    assert np.array_equal(np.concatenate([ya, yb]), ref)
    assert np.array_equal(np.vstack([Xa, Xb]), ref_X)


def test_loader_split_and_standardize(shared_data):
    a = load_paper_dataset("banana", shared_data, random_state=1)
    b = load_paper_dataset("banana", shared_data, random_state=1)
    c = load_paper_dataset("banana", shared_data, random_state=2)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    # stratified: the test part has the class proportions of the whole to within one row
    assert abs((a[3] == 1).sum() - 1000 * 2376 / 5300) <= 1
    # train and test together are the whole file
    F, _ = collect(read_libsvm(shared_data / "banana" / "banana.all.txt"))
    allrows = np.vstack([a[0], a[2]])
    assert np.array_equal(allrows[np.lexsort(allrows.T)], F[np.lexsort(F.T)])
    Xa, ya, Xb, yb = load_paper_dataset("sonar", shared_data, standardize=True, test_size=0.25)
    assert Xb.shape[0] == 52
    np.testing.assert_allclose(Xa.mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(Xa.std(0), 1, rtol=1e-12)
    Ra, _, Rb, _ = load_paper_dataset("sonar", shared_data, test_size=0.25)
    np.testing.assert_allclose(Xb, (Rb - Ra.mean(0)) / Ra.std(0), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="fixed train/test split"):
        load_paper_dataset("adult", shared_data, test_size=0.1)
    with pytest.raises(ValueError, match="Unknown data set"):
        load_paper_dataset("diabetes", shared_data)
    with pytest.raises(FileNotFoundError):
        load_paper_dataset("banana", shared_data / "nope")


def test_standardizer_clip(rng):
    X = rng.normal(size=(500, 3))
    X[7, 1] = 400.0
    plain = StreamingStandardizer().fit(X)
    st = StreamingStandardizer(clip=3.0).fit(X)
    Z = plain.transform(X)
    Zc = st.transform(X)
    assert np.abs(Z).max() > 3 and np.abs(Zc).max() <= 3.0
    np.testing.assert_array_equal(Zc, np.clip(Z, -3.0, 3.0))
    np.testing.assert_array_equal(st.mean_, plain.mean_)     # statistics are not clipped
    # the stream form clips too
    out = np.vstack([z for z, _ in st.transform_stream((X[i:i + 100], None)
                                                       for i in range(0, 500, 100))])
    assert np.abs(out).max() <= 3.0
    for bad in (0, -1.0, float("nan"), float("inf"), True, "3"):
        with pytest.raises(ValueError, match="clip must be a positive number"):
            StreamingStandardizer(clip=bad).fit(X)


@pytest.mark.parametrize("fmt", ["libsvm", "csv"])
def test_row_lines_name_the_line_of_every_row(tmp_path, fmt, monkeypatch):
    """RowLines maps each row read to its line: header, blank and comment lines are counted,
    across chunks and block boundaries, and it stores only where rows and lines drift."""
    from fastbudget.datasets.readers import RowLines
    monkeypatch.setattr(_source, "BLOCK_BYTES", 32)
    rng = np.random.default_rng(11)
    lines = ["a,b,label"] if fmt == "csv" else ["# a comment line"]
    want = []
    for i in range(200):
        if rng.random() < 0.1:
            lines.append("" if fmt == "csv" or rng.random() < 0.5 else "# note")
        a, b = rng.integers(0, 9, size=2)
        lines.append(f"{a},{b},{i}" if fmt == "csv" else f"{i} 1:{a} 2:{b}")
        want.append(len(lines))
    path = tmp_path / "rows.txt"
    path.write_text("\n".join(lines) + "\n")
    where = RowLines()
    read = read_csv if fmt == "csv" else read_libsvm
    ys = [y for _, y in read(str(path), chunk_size=7, row_lines=where)]
    assert np.concatenate(ys).tolist() == list(range(200))
    assert where.n_rows == 200
    assert [where.line(i) for i in range(200)] == want
    assert len(where._row) == len(set(np.array(want) - np.arange(200)))
    with pytest.raises(IndexError):
        where.line(200)
    with pytest.raises(TypeError):
        read(str(path), row_lines={})
    # a stream reader forgets the rows it no longer names: the later rows keep their lines
    # and the record shrinks to the runs from there on
    n_runs = len(where._row)
    where.forget_before(150)
    assert [where.line(i) for i in range(150, 200)] == want[150:]
    assert len(where._row) == len(set(np.array(want[150:]) - np.arange(150, 200))) < n_runs
    with pytest.raises(IndexError, match="forgotten"):
        where.line(149)


def test_cli_learning_a_stream_with_comments_keeps_the_line_record_bounded(tmp_path,
                                                                          monkeypatch):
    """`fastbudget train` on a LIBSVM file with a comment line between every two rows: the
    record of row lines holds the rows read but not yet learned (the current chunk, the
    standardiser's warm-up rows and the reader's block ahead), not one entry per gap of
    the whole file, and a bad label in the last chunk is still named by its line."""
    from fastbudget import cli
    from fastbudget.cli.data import Where
    monkeypatch.setattr(_source, "BLOCK_BYTES", 4096)
    rng = np.random.default_rng(3)
    lines = []
    for i in range(3000):
        lines.append(f"{1 if rng.random() < 0.5 else -1} 1:{rng.normal():.4f} 2:{rng.normal():.4f}")
        lines.append("# comment")
    lines[2 * 2900] = "7 1:0 2:0"          # an unknown label on line 5801, in the last chunk
    path = tmp_path / "s.svm"
    path.write_text("\n".join(lines) + "\n")
    sizes = []
    real = Where.forget_before

    def spy(self, i):
        real(self, i)
        sizes.append(len(self.rows._row))

    Where.forget_before = spy
    try:
        rc = cli.main(["train", "perceptron", str(path), "--chunk-size", "500",
                       "--warmup-rows", "500", "-o", str(tmp_path / "m.npz"), "--quiet"])
    finally:
        Where.forget_before = real
    assert rc == 2
    assert len(sizes) == 5                 # chunks learned before the bad one
    assert max(sizes) < 1000               # without forgetting: 500, 1000, ..., 2500+


def test_read_csv_semicolons_and_decimal_commas():
    X, y = collect(read_csv(io.BytesIO(b"a;b;label\n1.5;2;0\n3;-4e1;1\n")))
    assert X.tolist() == [[1.5, 2.0], [3.0, -40.0]] and y.tolist() == [0.0, 1.0]
    X, y = collect(read_csv(io.BytesIO(b"1;2\n3;4\n"), header=False))
    assert X.tolist() == [[1.0], [3.0]] and y.tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match=r"line 3: value in feature column 1 '2,5' .*decimal comma"):
        collect(read_csv(io.BytesIO(b"a;b;label\n1;2;0\n3;2,5;1\n")))
    with pytest.raises(ValueError, match=r"label '1,x' is not a number\.$"):
        collect(read_csv(io.BytesIO(b"a;label\n1;1,x\n")))


def test_errors_name_libsvm_features_by_index_and_cut_runaway_fields():
    """A LIBSVM value is named by its feature index on the line (as the user wrote it, zero-
    or one-based), a CSV value by its column; a runaway field (a whole line read as one
    value) is cut in the message."""
    for data, base, want in ((b"1 1:0.5 3:x\n", "auto", "value of feature index 3 'x'"),
                             (b"1 0:0.5 3:x\n", "auto", "value of feature index 3 'x'"),
                             (b"1 3:x\n", True, "value of feature index 3 'x'")):
        with pytest.raises(ValueError, match=f"line 1: {want} is not a number"):
            collect(read_libsvm(io.BytesIO(data), zero_based=base))
    field = "y" * 20_000
    with pytest.raises(ValueError) as exc:
        collect(read_csv(io.BytesIO(f"1,{field},1\n".encode()), header=False))
    msg = str(exc.value)
    assert "value in feature column 1 'yyyy" in msg and "(20,000 characters) is not a number" in msg
    assert len(msg) < 200
