"""fastbudget.distributed on a real Dask LocalCluster (2 worker processes, 1 thread each)."""
import copy
import os
import pickle
import signal
import threading
import time

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from distributed import Client, LocalCluster
from sklearn.svm import SVC

from fastbudget import (BSGDClassifier, ModelFormatError, OneVsRestClassifier, TVMClassifier,
                        distributed as fd, load)
from fastbudget.calibration import CalibrationMap
from fastbudget.datasets import make_checkerboard

GAMMA = 1 / (2 * 0.37)


def _board(n, seed, noise=0.15):
    X, y = make_checkerboard(n, noise=noise, random_state=seed)
    return (X - 2) / (4 / 12 ** 0.5), y


@pytest.fixture(scope="module")
def client():
    # compile in this process first: the workers then load the machine code from Numba's
    # cache on disk instead of compiling it twice at once
    X, y = _board(3000, 9)
    fd.simulate(TVMClassifier(budget=20, gamma=GAMMA), X, y, 2, chunk_size=1000)
    BSGDClassifier(budget=20).fit(X, y).predict(X)
    # the cluster fastbudget starts (``train``/``predict --workers``); the fault test below
    # runs on a LocalCluster at Dask's defaults
    cluster = fd.local_cluster(2, silence_logs=40)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def data():
    X, y = _board(24_000, 0)
    Xt, yt = _board(4000, 1, noise=0.0)
    return X, y, Xt, yt


def test_one_shard_is_the_single_stream_model(data):
    X, y, Xt, _ = data
    single = TVMClassifier(budget=40, gamma=GAMMA)
    for lo in range(0, X.shape[0], 2000):
        single.partial_fit(X[lo:lo + 2000], y[lo:lo + 2000], classes=[-1, 1])
    sim = fd.simulate(TVMClassifier(budget=40, gamma=GAMMA), X, y, 1, chunk_size=2000)
    np.testing.assert_allclose(sim.decision_function(Xt), single.decision_function(Xt),
                               rtol=1e-9, atol=1e-9)
    assert sim.n_seen_ == single.n_seen_ == X.shape[0]
    # and the calibration statistics: the shard's own, as the stream's
    np.testing.assert_array_equal(sim._calibration_stats, single._calibration_stats)


@pytest.mark.parametrize("tail", [0.0, 0.2, fd.TAIL])
def test_merged_model_is_the_exact_weighted_svm_on_its_twins(data, tail):
    X, y, Xt, _ = data
    m = fd.simulate(TVMClassifier(budget=30, gamma=GAMMA), X, y, 4, chunk_size=2000,
                    tail=tail)
    assert m.n_twins_ <= 30
    assert m.kkt_residual() < 1e-8
    # reference: SVC on the twin halves with their weights at C_eff
    Q, W = m.twin_vectors_, m.twin_weights_
    Xr = np.vstack([Q, Q])
    yr = np.concatenate([np.ones(len(Q)), -np.ones(len(Q))])
    wr = np.concatenate([W[:, 0], W[:, 1]])
    keep = wr > 0
    svc = SVC(C=m.C_eff_, gamma=GAMMA, tol=1e-10).fit(Xr[keep], yr[keep], sample_weight=wr[keep])
    np.testing.assert_allclose(m.decision_function(Xt), svc.decision_function(Xt),
                               atol=2e-4 * max(1.0, np.abs(svc.decision_function(Xt)).max()))
    assert m.n_seen_ == X.shape[0]
    if tail:
        return
    # the merged weights are the shards' weights: nothing lost in the tree
    per_shard = [TVMClassifier(budget=30, gamma=GAMMA) for _ in range(4)]
    for est, part in zip(per_shard, np.array_split(np.arange(X.shape[0]), 4)):
        for lo in range(0, part.size, 2000):
            rows = part[lo:lo + 2000]
            est.partial_fit(X[rows], y[rows], classes=[-1, 1])
    total = sum(e.twin_weights_.sum() for e in per_shard)
    if m.n_removed_ == sum(e.n_removed_ for e in per_shard):
        assert W.sum() == pytest.approx(total, rel=1e-12)
    else:                     # twins beyond m2 left in the merges, with their weight
        assert W.sum() < total


def test_merge_twins_keeps_weights_and_budget():
    rng = np.random.default_rng(0)
    a = {"Q": rng.normal(size=(10, 3)), "s_pos": rng.integers(0, 4, 10).astype(float),
         "s_neg": rng.integers(1, 4, 10).astype(float), "fq": rng.normal(size=10),
         "counters": np.arange(5)}
    b = {k: (v.copy() + (1.0 if k == "Q" else 0)) for k, v in a.items()}
    from fastbudget.engine import kernel_params
    code, kpar = kernel_params("rbf", 0.5, 3, 1.0)
    m = fd.merge_twins(a, b, budget=7, kernel_code=code, kpar=kpar)
    assert m["Q"].shape == (7, 3)
    assert m["s_pos"].sum() == a["s_pos"].sum() + b["s_pos"].sum()
    assert m["s_neg"].sum() == a["s_neg"].sum() + b["s_neg"].sum()
    assert m["counters"][0] == 2 * a["counters"][0]
    assert m["counters"][2] == 2 * a["counters"][2] + 13      # 20 twins -> 7: 13 merges
    # every merged pivot is a weighted mean of pivots, so inside their bounding box
    allq = np.vstack([a["Q"], b["Q"]])
    assert (m["Q"] >= allq.min(0) - 1e-12).all() and (m["Q"] <= allq.max(0) + 1e-12).all()


