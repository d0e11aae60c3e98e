"""Regression tests from a user-eye review of fastbudget.datasets (readers, generators,
standardizer, loaders): each test failed before its fix."""
import io

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from fastbudget.base import NotFittedError
from fastbudget.datasets import (
    StreamingStandardizer, _source, collect, load_paper_dataset, make_drifting_gaussians,
    read_csv, read_libsvm, stream_chunks,
)


# =========================================================================== readers
@pytest.mark.parametrize("block", [None, 1, 2, 5, 64])
def test_lone_cr_line_ends_read_as_the_same_file_with_newlines(block, monkeypatch):
    """A file whose lines end in '\\r' alone (classic Mac OS; Excel's "CSV (Macintosh)") was
    one long line: read_csv took it for a header and returned no rows, without an error."""
    if block is not None:
        monkeypatch.setattr(_source, "BLOCK_BYTES", block)
    rng = np.random.default_rng(0)
    rows = [f"{a:.3f},{b:.3f},{int(c)}" for a, b, c in rng.normal(size=(40, 3))]
    csv_lf = ("x1,x2,label\n" + "\n".join(rows) + "\n").encode()
    svm_lf = ("# comment\n" + "\n".join(f"{r.split(',')[2]} 1:{r.split(',')[0]} "
                                        f"3:{r.split(',')[1]}" for r in rows) + "\n").encode()
    for read, lf in ((read_csv, csv_lf), (read_libsvm, svm_lf)):
        want_X, want_y = collect(read(io.BytesIO(lf), chunk_size=7))
        assert want_X.shape[0] == 40
        for cr in (lf.replace(b"\n", b"\r"), lf.replace(b"\n", b"\r")[:-1]):
            X, y = collect(read(io.BytesIO(cr), chunk_size=7))
            assert np.array_equal(X, want_X) and np.array_equal(y, want_y)
    # a bad line is named by its line number, as in the '\n' file
    bad = csv_lf.replace(b"\n", b"\r").replace(rows[30].encode(), b"1,x,0")
    with pytest.raises(ValueError, match=r"line 32: value in feature column 1 'x'"):
        collect(read_csv(io.BytesIO(bad)))
    # '\r\n' files keep their line numbers (the '\r' is not a line of its own)
    bad = csv_lf.replace(b"\n", b"\r\n").replace(rows[30].encode(), b"1,x,0")
    with pytest.raises(ValueError, match=r"line 32: value in feature column 1 'x'"):
        collect(read_csv(io.BytesIO(bad)))


# =========================================================================== generators
@pytest.mark.parametrize("kw", [{"at_time": float("nan")}, {"at_time": float("inf")},
                                {"at_time": "10"}, {"at_time": True},
                                {"separation": float("inf")}])
def test_drifting_gaussians_refuses_non_finite_time_and_separation(kw):
    """at_time was not checked (NaN or inf gave NaN features without a word, a string failed
    deep inside with "could not convert string to float"), nor was an infinite separation
    (inf * 0 = NaN in the features)."""
    name = next(iter(kw))
    with pytest.raises(ValueError, match=f"{name} must be a .*finite number"):
        make_drifting_gaussians(5, drift=0.1, random_state=0, **kw)
    if name == "separation":
        with pytest.raises(ValueError, match="separation must be a positive finite number"):
            stream_chunks("drifting_gaussians", 5, 2, random_state=0, **kw)
    # finite values still work, and an int time is the same as a float one
    X, y = make_drifting_gaussians(5, drift=0.1, at_time=10, random_state=0)
    X2, y2 = make_drifting_gaussians(5, drift=0.1, at_time=10.0, random_state=0)
    assert np.isfinite(X).all() and np.array_equal(X, X2) and np.array_equal(y, y2)


# =========================================================================== standardizer
def test_standardizer_fits_a_pandas_frame_as_one_array():
    """fit(DataFrame) iterated over the frame, i.e. its column names, and failed with
    "X must be numeric; got dtype <U1" (transform and partial_fit took the frame)."""
    import pandas as pd
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -2.0]
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    want = StandardScaler().fit(X)
    s = StreamingStandardizer().fit(df)
    np.testing.assert_allclose(s.mean_, want.mean_, rtol=1e-12)
    np.testing.assert_allclose(s.var_, want.var_, rtol=1e-12)
    np.testing.assert_allclose(StreamingStandardizer().fit_transform(df), want.transform(X),
                               rtol=1e-12, atol=1e-12)
    assert StreamingStandardizer().fit(df["a"].to_frame()).mean_.shape == (1,)


