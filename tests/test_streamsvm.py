"""StreamSVM (paper 001): compiled ball updates against explicit augmented-space references."""
import copy
import pickle

import numpy as np
import pytest
from scipy.optimize import minimize

from _helpers import live_arrays
from fastbudget.base import NotFittedError
from fastbudget.estimators.streamsvm import StreamSVMClassifier
from fastbudget.kernels import meb
from fastbudget.kernels.kernel import KERNEL_CODES, kernel_value
from reference.meb_reference import (augmented_points, coreset_meb_certificate, exact_meb,
                                     exact_meb_of_balls, lift_heights, multiball_reference,
                                     streamsvm_alg1_reference, streamsvm_kernel_alg1_reference)

LIN1 = dict(kernel="poly", degree=1, gamma=1.0, coef0=0.0, method="ball")  # linear via the kernel path


def _stream(rng, n=60, d=3, shift=1.0):
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    X = rng.normal(size=(n, d)) + shift * y[:, None]
    return X, y


def _kernel_aug(clf, A, B):
    cfg = clf._cfg
    kpar = np.asarray(cfg["kpar"])
    K = np.array([[kernel_value(cfg["code"], kpar, a, b) for b in B] for a in A])
    return K + cfg["b0"] ** 2


def _augmented_distances(clf, X, y_pm, sw=None):
    """Exact distance of every point's augmented image to the fitted centre (kernel path).

    A core vector m owns the slack coordinate of its example, with weight
    lambda_m = alpha_m y_m, so its distance carries -2 lambda_m / (C s_m) (paper eq. 3).
    """
    C = clf._cfg["C"]
    sw = np.ones(len(y_pm)) if sw is None else sw
    SV, alpha, sv_s = clf.support_vectors_, clf.dual_coef_[0], clf._sv_s
    wn2 = alpha @ _kernel_aug(clf, SV, SV) @ alpha
    f = _kernel_aug(clf, X, SV) @ alpha
    kxx = np.diag(_kernel_aug(clf, X, X))
    lam = np.zeros(len(y_pm))
    for m in range(SV.shape[0]):
        rows = np.flatnonzero(np.all(X == SV[m], axis=1))
        assert rows.size == 1
        lam[rows[0]] = alpha[m] * y_pm[rows[0]]
        assert sw[rows[0]] == sv_s[m]
    d2 = wn2 + kxx - 2 * y_pm * f + (clf.xi2_ + (1.0 - 2.0 * lam) / sw) / C
    d2 += lift_heights(C, sw)       # weighted examples are lifted points (kernels/meb.py notes)
    return np.sqrt(np.maximum(d2, 0.0)), wn2