def test_pair_twins_is_the_assignment_of_least_total_cost():
    import itertools
    rng = np.random.default_rng(3)
    from fastbudget.engine import kernel_params
    code, kpar = kernel_params("rbf", 0.5, 3, 1.0)
    for na, nb in ((5, 5), (4, 6), (6, 3)):
        a = {"Q": rng.normal(size=(na, 2)), "s_pos": rng.integers(0, 5, na).astype(float),
             "s_neg": rng.integers(1, 5, na).astype(float), "fq": rng.normal(size=na),
             "counters": np.arange(5)}
        b = {"Q": rng.normal(size=(nb, 2)), "s_pos": rng.integers(0, 5, nb).astype(float),
             "s_neg": rng.integers(1, 5, nb).astype(float), "fq": rng.normal(size=nb),
             "counters": np.arange(5)}
        m = fd.pair_twins(a, b, kernel_code=code, kpar=kpar)
        assert m["Q"].shape == (max(na, nb), 2)
        assert m["s_pos"].sum() == pytest.approx(a["s_pos"].sum() + b["s_pos"].sum())
        assert m["s_neg"].sum() == pytest.approx(a["s_neg"].sum() + b["s_neg"].sum())
        assert m["counters"][2] == 2 * 2 + min(na, nb)
        # brute force over every pairing of the smaller side into the larger
        sa, sb = a["s_pos"] + a["s_neg"], b["s_pos"] + b["s_neg"]
        d2 = ((a["Q"][:, None] - b["Q"][None]) ** 2).sum(-1)
        cost = sa[:, None] * sb[None] * d2 / (sa[:, None] + sb[None])
        if na <= nb:
            best = min(sum(cost[i, j] for i, j in enumerate(p))
                       for p in itertools.permutations(range(nb), na))
        else:
            best = min(sum(cost[i, j] for j, i in enumerate(p))
                       for p in itertools.permutations(range(na), nb))
        # every merged twin is the weighted mean of one pair: recover the pairs and their
        # total cost
        pairs = []
        for qi, si in zip(m["Q"], m["s_pos"] + m["s_neg"]):
            for i in range(na):
                for j in range(nb):
                    if np.isclose(si, sa[i] + sb[j]) and np.allclose(
                            qi, (sa[i] * a["Q"][i] + sb[j] * b["Q"][j]) / (sa[i] + sb[j])):
                        pairs.append((i, j))
        assert len(pairs) >= min(na, nb)
        got = sum(cost[i, j] for i, j in pairs[:min(na, nb)])
        assert got == pytest.approx(best, rel=1e-9)


def test_merge_pair_keeps_the_fold_that_agrees_most_with_the_union(data):
    X, y, Xt, yt = data
    params = TVMClassifier(budget=30, gamma=GAMMA).get_params()
    classes = np.array([-1, 1])
    fracs = (0.5, 0.5)
    heads = [fd._fit_shard(TVMClassifier, params, X[p], y[p], classes, 2000, None, 0, fracs, 2)
             for p in np.array_split(np.arange(X.shape[0]), 2)]
    for h in heads:                    # the probe rows: the first rows of the last chunk
        assert h["probe"].shape == (min(fd.PROBE_ROWS, 2000), 2)
    start = fd._start_model(TVMClassifier, params, None, classes, GAMMA,
                            fd._merge_pair(*heads, TVMClassifier, params, classes, GAMMA))
    parts = [fd._fit_shard(TVMClassifier, params, X[p], y[p], classes, 2000, start, 1, fracs,
                           2) for p in np.array_split(np.arange(X.shape[0]), 2)]
    m = fd._merge_pair(*parts, TVMClassifier, params, classes, GAMMA)
    again = fd._merge_pair(*parts, TVMClassifier, params, classes, GAMMA)
    for k in ("Q", "s_pos", "s_neg"):
        np.testing.assert_array_equal(m[k], again[k])              # deterministic
    # the two folds of the union, and the union's exact SVM, rebuilt here
    probe = np.concatenate([p["probe"] for p in parts])
    np.testing.assert_array_equal(m["probe"], probe)
    union = {k: np.concatenate([parts[0][k], parts[1][k]]) for k in ("Q", "s_pos", "s_neg")}
    union.update(kind="tvm", counters=np.zeros(5, dtype=np.int64))
    u = fd._start_model(TVMClassifier, dict(params, budget=union["Q"].shape[0]), None,
                        classes, GAMMA, union)
    n0 = parts[0]["Q"].shape[0]
    fq = u.twins_.fq[:union["Q"].shape[0]]
    a = dict(parts[0], fq=fq[:n0].copy())
    b = dict(parts[1], fq=fq[n0:].copy())
    code, kpar = fd._kernel_of(params, GAMMA)
    folds = [fd.merge_twins(a, b, budget=30, kernel_code=code, kpar=kpar, m2=2.0),
             fd.pair_twins(a, b, kernel_code=code, kpar=kpar)]
    target = u.decision_function(probe) >= 0
    agree = [np.count_nonzero((fd._start_model(TVMClassifier, params, None, classes, GAMMA, f)
                               .decision_function(probe) >= 0) == target) for f in folds]
    k = int(np.argmax(agree))
    np.testing.assert_array_equal(m["Q"], folds[k]["Q"])
    np.testing.assert_array_equal(m["s_pos"], folds[k]["s_pos"])
    print("agreement with the union on the probe rows (TVM's rule, pairing):", agree)


