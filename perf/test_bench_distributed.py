"""Shard and merge on a Dask LocalCluster: 2 worker processes against 1 (issue 26).

Each benchmark starts a ``distributed.LocalCluster`` of 1 worker and then one of 2 workers
(processes, one thread each, as ``fastbudget.distributed.local_cluster`` starts them) and
measures, on the same N-Checkerboard stream generated on the
workers:

- training (``fastbudget.distributed.fit``, TVM B = 100, 2 shards): ``train_speedup`` =
  the median wall seconds of ``TRAIN_RUNS`` fits with 1 worker / the median with 2
  workers, and ``accuracy_gap_points`` = the merged model's accuracy minus the single
  stream's (the same two blocks, one after the other, in this process), on a clean
  5,000-point test set;
- scoring (``fastbudget.distributed.predict`` over 20 blocks, the board generated on the
  workers and compared with its labels): ``score_speedup`` = the median of ``SCORE_RUNS``
  runs with 1 worker / the median with 2, each after one untimed run of the same scoring.

Times are wall seconds (``time.perf_counter``, also the timer of the benchmark's own round):
the work runs in the worker processes, whose CPU time this process does not see. The load
average is recorded before each measurement: on a machine shared with other jobs the
speed-ups are depressed, since the second worker competes with them for a core.

The goals of issue 26 (10^7 rows, ``-m large``): training >= 1.7x, scoring >= 1.8x, the
merged model within 0.3 points of the single stream. The ``quick`` variant (2 x 10^5 rows
trained, 10^6 scored) checks that the figures are measured and recorded; its speed-ups on
this size are mostly the cluster's fixed costs.
"""
import math
import os
import time

import numpy as np
import pytest

from _bench import CB_GAMMA, CB_SD
from fastbudget import TVMClassifier
from fastbudget import distributed as fd
from fastbudget.datasets import make_checkerboard

pytest.importorskip("distributed")


# scoring is timed this many times per cluster and its median kept: one run of 2-5 s moves
# by 10-20 % with the VM's state (docs/results/distributed.md), which a single run turned
# into a ratio anywhere between 1.6 and 2.0 on the same code
SCORE_RUNS = 5
# and training as many times (the fit is deterministic: every run makes the same model)
TRAIN_RUNS = 3


def _block(n, seed, noise):
    X, y = make_checkerboard(n, noise=noise, random_state=seed)
    return (X - 2) / CB_SD, y


def _dask_board(n, n_blocks, seed, noise=0.15):
    """The board as dask arrays whose blocks are generated on the workers that use them."""
    import dask
    import dask.array as da
    sizes = np.diff(np.linspace(0, n, n_blocks + 1).astype(int))
    parts = [dask.delayed(_block)(int(m), seed + k, noise) for k, m in enumerate(sizes)]
    X = da.concatenate([da.from_delayed(p[0], (int(m), 2), float)
                        for p, m in zip(parts, sizes)])
    y = da.concatenate([da.from_delayed(p[1], (int(m),), np.int64)
                        for p, m in zip(parts, sizes)])
    return X, y


def _warm_worker():
    """Load TVM's compiled code and the serving module in this worker."""
    import fastbudget.serving  # noqa: F401
    X, y = _block(2000, 3, 0.15)
    TVMClassifier(budget=20, gamma=CB_GAMMA).partial_fit(X, y, classes=[-1, 1]).predict(X)
    return True


def _cluster(n_workers):
    """The local cluster ``fastbudget train/predict --workers N`` start: one thread per
    worker process, no dashboard, Dask's dashboard monitors slowed down
    (``fd.local_cluster``; at Dask's defaults the scoring's 2-worker median was about
    0.1-0.15 s longer, docs/results/distributed.md)."""
    from distributed import Client
    cluster = fd.local_cluster(n_workers, silence_logs=50)
    return cluster, Client(cluster)


def _fit(X, y, client, chunk_size):
    return fd.fit(TVMClassifier(budget=100, gamma=CB_GAMMA), X, y, client=client,
                  classes=[-1, 1], chunk_size=chunk_size)


