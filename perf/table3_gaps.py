"""Offline oracles on TVM's own twins: where the Letter B = 20 and Global-merging losses lie.

Regenerates ``docs/results/tvm_table3_gaps.md`` (linked from ``tvm_table3.md`` and
``tvm_table5.md``).

Usage::

    python perf/table3_gaps.py [--data ../shared/data] [--orders 3] [--out docs/results]

For each case (data set, budget B, merging variant) and each stream order (seeds 1000 + o,
as ``fastbudget reproduce tvm-table3`` / ``tvm-table5``), the online TVM is trained with the
paper's defaults and then three models are built on its *final pivots* q_1..q_B:

- **online**: the online TVM itself (its twin weights s+/s- and C_eff).
- **refit**: ``SVC`` with ``sample_weight`` on the same twins, weights and C_eff (checks that
  the online model is the exact weighted SVM on its twins).
- **oracle Q(D)**: the offline TVM of Sec. 3 on these pivots: every training example is
  assigned to its nearest pivot (input space), s+/s- are the class counts, and the exact
  weighted SVM is solved at the C that control of C gives for those weights
  (C * B / N, N the training examples).
- **oracle margin**: as Q(D), but only the training examples inside the final model's margin
  (|f(x)| <= m1 = 1, the examples Beneficial would learn at the end) are counted, at
  C = 100 B / (their number): the offline analogue of what the online TVM keeps.
- **oracle labels**: the online weights s+ + s- of each twin kept, but split between the
  classes as in the oracle (the class shares of the examples nearest to that pivot), at the
  online C_eff.

If the Q(D) oracle is far above the online model, the pivots are good and the loss is in the
weights the merges attached to them; if it is not, the loss is in where the pivots sit.
"""
import argparse
import math
import pathlib
import time

import numpy as np

from fastbudget import TVMClassifier
from fastbudget.datasets import load_paper_dataset, make_checkerboard
from fastbudget.reproduce._common import stamp

ROOT = pathlib.Path(__file__).resolve().parents[1]
CB_GAMMA = 1.0 / (2 * 0.37)
SET_INDEX = {"Checkerboard": 3}      # position in paper 000's list of 12 (generator seeds)

# (data set, B, variant, paper figure) -- Table 3 (Default) and Table 5 (Global, B = 100)
CASES = (
    ("Letter", 20, "Default", 76.5),
    ("Letter", 100, "Default", 87.6),
    ("Letter", 100, "Global", 80.4),
    ("IJCNN", 100, "Default", 97.0),
    ("IJCNN", 100, "Global", 95.9),
    ("USPS", 100, "Default", 92.1),
    ("USPS", 100, "Global", 91.1),
    ("Checkerboard", 100, "Default", 98.1),
    ("Checkerboard", 100, "Global", 95.5),
)
VARIANTS = {"Default": {}, "Global": {"one_sided": False}}


def load(name, data):
    """Standardised (X_train, y_train, X_test, y_test) as the reproduction loads them."""
    if name == "Checkerboard":
        s = 100 * SET_INDEX[name]
        Xa, ya = make_checkerboard(100_000, noise=0.0, random_state=s)
        Xb, yb = make_checkerboard(5_000, noise=0.0, random_state=s + 1)
        S = 4.0 / math.sqrt(12.0)
        return (Xa - 2) / S, ya, (Xb - 2) / S, yb
    key = {"Letter": "letter", "IJCNN": "ijcnn", "USPS": "usps"}[name]
    return load_paper_dataset(key, data, standardize=True)


def gamma_of(name, d):
    return CB_GAMMA if name == "Checkerboard" else 1.0 / d


def nearest_pivot(X, Q, block=20000):
    out = np.empty(len(X), np.int64)
    q2 = (Q * Q).sum(1)
    for i in range(0, len(X), block):
        xb = X[i:i + block]
        d = q2[None, :] - 2.0 * xb @ Q.T
        out[i:i + block] = np.argmin(d, axis=1)
    return out