@pytest.mark.parametrize("tail,rounds", [(0.1, 1), (0.2, 1), (0.25, 1), (0.5, 1), (0.5, 3),
                                         (0.3, 2), (0.6, 4)])
def test_the_stages_learn_every_chunk_once(tail, rounds):
    fracs = fd._fractions(tail, rounds, 2)
    assert len(fracs) == rounds + 1 and sum(fracs) == pytest.approx(1.0, abs=1e-15)
    assert fracs[0] == pytest.approx(1 - tail)
    if rounds > 1:                   # the held-back chunks halved, the last two rounds equal
        assert fracs[-1] == fracs[-2] == tail / 2 ** (rounds - 1)
        assert fracs[1] == tail / 2
    for n_chunks in (1, 3, 4, 10, 37, 400):
        stages = [fd._stage_chunks(n_chunks, fracs, s) for s in range(len(fracs))]
        assert sorted(sum(stages, [])) == list(range(n_chunks))
        # every stage's share of the chunks, spread evenly: within a chunk of it in every
        # prefix of the shard (a reader need not know the shard's length)
        for s, f in enumerate(fracs):
            assert abs(len(stages[s]) - f * n_chunks) <= 1, (s, stages)
            for m in range(1, n_chunks + 1):
                assert abs(sum(1 for i in stages[s] if i < m) - f * m) <= 1.0 + 1e-9
        assert 0 in stages[0]                              # a shard of one chunk: stage 0
    assert fd._fractions(tail, rounds, 1) == (1.0,)        # one shard: one stage
    assert fd._fractions(0.0, rounds, 4) == (1.0,)


def test_the_stage_fractions_and_chunks_of_the_defaults():
    assert fd._fractions(0.5, 3, 2) == (0.5, 0.25, 0.125, 0.125)
    assert fd._fractions(0.2, 1, 2) == (0.8, 0.2)
    # the one-round split of 0.2 and 0.5 holds back the same chunks as before the rounds
    assert fd._stage_chunks(10, (0.8, 0.2), 1) == [2, 7]
    assert fd._stage_chunks(6, (0.5, 0.5), 1) == [1, 3, 5]
    assert [fd._stage_chunks(16, (0.5, 0.25, 0.125, 0.125), s) for s in range(4)] == [
        [0, 2, 5, 7, 8, 10, 13, 15], [1, 6, 9, 14], [3, 11], [4, 12]]


def test_a_shard_from_the_merged_model_keeps_its_share_of_the_weight(data):
    X, y, _, _ = data
    params = TVMClassifier(budget=30, gamma=GAMMA).get_params()
    classes = np.array([-1, 1])
    start = fd._start_model(TVMClassifier, params, None, classes, GAMMA,
                            fd._fit_shard(TVMClassifier, params, X[:8000], y[:8000], classes,
                                          2000, None))
    m0 = start.twin_weights_.sum()
    for k in (1, 3):
        r = fd._fit_shard(TVMClassifier, params, X[8000:12000], y[8000:12000], classes, 2000,
                          start, 0, (1.0,), k)
        est = copy.deepcopy(start)
        est.partial_fit(X[8000:12000], y[8000:12000])
        total = est.twin_weights_.sum()
        w = r["s_pos"].sum() + r["s_neg"].sum()
        # 1/k of the start's weight plus what the shard added, twins in proportion
        assert w == pytest.approx(m0 / k + (total - m0), rel=1e-12)
        np.testing.assert_allclose(r["s_pos"] / w, est.twin_weights_[:, 0] / total,
                                   rtol=1e-12)
        assert r["counters"][0] == 4000          # the shard's own examples only


def test_the_tail_stage_closes_most_of_the_gap_of_one_merge():
    # 10^5 board, B = 100, 2 shards: one merge costs 1-2 points against the single stream;
    # the held-back fifth, learned from the merged model and merged again, brings it back
    # (docs/results/distributed.md measures it at 10^6 and 10^7)
    X, y = _board(100_000, 3)
    Xt, yt = _board(5000, 4, noise=0.0)
    single = fd.simulate(TVMClassifier(budget=100, gamma=GAMMA), X, y, 1)
    once = fd.simulate(TVMClassifier(budget=100, gamma=GAMMA), X, y, 2, tail=0.0)
    twice = fd.simulate(TVMClassifier(budget=100, gamma=GAMMA), X, y, 2)
    a1, a0, a2 = (m.score(Xt, yt) for m in (single, once, twice))
    print("single", a1, "one merge", a0, "with the tail stage", a2)
    assert a2 > a0
    assert a2 >= a1 - 0.003
    assert twice.n_seen_ == X.shape[0] and twice.kkt_residual() < 1e-8


