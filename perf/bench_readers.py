"""Reader throughput: fastbudget's chunked readers against floors and peers, in one run.

Writes synthetic files (dense CSV with 22 columns like ijcnn, LIBSVM with 22 dense features,
LIBSVM sparse binary like a9a: ~14 of 123 features), plain and gzip, then times

- ``raw lines``: ``for line in open(path, 'rb')`` (or gzip) doing nothing: the I/O floor;
- ``fastbudget``: ``read_csv`` / ``read_libsvm`` streaming chunks of 10,000 rows;
- ``numpy.loadtxt`` (CSV) and ``sklearn.datasets.load_svmlight_file`` (LIBSVM, Cython,
  whole file in memory) as peers.

Reported: rows/s and the ratio of each reader's time to the raw-line floor and to the peer.
Absolute numbers depend on the machine (and on other load); ratios are the figure to read.

Usage: ``python perf/bench_readers.py [--rows 200000] [--repeat 2]``
"""
import argparse
import gzip
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from fastbudget.datasets import read_csv, read_libsvm  # noqa: E402


def _write(path, lines, compress):
    opener = gzip.open if compress else open
    kw = {"compresslevel": 6} if compress else {}
    with opener(path, "wb", **kw) as f:
        for i in range(0, len(lines), 50000):
            f.write(("\n".join(lines[i:i + 50000]) + "\n").encode())


def make_files(tmp, n, rng):
    dense = rng.standard_normal((n, 22))
    y = rng.choice([-1, 1], n)
    csv_lines = [",".join(f"{v:.6f}" for v in row) + f",{lab}" for row, lab in zip(dense.tolist(), y.tolist())]
    svm_dense = [f"{lab} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row))
                 for row, lab in zip(dense.tolist(), y.tolist())]
    svm_sparse = []
    for lab in y.tolist():
        idx = np.sort(rng.choice(123, 14, replace=False)) + 1
        svm_sparse.append(f"{lab} " + " ".join(f"{j}:1" for j in idx.tolist()))
    files = {}
    for name, lines, d in (("csv22", csv_lines, 22), ("svm22", svm_dense, 22), ("svm123", svm_sparse, 123)):
        for comp in (False, True):
            p = os.path.join(tmp, name + (".gz" if comp else ""))
            _write(p, lines, comp)
            files[(name, comp)] = (p, d)
    return files


def best_time(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def raw_lines(path, comp):
    opener = gzip.open if comp else open
    with opener(path, "rb") as f:
        for _ in f:
            pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    n = args.rows
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        files = make_files(tmp, n, rng)
        # compile outside the timings
        for (name, comp), (p, d) in files.items():
            if name.startswith("csv"):
                next(read_csv(p, chunk_size=10))
            else:
                next(read_libsvm(p, n_features=d, chunk_size=10))
        print(f"rows per file: {n:,}; best of {args.repeat}; chunk_size 10,000")
        print(f"{'file':<12}{'reader':<28}{'rows/s':>12}{'x floor':>9}{'x peer':>8}")
        for (name, comp), (p, d) in files.items():
            label = name + (".gz" if comp else "")
            size = os.path.getsize(p)
            t_floor = best_time(lambda: raw_lines(p, comp), args.repeat)
            if name.startswith("csv"):
                def ours():
                    for _ in read_csv(p, chunk_size=10_000):
                        pass

                def peer():
                    np.loadtxt(gzip.open(p) if comp else p, delimiter=",")
                peer_name = "numpy.loadtxt"
                rows = [("fastbudget.read_csv", ours)]
            else:
                from sklearn.datasets import load_svmlight_file

                def ours():
                    for _ in read_libsvm(p, n_features=d, chunk_size=10_000):
                        pass

                def ours_scan():
                    for _ in read_libsvm(p, chunk_size=10_000):
                        pass

                def peer():
                    load_svmlight_file(p, n_features=d)
                peer_name = "sklearn load_svmlight_file"
                rows = [("fastbudget.read_libsvm", ours), ("  (n_features=None, 2 passes)", ours_scan)]
            t_peer = best_time(peer, args.repeat)
            print(f"{label:<12}{'raw line iteration':<28}{n / t_floor:>12,.0f}{1.0:>9.2f}{'':>8}"
                  f"   ({size / 1e6:.1f} MB)")
            for rname, fn in rows:
                t = best_time(fn, args.repeat)
                print(f"{'':<12}{rname:<28}{n / t:>12,.0f}{t / t_floor:>9.2f}{t / t_peer:>8.2f}")
            print(f"{'':<12}{peer_name:<28}{n / t_peer:>12,.0f}{t_peer / t_floor:>9.2f}{1.0:>8.2f}")
        print("x floor = time / raw-line-iteration time; x peer = time / peer time (lower is faster).")


if __name__ == "__main__":
    main()
