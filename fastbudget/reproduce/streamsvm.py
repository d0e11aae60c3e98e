"""Reproduce Table 1 and Figure 3 of Rai, Daume III & Venkatasubramanian (IJCAI 2009).

Usage::

    python -m fastbudget.reproduce.streamsvm [--data ../shared/data] [--orders 20] [--sweep-orders 100]
                                       [--out docs/results/streamsvm.md]

    python -m fastbudget.reproduce.streamsvm --kernel [--data ../shared/data] [--orders 20]
                                       [--out docs/results/streamsvm_kernel.md]

Writes a Markdown report (and ``streamsvm_lookahead.png`` next to it when matplotlib is
installed). ``--kernel`` instead runs the RBF study: test accuracy over random stream orders
of Algorithm 1, Algorithm 2 and the core-set re-solve (the default for kernels) against
``SVC`` with the same gamma, with box plots (``streamsvm_kernel.png``). Every StreamSVM number is the mean test accuracy over random orders of the
training stream (seeded); C = 1, the bias as an augmented constant feature (b0 = 1).
"""
import argparse
import pathlib
import time

import numpy as np

from ..datasets import load_paper_dataset, make_streamsvm_synthetic
from ..estimators.streamsvm import StreamSVMClassifier
from ._common import stamp

# the source tree (the default report and data directories are beside it)
ROOT = pathlib.Path(__file__).resolve().parents[2]

# Table 1 of the paper: libSVM (batch), StreamSVM Algo-1, Algo-2
PAPER = {
    "Synthetic A": (96.5, 95.5, 97.0),
    "Synthetic B": (66.0, 64.4, 68.5),
    "Synthetic C": (93.2, 73.1, 87.5),
    "Waveform": (89.4, 74.3, 78.4),
    "MNIST (0vs1)": (99.52, 99.34, 99.71),
    "MNIST (8vs9)": (96.57, 84.75, 94.7),
    "IJCNN": (91.64, 85.32, 87.81),
    "w3a": (98.29, 88.56, 89.06),
}
PAPER_SIZES = {
    "Synthetic A": "20,000 / 200", "Synthetic B": "20,000 / 200", "Synthetic C": "20,000 / 200",
    "Waveform": "4,000 / 1,000", "MNIST (0vs1)": "12,665 / 2,115", "MNIST (8vs9)": "11,800 / 1,983",
    "IJCNN": "35,000 / 91,701", "w3a": "44,837 / 4,912",
}
C = 1.0
L_TABLE = 10
SWEEP = (1, 2, 5, 10, 20, 50)

NOTES = """
## Reading the numbers

- **Input scaling decides everything.** The MEB <-> l2-SVM equivalence (Tsang et al. 2005, used
  in Sec. 3) needs k(x, x) constant. With raw features the ball's centre is pulled towards the
  long vectors and Algorithm 2 (closer to the exact MEB) can be *worse* than Algorithm 1
  (MNIST pixels / 255: 63 -> 57 %; Waveform standardised: 69 -> 61 %). With unit-norm rows the
  paper's picture appears: Algo-2 (L = 10) lifts MNIST 0 vs 1 to 98.9 % (paper 99.71) and
  MNIST 8 vs 9 to 92.2 % (paper 94.7), Waveform to 79.8 % (paper 78.4).
- **Figure 3 reproduced qualitatively** (unit rows): accuracy rises and its spread over stream
  orders falls with L (59 +- 12 % at L = 1, 91 +- 4 % at L = 10, 96 +- 1 % at L = 50). The
  paper reports convergence already at L = 10 (about 94-95 %); on our 800-digit subset it keeps
  improving to L = 50. Algorithm 1's spread over orders (sd 10-22 % on unit rows) is much
  larger than the paper's single-number table suggests.
- **Synthetic A/B/C**: our generator gives the stated ~85 % Bayes accuracy for all three, so
  they cannot match the paper's rows (its own libSVM column, 96.5 / 66.0 / 93.2, shows its sets
  were not all 85 % separable). StreamSVM on raw features stays within 1-3 points of the batch
  l2-SVM (83-85 %); the unbiased unit-norm variant loses information in 2-5 dimensions. The
  settings of the generator and C under which the paper's rows are reproduced are in
  `streamsvm_table1.md` and `streamsvm_table1_gaps.md`.
- **IJCNN**: Algo-1 85.9-87.2 % vs the paper's 85.32; Algo-2 (L = 10) is not better here and has
  a large spread over orders (sd 10-13 %): 90.5 % of the test set is one class, and some orders
  give near-constant predictors.
- **w3a stand-in (w8a.t split)**: 3 % positives; both algorithms sit at the majority-class rate
  (97.0 %), below the batch l2-SVM (98.3 %). The paper's 88.6 / 89.1 % on w3a is below that
  rate, so the rows are not comparable (different file, different class balance handling).
- MNIST: the paper trains on all 12k / 11.8k digits; we have 800 training digits per pair
  (5k subset), so our numbers have more variance and a different test set.
- The batch columns: LinearSVC with the squared hinge solves eq. 1 (C_sklearn = C / 2,
  intercept as an augmented feature like ours); SVC(kernel='linear', C = 1) is libSVM's
  L1-SVM as in the paper's column, run only where n_train <= 5,000.
"""


