"""TVM's m2 removal rule (Alg. 3): removal='abs' (the paper's |f(q)| > m2) against
removal='own_side' (only twins beyond m2 on their own label's side), on the streams of
``fastbudget reproduce`` (the same data, kernels, C and order seeds 1000 + o).

Run from the repository root (about 12 minutes for all parts on 2 cores)::

    python perf/compare_tvm_removal.py --data-dir ../shared/data
    python perf/compare_tvm_removal.py --data-dir ../shared/data --parts t3 \\
        --sets Gauss,Banana,N-Checkerboard,Checkerboard --orders 15

Parts: t3 (Table 3, RBF, B = 100), t3small (Table 3, B = 20 and 50), t4 (Table 4, poly and
linear, B = 100), t5 (Table 5 '[-1 1]', m2 = 1, B = 100; ``--t5-orders``, default 3 as
in the Table 5 report). Prints one markdown table per part: per set abs and own_side
mean ± sd over the orders (sd as in the reports: population sd), the paired difference,
and the paper's figure; a cell is marked when own_side is lower by more than abs's sd.
``--jsonl FILE`` also writes every run.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fastbudget import TVMClassifier  # noqa: E402
from fastbudget import reproduce as R  # noqa: E402

RULES = ("abs", "own_side")
T3_COL = {20: 4, 50: 5, 100: 6}


def runs(part, name, orders, t5_orders):
    """(row, kernel, B, extra params, n orders) of one data set in one part."""
    rows = [(row, C, ext) for row, C, clip, ext in R._rows(name) if clip is None]
    out = []
    for row, C, ext in rows:
        if part == "t3":
            out.append((row, C, "rbf", 100, dict(ext), orders))
        elif part == "t3small":
            out += [(row, C, "rbf", B, dict(ext), orders) for B in (20, 50)]
        elif part == "t4":
            out += [(row, C, k, 100, dict(ext), orders) for k in ("poly", "linear")]
        elif part == "t5" and name != "Adult":
            out.append((row, C, "rbf", 100, {"m2": 1.0, **ext}, t5_orders))
    return out


def paper(part, row, kern, B):
    if part in ("t3", "t3small"):
        return R.PAPER_TABLE3[row][T3_COL[B]] if row in R.PAPER_TABLE3 else None
    if part == "t4":
        return R.PAPER_TABLE4[row][3 if kern == "poly" else 7] if row in R.PAPER_TABLE4 else None
    return R.PAPER_TABLE5[row][3] if row in R.PAPER_TABLE5 else None


def cell(v):
    v = np.asarray(v, dtype=float)
    ok = v[~np.isnan(v)]
    miss = f" ({ok.size} of {v.size} runs)" if ok.size < v.size else ""
    return f"{ok.mean():.2f} ± {ok.std():.2f}{miss}" if ok.size else "—"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("FASTBUDGET_DATA_DIR"))
    ap.add_argument("--parts", default="t3,t3small,t4,t5")
    ap.add_argument("--sets", default=",".join(R.SETS))
    ap.add_argument("--orders", type=int, default=5)
    ap.add_argument("--t5-orders", type=int, default=3)
    ap.add_argument("--jsonl")
    a = ap.parse_args()
    log = open(a.jsonl, "a") if a.jsonl else None
    sets = a.sets.split(",")
    data = {}
    for name in sets:
        d = R.load_set(name, a.data_dir)
        if d is None:
            print(f"(skipped {name}: no data)", file=sys.stderr)
        else:
            data[name] = d
    for part in a.parts.split(","):
        res = {}  # (row, kernel, B) -> rule -> [acc per order]
        for name, (Xa, ya, Xb, yb) in data.items():
            for row, C, kern, B, extra, n_ord in runs(part, name, a.orders, a.t5_orders):
                kp = R.kernel_params(name, Xa.shape[1], kern)
                for o in range(n_ord):
                    for rule in RULES:
                        def make(rule=rule):
                            return TVMClassifier(budget=B, C=C, removal=rule, **kp, **extra)
                        try:
                            acc = R.run_stream(make, Xa, ya, Xb, yb, 1000 + o)[0]
                            err = None
                        except Exception as exc:  # recorded, shown as a missing run
                            acc, err = float("nan"), f"{type(exc).__name__}: {exc}"
                        res.setdefault((row, kern, B), {}).setdefault(rule, []).append(acc)
                        if log:
                            log.write(json.dumps(dict(part=part, row=row, kernel=kern, B=B,
                                                      removal=rule, order=1000 + o, acc=acc,
                                                      err=err, **extra)) + "\n")
                            log.flush()
                        if err:
                            print(f"failed: {row} {kern} B={B} {rule} order {1000 + o}: {err}",
                                  file=sys.stderr)
        for kern_b in sorted({(k, B) for (_r, k, B) in res}):
            print(f"\n### {part}: {kern_b[0]}, B = {kern_b[1]}\n")
            print("| data set | abs | own_side | own_side − abs | paper |\n|---|---|---|---|---|")
            avg = {r: [] for r in RULES}
            pav = []
            for (row, k, B), d in res.items():
                if (k, B) != kern_b:
                    continue
                ab, ow = np.asarray(d["abs"]), np.asarray(d["own_side"])
                diff = np.nanmean(ow) - np.nanmean(ab)
                mark = " (lower by more than abs's sd)" if diff < -np.nanstd(ab) else ""
                p = paper(part, row, k, B)
                print(f"| {row} | {cell(ab)} | {cell(ow)} | {diff:+.2f}{mark} | {p if p else '—'} |")
                if row not in R.EXTRA_ROWS:
                    avg["abs"].append(np.nanmean(ab))
                    avg["own_side"].append(np.nanmean(ow))
                    pav.append(p)
            if avg["abs"]:
                ma, mo = np.mean(avg["abs"]), np.mean(avg["own_side"])
                pa = f"{np.mean(pav):.2f}" if all(p is not None for p in pav) else "—"
                print(f"| (average, {len(avg['abs'])} sets) | {ma:.2f} | {mo:.2f} | {mo - ma:+.2f} | {pa} |")


if __name__ == "__main__":
    main()
