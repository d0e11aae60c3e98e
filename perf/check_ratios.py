"""Fail when a benchmark's machine-independent ratios regress against the baseline.

Usage (from the repository root)::

    python perf/check_ratios.py RUN.json [BASELINE.json] [--tolerance 0.30] [--again RUN2.json]

``RUN.json`` is written by ``pytest perf --benchmark-only --benchmark-json RUN.json``;
``BASELINE.json`` defaults to the newest file under ``perf/baselines/``. Every key of a
benchmark's ``extra_info`` that ends in ``_ratio`` (``floor_ratio``, ``svc_ratio``,
``peer_ratio``...) is a time over a floor or a peer measured in the same run, so it compares
across machines. A ratio regresses when it exceeds the baseline's by more than the tolerance
(default 30 %); an ``accuracy`` that falls by more than one point also fails (the benchmarks
assert their own bars too). Benchmarks present in only one file are listed and skipped.
With ``--again RUN2.json`` (repeatable) a ratio fails only when every run shows the
regression: each ratio is taken at its best (lowest) over the runs and each accuracy at its
highest, since load on a shared machine only ever slows one side of a ratio for one run.
Exit status: 0 when nothing regressed, 1 otherwise, 2 on unusable input.
"""
import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def newest_baseline(required=True):
    """The highest-numbered ``perf/baselines/<machine>/NNNN_<commit>.json`` (the numbers
    ``make_baseline.py`` gives; a file's time says nothing after a clone), or None when
    there is none and not ``required``."""
    files = sorted(glob.glob(os.path.join(HERE, "baselines", "**", "*.json"), recursive=True),
                   key=lambda f: (os.path.basename(f)[:4], f))
    if not files:
        if not required:
            return None
        sys.exit("no baseline under perf/baselines/: pass BASELINE.json")
    return files[-1]


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
        return {b["fullname"]: b.get("extra_info", {}) for b in data["benchmarks"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"cannot read benchmark results from {path}: {exc}", file=sys.stderr)
        sys.exit(2)


def best_of(runs):
    """One run made of each benchmark's best ratios (lowest) and best accuracy (highest)."""
    best = {}
    for run in runs:
        for name, info in run.items():
            if name not in best:
                best[name] = dict(info)
                continue
            for key, value in info.items():
                if not isinstance(value, (int, float)) or key not in best[name]:
                    continue
                if key.endswith("_ratio"):
                    best[name][key] = min(best[name][key], value)
                elif key == "accuracy":
                    best[name][key] = max(best[name][key], value)
    return best


def compare(run, base, tol):
    """Rows (benchmark, key, baseline, now, change, failed) for every shared ratio."""
    rows = []
    for name in sorted(set(run) & set(base)):
        now, was = run[name], base[name]
        for key in sorted(k for k in was if k.endswith("_ratio") and k in now):
            change = now[key] / was[key] - 1.0
            rows.append((name, key, was[key], now[key], change, change > tol))
        if "accuracy" in was and "accuracy" in now:
            drop = was["accuracy"] - now["accuracy"]
            rows.append((name, "accuracy", was["accuracy"], now["accuracy"], -drop, drop > 0.01))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("run")
    p.add_argument("baseline", nargs="?")
    p.add_argument("--tolerance", type=float, default=0.30,
                   help="largest allowed relative rise of a ratio (default 0.30)")
    p.add_argument("--again", action="append", default=[], metavar="RUN2.json",
                   help="another run of the same benchmarks: a ratio fails only when it "
                        "regressed in every run")
    a = p.parse_args(argv)
    base_path = a.baseline or newest_baseline()
    run, base = best_of([load(path) for path in [a.run, *a.again]]), load(base_path)
    rows = compare(run, base, a.tolerance)
    runs = " and ".join([a.run, *a.again]) + (" (best of the runs)" if a.again else "")
    print(f"ratios of {runs} against {os.path.relpath(base_path)} "
          f"(fail above +{100 * a.tolerance:.0f} %):")
    for name, key, was, now, change, bad in rows:
        print(f"{'FAIL' if bad else 'ok  '} {name} {key}: {was:.3g} -> {now:.3g} "
              f"({100 * change:+.0f} %)")
    for name in sorted(set(run) - set(base)):
        print(f"skip {name} (not in the baseline)")
    if set(base) - set(run):
        print(f"({len(set(base) - set(run))} benchmarks of the baseline were not run)")
    if not rows:
        print("no benchmark in common: nothing compared", file=sys.stderr)
        return 2
    failed = sum(r[5] for r in rows)
    print(f"{failed} regression(s) in {len(rows)} comparisons")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
