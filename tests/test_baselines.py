"""Baselines (Perceptron, Forgetron, Pegasos, BSGD): references, invariants, interface.

Every learner is compared with a plain-Python version of its paper (tests/reference/
baselines_reference.py) on short streams; invariants (budget never exceeded, Pegasos norm
ball, Forgetron's Q_t <= 15/32 M_t, BSGD's cached kernel matrix) are checked along random
streams; the shared interface (pickle, state round trip, any two labels, errors that leave
the model unchanged) is checked for all.
"""
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from _helpers import live_arrays

from fastbudget.estimators.baselines import (
    BSGDClassifier,
    RandomBudgetClassifier,
    ForgetronClassifier,
    PegasosClassifier,
    PerceptronClassifier,
)
from fastbudget.kernels.bsgd import merge_h
from fastbudget.kernels.budget import forgetron_phi
from reference import baselines_reference as ref


def _xor(n, rng, noise=0.1, d=2):
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)
    flip = rng.random(n) < noise
    y[flip] = -y[flip]
    return X, y


def _linear(n, rng, d=3, noise=0.05):
    X = rng.normal(size=(n, d))
    y = np.where(X @ np.arange(1, d + 1) + 0.3 > 0, 1.0, -1.0)
    flip = rng.random(n) < noise
    y[flip] = -y[flip]
    return X, y


ALL_BUDGETED = [
    lambda B: PerceptronClassifier(budget=B, kernel="rbf", gamma=0.7),
    lambda B: ForgetronClassifier(budget=B, gamma=0.7),
    lambda B: BSGDClassifier(budget=B, gamma=0.7, lambda_=1e-3, maintenance="merging"),
    lambda B: BSGDClassifier(budget=B, gamma=0.7, lambda_=1e-3, maintenance="removal"),
    lambda B: BSGDClassifier(budget=B, gamma=0.7, lambda_=1e-3, maintenance="projection"),
    lambda B: RandomBudgetClassifier(budget=B, gamma=0.7, C=10.0, random_state=1),
]


# ---------------------------------------------------------------------------- Forgetron
def test_forgetron_matches_reference_step_by_step(rng):
    X, y = _xor(160, rng, noise=0.2)
    B = 8
    K = ref.kernel("rbf", gamma=0.7)
    hist = ref.forgetron(X, y, K, B)
    clf = ForgetronClassifier(budget=B, gamma=0.7)
    removals = 0
    for t in range(X.shape[0]):
        clf.partial_fit(X[t:t + 1], y[t:t + 1], classes=[-1.0, 1.0])
        h = hist[t]
        # oldest first: the ring buffer starts at head once full (storage order)
        n = int(clf._istate[0])
        head = int(clf._istate[1])
        order = [(head + i) % n for i in range(n)] if n == B else list(range(n))
        got_t = clf._sv_t[order]
        got_w = clf._coef[order]
        want_t = np.array([a[0] for a in h["active"]])
        want_w = np.array([a[1] * a[2] for a in h["active"]])
        assert np.array_equal(got_t, want_t), f"active set / removal order differs at t={t}"
        np.testing.assert_allclose(got_w, want_w, rtol=1e-9, atol=1e-12)
        assert clf.n_mistakes_ == h["M"]
        np.testing.assert_allclose(clf.Q_, h["Q"], rtol=1e-9, atol=1e-12)
        removals += h["removed"] is not None
    assert removals > 20  # the stream exercised shrinking and removal
    assert any(hh["phi"] < 1.0 for hh in hist)  # and the self-tuned shrinking was active


def test_forgetron_phi_is_largest_feasible(rng):
    for _ in range(500):
        sigma = rng.uniform(0.01, 2.0)
        mu = rng.normal(scale=2.0)
        M = int(rng.integers(1, 200))
        Q = rng.uniform(0.0, 15.0 / 32.0 * (M - 1) + 1e-12)
        phi = forgetron_phi(sigma, mu, Q, M)

        def g(p):
            lam = p * sigma
            return Q + lam * lam + 2 * lam - 2 * lam * p * mu - 15.0 / 32.0 * M

        assert 0.0 <= phi <= 1.0
        assert g(phi) <= 1e-9 * max(1.0, M)
        if phi < 1.0:  # no feasible phi slightly larger (up to the next infeasible stretch)
            assert g(min(1.0, phi + 1e-6)) > 0.0


