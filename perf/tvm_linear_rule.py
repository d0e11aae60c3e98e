"""Why TVM's accuracy falls along a clean linear stream at B = 100 (issue 25's third stream).

The stream of ``perf/test_bench_tvm.py::test_tvm_stream_linear_rule_d22``
(``_bench.linear_rule``): standard normal rows in d = 22, labelled by the sign of a fixed
random linear rule, no label noise; paper 000's protocol (B = 100, C = 100, gamma = 1 / d,
control of C). For each stream seed and
variant, ``partial_fit`` over the stream, and after each stopping point, on 20,000 clean
test rows:

- accuracy, and the best accuracy any threshold on the same decision values reaches (how
  much of the loss is the intercept alone rather than the ranking);
- the errors split into false negatives / false positives;
- the share of each class's twin weight held by twins on the model's *other* side
  (f(q) < 0 for s+, f(q) >= 0 for s-): a misclassified example learned into the twin of
  the model's side;
- the ratio of the classes' twin weights, sum s+ / sum s- (the stream is 50 / 50);
- the twins on each side of the model (f(q) >= 0 / f(q) < 0).

Variants: the library as it is (the paper's One-Sided merging); ``m1=0.5``;
``forgetting='auto'``; ``sides='labels'``; ``balance_sides=True``; both.

    python perf/tvm_linear_rule.py --seeds 0 1 2 3 --n 300000

``--table3 ORDERS`` instead runs Table 3 of paper 000 (``fastbudget reproduce tvm-table3``'s
sets, parameters and stream orders) under the paper's One-Sided merging, ``balance_sides``,
``sides='labels'`` and both, cell by cell beside the paper's figure (``--data-dir``: the
real data sets; about 12 minutes for 3 orders):

    python perf/tvm_linear_rule.py --table3 3 --data-dir ../shared/data
"""
import argparse
import time

import numpy as np

# (run by path: this script's folder heads sys.path, so its sibling imports as is)
from _bench import linear_rule

STOPS = (10_000, 100_000, 300_000, 1_000_000)
#: the stream's variants: (name, TVMClassifier parameters beside the protocol's)
VARIANTS = (("the paper's One-Sided merging", {}), ("m1 = 0.5", {"m1": 0.5}),
            ("forgetting='auto'", {"forgetting": "auto"}),
            ("sides='labels'", {"sides": "labels"}),
            ("balance_sides=True", {"balance_sides": True}),
            ("both", {"sides": "labels", "balance_sides": True}))


def best_threshold(f, y):
    """The best accuracy of sign(f - t) over every threshold t (exact: a sweep over the
    sorted values)."""
    o = np.argsort(f)
    ys = y[o]
    # predicting +1 for rows o[k:], -1 for o[:k]: correct = negatives below + positives above
    neg_below = np.concatenate([[0], np.cumsum(ys < 0)])
    pos_above = np.concatenate([np.cumsum((ys > 0)[::-1])[::-1], [0]])
    return float(np.max(neg_below + pos_above) / len(y))


def run(seed, n, kw):
    from fastbudget import TVMClassifier

    Xt, yt = linear_rule(20_000, seed=99)
    X, y = linear_rule(n, seed=seed)
    clf = TVMClassifier(**{"budget": 100, "C": 100.0, "gamma": 1.0 / 22, **kw})
    rows = []
    start = 0
    t0 = time.process_time()
    for stop in [s for s in STOPS if s <= n]:
        clf.partial_fit(X[start:stop], y[start:stop], classes=[-1, 1])
        start = stop
        f = clf.decision_function(Xt)
        err = np.sign(f) != yt
        S = clf.twin_weights_
        fq = clf.decision_function(clf.twin_vectors_)
        rows.append({
            "seed": seed, "n": stop, "acc": float(1 - err.mean()),
            "best": best_threshold(f, yt),
            "fn": int((err & (yt > 0)).sum()), "fp": int((err & (yt < 0)).sum()),
            "pos_other": float(S[fq < 0, 0].sum() / S[:, 0].sum()),
            "neg_other": float(S[fq >= 0, 1].sum() / S[:, 1].sum()),
            "ratio": float(S[:, 0].sum() / S[:, 1].sum()),
            "sides": (int((fq >= 0).sum()), int((fq < 0).sum())),
            "learned": float(clf.n_accepted_ / stop), "cpu": time.process_time() - t0})
    return rows


