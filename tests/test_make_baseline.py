"""perf/make_baseline.py: a baseline made of each benchmark's median run, on hand-made runs."""
import json
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(__file__), os.pardir, "perf", "make_baseline.py")
CHECK = os.path.join(os.path.dirname(__file__), os.pardir, "perf", "check_ratios.py")


def _entry(name, median, **info):
    return {"fullname": name, "name": name, "extra_info": dict(info),
            "stats": {"median": median, "min": median * 0.9, "max": median * 1.2}}


def _write(path, entries, commit="abcdef0123"):
    path.write_text(json.dumps({"machine_info": {"system": "Linux"},
                                "commit_info": {"id": commit}, "datetime": "now",
                                "version": "5", "benchmarks": entries}))
    return str(path)


def _run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def test_each_benchmark_takes_its_median_run_and_the_median_of_each_ratio(tmp_path):
    runs = [
        _write(tmp_path / "1.json", [_entry("a", 1.0, floor_ratio=10.0, svc_ratio=3.0,
                                            accuracy=0.95, note="run1"),
                                     _entry("b", 5.0, floor_ratio=2.0)]),
        _write(tmp_path / "2.json", [_entry("a", 3.0, floor_ratio=12.0, svc_ratio=2.0,
                                            accuracy=0.93, note="run2"),
                                     _entry("b", 4.0, floor_ratio=9.0)]),
        _write(tmp_path / "3.json", [_entry("a", 2.0, floor_ratio=30.0, svc_ratio=2.5,
                                            accuracy=0.94, note="run3"),
                                     _entry("b", 6.0, floor_ratio=1.0),
                                     _entry("c", 1.0, floor_ratio=4.0)]),
    ]
    out_path = tmp_path / "base.json"
    out = _run(SCRIPT, *runs, "-o", str(out_path))
    assert out.returncode == 0, out.stderr
    assert "c: in fewer runs than 3" in out.stdout
    base = {b["fullname"]: b for b in json.loads(out_path.read_text())["benchmarks"]}
    # a: the run with the median time (2.0) gives the statistics; each ratio its own median
    assert base["a"]["stats"]["median"] == 2.0 and base["a"]["extra_info"]["note"] == "run3"
    assert base["a"]["extra_info"]["floor_ratio"] == 12.0
    assert base["a"]["extra_info"]["svc_ratio"] == 2.5
    assert base["a"]["extra_info"]["accuracy"] == 0.94
    assert base["b"]["stats"]["median"] == 5.0 and base["b"]["extra_info"]["floor_ratio"] == 2.0
    assert base["c"]["extra_info"]["baseline_runs"] == 1
    # the ratio gate reads it: the third run's floor_ratio of a (30 against 12) fails, the
    # first run (10 against 12, svc_ratio 3.0 against 2.5: +20 %) passes
    check = _run(CHECK, runs[2], str(out_path))
    assert check.returncode == 1
    assert "FAIL a floor_ratio: 12 -> 30" in check.stdout
    check = _run(CHECK, runs[0], str(out_path))
    assert check.returncode == 0, check.stdout
    assert "ok   a svc_ratio: 2.5 -> 3" in check.stdout


def test_it_refuses_an_even_number_of_runs_or_runs_of_different_commits(tmp_path):
    one = _write(tmp_path / "1.json", [_entry("a", 1.0, floor_ratio=1.0)])
    two = _write(tmp_path / "2.json", [_entry("a", 1.0, floor_ratio=1.0)])
    other = _write(tmp_path / "3.json", [_entry("a", 1.0, floor_ratio=1.0)], commit="9999999")
    out = _run(SCRIPT, one, two, "-o", str(tmp_path / "x.json"))
    assert out.returncode == 2 and "odd number of runs" in out.stderr
    out = _run(SCRIPT, one, two, other, "-o", str(tmp_path / "x.json"))
    assert out.returncode == 2 and "different commits" in out.stderr
    assert not (tmp_path / "x.json").exists()
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    out = _run(SCRIPT, one, two, str(bad), "-o", str(tmp_path / "x.json"))
    assert out.returncode == 2 and "cannot read" in out.stderr
