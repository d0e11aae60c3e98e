"""TVMClassifier: stream throughput (d = 2, 22, 123), predict throughput, the merge step.

Budget 100, paper 000's protocol (standardised attributes, RBF delta = d / 2, 0.37 for the
board; C = 100, Adult C = 1). The floor scores every example of the stream against the final
100 twins in one compiled loop (``_bench.score_expansion``); ``floor_ratio`` is the stream's
time over it. Issue 25 asks for <= 3 at d = 2, 22 and 123 on 10^6-example streams: each
stream benchmark records the goal and whether it is met (``extra_info['goal_ratio']``,
``['goal_met']``) and asserts it where it has been reached (``GOAL_REACHED``); elsewhere it
records the ratio (``docs/results/tvm_profile.md`` says how far it is short) and fails only
on a regression through ``perf/check_ratios.py``.
"""
import numpy as np
import pytest

from _bench import (CB_GAMMA, best_seconds, checkerboard, floor_seconds, iterations_for,
                    linear_rule, model_scores, nearest_pairs, nn_cache_rebuild, paper_data,
                    record)
from fastbudget import TVMClassifier

#: issue 25: TVM's whole stream (B = 100) within this many floors
GOAL_RATIO = 3.0
#: streams that have reached the goal (asserted there); the others record their ratio only.
#: IJCNN and Adult at 10^6 were marked here on 2026-11-25, when they measured 2.4-3.9 floors
#: against the floor of that day; the floor was made to score as TVM scores on 2026-11-26
#: (over the transposed twins, 4b02ba9), about twice as fast, and the same streams have
#: measured 4.3-6.6 floors since (docs/results/tvm_profile.md), so `-m large` failed on them.
#: None has reached the goal against the present floor.
GOAL_REACHED = {}


def _goal(benchmark, ratio, key):
    """Record the goal and whether this run meets it; assert it where it has been reached."""
    benchmark.extra_info["goal_ratio"] = GOAL_RATIO
    benchmark.extra_info["goal_met"] = bool(ratio <= GOAL_RATIO)
    if GOAL_REACHED.get(key, False):
        assert ratio <= GOAL_RATIO, f"{key}: {ratio:.2f} floors (goal {GOAL_RATIO})"


def _fit_stream(benchmark, X, y, rounds, **params):
    def setup():
        return (TVMClassifier(budget=100, **params),), {}

    def fit(clf):
        clf.fit(X, y)
        return clf

    clf = benchmark.pedantic(fit, setup=setup, rounds=rounds, iterations=1)
    return clf


@pytest.mark.quick
def test_tvm_fit_checkerboard_30k(benchmark):
    """30,000 N-Checkerboard examples (d = 2): the quick regression guard of the stream."""
    X, y, Xt, yt = checkerboard(30_000)
    clf = _fit_stream(benchmark, X, y, 5, gamma=CB_GAMMA)
    acc = clf.score(Xt, yt)
    record(benchmark, floor_seconds(clf, X), accuracy=acc, n=len(y),
           accepted=int(clf.n_accepted_))
    # paper 000 Table 3, TVM B = 100 on N-Checkerboard (10^4 examples there): 97.1 %
    assert acc >= 0.95


def test_tvm_fit_checkerboard_100k(benchmark):
    """10^5 N-Checkerboard examples (d = 2)."""
    X, y, Xt, yt = checkerboard(100_000)
    clf = _fit_stream(benchmark, X, y, 3, gamma=CB_GAMMA)
    acc = clf.score(Xt, yt)
    record(benchmark, floor_seconds(clf, X), accuracy=acc, n=len(y),
           accepted=int(clf.n_accepted_))
    assert acc >= 0.96


def test_tvm_partial_fit_checkerboard_100k(benchmark):
    """The same 10^5 N-Checkerboard examples through ``partial_fit`` in chunks of 10^4: the
    streaming path, which also keeps the online calibration (each row's decision value,
    taken by the learning loop before the row is learned; ``docs/results/tvm_profile.md``,
    2026-11-26). Same model as ``fit``."""
    X, y, Xt, yt = checkerboard(100_000)

    def setup():
        return (TVMClassifier(budget=100, gamma=CB_GAMMA),), {}

    def stream(clf):
        for i in range(0, len(y), 10_000):
            clf.partial_fit(X[i:i + 10_000], y[i:i + 10_000], classes=[-1, 1])
        return clf

    clf = benchmark.pedantic(stream, setup=setup, rounds=3, iterations=1)
    acc = clf.score(Xt, yt)
    record(benchmark, floor_seconds(clf, X), accuracy=acc, n=len(y),
           accepted=int(clf.n_accepted_))
    # every chunk after the first is in the calibration statistics
    assert clf.calibration_counts_ > 0.4 * (len(y) - 10_000)
    assert acc >= 0.96


