"""perf/check_ratios.py: the ratio gate that .ci/perf-quick runs, on hand-made results."""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), os.pardir, "perf", "check_ratios.py")


def _write(path, ratios):
    benchmarks = [{"fullname": name, "extra_info": dict(info)} for name, info in ratios.items()]
    path.write_text(json.dumps({"benchmarks": benchmarks}))
    return str(path)


def _check(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


@pytest.fixture
def base(tmp_path):
    return _write(tmp_path / "base.json", {"a": {"floor_ratio": 10.0, "svc_ratio": 2.0,
                                                 "accuracy": 0.95},
                                           "b": {"floor_ratio": 5.0, "accuracy": 0.9}})


def test_one_run_fails_on_a_regression_beyond_the_tolerance(tmp_path, base):
    run = _write(tmp_path / "run.json", {"a": {"floor_ratio": 10.5, "svc_ratio": 2.7,
                                               "accuracy": 0.95},
                                         "b": {"floor_ratio": 5.0, "accuracy": 0.9}})
    out = _check(run, base)
    assert out.returncode == 1
    assert "FAIL a svc_ratio" in out.stdout and "1 regression(s)" in out.stdout


def test_a_regression_in_one_run_only_passes_with_again(tmp_path, base):
    # the CI run of 2026-11-26: svc_ratio high in the first run, a reader's ratio in the second
    first = _write(tmp_path / "1.json", {"a": {"floor_ratio": 10.0, "svc_ratio": 3.0,
                                               "accuracy": 0.95},
                                         "b": {"floor_ratio": 5.0, "accuracy": 0.9}})
    second = _write(tmp_path / "2.json", {"a": {"floor_ratio": 10.0, "svc_ratio": 2.1,
                                                "accuracy": 0.95},
                                          "b": {"floor_ratio": 7.0, "accuracy": 0.9}})
    assert _check(first, base).returncode == 1
    assert _check(second, base).returncode == 1
    out = _check(first, base, "--again", second)
    assert out.returncode == 0, out.stdout
    assert "best of the runs" in out.stdout


def test_a_regression_in_every_run_still_fails(tmp_path, base):
    first = _write(tmp_path / "1.json", {"a": {"floor_ratio": 14.0, "accuracy": 0.95},
                                         "b": {"floor_ratio": 5.0, "accuracy": 0.9}})
    second = _write(tmp_path / "2.json", {"a": {"floor_ratio": 13.5, "accuracy": 0.95},
                                          "b": {"floor_ratio": 5.0, "accuracy": 0.9}})
    out = _check(first, base, "--again", second)
    assert out.returncode == 1
    assert "FAIL a floor_ratio: 10 -> 13.5" in out.stdout


def test_accuracy_takes_the_best_run_and_a_drop_in_both_fails(tmp_path, base):
    low = {"a": {"floor_ratio": 10.0, "accuracy": 0.93}, "b": {"floor_ratio": 5.0,
                                                               "accuracy": 0.9}}
    ok = {"a": {"floor_ratio": 10.0, "accuracy": 0.95}, "b": {"floor_ratio": 5.0,
                                                              "accuracy": 0.9}}
    one, two, three = (_write(tmp_path / f"{i}.json", r) for i, r in
                       enumerate([low, ok, low]))
    assert _check(one, base, "--again", two).returncode == 0
    assert _check(one, base, "--again", three).returncode == 1


def test_unreadable_run_is_exit_2(tmp_path, base):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert _check(str(bad), base).returncode == 2
