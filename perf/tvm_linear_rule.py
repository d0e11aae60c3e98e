"""Why TVM's accuracy falls along a clean linear stream at B = 100 (issue 25's third stream).

The stream of ``perf/test_bench_tvm.py::test_tvm_stream_linear_rule_d22``: standard normal
rows in d = 22, labelled by the sign of a fixed random linear rule, no label noise; paper
000's protocol (B = 100, C = 100, gamma = 1 / d, control of C). For each stream seed and
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

Variants: the library as it is; ``m1=0.5``; ``balance_sides=True``; ``forgetting='auto'``; ``--label-sided`` adds One-Sided merging by the
twins' majority labels instead of the sign of f(q) (a throw-away patched copy of the
package, as ``perf/table3_readings.py``'s H10; the library is not changed).

    python perf/tvm_linear_rule.py --seeds 0 1 2 3 --n 300000 --label-sided

``--table3 ORDERS`` instead runs Table 3 of paper 000 (``fastbudget reproduce tvm-table3``'s
sets, parameters and stream orders) with ``balance_sides`` off (the paper's One-Sided
merging) and on, and prints both, cell by cell, beside the paper's figure (``--data-dir``:
the real data sets):

    python perf/tvm_linear_rule.py --table3 3 --data-dir ../shared/data
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# (run by path: this script's folder heads sys.path, so its sibling imports as is)
import table3_gaps as tg

D = 22
STOPS = (10_000, 100_000, 300_000, 1_000_000)
LABEL_PATCH = (("        side = 1 if f >= 0.0 else -1\n",
                "        side = 1 if f >= 0.0 else -1\n"
                "        if tw.s_pos[j] + tw.s_neg[j] > 0.0:\n"
                "            side = 1 if tw.s_pos[j] >= tw.s_neg[j] else -1\n"),)


def linear_rule(n, seed):
    """The benchmark's stream (``perf/test_bench_tvm.py::_linear_rule``)."""
    w = np.random.default_rng(12345).normal(size=D)
    X = np.random.default_rng(seed).normal(size=(n, D))
    return X, np.where(X @ w > 0, 1, -1)


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

    Xt, yt = linear_rule(20_000, 99)
    X, y = linear_rule(n, seed)
    clf = TVMClassifier(**{"budget": 100, "C": 100.0, "gamma": 1.0 / D, **kw})
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


def table3(orders, data_dir):
    """Table 3's TVM cells with ``balance_sides`` off and on (mean and sd over ``orders``
    stream orders, seeds 1000 + o as ``fastbudget reproduce``)."""
    from fastbudget import TVMClassifier
    from fastbudget.reproduce import tvm as rt

    budgets = (20, 50, 100, 200, 500)
    print("| data set | B | paper | paper's One-Sided merging | balanced sides | difference |")
    print("|---|---:|---:|---:|---:|---:|")
    diffs = {False: [], True: []}
    for name in rt.SETS:
        data = rt.load_set(name, data_dir)
        if data is None:
            continue
        Xa, ya, Xb, yb = data
        kp = rt.kernel_params(name, Xa.shape[1])
        for i, B in enumerate(budgets):
            acc = {}
            for bal in (False, True):
                acc[bal] = []
                for o in range(orders):
                    perm = np.random.default_rng(1000 + o).permutation(len(ya))
                    clf = TVMClassifier(budget=B, C=rt._C(name), balance_sides=bal, **kp)
                    acc[bal].append(100.0 * clf.fit(Xa[perm], ya[perm]).score(Xb, yb))
            paper = rt.PAPER_TABLE3[name][4 + i]
            for bal in (False, True):
                diffs[bal].append(np.mean(acc[bal]) - paper)
            print(f"| {name} | {B} | {paper} "
                  + " ".join(f"| {np.mean(acc[b]):.1f} ± {np.std(acc[b], ddof=1):.1f}"
                             for b in (False, True))
                  + f" | {np.mean(acc[True]) - np.mean(acc[False]):+.1f} |", flush=True)
    print(f"\nmean of (ours - paper) over the cells: paper's merging "
          f"{np.mean(diffs[False]):+.2f}, balanced {np.mean(diffs[True]):+.2f}; cells within "
          f"1.5 points of the paper: {sum(abs(d) <= 1.5 for d in diffs[False])} and "
          f"{sum(abs(d) <= 1.5 for d in diffs[True])} of {len(diffs[True])}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--n", type=int, default=300_000)
    ap.add_argument("--label-sided", action="store_true")
    ap.add_argument("--table3", type=int, metavar="ORDERS")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.table3:
        table3(args.table3, args.data_dir)
        return
    if args.inner:      # in the patched copy: the label-sided rows, as JSON
        rows = [r for s in args.seeds for r in run(s, args.n, {})]
        with open(args.inner, "w") as fh:
            json.dump(rows, fh)
        return
    variants = [("as it is", [r for s in args.seeds for r in run(s, args.n, {})]),
                ("m1 = 0.5", [r for s in args.seeds for r in run(s, args.n, {"m1": 0.5})]),
                ("balance_sides=True",
                 [r for s in args.seeds for r in run(s, args.n, {"balance_sides": True})]),
                ("forgetting='auto'",
                 [r for s in args.seeds for r in run(s, args.n, {"forgetting": "auto"})])]
    if args.label_sided:
        with tempfile.TemporaryDirectory() as tmp:
            tg.patched_copy(tmp, LABEL_PATCH, "label-sided")
            out = os.path.join(tmp, "rows.json")
            subprocess.run([sys.executable, os.path.abspath(__file__), "--inner", out,
                            "--n", str(args.n), "--seeds", *map(str, args.seeds)],
                           env=dict(os.environ, PYTHONPATH=tmp), check=True)
            with open(out) as fh:
                variants.append(("sides by majority label", json.load(fh)))
    print("| variant | seed | rows | accuracy % | best threshold % | errors FN / FP "
          "| twins f >= 0 / f < 0 | s+ on f < 0 twins | s- on f >= 0 twins | sum s+ / sum s- | learned | CPU s |")
    print("|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for name, rows in variants:
        for r in rows:
            print(f"| {name} | {r['seed']} | {r['n']:,} | {100 * r['acc']:.2f} "
                  f"| {100 * r['best']:.2f} | {r['fn']:,} / {r['fp']:,} "
                  f"| {r['sides'][0]} / {r['sides'][1]} | {r['pos_other']:.3f} | {r['neg_other']:.3f} | {r['ratio']:.2f} "
                  f"| {r['learned']:.2f} | {r['cpu']:.1f} |")


if __name__ == "__main__":
    main()