def weighted_svm(Q, sp, sn, C, gamma, Xb, yb):
    """Exact SVM on the twins (q, +1, s+), (q, -1, s-) with box C s; test accuracy (%)."""
    from sklearn.svm import SVC

    X = np.vstack([Q[sp > 0], Q[sn > 0]])
    y = np.r_[np.ones(int((sp > 0).sum())), -np.ones(int((sn > 0).sum()))]
    w = np.r_[sp[sp > 0], sn[sn > 0]]
    if len(np.unique(y)) < 2:
        return 100.0 * np.mean(yb == y[0]), 0.0
    m = SVC(C=C, kernel="rbf", gamma=gamma, tol=1e-6, cache_size=200).fit(X, y, sample_weight=w)
    return 100.0 * m.score(Xb, yb), float(np.mean(m.predict(Xb) > 0))


def run_case(name, B, variant, Xa, ya, Xb, yb, order):
    gamma = gamma_of(name, Xa.shape[1])
    perm = np.random.default_rng(1000 + order).permutation(len(ya))
    t = time.process_time()
    clf = TVMClassifier(budget=B, C=100.0, kernel="rbf", gamma=gamma, **VARIANTS[variant])
    for i in range(0, len(perm), 10_000):
        idx = perm[i:i + 10_000]
        clf.partial_fit(Xa[idx], ya[idx], classes=np.array([-1, 1]))
    cpu = time.process_time() - t
    online = 100.0 * clf.score(Xb, yb)
    Q = np.asarray(clf.twin_vectors_, dtype=np.float64)
    W = np.asarray(clf.twin_weights_, dtype=np.float64)
    sp, sn = W[:, 0].copy(), W[:, 1].copy()
    refit, _ = weighted_svm(Q, sp, sn, clf.C_eff_, gamma, Xb, yb)
    a = nearest_pivot(Xa, Q)
    op = np.bincount(a[ya > 0], minlength=len(Q)).astype(float)
    on = np.bincount(a[ya < 0], minlength=len(Q)).astype(float)
    oracle, _ = weighted_svm(Q, op, on, 100.0 * len(Q) / len(ya), gamma, Xb, yb)
    f = clf.decision_function(Xa)
    near = np.abs(f) <= 1.0
    mp = np.bincount(a[near & (ya > 0)], minlength=len(Q)).astype(float)
    mn = np.bincount(a[near & (ya < 0)], minlength=len(Q)).astype(float)
    margin = (weighted_svm(Q, mp, mn, 100.0 * len(Q) / max(int(near.sum()), 1), gamma, Xb, yb)[0]
              if near.sum() >= 2 else float("nan"))
    share = np.divide(op, op + on, out=np.full(len(Q), 0.5), where=(op + on) > 0)
    tot = sp + sn
    lab, _ = weighted_svm(Q, tot * share, tot * (1 - share), clf.C_eff_, gamma, Xb, yb)
    # how the online weights disagree with the data's labels around each pivot
    maj_online = np.sign(sp - sn)
    maj_oracle = np.sign(op - on)
    pos_mass_online = sp.sum()
    pos_in_pos_twins = sp[sp > sn].sum()
    return {
        "online": online, "refit": refit, "oracle": oracle, "labels": lab, "margin": margin,
        "margin_share": float(near.mean()), "cpu": cpu,
        "C_eff": float(clf.C_eff_), "sum_s": float(tot.sum()),
        "pos_twins_online": int((maj_online > 0).sum()),
        "pos_twins_oracle": int((maj_oracle > 0).sum()),
        "pos_share_in_pos_twins": float(pos_in_pos_twins / max(pos_mass_online, 1e-12)),
        "mixed_online": int(((sp > 0) & (sn > 0)).sum()),
        "n_merges": int(clf.n_merges_), "n_accepted": int(clf.n_accepted_),
    }


def rebalanced(Xa, ya, Xb, yb, pos_share, seed=0):
    """Subsample one class (train and test alike) so that positives make ``pos_share``."""
    rng = np.random.default_rng(seed)

    def cut(X, y):
        ip, ineg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        n_pos = min(len(ip), int(round(len(ineg) * pos_share / (1 - pos_share))))
        n_neg = min(len(ineg), int(round(n_pos * (1 - pos_share) / pos_share)))
        keep = np.sort(np.r_[rng.choice(ip, n_pos, replace=False),
                             rng.choice(ineg, n_neg, replace=False)])
        return X[keep], y[keep]

    return (*cut(Xa, ya), *cut(Xb, yb))


