"""Slow, explicit references for StreamSVM (paper 001): plain NumPy / SciPy.

Everything here works with the augmented points written out in full,
``p_n = [y_n x~_n ; (C s_n)^(-1/2) e_n]`` (paper eq. 3/7, ``x~ = [x ; b0]``), so the
geometry is checked without the bookkeeping shortcuts of the compiled code.
"""
import numpy as np
from scipy.optimize import brentq, minimize


def augmented_points(X, y_pm, C, sample_weight=None, b0=0.0):
    """Explicit augmented points, shape (n, d + 1 + n)."""
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    P = np.zeros((n, d + 1 + n))
    P[:, :d] = y_pm[:, None] * X
    P[:, d] = y_pm * b0
    pos = s > 0  # zero-weight rows are skipped by the learner; their slack entry is left 0
    P[np.flatnonzero(pos), d + 1 + np.flatnonzero(pos)] = 1.0 / np.sqrt(C * s[pos])
    return P


def lift_heights(C, sample_weight):
    """Squared heights ``h_n^2 = (1/s_min - 1/s_n)/C`` of the lifted points (weighted examples,
    see fastbudget/kernels/meb.py), ``s_min`` the smallest positive weight; 0 for weight 0."""
    s = np.asarray(sample_weight, dtype=float)
    pos = s > 0
    h2 = np.zeros(s.shape)
    h2[pos] = (1.0 / s[pos].min() - 1.0 / s[pos]) / C
    return h2


def exact_meb(P, tol=1e-12, h2=None):
    """Exact minimum enclosing ball of the rows of P through its dual QP.

    Dual: ``max_mu  mu . diag(G) - mu^T G mu`` over the simplex, ``G = P P^T``; the centre is
    ``mu P``. Solved by SLSQP from the uniform start, then certified: the primal radius
    (largest distance from the centre) and the square root of the dual value bracket the
    optimum. Returns ``(centre, radius_upper, radius_lower)``.

    With ``h2`` the rows are lifted points (row n at squared height ``h2[n]`` along its own
    direction, which the centre may not use): distances become ``sqrt(||c - p_n||^2 + h2[n]``)
    and the dual's linear term ``mu . (diag(G) + h2)``.
    """
    P = np.asarray(P, dtype=float)
    n = P.shape[0]
    h2 = np.zeros(n) if h2 is None else np.asarray(h2, dtype=float)
    G = P @ P.T
    dg = np.diag(G) + h2

    def neg_dual(mu):
        return -(mu @ dg - mu @ G @ mu)

    def grad(mu):
        return -(dg - 2.0 * G @ mu)

    res = minimize(neg_dual, np.full(n, 1.0 / n), jac=grad, method="SLSQP",
                   bounds=[(0.0, 1.0)] * n,
                   constraints=[{"type": "eq", "fun": lambda m: m.sum() - 1.0,
                                 "jac": lambda m: np.ones_like(m)}],
                   options={"ftol": tol, "maxiter": 2000})
    mu = np.clip(res.x, 0.0, None)
    mu /= mu.sum()
    c = mu @ P
    upper = np.sqrt((((P - c) ** 2).sum(axis=1) + h2).max())
    lower = np.sqrt(max(-neg_dual(mu), 0.0))
    return c, upper, lower


def exact_meb_of_balls(centres, radii, heights2=None):
    """Minimum ball enclosing balls (rows of ``centres``, ``radii``) by SLSQP on the SOCP
    ``min t  s.t.  sqrt(||c - c_i||^2 + q_i) + r_i <= t`` (``q = heights2``: lifted points,
    0 by default). Returns ``(centre, radius)``, radius recomputed at the returned centre."""
    A = np.asarray(centres, dtype=float)
    r = np.asarray(radii, dtype=float)
    q = np.zeros(len(r)) if heights2 is None else np.asarray(heights2, dtype=float)
    m, k = A.shape

    def far(c):
        return np.sqrt(((A - c) ** 2).sum(axis=1) + q) + r

    def cons(z, i):
        return z[-1] - far(z[:-1])[i]

    z0 = np.r_[A.mean(axis=0), far(A.mean(axis=0)).max() + 1.0]
    res = minimize(lambda z: z[-1], z0, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": cons, "args": (i,)} for i in range(m)],
                   options={"ftol": 1e-13, "maxiter": 3000})
    c = res.x[:-1]
    return c, float(far(c).max())


