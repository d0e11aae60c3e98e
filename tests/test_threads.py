"""Threads: prediction and the one-call-per-chunk learners release the GIL; updates of one
model run one at a time (``fastbudget._transaction``).

Whether the GIL is released is seen from another Python thread: it runs a loop that only
reads the clock, and the longest pause between two of its turns is measured while the
compiled call runs. A call that holds the GIL for its whole length pauses that thread for
about the call's length; one that releases it does not pause it at all (the operating
system's scheduling aside, a few milliseconds).
"""
import threading
import time

import numpy as np
import pytest

from _helpers import assert_same_state, model_state, stream
from fastbudget._transaction import _update_lock
from fastbudget import (BSGDClassifier, ForgetronClassifier, IncrementalSVC, PegasosClassifier,
                        PerceptronClassifier, StreamSVMClassifier, TVMClassifier)
from fastbudget.datasets import make_checkerboard


def _longest_pause(call):
    """Run ``call()`` while another thread reads the clock in a loop; returns (the call's
    wall seconds, the longest gap between two of the other thread's readings during it)."""
    stop = threading.Event()
    stamps = []

    def spin():
        append, clock = stamps.append, time.perf_counter
        while not stop.is_set():
            append(clock())

    th = threading.Thread(target=spin)
    th.start()
    time.sleep(0.02)
    t0 = time.perf_counter()
    call()
    t1 = time.perf_counter()
    stop.set()
    th.join()
    inside = np.array([t0] + [s for s in stamps if t0 <= s <= t1] + [t1])
    return t1 - t0, float(np.diff(inside).max())


def _board(n, seed=0):
    X, y = make_checkerboard(n, noise=0.1, random_state=seed)
    return (X - 2.0) / 1.15, y


# rows scored by each learner in the GIL test: about half a second of compiled work
ROWS = {"tvm": 2_000_000, "bsgd": 2_000_000, "incremental_svc": 1_000_000,
        "perceptron": 2_000_000, "forgetron": 2_000_000, "streamsvm_rbf": 100_000}

PREDICTORS = {
    "tvm": lambda: TVMClassifier(budget=60, gamma=2.0),
    "bsgd": lambda: BSGDClassifier(budget=60, gamma=2.0),
    "incremental_svc": lambda: IncrementalSVC(C=10.0, gamma=2.0),
    "perceptron": lambda: PerceptronClassifier(budget=60, gamma=2.0),
    "streamsvm_rbf": lambda: StreamSVMClassifier(kernel="rbf", gamma=2.0),
    "forgetron": lambda: ForgetronClassifier(budget=60, gamma=2.0),
    "pegasos": lambda: PegasosClassifier(),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_prediction_releases_the_gil(name):
    """decision_function over many rows lets another thread run all along."""
    est = PREDICTORS[name]().fit(*_board(400))
    X, _ = _board(ROWS[name], seed=1)
    est.decision_function(X[:10])
    secs, pause = _longest_pause(lambda: est.decision_function(X))
    assert secs > 0.05, "too few rows to see the GIL held"
    assert pause < 0.2 * secs, (secs, pause)


# the learners whose chunk loop is one compiled call that releases the GIL
CHUNK_LEARNERS = ["tvm", "bsgd", "perceptron", "forgetron", "pegasos"]


# rows learned by each in the GIL test: a quarter to one second of compiled work. (Not
# Pegasos: its loop over a chunk is a small part of its partial_fit, whose input checks
# release the GIL in NumPy anyway, so the test would pass with the GIL held.)
LEARN_ROWS = {"tvm": 150_000, "bsgd": 150_000, "perceptron": 1_500_000, "forgetron": 600_000}


@pytest.mark.parametrize("name", sorted(LEARN_ROWS))
def test_learning_a_chunk_releases_the_gil(name):
    X, y = _board(LEARN_ROWS[name], seed=2)
    est = PREDICTORS[name]().partial_fit(X[:100], y[:100], classes=[-1, 1])
    secs, pause = _longest_pause(lambda: est.partial_fit(X[100:], y[100:]))
    assert secs > 0.05, "too few rows to see the GIL held"
    assert pause < 0.2 * secs, (secs, pause)


@pytest.mark.parametrize("name", CHUNK_LEARNERS)
def test_models_learning_in_threads_equal_the_same_learned_alone(name):
    shards = [_board(20_000, seed=s) for s in (3, 4)]
    alone = [PREDICTORS[name]().fit(*s) for s in shards]
    together = [PREDICTORS[name]() for _ in shards]
    threads = [threading.Thread(target=m.fit, args=s) for m, s in zip(together, shards)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for a, b in zip(alone, together):
        assert_same_state(model_state(a), model_state(b))


def test_threads_predicting_with_one_model_get_its_values():
    est = TVMClassifier(budget=60, gamma=2.0).fit(*_board(3000))
    X, _ = _board(200_000, seed=5)
    expect = est.decision_function(X)
    parts = np.array_split(np.arange(X.shape[0]), 8)
    out = np.empty_like(expect)

    def score(idx):
        out[idx] = est.decision_function(X[idx])

    threads = [threading.Thread(target=score, args=(idx,)) for idx in parts]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    np.testing.assert_array_equal(out, expect)


@pytest.mark.parametrize("name", ["tvm", "bsgd"])
def test_two_threads_updating_one_model_apply_both_updates_in_turn(name):
    """Both chunks are learned, one after the other, whole: the model is one of the two
    serial orders' bit for bit (without the lock, the two compiled loops would write the
    same arrays at once)."""
    X0, y0 = _board(2000, seed=6)
    chunks = [_board(40_000, seed=s) for s in (7, 8)]

    def started():
        return PREDICTORS[name]().partial_fit(X0, y0, classes=[-1, 1])

    serial = []
    for order in ((0, 1), (1, 0)):
        m = started()
        for k in order:
            m.partial_fit(*chunks[k])
        serial.append(model_state(m))
    for _ in range(3):
        m = started()
        barrier = threading.Barrier(2)

        def learn(k):
            barrier.wait()
            m.partial_fit(*chunks[k])

        threads = [threading.Thread(target=learn, args=(k,)) for k in (0, 1)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        got = model_state(m)
        matches = 0
        for ref in serial:
            try:
                assert_same_state(got, ref)
                matches += 1
            except AssertionError:
                pass
        assert matches >= 1, "the model is neither serial order's"


def test_learn_one_waits_for_an_update_of_the_same_model():
    """TVM's learn_one reads and counts in the model outside its transaction: it takes the
    model's lock too, so rows given while a chunk is being learned in another thread are
    learned after it: the model is the serial one's, bit for bit."""
    X0, y0 = _board(2000, seed=9)
    X, y = _board(60_000, seed=10)
    rows = _board(50, seed=11)

    def started():
        return TVMClassifier(budget=60, gamma=2.0).partial_fit(X0, y0, classes=[-1, 1])

    serial = started().partial_fit(X, y)
    for x, t in zip(*rows):
        serial.learn_one(x, t)
    m = started()
    holding = threading.Event()

    def chunk():
        with _update_lock(m):        # (re-entrant: partial_fit takes it again)
            holding.set()
            m.partial_fit(X, y)

    th = threading.Thread(target=chunk)
    th.start()
    holding.wait()
    for x, t in zip(*rows):
        m.learn_one(x, t)
    th.join()
    assert m.n_seen_ == 2000 + 60_000 + 50
    assert_same_state(model_state(m), model_state(serial))
