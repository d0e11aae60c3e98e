"""Cold compile: each learner's first ``fit`` in a fresh process with an empty Numba cache
(``NUMBA_CACHE_DIR`` a new temporary folder), and the same again on the cache it wrote.

Marker ``cold`` (not in the default run: several minutes). Records the child's CPU seconds
(``cpu_s``, user + system, from ``RUSAGE_CHILDREN``: wall time on a loaded machine says
little) and ``warm_ratio``, cold CPU over cached CPU; the second fit must give the same
decision values as the first.
"""
import json
import os
import resource
import subprocess
import sys

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


def _child(code, cache):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=ROOT)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(FIRST_FIT))
def test_cold_first_fit(benchmark, tmp_path, name):
    code = CHILD.format(ctor=FIRST_FIT[name])
    res = {}

    def cold():
        res["cold"] = _child(code, tmp_path / "cache")

    benchmark.pedantic(cold, rounds=1, iterations=1)
    warm_cpu, f_warm = _child(code, tmp_path / "cache")
    cold_cpu, f_cold = res["cold"]
    assert f_warm == f_cold
    benchmark.extra_info.update(cpu_s=cold_cpu, cached_cpu_s=warm_cpu,
                                warm_ratio=cold_cpu / warm_cpu)
