"""Is TVM's Covertype gap at B = 200 / 500 the length of our stream? A diagnosis you can rerun.

Paper 000 streams 100,000 Covertype rows; ``../shared/data`` holds a 20,000-row subsample
(16,000 / 4,000 here). This script runs TVM (the paper's settings: C = 100 with control of
C, RBF delta = d/2 on standardised attributes) on five stream orders and scores it on the
test set after 2k, 4k, 8k and 16k examples of the same stream, and does the same for an
exact SVM (scikit-learn ``SVC``, the paper's LIBSVM column) on the first 4k, 8k and 16k
training rows. How much each gains per doubling of the stream says how much of the gap
to the paper's 100,000-row figures the shorter stream explains.

    python perf/diag_tvm_covertype_length.py --data-dir ../shared/data [--orders 5] [--no-svc]
"""
import argparse
import time

import numpy as np

from fastbudget import TVMClassifier
from fastbudget.datasets.loaders import load_paper_dataset
from fastbudget.reproduce import run_stream

CHECKPOINTS = [2000, 4000, 8000, 16000]
PAPER = {200: 77.9, 500: 79.6, "LIBSVM": 85.3}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--orders", type=int, default=5)
    ap.add_argument("--budgets", type=int, nargs="+", default=[200, 500])
    ap.add_argument("--no-svc", action="store_true")
    args = ap.parse_args(argv)
    Xa, ya, Xb, yb = load_paper_dataset("covtype", args.data_dir, standardize=True)
    gamma = 1.0 / Xa.shape[1]                  # delta = d / 2: exp(-||x - z||^2 / d)
    print(f"Covertype subsample: {Xa.shape[0]:,} / {Xb.shape[0]:,} rows, d = {Xa.shape[1]}")
    for B in args.budgets:
        curves = []
        for o in range(args.orders):
            make = lambda: TVMClassifier(budget=B, C=100.0, gamma=gamma)  # noqa: E731
            _, curve, _ = run_stream(make, Xa, ya, Xb, yb, 1000 + o, checkpoints=CHECKPOINTS)
            curves.append([acc for _, acc in curve])
        c = np.array(curves)
        cells = ", ".join(f"{n // 1000}k {m:.2f} ± {s:.2f}"
                          for n, m, s in zip(CHECKPOINTS, c.mean(0), c.std(0)))
        print(f"TVM B = {B} ({args.orders} orders): {cells}  [paper, 100k: {PAPER[B]}]")
    if not args.no_svc:
        from sklearn.svm import SVC
        for n in CHECKPOINTS[1:]:
            t = time.perf_counter()
            svc = SVC(C=100.0, gamma=gamma, cache_size=2000).fit(Xa[:n], ya[:n])
            print(f"SVC on the first {n // 1000}k rows: {100 * svc.score(Xb, yb):.2f} % "
                  f"({svc.n_support_.sum():,} SVs, {time.perf_counter() - t:.1f} s)  "
                  f"[paper LIBSVM, 100k: {PAPER['LIBSVM']}]")


if __name__ == "__main__":
    main()