def _enclose_lifted(R, D, h2):
    """Smallest ball with centre on the segment towards a lifted point (subspace distance D,
    squared height h2) enclosing the ball of radius R and the point, found numerically (no
    closed form): the radius ``max(R + t, sqrt((D - t)^2 + h2))`` is smallest where its rising
    and falling parts cross (a root by Brent's method), or at ``t = D`` when they do not.
    Returns ``(t, R_new)``: how far the centre moves."""
    def gap(t):
        return R + t - np.sqrt((D - t) ** 2 + h2)
    t = D if gap(D) <= 0.0 else brentq(gap, 0.0, D, xtol=1e-300, rtol=4 * np.finfo(float).eps)
    return t, max(R + t, np.sqrt((D - t) ** 2 + h2))


def streamsvm_alg1_reference(X, y_pm, C, sample_weight=None, b0=0.0):
    """Algorithm 1 with the centre kept explicitly in the augmented space (eq. 4-6).

    Unequal weights: each point is lifted against the smallest weight seen so far (all radii
    grow when it falls) and the step is found numerically (``_enclose_lifted``).
    Returns ``(centre, R, M, P)``: the full centre vector (d + 1 + n,), the radius, the
    number of updates and the augmented points.
    """
    P = augmented_points(X, y_pm, C, sample_weight, b0)
    n = P.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    c = None
    R = 0.0
    M = 0
    inv_floor = 0.0
    for i in range(n):
        if s[i] <= 0:
            continue
        if c is None:
            c = P[i].copy()
            inv_floor = 1.0 / s[i]
            M = 1
            continue
        if 1.0 / s[i] > inv_floor:
            R = np.sqrt(R * R + (1.0 / s[i] - inv_floor) / C)
            inv_floor = 1.0 / s[i]
        h2 = (inv_floor - 1.0 / s[i]) / C
        dist = np.linalg.norm(P[i] - c)
        if np.sqrt(dist ** 2 + h2) >= R:
            if h2 == 0.0:
                delta = 0.5 * (dist - R)                  # eq. 4, 5
                c = c + delta / dist * (P[i] - c)         # eq. 6
                R = R + delta
            else:
                t, R = _enclose_lifted(R, dist, h2)
                c = c + t / dist * (P[i] - c)
            M += 1
    return c, R, M, P


def _enclose_items(a, b):
    """Smallest ball, centre on the segment between them, enclosing items ``a`` and ``b``
    (``(centre, radius, squared height)``; a lifted point is at that height above its centre,
    along a direction the centre may not use). Found numerically: the distance to ``a`` rises
    and the distance to ``b`` falls along the segment, so the best centre is where they cross
    (Brent's method), or an end of the segment. Returns a ball ``(centre, radius, 0.0)``."""
    (ca, ra, qa), (cb, rb, qb) = a, b
    D = np.linalg.norm(cb - ca)

    def gap(t):
        return np.sqrt(t * t + qa) + ra - np.sqrt((D - t) ** 2 + qb) - rb

    if gap(0.0) >= 0.0:
        t = 0.0
    elif gap(D) <= 0.0:
        t = D
    else:
        t = brentq(gap, 0.0, D, xtol=1e-300, rtol=4 * np.finfo(float).eps)
    R = max(np.sqrt(t * t + qa) + ra, np.sqrt((D - t) ** 2 + qb) + rb)
    return ca + t / D * (cb - ca), R, 0.0