def test_fit_on_the_cluster_equals_the_in_process_simulation(client, data):
    X, y, Xt, yt = data
    Xd = da.from_array(X, chunks=(6000, 2))
    yd = da.from_array(y, chunks=6000)
    est = TVMClassifier(budget=40, gamma="scale")
    out = fd.fit(est, Xd, yd, client=client, chunk_size=2000)
    assert out is est
    assert est.gamma == "scale"                   # the parameter is kept; gamma_ is fitted
    sim = fd.simulate(TVMClassifier(budget=40, gamma="scale"), X, y, 4, chunk_size=2000)
    assert est.gamma_ == sim.gamma_
    np.testing.assert_allclose(est.decision_function(Xt), sim.decision_function(Xt),
                               rtol=1e-12, atol=1e-12)
    assert est.n_seen_ == X.shape[0]
    np.testing.assert_allclose(est._calibration_stats, sim._calibration_stats, rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(est.predict_proba(Xt), sim.predict_proba(Xt), rtol=1e-12,
                               atol=1e-12)


def _late(block, delay):
    time.sleep(delay)
    return block


def test_the_merged_model_does_not_depend_on_the_order_shards_finish(client, data):
    # the tree pairs the shards by their position, not by when they finish: shard 0, then
    # shard 1, is made to finish last (its block arrives late) in every one of the stages
    import dask
    from distributed import get_task_stream
    X, y, Xt, _ = data
    parts = np.array_split(np.arange(X.shape[0]), 2)
    yd = da.from_array(y, chunks=(tuple(len(p) for p in parts),))
    models = []
    workers = sorted(client.scheduler_info()["workers"])
    for slow in (0, 1):
        blocks = []
        for i, p in enumerate(parts):
            # block i is made on worker i, so the other shard need not wait for a thread
            with dask.annotate(workers=[workers[i]], allow_other_workers=False):
                blocks.append(da.from_delayed(
                    dask.delayed(_late, pure=False)(X[p], 2.0 if i == slow else 0.0),
                    (len(p), 2), float))
        Xd = da.concatenate(blocks)
        with get_task_stream(client) as ts:
            models.append(fd.fit(TVMClassifier(budget=40, gamma=GAMMA), Xd, yd, client=client,
                                 classes=[-1, 1], chunk_size=2000))
        def compute(name):
            return [(c["start"], c["stop"]) for t in ts.data if name in str(t["key"])
                    for c in t["startstops"] if c["action"] == "compute"]
        stops = [stop for _, stop in compute("_fit_shard")]
        # (Dask renames the task that makes the block: 'from-value-late-...')
        waits = [w for w in compute("late") if w[1] - w[0] > 1.5]
        n_stages = len(fd._fractions(fd.TAIL, fd.ROUNDS, 2))
        assert len(stops) == 2 * n_stages
        # the other shard was learned while the late block was being made (in 2 or 3 of
        # the 4 stages in the runs seen: in the first stage the late block may be in
        # memory already, read for the first rows, and Dask may start making it only
        # after the other shard is done): shard 1 - slow finished first in this fit,
        # shard slow in the other
        assert sum(any(lo < t < hi for t in stops) for lo, hi in waits) >= 1, (stops, waits)
    np.testing.assert_array_equal(models[0].twin_vectors_, models[1].twin_vectors_)
    np.testing.assert_array_equal(models[0].twin_weights_, models[1].twin_weights_)
    np.testing.assert_array_equal(models[0].decision_function(Xt),
                                  models[1].decision_function(Xt))


@pytest.mark.parametrize("tail", [0.0, 0.5])
def test_the_merged_model_is_as_accurate_as_its_weakest_shard(data, tail):
    # one merge and two stages with half held back; the default tail=0.2 fell 0.45 points
    # below the weaker of 2 shards here (2,000 examples held back per shard: too few to
    # correct the merged model; docs/results/distributed.md)
    X, y, Xt, yt = data
    params = TVMClassifier(budget=60, gamma=GAMMA).get_params()
    classes = np.array([-1, 1])
    for k in (2, 4):
        parts = np.array_split(np.arange(X.shape[0]), k)
        shards = [fd._fit_shard(TVMClassifier, params, X[p], y[p], classes, 2000, None)
                  for p in parts]
        scores = [fd._start_model(TVMClassifier, params, None, classes, GAMMA, t).score(Xt, yt)
                  for t in shards]
        m = fd.simulate(TVMClassifier(**params), X, y, k, chunk_size=2000, tail=tail)
        assert m.score(Xt, yt) >= min(scores), (k, scores, m.score(Xt, yt))


def test_fit_on_a_dask_dataframe_keeps_feature_names(client, data):
    X, y, Xt, yt = data
    df = pd.DataFrame(X, columns=["a", "b"])
    ddf = dd.from_pandas(df, npartitions=3)
    ys = dd.from_pandas(pd.Series(y, name="label"), npartitions=3)
    est = fd.fit(TVMClassifier(budget=30, gamma=GAMMA), ddf, ys, client=client,
                 chunk_size=2000)
    assert list(est.feature_names_in_) == ["a", "b"]
    sim = fd.simulate(TVMClassifier(budget=30, gamma=GAMMA), X, y, 3, chunk_size=2000)
    np.testing.assert_allclose(est.decision_function(pd.DataFrame(Xt, columns=["a", "b"])),
                               sim.decision_function(Xt), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="feature names"):
        est.predict(pd.DataFrame(Xt, columns=["b", "a"]))


def _logged_block(path, X, y):
    """A block of X and y as one array (labels in the last column), and a line in ``path``
    for every time it is made."""
    with open(path, "a") as f:
        f.write("made\n")
    return np.column_stack([X, y])


@pytest.mark.parametrize("n_blocks", [1, 3])
def test_a_block_shared_by_x_and_y_is_made_once_per_stage(client, data, tmp_path, n_blocks):
    # X and y sliced from one source per block (as from one file): each stage must make the
    # block once for both, not once for X and once for y
    X, y, Xt, _ = data
    log = tmp_path / "made.log"
    parts = np.array_split(np.arange(X.shape[0]), n_blocks)
    blocks = [da.from_delayed(dask.delayed(_logged_block)(str(log), X[i], y[i]),
                              (len(i), 3), float) for i in parts]
    XY = da.concatenate(blocks)
    est = fd.fit(TVMClassifier(budget=30, gamma=GAMMA), XY[:, :2], XY[:, 2].astype(int),
                 client=client, classes=[-1, 1], chunk_size=2000)
    n_stages = len(fd._fractions(fd.TAIL, fd.ROUNDS, n_blocks))
    # every stage makes every block once; the first chunk (gamma, names) makes block 0 once
    assert log.read_text().count("made") == n_blocks * n_stages + 1
    sim = fd.simulate(TVMClassifier(budget=30, gamma=GAMMA), X, y, n_blocks,
                      chunk_size=2000)
    np.testing.assert_allclose(est.decision_function(Xt), sim.decision_function(Xt),
                               rtol=1e-12, atol=1e-12)


def test_predict_blocks_on_the_cluster(client, data):
    X, y, Xt, _ = data
    est = TVMClassifier(budget=40, gamma=GAMMA).fit(X, y)
    Xd = da.from_array(Xt, chunks=(1000, 2))
    got = fd.predict(est, Xd, client=client).compute()
    np.testing.assert_array_equal(got, est.predict(Xt))
    f = fd.decision_function(est, Xd, client=client).compute()
    np.testing.assert_allclose(f, est.decision_function(Xt), rtol=1e-12, atol=1e-12)
    # text labels and a DataFrame
    yl = np.where(y > 0, "pos", "neg")
    est2 = TVMClassifier(budget=20, gamma=GAMMA).fit(X[:5000], yl[:5000])
    ddf = dd.from_pandas(pd.DataFrame(Xt), npartitions=4)
    got2 = fd.predict(est2, ddf, client=client).compute()
    np.testing.assert_array_equal(got2.to_numpy(), est2.predict(Xt))
    # probabilities: the workers fit the calibration map with NumPy
    P = fd.predict_proba(est, Xd, client=client)
    assert P.shape == (len(Xt), 2) and P.chunks[1] == (2,)
    np.testing.assert_allclose(P.compute(), est.predict_proba(Xt), rtol=0, atol=1e-12)
    P2 = fd.predict_proba(est2, ddf, client=client).compute()
    assert list(P2.columns) == ["neg", "pos"] and P2.index.equals(ddf.index.compute())
    np.testing.assert_allclose(P2.to_numpy(), est2.predict_proba(Xt), rtol=0, atol=1e-12)
    # one-vs-rest over three classes
    y3 = np.digitize(X[:6000, 0], [-0.5, 0.5])
    est3 = OneVsRestClassifier(TVMClassifier(budget=20, gamma=GAMMA)).fit(X[:6000], y3)
    np.testing.assert_allclose(fd.predict_proba(est3, Xd, client=client).compute(),
                               est3.predict_proba(Xt), rtol=0, atol=1e-12)


def test_the_model_travels_to_each_worker_once(client, data):
    X, y, Xt, _ = data
    est = TVMClassifier(budget=40, gamma=GAMMA).fit(X[:5000], y[:5000])
    arr = fd.predict(est, da.from_array(Xt, chunks=(500, 2)), client=client)
    # the model is scattered once and referenced by key: no task of the graph carries it
    sizes = [len(pickle.dumps(v)) for v in dict(arr.__dask_graph__()).values()]
    assert max(sizes) < 50_000     # no task carries the 40-twin model (which pickles larger)
    assert len(pickle.dumps(est)) > 50_000


def test_a_distributed_model_saves_and_loads_like_any_other(client, data, tmp_path):
    X, y, Xt, _ = data
    est = fd.fit(TVMClassifier(budget=30, gamma=GAMMA), da.from_array(X, chunks=(8000, 2)),
                 da.from_array(y, chunks=8000), client=client, chunk_size=2000)
    path = tmp_path / "m.npz"
    est.save(path)
    back = load(path)
    np.testing.assert_array_equal(back.decision_function(Xt), est.decision_function(Xt))
    np.testing.assert_array_equal(back.predict_proba(Xt), est.predict_proba(Xt))
    assert back.calibration_counts_ == est.calibration_counts_ > 0
    # and it goes on learning
    back.partial_fit(X[:2000], y[:2000])
    assert back.n_seen_ == X.shape[0] + 2000


@pytest.mark.parametrize("when", ["first stage", "second stage", "between stages"])
def test_a_worker_killed_while_training_is_recomputed(data, when):
    """A worker is killed while it learns a shard of the first stage (the shards start
    from nothing) or of the second (from the merged model, which is a key of the stage's
    graph that a replacement must get again), or the moment the first stage's merged
    model is computed, on the worker that holds it: the fit ends with the model of the
    simulation, every row learned once. (Until 2026-11-27 the merged model was scattered
    to the workers before each stage, and a worker killed near a stage's start failed the
    fit with ``FutureCancelledError`` or ``CommClosedError``: 4 of 32 trials.)"""
    X, y, Xt, _ = data
    big = np.vstack([X] * 3)
    yb = np.concatenate([y] * 3)
    k = 4
    expect = fd.simulate(TVMClassifier(budget=40, gamma=GAMMA), big, yb, k, chunk_size=500)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=50)
    c = Client(cluster)
    sched = cluster.scheduler
    done = threading.Event()
    killed = []

    def victim(seen):
        """The worker to kill now, or None."""
        for key, ts in list(sched.tasks.items()):
            key = str(key)
            if key.startswith("_fit_shard") and key not in seen:
                seen.append(key)
            if when == "between stages":
                # the root of the first stage's tree of merges, computed
                if (key.startswith("_merge_pair") and ts.state == "memory" and ts.who_has
                        and all(str(d.key).startswith("_merge_pair")
                                for d in ts.dependencies)):
                    return next(iter(ts.who_has))
            elif ts.state == "processing" and ts.processing_on is not None:
                # the shard tasks of a stage carry fresh keys: the stage-th group of k
                stage = 0 if when == "first stage" else 1
                if key in seen[stage * k:(stage + 1) * k]:
                    return ts.processing_on
        return None

    def kill():
        seen = []
        while not done.is_set():
            ws = victim(seen)
            if ws is not None:
                pid = c.run(os.getpid, workers=[ws.address])
                os.kill(next(iter(pid.values())), signal.SIGKILL)
                killed.append(ws.address)
                return
            time.sleep(0.001)

    try:
        t = threading.Thread(target=kill)
        t.start()
        try:
            est = fd.fit(TVMClassifier(budget=40, gamma=GAMMA),
                         da.from_array(big, chunks=(18000, 2)), da.from_array(yb, chunks=18000),
                         client=c, chunk_size=500)
        finally:
            done.set()
            t.join()
        assert killed, f"nothing to kill was seen ({when})"
        assert est.n_seen_ == big.shape[0]
        np.testing.assert_allclose(est.decision_function(Xt), expect.decision_function(Xt),
                                   rtol=1e-12, atol=1e-12)
    finally:
        c.close()
        cluster.close()


