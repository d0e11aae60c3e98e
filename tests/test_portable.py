"""Portable machine code (``fastbudget._portable``, ``fastbudget.kernels._jit``).

Each test copies the package's sources (no caches) into a temporary folder, compiles one
small kernel there for a portable x86-64 level in a child process told to target it (as
``python -m fastbudget._portable build`` does for every kernel), and then calls the kernel
in fresh child processes that target this machine's CPU, as a user of a wheel built so
would: it must be loaded, not compiled, when the manifest allows it, and compiled when it
does not (``FASTBUDGET_PORTABLE=0``, another Numba version, a CPU without the level's
features). The results must equal NumPy's.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import fastbudget
from fastbudget import _portable

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CALL = r'''
import json, numpy as np
from fastbudget.kernels import calibration
w = np.array([1.0, 0.0, 2.5, 0.5])
rho = np.empty(4)
total = calibration.recency(3.0, w, rho)
print("@@" + json.dumps({"total": total, "rho": rho.tolist(),
                         "hits": sum(calibration.recency.stats.cache_hits.values()),
                         "misses": sum(calibration.recency.stats.cache_misses.values())}))
'''


def _expected():
    w, total, rho = np.array([1.0, 0.0, 2.5, 0.5]), 3.0, []
    for x in w:
        r = 2.0 * total / (2.0 * total + x) if x > 0 else 1.0
        rho.append(r)
        total = r * total + x
    return total, rho


def _host_level():
    import llvmlite.binding as ll

    have = {k for k, v in ll.get_host_cpu_features().items() if v}
    usable = [lv for lv, req in _portable.LEVELS.items() if set(req) <= have]
    return usable[0] if usable else "x86-64-v3"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A source copy of the package with ``calibration.recency`` compiled for one portable
    level (the best this CPU runs) and the manifest naming it."""
    root = tmp_path_factory.mktemp("portable")
    src = os.path.dirname(fastbudget.__file__)
    shutil.copytree(src, root / "fastbudget",
                    ignore=shutil.ignore_patterns("__pycache__", "_portable.json"))
    level = _host_level()
    code = ("from fastbudget import _portable; _portable.build(levels=(%r,), code=%r)"
            % (level, CALL))
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("NUMBA_CACHE_DIR", None)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=root,
                   capture_output=True)
    return root, level


def _run(root, **extra):
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("NUMBA_CACHE_DIR", None)   # the package's own __pycache__ folders
    env.update(extra)
    for k, v in extra.items():
        if v is None:
            env.pop(k)
    out = subprocess.run([sys.executable, "-c", CALL], env=env, check=True, cwd=root,
                         capture_output=True, text=True).stdout
    return json.loads([ln for ln in out.splitlines() if ln.startswith("@@")][-1][2:])


def _fresh(tree, tmp_path, edit=None):
    """A copy of the built tree (so that what a child compiles stays in its copy)."""
    root, _ = tree
    shutil.copytree(root / "fastbudget", tmp_path / "fastbudget")
    if edit is not None:
        path = tmp_path / "fastbudget" / "kernels" / "_portable.json"
        manifest = json.loads(path.read_text())
        edit(manifest)
        path.write_text(json.dumps(manifest))
    return tmp_path


def _has_level(level):
    import llvmlite.binding as ll

    have = {k for k, v in ll.get_host_cpu_features().items() if v}
    return set(_portable.LEVELS[level]) <= have


def test_manifest_names_the_level_and_this_numba(tree):
    import numba

    root, level = tree
    manifest = json.loads((root / "fastbudget" / "kernels" / "_portable.json").read_text())
    assert manifest["numba"] == numba.__version__
    assert [lv["name"] for lv in manifest["levels"]] == [level]
    magic = manifest["levels"][0]["magic_tuple"]
    assert magic[1] == level
    assert magic[2].split(",") == (["+" + f for f in _portable.LEVELS[level]]
                                   + _portable.TUNING.get(level, []))


def test_fresh_process_loads_portable_code_without_compiling(tree, tmp_path):
    root, level = tree
    res = _run(_fresh(tree, tmp_path), FASTBUDGET_PORTABLE=None)
    total, rho = _expected()
    assert res["total"] == total and res["rho"] == rho
    if _has_level(level):
        assert (res["hits"], res["misses"]) == (1, 0)
    else:   # a CPU without the level's features must not run its code
        assert (res["hits"], res["misses"]) == (0, 1)


def test_portable_code_loads_when_numba_caches_elsewhere(tree, tmp_path):
    """``NUMBA_CACHE_DIR`` set (or a package folder this user cannot write): Numba caches in
    another folder, and the shipped code is still read from the package's own folder."""
    root, level = tree
    res = _run(_fresh(tree, tmp_path), FASTBUDGET_PORTABLE=None,
               NUMBA_CACHE_DIR=str(tmp_path / "user-cache"))
    assert res["rho"] == _expected()[1]
    if _has_level(level):
        assert (res["hits"], res["misses"]) == (1, 0)
        assert not (tmp_path / "user-cache").exists() or not any(
            (tmp_path / "user-cache").rglob("*.nbc"))
    else:
        assert (res["hits"], res["misses"]) == (0, 1)


def test_portable_off_compiles_for_this_cpu_and_caches_it(tree, tmp_path):
    root = _fresh(tree, tmp_path)
    first = _run(root, FASTBUDGET_PORTABLE="0")   # compiles for this CPU and caches it
    assert (first["hits"], first["misses"]) == (0, 1)
    again = _run(root, FASTBUDGET_PORTABLE="0")   # this CPU's entry, without the manifest
    assert (again["hits"], again["misses"]) == (1, 0)
    assert again["rho"] == first["rho"] == _expected()[1]


@pytest.mark.parametrize("edit", [
    lambda m: m.update(numba="0.0.0"),
    lambda m: m["levels"][0]["requires"].append("no-such-cpu-feature"),
    lambda m: m["levels"][0]["magic_tuple"].__setitem__(0, "aarch64-unknown-linux-gnu"),
], ids=["other-numba", "missing-feature", "other-triple"])
def test_manifest_that_does_not_fit_compiles(tree, tmp_path, edit):
    res = _run(_fresh(tree, tmp_path, edit), FASTBUDGET_PORTABLE=None)
    assert (res["hits"], res["misses"]) == (0, 1)
    assert res["rho"] == _expected()[1]


def test_damaged_manifest_compiles(tree, tmp_path):
    root = _fresh(tree, tmp_path)
    (root / "fastbudget" / "kernels" / "_portable.json").write_text("{not json")
    res = _run(root, FASTBUDGET_PORTABLE=None)
    assert (res["hits"], res["misses"]) == (0, 1)
    assert res["total"] == _expected()[0]


def test_unknown_level_is_refused():
    with pytest.raises(ValueError, match="unknown level"):
        _portable.build(levels=("x86-64-v9",), code="pass")
