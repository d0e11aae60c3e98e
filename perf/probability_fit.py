"""Calibration after a single ``fit``: log-loss and ECE of every learner that scores its
rows in its learning loop (``docs/results/probability.md``, "the perceptrons', Forgetron's,
Pegasos' and BSGD's ``fit`` too").

    python perf/probability_fit.py --data-dir ../shared/data [--sets N-Checkerboard IJCNN1]
    python perf/probability_fit.py --data-dir ../shared/data --multiclass
    python perf/probability_fit.py --data-dir ../shared/data --exact 10000

``--exact N``: ``IncrementalSVC(C=100).fit`` on N training rows (shuffled, seed 0) against
``SVC(C=100, probability=True)`` (Platt's sigmoid by 5-fold cross-validation) on the same
rows: the same SVM (the share of test rows whose predictions agree is printed), two
calibrations. About 1 CPU min at N = 10,000 per set.

``--multiclass``: ``OneVsRestClassifier`` (100 twins or vectors per class) on Pendigits and
USPS (10 classes, standardised, training rows shuffled with seed 0), fitted once and in
chunks of 1,000: multiclass log-loss with the one map fitted on the learners' summed
statistics (what ``predict_proba`` uses) and with each learner's own map, and how often the
own maps' argmax differs from ``predict``. About 3 CPU min.

Each learner (budget 100, RBF with the report's gamma; Pegasos linear) is fitted once on
the training rows and scored on the test rows (noisy labels for the board); run it with
``PYTHONPATH`` pointing at another copy of the package to compare versions. About 2.5 CPU
min (Span's span policy on the board: 110 s of it).
"""
import argparse
import os
import time

import numpy as np

# (run by path: this script's folder heads sys.path, so its sibling imports as is)
from probability import ece, load, log_loss


def learners(gamma):
    import fastbudget as fb
    return {
        "Perceptron": fb.PerceptronClassifier(budget=100, kernel="rbf", gamma=gamma),
        "Forgetron": fb.ForgetronClassifier(budget=100, kernel="rbf", gamma=gamma),
        "BSGD (merging)": fb.BSGDClassifier(budget=100, kernel="rbf", gamma=gamma),
        "Pegasos (linear)": fb.PegasosClassifier(),
        "TVM": fb.TVMClassifier(budget=100, kernel="rbf", gamma=gamma),
        "Span (LRU)": fb.SpanBudgetClassifier(budget=100, gamma=gamma, policy="lru"),
        "Span (span)": fb.SpanBudgetClassifier(budget=100, gamma=gamma),
    }


def _multiclass_sets(data_dir):
    import gzip
    for name in ("Pendigits", "USPS"):
        if name == "USPS":
            with gzip.open(os.path.join(data_dir, "usps", "zip.train.gz")) as f:
                A = np.loadtxt(f)
            with gzip.open(os.path.join(data_dir, "usps", "zip.test.gz")) as f:
                B = np.loadtxt(f)
            Xa, ya, Xb, yb = A[:, 1:], A[:, 0].astype(int), B[:, 1:], B[:, 0].astype(int)
        else:
            A = np.loadtxt(os.path.join(data_dir, "pendigits", "pendigits.tra"), delimiter=",")
            B = np.loadtxt(os.path.join(data_dir, "pendigits", "pendigits.tes"), delimiter=",")
            Xa, ya, Xb, yb = A[:, :-1], A[:, -1].astype(int), B[:, :-1], B[:, -1].astype(int)
        m, sd = Xa.mean(0), Xa.std(0) + 1e-12
        o = np.random.default_rng(0).permutation(len(Xa))
        yield name, (Xa[o] - m) / sd, ya[o], (Xb - m) / sd, yb