def _measure(benchmark, n_train, n_score, chunk_size):
    """Train and score with 1, then 2 workers; the 2-worker trainings are the benchmark's
    rounds. Returns the figures (also stored in ``extra_info``)."""
    Xt, yt = _block(5000, 10**6, 0.0)
    Xs_train = TVMClassifier(budget=100, gamma=CB_GAMMA).fit(*_block(50_000, 7, 0.15))
    info = {"n_train": n_train, "n_score": n_score, "cores": os.cpu_count()}
    models = {}
    for workers in (1, 2):
        cluster, client = _cluster(workers)
        try:
            X, y = _dask_board(n_train, 2, 0)
            # warm every worker (load the compiled code, import the serving module) outside
            # the timing; a fit on the first block alone warmed one worker, and the other
            # loaded its compiled code inside the timed 2-worker round
            client.run(_warm_worker)
            fd.fit(TVMClassifier(budget=20, gamma=CB_GAMMA), X[:20_000], y[:20_000],
                   client=client, classes=[-1, 1], chunk_size=5000)
            Xs, ys = _dask_board(n_score, 20, 100)
            # one untimed run of the whole scoring: the first run in a new worker process
            # grows its heap and pages (its worker CPU 2.4 s against 1.9 s in the next runs
            # with 2 workers on 10^7 rows, 2026-11-26), a cost a nightly job pays once
            (fd.predict(Xs_train, Xs, client=client) == ys).mean().compute()
            info[f"load_train_{workers}w"] = os.getloadavg()[0]
            if workers == 2:
                # the benchmark's round: wall time (the work is in the worker processes)
                benchmark._timer = time.perf_counter
                models[2] = benchmark.pedantic(_fit, args=(X, y, client, chunk_size),
                                               rounds=TRAIN_RUNS, iterations=1)
                runs = list(benchmark.stats.stats.data)
            else:
                runs = []
                for _ in range(TRAIN_RUNS):
                    t0 = time.perf_counter()
                    models[1] = _fit(X, y, client, chunk_size)
                    runs.append(time.perf_counter() - t0)
            info[f"train_runs_s_{workers}w"] = runs
            info[f"train_s_{workers}w"] = float(np.median(runs))
            info[f"load_score_{workers}w"] = os.getloadavg()[0]
            runs, accs = [], set()
            for _ in range(SCORE_RUNS):
                t0 = time.perf_counter()
                accs.add(float((fd.predict(Xs_train, Xs, client=client) == ys).mean().compute()))
                runs.append(time.perf_counter() - t0)
            assert len(accs) == 1, accs         # every run scores the same rows alike
            info[f"score_runs_s_{workers}w"] = runs
            info[f"score_s_{workers}w"] = float(np.median(runs))
            info[f"score_label_agreement_{workers}w"] = accs.pop()
        finally:
            client.close()
            cluster.close()
    # the single stream: the same two blocks, one after the other, in this process
    single = TVMClassifier(budget=100, gamma=CB_GAMMA)
    for k, m in enumerate(np.diff(np.linspace(0, n_train, 3).astype(int))):
        Xb, yb = _block(int(m), k, 0.15)
        for lo in range(0, Xb.shape[0], chunk_size):
            single.partial_fit(Xb[lo:lo + chunk_size], yb[lo:lo + chunk_size],
                               classes=[-1, 1])
    info["accuracy"] = models[2].score(Xt, yt)
    info["accuracy_1w"] = models[1].score(Xt, yt)
    info["accuracy_single"] = single.score(Xt, yt)
    info["accuracy_gap_points"] = 100 * (info["accuracy"] - info["accuracy_single"])
    info["train_speedup"] = info["train_s_1w"] / info["train_s_2w"]
    info["score_speedup"] = info["score_s_1w"] / info["score_s_2w"]
    info["n_seen"] = int(models[2].n_seen_)
    for k, v in info.items():
        benchmark.extra_info[k] = v
    return info, models


@pytest.mark.quick
def test_distributed_ratios_recorded(benchmark):
    """2 x 10^5 rows trained, 10^6 scored: the figures are measured and recorded, the
    cluster's model is the in-process simulation's and learned every row once."""
    info, models = _measure(benchmark, 200_000, 1_000_000, 10_000)
    for key in ("train_speedup", "score_speedup", "accuracy_gap_points", "accuracy",
                "accuracy_single", "load_train_2w"):
        assert math.isfinite(benchmark.extra_info[key]), key
    assert info["train_speedup"] > 0 and info["score_speedup"] > 0
    assert info["n_seen"] == 200_000
    # 1 and 2 workers compute the same model (the shards do not depend on the workers)
    Xt, _ = _block(2000, 5, 0.0)
    np.testing.assert_allclose(models[1].decision_function(Xt),
                               models[2].decision_function(Xt), rtol=1e-12, atol=1e-12)
    assert info["score_label_agreement_1w"] == info["score_label_agreement_2w"]


@pytest.mark.large
def test_distributed_goals_10m(benchmark):
    """10^7 N-Checkerboard rows (issue 26): 2 workers >= 1.7x one in training, >= 1.8x in
    scoring, the merged model within 0.3 points of the single-stream TVM."""
    info, _ = _measure(benchmark, 10_000_000, 10_000_000, 100_000)
    assert info["n_seen"] == 10_000_000
    assert info["accuracy_gap_points"] >= -0.3, info
    assert info["train_speedup"] >= 1.7, info
    assert info["score_speedup"] >= 1.8, info
