"""Online-calibrated probabilities of TVM against scikit-learn's SVC(probability=True).

Run from the repository root::

    python perf/probability.py --data-dir ../shared/data [--svc-n 20000] \
        [--budgets N-Checkerboard=100 IJCNN1=100,1000] [--png docs/results/probability.png]

Two data sets, both scored on *noisy* test labels (the labels a user sees):

- N-Checkerboard: 100,000 training examples of the 4x4 board with 15 % of the labels flipped,
  20,000 test examples with 15 % flipped too (the true P(y | x) is 0.85 or 0.15 away from the
  cell edges, so the Bayes log-loss is the entropy of 0.15, 0.423); attributes standardised
  with the board's exact mean and sd; RBF delta = 0.37, C = 100.
- IJCNN1: 49,990 training, 91,701 test examples (9.7 % positive), standardised, RBF
  delta = d / 2, C = 100.

TVM (budgets ``--budgets``, default 100 on the board, 100 and 1,000 on IJCNN1) streams the
training set in chunks of ``--chunk`` examples in a random order;
its calibration map is fitted online, on each chunk's decision values before the chunk is
learned (``fastbudget.calibration``). ``SVC(C=100, probability=True)`` (same kernel; Platt
scaling by 5-fold cross-validation inside) is trained on the first ``--svc-n`` examples of the
same order. Printed per model: log-loss, expected calibration error (ECE: 15 equal-width bins
of the predicted P(y = +1), the weighted mean |mean prediction - positive rate|), Brier
score, accuracy, and the training CPU seconds. The row "TVM, Platt only" scores TVM's decision
values through the sigmoid stage of the same map (no isotonic stage), to show what the plain
sigmoid gives. With ``--png`` a reliability diagram of both data sets is written.
"""
import argparse
import math
import time
import warnings

import numpy as np

N_ECE_BINS = 15


def ece(p, y, n_bins=N_ECE_BINS):
    """Expected calibration error of P(y = +1) = ``p`` for labels ``y`` in {-1, +1}."""
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    pos = (y > 0).astype(float)
    n = np.bincount(b, minlength=n_bins)
    sp = np.bincount(b, weights=p, minlength=n_bins)
    sy = np.bincount(b, weights=pos, minlength=n_bins)
    live = n > 0
    return float(np.sum(np.abs(sp[live] - sy[live])) / len(p))


def log_loss(p, y, eps=1e-15):
    p = np.clip(p, eps, 1 - eps)
    return float(-np.mean(np.where(y > 0, np.log(p), np.log(1 - p))))


def reliability(p, y, n_bins=N_ECE_BINS):
    """(mean prediction, positive rate, count) of the non-empty equal-width bins."""
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    n = np.bincount(b, minlength=n_bins)
    sp = np.bincount(b, weights=p, minlength=n_bins)
    sy = np.bincount(b, weights=(y > 0).astype(float), minlength=n_bins)
    live = n > 0
    return sp[live] / n[live], sy[live] / n[live], n[live]


def metrics(p, y):
    return {"log-loss": log_loss(p, y), "ECE": ece(p, y),
            "Brier": float(np.mean((p - (y > 0)) ** 2)),
            "accuracy": float(np.mean((p > 0.5) == (y > 0)))}


def load(name, data_dir, seed):
    from fastbudget.datasets import load_paper_dataset, make_checkerboard
    if name == "N-Checkerboard":
        Xa, ya = make_checkerboard(100_000, noise=0.15, random_state=seed)
        Xb, yb = make_checkerboard(20_000, noise=0.15, random_state=seed + 1)
        S = 4.0 / math.sqrt(12.0)
        return (Xa - 2) / S, ya, (Xb - 2) / S, yb, {"kernel": "rbf", "gamma": 1 / (2 * 0.37)}
    Xa, ya, Xb, yb = load_paper_dataset("ijcnn", data_dir, standardize=True)
    return Xa, ya, Xb, yb, {"kernel": "rbf", "gamma": 1.0 / Xa.shape[1]}