def load_sets(data_dir):
    sets = {}
    for tag, dim in (("A", 2), ("B", 3), ("C", 5)):
        X, y = make_streamsvm_synthetic(tag, 22000, separability=0.85, random_state=2009 + dim)
        sets[f"Synthetic {tag}"] = (X[:20000], y[:20000], X[20000:], y[20000:],
                                    "make_streamsvm_synthetic, separability 0.85, 20,000 / 2,000")
    Xa, ya, Xb, yb = load_paper_dataset("waveform", data_dir, standardize=True)
    sets["Waveform"] = (Xa, ya, Xb, yb, "UCI file: first 4,000 / last 1,000, class 0 vs rest, standardised")
    for name, key in (("MNIST (0vs1)", "mnist_0v1"), ("MNIST (8vs9)", "mnist_8v9")):
        Xa, ya, Xb, yb = load_paper_dataset(key, data_dir)
        sets[name] = (Xa / 255.0, ya, Xb / 255.0, yb,
                      "5k subset: 1,000 digits, seeded stratified 800 / 200, pixels / 255")
    Xa, ya, Xb, yb = load_paper_dataset("ijcnn", data_dir)
    Xa, ya = Xa[:35000], ya[:35000]   # first 35,000 rows = LIBSVM ijcnn1.tr, the paper's size
    sets["IJCNN"] = (Xa, ya, Xb, yb, "ijcnn1.tr (first 35,000 rows) / ijcnn1.t 91,701, LIBSVM's scaling as shipped")
    Xa, ya, Xb, yb = load_paper_dataset("w8a", data_dir)
    sets["w3a"] = (Xa, ya, Xb, yb, "w8a.t stand-in: seeded stratified 11,961 / 2,990, binary as is")
    return sets


def unit_rows(X):
    """x / ||x||: makes k(x, x) constant, the assumption of the MEB <-> l2-SVM equivalence
    (paper Sec. 3, "dot product (normalized inputs)")."""
    n = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(n > 0, n, 1.0)


def stream_accuracy(Xa, ya, Xb, yb, n_orders, seed, **params):
    acc = np.empty(n_orders)
    for k in range(n_orders):
        p = np.random.default_rng([seed, k]).permutation(len(ya))
        clf = StreamSVMClassifier(C=C, **params).fit(Xa[p], ya[p])
        acc[k] = clf.score(Xb, yb)
    return acc


def batch_baselines(Xa, ya, Xb, yb):
    from sklearn.svm import SVC, LinearSVC

    out = {}
    # LinearSVC with the squared hinge solves the l2-SVM of eq. 1: ||w||^2 + C sum xi^2 is
    # twice 1/2 ||w||^2 + (C/2) sum xi^2, so C_sklearn = C / 2; its intercept is an
    # augmented feature (intercept_scaling = 1) as ours.
    t = time.perf_counter()
    lin = LinearSVC(C=C / 2, loss="squared_hinge", dual=True, max_iter=20000, tol=1e-5).fit(Xa, ya)
    out["l2svm"] = (100 * lin.score(Xb, yb), time.perf_counter() - t)
    if len(ya) <= 5000:
        t = time.perf_counter()
        svc = SVC(kernel="linear", C=C).fit(Xa, ya)
        out["svc"] = (100 * svc.score(Xb, yb), time.perf_counter() - t)
    return out


KERNEL_VARIANTS = (
    ("Algorithm 1 (method='ball')", dict(method="ball", capacity=20000)),
    ("Algorithm 2, L = 10 (method='ball')", dict(method="ball", lookahead=10, capacity=20000)),
    ("several balls, K = 5 (method='ball')", dict(n_balls=5, capacity=20000)),
    ("several balls, K = 5, L = 10", dict(n_balls=5, lookahead=10, capacity=20000)),
    ("core set, L = 1", dict(lookahead=1)),
    ("core set (default: L = 10)", dict()),
)


