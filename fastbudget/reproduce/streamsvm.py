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
  l2-SVM (83-85 %); the unbiased unit-norm variant loses information in 2-5 dimensions.
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


def _stamp():
    """'commit abc1234, 2026-11-25' for the report headers."""
    import datetime
    import subprocess

    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, text=True,
                             capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        sha = "unknown"
    return f"commit {sha}, {datetime.date.today().isoformat()}"


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
        f"({_stamp()}; {time.perf_counter() - t_all:.0f} s on a shared, loaded 2-core machine).",
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
    t1 = write_table1(out.with_name(out.stem + "_table1.md"), rows, args.orders)
    print(f"wrote {out}, {t1}" + (f" and {png}" if png else ""))


# Why a row cannot match, from the experiments in streamsvm.md (same script, same run).
REASONS = {
    "Synthetic A": "data: the paper's generator is not published; ours (separability 0.85, the "
                   "stated value) gives a ~85 % Bayes rate for A, B and C alike, while the paper's "
                   "own libSVM column (96.5 / 66.0 / 93.2) shows its three sets differ. Our batch "
                   "l2-SVM sits at 83-85 %, so no StreamSVM variant can reach the paper's cells.",
    "Synthetic B": "data: as Synthetic A (paper's libSVM 66.0 % says B was much harder than ours).",
    "Synthetic C": "data: as Synthetic A; ours is ~85 % separable, the paper's C 93 %.",
    "Waveform": "scaling: the MEB is the l2-SVM only when k(x, x) is constant; on unit-norm rows "
                "Algo-2 matches the paper, on standardised rows it does not; Algo-1's spread over "
                "orders (sd 5-9 points) is larger than the gap.",
    "MNIST (0vs1)": "data size: 800 training digits of the 5k subset (paper 12,665); unit-norm rows "
                    "reach the paper's Algo-2 within 1 point, Algo-1 spreads over orders.",
    "MNIST (8vs9)": "data size: 800 training digits (paper 11,800); Figure 3's sweep shows Algo-2 "
                    "still rising with L on this subset; Algo-1's sd over orders is 7-14 points.",
    "IJCNN": "ordering/imbalance: 90.5 % of the test set is one class and Algo-2's ball is "
             "order-dependent (sd 10-13 points over orders; some orders give near-constant "
             "predictors); the paper reports one order.",
    "w3a": "data: w3a is not in ../shared/data; the w8a.t stand-in has 3 % positives and both "
           "algorithms sit at the majority rate (97 %), above the paper's 88.6 / 89.1 % (which "
           "are below w3a's own majority rate).",
}


def write_table1(path, rows, n_orders):
    """Paper 001 Table 1 cell by cell: paper, ours (raw and unit-norm rows), within 2 points?"""
    lines = [
        "# StreamSVM (paper 001) Table 1: cell by cell",
        "",
        f"Generated by `fastbudget.reproduce.streamsvm` (`fastbudget reproduce streamsvm`; {_stamp()}), "
        f"the same run as `streamsvm.md`; StreamSVM cells are means over {n_orders} random stream orders, "
        "linear kernel, C = 1, b0 = 1, Algo-2 with L = 10. *ours* gives the raw and the "
        "unit-norm-row scaling; a cell is **within 2** when either is within 2 points of the "
        "paper. The libSVM cell compares with SVC (linear, C = 1) where n_train <= 5,000, else "
        "with the batch l2-SVM (LinearSVC, squared hinge).",
        "",
        "| Data set | column | paper | ours raw | ours unit | within 2 | reason when not |",
        "|---|---|---|---|---|---|---|",
    ]
    n_ok = n_all = 0
    for name, d, ntr, nte, how, res, base, ts in rows:
        p = PAPER[name]
        batch = base["svc"][0] if "svc" in base else base["l2svm"][0]
        cells = [("libSVM (batch)", p[0], batch, None),
                 ("Algo-1", p[1], 100 * res["raw", 1].mean(), 100 * res["unit", 1].mean()),
                 ("Algo-2", p[2], 100 * res["raw", L_TABLE].mean(),
                  100 * res["unit", L_TABLE].mean())]
        for col, paper, raw, unit in cells:
            ok = abs(raw - paper) <= 2 or (unit is not None and abs(unit - paper) <= 2)
            n_ok += ok
            n_all += 1
            u = "—" if unit is None else f"{unit:.2f}"
            lines.append(f"| {name} | {col} | {paper} | {raw:.2f} | {u} | "
                         f"{'yes' if ok else 'no'} | {'' if ok else REASONS[name]} |")
    lines += ["", f"{n_ok} of {n_all} cells within 2 points. The experiments behind each reason "
              "(scalings, lookahead sweep, spread over orders) are in `streamsvm.md`."]
    path.write_text("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":
    main()