#: the merge rules ``--table3`` compares: (column, TVMClassifier parameters)
TABLE3_RULES = (("paper's One-Sided", {}),
                ("balance_sides", {"balance_sides": True}),
                ("sides='labels'", {"sides": "labels"}),
                ("both", {"sides": "labels", "balance_sides": True}))


def table3(orders, data_dir):
    """Table 3's TVM cells under each rule of ``TABLE3_RULES`` (mean and sd over ``orders``
    stream orders, seeds 1000 + o as ``fastbudget reproduce``)."""
    from fastbudget import TVMClassifier
    from fastbudget.reproduce import tvm as rt

    budgets = (20, 50, 100, 200, 500)
    print("| data set | B | paper | " + " | ".join(r for r, _ in TABLE3_RULES) + " |")
    print("|---|---:|---:|" + "---:|" * len(TABLE3_RULES))
    diffs = {r: [] for r, _ in TABLE3_RULES}
    for name in rt.SETS:
        data = rt.load_set(name, data_dir)
        if data is None:
            continue
        Xa, ya, Xb, yb = data
        kp = rt.kernel_params(name, Xa.shape[1])
        for i, B in enumerate(budgets):
            paper = rt.PAPER_TABLE3[name][4 + i]
            cells = []
            for rule, kw in TABLE3_RULES:
                acc = []
                for o in range(orders):
                    perm = np.random.default_rng(1000 + o).permutation(len(ya))
                    clf = TVMClassifier(budget=B, C=rt._C(name), **kp, **kw)
                    acc.append(100.0 * clf.fit(Xa[perm], ya[perm]).score(Xb, yb))
                diffs[rule].append(np.mean(acc) - paper)
                cells.append(f"{np.mean(acc):.1f} ± {np.std(acc, ddof=1):.1f}")
            print(f"| {name} | {B} | {paper} | " + " | ".join(cells) + " |", flush=True)
    print()
    for rule, _ in TABLE3_RULES:
        d = np.asarray(diffs[rule])
        print(f"- {rule}: mean of ours - paper {d.mean():+.2f}, mean |ours - paper| "
              f"{np.abs(d).mean():.2f}, cells within 1.5 points {int((np.abs(d) <= 1.5).sum())} "
              f"of {d.size}, cells more than 1.5 below {int((d < -1.5).sum())}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--n", type=int, default=300_000)
    ap.add_argument("--table3", type=int, metavar="ORDERS")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    if args.table3:
        table3(args.table3, args.data_dir)
        return
    variants = [(name, [r for seed in args.seeds for r in run(seed, args.n, kw)])
                for name, kw in VARIANTS]
    print("| variant | seed | rows | accuracy % | best threshold % | errors FN / FP "
          "| twins f >= 0 / f < 0 | s+ on f < 0 twins | s- on f >= 0 twins "
          "| sum s+ / sum s- | learned | CPU s |")
    print("|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for name, rows in variants:
        for r in rows:
            print(f"| {name} | {r['seed']} | {r['n']:,} | {100 * r['acc']:.2f} "
                  f"| {100 * r['best']:.2f} | {r['fn']:,} / {r['fp']:,} "
                  f"| {r['sides'][0]} / {r['sides'][1]} | {r['pos_other']:.3f} "
                  f"| {r['neg_other']:.3f} | {r['ratio']:.2f} "
                  f"| {r['learned']:.2f} | {r['cpu']:.1f} |")


if __name__ == "__main__":
    main()