def test_bad_input_is_refused_clearly(client, data):
    X, y, _, _ = data
    Xd = da.from_array(X, chunks=(6000, 2))
    yd = da.from_array(y, chunks=6000)
    with pytest.raises(TypeError, match="Incremental"):
        fd.fit(BSGDClassifier(budget=10, maintenance="projection"), Xd, yd, client=client)
    from fastbudget import PegasosClassifier
    with pytest.raises(TypeError, match="Incremental"):
        fd.fit(PegasosClassifier(), Xd, yd, client=client)
    y3 = da.from_array(np.arange(X.shape[0]) % 3, chunks=6000)
    with pytest.raises(ValueError, match="3 classes"):
        fd.fit(TVMClassifier(budget=10), Xd, y3, client=client)
    with pytest.raises(ValueError, match="rows"):
        fd.fit(TVMClassifier(budget=10), Xd, da.from_array(y[:-1], chunks=6000), client=client)
    with pytest.raises(ValueError, match="passes"):
        fd.fit(TVMClassifier(budget=10), Xd, yd, client=client, passes=0)
    with pytest.raises(ValueError, match="tail"):
        fd.fit(TVMClassifier(budget=10), Xd, yd, client=client, tail=1.0)
    est = TVMClassifier(budget=10, gamma=GAMMA).fit(X[:2000], y[:2000])
    with pytest.raises(TypeError, match="dask array"):
        fd.predict(est, X)
    with pytest.raises(ValueError, match="features"):
        fd.predict(est, da.from_array(np.zeros((10, 3)), chunks=(5, 3)), client=client).compute()