# ------------------------------------------------------------------ Algorithm 1
@pytest.mark.parametrize("C,b0,weighted", [(1.0, 0.0, False), (0.3, 1.0, False), (20.0, 0.5, True)])
def test_alg1_matches_explicit_reference(rng, C, b0, weighted):
    X, y = _stream(rng, n=80)
    sw = rng.uniform(0.2, 3.0, size=len(y)) if weighted else None
    if weighted:
        sw[::7] = 0.0
    clf = StreamSVMClassifier(C=C, fit_intercept=b0 > 0, intercept_scaling=b0 if b0 > 0 else 1.0)
    clf.fit(X, y, sample_weight=sw)
    c, R, M, P = streamsvm_alg1_reference(X, y, C, sw, b0)
    d = X.shape[1]
    np.testing.assert_allclose(clf.coef_[0], c[:d], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(clf.intercept_[0], c[d] * b0, rtol=1e-10, atol=1e-12)
    assert clf.radius_ == pytest.approx(R, rel=1e-12)
    assert clf.xi2_ == pytest.approx(C * (c[d + 1:] ** 2).sum(), rel=1e-10)
    assert clf.n_core_ == M
    keep = np.ones(len(y), bool) if sw is None else sw > 0
    h2 = np.zeros(len(y)) if sw is None else lift_heights(C, sw)
    dist = np.sqrt(((P[keep] - c) ** 2).sum(axis=1) + h2[keep])
    assert dist.max() <= R * (1 + 1e-9)
    _, upper, lower = exact_meb(P[keep], h2=h2[keep])
    assert upper - lower <= 1e-6 * upper          # the reference is certified
    assert R >= lower * (1 - 1e-9)                # no enclosing ball is smaller than the MEB
    if not weighted:
        # 3/2 approximation (Zarrabi-Zadeh & Chan 2006) against the exact MEB of the same points
        assert R <= 1.5 * upper * (1 + 1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("L", [1, 4, 10])
def test_final_ball_encloses_every_point_and_is_within_3_2(seed, L):
    rng = np.random.default_rng(seed)
    X, y = _stream(rng, n=70, d=4, shift=0.5)
    C = [0.5, 1.0, 5.0, 50.0][seed]
    clf = StreamSVMClassifier(C=C, lookahead=L, **LIN1).fit(X, y)
    dist, _ = _augmented_distances(clf, X, y)
    assert dist.max() <= clf.radius_ * (1 + 1e-9)
    P = augmented_points(X, y, C, b0=1.0)
    _, upper, lower = exact_meb(P)
    assert lower * (1 - 1e-9) <= clf.radius_ <= 1.5 * upper * (1 + 1e-9)
    # the explicit linear path gives the same model
    lin = StreamSVMClassifier(C=C, lookahead=L).fit(X, y)
    np.testing.assert_allclose(lin.decision_function(X), clf.decision_function(X),
                               rtol=1e-8, atol=1e-10)
    assert lin.radius_ == pytest.approx(clf.radius_, rel=1e-9)
    assert lin.xi2_ == pytest.approx(clf.xi2_, rel=1e-8)


@pytest.mark.parametrize("L", [1, 5])
def test_rbf_ball_encloses_every_point(rng, L):
    X, y = _stream(rng, n=90, d=2, shift=0.3)
    sw = rng.uniform(0.5, 2.0, size=len(y))
    clf = StreamSVMClassifier(C=3.0, kernel="rbf", gamma=0.7, lookahead=L, method="ball")
    clf.fit(X, y, sample_weight=sw)
    dist, wn2 = _augmented_distances(clf, X, y, sw)
    assert dist.max() <= clf.radius_ * (1 + 1e-9)
    assert clf._wn2 == pytest.approx(wn2, rel=1e-9)   # carried ||w||^2 has not drifted
    # decision values are <w, phi(x)> with w = sum alpha_m phi(x_m)
    f = _kernel_aug(clf, X, clf.support_vectors_) @ clf.dual_coef_[0]
    np.testing.assert_allclose(clf.decision_function(X), f, rtol=1e-10, atol=1e-12)


def test_kernelized_matches_paper_coefficient_updates(rng):
    """Sec. 4.2: alpha_{1:n-1} *= 1 - beta, alpha_n = beta y_n, with beta = (1 - R/d)/2."""
    X, y = _stream(rng, n=40, d=2)
    clf = StreamSVMClassifier(C=1.0, kernel="rbf", gamma=0.5, fit_intercept=False, method="ball")
    alpha, SV, R, xi2 = None, None, 0.0, 1.0
    for i in range(len(y)):
        clf.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1.0, 1.0])
        K = lambda A, B: np.exp(-0.5 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
        if alpha is None:
            alpha, SV = np.array([y[0]]), X[:1].copy()
            continue
        kx = K(SV, X[i:i + 1])[:, 0]
        dist = np.sqrt(alpha @ K(SV, SV) @ alpha + 1.0 - 2 * y[i] * alpha @ kx + xi2 + 1.0)
        if dist >= R:
            beta = 0.5 * (1 - R / dist)
            alpha = np.r_[alpha * (1 - beta), beta * y[i]]
            SV = np.r_[SV, X[i:i + 1]]
            R = R + 0.5 * (dist - R)
            xi2 = xi2 * (1 - beta) ** 2 + beta ** 2
        np.testing.assert_allclose(clf.dual_coef_[0], alpha, rtol=1e-10, atol=1e-14)
        assert clf.radius_ == pytest.approx(R, rel=1e-10)
        assert clf.xi2_ == pytest.approx(xi2, rel=1e-10)


def _rbf(gamma):
    return lambda A, B: np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def _poly(gamma, coef0, degree):
    return lambda A, B: (gamma * A @ B.T + coef0) ** degree


@pytest.mark.parametrize("C", [1.0, 4.0])
@pytest.mark.parametrize("kernel,kw,fn", [
    ("rbf", dict(gamma=0.5), _rbf(0.5)),
    ("poly", dict(gamma=0.3, coef0=1.0, degree=3), _poly(0.3, 1.0, 3)),
    ("linear", dict(), lambda A, B: A @ B.T)])
def test_alg1_kernelized_same_core_set_and_coefficients_as_numpy_reference(rng, C, kernel, kw, fn):
    """Algorithm 1, kernelized (Sec. 4.2), fit_intercept=False: the compiled learner keeps the
    same core vectors (same rows, same order) with the same coefficients as the plain-NumPy
    rendering of the paper (tests/reference/meb_reference.py). The linear kernel goes through
    the kernel path with method='ball' and n_balls=1 only via poly of degree 1 (LIN1); here
    'linear' checks the explicit-w path's decision values against the same reference."""
    X, y = _stream(rng, n=120, d=3, shift=0.4)
    core, alpha, R, xi2 = streamsvm_kernel_alg1_reference(X, y, C, fn)
    clf = StreamSVMClassifier(C=C, kernel=kernel, fit_intercept=False, method="ball", **kw)
    clf.fit(X, y)
    assert clf.n_core_ == len(core)
    assert clf.radius_ == pytest.approx(R, rel=1e-10)
    assert clf.xi2_ == pytest.approx(xi2, rel=1e-9)
    if kernel == "linear":
        np.testing.assert_allclose(clf.coef_[0], alpha @ X[core], rtol=1e-9, atol=1e-12)
        return
    np.testing.assert_array_equal(clf.support_vectors_, X[core])
    np.testing.assert_allclose(clf.dual_coef_[0], alpha, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(clf.decision_function(X), fn(X, X[core]) @ alpha, rtol=1e-9,
                               atol=1e-12)


# ------------------------------------------------------------------ Algorithm 2 and solver
def test_ball_solver_matches_socp_reference(rng):
    for trial in range(6):
        m, k = rng.integers(2, 9), 4
        A = np.hstack([rng.normal(size=(m, k)), np.diag(rng.uniform(0.05, 1.0, m))])
        r = np.zeros(m)
        r[0] = rng.uniform(0.0, 2.0)
        if trial % 2:
            r = rng.uniform(0.0, 1.0, m)
        mu = np.zeros(m)
        status, rad = meb.meb_balls(A @ A.T, r, np.zeros(m), m, mu, 1e-6)
        assert status == meb.OK
        c = mu @ A
        assert (np.linalg.norm(A - c, axis=1) + r).max() <= rad * (1 + 1e-12)
        _, ref = exact_meb_of_balls(A, r)
        assert abs(rad - ref) <= 1e-6 * ref


def test_solver_with_lifted_points_matches_socp_reference(rng):
    """meb_balls with heights q: ``min t s.t. sqrt(||c - a_i||^2 + q_i) + r_i <= t``."""
    for trial in range(6):
        m, k = rng.integers(2, 9), 4
        A = np.hstack([rng.normal(size=(m, k)), np.diag(rng.uniform(0.05, 1.0, m))])
        r = np.zeros(m)
        r[0] = rng.uniform(0.0, 2.0) if trial % 2 else 0.0
        q = rng.uniform(0.0, 3.0, m) * (rng.random(m) < 0.7)
        q[0] = 0.0
        mu = np.zeros(m)
        status, rad = meb.meb_balls(A @ A.T, r, q, m, mu, 1e-8)
        assert status == meb.OK
        c = mu @ A
        assert (np.sqrt(((A - c) ** 2).sum(axis=1) + q) + r).max() <= rad * (1 + 1e-12)
        # reference: SLSQP on the same cone program, written out
        cons = [{"type": "ineq",
                 "fun": lambda z, i=i: z[-1] - r[i] - np.sqrt(np.sum((z[:-1] - A[i]) ** 2) + q[i])}
                for i in range(m)]
        z0 = np.r_[A.mean(axis=0), (np.sqrt(((A - A.mean(0)) ** 2).sum(1) + q) + r).max() + 1]
        res = minimize(lambda z: z[-1], z0, method="SLSQP", constraints=cons,
                       options={"ftol": 1e-13, "maxiter": 3000})
        ref = (np.sqrt(((A - res.x[:-1]) ** 2).sum(axis=1) + q) + r).max()
        assert abs(rad - ref) <= 1e-6 * ref


def _weighted_l2svm_dual(K, y_pm, C, s):
    """Weighted l2-SVM of the MEB formulation (Tsang et al.'s l2-SVM with example weights),
    ``min ||w||^2 - 2 rho + C sum_n s_n xi_n^2  s.t.  y_n <w, phi~(x_n)> >= rho - xi_n``, through
    its dual by SLSQP: ``min_mu mu^T (K o yy^T + diag(1 / (C s))) mu`` over the simplex, with
    ``K`` the augmented kernel matrix. Returns ``mu y`` (the coefficients of w)."""
    n = K.shape[0]
    Q = K * np.outer(y_pm, y_pm) + np.diag(1.0 / (C * s))
    res = minimize(lambda m: m @ Q @ m, np.full(n, 1.0 / n), jac=lambda m: 2.0 * Q @ m,
                   bounds=[(0.0, 1.0)] * n, method="SLSQP",
                   constraints=[{"type": "eq", "fun": lambda m: m.sum() - 1.0,
                                 "jac": lambda m: np.ones(n)}],
                   options={"ftol": 1e-15, "maxiter": 5000})
    assert res.success, res.message
    return res.x * y_pm


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_weighted_exact_solve_is_the_weighted_l2_svm(rng, kernel):
    """One exact solve (lookahead longer than the stream) of weighted examples is the weighted
    l2-SVM when k(x, x) is constant (as the MEB view of the paper needs: RBF, or points on a
    sphere): the lifted points make the MEB dual the SVM dual (kernels/meb.py notes). Without
    the lift the heavier examples pulled the centre less, not more."""
    X, y = _stream(rng, n=30, d=2, shift=0.4)
    if kernel == "linear":
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    s = np.where(y > 0, 4.0, 0.5) * rng.uniform(0.5, 1.5, size=len(y))
    C = 2.0
    clf = StreamSVMClassifier(C=C, kernel=kernel, gamma=0.5, lookahead=40, tol=1e-10,
                              intercept_scaling=1.0, method="ball")
    clf.fit(X, y, sample_weight=s)
    assert clf.n_solves_ == 1
    K = X @ X.T if kernel == "linear" else np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    K = K + 1.0                                         # the bias feature, b0 = 1
    coef = _weighted_l2svm_dual(K, y, C, s)
    np.testing.assert_allclose(clf.decision_function(X), K @ coef,
                               rtol=1e-4, atol=1e-5 * np.abs(K @ coef).max())


@pytest.mark.parametrize("params", [dict(), dict(lookahead=8), dict(n_balls=3, C=10.0),
                                    dict(kernel="rbf", gamma=0.1, C=10.0, lookahead=10,
                                         capacity=4000, on_full="ignore", method="ball"),
                                    dict(kernel="rbf", gamma=0.1, C=10.0, capacity=300)])
def test_more_weight_on_a_class_predicts_it_more(params):
    """The audit's defect: the positive fraction fell as the positive class weight grew
    (Algorithm 1, several balls and RBF; with lookahead it already rose)."""
    rng = np.random.default_rng(3)
    X, y = _stream(rng, n=3000, d=2, shift=0.6)
    frac = []
    for wpos in (0.05, 1.0, 20.0):
        clf = StreamSVMClassifier(class_weight={1.0: wpos}, **params).fit(X, y)
        frac.append(np.mean(clf.predict(X) > 0))
    assert frac[0] < frac[1] < frac[2], frac


def test_state_saved_without_weight_floor_still_loads(rng):
    """States saved before the weight floor (fst of length 3) load and continue: the floor is
    set by the next example, so equal weights continue exactly as before."""
    X, y = _stream(rng, n=80)
    for params in (dict(), dict(lookahead=5), dict(n_balls=2),
                   dict(kernel="rbf", lookahead=3, method="ball"), dict(kernel="rbf")):
        full = StreamSVMClassifier(**params).fit(X, y)
        half = StreamSVMClassifier(**params).fit(X[:40], y[:40])
        state = half._get_state()
        state["st_fst"] = state["st_fst"][:3]
        state["st_fst"][:] = state["st_fst"]
        old = StreamSVMClassifier(**params)
        old.classes_, old.n_features_in_ = half.classes_, half.n_features_in_
        old._set_state(state)
        old.partial_fit(X[40:], y[40:])
        np.testing.assert_allclose(old.decision_function(X), full.decision_function(X),
                                   rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("params", [dict(), dict(n_balls=2), dict(lookahead=4),
                                    dict(kernel="rbf", method="ball", lookahead=3)])
def test_state_saved_before_method_still_continues(rng, params):
    """States saved before ``method`` and ``on_full='evict'`` existed (no cfg_coreset,
    cfg_on_full_code) load and continue training exactly as the ball updates they ran."""
    X, y = _stream(rng, n=80)
    full = StreamSVMClassifier(**params).fit(X, y)
    half = StreamSVMClassifier(**params).fit(X[:40], y[:40])
    state = half._get_state()
    del state["cfg_coreset"], state["cfg_on_full_code"]
    old = StreamSVMClassifier(**params)
    old.classes_, old.n_features_in_ = half.classes_, half.n_features_in_
    old._set_state(state)
    old.partial_fit(X[40:], y[40:])
    np.testing.assert_allclose(old.decision_function(X), full.decision_function(X),
                               rtol=1e-12, atol=1e-14)


def test_lookahead_as_long_as_stream_gives_exact_meb(rng):
    X, y = _stream(rng, n=50, d=3, shift=0.5)
    C = 2.0
    clf = StreamSVMClassifier(C=C, lookahead=60).fit(X, y)   # buffer never fills: one final solve
    assert clf.n_solves_ == 1
    _, upper, lower = exact_meb(augmented_points(X, y, C, b0=1.0))
    assert lower * (1 - 1e-9) <= clf.radius_ <= upper * (1 + 1e-6)


def test_lookahead_radius_no_worse_than_alg1_on_average():
    """Lookahead keeps enclosure (tested above) and, over random orders, a smaller ball."""
    rng = np.random.default_rng(7)
    X, y = _stream(rng, n=300, d=5, shift=0.3)
    r1, r10 = [], []
    for s in range(10):
        p = np.random.default_rng(s).permutation(len(y))
        r1.append(StreamSVMClassifier(lookahead=1).fit(X[p], y[p]).radius_)
        r10.append(StreamSVMClassifier(lookahead=10).fit(X[p], y[p]).radius_)
    assert np.mean(r10) < np.mean(r1)


# ------------------------------------------------------------------ multiple balls
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("K", [2, 4])
def test_multiball_matches_explicit_reference(rng, K, weighted):
    X, y = _stream(rng, n=50, d=3, shift=0.5)
    C = 1.5
    sw = rng.uniform(0.2, 3.0, size=len(y)) if weighted else None
    clf = StreamSVMClassifier(C=C, n_balls=K).fit(X, y, sample_weight=sw)
    items, c, R, P = multiball_reference(X, y, C, K, sample_weight=sw, b0=1.0)
    balls = [(bc, br) for bc, br, _ in items]
    h2 = np.zeros(len(y)) if sw is None else lift_heights(C, sw)
    # every point sits in one of the K items, and the final ball encloses every point
    for i in range(len(P)):
        assert min(np.sqrt(np.sum((P[i] - bc) ** 2) + h2[i]) - br
                   - (np.sqrt(bq) if np.array_equal(bc, P[i]) else 0.0)
                   for bc, br, bq in items) <= 1e-9
    assert np.sqrt(((P - c) ** 2).sum(axis=1) + h2).max() <= R * (1 + 1e-9)
    assert clf.radius_ == pytest.approx(R, rel=1e-6)
    # the compiled live balls are the reference balls (as sets)
    st = clf._st
    nb = int(st["ist"][1])
    assert nb == len(balls)
    got = sorted(zip(st["Rb"][:nb], st["Wb"][:nb, 0]))
    want = sorted((br, bc[0]) for bc, br in balls)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-10, atol=1e-12)
    _, upper, lower = exact_meb(P, h2=h2)
    assert clf.radius_ >= lower * (1 - 1e-9)
    if not weighted:
        assert clf.radius_ <= 1.5 * upper * (1 + 1e-9)


# ------------------------------------------------------------------ core-set re-solve (default)
@pytest.mark.parametrize("kernel,kw", [("rbf", dict(gamma=0.5)),
                                       ("poly", dict(gamma=0.3, coef0=1.0, degree=2))])
@pytest.mark.parametrize("L,cap,weighted", [(1, 500, False), (10, 500, False), (1, 25, False),
                                            (10, 25, True)])
def test_coreset_is_the_meb_of_its_core_vectors(rng, kernel, kw, L, cap, weighted):
    """method='coreset': the final ball is the minimum enclosing ball of the core vectors to the
    solver's accuracy (KKT spread <= eps R^2, radius between the dual lower bound and the
    farthest core vector), the carried gradient g = G mu is exact also after evictions
    (capacity 25 < stream), and the decision function is sum alpha_m k~(x_m, x)."""
    from fastbudget.estimators import streamsvm as mod
    X, y = _stream(rng, n=150, d=2, shift=0.4)
    sw = rng.uniform(0.5, 2.0, size=len(y)) if weighted else None
    C = 2.0
    clf = StreamSVMClassifier(C=C, kernel=kernel, lookahead=L, capacity=cap, **kw)
    clf.fit(X, y, sample_weight=sw)
    assert clf._mode(clf._cfg) == "coreset"
    st = clf._st
    M = int(st["ist"][0])
    assert M <= cap
    if cap < 150 and kernel == "rbf":
        assert clf.n_skipped_ > 0                          # evictions happened
    SV, ysv, al, s = st["SV"][:M], st["ysv"][:M], st["alpha"][:M], st["sv_s"][:M]
    Kc = _kfn(clf)(SV, SV)
    G = Kc * np.outer(ysv, ysv) + np.diag(1.0 / (C * s))
    np.testing.assert_allclose(st["g"][:M], G @ (al * ysv), rtol=1e-9, atol=1e-12)
    assert np.all(al * ysv >= 0) and (al * ysv).sum() == pytest.approx(1.0, rel=1e-12)
    # the fitted (final) ball: only rows of non-zero coefficient are reported
    keep = np.flatnonzero(clf.dual_coef_[0] != 0)
    assert keep.size == clf.dual_coef_.shape[1]
    rows = [np.flatnonzero(np.all(SV == v, axis=1))[0] for v in clf.support_vectors_]
    alpha = np.zeros(M)
    alpha[rows] = clf.dual_coef_[0]
    s_min = None if sw is None else sw.min()
    far, dual, gap = coreset_meb_certificate(Kc, ysv, C, alpha, s, s_min=s_min)
    assert gap <= mod._CORESET_EPS * far * (1 + 1e-9)
    assert dual <= far * (1 + 1e-12)
    assert clf.radius_ ** 2 == pytest.approx(far, rel=1e-9)
    assert far - dual <= mod._CORESET_EPS * far
    f = _kfn(clf)(X, clf.support_vectors_) @ clf.dual_coef_[0]
    np.testing.assert_allclose(clf.decision_function(X), f, rtol=1e-10, atol=1e-12)


def test_coreset_tracks_exact_l2svm_on_a_small_stream(rng):
    """With room for every point and a stream short enough to be re-solved at every newcomer,
    the core-set model predicts as the exact MEB (the l2-SVM) of the whole stream."""
    X, y = _stream(rng, n=80, d=2, shift=0.5)
    clf = StreamSVMClassifier(C=1.0, kernel="rbf", gamma=0.5, lookahead=1).fit(X, y)
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1)) + 1.0
    coef = _weighted_l2svm_dual(K, y, 1.0, np.ones(len(y)))
    agree = np.mean(np.sign(clf.decision_function(X)) == np.sign(K @ coef))
    assert agree >= 0.95, agree


