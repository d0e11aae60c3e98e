"""IncrementalSVC (the exact IDSVM of paper 003) as an estimator, against the exact oracle.

The oracle is libsvm's solution polished to an exact KT point
(tests/reference/svm_reference.py); brute-force retraining gives the leave-one-out
reference.
"""
import numpy as np
import pytest

from fastbudget import IncrementalSVC
from reference import svm_reference as ref
from _engine import engine_alpha, make_data

AGREE = 1e-6


def oracle_decision(X, y_pm, w, C, kernel, X_eval, **kw):
    orc = ref.oracle_fit(X, y_pm, w, C, kernel, **kw)
    assert orc["report"]["kt_scaled"] <= 1e-10
    Kx = ref.kernel_matrix(X_eval, X, kernel, **kw)
    return ref.decision(orc["alpha"], y_pm, orc["b"], Kx), orc


def rel_diff(f, f_ref):
    return float(np.max(np.abs(f - f_ref)) / max(1.0, np.abs(f_ref).max()))


@pytest.mark.parametrize("kernel,C", [("rbf", 100.0), ("linear", 1.0), ("poly", 0.1)])
def test_fit_matches_the_exact_svm(rng, kernel, C):
    X, y_pm = make_data(rng, 120, 4)
    labels = np.where(y_pm > 0, "yes", "no")  # classes_ = ['no', 'yes']; 'yes' is +1
    w = rng.uniform(0.1, 10, 120)
    kw = {"gamma": 0.25, "degree": 3, "coef0": 1.0}
    clf = IncrementalSVC(C=C, kernel=kernel, capacity=150, **kw).fit(X, labels, sample_weight=w)
    X_test = rng.normal(size=(60, 4))
    f_ref, orc = oracle_decision(X, y_pm, w, C, kernel, X_test, **kw)
    assert rel_diff(clf.decision_function(X_test), f_ref) <= AGREE
    assert list(clf.classes_) == ["no", "yes"]
    assert np.array_equal(clf.predict(X_test), np.where(f_ref > 0, "yes", "no"))
    # the fitted views reproduce the decision function
    Kx = ref.kernel_matrix(X_test, clf.support_vectors_, kernel, **kw)
    f_views = Kx @ clf.dual_coef_[0] + clf.intercept_[0]
    assert np.allclose(f_views, clf.decision_function(X_test), rtol=1e-12, atol=1e-12)
    assert clf.kkt_residual() <= 1e-8 * max(1.0, C * w.max())
    # the engine's closed form, plus the online calibration's statistics (a fixed size)
    assert clf.memory_bytes() == clf.engine_.memory_bytes() + clf._calibration_stats.nbytes


def test_gamma_scale_is_sklearns(rng):
    from sklearn.svm import SVC

    X, y = make_data(rng, 80, 3)
    X = 3.0 * X + 1.0
    clf = IncrementalSVC(C=10.0, capacity=80).fit(X, y)
    svc = SVC(C=10.0).fit(X, y)
    assert np.isclose(clf.gamma_, svc._gamma, rtol=1e-14)


def test_partial_fit_in_chunks_equals_fit(rng):
    X, y = make_data(rng, 90, 2)
    w = rng.uniform(0.1, 10, 90)
    a = IncrementalSVC(C=100.0, gamma=0.5, capacity=90).fit(X, y, sample_weight=w)
    b = IncrementalSVC(C=100.0, gamma=0.5, capacity=90)
    for lo in range(0, 90, 25):
        b.partial_fit(X[lo:lo + 25], y[lo:lo + 25], classes=[-1.0, 1.0],
                      sample_weight=w[lo:lo + 25])
    Xt = rng.normal(size=(30, 2))
    assert np.array_equal(a.decision_function(Xt), b.decision_function(Xt))


def test_learn_one_unlearn_reweight_set_C(rng):
    n, d = 70, 3
    X, y = make_data(rng, n, d)
    w = rng.uniform(0.1, 10, n)
    kw = {"gamma": 1 / 3}
    clf = IncrementalSVC(C=5.0, capacity=n, **kw)
    clf.partial_fit(X[:10], y[:10], classes=[-1.0, 1.0], sample_weight=w[:10])
    slots = list(range(10)) + [clf.learn_one(X[i], y[i], w[i]) for i in range(10, n)]
    assert sorted(slots) == list(range(n))
    Xt = rng.normal(size=(40, d))
    f_ref, _ = oracle_decision(X, y, w, 5.0, "rbf", Xt, **kw)
    assert rel_diff(clf.decision_function(Xt), f_ref) <= AGREE
    # unlearn a subset
    gone = rng.choice(n, 20, replace=False)
    for i in gone:
        clf.unlearn(slots[i])
    keep = np.setdiff1d(np.arange(n), gone)
    f_ref, _ = oracle_decision(X[keep], y[keep], w[keep], 5.0, "rbf", Xt, **kw)
    assert rel_diff(clf.decision_function(Xt), f_ref) <= AGREE
    # reweight some of the rest, then change C
    w2 = w.copy()
    for i in keep[:15]:
        w2[i] = rng.uniform(0.1, 10)
        clf.reweight(slots[i], w2[i])
    clf.set_C(50.0)
    assert clf.C == 50.0
    f_ref, _ = oracle_decision(X[keep], y[keep], w2[keep], 50.0, "rbf", Xt, **kw)
    assert rel_diff(clf.decision_function(Xt), f_ref) <= AGREE
    assert clf.kkt_residual() <= 1e-8 * 500


