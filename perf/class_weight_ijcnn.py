"""class_weight on an imbalanced stream: TVM (B = 100) on IJCNN (9.7 % positive).

Run from the repository root (about 3 minutes)::

    python perf/class_weight_ijcnn.py --data-dir ../shared/data [--orders 5] [--svc-n 10000]

The paper 000 protocol (standardised attributes, RBF delta = d / 2, C = 100, control of C,
random stream orders 1000, 1001, ...), with the positive class weighted 1 (the default),
2, 3 and 5.15 (``'balanced'``'s weight, n / (2 n_pos), with 0.554 for the negatives), passed
as a dict since ``'balanced'`` needs the class counts in advance. Prints accuracy, balanced
accuracy (mean of the two recalls) and both recalls on the 91,701-example test set. With
``--svc-n N``, scikit-learn's exact ``SVC`` (same kernel and C) trained on the first N
examples of order 1000 with the same class weights gives the exact SVM's response for
comparison.
"""
import argparse

import numpy as np

from fastbudget.reproduce import _tvm, kernel_params, load_set, run_stream


def recalls(pred, y):
    """Recall (%) of the positive and of the negative class."""
    return 100 * (pred[y > 0] > 0).mean(), 100 * (pred[y < 0] < 0).mean()


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default="../shared/data")
    p.add_argument("--orders", type=int, default=5)
    p.add_argument("--svc-n", type=int, default=0)
    a = p.parse_args(argv)
    Xa, ya, Xb, yb = load_set("IJCNN", a.data_dir)
    kp = kernel_params("IJCNN", Xa.shape[1])
    n, pos = len(ya), int((ya > 0).sum())
    settings = [("None", None), ("{1: 2}", {1: 2.0}), ("{1: 3}", {1: 3.0}),
                (f"balanced: {{-1: {n / (2 * (n - pos)):.3f}, 1: {n / (2 * pos):.3f}}}",
                 {-1: n / (2 * (n - pos)), 1: n / (2 * pos)})]
    print(f"IJCNN: {n:,} training examples, {100 * pos / n:.1f} % positive; test "
          f"{len(yb):,} ({100 * (yb > 0).mean():.1f} % positive); B = 100, {a.orders} orders\n")
    print("| class_weight | accuracy % | balanced accuracy % | recall + % | recall - % |")
    print("|---|---|---|---|---|")
    for label, cw in settings:
        r = []
        for o in range(a.orders):
            acc, _, clf = run_stream(_tvm(100, 100.0, kp, class_weight=cw), Xa, ya, Xb, yb, 1000 + o)
            tpr, tnr = recalls(clf.predict(Xb), yb)
            r.append((acc, (tpr + tnr) / 2, tpr, tnr))
        m, s = np.mean(r, axis=0), np.std(r, axis=0)
        print(f"| {label} | " + " | ".join(f"{x:.1f} ± {e:.1f}" for x, e in zip(m, s)) + " |",
              flush=True)
    if a.svc_n:
        from sklearn.svm import SVC

        idx = np.random.default_rng(1000).permutation(n)[:a.svc_n]
        print(f"\nscikit-learn SVC on the first {a.svc_n:,} examples of order 1000 (exact, unbudgeted)\n")
        print("| class_weight | accuracy % | balanced accuracy % | recall + % | recall - % | SVs |")
        print("|---|---|---|---|---|---|")
        for label, cw in settings:
            svc = SVC(C=100.0, gamma=kp["gamma"], class_weight=cw).fit(Xa[idx], ya[idx])
            pr = svc.predict(Xb)
            tpr, tnr = recalls(pr, yb)
            print(f"| {label} | {100 * (pr == yb).mean():.1f} | {(tpr + tnr) / 2:.1f} | {tpr:.1f} | "
                  f"{tnr:.1f} | {svc.support_.size:,} |", flush=True)


if __name__ == "__main__":
    main()