def kernel_sets(data_dir):
    """The sets of the RBF study (at most 5,000 training rows)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    from fastbudget.datasets import make_checkerboard
    from fastbudget.datasets.standardize import StreamingStandardizer

    def std(Xa, Xb):
        sc = StreamingStandardizer().fit(Xa)
        return sc.transform(Xa), sc.transform(Xb)

    out = {}
    X, y = load_breast_cancer(return_X_y=True)
    y = np.where(y == 1, 1, -1)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
    A, B = std(Xa, Xb)
    out["breast_cancer"] = (A, ya, B, yb, "scikit-learn, stratified 70/30 split (seed 0), "
                            "standardised")
    Xa, ya = make_checkerboard(2000, random_state=1)
    Xb, yb = make_checkerboard(2000, random_state=2)
    A, B = std(Xa, Xb)
    out["checkerboard"] = (A, ya, B, yb, "4x4 board, 2,000 / 2,000 (seeds 1 / 2), standardised")
    Xa, ya, Xb, yb = load_paper_dataset("banana", data_dir, standardize=True)
    out["banana"] = (Xa, ya, Xb, yb, "../shared/data/banana, the loader's split, standardised")
    Xa, ya, Xb, yb = load_paper_dataset("ripley", data_dir, standardize=True)
    out["ripley"] = (Xa, ya, Xb, yb, "../shared/data/ripley (synth.tr / synth.te), standardised")
    Xa, ya, Xb, yb = load_paper_dataset("ijcnn", data_dir)
    r = np.random.default_rng(0)
    ia = r.choice(len(ya), 3000, replace=False)
    ib = r.choice(len(yb), 3000, replace=False)
    out["ijcnn1"] = (Xa[ia], ya[ia], Xb[ib], yb[ib],
                     "../shared/data/ijcnn1, seeded 3,000-row samples of train and test, "
                     "LIBSVM's scaling as shipped")
    return out


def kernel_study(args):
    from sklearn.svm import SVC

    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    t_all = time.perf_counter()
    results = {}
    for name, (Xa, ya, Xb, yb, how) in kernel_sets(args.data).items():
        gamma = 1.0 / Xa.shape[1]
        svc = 100 * SVC(C=1.0, gamma=gamma).fit(Xa, ya).score(Xb, yb)
        accs = {}
        for label, params in KERNEL_VARIANTS:
            t = time.process_time()
            acc = np.empty(args.orders)
            for k in range(args.orders):
                p = np.random.default_rng([11, k]).permutation(len(ya))
                clf = StreamSVMClassifier(kernel="rbf", gamma=gamma, **params).fit(Xa[p], ya[p])
                acc[k] = 100 * clf.score(Xb, yb)
            accs[label] = (acc, time.process_time() - t)
            print(f"{name:14s} {label:38s} median {np.median(acc):6.2f}  p10 "
                  f"{np.percentile(acc, 10):6.2f}  (SVC {svc:.2f}; {accs[label][1]:.1f} CPU s)",
                  flush=True)
        results[name] = (Xa.shape, len(yb), how, gamma, svc, accs)
    png = None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(results), figsize=(3.6 * len(results), 4.4))
        for ax, (name, (shape, _, _, gamma, svc, accs)) in zip(axes, results.items()):
            ax.boxplot([a for a, _ in accs.values()], whis=(10, 90))
            ax.axhline(svc, color="C3", ls="--", label=f"SVC {svc:.1f}")
            ax.set_xticks(range(1, len(accs) + 1),
                          ["Alg. 1", "Alg. 2\nL=10", "K=5", "K=5\nL=10", "core\nL=1",
                           "core\n(default)"])
            ax.set_title(f"{name} (n = {shape[0]:,}, d = {shape[1]})")
            ax.set_ylabel("test accuracy (%)")
            ax.legend(loc="lower right")
        fig.suptitle(f"StreamSVM, RBF kernel, C = 1: {args.orders} random stream orders "
                     "(whiskers: 10th and 90th percentiles)")
        fig.tight_layout()
        png = out.with_name("streamsvm_kernel.png")
        fig.savefig(png, dpi=100)
    except ImportError:
        pass
    lines = [
        "# StreamSVM with an RBF kernel: distributions over stream orders",
        "",
        f"Generated by `python -m fastbudget.reproduce.streamsvm --kernel --orders {args.orders}` "
        f"({stamp()}; {time.perf_counter() - t_all:.0f} s on a shared, loaded 2-core machine).",
        f"RBF kernel, C = 1, gamma = 1 / n_features for every model (SVC gets the same gamma), "
        "bias as an augmented constant feature (b0 = 1). Each StreamSVM cell: test accuracy "
        f"over {args.orders} random orders of the training stream (seeds [11, k]).",
        "Target (issue 28): median within 3 points of SVC, 10th percentile within 3 points of "
        "the median; *target met* counts a median above SVC as met (the column beside it shows "
        "by how much).",
        "",
        "| Data set | train / test | SVC | variant | median | 10th pct | median - SVC "
        "| median - 10th pct | target met | CPU s (all orders) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, (shape, nte, how, gamma, svc, accs) in results.items():
        for label, (acc, cpu) in accs.items():
            med, p10 = np.median(acc), np.percentile(acc, 10)
            ok = "yes" if med >= svc - 3 and p10 >= med - 3 else "no"
            lines.append(f"| {name} | {shape[0]:,} / {nte:,} | {svc:.2f} | {label} | {med:.2f} "
                         f"| {p10:.2f} | {med - svc:+.2f} | {med - p10:.2f} | {ok} | {cpu:.1f} |")
    lines += ["", "Data used:", ""]
    for name, (shape, nte, how, gamma, *_r) in results.items():
        lines.append(f"- **{name}**: {how}; gamma = {gamma:.4g}.")
    if png is not None:
        lines += ["", f"![accuracy over stream orders]({png.name})"]
    lines += ["", KERNEL_NOTES]
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}" + (f" and {png}" if png else ""))


KERNEL_NOTES = """## Reading the numbers