def test_forgetron_invariant_Q_bounded_by_mistakes(rng):
    X, y = _xor(3000, rng, noise=0.25)
    clf = ForgetronClassifier(budget=20, gamma=0.7)
    for chunk in np.array_split(np.arange(3000), 30):
        clf.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
        assert clf.Q_ <= 15.0 / 32.0 * clf.n_mistakes_ + 1e-9
        assert clf.n_support_.sum() <= 20
        assert np.all(np.abs(clf.dual_coef_) <= 1.0 + 1e-12)


# ---------------------------------------------------------------------------- Perceptron
def test_kernel_perceptron_budget_oldest_removal_matches_reference(rng):
    X, y = _xor(300, rng, noise=0.2)
    K = ref.kernel("rbf", gamma=0.7)
    want = ref.kernel_perceptron(X, y, K, budget=10)
    clf = PerceptronClassifier(budget=10, kernel="rbf", gamma=0.7).fit(X, y)
    n = int(clf._istate[0])
    head = int(clf._istate[1])
    order = [(head + i) % n for i in range(n)]
    assert clf._sv_t[order].tolist() == [t for t, _ in want]
    assert clf._coef[order].tolist() == [c for _, c in want]


def test_kernel_perceptron_unbounded_and_poly_match_reference(rng):
    X, y = _xor(250, rng, noise=0.1)
    K = ref.kernel("poly", gamma=0.5, degree=2, coef0=1.0)
    want = ref.kernel_perceptron(X, y, K, budget=None)
    clf = PerceptronClassifier(kernel="poly", gamma=0.5, degree=2, coef0=1.0)
    for chunk in np.array_split(np.arange(250), 7):  # capacity grows between chunks
        clf.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
    n = int(clf._istate[0])
    assert clf._sv_t[:n].tolist() == [t for t, _ in want]
    np.testing.assert_array_equal(clf._coef[:n], [c for _, c in want])


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_linear_perceptron_matches_reference(rng, fit_intercept):
    X, y = _linear(500, rng)
    w, b = ref.linear_perceptron(X, y, fit_intercept)
    clf = PerceptronClassifier(fit_intercept=fit_intercept).fit(X, y)
    np.testing.assert_allclose(clf.coef_[0], w, rtol=1e-12, atol=1e-12)
    assert clf.intercept_[0] == pytest.approx(b)


# ---------------------------------------------------------------------------- Pegasos
@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_pegasos_matches_reference_across_chunks(rng, k, fit_intercept):
    X, y = _linear(403, rng)
    lam = 1e-2
    w, b, norms = ref.pegasos(X, y, lam, k, fit_intercept, flush=True)
    clf = PegasosClassifier(lambda_=lam, k=k, fit_intercept=fit_intercept).fit(X, y)
    np.testing.assert_allclose(clf.coef_[0], w, rtol=1e-10, atol=1e-12)
    assert clf.intercept_[0] == pytest.approx(b, rel=1e-10, abs=1e-12)
    assert clf.n_steps_ == len(norms)
    # partial_fit in odd-sized chunks keeps the blocks contiguous: same model before flush
    w2, b2, _ = ref.pegasos(X, y, lam, k, fit_intercept, flush=False)
    inc = PegasosClassifier(lambda_=lam, k=k, fit_intercept=fit_intercept)
    for chunk in np.array_split(np.arange(403), 13):
        inc.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
    np.testing.assert_allclose(inc.coef_[0], w2, rtol=1e-10, atol=1e-12)
    inc.flush()
    np.testing.assert_allclose(inc.coef_, clf.coef_, rtol=1e-12, atol=1e-14)


