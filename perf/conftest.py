"""pytest configuration of the benchmark suite (``python -m pytest perf --benchmark-only``).

Benchmarks marked ``large`` (10^6 and more examples), ``cold`` (compiling in fresh
processes) or ``peer`` (against a peer's binary, not shipped: ``test_bench_peer.py``) run only
when ``-m`` names them, e.g. ``-m large`` or ``-m "cold or large"``;
the repository's default ``-m 'not slow'`` does not select them.

Times are CPU seconds of this process (``time.process_time``) unless ``--benchmark-timer``
says otherwise: on a shared machine wall time measures the other jobs as much as ours. The
floors in ``_bench.py`` use the same clock.
"""
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # before pytest-benchmark's own pytest_configure reads the option
    if config.getoption("benchmark_timer", None) in ("time.perf_counter", None):
        config.option.benchmark_timer = "time.process_time"


def pytest_collection_modifyitems(config, items):
    expr = config.getoption("markexpr") or ""
    keep, drop = [], []
    for item in items:
        hidden = [m for m in ("large", "cold", "peer") if item.get_closest_marker(m) and m not in expr]
        (drop if hidden else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