# --------------------------------------------------------------------------- command line
def _write_libsvm(path, X, y):
    with open(path, "w") as f:
        for row, lab in zip(X, y):
            f.write(f"{int(lab):+d} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in
                                                  enumerate(row)) + "\n")


def _run_cli(*argv):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "fastbudget", *map(str, argv)],
                          capture_output=True, text=True, timeout=600)


def test_cli_trains_and_predicts_over_a_glob_on_a_local_cluster(tmp_path, data):
    X, y, Xt, yt = data
    for k, part in enumerate(np.array_split(np.arange(12_000), 3)):
        _write_libsvm(tmp_path / f"part{k}.svm", X[part], y[part])
    _write_libsvm(tmp_path / "test.svm", Xt[:3000], yt[:3000])
    model = tmp_path / "m.npz"
    r = _run_cli("train", "tvm", tmp_path / "part*.svm", "-o", model, "--budget", 40,
                 "--gamma", 1.0, "--workers", 2, "--chunk-size", 2000, "-q")
    assert r.returncode == 0, r.stderr
    assert "12,000 examples" in r.stdout
    m = load(model)
    assert m.n_seen_ == 12_000
    # the same shards merged in this process, on the data standardised as the CLI did
    from fastbudget import load_scaler
    sc = load_scaler(model)
    sim = fd.simulate(TVMClassifier(budget=40, gamma=1.0), sc.transform(X[:12_000]),
                      y[:12_000], 3, chunk_size=2000)
    np.testing.assert_allclose(m.decision_function(sc.transform(Xt)),
                               sim.decision_function(sc.transform(Xt)), rtol=1e-9, atol=1e-9)
    # predict over the cluster equals predict on one machine
    r1 = _run_cli("predict", model, tmp_path / "test.svm", "-q")
    r2 = _run_cli("predict", model, tmp_path / "t*.svm", "--workers", 2, "-q")
    assert r1.returncode == 0 and r2.returncode == 0, (r1.stderr, r2.stderr)
    assert r1.stdout == r2.stdout
    assert len(r2.stdout.splitlines()) == 3000
    r1 = _run_cli("predict", model, tmp_path / "test.svm", "-q", "--proba")
    r2 = _run_cli("predict", model, tmp_path / "t*.svm", "--workers", 2, "-q", "--proba")
    assert r1.returncode == 0 and r2.returncode == 0, (r1.stderr, r2.stderr)
    assert r1.stdout == r2.stdout and r2.stdout.startswith("labels -1 1\n")
    assert len(r2.stdout.splitlines()) == 3001


