"""Threads of one process: prediction and learning on two threads against one.

The compiled predict and TVM's and BSGD's chunk loops release the GIL
(``fastbudget._transaction``), so Python threads that score or learn run on as many cores:
``ThreadPoolExecutor``, joblib's threading backend, Dask's local (threaded) scheduler, which
``fastbudget.distributed`` uses without a cluster, and dask-ml's ``ParallelPostFit``. Before
2026-11-26 they held it, and two threads took as long as one.

- ``test_threads_predict``: TVM, B = 100, on 2 x 10^6 rows in 16 blocks, a pool of 2 threads
  against a pool of 1; ``thread_time_ratio`` = the 2-thread wall time over the 1-thread one
  (best rounds; 0.5 is two full cores), ``dask_time_ratio`` the same for
  ``fastbudget.distributed.predict`` on Dask's threaded scheduler.
- ``test_threads_fit``: ``fastbudget.distributed.fit`` of TVM, B = 100, on 2 shards of
  2 x 10^5 board rows with Dask's threaded scheduler, 2 threads against 1 (the same model).

Wall time (``time.perf_counter``): the work runs in two threads, whose CPU times add up. The
1-thread run is timed before each round of the 2-thread one (``_bench.timed_before_rounds``
on the wall clock), so the two alternate. With fewer than 2 cores the ratios are recorded
and not asserted.
"""
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from _bench import CB_GAMMA, checkerboard, timed_before_rounds, uniform_rows
import fastbudget as fb

N_ROWS = 2 * 10**6
ROUNDS = 5
TWO_CORES = (os.cpu_count() or 1) >= 2
# at least this much faster on 2 threads (measured 1.85-2.0x on the quiet 2-core VM)
MIN_SPEEDUP = 1.5


def _timed(benchmark, one, two):
    """Rounds of ``two()`` (the benchmark's, wall time), each after a timed ``one()``;
    returns (best one, best two)."""
    ones = []
    benchmark._timer = time.perf_counter
    benchmark.pedantic(two, setup=timed_before_rounds(one, ones, clock=time.perf_counter),
                       rounds=ROUNDS, iterations=1)
    return min(ones), benchmark.stats.stats.min


@pytest.mark.quick
def test_threads_predict(benchmark):
    import dask.array as da

    from fastbudget import distributed as fd
    X, y, Xt, yt = checkerboard(30_000)
    model = fb.TVMClassifier(budget=100, gamma=CB_GAMMA).fit(X, y)
    Xs = uniform_rows(Xt, N_ROWS)
    blocks = np.array_split(Xs, 16)
    want = model.decision_function(Xs)

    def pool(n):
        with ThreadPoolExecutor(n) as ex:
            return np.concatenate(list(ex.map(model.decision_function, blocks)))

    np.testing.assert_array_equal(pool(2), want)
    one, two = _timed(benchmark, lambda: pool(1), lambda: pool(2))
    Xd = da.from_array(Xs, chunks=(N_ROWS // 16, 2))
    pred = fd.decision_function(model, Xd)

    def dask_run(n):
        return pred.compute(scheduler="threads", num_workers=n)

    np.testing.assert_allclose(dask_run(2), want, rtol=1e-12, atol=1e-12)
    d1, d2 = [], []
    for _ in range(ROUNDS):
        for n, out in ((1, d1), (2, d2)):
            t = time.perf_counter()
            dask_run(n)
            out.append(time.perf_counter() - t)
    info = {"one_thread_s": one, "thread_time_ratio": two / one,
            "dask_one_thread_s": min(d1), "dask_two_threads_s": min(d2),
            "dask_time_ratio": min(d2) / min(d1), "cores": os.cpu_count(),
            "load": os.getloadavg()[0], "accuracy": model.score(Xt, yt)}
    benchmark.extra_info.update(info)
    if TWO_CORES:
        assert one / two >= MIN_SPEEDUP, info
        assert min(d1) / min(d2) >= MIN_SPEEDUP, info


@pytest.mark.quick
def test_threads_fit(benchmark):
    import dask
    import dask.array as da

    from fastbudget import distributed as fd
    X, y, Xt, yt = checkerboard(400_000, seed=3)
    Xd = da.from_array(X, chunks=(200_000, 2))
    yd = da.from_array(y, chunks=(200_000,))

    def fit(n):
        with dask.config.set(scheduler="threads", num_workers=n):
            return fd.fit(fb.TVMClassifier(budget=100, gamma=CB_GAMMA), Xd, yd,
                          classes=[-1, 1], chunk_size=20_000)

    m1, m2 = fit(1), fit(2)
    np.testing.assert_array_equal(m1.decision_function(Xt), m2.decision_function(Xt))
    one, two = _timed(benchmark, lambda: fit(1), lambda: fit(2))
    info = {"one_thread_s": one, "thread_time_ratio": two / one, "cores": os.cpu_count(),
            "load": os.getloadavg()[0], "accuracy": m2.score(Xt, yt)}
    benchmark.extra_info.update(info)
    if TWO_CORES:
        assert one / two >= MIN_SPEEDUP, info