def test_pegasos_norm_projection_active_and_respected(rng):
    X, y = _linear(600, rng, noise=0.3)
    lam = 0.05
    _, _, norms = ref.pegasos(X, y, lam, 1)
    radius = 1 / np.sqrt(lam)
    assert max(norms) == pytest.approx(radius)  # the projection was active
    clf = PegasosClassifier(lambda_=lam, k=1)
    for i in range(200):
        clf.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1.0, 1.0])
        nrm = np.hypot(np.linalg.norm(clf.coef_), clf.intercept_[0])
        assert nrm <= radius * (1 + 1e-12)


# ---------------------------------------------------------------------------- BSGD
@pytest.mark.parametrize("maintenance", ["removal", "projection", "merging"])
def test_bsgd_matches_reference(rng, maintenance):
    X, y = _xor(150, rng, noise=0.15)
    lam, B, gamma = 1e-2, 8, 0.7
    want = ref.bsgd(X, y, ref.kernel("rbf", gamma=gamma), lam, B, maintenance)
    clf = BSGDClassifier(budget=B, gamma=gamma, lambda_=lam, maintenance=maintenance)
    clf.fit(X, y)
    assert clf.n_maintenance_ > 50
    Xw = np.array([e[0] for e in want])
    aw = np.array([e[1] for e in want])
    # compare the functions (SV order differs): on the data and on the SVs
    K = ref.kernel("rbf", gamma=gamma)
    T = np.vstack([X[:50], Xw])
    fw = np.array([sum(a * K(xs, x) for xs, a in zip(Xw, aw)) for x in T])
    tol = 1e-4 if maintenance == "merging" else 1e-8   # merging: h to the search tolerance
    np.testing.assert_allclose(clf.decision_function(T), fw, rtol=tol, atol=tol * np.abs(fw).max())
    assert clf.n_support_.sum() == len(want)


def test_merge_h_maximises_merged_weight(rng):
    for _ in range(200):
        a = rng.uniform(0.01, 0.99)
        k = rng.uniform(1e-4, 0.999)
        h = merge_h(a, k, 1e-8)
        grid = np.linspace(0, 1, 20001)
        s = a * k ** ((1 - grid) ** 2) + (1 - a) * k ** (grid ** 2)
        s_h = a * k ** ((1 - h) ** 2) + (1 - a) * k ** (h ** 2)
        assert s_h >= s.max() - 1e-9


def test_bsgd_cached_kernel_matrix_and_coefficients(rng):
    X, y = _xor(2000, rng, noise=0.2)
    for maintenance in ("merging", "projection", "removal"):
        clf = BSGDClassifier(budget=15, gamma=0.7, lambda_=1e-3, maintenance=maintenance)
        for chunk in np.array_split(np.arange(2000), 10):
            clf.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
            n = int(clf._istate[0])
            SV = clf._SV[:n]                      # the cache is in storage order
            Kt = np.exp(-0.7 * ((SV[:, None, :] - SV[None, :, :]) ** 2).sum(-1))
            np.testing.assert_allclose(clf._Kc[:n, :n], Kt, rtol=1e-12, atol=1e-12)
            assert n <= 15


def test_bsgd_without_maintenance_is_kernel_pegasos(rng):
    """Budget larger than the stream: BSGD is exactly kernel Pegasos (no maintenance)."""
    X, y = _xor(120, rng)
    want = ref.bsgd(X, y, ref.kernel("rbf", gamma=0.5), 1e-2, 10**6, "removal")
    clf = BSGDClassifier(budget=200, gamma=0.5, lambda_=1e-2).fit(X, y)
    assert clf.n_maintenance_ == 0
    n = int(clf._istate[0])                       # storage order
    np.testing.assert_allclose(clf._SV[:n], [e[0] for e in want])
    np.testing.assert_allclose(clf._coef[:n], [e[1] for e in want], rtol=1e-12)


# ---------------------------------------------------------------------------- invariants
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), B=st.integers(2, 12), which=st.integers(0, len(ALL_BUDGETED) - 1),
       chunks=st.integers(1, 6))
