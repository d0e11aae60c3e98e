"""The exact engine (``IncrementalSVC``, paper 003): fit one example at a time against
``sklearn.svm.SVC`` in the same run, one example in and out, exact leave-one-out.

Gauss protocol of paper 000 (standardised, RBF gamma = 0.5, C = 100; about 40 % of the
examples end as support vectors). ``svc_ratio`` is the engine's fit time over SVC's (issue 25:
<= 10 at 5,000); ``floor_ratio`` is over scoring the n examples against the model's support
vectors. Accuracy is checked as agreement with SVC (the same dual problem): the test accuracy
within half a point and the decision values within SVC's tolerance scale.
"""
import numpy as np
import pytest
from sklearn.svm import SVC

from _bench import best_seconds, floor_seconds, gauss, model_scores, record, timed_before_rounds
from fastbudget import IncrementalSVC

C, GAMMA = 100.0, 0.5


#: issue 25's goal: the engine's fit within this factor of SVC's at 5,000 examples
SVC_RATIO_GOAL = 10.0


def _fit(benchmark, n, rounds):
    X, y, Xt, yt = gauss(n)
    svc = SVC(C=C, gamma=GAMMA)
    svc_times = []
    # SVC's fit is timed before each of the engine's rounds, so that the two sides of the
    # ratio alternate: on this VM SVC's fit of 1,000 examples takes 26-28 or 40-46 ms by
    # process (the engine's 67-71 or 86-93 ms with it; quiet, six processes, 2026-11-26), and
    # under load either within one process; timed after all of the engine's rounds it could
    # land in the other mode, moving the ratio by a third (CI, 2026-11-26)
    setup = timed_before_rounds(lambda: svc.fit(X, y), svc_times,
                                make=lambda: ((IncrementalSVC(C=C, gamma=GAMMA, capacity=n),), {}))

    def fit(clf):
        return clf.fit(X, y)

    clf = benchmark.pedantic(fit, setup=setup, rounds=rounds, iterations=1)
    svc_s = min(svc_times)
    acc, acc_svc = clf.score(Xt, yt), svc.score(Xt, yt)
    diff = float(np.max(np.abs(clf.decision_function(X) - svc.decision_function(X))))
    svc_ratio = benchmark.stats.stats.min / svc_s
    record(benchmark, floor_seconds(clf, X), accuracy=acc, svc_accuracy=acc_svc, n=n,
           svc_s=svc_s, svc_ratio=svc_ratio,
           n_sv=len(clf.support_), svc_n_sv=len(svc.support_), max_f_diff=diff,
           kkt_residual=float(clf.kkt_residual()))
    assert abs(acc - acc_svc) <= 0.005
    # SVC stops at KKT violations of tol = 1e-3 in its gradient; on |f| ~ 1 with C = 100 that
    # leaves decision values a few 1e-2 apart (engine_scaling.md)
    assert diff <= 0.1
    assert clf.kkt_residual() <= 1e-6
    return clf, svc_ratio


@pytest.mark.quick
def test_engine_fit_1000(benchmark):
    _fit(benchmark, 1000, 5)


@pytest.mark.large
@pytest.mark.parametrize("n", [2000, 5000])
def test_engine_fit_large(benchmark, n):
    """At 5,000 examples (about 2,000 support vectors) the engine's fit must stay within
    ``SVC_RATIO_GOAL`` times SVC's on the same rows (issue 25; figures in
    ``docs/results/engine_scaling.md``)."""
    _, svc_ratio = _fit(benchmark, n, 1)
    if n == 5000:
        assert svc_ratio <= SVC_RATIO_GOAL


def test_engine_one_in_one_out(benchmark):
    """``learn_one`` then ``unlearn`` of 100 new examples on a model of 1,000: each round trip
    must give back the model it started from (decision values to 1e-7)."""
    X, y, _, _ = gauss(1100)
    clf = IncrementalSVC(C=C, gamma=GAMMA, capacity=1001).fit(X[:1000], y[:1000])
    f0 = clf.decision_function(X[:1000])
    new = X[1000:]

    def round_trips():
        for i in range(len(new)):
            clf.unlearn(clf.learn_one(new[i], y[1000 + i]))

    benchmark.pedantic(round_trips, rounds=3, iterations=1)
    drift = float(np.max(np.abs(clf.decision_function(X[:1000]) - f0)))
    _, run = model_scores(clf, np.ascontiguousarray(new))
    record(benchmark, best_seconds(run, 5), n=len(new), max_f_drift=drift, accuracy=1.0)
    assert drift <= 1e-7
    assert clf.kkt_residual() <= 1e-6


def test_engine_leave_one_out(benchmark):
    """Exact leave-one-out margins of 500 held examples, checked against SVC refitted without
    five of them."""
    X, y, _, _ = gauss(500)
    clf = IncrementalSVC(C=C, gamma=GAMMA, capacity=500).fit(X, y)
    live, m = benchmark.pedantic(clf.loo_margins, rounds=3, iterations=1)
    fl = floor_seconds(clf, X)
    sv = np.asarray(clf.support_)[:5]
    worst = 0.0
    for i in sv:
        keep = np.ones(len(y), bool)
        keep[i] = False
        ref = SVC(C=C, gamma=GAMMA, tol=1e-6).fit(X[keep], y[keep])
        want = y[i] * ref.decision_function(X[i:i + 1])[0]
        worst = max(worst, abs(m[list(live).index(i)] - want))
    record(benchmark, fl, n=500, loo_error=float(np.mean(m < 0)), max_loo_diff=worst,
           accuracy=1.0 - float(np.mean(m < 0)))
    assert worst <= 1e-3