@pytest.mark.large
@pytest.mark.parametrize("n", [1_000_000, 10_000_000])
def test_tvm_fit_checkerboard_large(benchmark, n):
    """10^6 and 10^7 N-Checkerboard examples (issue 25: 10^7 in <= 20 s, accuracy 98.6 %)."""
    X, y, Xt, yt = checkerboard(n)
    clf = _fit_stream(benchmark, X, y, 1, gamma=CB_GAMMA)
    acc = clf.score(Xt, yt)
    ratio = record(benchmark, floor_seconds(clf, X, rounds=3 if n <= 1_000_000 else 1),
                   accuracy=acc, n=len(y), accepted=int(clf.n_accepted_),
                   seconds=benchmark.stats.stats.min)
    # tvm_stream.md: 97.88 % at 10^6, 98.64 % at 10^7 (paper: 98.7 % at 10^7)
    assert acc >= (0.975 if n == 1_000_000 else 0.985)
    _goal(benchmark, ratio, f"checkerboard_1e{len(str(n)) - 1}")


@pytest.mark.parametrize("name,C,bar", [("ijcnn", 100.0, 0.95), ("adult", 1.0, 0.75)])
def test_tvm_fit_paper_data(benchmark, name, C, bar):
    """One pass over IJCNN (49,990 rows, d = 22) or Adult (a9a, 32,561 rows, d = 123).

    Accuracy bars: docs/results/tvm_table3.md, TVM B = 100 over 5 orders: IJCNN 96.6 +- 0.3 %,
    Adult (paper's control of C) 76.3 +- 0.8 %; the bars leave room for one order."""
    data = paper_data(name)
    if data is None:
        pytest.skip("the papers' data sets are not present (set FASTBUDGET_DATA)")
    X, y, Xt, yt = data
    # best of 5 rounds: one round of this 0.2-0.4 s fit moved its ratio by a third between
    # two runs a few minutes apart (IJCNN 8.83 -> 11.6, Adult 8.62 -> 6.68, 2026-11-27)
    clf = _fit_stream(benchmark, X, y, 5, gamma=1.0 / X.shape[1], C=C)
    acc = clf.score(Xt, yt)
    record(benchmark, floor_seconds(clf, X), accuracy=acc, n=len(y), d=X.shape[1],
           accepted=int(clf.n_accepted_))
    assert acc >= bar


