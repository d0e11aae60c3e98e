"""TVMClassifier benchmark: throughput against the scoring floor, scaling in N, and the peers.

Run from the repository root::

    python perf/bench_tvm.py                       # N = 10^5 and 10^6 (about a minute)
    python perf/bench_tvm.py --sizes 100000 --svc  # also scikit-learn's SVC on the same data
    python perf/run_tvm_stream.py --n 10000000     # the 10^7 stream (accuracy, RSS)
    python perf/bench_tvm.py --budgets 100 200 300 --seeds 5   # budget vs accuracy and time

Everything is measured in the same run on the same N-Checkerboard stream (15% label noise,
standardised, RBF delta = 0.37, C = 100, B = 100; paper 000 protocol) and reported as
ratios, since absolute times vary between machines:

- ``floor``: one compiled loop scoring every example of the stream against the final 100
  twin vectors (what any budgeted kernel learner must at least do per example);
- ``TVM / floor``: the cost of learning relative to that floor;
- time per N (examples/second at each N: linear or better scaling means a flat or rising
  rate);
- with ``--budgets``: for each budget, accuracy and training time at the first N over
  ``--seeds`` streams (seeds 0, 1, ...), and time over the floor of that budget's model:
  what budget reaches a target accuracy in a given time;
- peers on the same data (optional): scikit-learn ``SVC`` (exact, unbudgeted) and
  Nystroem(100) + ``SGDClassifier``, with their accuracy on the 5,000 clean test points.
"""
import argparse
import time

import numpy as np

from fastbudget import TVMClassifier
from fastbudget.datasets import make_checkerboard
from fastbudget.kernels import tvm as ktvm

SD = 4 / np.sqrt(12)
GAMMA = 1 / (2 * 0.37)


def data(n, seed):
    X, y = make_checkerboard(n, noise=0.15, random_state=seed)
    Xt, yt = make_checkerboard(5000, random_state=seed + 777)
    return (X - 2) / SD, y, (Xt - 2) / SD, yt


def floor_seconds(clf, X):
    out = np.empty(X.shape[0])
    ktvm.twin_decision_batch(clf.engine_state_, clf.twins_, X[:10], out[:10])  # compiled
    best = np.inf
    for _ in range(3):
        t = time.perf_counter()
        ktvm.twin_decision_batch(clf.engine_state_, clf.twins_, X, out)
        best = min(best, time.perf_counter() - t)
    return best


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--svc", action="store_true", help="also time sklearn SVC (slow: minutes at 10^5)")
    p.add_argument("--budgets", type=int, nargs="+",
                   help="budget sweep at the first size over --seeds streams (instead of the size sweep)")
    p.add_argument("--seeds", type=int, default=5)
    a = p.parse_args(argv)
    TVMClassifier(budget=10, gamma=GAMMA).fit(*data(200, 1)[:2])  # compile outside the clock
    if a.budgets:
        return budget_sweep(a.sizes[0], a.budgets, a.seeds)
    print("| N | TVM s | examples/s | accepted | floor s | TVM / floor | accuracy % |")
    print("|---|---|---|---|---|---|---|")
    rows = []
    for n in a.sizes:
        X, y, Xt, yt = data(n, a.seed)
        clf = TVMClassifier(budget=100, gamma=GAMMA)
        t = time.perf_counter()
        clf.fit(X, y)
        dt = time.perf_counter() - t
        fl = floor_seconds(clf, X)
        acc = 100 * clf.score(Xt, yt)
        rows.append((n, dt, acc))
        print(f"| {n:,} | {dt:.2f} | {n / dt:,.0f} | {clf.n_accepted_:,} | {fl:.3f} | "
              f"{dt / fl:.1f} | {acc:.2f} |", flush=True)
    if a.svc:
        from sklearn.kernel_approximation import Nystroem
        from sklearn.linear_model import SGDClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.svm import SVC

        n = a.sizes[0]
        X, y, Xt, yt = data(n, a.seed)
        tvm_t = rows[0][1]
        print("\n| learner (N = %s) | seconds | ratio to TVM | accuracy %% | model size |" % f"{n:,}")
        print("|---|---|---|---|---|")
        print(f"| TVM B=100 | {tvm_t:.2f} | 1.0 | {rows[0][2]:.2f} | 100 twins |")
        t = time.perf_counter()
        ny = make_pipeline(Nystroem(gamma=GAMMA, n_components=100, random_state=0),
                           SGDClassifier(random_state=0)).fit(X, y)
        dt = time.perf_counter() - t
        print(f"| Nystroem(100) + SGDClassifier | {dt:.2f} | {dt / tvm_t:.1f} | "
              f"{100 * ny.score(Xt, yt):.2f} | 100 components |", flush=True)
        t = time.perf_counter()
        svc = SVC(C=100, gamma=GAMMA).fit(X, y)
        dt = time.perf_counter() - t
        print(f"| sklearn SVC (exact, unbudgeted) | {dt:.1f} | {dt / tvm_t:.0f} | "
              f"{100 * svc.score(Xt, yt):.2f} | {svc.support_.size:,} SVs |")


def budget_sweep(n, budgets, n_seeds):
    """Accuracy and time per budget on ``n_seeds`` streams of ``n`` examples (seeds 0, 1, ...)."""
    streams = [data(n, seed) for seed in range(n_seeds)]
    print(f"| B | accuracy % (mean, min, max over {n_seeds} streams) | TVM s (mean) | "
          f"examples/s | TVM / floor (median) |")
    print("|---|---|---|---|---|")
    for b in budgets:
        acc, sec, ratio = [], [], []
        for X, y, Xt, yt in streams:
            clf = TVMClassifier(budget=b, gamma=GAMMA)
            t = time.perf_counter()
            clf.fit(X, y)
            dt = time.perf_counter() - t
            sec.append(dt)
            ratio.append(dt / floor_seconds(clf, X))
            acc.append(100 * clf.score(Xt, yt))
        print(f"| {b} | {np.mean(acc):.2f} ({min(acc):.2f}, {max(acc):.2f}) | {np.mean(sec):.2f} | "
              f"{n / np.mean(sec):,.0f} | {np.median(ratio):.1f} |", flush=True)


if __name__ == "__main__":
    main()