- **Algorithm 1 with a kernel is not usable** as a classifier: its ball keeps a dozen core
  vectors (the radius grows by half the distance at every update, so after a few updates
  almost every point is inside), and the predictor depends on which dozen.
- **Algorithm 2 and several balls** (Sec. 4.3, now available for every kernel and together
  with lookahead) help where the data are easy (breast_cancer) but still keep tens of core
  vectors: every new ball must enclose the old ones, so an early poor ball is never forgotten.
  With K = 5 and L = 10 some orders of breast_cancer and ijcnn1 give a near-constant
  predictor (the low 10th percentiles).
- **The core-set re-solve** (`method='coreset'`, the default for non-linear kernels) keeps
  every point that falls outside the current ball as a core vector and re-solves the
  minimum enclosing ball of the core set (pairwise Frank-Wolfe, warm start) after every
  `lookahead` newcomers, like a one-pass core vector machine. Its ball is the exact MEB of the
  core set, which is what the l2-SVM needs; it need not enclose the points it did not keep.
  When `capacity` (1,000) rows are full, the core vector of smallest coefficient gives its
  row to the newcomer. L = 1 (re-solve at every newcomer) has the higher median on the
  checkerboard but a 10th percentile 3.5 points below it; L = 10, the default, keeps the
  spread within 2 points everywhere and costs a third of the CPU.
- The l2-SVM of the MEB is not SVC's L1-SVM: on the checkerboard the exact MEB of all 2,000
  training points (a plain-NumPy dual solve) scores 79.2 % where SVC scores 71.5 %, so the
  core set can be above SVC.
- ijcnn1 (90 % one class): on 3,000 training rows SVC with C = 1 and gamma = 1/22 predicts
  the majority class (89.9 %), so this set only shows that no variant falls below it.

