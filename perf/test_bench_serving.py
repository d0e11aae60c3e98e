"""The NumPy serving path (``fastbudget.serving.load_predictor``) on 10^6 rows: TVM, B = 100,
on the N-Checkerboard, standardised (the suite's stream and the demo's) and raw (on [0, 4]^2
with delta = 0.37 read in its units, as a user without a scaler may set it).

Floor: the compiled scoring loop of the model's stored vectors (``_bench.score_expansion``);
``floor_ratio`` is serving's best round (one BLAS thread) over it, ``compiled_ratio`` serving
over the model's own compiled ``decision_function`` in the same run. Issue #24 asks serving within 2x of the
compiled predict. On the raw board most rows lie far from the twins' centre, where serving
takes the squared distances from differences (``serving._Expansion._sq_distances``): a loop
over rows there made serving 6-8 times slower than the compiled path until 2026-11-26.

``test_serving_in_a_dask_worker_environment`` repeats the standardised case in a fresh process
given the environment a Dask nanny gives its workers (``distributed.nanny.pre-spawn-environ``:
one BLAS thread and ``MALLOC_TRIM_THRESHOLD_``, which pins glibc's mmap threshold at 128 KiB).
There, until 2026-11-26, serving's per-block scratch arrays were mapped and unmapped block
after block and serving ran 2.6 times slower than in a plain process.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from _bench import (CB_GAMMA, CB_SD, best_seconds, checkerboard, floor_seconds, record,
                    uniform_rows)
import fastbudget as fb
from fastbudget.serving import load_predictor

N_ROWS = 10**6


@pytest.mark.parametrize("scale", ["standardised", "raw"])
def test_serving_decision_function(benchmark, tmp_path, scale):
    X, y, Xt, yt = checkerboard(30_000)
    gamma = CB_GAMMA
    if scale == "raw":
        # delta = 0.37 read in the raw units (gamma = 1 / (2 delta^2) = 3.65): a narrower
        # kernel than the suite's, and rows up to 2.8 from the centre
        X, Xt = X * CB_SD + 2, Xt * CB_SD + 2
        gamma = 1.0 / (2 * 0.37 ** 2)
    model = fb.TVMClassifier(budget=100, gamma=gamma).fit(X, y)
    path = tmp_path / "m.npz"
    model.save(path)
    pred = load_predictor(path)
    Xs = uniform_rows(Xt, N_ROWS)
    # one BLAS thread, as in a Dask worker (the suite's clock is CPU time, which a second
    # BLAS thread spinning on these small products would count twice)
    with threadpool_limits(limits=1, user_api="blas"):
        f = benchmark.pedantic(pred.decision_function, args=(Xs,), rounds=3, iterations=1)
    want = model.decision_function(Xs)
    scale_f = max(1.0, float(np.max(np.abs(want))))
    assert np.max(np.abs(f - want)) <= 1e-12 * scale_f
    compiled = best_seconds(lambda: model.decision_function(Xs), 3)
    fl = floor_seconds(model, Xs)
    acc = float(np.mean(pred.predict(Xt) == yt))
    assert acc == model.score(Xt, yt)
    ratio = benchmark.stats.stats.min / compiled
    record(benchmark, fl, compiled_ratio=ratio, accuracy=acc)
    assert ratio <= 2.0, f"serving / compiled = {ratio:.2f} (goal <= 2)"


def test_serving_in_a_dask_worker_environment(benchmark, tmp_path):
    dask_config = pytest.importorskip("dask.config")
    pytest.importorskip("distributed")
    environ = dict(dask_config.get("distributed.nanny.pre-spawn-environ", {}))
    assert "MALLOC_TRIM_THRESHOLD_" in environ, environ
    X, y, Xt, yt = checkerboard(30_000)
    path = str(tmp_path / "m.npz")
    fb.TVMClassifier(budget=100, gamma=CB_GAMMA).fit(X, y).save(path)
    env = dict(os.environ, **{k: str(v) for k, v in environ.items()})
    # a script run by path has its own folder on sys.path, so it imports _bench as is
    job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serving_job.py")

    def run():
        out = subprocess.run([sys.executable, job, path, str(N_ROWS)], env=env,
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    # the round's time is the job's wall time: its work is in the child process, whose CPU
    # this process does not see (with the suite's CPU clock the round timed this
    # process's wait, 0.7-1.0 ms, and the median-time check flagged its noise)
    benchmark._timer = time.perf_counter
    info = benchmark.pedantic(run, rounds=1, iterations=1)
    assert info["same"]
    ratio = info["serving_s"] / info["compiled_s"]
    benchmark.extra_info.update(info)
    benchmark.extra_info["floor_ratio"] = info["serving_s"] / info["floor_s"]
    benchmark.extra_info["compiled_ratio"] = ratio
    benchmark.extra_info["environ"] = environ
    assert ratio <= 2.0, f"serving / compiled in a Dask worker's environment = {ratio:.2f}"
