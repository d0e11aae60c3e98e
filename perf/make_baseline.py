"""Write a perf baseline from several full runs of the suite, each benchmark at its median.

Usage (from the repository root, after three runs of
``python -m pytest perf --benchmark-only --benchmark-json RUNk.json`` in a row)::

    python perf/make_baseline.py RUN1.json RUN2.json RUN3.json [-o BASELINE.json]

A baseline taken from one run is one draw of the machine's spread: a benchmark that ran in
a fast moment makes every later run look like a regression, one that ran in a slow moment
hides one (``perf/README.md``). Here every benchmark's entry (its timing statistics, which
``--benchmark-compare`` reads) is that of the run whose median time is the median of the
runs' medians, and every ``_ratio`` in its ``extra_info`` (which ``check_ratios.py`` reads)
and its ``accuracy`` is the median of the runs' values, key by key. A benchmark missing from
some runs takes the median of those that have it (and is listed). The file keeps
pytest-benchmark's format, with the first run's machine and commit; by default it is
written beside the newest baseline as ``NNNN_<commit>.json``, numbered after it.
Exit status 0, or 2 on unusable input.
"""
import argparse
import copy
import json
import os
import statistics
import sys

# (run by path: this script's folder heads sys.path, so its sibling imports as is)
from check_ratios import newest_baseline

HERE = os.path.dirname(os.path.abspath(__file__))


def read_run(path):
    try:
        with open(path) as f:
            data = json.load(f)
        for b in data["benchmarks"]:            # (what combine reads, checked here)
            _ = (b["fullname"], float(b["stats"]["median"]))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"cannot read benchmark results from {path}: {exc}", file=sys.stderr)
        sys.exit(2)
    return data


def median_entry(entries):
    """The entry of the run with the median median time, its ratios and accuracy replaced
    by the medians over all runs."""
    order = sorted(entries, key=lambda b: b["stats"]["median"])
    out = copy.deepcopy(order[(len(order) - 1) // 2])
    info = out.setdefault("extra_info", {})
    for key in list(info):
        if not (key.endswith("_ratio") or key == "accuracy"):
            continue
        values = [b["extra_info"][key] for b in entries
                  if isinstance(b.get("extra_info", {}).get(key), (int, float))]
        if values:
            info[key] = statistics.median(values)
    info["baseline_runs"] = len(entries)
    return out


def combine(runs):
    """(baseline dict, names missing from some runs)."""
    names = []
    by_name = {}
    for data in runs:
        for b in data["benchmarks"]:
            if b["fullname"] not in by_name:
                names.append(b["fullname"])
                by_name[b["fullname"]] = []
            by_name[b["fullname"]].append(b)
    out = copy.deepcopy({k: v for k, v in runs[0].items() if k != "benchmarks"})
    out["benchmarks"] = [median_entry(by_name[n]) for n in names]
    partial = [n for n in names if len(by_name[n]) < len(runs)]
    return out, partial


def default_path(data):
    newest = newest_baseline(required=False)
    if newest is not None:
        folder = os.path.dirname(newest)
        number = int(os.path.basename(newest)[:4]) + 1
    else:
        m = data.get("machine_info", {})
        folder = os.path.join(HERE, "baselines", "-".join(
            [m.get("system", "machine"), m.get("python_implementation", "Python"),
             ".".join(m.get("python_version", "3").split(".")[:2]), "64bit"]))
        number = 1
    commit = (data.get("commit_info", {}).get("id") or "unknown")[:7]
    return os.path.join(folder, f"{number:04d}_{commit}.json")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", metavar="RUN.json")
    p.add_argument("-o", "--output", help="where to write the baseline (default: "
                   "perf/baselines/<machine>/NNNN_<commit>.json, after the newest)")
    a = p.parse_args(argv)
    if len(a.runs) < 3 or len(a.runs) % 2 == 0:
        print("give an odd number of runs, at least 3 (the median of each benchmark)",
              file=sys.stderr)
        return 2
    runs = [read_run(path) for path in a.runs]
    commits = {(r.get("commit_info", {}).get("id") or "")[:7] for r in runs}
    if len(commits) > 1:
        print(f"the runs are of different commits ({', '.join(sorted(commits))}): take "
              "them on one", file=sys.stderr)
        return 2
    out, partial = combine(runs)
    path = a.output or default_path(runs[0])
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=4)
    print(f"wrote {os.path.relpath(path)}: {len(out['benchmarks'])} benchmarks, each at "
          f"the median of {len(runs)} runs")
    for name in partial:
        print(f"  {name}: in fewer runs than {len(runs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