def test_loo_error_equals_brute_force(rng):
    n, d = 30, 2
    X, y = make_data(rng, n, d, noise=1.0)
    w = rng.uniform(0.1, 10, n)
    kw = {"gamma": 0.5}
    clf = IncrementalSVC(C=10.0, capacity=n, **kw).fit(X, y, sample_weight=w)
    slots, m = clf.loo_margins()
    assert sorted(slots) == list(range(n))
    m_bf = np.empty(n)
    for s in slots:  # fit put row i in slot i
        keep = np.arange(n) != s
        f, _ = oracle_decision(X[keep], y[keep], w[keep], 10.0, "rbf", X[s:s + 1], **kw)
        m_bf[s] = y[s] * f[0]
    order = np.argsort(slots)
    assert np.max(np.abs(m[order] - m_bf)) <= AGREE * max(1.0, np.abs(m_bf).max())
    assert clf.loo_error() == np.mean(m_bf < 0)
    assert 0 < clf.loo_error() < 1
    # LOO leaves the model as it was
    alpha = engine_alpha(clf.engine_)
    clf.loo_error()
    assert np.array_equal(engine_alpha(clf.engine_), alpha)


def test_zero_weight_examples_are_held_but_inert(rng):
    X, y = make_data(rng, 60, 2)
    w = rng.uniform(0.1, 10, 60)
    w[::3] = 0.0
    kw = {"gamma": 0.5}
    clf = IncrementalSVC(C=10.0, capacity=60, **kw).fit(X, y, sample_weight=w)
    Xt = rng.normal(size=(30, 2))
    f_ref, _ = oracle_decision(X, y, w, 10.0, "rbf", Xt, **kw)
    assert rel_diff(clf.decision_function(Xt), f_ref) <= AGREE
    assert not np.isin(np.arange(0, 60, 3), clf.support_).any()
    # a zero-weight example can be given weight later
    clf.reweight(0, 5.0)
    w[0] = 5.0
    f_ref, _ = oracle_decision(X, y, w, 10.0, "rbf", Xt, **kw)
    assert rel_diff(clf.decision_function(Xt), f_ref) <= AGREE


def test_partial_fit_transaction_copies_no_capacity_squared_state(monkeypatch):
    """partial_fit's rollback uses the engine's snapshot (per-slot vectors and the live
    block of R), not an undo buffer holding a second K and R (capacity^2 each): the peak
    allocation of a call stays far below one of them, and an exception after the engine
    learned the chunk still leaves the model exactly as it was (then learning goes on as if
    the failed call never happened)."""
    import tracemalloc
    rng = np.random.default_rng(3)
    X, y = make_data(rng, 700, 3)
    a = IncrementalSVC(C=10.0, gamma=0.5, capacity=1500).fit(X[:300], y[:300])
    b = IncrementalSVC(C=10.0, gamma=0.5, capacity=1500).fit(X[:300], y[:300])
    a.partial_fit(X[300:350], y[300:350])
    b.partial_fit(X[300:350], y[300:350])
    K_bytes = a.engine_.st.K.nbytes
    tracemalloc.start()
    a.partial_fit(X[350:400], y[350:400])
    b.partial_fit(X[350:400], y[350:400])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < K_bytes / 10, (peak, K_bytes)
    assert "_undo" not in a.__dict__

    # an exception after the engine learned the chunk (as KeyboardInterrupt could)
    from fastbudget.engine import IncrementalEngine
    real = IncrementalEngine.add_batch

    def learn_then_raise(self, *args):
        real(self, *args)
        raise KeyboardInterrupt

    Xt = rng.normal(size=(200, 3))
    f0 = a.decision_function(Xt)
    monkeypatch.setattr(IncrementalEngine, "add_batch", learn_then_raise)
    with pytest.raises(KeyboardInterrupt):
        a.partial_fit(X[400:450], y[400:450])
    monkeypatch.setattr(IncrementalEngine, "add_batch", real)
    assert np.array_equal(a.decision_function(Xt), f0)
    assert a.n_features_in_ == 3 and a.engine_.n_live == 400
    a.partial_fit(X[450:700], y[450:700])
    b.partial_fit(X[450:700], y[450:700])
    assert np.array_equal(a.decision_function(Xt), b.decision_function(Xt))
    assert np.array_equal(a.dual_coef_, b.dual_coef_)


@pytest.mark.parametrize("kernel,C", [("rbf", 10.0), ("linear", 1.0)])
def test_integer_weights_are_repeated_rows(rng, kernel, C):
    """The SVM of weights k is the SVM of each row repeated k times (weight 0: the row
    left out): the same decision values, in a shuffled stream too. (What scikit-learn's
    ``check_sample_weight_equivalence_*`` asks of ``predict_proba``; those checks are
    expected failures since the calibration map is prequential: a repeated row is scored
    once per arrival, under the SVM of the rows before it.)"""
    X, y_pm = make_data(rng, 40, 3)
    sw = rng.integers(0, 4, 40)
    Xr, yr = np.repeat(X, sw, axis=0), np.repeat(y_pm, sw)
    p = rng.permutation(len(yr))
    kw = {"gamma": 0.5} if kernel == "rbf" else {}
    a = IncrementalSVC(C=C, kernel=kernel, capacity=40, **kw).fit(X, y_pm, sample_weight=sw)
    b = IncrementalSVC(C=C, kernel=kernel, capacity=len(yr), **kw).fit(Xr[p], yr[p])
    Xt, _ = make_data(rng, 200, 3)
    fa, fb = a.decision_function(Xt), b.decision_function(Xt)
    assert rel_diff(fa, fb) <= AGREE
    np.testing.assert_array_equal(a.predict(Xt), b.predict(Xt))