# (data set, share of positives after subsampling): IJCNN balanced, Letter made as
# imbalanced as IJCNN
BALANCE = (("IJCNN", 0.5), ("Letter", 0.097))


def balance_runs(cache, data, n_orders):
    out = []
    for name, share in BALANCE:
        if name not in cache:
            cache[name] = load(name, data)
        Xa, ya, Xb, yb = rebalanced(*cache[name], share)
        gamma = gamma_of(name, Xa.shape[1])
        r = {}
        for variant in ("Default", "Global"):
            acc = []
            for o in range(n_orders):
                perm = np.random.default_rng(1000 + o).permutation(len(ya))
                clf = TVMClassifier(budget=100, C=100.0, kernel="rbf", gamma=gamma,
                                    **VARIANTS[variant]).fit(Xa[perm], ya[perm])
                acc.append(100.0 * clf.score(Xb, yb))
            r[variant] = acc
        out.append((name, share, len(ya), len(yb), 100 * np.mean(yb < 0), r))
        print(f"{name} positives {share:.3f}: Default {_ms(r['Default'])}, "
              f"Global {_ms(r['Global'])}", flush=True)
    return out


def ijcnn_inputs(data, n_orders):
    """Default and Global on IJCNN under other input treatments: the LIBSVM scaling as
    shipped (not standardised), and without the 10 one-hot columns (features 1-10)."""
    Xr, ya, Xrb, yb = load_paper_dataset("ijcnn", data)
    Xs, _, Xsb, _ = load_paper_dataset("ijcnn", data, standardize=True)
    inputs = (("standardised (the reproduction)", Xs, Xsb),
              ("as shipped (LIBSVM's [-1, 1] scaling)", Xr, Xrb),
              ("standardised, one-hot columns dropped", Xs[:, 10:], Xsb[:, 10:]),
              ("as shipped, one-hot columns dropped", Xr[:, 10:], Xrb[:, 10:]))
    out = []
    for label, A, B in inputs:
        r = {}
        for variant in ("Default", "Global"):
            acc = []
            for o in range(n_orders):
                perm = np.random.default_rng(1000 + o).permutation(len(ya))
                clf = TVMClassifier(budget=100, C=100.0, kernel="rbf", gamma=1.0 / A.shape[1],
                                    **VARIANTS[variant]).fit(A[perm], ya[perm])
                acc.append(100.0 * clf.score(B, yb))
            r[variant] = acc
        out.append((label, r))
        print(f"IJCNN {label}: Default {_ms(r['Default'])}, Global {_ms(r['Global'])}",
              flush=True)
    return out