def test_budget_never_exceeded(seed, B, which, chunks):
    r = np.random.default_rng(seed)
    X, y = _xor(int(r.integers(5, 200)), r, noise=0.3)
    clf = ALL_BUDGETED[which](B)
    for idx in np.array_split(np.arange(X.shape[0]), chunks):
        if idx.size == 0:
            continue
        clf.partial_fit(X[idx], y[idx], classes=[-1.0, 1.0])
        assert clf.n_support_.sum() <= B
        if not isinstance(clf, RandomBudgetClassifier):
            assert clf._SV.shape[0] <= B + 1   # state sized once by the budget
        else:
            assert clf._RX.shape[0] == B and clf._engine.capacity == B
        assert np.all(np.isfinite(clf.dual_coef_))


# ---------------------------------------------------------------------------- interface
ALL = [
    lambda: PerceptronClassifier(),
    lambda: PerceptronClassifier(kernel="rbf", gamma=0.7),
    lambda: PerceptronClassifier(budget=20, kernel="rbf", gamma="auto"),
    lambda: ForgetronClassifier(budget=20, gamma=0.7),
    lambda: PegasosClassifier(lambda_=1e-3, k=4),
    lambda: BSGDClassifier(budget=20, gamma=0.7, lambda_=1e-3),
    lambda: BSGDClassifier(budget=20, kernel="poly", degree=2, lambda_=1e-3, maintenance="projection"),
    lambda: RandomBudgetClassifier(budget=20, gamma=0.7, C=10.0, random_state=3),
]


@pytest.mark.parametrize("make", ALL)
def test_state_round_trip_and_pickle_continue_bit_identically(rng, make):
    X, y = _xor(600, rng, noise=0.2)
    labels = np.where(y > 0, "yes", "no")
    a = make().partial_fit(X[:301], labels[:301])
    b = pickle.loads(pickle.dumps(a))
    c = make()
    c.partial_fit(X[:3], labels[:3], classes=["no", "yes"])
    c._reset_fitted()
    c.classes_, c.n_features_in_ = a.classes_.copy(), a.n_features_in_
    c._set_state(a._get_state())
    for m in (a, b, c):
        m.partial_fit(X[301:], labels[301:])
    fa = a.decision_function(X)
    assert np.array_equal(fa, b.decision_function(X))
    assert np.array_equal(fa, c.decision_function(X))
    assert set(a.predict(X)) <= {"no", "yes"}


@pytest.mark.parametrize("make", ALL)
def test_memory_bytes_is_the_size_of_the_state_arrays(rng, make):
    """memory_bytes() is the bytes of the arrays the learner holds, for every variant
    (primal / kernel, Pegasos blocks, BSGD projection), and stays so as the stream goes on."""
    X, y = _xor(600, rng)
    clf = make().partial_fit(X[:40], y[:40])
    first = clf.memory_bytes()
    assert first == sum(a.nbytes for a in live_arrays(clf))
    clf.partial_fit(X[40:], y[40:])
    assert clf.memory_bytes() == sum(a.nbytes for a in live_arrays(clf))
    if isinstance(clf, PerceptronClassifier) and clf.budget is None and clf.kernel != "linear":
        assert clf.memory_bytes() > first         # unbounded: the store has grown
    else:
        assert clf.memory_bytes() == first        # fixed by the parameters and d


@pytest.mark.parametrize("make", ALL)
def test_same_parameters_same_model_and_input_not_mutated(rng, make):
    X, y = _xor(300, rng)
    X0, y0 = X.copy(), y.copy()
    f1 = make().fit(X, y).decision_function(X)
    f2 = make().fit(X, y).decision_function(X)
    assert np.array_equal(f1, f2)
    assert np.array_equal(X, X0) and np.array_equal(y, y0)