To regenerate: `python -m fastbudget.reproduce.streamsvm --kernel` (about 3 CPU minutes), or
`fastbudget reproduce streamsvm` for the linear Table 1 reports.
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--orders", type=int, default=20)
    ap.add_argument("--sweep-orders", type=int, default=100)
    ap.add_argument("--out", default=None)
    ap.add_argument("--kernel", action="store_true",
                    help="run the RBF study instead (writes streamsvm_kernel.md)")
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = str(ROOT / "docs" / "results" /
                       ("streamsvm_kernel.md" if args.kernel else "streamsvm.md"))
    if args.kernel:
        return kernel_study(args)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    t_all = time.perf_counter()
    run_stamp = stamp()   # before this run writes its pages (they would mark the tree modified)
    sets = load_sets(args.data)
    rows = []
    for name, (Xa, ya, Xb, yb, how) in sets.items():
        t = time.perf_counter()
        res = {}
        for tag, (A, B) in (("raw", (Xa, Xb)), ("unit", (unit_rows(Xa), unit_rows(Xb)))):
            for L in (1, L_TABLE):
                res[tag, L] = stream_accuracy(A, ya, B, yb, args.orders, 1, lookahead=L)
        ts = time.perf_counter() - t
        base = batch_baselines(Xa, ya, Xb, yb)
        rows.append((name, Xa.shape[1], len(ya), len(yb), how, res, base, ts))
        print(f"{name:14s} " + "  ".join(f"{k[0]}-L{k[1]} {100*v.mean():6.2f}±{100*v.std():.2f}"
                                          for k, v in res.items())
              + f"  l2svm {base['l2svm'][0]:6.2f}"
              + (f"  svc {base['svc'][0]:6.2f}" if "svc" in base else "")
              + f"  ({ts:.1f}s stream)", flush=True)

    # Figure 3: lookahead sweep on MNIST 8 vs 9
    Xa, ya, Xb, yb, _ = sets["MNIST (8vs9)"]
    sweep, sweep_raw = {}, {}
    for L in SWEEP:
        sweep[L] = stream_accuracy(unit_rows(Xa), ya, unit_rows(Xb), yb, args.sweep_orders, 3, lookahead=L)
        sweep_raw[L] = stream_accuracy(Xa, ya, Xb, yb, args.sweep_orders, 3, lookahead=L)
        print(f"L={L:3d}  unit rows {100*sweep[L].mean():6.2f} ± {100*sweep[L].std():.2f}   "
              f"raw {100*sweep_raw[L].mean():6.2f} ± {100*sweep_raw[L].std():.2f}", flush=True)

    png = None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        m = [100 * sweep[L].mean() for L in SWEEP]
        s = [100 * sweep[L].std() for L in SWEEP]
        ax.errorbar(range(len(SWEEP)), m, yerr=s, marker="o", capsize=4, label="unit-norm rows")
        m2 = [100 * sweep_raw[L].mean() for L in SWEEP]
        s2 = [100 * sweep_raw[L].std() for L in SWEEP]
        ax.errorbar(range(len(SWEEP)), m2, yerr=s2, marker="s", capsize=4, label="pixels / 255")
        ax.legend()
        ax.set_xticks(range(len(SWEEP)), [str(L) for L in SWEEP])
        ax.set_xlabel("lookahead L")
        ax.set_ylabel("test accuracy (%)")
        ax.set_title(f"StreamSVM, MNIST 8 vs 9 (5k subset), {args.sweep_orders} orders")
        fig.tight_layout()
        png = out.with_name("streamsvm_lookahead.png")
        fig.savefig(png, dpi=120)
    except ImportError:
        pass

    lines = [
        "# StreamSVM (paper 001): Table 1 and Figure 3 reproduction",
        "",
        f"Generated by `fastbudget.reproduce.streamsvm` (orders: {args.orders} for Table 1, "
        f"{args.sweep_orders} for the sweep; total {time.perf_counter() - t_all:.0f} s on a shared 2-core machine).",
        f"All models linear, C = {C:g}, bias as an augmented constant feature (b0 = 1); "
        f"Algo-2 uses L = {L_TABLE}. StreamSVM cells are mean ± sd over random stream orders.",
        "",
        "Two input scalings: **raw** (as described per data set below) and **unit** (each row then",
        "divided by its norm, so k(x, x) is constant as the MEB <-> l2-SVM equivalence of Sec. 3",
        "assumes). The batch columns use the raw scaling.",
        "",
        "| Data set | Dim | Train / test (ours) | Train / test (paper) | paper libSVM | paper Algo-1 | paper Algo-2 "
        "| Algo-1 raw | Algo-2 raw | Algo-1 unit | Algo-2 unit | batch l2-SVM (LinearSVC) | SVC linear |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, d, ntr, nte, how, res, base, ts in rows:
        p = PAPER[name]
        svc = f"{base['svc'][0]:.2f}" if "svc" in base else "—"
        cells = " | ".join(f"{100*res[k].mean():.2f} ± {100*res[k].std():.2f}"
                           for k in (("raw", 1), ("raw", L_TABLE), ("unit", 1), ("unit", L_TABLE)))
        lines.append(
            f"| {name} | {d} | {ntr:,} / {nte:,} | {PAPER_SIZES[name]} | {p[0]} | {p[1]} | {p[2]} "
            f"| {cells} | {base['l2svm'][0]:.2f} | {svc} |"
        )
    lines += ["", "Data used:", ""]
    for name, d, ntr, nte, how, *_ in rows:
        lines.append(f"- **{name}**: {how}.")
    lines += [
        "",
        "## Figure 3: lookahead sweep, MNIST 8 vs 9",
        "",
        f"Test accuracy over {args.sweep_orders} random orders of the 800 training digits.",
        "",
        "| L | unit rows: mean (%) | sd (%) | pixels / 255: mean (%) | sd (%) |",
        "|---|---|---|---|---|",
    ]
    for L in SWEEP:
        lines.append(f"| {L} | {100*sweep[L].mean():.2f} | {100*sweep[L].std():.2f} "
                     f"| {100*sweep_raw[L].mean():.2f} | {100*sweep_raw[L].std():.2f} |")
    if png is not None:
        lines += ["", f"![lookahead sweep]({png.name})"]
    out.write_text("\n".join(lines) + "\n" + NOTES)
    t1 = write_table1(out.with_name(out.stem + "_table1.md"), rows, args.orders, run_stamp)
    print(f"wrote {out}, {t1}" + (f" and {png}" if png else ""))


# ---------------------------------------------------------------------- the Table 1 page
#: (data set, column) -> (status, reason with the experiment's figure). The figures are those
#: of ``streamsvm_table1_gaps.md`` (``perf/table1_gaps.py``, 20 orders; Synthetic B and C
#: from commit e12f3ab, 2026-11-26, the others from commit 5b4e268, 2026-11-25).
COLUMNS = ("libSVM (batch)", "Algo-1", "Algo-2")
_SYN = ("separability: the paper calls A, B and C \"about 85 % separable\" but its own libSVM "
        "cells are 96.5 / 66.0 / 93.2 %; our generator at the stated 85 % gives 83-85 % for "
        "all three. ")
REASONS = {
    ("Synthetic A", "libSVM (batch)"): (
        "closed", _SYN + "Set to 0.965 (the paper's libSVM cell) our batch linear SVM scores "
        "96.55 %, and Algo-1 / Algo-2 96.22 / 96.24 % (paper 95.5 / 97.0): the whole row within "
        "1 point."),
    ("Synthetic A", "Algo-1"): (
        "closed", "separability (see libSVM cell): at 0.965, Algo-1 96.22 ± 0.33 % over 20 "
        "orders (no bias 96.45)."),
    ("Synthetic A", "Algo-2"): (
        "closed", "separability (see libSVM cell): at 0.965, Algo-2 96.24 ± 0.21 % (no bias "
        "96.40)."),
    ("Synthetic B", "libSVM (batch)"): (
        "closed", _SYN + "Set to 0.66 our batch linear SVM scores 65.60 % (paper 66.0)."),
    ("Synthetic B", "Algo-1"): (
        "closed", "generator and C: the paper gives only \"normally distributed clusters\" "
        "and the libSVM cell (one 200-point draw, sd 3.3) that pins the separability. A "
        "sweep of the two-Gaussian generator's unstated parameters at 0.66 (612 settings: "
        "spread of the directions without class information, offset of the clusters, C, "
        "bias) puts Algo-1 within 2 at 29. Checked on a fresh sample with 100 orders: "
        "separability 0.67, the two other directions with sd 0.1, no bias (Algorithm 1 as "
        "printed), C = 0.01 gives batch / Algo-1 / Algo-2 67.52 / 62.99 ± 11.71 / 67.52 "
        "(paper 66.0 / 64.4 / 68.5), the row within 2 together (sd 0.3 instead of 0.1: "
        "62.96 / 67.45). The paper's Perceptron (68.0) fits no setting of the sweep "
        "(ours 49.7-59.2), so the setting is a fit, not the paper's generator."),
    ("Synthetic B", "Algo-2"): (
        "closed", "generator and C (see Algo-1): separability 0.67, sd 0.1 across the class "
        "direction, no bias, C = 0.01: 67.52 ± 0.04 % on a fresh sample, 100 orders (paper "
        "68.5). At the libSVM cell's 0.66 no setting of the sweep lifts the expected Algo-2 "
        "more than 0.1 above the batch SVM (max 66.1), while the paper's is 2.5 above its "
        "libSVM on the same 200 test points: a 200-point test set puts all three cells "
        "within 2 together with probability 0.55 % at the nearest setting and 12.32 % at "
        "the likeliest."),
    ("Synthetic C", "libSVM (batch)"): (
        "closed", _SYN + "Set to 0.932 our batch linear SVM scores 93.00 % (paper 93.2)."),
    ("Synthetic C", "Algo-1"): (
        "closed", "generator and C: moving the clusters along the class direction lowers "
        "Algo-1 and Algo-2 together (r = 1: 84.3 / 84.3); moving them across it, with a "
        "small C, separates them. The sweep of the generator's unstated parameters (612 "
        "settings at 0.932) puts Algo-1 within 2 at 89, Algo-2 at 94, all three cells "
        "together at 17 (20 orders). Checked on a fresh sample with 100 orders: clusters "
        "moved by 2.5 at 90° to the class direction (our generator otherwise), C = 0.001, "
        "b0 = 1, separability 0.942 gives batch / Algo-1 / Algo-2 93.76 / 71.78 ± 14.54 / "
        "87.32 ± 7.29 (paper 93.2 / 73.1 / 87.5); at 0.932 the same setting gives 69.99 / "
        "85.50, and Algo-1's 20-order mean spans 64.7-75.3 (5th-95th percentile). The "
        "paper's Perceptron (77.0) fits no setting: at the 17 it is 88.9-90.8, and where "
        "it comes within 5 of 77 (clusters moved partly along the class direction) Algo-2 "
        "is at most 84.3. So the setting is a fit, not the paper's generator."),
    ("Synthetic C", "Algo-2"): (
        "closed", "generator and C (see Algo-1): clusters moved by 2.5 across the class "
        "direction, C = 0.001, b0 = 1, separability 0.942: 87.32 ± 7.29 % on a fresh "
        "sample, 100 orders (paper 87.5); at the reproduction's setting (no offset, C = 1) "
        "the chance that a 200-point test set gives the paper's three cells is below "
        "0.005 %."),
    ("Waveform", "libSVM (batch)"): (
        "closed", "binary task: the paper does not say which class is positive. Linear SVC on "
        "class 1 vs rest scores 89.20 % (paper 89.4); 0 vs rest (ours) 85.60, 2 vs rest "
        "88.30, the pairs 91.7-96.0."),
    ("Waveform", "Algo-1"): (
        "closed", "binary task: on class 1 vs rest (the task that fits the libSVM cell), "
        "standardised, b0 = 1, C = 1, Algo-1 scores 74.67 ± 9.05 % (paper 74.3) and Algo-2 "
        "77.36 ± 4.18 (paper 78.4). On 0 vs rest no point of the C / bias / scaling grid comes "
        "within 2 (best 71.72 at C = 0.1), and over 100 orders a 20-order mean spans "
        "65.4-71.0 (5th-95th percentile)."),
    ("MNIST (0vs1)", "Algo-1"): (
        "closed", "preprocessing: rows centred on the training mean and scaled to unit norm "
        "(Sec. 3's \"normalized inputs\"), with Algorithm 1 unbiased as printed, C = 1: "
        "98.28 ± 0.56 % (paper 99.34). The same rows with the bias feature give 90.60 ± "
        "14.02, unit rows without centring 91.50 (no bias) and 77.30 (b0 = 1). Not data "
        "size: flat from 100 to 800 digits (76.1 to 77.3, unit rows, b0 = 1). The paper "
        "does not mention centring; on IJCNN and w3a the same treatment falls to 43-56 %, "
        "so the reproduction's defaults are not changed."),
    ("MNIST (8vs9)", "Algo-1"): (
        "closed", "preprocessing: centred, unit-norm rows, unbiased, C = 1: 83.08 ± 8.23 % "
        "(paper 84.75); with the bias feature 64.47 ± 12.94, uncentred unit rows without "
        "bias 61.02, and the 24 uncentred points of the C / bias / scaling grid 52.7-64.8. "
        "Not data size (59.1 % at 100 and at 800 digits). Centring is not in the paper "
        "(see 0 vs 1)."),
    ("MNIST (8vs9)", "Algo-2"): (
        "closed", "preprocessing: centred, unit-norm rows, unbiased, C = 1, L = 10: 93.53 ± "
        "1.92 % (paper 94.7); or lookahead: L = 20 on the reproduction's unit rows gives "
        "93.65 ± 2.55 (L = 10: 89.90 over the same orders, L = 50: 96.20). Not data size "
        "(90.4 / 89.9 % at 100 / 800 digits)."),
    ("IJCNN", "Algo-2"): (
        "closed", "ordering: about half the orders give a near-majority predictor (test "
        "majority 90.5 %; the paper's 87.81 is below it too) and the others predict 7-26 % "
        "positives and score 71-85 %, so a 20-order mean moves by several points: over 100 "
        "orders 83.42 ± 9.88 (median 88.48), 20-order means 79.5-86.8 (5th-95th "
        "percentile); with seeds [7, k] the same setting gives 85.91 (within 2), no bias "
        "with C = 0.01 86.95."),
    ("w3a", "Algo-1"): (
        "explained", "data: w3a is not in ../shared/data. On the w8a.t stand-in every grid "
        "point (C 0.01-1000, bias or not, binary or unit rows) scores 93.9-97.0 % (majority "
        "96.96 %), and on the first order the binary rows' models call 0-0.8 % of the test "
        "set positive. The paper's 88.56 / 89.06 are "
        "8 points below w3a's majority rate, so its models called far more points positive; "
        "not reproducible without its file."),
    ("w3a", "Algo-2"): (
        "explained", "data: as Algo-1 (stand-in: 93.9-97.0 % over the grid, majority 96.96 %)."),
}

#: closing paragraph of the Table 1 page
SUMMARY = """What the experiments change in the reading of Table 1 (`streamsvm_table1_gaps.md`):

- **Synthetic A is reproduced** once the generator has the separability of the paper's own
  libSVM cell (0.965) rather than the 85 % the paper states. **B and C are reproduced** once
  the generator's unstated parameters are set too, each row's three cells within 2 together
  (fresh sample, 100 orders): B with the two directions without class information narrow
  (sd 0.1), no bias, C = 0.01; C with the clusters 2.5 away from the origin across the class
  direction and C = 0.001; both at a separability 1 point above the paper's libSVM cell
  (itself a 200-point draw). These settings come from a search (612 per set), not from the
  paper: its Perceptron cells (68.0 / 77.0) fit none of them.
- **Waveform fits class 1 vs rest**, not our 0 vs rest: that task puts all three cells
  within 1.1 points (89.20 / 74.67 / 77.36 against 89.4 / 74.3 / 78.4). The reproduction keeps
  0 vs rest (the paper does not name the class).
- **MNIST is reproduced with centred, unit-norm rows and the unbiased Algorithm 1**
  (Sec. 3: normalized inputs, the unbiased case): at C = 1 all four StreamSVM cells are
  within 1.7 points (98.28 / 98.80 / 83.08 / 93.53 against 99.34 / 99.71 / 84.75 / 94.7).
  Centring is not stated in the paper and ruins IJCNN and w3a (43-56 %), so it stays an
  experiment. It is not the data's size: accuracy is flat from 100 to 800 training digits.
- **IJCNN's Algo-2 mean over 20 orders is itself uncertain by +-4 points**; the paper's
  figure is inside that range.
- The paper gives no C and no preprocessing for Table 1 (Sec. 3 assumes normalized inputs
  and treats the unbiased case); the reproduction keeps C = 1, b0 = 1 and the scalings shown.
"""


def reason(name, column):
    """(status, reason) of one Table 1 cell that is not within 2 points."""
    return REASONS.get((name, column), ("not examined", ""))


def write_table1(path, rows, n_orders, stamp=""):
    """Write the cell-by-cell Table 1 page from :func:`main`'s results.

    ``rows`` are that script's ``(name, d, n_train, n_test, how, res, base, seconds)`` tuples
    (``res[scaling, L]`` accuracies over orders, ``base`` the batch baselines). A cell is
    *within 2* when the raw or the unit-norm figure is within 2 points of the paper; every
    other cell gets its status and the experiment behind it from ``REASONS``.
    """
    path = pathlib.Path(path)
    lines = [
        "# StreamSVM (paper 001) Table 1: cell by cell",
        "",
        f"Generated by `fastbudget.reproduce.streamsvm` (`fastbudget reproduce streamsvm`"
        f"{'; ' + stamp if stamp else ''}), the same run as `streamsvm.md`; StreamSVM cells "
        f"are means over {n_orders} random stream orders, linear kernel, C = 1, b0 = 1, Algo-2 "
        "with L = 10. *ours* gives the raw and the unit-norm-row scaling; a cell is **within "
        "2** when either is within 2 points of the paper. The libSVM cell compares with SVC "
        "(linear, C = 1) where n_train <= 5,000, else with the batch l2-SVM (LinearSVC, "
        "squared hinge). The status and reason of every other cell come from the experiments "
        "of `streamsvm_table1_gaps.md` (`python perf/table1_gaps.py`): *closed* means an "
        "experiment puts the cell within 2 points under a setting the paper does not state "
        "(named in the reason; the reproduction's defaults are not changed for it), "
        "*explained* that an experiment shows why our data cannot give the paper's figure, "
        "*unexplained* that the experiments tried leave the gap open.",
        "",
        "| Data set | column | paper | ours raw | ours unit | within 2 | status | reason "
        "(experiment: figure) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    n_ok = n_all = 0
    count = {}
    for name, d, ntr, nte, how, res, base, ts in rows:
        p = PAPER[name]
        batch = base["svc"][0] if "svc" in base else base["l2svm"][0]
        cells = [(COLUMNS[0], p[0], batch, None),
                 (COLUMNS[1], p[1], 100 * res["raw", 1].mean(), 100 * res["unit", 1].mean()),
                 (COLUMNS[2], p[2], 100 * res["raw", L_TABLE].mean(),
                  100 * res["unit", L_TABLE].mean())]
        for col, paper, raw, unit in cells:
            ok = abs(raw - paper) <= 2 or (unit is not None and abs(unit - paper) <= 2)
            n_ok += ok
            n_all += 1
            status, why = ("within", "") if ok else reason(name, col)
            count[status] = count.get(status, 0) + 1
            u = "—" if unit is None else f"{unit:.2f}"
            lines.append(f"| {name} | {col} | {paper} | {raw:.2f} | {u} | "
                         f"{'yes' if ok else 'no'} | {status} | {why} |")
    lines += ["", f"{n_ok} of {n_all} cells within 2 points; of the others "
              + ", ".join(f"{v} {k}" for k, v in count.items() if k != "within") + "."]
    lines += ["", SUMMARY]
    path.write_text("\n".join(lines) + "\n")
    return path



if __name__ == "__main__":
    main()