# ------------------------------------------------------------------ several balls, any kernel
def _kfn(clf):
    cfg = clf._cfg
    kpar = np.asarray(cfg["kpar"])
    return lambda A, B: np.array([[kernel_value(cfg["code"], kpar, a, b) for b in B] for a in A]) \
        + cfg["b0"] ** 2


def _item_distances(clf, X, y_pm):
    """Distance of every point's augmented image to every live item of a several-balls model
    with core vectors (before the final merge), computed from scratch in NumPy."""
    st, C = clf._st, clf._cfg["C"]
    M, nb = int(st["ist"][0]), int(st["ist"][1])
    SV, alpha, owner = st["SV"][:M], st["alpha"][:M], st["owner"][:M]
    K = _kfn(clf)
    KX, KS = K(X, SV), K(SV, SV)
    kxx = np.diag(K(X, X))
    out = np.empty((len(y_pm), nb))
    Gb = np.empty((nb, nb))
    for b in range(nb):
        ab = np.where(owner == b, alpha, 0.0)
        for c in range(nb):
            Gb[b, c] = ab @ KS @ np.where(owner == c, alpha, 0.0)
        lam = np.zeros(len(y_pm))
        for m in np.flatnonzero(owner == b):
            row = np.flatnonzero(np.all(X == SV[m], axis=1))
            assert row.size == 1
            lam[row[0]] = alpha[m] * y_pm[row[0]]
        xib = st["xib"][b]
        d2 = Gb[b, b] - 2 * y_pm * (KX @ ab) + kxx + (xib + 1.0 - 2.0 * lam) / C
        out[:, b] = np.sqrt(np.maximum(d2, 0.0))
    return out, Gb