def multiball_reference(X, y_pm, C, K, sample_weight=None, b0=0.0):
    """Sec. 4.3 with explicit augmented centres and the same greedy merge policy as the
    compiled code (merge the pair of the K+1 items whose enclosing ball is smallest), then the
    exact final merge (``exact_meb_of_balls``). Returns ``(items, final_centre, final_R, P)``
    where ``items`` is a list of (centre, radius, squared height).

    Unequal weights: a point is lifted (height against the smallest weight so far; when that
    falls every lifted point rises and every ball grows by the same squared amount); a point
    that is not enclosed becomes an item of radius 0 at its height, and merges go through
    ``_enclose_items``."""
    P = augmented_points(X, y_pm, C, sample_weight, b0)
    n = P.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    items = []
    inv_floor = 0.0
    for i in range(n):
        if s[i] <= 0:
            continue
        if inv_floor == 0.0:
            inv_floor = 1.0 / s[i]
        elif 1.0 / s[i] > inv_floor:
            eps = (1.0 / s[i] - inv_floor) / C
            items = [(c, r, q + eps) if r == 0.0 else (c, np.sqrt(r * r + eps), q)
                     for c, r, q in items]
            inv_floor = 1.0 / s[i]
        h2 = (inv_floor - 1.0 / s[i]) / C
        if any(np.sqrt(np.sum((P[i] - c) ** 2) + h2) < r for c, r, _ in items):
            continue
        new = (P[i].copy(), 0.0, h2)
        if len(items) < K:
            items.append(new)
            continue
        cand = items + [new]
        best = None
        for a in range(len(cand)):
            for b in range(a):
                v = _enclose_items(cand[a], cand[b])[1]
                if best is None or v < best[0]:
                    best = (v, a, b)
        _, a, b = best
        merged = _enclose_items(cand[a], cand[b])
        items = [cand[j] for j in range(len(cand)) if j not in (a, b)] + [merged]
    final = exact_meb_of_balls(np.array([c for c, _, _ in items]), np.array([r for _, r, _ in items]),
                               np.array([q for _, _, q in items]))
    return items, final[0], final[1], P


def streamsvm_kernel_alg1_reference(X, y_pm, C, kernel, b0=0.0):
    """Kernelized Algorithm 1 exactly as Sec. 4.2 prints it (equal weights).

    ``kernel(A, B)`` returns the Gram block. The centre is ``w = sum_m alpha_m phi~(x_m)``
    with slack part of squared norm ``xi^2 / C``; a point x is a core vector when its
    distance ``d = sqrt(alpha K alpha + k(x, x) - 2 y alpha k(X_core, x) + (xi^2 + 1)/C)``
    is at least R; then ``beta = (1 - R/d)/2``, ``alpha_{1:M} *= 1 - beta``,
    ``alpha_{M+1} = beta y``, ``R += (d - R)/2``, ``xi^2 = (1 - beta)^2 xi^2 + beta^2``.
    ``phi~`` carries the constant feature b0 (``k~ = k + b0^2``; b0 = 0 is the paper).
    Returns ``(core, alpha, R, xi2)``: row indices of the core vectors in stream order and
    their signed coefficients.
    """
    X = np.asarray(X, dtype=float)

    def K(A, B):
        return kernel(A, B) + b0 * b0

    core = [0]
    alpha = np.array([float(y_pm[0])])
    R, xi2 = 0.0, 1.0
    for i in range(1, X.shape[0]):
        S = X[core]
        x = X[i:i + 1]
        d2 = alpha @ K(S, S) @ alpha + K(x, x)[0, 0] - 2.0 * y_pm[i] * alpha @ K(S, x)[:, 0] \
            + (xi2 + 1.0) / C
        d = np.sqrt(max(d2, 0.0))
        if d >= R:
            beta = 0.5 * (1.0 - R / d)
            alpha = np.r_[alpha * (1.0 - beta), beta * y_pm[i]]
            core.append(i)
            R += 0.5 * (d - R)
            xi2 = (1.0 - beta) ** 2 * xi2 + beta ** 2
    return np.array(core), alpha, R, xi2


def coreset_meb_certificate(K, y_pm, C, alpha, s=None, s_min=None):
    """Certificate for a core-set solve: the MEB of the core vectors (augmented kernel matrix
    ``K``, signed coefficients ``alpha = mu y``, weights ``s``). Returns ``(r2_far, r2_dual,
    gap)``: the largest squared distance of a core vector from the centre, the dual value
    ``sum mu_k ||p_k||^2 - ||c||^2`` (no ball enclosing the core set has a smaller squared
    radius), and the spread ``max a_k - min_{mu_k > 0} a_k`` of ``a_k = d_k^2 - ||c||^2``
    (0 at the optimum, KKT). ``s_min``: the smallest weight of the stream (default: of the
    core vectors), against which the weighted points are lifted."""
    s = np.ones(len(y_pm)) if s is None else np.asarray(s, dtype=float)
    mu = alpha * y_pm
    G = K * np.outer(y_pm, y_pm) + np.diag(1.0 / (C * s))
    h2 = (1.0 / (s.min() if s_min is None else s_min) - 1.0 / s) / C
    diag = np.diag(G) + h2
    Q = mu @ G @ mu
    a = diag - 2.0 * G @ mu
    return (a + Q).max(), mu @ diag - Q, a.max() - a[mu > 0].min()
