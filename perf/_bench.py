"""Shared pieces of the benchmark suite: seeded streams, compiled floors, timing.

The floors are the least work a learner of the same model size must do per example: one
compiled loop scoring each row against the model's stored vectors (``score_expansion``) or
its weight vector (``score_linear``). Each benchmark times its floor in the same run and
records ``extra_info['floor_ratio']`` = benchmark time / floor time, a figure that compares
across machines where seconds do not. Times are CPU seconds of the process, the best of a few
rounds (the least disturbed by other jobs on a loaded machine).
"""
import math
import os
import time

import numpy as np
from numba import njit

from fastbudget.kernels.kernel import exp_neg
from fastbudget.kernels.merge import nn_row_input

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: data sets of the papers (``load_paper_dataset``); ``FASTBUDGET_DATA`` overrides it
DATA_DIR = os.environ.get("FASTBUDGET_DATA", os.path.join(ROOT, "..", "shared", "data"))

RBF, POLY, LINEAR = 0, 1, 2
#: N-Checkerboard (paper 000): 4x4 board on [0, 4]^2, standardised; RBF delta = 0.37
CB_SD = 4 / math.sqrt(12)
CB_GAMMA = 1 / (2 * 0.37)


# ------------------------------------------------------------------------- floors
@njit(cache=True)
def score_expansion(code, gamma, degree, coef0, SV, coef, b, X, out):
    """out[t] = sum_j coef[j] k(X[t], SV[j]) + b, one compiled loop (modified in place).

    The stored vectors are transposed once per call, so each vector's squared distance (or
    dot product) is summed feature by feature with the loop over the vectors innermost,
    which vectorises (as TVM's learning loop scores since 2026-11-26); each vector's sum is
    in the same order as a row-by-row loop, so the values are those of the row-by-row floor
    to the bit, 1.4 / 2.9 / 6 times faster at d = 2 / 22 / 123 (100 vectors). RBF then takes
    the library's vectorised exp over the row."""
    n_sv, d = SV.shape
    SVT = np.ascontiguousarray(SV.T)
    row = np.empty(n_sv)
    for t in range(X.shape[0]):
        for j in range(n_sv):
            row[j] = 0.0
        for k in range(d):
            xk = X[t, k]
            if code == RBF:
                for j in range(n_sv):
                    e = xk - SVT[k, j]
                    row[j] += e * e
            else:
                for j in range(n_sv):
                    row[j] += xk * SVT[k, j]
        if code == RBF:
            for j in range(n_sv):
                row[j] = exp_neg(-gamma * row[j])
        elif code == POLY:
            for j in range(n_sv):
                row[j] = (gamma * row[j] + coef0) ** degree
        f = b
        for j in range(n_sv):
            f += coef[j] * row[j]
        out[t] = f


@njit(cache=True)
def score_linear(w, b, X, out):
    """out[t] = <X[t], w> + b, one compiled loop (modified in place)."""
    for t in range(X.shape[0]):
        f = b
        for k in range(X.shape[1]):
            f += X[t, k] * w[k]
        out[t] = f


@njit(cache=True)
def nearest_pairs(Q, s, side, nn_idx, nn_d):
    """For each row i of Q: the row j != i on the same side (side[i] == side[j]) with the
    least input-space merge cost s_i s_j ||q_i - q_j||^2 / (s_i + s_j) (modified in place):
    the floor of TVM's nearest-merge-neighbour cache rebuilt in full."""
    n, d = Q.shape
    for i in range(n):
        best = np.inf
        jb = -1
        for j in range(n):
            if j == i or side[i] != side[j]:
                continue
            d2 = 0.0
            for k in range(d):
                e = Q[i, k] - Q[j, k]
                d2 += e * e
            c = s[i] * s[j] * d2 / (s[i] + s[j])
            if c < best:
                best = c
                jb = j
        nn_idx[i] = jb
        nn_d[i] = best


@njit(cache=True)
def nn_cache_rebuild(reps, Q, s, side, active, costs, nn_idx, nn_d, nn2_idx, nn2_d, nn2_ok):
    """``reps`` times, TVM's nearest-merge-neighbour row (``kernels.merge.nn_row_input``,
    one-sided) of every twin, from one compiled loop (so that the benchmark times the
    kernel, not Python's calls into it)."""
    for _ in range(reps):
        for i in range(Q.shape[0]):
            nn_row_input(Q, s, side, True, active, i, costs, nn_idx, nn_d, nn2_idx, nn2_d,
                         nn2_ok)


def best_seconds(fn, rounds=3, min_total=0.5, max_rounds=200, clock=time.process_time):
    """Least CPU time (``time.process_time``, the suite's clock; ``clock`` another, e.g.
    wall time for work in several threads) of at least ``rounds`` calls of ``fn()``, repeated
    until they add up to ``min_total`` seconds (short floors are timed many times: a 2 ms loop
    on a loaded machine needs more than three tries)."""
    best = np.inf
    total = 0.0
    k = 0
    while k < rounds or (total < min_total and k < max_rounds):
        t = clock()
        fn()
        dt = clock() - t
        best = min(best, dt)
        total += dt
        k += 1
    return best


def timed_before_rounds(peer, times, reps=1, make=None, clock=time.process_time):
    """A ``setup`` for ``benchmark.pedantic`` that times ``peer()`` (the least CPU time of
    ``reps`` calls, or the least time by ``clock``) before each round and appends it to
    ``times``; returns ``make()`` as the round's arguments (``((), {})`` when ``make`` is
    None). The peer and the benchmarked code
    then alternate round by round, and ``min(times)`` is taken in the same conditions as
    the benchmark's own minimum: on this VM a process's speed can differ by up to 70 % from
    the next process's, and under load change within one (``test_bench_engine.py``), so a
    peer timed after all the rounds could land in another mode and move the ratio by a third."""
    def setup():
        times.append(best_seconds(peer, reps, min_total=0.0, clock=clock))
        return make() if make is not None else ((), {})
    return setup


