"""pytest configuration of the benchmark suite (``python -m pytest perf --benchmark-only``).

Benchmarks marked ``large`` (10^6 and more examples) or ``cold`` (compiling in fresh
processes) run only when ``-m`` names them, e.g. ``-m large`` or ``-m "cold or large"``;
the repository's default ``-m 'not slow'`` does not select them.
"""
import pytest


def pytest_collection_modifyitems(config, items):
    expr = config.getoption("markexpr") or ""
    keep, drop = [], []
    for item in items:
        hidden = [m for m in ("large", "cold") if item.get_closest_marker(m) and m not in expr]
        (drop if hidden else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
