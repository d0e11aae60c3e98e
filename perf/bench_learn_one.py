"""TVMClassifier.learn_one: microseconds per call against the compiled per-example costs.

Run from the repository root (``PYTHONPATH=.`` so that a worktree's package is the one
imported: a script's own folder, not the working directory, heads ``sys.path``)::

    PYTHONPATH=. python perf/bench_learn_one.py              # about half a minute, warm cache
    PYTHONPATH=. python perf/bench_learn_one.py --n 20000 --reps 9

A model (N-Checkerboard, 15% label noise, standardised, RBF delta = 0.37, C = 100, B = 100,
as ``perf/test_bench_tvm.py``) is trained on the first ``--warm`` examples with ``fit`` (the budget is
then full), and each repetition learns the next ``--n`` examples with ``learn_one`` on a
fresh copy of it, so that every repetition does the same work. Reported, as medians over the
repetitions (the machine is shared; absolute times vary):

- ``learn_one``: microseconds per call, also split into the calls that learned their example
  (``n_accepted_`` grew: Beneficial, Alg. 2) and those that only counted it;
- ``chunk``: the same examples learned by one ``partial_fit`` call on a copy (the compiled
  per-example cost of learning), and ``floor``: scoring them against the twins
  (``twin_decision_batch``, the floor of ``perf/test_bench_tvm.py``);
- the ratios ``learn_one / chunk`` and ``learn_one / floor``;
- whether the models learned by ``learn_one`` and by the chunk have equal decision values.
"""
import argparse
import copy
import time

import numpy as np

from fastbudget import TVMClassifier
from fastbudget.datasets import make_checkerboard
from fastbudget.kernels import tvm as ktvm

SD = 4 / np.sqrt(12)
GAMMA = 1 / (2 * 0.37)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--warm", type=int, default=10_000, help="examples fitted before timing")
    p.add_argument("--n", type=int, default=5_000, help="examples learned per repetition")
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    X, y = make_checkerboard(a.warm + a.n, noise=0.15, random_state=a.seed)
    X = (X - 2) / SD
    small = TVMClassifier(budget=10, gamma=GAMMA).fit(X[:300], y[:300])
    for i in range(300, 400):
        small.learn_one(X[i], y[i])                          # compile outside the clock
    base = TVMClassifier(budget=100, gamma=GAMMA).fit(X[:a.warm], y[:a.warm])
    Xs, ys = X[a.warm:], y[a.warm:]
    per_call, learned, counted, chunk, floor, same = [], [], [], [], [], []
    for _ in range(a.reps):
        clf = copy.deepcopy(base)
        clf.learn_one(Xs[0], ys[0])          # the undo buffer is allocated once, not timed
        dt = np.empty(a.n - 1)
        acc = np.empty(a.n - 1, dtype=bool)
        t_all = time.perf_counter()
        for i in range(1, a.n):
            before = clf.n_accepted_
            t = time.perf_counter()
            clf.learn_one(Xs[i], ys[i])
            dt[i - 1] = time.perf_counter() - t
            acc[i - 1] = clf.n_accepted_ != before
        t_all = time.perf_counter() - t_all
        per_call.append(1e6 * dt.mean())
        learned.append(1e6 * np.median(dt[acc]))
        counted.append(1e6 * np.median(dt[~acc]))
        ref = copy.deepcopy(base)
        ref.learn_one(Xs[0], ys[0])
        t = time.perf_counter()
        ref.partial_fit(Xs[1:], ys[1:])
        chunk.append(1e6 * (time.perf_counter() - t) / (a.n - 1))
        out = np.empty(a.n - 1)
        Xc = np.ascontiguousarray(Xs[1:])
        t = time.perf_counter()
        ktvm.twin_decision_batch(clf.engine_state_, clf.twins_, Xc, out)
        floor.append(1e6 * (time.perf_counter() - t) / (a.n - 1))
        same.append(np.array_equal(clf.decision_function(Xc), ref.decision_function(Xc)))
    m = {k: float(np.median(v)) for k, v in (("per_call", per_call), ("learned", learned),
                                             ("counted", counted), ("chunk", chunk),
                                             ("floor", floor))}
    print(f"B = 100, {a.n - 1:,} learn_one calls after fit on {a.warm:,}, {a.reps} repetitions "
          f"(medians); {100 * acc.mean():.1f} % learned (Beneficial)")
    print("| learn_one us/call | learned us | counted us | chunk us/example | floor us/example "
          "| learn_one / chunk | learn_one / floor |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {m['per_call']:.1f} | {m['learned']:.1f} | {m['counted']:.1f} | {m['chunk']:.2f} | "
          f"{m['floor']:.2f} | {m['per_call'] / m['chunk']:.1f} | "
          f"{m['per_call'] / m['floor']:.1f} |")
    print("per-repetition learn_one us/call:", " ".join(f"{v:.1f}" for v in per_call))
    # one call per row and one call per chunk run the same compiled steps: equal models
    # (unless a numerical failure made one of them rebuild R and replay)
    print("learn_one model equal to the chunk's (decision values):", all(same))


if __name__ == "__main__":
    main()