@pytest.mark.parametrize("make", ALL)
def test_learn_one_equals_partial_fit(rng, make):
    X, y = _xor(60, rng)
    a = make()
    for i in range(60):
        a.learn_one(X[i], y[i], classes=[-1.0, 1.0])
    b = make().partial_fit(X, y)
    if isinstance(b, PegasosClassifier):
        assert np.array_equal(a.coef_, b.coef_)
    elif isinstance(b, RandomBudgetClassifier):
        # the same reservoir; the exact SVM on it is reached by other exact updates (each
        # call learns the slots it replaced), so compare with partial_fit on single rows
        assert np.array_equal(a._RX, b._RX) and np.array_equal(a._Ry, b._Ry)
        c = make()
        for i in range(60):
            c.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1.0, 1.0])
        assert np.array_equal(a.decision_function(X), c.decision_function(X))
    else:
        assert np.array_equal(a.decision_function(X), b.decision_function(X))
    assert a.predict_one(X[0]) == a.predict(X[:1])[0]


@pytest.mark.parametrize("bad, match", [
    (dict(maintenance="merging", kernel="poly"), "needs kernel='rbf'"),
    (dict(maintenance="merge"), "maintenance must be"),
    (dict(lambda_=0.0), "lambda_ must be"),
    (dict(budget=1), "budget"),
    (dict(kernel="sigmoid"), "kernel"),
    (dict(gamma=-1.0), "gamma"),
])
def test_bad_parameters_raise_clear_errors(rng, bad, match):
    X, y = _xor(50, rng)
    with pytest.raises(ValueError, match=match):
        BSGDClassifier(**bad).fit(X, y)


def test_failed_calls_leave_model_unchanged(rng):
    X, y = _xor(200, rng)
    for clf in (ForgetronClassifier(budget=10, gamma=0.7), BSGDClassifier(budget=10, gamma=0.7)):
        clf.partial_fit(X[:100], y[:100])
        before = clf._get_state()
        Xbad = X[100:].copy()
        Xbad[50, 1] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            clf.partial_fit(Xbad, y[100:])
        if isinstance(clf, ForgetronClassifier):
            with pytest.raises(ValueError, match="sample weights"):
                clf.partial_fit(X[100:], y[100:], sample_weight=np.full(100, 2.0))
        clf.budget = 11
        with pytest.raises(ValueError, match="call fit"):
            clf.partial_fit(X[100:], y[100:])
        clf.budget = 10
        after = clf._get_state()
        for k in before:
            assert np.array_equal(before[k], after[k]), k


def test_learners_learn(rng):
    """Sanity of accuracy on problems each should solve (not a paper target)."""
    X, y = _xor(4000, rng, noise=0.05)
    Xt, yt = _xor(2000, rng, noise=0.0)
    assert BSGDClassifier(budget=50, gamma=0.7, lambda_=1e-4).fit(X, y).score(Xt, yt) > 0.9
    assert ForgetronClassifier(budget=50, gamma=0.7).fit(X, y).score(Xt, yt) > 0.8
    assert PerceptronClassifier(budget=50, kernel="rbf", gamma=0.7).fit(X, y).score(Xt, yt) > 0.75
    X, y = _linear(4000, rng)
    Xt, yt = _linear(2000, rng, noise=0.0)
    assert PegasosClassifier(lambda_=1e-3, k=20).fit(X, y).score(Xt, yt) > 0.9
    assert PerceptronClassifier().fit(X, y).score(Xt, yt) > 0.85


def test_gamma_scale_and_auto_fixed_at_first_chunk(rng):
    X, y = _xor(300, rng)
    X = X * 3.0
    clf = ForgetronClassifier(budget=10, gamma="scale").partial_fit(X[:100], y[:100])
    assert clf._kpar[0] == pytest.approx(1.0 / (2 * X[:100].var()))   # as sklearn's SVC
    clf.partial_fit(X[100:], y[100:])
    assert clf._kpar[0] == pytest.approx(1.0 / (2 * X[:100].var()))
    assert BSGDClassifier(gamma="auto").fit(X, y)._kpar[0] == 0.5
    assert BSGDClassifier().fit(X, y)._kpar[0] == 0.5


