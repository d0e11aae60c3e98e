"""The chunked readers: LIBSVM (dense d = 22 and sparse d = 123, like IJCNN and a9a), CSV, and
their gzip files.

Floor: the file's bytes read (and decompressed) into memory plus one compiled pass over them
counting lines and separators, the least any parser does. ``floor_ratio`` is the reader's
time (all chunks of 10,000 rows consumed) over it; ``peer_ratio`` is over
``sklearn.datasets.load_svmlight_file`` (LIBSVM) or ``numpy.loadtxt`` (CSV) on the same file.
Each benchmark asserts that the rows read are the rows written.
"""
import gzip

import numpy as np
import pytest
from numba import njit

from _bench import best_seconds, record, timed_before_rounds
from fastbudget.datasets import read_csv, read_libsvm

N = 50_000


@njit(cache=True)
def _scan(buf):
    """Lines and ':' / ',' separators in a byte buffer: one compiled pass."""
    lines = 0
    seps = 0
    for c in buf:
        if c == 10:
            lines += 1
        elif c == 58 or c == 44:
            seps += 1
    return lines, seps


def _floor(path, comp):
    opener = gzip.open if comp else open
    with opener(path, "rb") as f:
        return _scan(np.frombuffer(f.read(), dtype=np.uint8))


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(0)
    tmp = tmp_path_factory.mktemp("readers")
    # the values as written with 6 decimals
    dense = np.array([float(f"{v:.6f}") for v in rng.standard_normal(N * 22)]).reshape(N, 22)
    y = rng.choice([-1, 1], N)
    sparse = np.zeros((N, 123))
    for i in range(N):
        sparse[i, rng.choice(123, 14, replace=False)] = 1.0
    texts = {
        "csv22": "".join(",".join(f"{v:.6f}" for v in row) + f",{lab}\n"
                         for row, lab in zip(dense.tolist(), y.tolist())),
        "svm22": "".join(f"{lab} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row)) + "\n"
                         for row, lab in zip(dense.tolist(), y.tolist())),
        "svm123": "".join(f"{lab} " + " ".join(f"{j + 1}:1" for j in np.flatnonzero(row)) + "\n"
                          for row, lab in zip(sparse, y.tolist())),
    }
    out = {}
    for name, text in texts.items():
        for comp in (False, True):
            p = tmp / (name + (".gz" if comp else ""))
            data = text.encode()
            p.write_bytes(gzip.compress(data, 6) if comp else data)
            out[name, comp] = str(p)
    return out, {"csv22": dense, "svm22": dense, "svm123": sparse}, y


CASES = [(name, comp) for name in ("csv22", "svm22", "svm123") for comp in (False, True)]


@pytest.mark.parametrize("name,comp", CASES, ids=[n + (".gz" if c else "") for n, c in CASES])
def test_read(benchmark, files, name, comp):
    paths, arrays, y = files
    p = paths[name, comp]
    d = arrays[name].shape[1]
    if name.startswith("csv"):
        def ours():
            return [c for c in read_csv(p, header=False, chunk_size=10_000)]

        def peer():
            np.loadtxt(gzip.open(p) if comp else p, delimiter=",")
    else:
        from sklearn.datasets import load_svmlight_file

        def ours():
            return [c for c in read_libsvm(p, n_features=d, chunk_size=10_000)]

        def peer():
            load_svmlight_file(p, n_features=d)
    ours()
    # ten rounds: the best of three of a 30-60 ms call moved by up to 2x between runs of
    # the same code on a loaded machine (svm123: 25-56 ms, 2026-11-25)
    chunks = benchmark.pedantic(ours, rounds=10, iterations=1)
    X = np.concatenate([c[0] for c in chunks])
    yy = np.concatenate([c[1] for c in chunks])
    np.testing.assert_allclose(X, arrays[name], rtol=0, atol=1e-12)
    assert np.array_equal(yy, y)
    lines, _ = _floor(p, comp)
    assert lines == N
    fl = best_seconds(lambda: _floor(p, comp), 3)
    peer_s = best_seconds(peer, 2)
    record(benchmark, fl, peer_s=peer_s, peer_ratio=benchmark.stats.stats.min / peer_s,
           rows=N, accuracy=1.0)


@pytest.mark.quick
def test_read_libsvm_quick(benchmark, files):
    """The quick guard: the dense LIBSVM file, plain."""
    paths, arrays, y = files
    p = paths["svm22", False]

    def ours():
        return [c for c in read_libsvm(p, n_features=22, chunk_size=10_000)]

    ours()
    floor_times = []   # the floor's best of 5 before each round (see _bench.timed_before_rounds)
    chunks = benchmark.pedantic(ours, rounds=10, iterations=1,
                                setup=timed_before_rounds(lambda: _floor(p, False), floor_times, 5))
    np.testing.assert_allclose(np.concatenate([c[0] for c in chunks]), arrays["svm22"],
                               rtol=0, atol=1e-12)
    record(benchmark, min(floor_times), rows=N, accuracy=1.0)