def multiclass(data_dir):
    import fastbudget as fb
    from fastbudget.multiclass import OneVsRestClassifier
    for name, Xa, ya, Xb, yb in _multiclass_sets(data_dir):
        classes = np.unique(ya)
        print(f"\n{name}: {len(Xa)} training rows, {len(Xb)} test rows, {len(classes)} classes")
        g = 1.0 / Xa.shape[1]
        for lname, base in (("TVM", fb.TVMClassifier(gamma=g)),
                            ("Perceptron", fb.PerceptronClassifier(kernel="rbf", gamma=g)),
                            ("BSGD", fb.BSGDClassifier(gamma=g))):
            for mode in ("fit", "chunks"):
                est = OneVsRestClassifier(base, total_budget=100 * len(classes))
                if mode == "fit":
                    est.fit(Xa, ya)
                else:
                    for i in range(0, len(Xa), 1000):
                        est.partial_fit(Xa[i:i + 1000], ya[i:i + 1000], classes=classes)
                P = est.predict_proba(Xb)
                own = np.column_stack([e._calibration()(e.decision_function(Xb))
                                       for e in est.estimators_])
                own /= own.sum(axis=1, keepdims=True)
                rows = np.arange(len(yb)), np.searchsorted(est.classes_, yb)

                def ll(Q):
                    return -float(np.mean(np.log(np.clip(Q[rows], 1e-15, 1.0))))

                pred = est.predict(Xb)
                print(f"  {lname:10s} {mode:6s} accuracy {np.mean(pred == yb):.4f}  "
                      f"log-loss pooled {ll(P):.4f} own {ll(own):.4f}  "
                      f"own argmax != predict {np.mean(est.classes_[own.argmax(1)] != pred):.4f}")


def exact(data_dir, sets, n):
    import warnings

    from sklearn.svm import SVC
    # (scikit-learn 1.9 deprecates SVC's probability parameter for CalibratedClassifierCV
    # with ensemble=False; it is what the issues' figures were measured with)
    warnings.filterwarnings("ignore", message=".*probability.*", category=FutureWarning)

    import fastbudget as fb
    for name in sets:
        Xa, ya, Xb, yb, kp = load(name, data_dir, 0)
        o = np.random.default_rng(0).permutation(len(Xa))[:n]
        Xa, ya = Xa[o], ya[o]
        y_pm = np.where(yb == yb.max(), 1, -1)
        print(f"\n{name}: {len(Xa)} training rows, {len(Xb)} test rows, C = 100")
        for lname, make in (
                ("IncrementalSVC.fit", lambda: fb.IncrementalSVC(C=100.0, gamma=kp["gamma"],
                                                                 capacity=len(Xa))),
                ("SVC(probability=True)", lambda: SVC(C=100.0, gamma=kp["gamma"],
                                                      probability=True, random_state=0))):
            t = time.process_time()
            est = make().fit(Xa, ya)
            t = time.process_time() - t
            p = est.predict_proba(Xb)[:, 1]
            pred = est.predict(Xb)
            if lname.startswith("Incremental"):
                first = pred
            print(f"  {lname:22s} fit {t:6.1f} CPU s  accuracy {np.mean(pred == yb):.4f}  "
                  f"log-loss {log_loss(p, y_pm):.4f}  ECE {ece(p, y_pm):.4f}  "
                  f"predictions as IncrementalSVC's {np.mean(pred == first):.4f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--sets", nargs="+", default=["N-Checkerboard", "IJCNN1"])
    ap.add_argument("--multiclass", action="store_true",
                    help="OneVsRestClassifier on Pendigits and USPS: the pooled map against "
                         "each learner's own")
    ap.add_argument("--exact", type=int, metavar="N",
                    help="IncrementalSVC.fit against SVC(probability=True) on N rows")
    a = ap.parse_args(argv)
    if a.exact:
        exact(a.data_dir, a.sets, a.exact)
        return
    if a.multiclass:
        multiclass(a.data_dir)
        return
    import fastbudget
    print(f"package: {fastbudget.__file__}")
    for name in a.sets:
        Xa, ya, Xb, yb, kp = load(name, a.data_dir, 0)
        y_pm = np.where(yb == yb.max(), 1, -1)
        print(f"\n{name}: {len(Xa)} training rows, {len(Xb)} test rows")
        print(f"{'learner':18s} {'fit CPU s':>9s} {'accuracy':>8s} {'log-loss':>8s} "
              f"{'ECE':>7s} {'weight':>8s}")
        for lname, est in learners(kp["gamma"]).items():
            t = time.process_time()
            est.fit(Xa, ya)
            t = time.process_time() - t
            p = est.predict_proba(Xb)[:, 1]
            acc = float(np.mean(est.predict(Xb) == yb))
            print(f"{lname:18s} {t:9.2f} {acc:8.4f} {log_loss(p, y_pm):8.4f} "
                  f"{ece(p, y_pm):7.4f} {est.calibration_counts_:8.0f}")


if __name__ == "__main__":
    main()