def _meb_lower_bound(Kaug, y_pm, C):
    """sqrt of the MEB dual value at an SLSQP solution: no enclosing ball is smaller."""
    n = len(y_pm)
    G = Kaug * np.outer(y_pm, y_pm) + np.eye(n) / C
    dg = np.diag(G)
    res = minimize(lambda m: -(m @ dg - m @ G @ m), np.full(n, 1.0 / n),
                   jac=lambda m: -(dg - 2 * G @ m), bounds=[(0.0, 1.0)] * n, method="SLSQP",
                   constraints=[{"type": "eq", "fun": lambda m: m.sum() - 1.0}],
                   options={"ftol": 1e-14, "maxiter": 3000})
    mu = np.clip(res.x, 0, None)
    mu /= mu.sum()
    return np.sqrt(mu @ dg - mu @ G @ mu)


@pytest.mark.parametrize("K,L", [(3, 1), (3, 5), (2, 8)])
@pytest.mark.parametrize("kernel,kw", [("rbf", dict(gamma=0.5)),
                                       ("poly", dict(gamma=0.3, coef0=1.0, degree=2)),
                                       ("linear", dict())])
def test_several_balls_and_lookahead_every_kernel_certificates(rng, kernel, kw, K, L):
    """Sec. 4.3 for every kernel, alone (L = 1) and with lookahead (L > 1). Certificates:
    after the stream every point lies in one of the K items (the invariant of the multiple
    balls), the carried Gram of the item centres equals the one recomputed from the core
    vectors, the final merged ball encloses every point, and no enclosing ball is smaller
    than the exact MEB (dual lower bound)."""
    X, y = _stream(rng, n=60, d=2, shift=0.5)
    C = 2.0
    clf = StreamSVMClassifier(C=C, kernel=kernel, n_balls=K, lookahead=L, **kw).fit(X, y)
    if kernel == "linear" and L == 1:
        assert "Wb" in clf._st                     # the explicit-w path of stream_multiball
        return
    nb = int(clf._st["ist"][1])
    assert nb == K
    if L > 1:
        # absorb the buffer as the final ball does, on the live model
        assert int(clf._st["nbuf"][0]) < L
    dist, Gb = _item_distances(clf, X, y)
    np.testing.assert_allclose(clf._st["Gb"][:nb, :nb], Gb, rtol=1e-9, atol=1e-11)
    pending = np.zeros(len(y), bool)
    for row in clf._st["bufrow"][:int(clf._st["nbuf"][0])]:
        pending |= np.all(X == clf._st["SV"][row], axis=1)
    inside = (dist <= clf._st["Rb"][:nb] * (1 + 1e-9)).any(axis=1)
    assert inside[~pending].all()
    fin, _ = _augmented_distances(clf, X, y)
    assert fin.max() <= clf.radius_ * (1 + 1e-9)
    Kaug = _kfn(clf)(X, X)
    assert clf.radius_ >= _meb_lower_bound(Kaug, y, C) * (1 - 1e-7)
    f = _kfn(clf)(X, clf.support_vectors_) @ clf.dual_coef_[0]
    np.testing.assert_allclose(clf.decision_function(X), f, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("K", [2, 4])
def test_several_balls_kernel_path_matches_linear_path_and_reference(rng, K):
    """With L = 1 the core-vector implementation (linear kernel through 'poly', degree 1)
    gives the same balls as the explicit-w implementation and the explicit reference."""
    X, y = _stream(rng, n=50, d=3, shift=0.5)
    C = 1.5
    lin = StreamSVMClassifier(C=C, n_balls=K).fit(X, y)
    ker = StreamSVMClassifier(C=C, n_balls=K, capacity=100, **LIN1).fit(X, y)
    assert "Gb" in ker._st
    _, _, R, _ = multiball_reference(X, y, C, K, b0=1.0)
    assert ker.radius_ == pytest.approx(R, rel=1e-6)
    assert ker.radius_ == pytest.approx(lin.radius_, rel=1e-9)
    np.testing.assert_allclose(ker.decision_function(X), lin.decision_function(X), rtol=1e-7,
                               atol=1e-9)
    nb = int(ker._st["ist"][1])
    np.testing.assert_allclose(np.sort(ker._st["Rb"][:nb]), np.sort(lin._st["Rb"][:nb]),
                               rtol=1e-10)


def test_lookahead_with_one_ball_per_point_is_exact(rng):
    """K balls and a buffer that never fills: with as many balls as points every point is its
    own item and the final merge is the exact MEB."""
    X, y = _stream(rng, n=12, d=2, shift=0.5)
    clf = StreamSVMClassifier(C=1.0, kernel="rbf", gamma=0.5, n_balls=12, lookahead=4).fit(X, y)
    lower = _meb_lower_bound(_kfn(clf)(X, X), y, 1.0)
    assert lower * (1 - 1e-7) <= clf.radius_ <= lower * (1 + 1e-5)


# ------------------------------------------------------------------ streaming API
@pytest.mark.parametrize("params", [dict(), dict(lookahead=7), dict(n_balls=3),
                                    dict(kernel="rbf", gamma=0.5, lookahead=4, method="ball"),
                                    dict(kernel="rbf", gamma=0.5), dict(kernel="rbf", lookahead=4),
                                    dict(kernel="rbf", capacity=20)])
def test_chunking_does_not_change_the_model(rng, params):
    X, y = _stream(rng, n=90)
    labels = np.where(y > 0, "pos", "neg")
    full = StreamSVMClassifier(**params).fit(X, labels)
    chunked = StreamSVMClassifier(**params)
    for a in range(0, 90, 13):
        chunked.partial_fit(X[a:a + 13], labels[a:a + 13], classes=["neg", "pos"])
    one = StreamSVMClassifier(**params)
    for i in range(90):
        one.learn_one(X[i], labels[i], classes=["neg", "pos"])
    for other in (chunked, one):
        np.testing.assert_array_equal(other.decision_function(X), full.decision_function(X))
        assert other.radius_ == full.radius_ and other.n_core_ == full.n_core_
    assert set(full.predict(X)) <= {"neg", "pos"}
    assert full.score(X, labels) > 0.8


@pytest.mark.parametrize("params", [dict(lookahead=5), dict(n_balls=3),
                                    dict(kernel="rbf", lookahead=3, capacity=200, method="ball"),
                                    dict(kernel="rbf", lookahead=3, capacity=20)])
def test_state_roundtrip_pickle_deepcopy(rng, tmp_path, params):
    X, y = _stream(rng, n=80)
    a = StreamSVMClassifier(**params).partial_fit(X[:41], y[:41])
    state = a._get_state()
    for v in state.values():
        assert isinstance(v, (np.ndarray, int, float, bool, list))
    b = StreamSVMClassifier(**params)
    b.classes_, b.n_features_in_ = a.classes_.copy(), a.n_features_in_
    b._set_state(state)
    c = pickle.loads(pickle.dumps(a))
    e = copy.deepcopy(a)
    a.save(tmp_path / "m.npz")
    f = StreamSVMClassifier.load(tmp_path / "m.npz")
    for m in (a, b, c, e, f):
        m.partial_fit(X[41:], y[41:])
    for m in (b, c, e, f):
        np.testing.assert_array_equal(m.decision_function(X), a.decision_function(X))
        assert m.radius_ == a.radius_ and m.xi2_ == a.xi2_


def test_capacity_error_leaves_model_unchanged(rng):
    X, y = _stream(rng, n=200, shift=0.0)
    clf = StreamSVMClassifier(kernel="rbf", capacity=6, method="ball").partial_fit(X[:5], y[:5])
    before = clf._get_state()
    f_before = clf.decision_function(X)
    with pytest.raises(ValueError, match="capacity=6"):
        clf.partial_fit(X[5:], y[5:])
    after = clf._get_state()
    for k in before:
        np.testing.assert_array_equal(np.asarray(before[k]), np.asarray(after[k]))
    np.testing.assert_array_equal(clf.decision_function(X), f_before)
    ign = StreamSVMClassifier(kernel="rbf", capacity=6, on_full="ignore", method="ball").fit(X, y)
    assert ign.n_core_ == 6 and ign.n_skipped_ > 0


@pytest.mark.parametrize("bad,msg", [
    (dict(C=0.0), "C must be"), (dict(lookahead=0), "lookahead"), (dict(n_balls=1.5), "n_balls"),
    (dict(kernel="sigmoid"), "kernel"), (dict(on_full="drop"), "on_full"),
    (dict(method="coreset", n_balls=2), "coreset"), (dict(on_full="evict", method="ball"), "evict"),
    (dict(method="exact"), "method"),
    (dict(tol=2.0), "tol"),
])
def test_bad_parameters(rng, bad, msg):
    X, y = _stream(rng, n=20)
    with pytest.raises(ValueError, match=msg):
        StreamSVMClassifier(**bad).fit(X, y)


def test_input_errors(rng):
    X, y = _stream(rng, n=20)
    clf = StreamSVMClassifier()
    with pytest.raises(NotFittedError):
        clf.predict(X)
    clf.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:, :2], y)
    with pytest.raises(ValueError, match="not among the classes"):
        clf.partial_fit(X, np.full(20, 5.0))
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.partial_fit(Xn, y)
    with pytest.raises(ValueError, match="one class"):
        StreamSVMClassifier().partial_fit(X[:1], y[:1])