def iterations_for(fn, target=0.05):
    """Calls per benchmark round so that a round lasts about ``target`` CPU seconds (a round
    of a sub-millisecond call alone is mostly timer and scheduler noise)."""
    t = time.process_time()
    fn()
    return max(1, int(target / max(time.process_time() - t, 1e-6)))


def kernel_code(model):
    kernel = getattr(model, "kernel", "linear")
    return {"rbf": RBF, "poly": POLY, "linear": LINEAR}[kernel]


def model_scores(model, X):
    """The floor's scores of ``model`` on X (its decision function, recomputed from the stored
    vectors and coefficients in one compiled loop) and a zero-argument function that reruns
    it."""
    out = np.empty(X.shape[0])
    if kernel_code(model) == LINEAR and hasattr(model, "coef_"):
        w = np.ascontiguousarray(np.asarray(model.coef_, dtype=np.float64).ravel())
        b = float(np.ravel(model.intercept_)[0])

        def run():
            score_linear(w, b, X, out)
    else:
        # TVM's stored vectors are its twins
        SV = getattr(model, "twin_vectors_", None)
        if SV is None:
            SV = model.support_vectors_
        SV = np.ascontiguousarray(SV, dtype=np.float64)
        coef = np.ascontiguousarray(np.ravel(model.dual_coef_), dtype=np.float64)
        b = float(np.ravel(model.intercept_)[0])
        code = kernel_code(model)
        gamma = float(getattr(model, "gamma_", model.gamma) or 0.0)
        degree = int(getattr(model, "degree", 3))
        coef0 = float(getattr(model, "coef0", 0.0))

        def run():
            score_expansion(code, gamma, degree, coef0, SV, coef, b, X, out)
    run()
    return out, run


def floor_seconds(model, X, rounds=3):
    """Best time of the floor scoring every row of X against ``model``; also checks that the
    floor computes the model's own decision function (else the ratio would be meaningless)."""
    out, run = model_scores(model, X[:2000])
    ref = model.decision_function(X[:2000])
    scale = max(1.0, float(np.max(np.abs(ref))))
    assert np.max(np.abs(out - ref)) <= 1e-8 * scale, (
        "the floor does not reproduce the model's decision function")
    _, run = model_scores(model, X)
    return best_seconds(run, rounds)


def record(benchmark, floor_s, **info):
    """Store the floor, the floor ratio (best benchmark round / floor) and ``info``."""
    best = benchmark.stats.stats.min
    benchmark.extra_info["floor_s"] = floor_s
    benchmark.extra_info["floor_ratio"] = best / floor_s
    for k, v in info.items():
        benchmark.extra_info[k] = v
    return best / floor_s


# ------------------------------------------------------------------------- streams
def checkerboard(n, seed=0, noise=0.15):
    """Standardised N-Checkerboard stream and 5,000 clean test points (paper 000)."""
    from fastbudget.datasets import make_checkerboard

    X, y = make_checkerboard(n, noise=noise, random_state=seed)
    Xt, yt = make_checkerboard(5000, random_state=seed + 777)
    return (X - 2) / CB_SD, y, (Xt - 2) / CB_SD, yt


def uniform_rows(Xt, n, seed=5):
    """``n`` rows drawn uniformly over the bounding box of ``Xt`` (C-contiguous): the rows
    the serving benchmarks score."""
    rng = np.random.default_rng(seed)
    lo, hi = Xt.min(axis=0), Xt.max(axis=0)
    return np.ascontiguousarray(lo + (hi - lo) * rng.random((n, Xt.shape[1])))


def gauss(n, seed=0, n_test=5000):
    """Gauss (paper 000) stream and test set, both standardised by the stream's mean and sd."""
    from fastbudget.datasets import make_gauss

    X, y = make_gauss(n + n_test, random_state=seed)
    mu, sd = X[:n].mean(0), X[:n].std(0)
    X = np.ascontiguousarray((X - mu) / sd)
    return X[:n], y[:n], X[n:], y[n:]


def linear_stream(n, seed=0):
    """Paper 001's Synthetic C (5-D, two Gaussian clusters, 85 % linear separability)."""
    from fastbudget.datasets import make_streamsvm_synthetic

    X, y = make_streamsvm_synthetic("C", n + 5000, random_state=seed)
    return X[:n], y[:n], X[n:], y[n:]


def linear_rule(n, d=22, seed=0):
    """Standard normal rows in d dimensions labelled by the sign of a fixed random linear
    rule (no label noise): the stream where TVM learns most examples (issue 25's third
    stream; ``perf/tvm_linear_rule.py``)."""
    w = np.random.default_rng(12345).normal(size=d)
    X = np.random.default_rng(seed).normal(size=(n, d))
    return X, np.where(X @ w > 0, 1, -1)


def paper_data(name):
    """(X, y, Xt, yt) of a paper data set, standardised on its training side, or None when the
    data folder is absent."""
    from fastbudget.datasets import load_paper_dataset

    if not os.path.isdir(DATA_DIR):
        return None
    X, y, Xt, yt = load_paper_dataset(name, DATA_DIR)
    mu, sd = X.mean(0), X.std(0)
    sd[sd == 0] = 1.0
    return (np.ascontiguousarray((X - mu) / sd), y, np.ascontiguousarray((Xt - mu) / sd), yt)