# ---------------------------------------------------------------------------- Random
def test_random_is_exact_svm_on_the_reservoir(rng):
    from sklearn.svm import SVC

    X, y = _xor(3000, rng, noise=0.1)
    clf = RandomBudgetClassifier(budget=60, gamma=0.7, C=10.0, random_state=7)
    for chunk in np.array_split(np.arange(3000), 9):
        clf.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
        Xs, ys = clf.sample_
        assert Xs.shape[0] == 60
        svc = SVC(C=10.0, gamma=0.7, tol=1e-12).fit(Xs, ys)
        f_ref = svc.decision_function(X[:500])
        np.testing.assert_allclose(clf.decision_function(X[:500]), f_ref,
                                   atol=1e-5 * np.abs(f_ref).max())
    # every sampled example comes from the stream
    assert all(np.any(np.all(X == xs, axis=1)) for xs in clf.sample_[0])


def test_random_reservoir_is_uniform():
    N, B, runs = 40, 8, 3000
    counts = np.zeros(N)
    X = np.arange(N, dtype=float).reshape(-1, 1)
    y = np.where(np.arange(N) % 2 == 0, 1.0, -1.0)
    for seed in range(runs):
        clf = RandomBudgetClassifier(budget=B, kernel="linear", random_state=seed)
        for chunk in np.array_split(np.arange(N), 3):
            clf.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0])
        counts[clf._RX[:, 0].astype(int)] += 1
    p = counts / runs
    sd = np.sqrt(B / N * (1 - B / N) / runs)
    assert np.all(np.abs(p - B / N) < 5 * sd)
    # chi-square on the inclusion counts (df = N - 1; 99.9% quantile about 73.4)
    chi2 = np.sum((counts - runs * B / N) ** 2 / (runs * B / N * (1 - B / N)))
    assert chi2 < 73.4


def test_random_learns_the_replacements_in_the_update_and_predicts_read_only(rng):
    """partial_fit leaves the exact SVM up to date with the reservoir; prediction and the
    fitted attributes only read the model, also from read-only arrays (an unpickled
    read-only memmap)."""
    X, y = _xor(400, rng)
    clf = RandomBudgetClassifier(budget=30, gamma=0.7, random_state=0).fit(X[:100], y[:100])
    clf.partial_fit(X[100:300], y[100:300])        # 200 more examples: slots replaced
    assert not clf._dirty.any()
    st = clf._engine.st
    live = clf._engine.live()
    assert live.size == 30 and np.array_equal(np.sort(clf._eslot), np.sort(live))
    np.testing.assert_array_equal(st.X[clf._eslot], clf._RX)
    np.testing.assert_array_equal(st.y[clf._eslot], clf._Ry)
    ref = pickle.loads(pickle.dumps(clf))
    arrays = [*st, clf._RX, clf._Ry, clf._dirty, clf._eslot, clf._istate, clf._kpar]
    for a in arrays:
        a.flags.writeable = False
    assert np.array_equal(clf.decision_function(X), ref.decision_function(X))
    assert np.array_equal(clf.dual_coef_, ref.dual_coef_)
    assert np.array_equal(clf.intercept_, ref.intercept_)
    assert clf.predict_one(X[0]) == ref.predict(X[:1])[0]


def test_random_loads_a_state_whose_replacements_were_left_to_prediction(rng, monkeypatch):
    """Models saved by the earlier lazy version may hold replaced slots not yet learned:
    loading learns them, as the update that replaced them now does."""
    X, y = _xor(300, rng)
    make = lambda: RandomBudgetClassifier(budget=20, gamma=0.7, C=10.0, random_state=4)
    lazy = make().fit(X[:100], y[:100])
    with monkeypatch.context() as m:
        m.setattr(RandomBudgetClassifier, "_sync", lambda self: None)
        lazy.partial_fit(X[100:], y[100:])
    state = lazy._get_state()
    assert state["_dirty"].any()
    back = make()
    back.classes_, back.n_features_in_ = lazy.classes_.copy(), lazy.n_features_in_
    back._set_state(state)
    assert not back._dirty.any()
    now = make().fit(X[:100], y[:100]).partial_fit(X[100:], y[100:])
    assert np.array_equal(back.decision_function(X), now.decision_function(X))


