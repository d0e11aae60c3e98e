"""Slow, explicit references for StreamSVM (paper 001): plain NumPy / SciPy.

Everything here works with the augmented points written out in full,
``p_n = [y_n x~_n ; (C s_n)^(-1/2) e_n]`` (paper eq. 3/7, ``x~ = [x ; b0]``), so the
geometry is checked without the bookkeeping shortcuts of the compiled code.
"""
import numpy as np
from scipy.optimize import minimize


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


def exact_meb(P, tol=1e-12):
    """Exact minimum enclosing ball of the rows of P through its dual QP.

    Dual: ``max_mu  mu . diag(G) - mu^T G mu`` over the simplex, ``G = P P^T``; the centre is
    ``mu P``. Solved by SLSQP from the uniform start, then certified: the primal radius
    (largest distance from the centre) and the square root of the dual value bracket the
    optimum. Returns ``(centre, radius_upper, radius_lower)``.
    """
    P = np.asarray(P, dtype=float)
    n = P.shape[0]
    G = P @ P.T
    dg = np.diag(G).copy()

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
    upper = np.sqrt(((P - c) ** 2).sum(axis=1).max())
    lower = np.sqrt(max(-neg_dual(mu), 0.0))
    return c, upper, lower


def exact_meb_of_balls(centres, radii):
    """Minimum ball enclosing balls (rows of ``centres``, ``radii``) by SLSQP on the SOCP
    ``min t  s.t.  ||c - c_i|| + r_i <= t``. Returns ``(centre, radius)``, radius recomputed
    as ``max_i ||c - c_i|| + r_i`` at the returned centre."""
    A = np.asarray(centres, dtype=float)
    r = np.asarray(radii, dtype=float)
    m, k = A.shape

    def cons(z, i):
        return z[-1] - r[i] - np.linalg.norm(z[:-1] - A[i])

    z0 = np.r_[A.mean(axis=0), (np.linalg.norm(A - A.mean(axis=0), axis=1) + r).max() + 1.0]
    res = minimize(lambda z: z[-1], z0, method="SLSQP",
                   constraints=[{"type": "ineq", "fun": cons, "args": (i,)} for i in range(m)],
                   options={"ftol": 1e-13, "maxiter": 3000})
    c = res.x[:-1]
    return c, float((np.linalg.norm(A - c, axis=1) + r).max())


def streamsvm_alg1_reference(X, y_pm, C, sample_weight=None, b0=0.0):
    """Algorithm 1 with the centre kept explicitly in the augmented space (eq. 4-6).

    Returns ``(centre, R, M, P)``: the full centre vector (d + 1 + n,), the radius, the
    number of updates and the augmented points.
    """
    P = augmented_points(X, y_pm, C, sample_weight, b0)
    n = P.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    c = None
    R = 0.0
    M = 0
    for i in range(n):
        if s[i] <= 0:
            continue
        if c is None:
            c = P[i].copy()
            M = 1
            continue
        dist = np.linalg.norm(P[i] - c)
        if dist >= R:
            delta = 0.5 * (dist - R)                  # eq. 4, 5
            c = c + delta / dist * (P[i] - c)         # eq. 6
            R = R + delta
            M += 1
    return c, R, M, P


def multiball_reference(X, y_pm, C, K, sample_weight=None, b0=0.0):
    """Sec. 4.3 with explicit augmented centres and the same greedy merge policy as the
    compiled code (merge the pair of the K+1 balls whose enclosing ball is smallest), then the
    exact final merge (``exact_meb_of_balls``). Returns ``(balls, final_centre, final_R, P)``
    where ``balls`` is a list of (centre, radius)."""
    P = augmented_points(X, y_pm, C, sample_weight, b0)
    n = P.shape[0]
    s = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    balls = []

    def merge(a, b):
        (ca, ra), (cb, rb) = a, b
        D = np.linalg.norm(ca - cb)
        if D + rb <= ra:
            return a
        if D + ra <= rb:
            return b
        Rn = 0.5 * (D + ra + rb)
        return ca + (Rn - ra) / D * (cb - ca), Rn

    for i in range(n):
        if s[i] <= 0:
            continue
        if any(np.linalg.norm(P[i] - c) < r for c, r in balls):
            continue
        new = (P[i].copy(), 0.0)
        if len(balls) < K:
            balls.append(new)
            continue
        cand = balls + [new]
        best = None
        for a in range(len(cand)):
            for b in range(a):
                D = np.linalg.norm(cand[a][0] - cand[b][0])
                v = max(0.5 * (D + cand[a][1] + cand[b][1]), cand[a][1], cand[b][1])
                if best is None or v < best[0]:
                    best = (v, a, b)
        _, a, b = best
        merged = merge(cand[a], cand[b])
        rest = [cand[j] for j in range(len(cand)) if j not in (a, b)]
        balls = rest + [merged]
    c, R = exact_meb_of_balls(np.array([bc for bc, _ in balls]), np.array([br for _, br in balls]))
    return balls, c, R, P