def run(name, a, budgets):
    from sklearn.svm import SVC

    from fastbudget import TVMClassifier
    from fastbudget.calibration import _sigmoid

    Xa, ya, Xb, yb, kp = load(name, a.data_dir, a.seed)
    perm = np.random.default_rng(a.seed).permutation(len(ya))
    Xa, ya = Xa[perm], ya[perm]
    rows, curves, notes = [], {}, []
    for B in budgets:
        clf = TVMClassifier(budget=B, C=100.0, **kp)
        t0 = time.process_time()
        for i in range(0, len(ya), a.chunk):
            clf.partial_fit(Xa[i:i + a.chunk], ya[i:i + a.chunk], classes=[-1, 1])
        t_tvm = time.process_time() - t0
        # the cost of the calibration's extra scoring: one decision_function per example
        t0 = time.process_time()
        clf.decision_function(Xa)
        notes.append((B, (time.process_time() - t0) / max(t_tvm, 1e-9)))
        f = clf.decision_function(Xb)
        p = clf.predict_proba(Xb)[:, 1]
        cmap = clf._calibration()
        p_platt = _sigmoid(cmap.A * f + cmap.B)
        rows.append((f"TVM B={B}, online calibration", metrics(p, yb), t_tvm))
        rows.append((f"TVM B={B}, Platt stage only", metrics(p_platt, yb), t_tvm))
        if B == budgets[-1]:
            curves[f"TVM B={B} online"] = reliability(p, yb)
            curves[f"TVM B={B} Platt only"] = reliability(p_platt, yb)
    n_svc = min(a.svc_n, len(ya))
    if n_svc:
        svc = SVC(C=100.0, probability=True, random_state=0, **kp)
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            svc.fit(Xa[:n_svc], ya[:n_svc])
        t_svc = time.process_time() - t0
        ps = svc.predict_proba(Xb)[:, list(svc.classes_).index(1)]
        rows.append((f"SVC(probability=True) on {n_svc:,}", metrics(ps, yb), t_svc))
        curves["SVC"] = reliability(ps, yb)
    return rows, curves, notes


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--sets", default="N-Checkerboard,IJCNN1")
    ap.add_argument("--budgets", nargs="*", default=["N-Checkerboard=100", "IJCNN1=100,1000"],
                    help="NAME=B1,B2,... budgets of TVM per data set")
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--svc-n", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default=None)
    a = ap.parse_args(argv)
    allcurves = {}
    print("| data | model | log-loss | ECE | Brier | accuracy | train CPU s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    budgets = {k: [int(b) for b in v.split(",")] for k, v in (x.split("=") for x in a.budgets)}
    for name in a.sets.split(","):
        rows, curves, notes = run(name, a, budgets.get(name, [100]))
        allcurves[name] = curves
        for label, m, t in rows:
            print(f"| {name} | {label} | {m['log-loss']:.3f} | {m['ECE']:.4f} | "
                  f"{m['Brier']:.3f} | {m['accuracy']:.3f} | {t:.1f} |", flush=True)
        for B, frac in notes:
            print(f"<!-- {name}, B={B}: one decision_function over the training set costs "
                  f"{100 * frac:.1f} % of TVM's training CPU time -->", flush=True)
    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(allcurves), figsize=(5 * len(allcurves), 4.6))
        for ax, (name, curves) in zip(np.atleast_1d(axes), allcurves.items()):
            ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="perfect")
            for (label, (mp, rate, n)), mk in zip(curves.items(), "osv^"):
                ax.plot(mp, rate, marker=mk, ms=4, label=label)
            ax.set_title(f"{name} (noisy test labels)")
            ax.set_xlabel("mean predicted P(y = +1) in bin")
            ax.set_ylabel("fraction positive in bin")
            ax.legend(loc="upper left", fontsize=8)
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)
        print(f"wrote {a.png}")


if __name__ == "__main__":
    main()