def test_random_with_weights_is_the_weighted_svm_on_its_reservoir(rng):
    """sample_weight and class_weight ride along with the sampled examples: the model is
    scikit-learn's SVC on the reservoir with those weights."""
    from sklearn.svm import SVC

    X, y = _xor(1500, rng, noise=0.1)
    w = rng.uniform(0.1, 4.0, size=X.shape[0])
    clf = RandomBudgetClassifier(budget=60, gamma=0.7, C=10.0, random_state=2,
                                 class_weight={1.0: 3.0})
    for chunk in np.array_split(np.arange(X.shape[0]), 5):
        clf.partial_fit(X[chunk], y[chunk], classes=[-1.0, 1.0], sample_weight=w[chunk])
        Xs, ys = clf.sample_
        ws = clf.sample_weight_
        # the reservoir holds each example with its own weight times its class weight
        idx = [int(np.flatnonzero(np.all(X == xs, axis=1))[0]) for xs in Xs]
        np.testing.assert_array_equal(ws, w[idx] * np.where(y[idx] > 0, 3.0, 1.0))
        svc = SVC(C=10.0, gamma=0.7, tol=1e-12).fit(Xs, ys, sample_weight=ws)
        f_ref = svc.decision_function(X[:500])
        np.testing.assert_allclose(clf.decision_function(X[:500]), f_ref,
                                   atol=1e-5 * np.abs(f_ref).max())


def test_random_weights_do_not_change_the_sample_and_weight_zero_is_absence(rng):
    X, y = _xor(600, rng, noise=0.1)
    make = lambda: RandomBudgetClassifier(budget=25, gamma=0.7, C=10.0, random_state=5)
    chunks = np.array_split(np.arange(X.shape[0]), 4)
    unit, heavy = make(), make()
    for c in chunks:
        unit.partial_fit(X[c], y[c], classes=[-1.0, 1.0])
        heavy.partial_fit(X[c], y[c], classes=[-1.0, 1.0], sample_weight=np.full(c.size, 2.5))
    assert np.array_equal(unit.sample_[0], heavy.sample_[0])
    assert np.all(heavy.sample_weight_ == 2.5) and np.all(unit.sample_weight_ == 1.0)
    # weight 0 is an example the stream never had: same reservoir and model bit for bit
    w = np.where(rng.random(X.shape[0]) < 0.3, 0.0, 1.0)
    zero, absent = make(), make()
    for c in chunks:
        zero.partial_fit(X[c], y[c], classes=[-1.0, 1.0], sample_weight=w[c])
        keep = c[w[c] > 0]
        absent.partial_fit(X[keep], y[keep], classes=[-1.0, 1.0])
    assert np.array_equal(zero.sample_[0], absent.sample_[0])
    assert np.array_equal(zero.decision_function(X), absent.decision_function(X))
    assert zero._istate[1] == absent._istate[1] == int(w.sum())


def test_random_loads_a_state_saved_before_weights(rng):
    """Files written before the reservoir kept weights have no ``_Rw``: they load as weight 1
    and continue exactly like the model that wrote them."""
    X, y = _xor(300, rng)
    make = lambda: RandomBudgetClassifier(budget=20, gamma=0.7, C=10.0, random_state=4)
    now = make().fit(X[:150], y[:150])
    state = now._get_state()
    del state["_Rw"]
    back = make()
    back.classes_, back.n_features_in_ = now.classes_.copy(), now.n_features_in_
    back._set_state(state)
    assert np.all(back.sample_weight_ == 1.0)
    now.partial_fit(X[150:], y[150:])
    back.partial_fit(X[150:], y[150:])
    assert np.array_equal(back.decision_function(X), now.decision_function(X))


@pytest.mark.parametrize("bad", ["abc", -1, 2.5, True])
def test_random_refuses_a_random_state_that_cannot_seed(bad):
    X, y = _xor(50, np.random.default_rng(0))
    clf = RandomBudgetClassifier(budget=10, gamma=0.7, random_state=bad)
    with pytest.raises(ValueError, match="random_state must be None, a non-negative int"):
        clf.fit(X, y)
    assert not clf.__sklearn_is_fitted__()