def _passes(X, y, n, seed=0):
    """n examples made of passes over (X, y), each pass in its own seeded order (the
    streams of ``perf/profile_tvm.py --data``)."""
    rng = np.random.default_rng(seed)
    idx = np.concatenate([rng.permutation(len(y)) for _ in range(-(-n // len(y)))])[:n]
    return np.ascontiguousarray(X[idx]), y[idx]


@pytest.mark.large
@pytest.mark.parametrize("name,C,bar", [("ijcnn", 100.0, 0.95), ("adult", 1.0, 0.75)])
def test_tvm_stream_paper_data_1e6(benchmark, name, C, bar):
    """10^6 examples in passes over IJCNN (d = 22) or Adult (d = 123): issue 25's stream
    at d = 22 and 123 (the one pass of ``test_tvm_fit_paper_data`` weighs the first
    examples, learned more often, too much). Accuracy bars as there."""
    data = paper_data(name)
    if data is None:
        pytest.skip("the papers' data sets are not present (set FASTBUDGET_DATA)")
    X0, y0, Xt, yt = data
    X, y = _passes(X0, y0, 1_000_000)
    clf = _fit_stream(benchmark, X, y, 1, gamma=1.0 / X.shape[1], C=C)
    acc = clf.score(Xt, yt)
    ratio = record(benchmark, floor_seconds(clf, X), accuracy=acc, n=len(y), d=X.shape[1],
                   accepted=int(clf.n_accepted_))
    assert acc >= bar
    _goal(benchmark, ratio, f"{name}_1e6")


@pytest.mark.large
@pytest.mark.parametrize("rule", ["paper", "labels_balanced"])
def test_tvm_stream_linear_rule_d22(benchmark, rule):
    """10^6 examples of a random linear rule at d = 22 (issue 25 reports it beside IJCNN and
    Adult: the stream where most examples are learned, two in three here), paper 000's
    protocol (C = 100, control of C; without control the same fit took four times as long
    and learned 71 %, ``docs/results/tvm_profile.md``). Records the floor ratio, the share
    learned and the accuracy on 20,000 clean test rows. With the paper's One-Sided merging
    TVM's accuracy falls along this stream (92.5 % after 10^5 examples, 78.5 % after 10^6:
    one class is misclassified, its side of the model a few twins short); the bar is below
    that figure, so the benchmark guards the speed against losing more. ``labels_balanced``:
    ``sides='labels', balance_sides=True``, which keep each class's twins at its share of
    the weight (98.9 % on 2026-11-27); its bar is below its figure too."""
    X, y = linear_rule(1_000_000)
    Xt, yt = linear_rule(20_000, seed=99)
    kw = {"sides": "labels", "balance_sides": True} if rule == "labels_balanced" else {}
    clf = _fit_stream(benchmark, X, y, 1, gamma=1.0 / 22, C=100.0, **kw)
    acc = clf.score(Xt, yt)
    ratio = record(benchmark, floor_seconds(clf, X), accuracy=acc, n=len(y), d=22,
                   accepted=int(clf.n_accepted_), learned_share=clf.n_accepted_ / len(y),
                   C_eff=float(clf.C_eff_), seconds=benchmark.stats.stats.min)
    assert acc >= (0.97 if rule == "labels_balanced" else 0.75)
    _goal(benchmark, ratio, "linear_rule_1e6")


@pytest.mark.quick
def test_tvm_predict(benchmark):
    """decision_function on 10^5 rows against the floor on the same rows (issue 25: <= 1.5)."""
    X, y, Xt, yt = checkerboard(30_000)
    clf = TVMClassifier(budget=100, gamma=CB_GAMMA).fit(X, y)
    Xp, _, _, _ = checkerboard(100_000, seed=5)
    f = benchmark.pedantic(clf.decision_function, args=(Xp,), rounds=10,
                           iterations=iterations_for(lambda: clf.decision_function(Xp)))
    ref, _ = model_scores(clf, Xp)
    assert np.max(np.abs(f - ref)) <= 1e-8 * max(1.0, np.max(np.abs(ref)))
    record(benchmark, floor_seconds(clf, Xp, rounds=10), accuracy=clf.score(Xt, yt), n=len(Xp))


@pytest.mark.quick
def test_tvm_merge_nn_rows(benchmark):
    """The merge step's search: TVM's nearest-merge-neighbour cache rebuilt in full
    (``nn_row_input`` for each of the 100 twins; one-sided) against a compiled all-pairs loop
    over the same twins. Asserts the cache finds the exact nearest pairs.

    (Until 2026-11-27 ``test_tvm_merge_nn_cache``, timing the branchy row that the stream
    used then: ``perf/README.md``. The same 100 rows repeated 2,000 times let the branch
    predictor learn the twins' sides, which favours branches here and not in the stream.)"""
    X, y, _, _ = checkerboard(30_000)
    clf = TVMClassifier(budget=100, gamma=CB_GAMMA).fit(X, y)
    tw = clf.twins_
    act = np.flatnonzero(tw.active)
    Q = np.ascontiguousarray(tw.Q[act])
    s = np.ascontiguousarray(tw.s_tot[act])
    side = np.ascontiguousarray(tw.side[act])
    active = np.ones(len(act), dtype=np.int8)
    n = len(act)
    nn_idx, nn2_idx = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    nn_d, nn2_d = np.full(n, np.inf), np.full(n, np.inf)
    nn2_ok, costs = np.ones(n, np.int8), np.zeros(n)
    reps = 2000

    def rebuild():
        nn_cache_rebuild(reps, Q, s, side, active, costs, nn_idx, nn_d, nn2_idx, nn2_d, nn2_ok)

    rebuild()
    benchmark.pedantic(rebuild, rounds=5, iterations=1)
    f_idx, f_d = np.full(n, -1, np.int64), np.full(n, np.inf)

    def floor():
        for _ in range(reps):
            nearest_pairs(Q, s, side, f_idx, f_d)

    floor()
    fl = best_seconds(floor, 5)
    np.testing.assert_allclose(nn_d, f_d, rtol=1e-12)
    assert np.all((nn_idx == f_idx) | np.isclose(nn_d, f_d, rtol=1e-12))
    record(benchmark, fl, twins=n, accuracy=1.0)