def test_standardizer_fit_on_bad_input_leaves_it_as_it_was():
    """fit reset the statistics first: a chunk that failed (a reader's error on a later
    line, NaN in an array) left a standardizer holding the statistics of the chunks read
    before it, not frozen, which then transformed without complaint."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 2)) * 3.0 + 5.0
    good = StreamingStandardizer().fit(X)
    want = {k: np.copy(v) for k, v in vars(good).items()}

    def failing_reader():
        yield X[:50] + 100.0, np.ones(50)
        raise ValueError("data.csv, line 77: value 'x' is not a number.")

    bad = X.copy()
    bad[60, 1] = np.nan
    for data in (failing_reader(), bad, [X[:10], np.zeros((3, 3))]):
        with pytest.raises(ValueError):
            good.fit(data)
        assert vars(good).keys() == want.keys()
        for k, v in want.items():
            assert np.array_equal(vars(good)[k], v), k
    # an unfitted standardizer stays unfitted
    fresh = StreamingStandardizer()
    with pytest.raises(ValueError, match="line 77"):
        fresh.fit(failing_reader())
    with pytest.raises(NotFittedError):
        fresh.transform(X)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
@pytest.mark.parametrize("read,text", [(read_csv, "a\tb\tlabel\n1\t2\t0\n3\t4\t1\n"),
                                       (read_libsvm, "1 1:2\n-1 2:1\n")])
def test_utf16_text_is_refused_with_what_to_do(tmp_path, encoding, read, text):
    """UTF-16 text (Excel's 'Unicode Text' export) failed on its NUL bytes with an error
    such as "label '\\ufffd\\ufffd1\\x00' is not a number", which does not say what is wrong."""
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):
        data = ("\ufeff" + text).encode(encoding)    # with the byte-order mark Excel writes
    path = tmp_path / "unicode.txt"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=r"unicode\.txt: the text is UTF-16 .*save it as UTF-8"):
        collect(read(str(path)))
    # the same text in UTF-8, with or without its byte-order mark, reads
    for raw in (text.encode(), b"\xef\xbb\xbf" + text.encode()):
        path.write_bytes(raw)
        assert collect(read(str(path)))[0].shape[0] == 2


# =========================================================================== loaders
def test_loader_test_fraction_that_rounds_to_every_row_is_refused(tmp_path):
    """test_size is checked to be a fraction below 1, but 0.96 of 10 rows rounded to 10 test
    rows and load_paper_dataset returned an empty training part without a word."""
    rows = [f"{1 if i % 2 else -1} 1:{i / 10} 2:{-i / 10}" for i in range(10)]
    (tmp_path / "banana").mkdir()
    (tmp_path / "banana" / "banana.all.txt").write_text("\n".join(rows) + "\n")
    Xa, ya, Xb, yb = load_paper_dataset("banana", tmp_path, test_size=0.9)
    assert (Xa.shape, Xb.shape) == ((1, 2), (9, 2))
    with pytest.raises(ValueError, match="leaves no training rows; pass a smaller test_size"):
        load_paper_dataset("banana", tmp_path, test_size=0.96)


@pytest.mark.parametrize("read,kind", [(read_csv, "csv"), (read_libsvm, "libsvm")])
def test_text_file_object_is_read_from_where_the_caller_left_it(tmp_path, read, kind):
    """A file opened in text mode was read through its binary buffer, which the text layer
    had already read ahead (8 KiB) when the caller skipped a preamble line with readline():
    the rows in between were lost without an error (3,000 rows read as 2,161)."""
    rows = ([f"{i},{i / 7:.4f},{i % 2}" for i in range(3000)] if kind == "csv"
            else [f"{i % 2} 1:{i} 3:{i / 7:.4f}" for i in range(3000)])
    body = ("x,z,label\n" if kind == "csv" else "") + "\n".join(rows) + "\n"
    path = tmp_path / f"data.{kind}"
    path.write_text("# exported by some tool\n" + body)
    want_X, want_y = collect(read(io.BytesIO(body.encode()), chunk_size=500))
    assert want_X.shape[0] == 3000
    with open(path) as f:
        f.readline()                                    # skip the preamble
        X, y = collect(read(f, chunk_size=500))
    assert np.array_equal(X, want_X) and np.array_equal(y, want_y)
    with open(path) as f:
        next(iter(f))                                   # the same with iteration
        X, y = collect(read(f, chunk_size=500))
    assert np.array_equal(X, want_X) and np.array_equal(y, want_y)


def test_text_object_with_multibyte_characters_reads():
    """A text object (io.StringIO) returns n characters for n bytes asked, and 'é' is two
    bytes in UTF-8: past the first block this crashed with "memoryview assignment: lvalue
    and rvalue have different structures"."""
    body = "".join(f"{i},{i % 3},{i % 2}\n" for i in range(200_000))
    text = "é" * 600_000 + ",b,label\n" + body
    X, y = collect(read_csv(io.StringIO(text)))
    want_X, want_y = collect(read_csv(io.BytesIO(body.encode()), header=False))
    assert np.array_equal(X, want_X) and np.array_equal(y, want_y)