def test_cli_names_the_file_and_line_of_a_damaged_shard(tmp_path, data):
    X, y, _, _ = data
    _write_libsvm(tmp_path / "a.svm", X[:3000], y[:3000])
    _write_libsvm(tmp_path / "b.svm", X[3000:6000], y[3000:6000])
    lines = (tmp_path / "b.svm").read_text().splitlines()
    lines[1233] = "+1 1:0.5 2:abc"
    (tmp_path / "b.svm").write_text("\n".join(lines) + "\n")
    r = _run_cli("train", "tvm", tmp_path / "*.svm", "-o", tmp_path / "m.npz", "--gamma", 1.0,
                 "--workers", 2, "--classes", "-1,1", "-q")
    assert r.returncode != 0
    assert "b.svm" in r.stderr and "1,234" in r.stderr.replace("line 1234", "line 1,234"), \
        r.stderr
    assert not (tmp_path / "m.npz").exists()


def test_cli_cluster_options_are_checked(tmp_path):
    r = _run_cli("train", "bsgd", "x.svm", "--workers", 2)
    assert r.returncode != 0 and "shard and merge" in r.stderr
    r = _run_cli("train", "tvm", tmp_path / "none*.svm", "--workers", 2)
    assert r.returncode != 0 and "no file matches" in r.stderr


def test_a_second_pass_starts_from_the_merged_model(client, data):
    X, y, Xt, yt = data
    Xd = da.from_array(X, chunks=(12000, 2))
    yd = da.from_array(y, chunks=12000)
    one = fd.fit(TVMClassifier(budget=40, gamma=GAMMA), Xd, yd, client=client, chunk_size=2000)
    two = fd.fit(TVMClassifier(budget=40, gamma=GAMMA), Xd, yd, client=client, chunk_size=2000,
                 passes=2)
    assert one.n_seen_ == X.shape[0]
    assert two.n_seen_ == 2 * X.shape[0]
    assert two.kkt_residual() < 1e-8
    assert not np.allclose(one.decision_function(Xt), two.decision_function(Xt))


# --------------------------------------------------------------------------- BSGD
def test_bsgd_one_shard_is_the_single_stream_model(data):
    X, y, Xt, _ = data
    single = BSGDClassifier(budget=40, gamma=GAMMA, lambda_=1e-4)
    for lo in range(0, X.shape[0], 2000):
        single.partial_fit(X[lo:lo + 2000], y[lo:lo + 2000], classes=[-1, 1])
    sim = fd.simulate(BSGDClassifier(budget=40, gamma=GAMMA, lambda_=1e-4), X, y, 1,
                      chunk_size=2000)
    np.testing.assert_array_equal(sim.decision_function(Xt), single.decision_function(Xt))
    assert sim._istate[2] == single._istate[2] == X.shape[0]      # [n_live, t, n_seen, ...]


def test_bsgd_merge_is_the_averaged_model_then_its_own_maintenance():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    params = dict(budget=30, gamma=1.0, lambda_=1e-3)
    classes = np.array([-1, 1])
    a = fd._fit_shard(BSGDClassifier, params, X[:1000], y[:1000], classes, 500, None)
    b = fd._fit_shard(BSGDClassifier, params, X[1000:], y[1000:], classes, 500, None)
    # with room for every SV the merge is exactly the step-weighted average of the models
    wide = fd.merge_bsgd(a, b, budget=60)
    ma = fd._start_model(BSGDClassifier, params, None, classes, None, a)
    mb = fd._start_model(BSGDClassifier, params, None, classes, None, b)
    mw = fd._start_model(BSGDClassifier, dict(params, budget=60), None, classes, None, wide)
    Xt = rng.normal(size=(300, 2))
    avg = (a["t"] * ma.decision_function(Xt) + b["t"] * mb.decision_function(Xt)) / (
        a["t"] + b["t"])
    np.testing.assert_allclose(mw.decision_function(Xt), avg, rtol=1e-10, atol=1e-12)
    assert mw._istate[2] == 2000 and mw._istate[1] == a["t"] + b["t"]
    # within the budget: the merging rule brings it down to 30 SVs
    m = fd.merge_bsgd(a, b, budget=30)
    assert m["SV"].shape[0] == 30
    assert m["n_maint"] == a["n_maint"] + b["n_maint"] + (wide["SV"].shape[0] - 30)


def test_bsgd_on_the_cluster_equals_the_simulation(client, data):
    X, y, Xt, yt = data
    est = fd.fit(BSGDClassifier(budget=40, gamma=GAMMA), da.from_array(X, chunks=(6000, 2)),
                 da.from_array(y, chunks=6000), client=client, chunk_size=2000)
    sim = fd.simulate(BSGDClassifier(budget=40, gamma=GAMMA), X, y, 4, chunk_size=2000)
    np.testing.assert_allclose(est.decision_function(Xt), sim.decision_function(Xt),
                               rtol=1e-12, atol=1e-12)
    assert est._istate[2] == X.shape[0]
    single = BSGDClassifier(budget=40, gamma=GAMMA).fit(X, y)
    print("BSGD single", single.score(Xt, yt), "4 shards", est.score(Xt, yt))