def test_zero_weight_equals_dropping_the_row(rng):
    X, y = _stream(rng, n=50)
    sw = np.ones(50)
    sw[[3, 17, 30]] = 0.0
    keep = sw > 0
    for params in (dict(), dict(lookahead=4), dict(n_balls=2),
                   dict(kernel="rbf", lookahead=3, method="ball"), dict(kernel="rbf", capacity=15)):
        a = StreamSVMClassifier(**params).fit(X, y, sample_weight=sw)
        b = StreamSVMClassifier(**params).fit(X[keep], y[keep])
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))



@pytest.mark.parametrize("params", [dict(), dict(lookahead=7), dict(n_balls=3),
                                    dict(kernel="rbf", gamma=0.5, lookahead=4, capacity=150,
                                         method="ball"), dict(kernel="rbf", capacity=150)])
def test_memory_bytes_is_the_size_of_the_arrays_held(rng, params):
    """memory_bytes() counts the state (fixed by the parameters and d) and the fitted
    attributes; with a kernel the latter follow the core vectors held."""
    X, y = _stream(rng, n=120)
    clf = StreamSVMClassifier(**params).partial_fit(X[:30], y[:30])
    first = clf.memory_bytes()
    assert first == sum(a.nbytes for a in live_arrays(clf))
    clf.partial_fit(X[30:], y[30:])
    assert clf.memory_bytes() == sum(a.nbytes for a in live_arrays(clf))
    if params.get("kernel", "linear") == "linear":
        assert clf.memory_bytes() == first
    else:
        assert clf.memory_bytes() > first       # more core vectors than after 30 examples


def test_bench_script_runs():
    """perf/bench_streamsvm.py calls meb.stream_linear directly (its "compiled loop only"
    rows), so a change of that signature must be carried into it: it raised TypeError after
    the weight floor (fst[3]) and the solver scratch q were added."""
    import os
    import pathlib
    import subprocess
    import sys
    root = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    r = subprocess.run([sys.executable, str(root / "perf" / "bench_streamsvm.py"), "--n", "2000",
                        "--repeats", "1"], capture_output=True, text=True, cwd=root, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "compiled loop only (L=10)" in r.stdout