def _ms(v):
    v = np.asarray(v, dtype=float)
    return f"{v.mean():.1f} ± {v.std():.1f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--orders", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "docs" / "results"))
    ap.add_argument("--sets", default=None, help="comma-separated subset of the case data sets")
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    want = None if args.sets is None else set(args.sets.split(","))
    t0 = time.perf_counter()
    cache = {}
    rows = []
    for name, B, variant, paper in CASES:
        if want is not None and name not in want:
            continue
        if name not in cache:
            cache[name] = load(name, args.data)
        Xa, ya, Xb, yb = cache[name]
        rs = [run_case(name, B, variant, Xa, ya, Xb, yb, o) for o in range(args.orders)]
        rows.append((name, B, variant, paper, rs))
        print(f"{name:12s} B={B:3d} {variant:8s} paper {paper}: " + ", ".join(
            f"{k} {_ms([r[k] for r in rs])}"
            for k in ("online", "refit", "oracle", "labels", "margin"))
              + f"  (cpu {np.mean([r['cpu'] for r in rs]):.1f} s/order)", flush=True)
    bal = balance_runs(cache, args.data, args.orders) if want is None else []
    ij = ijcnn_inputs(args.data, args.orders) if want is None else []
    L = ["# TVM Table 3 / Table 5 gaps: offline oracles on TVM's own twins", "",
         f"Generated by `python perf/table3_gaps.py --orders {args.orders}` ({stamp()}; "
         f"{time.perf_counter() - t0:.0f} s on a shared, loaded 2-core machine). RBF kernel, "
         "C = 100 with control of C, m1 = 1, m2 = 2, eta = 0.2, input-space merging; stream "
         "orders 1000 + o as in `fastbudget reproduce tvm-table3` / `tvm-table5`. Each cell: "
         f"mean ± sd over {args.orders} orders.", "",
         "Columns: *online* the TVM; *refit* `SVC` on its final twins, weights and C_eff; "
         "*oracle Q(D)* the offline TVM of Sec. 3 on the same final pivots (every training "
         "example assigned to its nearest pivot, class counts as weights, C = 100 B / N); "
         "*oracle margin* the same with only the examples inside the final model's margin "
         "(|f| <= 1), C = 100 B / their number; "
         "*oracle labels* the online twins' total weights split between the classes as the "
         "examples nearest to each pivot are, at the online C_eff. Positive twins: twins whose "
         "s+ > s- (online) or whose nearest examples are mostly positive (oracle); *pos. mass "
         "in pos. twins*: the share of the online positive weight held by positive-majority "
         "twins.", "",
         "| data set | B | variant | paper | online | refit | oracle Q(D) "
         "| oracle margin (share of "
         "examples) | oracle labels "
         "| positive twins online / oracle | pos. mass in pos. twins | mixed twins | merges |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, B, variant, paper, rs in rows:
        g = lambda k: [r[k] for r in rs]  # noqa: E731
        L.append(f"| {name} | {B} | {variant} | {paper} | {_ms(g('online'))} | {_ms(g('refit'))} "
                 f"| {_ms(g('oracle'))} | {_ms(g('margin'))} "
                 f"({100 * np.mean(g('margin_share')):.0f} %) "
                 f"| {_ms(g('labels'))} | "
                 f"{np.mean(g('pos_twins_online')):.0f} / {np.mean(g('pos_twins_oracle')):.0f} | "
                 f"{100 * np.mean(g('pos_share_in_pos_twins')):.0f} % | "
                 f"{np.mean(g('mixed_online')):.0f} | {np.mean(g('n_merges')):.0f} |")
    if bal:
        base = {(n, v): [r["online"] for r in rs] for n, B, v, p, rs in rows if B == 100}
        L += ["", "## Global merging and class imbalance", "",
              "Global minus Default at B = 100 (same orders), on the sets as given and with one "
              "class subsampled in training and test alike (seed 0): IJCNN balanced to 50 % "
              "positives, Letter cut to IJCNN's 9.7 % positives. *majority* is the test share "
              "of the larger class.", "",
              "| data set | positives | train / test | majority | Default | Global "
              "| Global - Default |", "|---|---|---|---|---|---|---|"]
        for name, *_ in BALANCE:
            d, g = base.get((name, "Default")), base.get((name, "Global"))
            if d is not None and g is not None:
                _, ya0, _, yb0 = cache[name]
                L.append(f"| {name} | as given ({100 * np.mean(ya0 > 0):.1f} %) | "
                         f"{len(ya0):,} / {len(yb0):,} | "
                         f"{100 * max(np.mean(yb0 > 0), np.mean(yb0 < 0)):.1f} | {_ms(d)} | "
                         f"{_ms(g)} | {np.mean(g) - np.mean(d):+.1f} |")
        for name, share, na, nb, maj, r in bal:
            L.append(f"| {name} | {100 * share:.1f} % | {na:,} / {nb:,} | "
                     f"{max(maj, 100 - maj):.1f} "
                     f"| {_ms(r['Default'])} | {_ms(r['Global'])} | "
                     f"{np.mean(r['Global']) - np.mean(r['Default']):+.1f} |")
    if ij:
        L += ["", "## IJCNN: input treatment", "",
              "Default and Global at B = 100, gamma = 1 / (number of attributes), same orders.",
              "", "| inputs | Default | Global | Global - Default |", "|---|---|---|---|"]
        for label, r in ij:
            L.append(f"| {label} | {_ms(r['Default'])} | {_ms(r['Global'])} | "
                     f"{np.mean(r['Global']) - np.mean(r['Default']):+.1f} |")
    (out / "tvm_table3_gaps.md").write_text("\n".join(L) + "\n")
    print(f"wrote {out / 'tvm_table3_gaps.md'}")


if __name__ == "__main__":
    main()
