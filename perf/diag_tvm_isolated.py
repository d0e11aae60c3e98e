"""Diagnose TVM's small-budget collapses (paper 000, Table 3 Shuttle B = 20 / 50).

Run from the repository root (seconds per budget on Shuttle)::

    python perf/diag_tvm_isolated.py --data-dir ../shared/data                     # B = 20, 50
    python perf/diag_tvm_isolated.py --data-dir ../shared/data --drop-beyond 10    # stream without the 76 far rows
    python perf/diag_tvm_isolated.py --data-dir ../shared/data --merge feature
    python perf/diag_tvm_isolated.py --data-dir ../shared/data --budgets 50 --trace 1001

Per stream order (the reproduction's seeds 1000 + o) it prints the test accuracy, the
intercept b, C_eff, and how many of the final twins are *isolated*: no other twin within
kernel value 0.05 (RBF), so that f at the twin is b plus its own coefficient. Such a twin
has |f| <= max(|b|, 1) and so is never beyond m2 (Alg. 3), and its input-space merge cost
s_i s_j / (s_i + s_j) ||q_i - q_j||^2 is the largest of all, so it stays for the rest of
the stream. A new example far from every twin scores f = b: while |b| <= m1 it is
Beneficial and becomes such a twin. ``--trace ORDER`` prints the same figures every 3,000
examples of one order.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fastbudget.reproduce import _tvm, kernel_params, load_set  # noqa: E402


def isolated(clf, gamma, kmax=0.05):
    Q = clf.twin_vectors_
    D = ((Q[:, None, :] - Q[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    return int((np.exp(-gamma * D.min(1)) < kmax).sum())


def line(clf, gamma, Xb, yb):
    w = clf.twin_weights_.sum(1)
    return (f"acc {100 * clf.score(Xb, yb):6.2f}  b {clf.intercept_[0]:6.2f}  C_eff {clf.C_eff_:7.2f}  "
            f"isolated twins {isolated(clf, gamma):3d}  weight-1 twins {int((w == 1).sum()):3d}  "
            f"accepted {clf.n_accepted_}  merges {clf.n_merges_}  removed {clf.n_removed_}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("FASTBUDGET_DATA_DIR"))
    ap.add_argument("--set", default="Shuttle")
    ap.add_argument("--budgets", default="20,50")
    ap.add_argument("--orders", type=int, default=5)
    ap.add_argument("--merge", default="input", choices=("input", "feature"))
    ap.add_argument("--drop-beyond", type=float, default=None,
                    help="drop training rows with a standardised attribute beyond this many sd")
    ap.add_argument("--trace", type=int, default=None, help="one order seed, traced")
    a = ap.parse_args()
    Xa, ya, Xb, yb = load_set(a.set, a.data_dir)
    if a.drop_beyond is not None:
        keep = np.abs(Xa).max(1) <= a.drop_beyond
        print(f"dropped {int((~keep).sum())} of {len(ya)} training rows beyond {a.drop_beyond} sd")
        Xa, ya = Xa[keep], ya[keep]
    kp = kernel_params(a.set, Xa.shape[1])
    C = 1.0 if a.set == "Adult" else 100.0
    cl = np.array([-1, 1])
    for b in (int(v) for v in a.budgets.split(",")):
        make = _tvm(b, C, kp, merge=a.merge)
        seeds = [a.trace] if a.trace is not None else [1000 + o for o in range(a.orders)]
        accs = []
        for seed in seeds:
            perm = np.random.default_rng(seed).permutation(len(ya))
            clf = make()
            step = 3000 if a.trace is not None else 10_000
            for n in range(0, len(perm), step):
                idx = perm[n:n + step]
                clf.partial_fit(Xa[idx], ya[idx], classes=cl)
                if a.trace is not None:
                    print(f"B={b} order {seed} n={n + len(idx):6d}  " + line(clf, kp["gamma"], Xb, yb))
            accs.append(100 * clf.score(Xb, yb))
            if a.trace is None:
                print(f"B={b} order {seed}  " + line(clf, kp["gamma"], Xb, yb))
        if len(accs) > 1:
            print(f"B={b}: {np.mean(accs):.1f} ± {np.std(accs, ddof=1):.1f}")


if __name__ == "__main__":
    main()
