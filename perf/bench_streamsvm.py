"""Throughput of StreamSVM on a 10^6-example linear stream, as ratios to a compiled floor.

Usage: ``python perf/bench_streamsvm.py [--n 1000000] [--d 20] [--repeats 3]``

The floor is ``fastbudget.kernels.meb.dot_floor``: one compiled pass computing <x_i, w> for
every row, the least work any one-pass linear learner must do. Each learner runs through
``partial_fit`` on the whole stream (one call into compiled code); the reported time is the
best of ``--repeats`` runs after a warm-up (compilation excluded). Ratios measured in the same
run; absolute rates depend on the machine (and on other jobs sharing it).
"""
import argparse
import pathlib
import sys
import time

import numpy as np


from fastbudget.estimators.streamsvm import StreamSVMClassifier
from fastbudget.kernels import meb
from fastbudget.kernels.meb import dot_floor


def best_time(fn, repeats):
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n, d = args.n, args.d
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(n, d)) + 0.5 * y[:, None] / np.sqrt(d)   # overlapping classes
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    w = rng.normal(size=d)
    out = np.empty(n)
    dot_floor(X[:10], w, out[:10])                                 # compile
    t_floor = best_time(lambda: dot_floor(X, w, out), args.repeats)
    rows = [("floor: compiled <x, w> pass", t_floor, None)]
    for label, params in (("Algo-1 (L=1)", dict(lookahead=1)),
                          ("Algo-2 (L=10)", dict(lookahead=10)),
                          ("Algo-2 (L=50)", dict(lookahead=50)),
                          ("multi-ball (K=5)", dict(n_balls=5))):
        StreamSVMClassifier(**params).fit(X[:200], y[:200])       # compile
        last = {}

        def run():
            last["m"] = StreamSVMClassifier(**params).partial_fit(X, y)

        t = best_time(run, args.repeats)
        rows.append((label, t, last["m"]))
    # the compiled loop alone (no input validation / label encoding / transaction copy)
    for L in (1, 10):
        def raw(L=L):
            meb.stream_linear(X, y, np.ones(n), 1.0, 1.0, L, np.zeros(d + 1), np.zeros(meb.FST_SIZE),
                              np.zeros(meb.IST_SIZE, dtype=np.int64), np.zeros((L, d)), np.zeros(L),
                              np.zeros(L), np.zeros(L), np.zeros(L), 1e-6, np.zeros((L + 1, L + 1)),
                              np.zeros(L + 1), np.zeros(L + 1), np.zeros(L + 1))
        raw()
        rows.append((f"compiled loop only (L={L})", best_time(raw, args.repeats), None))
    print(f"stream: n={n:,}, d={d}; best of {args.repeats}")
    print(f"{'learner':28s} {'examples/s':>14s} {'time / floor':>13s}  updates (M), solves")
    for label, t, m in rows:
        extra = "" if m is None else f"  M={m.n_core_:,}, solves={m.n_solves_:,}"
        print(f"{label:28s} {n / t:14,.0f} {t / t_floor:13.1f}{extra}")


if __name__ == "__main__":
    main()
