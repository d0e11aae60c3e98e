"""Cold compile: each learner's first ``fit`` in a fresh process with an empty Numba cache
(``NUMBA_CACHE_DIR`` a new temporary folder), and the same again on the cache it wrote.

Marker ``cold`` (not in the default run: several minutes). Records the child's CPU seconds
(``cpu_s``, user + system, from ``RUSAGE_CHILDREN``: wall time on a loaded machine says
little) and ``warm_ratio``, cold CPU over cached CPU; the second fit must give the same
decision values as the first.

``test_portable_first_fit`` does the same from a copy of the package with portable machine
code (``python -m fastbudget._portable build``, as a wheel built with
``FASTBUDGET_PORTABLE_BUILD=1`` carries it): the first fit must compile nothing and give the
same decision values, bit for bit, as code compiled for this CPU on an empty cache;
``cold_ratio`` is that cold compile's CPU over the portable first fit's.
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import time

import pytest

from _bench import ROOT

pytestmark = pytest.mark.cold

# learner -> constructor call on 2-D data (gamma given so that nothing depends on the data)
FIRST_FIT = {
    "tvm": "fb.TVMClassifier(budget=20, gamma=1.0)",
    "idsvm": "fb.IncrementalSVC(C=10.0, gamma=1.0, capacity=300)",
    "span": "fb.SpanBudgetClassifier(budget=20, C=10.0, gamma=1.0)",
    "svl_incremental": "fb.SVIncrementalClassifier(C=10.0, gamma=1.0, capacity=300)",
    "random": "fb.RandomBudgetClassifier(budget=20, gamma=1.0, random_state=0)",
    "forgetron": "fb.ForgetronClassifier(budget=20, gamma=1.0, random_state=0)",
    "perceptron": "fb.PerceptronClassifier(budget=20, kernel='rbf', gamma=1.0)",
    "bsgd": "fb.BSGDClassifier(budget=20, gamma=1.0, random_state=0)",
    "pegasos": "fb.PegasosClassifier(random_state=0)",
    "streamsvm": "fb.StreamSVMClassifier(C=1.0)",
}

CHILD = """
import json, sys, numpy as np
import fastbudget as fb
from fastbudget.datasets import make_gauss
X, y = make_gauss(300, random_state=0)
clf = {ctor}.fit(X, y)
print(json.dumps([float(v) for v in clf.decision_function(X[:20])]))
"""


def _child(code, cache, tree=ROOT):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(tree),
               FASTBUDGET_PORTABLE="0")   # an empty cache: no portable code either
    if cache is None:   # the package's own __pycache__ folders (its portable code)
        del env["NUMBA_CACHE_DIR"]
        del env["FASTBUDGET_PORTABLE"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=str(tree)).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(FIRST_FIT))
def test_cold_first_fit(benchmark, tmp_path, name):
    code = CHILD.format(ctor=FIRST_FIT[name])
    res = {}

    def cold():
        res["cold"] = _child(code, tmp_path / "cache")

    benchmark._timer = time.perf_counter   # the work is in the child process
    benchmark.pedantic(cold, rounds=1, iterations=1)
    warm_cpu, f_warm = _child(code, tmp_path / "cache")
    cold_cpu, f_cold = res["cold"]
    assert f_warm == f_cold
    benchmark.extra_info.update(cpu_s=cold_cpu, cached_cpu_s=warm_cpu,
                                warm_ratio=cold_cpu / warm_cpu)


# after CHILD: the signatures the child compiled (missed in every cache) and its values
COUNT = """
import importlib, pkgutil
import fastbudget.kernels
from numba.core.registry import CPUDispatcher
n = 0
for m in pkgutil.iter_modules(fastbudget.kernels.__path__):
    mod = importlib.import_module("fastbudget.kernels." + m.name)
    n += sum(sum(d.stats.cache_misses.values()) for d in vars(mod).values()
             if isinstance(d, CPUDispatcher) and d.__module__ == mod.__name__)
print(json.dumps({"compiled": n,
                  "values": [float(v) for v in clf.decision_function(X[:20])]}))
"""


@pytest.fixture(scope="module")
def portable_tree(tmp_path_factory):
    """A copy of the package's sources with portable machine code built into it."""
    root = tmp_path_factory.mktemp("portable")
    shutil.copytree(os.path.join(ROOT, "fastbudget"), root / "fastbudget",
                    ignore=shutil.ignore_patterns("__pycache__", "_portable.json"))
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("NUMBA_CACHE_DIR", None)
    subprocess.run([sys.executable, "-m", "fastbudget._portable", "build"], env=env,
                   check=True, cwd=root, capture_output=True)
    return root


@pytest.mark.parametrize("name", sorted(FIRST_FIT))
def test_portable_first_fit(benchmark, tmp_path, portable_tree, name):
    shutil.copytree(portable_tree / "fastbudget", tmp_path / "tree" / "fastbudget")
    code = CHILD.format(ctor=FIRST_FIT[name]) + COUNT
    res = {}

    def first():
        res["portable"] = _child(code, None, tmp_path / "tree")

    benchmark._timer = time.perf_counter   # the work is in the child process
    benchmark.pedantic(first, rounds=1, iterations=1)
    cpu, got = res["portable"]
    assert got["compiled"] == 0
    # the same fit compiled for this CPU on an empty cache: the same bits
    cold_cpu, cold_values = _child(CHILD.format(ctor=FIRST_FIT[name]), tmp_path / "cache")
    assert got["values"] == cold_values
    benchmark.extra_info.update(cpu_s=cpu, cold_cpu_s=cold_cpu, cold_ratio=cold_cpu / cpu)