def _monitor_settings():
    return {k: dask.config.get(k) for k in fd.QUIET_MONITORS}


def _tick_interval_of(dask_worker):
    return dask_worker._tick_interval


def _profiles(dask_worker):
    return "profile" in dask_worker.periodic_callbacks


def test_local_cluster_starts_one_thread_per_worker_with_quiet_monitors(client):
    info = client.scheduler_info()["workers"]
    assert len(info) == 2 and all(w["nthreads"] == 1 for w in info.values())
    # every worker process, the scheduler and the nannies started with the slowed monitors
    settings = client.run(_monitor_settings)
    assert list(settings.values()) == [fd.QUIET_MONITORS] * 2
    assert set(client.run(_tick_interval_of).values()) == {0.2}
    sched = client.cluster.scheduler
    assert sched._tick_interval == 0.2
    assert all(n._tick_interval == 0.2 for n in client.cluster.workers.values())
    assert list(client.run(_profiles).values()) == [False, False]


def test_local_cluster_leaves_this_process_settings_and_can_keep_dasks():
    with dask.config.set({"distributed.admin.tick.interval": "33ms"}):
        with fd.local_cluster(1, quiet=False, silence_logs=50) as cluster, \
                Client(cluster) as c:
            assert list(c.run(_tick_interval_of).values()) == [0.033]
            assert list(c.run(_monitor_settings).values())[0][
                "distributed.worker.profile.enabled"] is True
        with fd.local_cluster(1, silence_logs=50, memory_limit="1GiB") as cluster, \
                Client(cluster) as c:
            assert list(c.run(_tick_interval_of).values()) == [0.2]
            assert [w["memory_limit"] for w in c.scheduler_info()["workers"].values()] \
                == [2 ** 30]
        # the quiet settings held for the cluster's processes only
        assert dask.config.get("distributed.admin.tick.interval") == "33ms"
        assert dask.config.get("distributed.worker.profile.enabled") is True


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2", None])
def test_local_cluster_refuses_a_bad_number_of_workers(bad):
    with pytest.raises(ValueError, match="n_workers must be a positive integer"):
        fd.local_cluster(bad)


def _shard_stats(X, y, K, chunk, start=None, stage=0, fracs=(1.0,)):
    sizes = np.diff(np.linspace(0, X.shape[0], K + 1).astype(int))
    lo = np.r_[0, np.cumsum(sizes)]
    params = TVMClassifier(budget=40, gamma=GAMMA).get_params()
    return [fd._fit_shard(TVMClassifier, params, X[lo[k]:lo[k + 1]], y[lo[k]:lo[k + 1]],
                          np.array([-1, 1]), chunk, start, stage, fracs, K)["calibration"]
            for k in range(K)]


def test_the_merged_model_is_calibrated_on_every_shard_s_out_of_sample_scores(data):
    """A model from shard and merge keeps calibration statistics (its predict_proba is
    calibrated, not the sigmoid of f): each shard's scores of its examples taken before
    it learned them, summed over the shards of a stage, and each stage's added to the
    merged model's so far decayed by W / (W + W_new) (a single stream's recency). A shard
    that starts from a merged model collects its own scores only."""
    X, y, Xt, _ = data
    one = fd.simulate(TVMClassifier(budget=40, gamma=GAMMA), X, y, 4, chunk_size=2000,
                      tail=0.0)
    stats = _shard_stats(X, y, 4, 2000)
    expect = (stats[0] + stats[1]) + (stats[2] + stats[3])      # the tree's order
    np.testing.assert_array_equal(one._calibration_stats, expect)
    assert one.calibration_counts_ > 0.4 * X.shape[0]
    sigmoid = CalibrationMap(None)(one.decision_function(Xt))
    assert not np.allclose(one.predict_proba(Xt)[:, 1], sigmoid)
    # a shard from the merged model starts with no statistics of its own
    again = _shard_stats(X[:4000], y[:4000], 1, 2000, start=one)[0]
    ref = TVMClassifier(budget=40, gamma=GAMMA)
    ref.__dict__.update(copy.deepcopy(one.__dict__))
    ref.__dict__["_calibration_stats"] = None
    for lo in (0, 2000):
        ref.partial_fit(X[lo:lo + 2000], y[lo:lo + 2000])
    np.testing.assert_array_equal(again, ref._calibration_stats)
    # the carry between stages
    old, new = expect, again
    w_old, w_new = old[0].sum(), new[0].sum()
    np.testing.assert_allclose(fd._carry_calibration(old, new),
                               old * (w_old / (w_old + w_new)) + new, rtol=0, atol=0)
    assert fd._carry_calibration(None, new) is not new
    assert fd._carry_calibration(old, None) is old
    # with the default stages (1/2, 1/4, 1/8, 1/8 of every shard): a stage's shards hold
    # half their examples' weight (the recency weighting of a fresh stream), the carry only
    # decays, so the total is between the last stage's (1/16 of the rows) and half the rows
    staged = fd.simulate(TVMClassifier(budget=40, gamma=GAMMA), X, y, 4, chunk_size=2000)
    assert X.shape[0] / 16 < staged.calibration_counts_ < X.shape[0] / 2
