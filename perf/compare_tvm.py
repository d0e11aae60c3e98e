"""A/B comparison of two values of one TVM parameter on the streams of ``fastbudget
reproduce`` (the same data, kernels, C, extra rows and order seeds 1000 + o), paired by order.

Run from the repository root, for example::

    python perf/compare_tvm.py --data-dir ../shared/data --param control_C --values True,False
    python perf/compare_tvm.py --data-dir ../shared/data --param removal --values abs,own_side \\
        --parts t3 --sets Gauss,Banana --orders 15

Parts: t3 (Table 3, RBF, B = 100), t3small (Table 3, B = 20 and 50), t3large (Table 3,
B = 200 and 500), t4 (Table 4, poly and linear, B = 100), t5 (Table 5's variants at B = 100,
``--t5-variants``, default all; ``--t5-orders``). Prints one markdown table per part and
kernel/budget/variant: per set the mean ± sd of each value over the orders (population sd,
as in the reports), the paired difference B − A, and the paper's figure; a cell is marked
when B is lower by more than A's sd. ``--jsonl FILE`` also writes every run. Values are read
as Python literals where they parse (``True``, ``1.5``, ``None``), else as strings.
"""
import argparse
import ast
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fastbudget import TVMClassifier  # noqa: E402
from fastbudget import reproduce as R  # noqa: E402

def _value(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def runs(part, name, orders, t5_orders, t5_variants, param):
    """(row, C, kernel, B, variant, extra params, n orders) of one data set in one part; the
    clipped rows, and extra rows that set ``param`` themselves, are left out."""
    out = []
    for row, C, clip, ext in R._rows(name):
        if clip is not None or param in ext:
            continue
        if part == "t3":
            out.append((row, C, "rbf", 100, None, dict(ext), orders))
        elif part in ("t3small", "t3large"):
            bs = (20, 50) if part == "t3small" else (200, 500)
            out += [(row, C, "rbf", B, None, dict(ext), orders) for B in bs]
        elif part == "t4":
            out += [(row, C, k, 100, None, dict(ext), orders) for k in ("poly", "linear")]
        elif part == "t5":
            out += [(row, C, "rbf", 100, v, {**R.T5_PARAMS[v], **ext}, t5_orders)
                    for v in t5_variants]
    return out


def paper(part, row, kern, B, variant):
    """The paper's figure for a row (an extra row gets its data set's), as the reports do."""
    if part.startswith("t3"):
        return R._paper_row(R.PAPER_TABLE3, row)[4 + R.T3_BUDGETS.index(B)]
    if part == "t4":
        return R._paper_row(R.PAPER_TABLE4, row)[3 if kern == "poly" else 7]
    return R._paper_row(R.PAPER_TABLE5, row)[2 + R.T5_VARIANTS.index(variant)]


def cell(v):
    v = np.asarray(v, dtype=float)
    ok = v[~np.isnan(v)]
    miss = f" ({ok.size} of {v.size} runs)" if ok.size < v.size else ""
    return f"{ok.mean():.2f} ± {ok.std():.2f}{miss}" if ok.size else "—"


def main(argv=None, param=None, values=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("FASTBUDGET_DATA_DIR"))
    ap.add_argument("--param", default=param, required=param is None,
                    help="a TVMClassifier parameter, e.g. control_C")
    ap.add_argument("--values", default=values, required=values is None,
                    help="two values, A,B (A is the reference)")
    ap.add_argument("--parts", default="t3,t3small,t4,t5")
    ap.add_argument("--sets", default=",".join(R.SETS))
    ap.add_argument("--orders", type=int, default=5)
    ap.add_argument("--t5-orders", type=int, default=3)
    ap.add_argument("--t5-variants", default=",".join(R.T5_PARAMS))
    ap.add_argument("--jsonl")
    a = ap.parse_args(argv)
    names = a.values.split(",")
    if len(names) != 2:
        ap.error(f"--values takes two values separated by a comma; got {a.values!r}")
    vals = [_value(v) for v in names]
    variants = [v for v in a.t5_variants.split(",") if v]
    bad = [v for v in variants if v not in R.T5_PARAMS]
    if bad:
        ap.error(f"unknown Table 5 variant(s) {bad}; choose from {list(R.T5_PARAMS)}")
    log = open(a.jsonl, "a") if a.jsonl else None
    data = {}
    for name in a.sets.split(","):
        d = R.load_set(name, a.data_dir)
        if d is None:
            print(f"(skipped {name}: no data)", file=sys.stderr)
        else:
            data[name] = d
    for part in a.parts.split(","):
        res = {}  # (row, kernel, B, variant) -> value name -> [acc per order]
        for name, (Xa, ya, Xb, yb) in data.items():
            for row, C, kern, B, var, extra, n_ord in runs(part, name, a.orders, a.t5_orders,
                                                           variants, a.param):
                kp = R.kernel_params(name, Xa.shape[1], kern)
                for o in range(n_ord):
                    for vname, val in zip(names, vals):
                        def make(val=val):
                            # the compared parameter overrides the row's (budget and C too)
                            return TVMClassifier(**{"budget": B, "C": C, **kp, **extra,
                                                    a.param: val})
                        try:
                            acc = R.run_stream(make, Xa, ya, Xb, yb, 1000 + o)[0]
                            err = None
                        except Exception as exc:  # recorded, shown as a missing run
                            acc, err = float("nan"), f"{type(exc).__name__}: {exc}"
                        res.setdefault((row, kern, B, var), {}).setdefault(vname, []).append(acc)
                        if log:
                            log.write(json.dumps(dict(part=part, row=row, kernel=kern, B=B,
                                                      variant=var, param=a.param, value=vname,
                                                      order=1000 + o, acc=acc, err=err)) + "\n")
                            log.flush()
                        if err:
                            print(f"failed: {row} {kern} B={B} {var or ''} {a.param}={vname} "
                                  f"order {1000 + o}: {err}", file=sys.stderr)
        _print_part(part, res, names)


def _print_part(part, res, names):
    A, B_ = names
    for key in sorted({k[1:] for k in res}, key=str):
        kern, B, var = key
        print(f"\n### {part}: {kern}, B = {B}" + (f", {var}" if var else "") + "\n")
        print(f"| data set | {A} | {B_} | {B_} − {A} | paper |\n|---|---|---|---|---|")
        avg = {n: [] for n in names}
        pav = []
        for (row, *k), d in res.items():
            if tuple(k) != key:
                continue
            a, b = np.asarray(d[A]), np.asarray(d[B_])
            diff = np.nanmean(b) - np.nanmean(a)
            mark = f" (lower by more than {A}'s sd)" if diff < -np.nanstd(a) else ""
            p = paper(part, row, kern, B, var)
            print(f"| {row} | {cell(a)} | {cell(b)} | {diff:+.2f}{mark} | {p} |")
            if row not in R.EXTRA_ROWS:
                avg[A].append(np.nanmean(a))
                avg[B_].append(np.nanmean(b))
                pav.append(p)
        if avg[A]:
            ma, mb = np.mean(avg[A]), np.mean(avg[B_])
            print(f"| (average, {len(avg[A])} sets) | {ma:.2f} | {mb:.2f} | {mb - ma:+.2f} | "
                  f"{np.mean(pav):.2f} |")


if __name__ == "__main__":
    main()
