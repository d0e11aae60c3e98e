"""Do our test sides match the paper's? An exact SVM (``sklearn.svm.SVC``, the paper's C and
RBF width) trained on a uniform sample of as many examples as the paper's IDSVM had learned
(Table 2: IDSVM is exact, and its stream order is a uniform sample), scored on our test set,
next to the paper's IDSVM figure (Table 3); and the full-set SVC next to the paper's LIBSVM.

Run from the repository root (all 12 sets, 3 samples each: about 5 minutes; Letter alone
about 20 s)::

    python perf/diag_test_side.py --data-dir ../shared/data
    python perf/diag_test_side.py --data-dir ../shared/data --sets Letter --letter-shift

Where both exact SVMs agree with the paper's, our data and test side are the paper's as far as
an exact SVM can tell; where only one of the two differs, the paper's own columns disagree with
each other. ``--letter-shift`` also scores the full Letter SVC with the test labels of one
letter at a time flipped (a binary mapping shifted by one letter on the test side).

What it showed (session 13): on Letter the exact SVM on 6,800 random examples scores
95.1 %, the paper's IDSVM (6,800 examples) 95.0, so our Letter test side is the one the
paper's IDSVM, and TVM with it, was scored on; only the paper's LIBSVM figure (93.2, ours 97.1
with the same 2,068 / 2,075 SVs) is out of line. Flipping the test labels of any single letter
gives 93.0-93.9 % (N: 93.3), which would fit a one-letter shift of the binary mapping in that
run, but nothing here identifies it. On the other sets the exact SVM on the paper's IDSVM count is
within 0.8 points of the paper's IDSVM but on Waveform (85.7 against 89.0 at 10,000: our
generated Waveform is harder for an exact SVM at C = 100), and the full-set SVC within 1 point
of the paper's LIBSVM but on Letter and Covertype (our 16,000-row subsample: 82.0 against 85.3).
"""
import argparse
import os
import string
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fastbudget import reproduce as R  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("FASTBUDGET_DATA_DIR"))
    ap.add_argument("--sets", default=",".join(R.SETS))
    ap.add_argument("--samples", type=int, default=3, help="uniform samples per set")
    ap.add_argument("--no-full", action="store_true", help="skip the full-set SVC")
    ap.add_argument("--letter-shift", action="store_true")
    a = ap.parse_args()
    from sklearn.svm import SVC

    print("| data set | n (paper IDSVM) | SVC on n, mean ± sd | paper IDSVM | diff "
          "| SVC on all | paper LIBSVM | diff | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in a.sets.split(","):
        t = time.perf_counter()
        data = R.load_set(name, a.data_dir)
        if data is None:
            print(f"| {name} | (no data) |")
            continue
        Xa, ya, Xb, yb = data
        kp = R.kernel_params(name, Xa.shape[1])
        C = R._C(name)
        n_paper = R.PAPER_TABLE2[name][6] or R.PAPER_SIZES[name][0]
        n = min(n_paper, len(ya))
        accs = []
        for s in range(a.samples):
            idx = np.random.default_rng(1000 + s).permutation(len(ya))[:n]
            svc = SVC(C=C, kernel="rbf", gamma=kp["gamma"], cache_size=1000)
            accs.append(100.0 * svc.fit(Xa[idx], ya[idx]).score(Xb, yb))
        p_lib, p_id = R.PAPER_TABLE3[name][2], R.PAPER_TABLE3[name][3]
        m = float(np.mean(accs))
        full = ""
        if not a.no_full and len(ya) <= 50_000:
            svc = SVC(C=C, kernel="rbf", gamma=kp["gamma"], cache_size=1000).fit(Xa, ya)
            acc = 100.0 * svc.score(Xb, yb)
            full = f"{acc:.1f} | {p_lib} | {acc - p_lib:+.1f}"
        else:
            full = f"(not run) | {p_lib} | "
        print(f"| {name} | {n:,}{'' if n == n_paper else f' (paper {n_paper:,})'} "
              f"| {m:.1f} ± {np.std(accs):.1f} | {p_id} | {m - p_id:+.1f} | {full} "
              f"| {time.perf_counter() - t:.0f} |", flush=True)
        if name == "Letter" and a.letter_shift:
            _letter_shift(a.data_dir, Xa, ya, Xb, yb, kp, C)


def _letter_shift(data_dir, Xa, ya, Xb, yb, kp, C):
    from sklearn.svm import SVC
    path = os.path.join(data_dir, "letter", "letter-recognition.data")
    with open(path) as f:
        letters = np.array([line.split(",", 1)[0] for line in f if line.strip()])
    lte = letters[len(ya):]
    if len(lte) != len(yb) or not np.array_equal(np.isin(lte, list("NOPQRSTUVWXYZ")) * 2 - 1, yb):
        print("Letter: the raw file's test rows do not match the loader's; no shift table")
        return
    p = SVC(C=C, kernel="rbf", gamma=kp["gamma"], cache_size=1000).fit(Xa, ya).predict(Xb)
    print(f"\nLetter, full SVC {100 * np.mean(p == yb):.2f} %; with one letter's test labels "
          "flipped:")
    cells = []
    for L in string.ascii_uppercase:
        y2 = np.where(lte == L, -yb, yb)
        cells.append(f"{L} {100 * np.mean(p == y2):.1f}")
    print("  " + ", ".join(cells))


if __name__ == "__main__":
    main()
