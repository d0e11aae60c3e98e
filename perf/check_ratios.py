"""Fail when a benchmark's machine-independent ratios regress against the baseline.

Usage (from the repository root)::

    python perf/check_ratios.py RUN.json [BASELINE.json] [--tolerance 0.30]

``RUN.json`` is written by ``pytest perf --benchmark-only --benchmark-json RUN.json``;
``BASELINE.json`` defaults to the newest file under ``perf/baselines/``. Every key of a
benchmark's ``extra_info`` that ends in ``_ratio`` (``floor_ratio``, ``svc_ratio``,
``peer_ratio``...) is a time over a floor or a peer measured in the same run, so it compares
across machines. A ratio regresses when it exceeds the baseline's by more than the tolerance
(default 30 %); an ``accuracy`` that falls by more than one point also fails (the benchmarks
assert their own bars too). Benchmarks present in only one file are listed and skipped.
Exit status: 0 when nothing regressed, 1 otherwise, 2 on unusable input.
"""
import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def newest_baseline():
    files = sorted(glob.glob(os.path.join(HERE, "baselines", "**", "*.json"), recursive=True),
                   key=os.path.getmtime)
    if not files:
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
    a = p.parse_args(argv)
    base_path = a.baseline or newest_baseline()
    run, base = load(a.run), load(base_path)
    rows = compare(run, base, a.tolerance)
    print(f"ratios of {a.run} against {os.path.relpath(base_path)} "
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
