"""Slow, plain NumPy/SciPy references for the exact SVM engine (paper 003).

Everything here is written from the definitions, without the engine's recursions:

- ``kernel_matrix``: the three kernels, vectorised NumPy;
- ``dual_objective``, ``decision``, ``kt_report``: the weighted SVM dual
  ``min 1/2 a'Qa - 1'a  s.t.  0 <= a_i <= cb_i = C w_i,  y'a = 0`` and its KT conditions
  (paper 003, eq. 2), measured from scratch;
- ``polish``: exact solution of the KT linear system for a given partition
  (S margin / E at bound / R at zero), with an active-set repair loop, so that an
  approximate solution (libsvm's, or SLSQP's) becomes an exact, *certified* one; on a
  degenerate problem, where that repair cycles, it hands over to ``active_set_qp``;
- ``active_set_qp``: a primal active-set solver of the dual (feasible iterates, zero-curvature
  steps where the free set is degenerate, Bland's rule against cycling), exact on its own;
- ``solve_qp``: an independent dual solver (SciPy SLSQP, then ``polish``) for small problems;
- ``span_sq``: squared distance of a point to the affine span of a set of points in feature
  space (the Vapnik-Chapelle span, paper 002; Cauwenberghs' gamma_c, paper 003 eq. 21),
  solved as the constrained least-squares problem it is defined as.
"""
import numpy as np
from scipy.optimize import minimize


# ----------------------------------------------------------------------------- kernels
def kernel_matrix(A, B, kernel="rbf", gamma=1.0, degree=3, coef0=0.0):
    """K[i, j] = k(A[i], B[j]) for the scikit-learn kernel definitions."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if kernel == "linear":
        return A @ B.T
    if kernel == "poly":
        return (gamma * (A @ B.T) + coef0) ** degree
    if kernel == "rbf":
        # explicit differences: no ||a||^2 + ||b||^2 - 2ab cancellation
        d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
        return np.exp(-gamma * d2)
    raise ValueError(kernel)


# ----------------------------------------------------------------------------- the dual
def dual_objective(alpha, y, K):
    """1/2 sum_ij a_i a_j y_i y_j K_ij - sum_i a_i (to be minimised)."""
    ay = alpha * y
    return 0.5 * ay @ K @ ay - alpha.sum()


def decision(alpha, y, b, Kx):
    """f(x_t) = sum_i a_i y_i Kx[t, i] + b for a (m, n) kernel block ``Kx``."""
    return Kx @ (alpha * y) + b


def kt_report(alpha, b, y, K, cb, rtol_bound=1e-12):
    """KT violations of (alpha, b) for the weighted dual, computed from scratch.

    The partition is read from alpha: at zero (R) or at its bound (E), both within
    ``rtol_bound * cb``, else strictly inside (S): an alpha of 1e-18 left by the round-off
    of a path is at zero, not a free support vector that would pin b down. Zero-bound examples carry no constraint.

    Returns a dict with

    - ``kt``: largest violation of g_i = y_i f(x_i) - 1 (|g| on S, max(0, g) on E,
      max(0, -g) on R), in margin units;
    - ``kt_scaled``: the same, each divided by ``max(1, sum_j |a_j K_ij| + |b|)``, the size
      of the terms f(x_i) is summed from (round-off makes anything below ~1e-15 of it noise);
    - ``eq``: |sum a_i y_i| / max(1, sum a_i);
    - ``box``: largest violation of 0 <= a_i <= cb_i;
    - ``n_S``, ``n_E``, ``n_R``.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    f = K @ (alpha * y) + b
    g = y * f - 1.0
    scale = np.maximum(1.0, np.abs(K) @ np.abs(alpha) + abs(b))
    live = cb > 0
    atb = live & (alpha >= cb * (1 - rtol_bound)) & (alpha > 0)
    atz = live & (alpha <= cb * rtol_bound) & ~atb  # (a round-off zero is at zero)
    ins = live & ~atb & ~atz
    v = np.zeros_like(g)
    v[ins] = np.abs(g[ins])
    v[atb] = np.maximum(g[atb], 0.0)
    v[atz] = np.maximum(-g[atz], 0.0)
    box = float(max(0.0, np.max(-alpha, initial=0.0), np.max(alpha - cb, initial=0.0)))
    return {
        "kt": float(v.max(initial=0.0)),
        "kt_scaled": float((v / scale).max(initial=0.0)),
        "eq": float(abs(alpha @ y) / max(1.0, alpha.sum())),
        "box": box,
        "n_S": int(ins.sum()), "n_E": int(atb.sum()), "n_R": int(atz.sum()),
        "g": g,
    }


def bias_interval(alpha, y, K, cb, rtol_bound=1e-12):
    """The interval of b values for which (alpha, b) satisfies the KT conditions of the
    examples outside S (the only freedom left when S is empty). Returns (lo, hi)."""
    h = K @ (alpha * y)  # f - b
    live = cb > 0
    atb = live & (alpha >= cb * (1 - rtol_bound)) & (alpha > 0)
    atz = live & (alpha <= cb * rtol_bound) & ~atb  # (a round-off zero is at zero)
    lo, hi = -np.inf, np.inf
    # R: y (h + b) >= 1 ; E: y (h + b) <= 1
    for mask, sign in ((atz, 1.0), (atb, -1.0)):
        for i in np.flatnonzero(mask):
            # sign * y_i * b >= sign * (1 - y_i h_i)
            bound = y[i] * (1.0 - y[i] * h[i])  # = y_i - h_i
            if sign * y[i] > 0:
                lo = max(lo, bound)
            else:
                hi = min(hi, bound)
    return lo, hi


# ----------------------------------------------------------------------------- polishing
def _solve_partition(K, y, cb, S, E):
    """(alpha, b) with alpha_E = cb_E, alpha_R = 0 and the margin equations of S exact:
    [[0, y_S'], [y_S, Q_SS]] [b; a_S] = [-y_E' cb_E; 1 - Q_SE cb_E] (least squares, min
    norm, when the system is singular). With S empty, b is the middle of the feasible
    interval (scikit-learn's choice)."""
    n = y.shape[0]
    alpha = np.zeros(n)
    alpha[E] = cb[E]
    if S.size == 0:
        lo, hi = bias_interval(alpha, y, K, cb)
        if np.isfinite(lo) and np.isfinite(hi):
            b = 0.5 * (lo + hi)
        elif np.isfinite(lo):
            b = lo
        elif np.isfinite(hi):
            b = hi
        else:
            b = 0.0
        return alpha, b
    yS = y[S]
    Q_SS = (yS[:, None] * yS[None, :]) * K[np.ix_(S, S)]
    m = S.size + 1
    J = np.zeros((m, m))
    J[0, 1:] = yS
    J[1:, 0] = yS
    J[1:, 1:] = Q_SS
    rhs = np.empty(m)
    rhs[0] = -(y[E] @ cb[E])
    rhs[1:] = 1.0 - yS * (K[np.ix_(S, E)] @ (y[E] * cb[E]))
    sol = np.linalg.lstsq(J, rhs, rcond=None)[0]
    alpha[S] = sol[1:]
    return alpha, float(sol[0])


def polish(K, y, cb, alpha0, rtol=1e-7, max_iter=None, tol=1e-12):
    """Exact KT solution near an approximate one.

    The partition is read from ``alpha0`` (at 0, at the bound ``cb`` within ``rtol``
    relative, inside); the KT linear system is solved exactly for it; then, while the
    result is not a KT point, the worst offender changes set (a margin multiplier leaving
    [0, cb] goes to R or E, an R/E example violating its margin joins S).

    That repair moves one example at a time, which is enough when the margin set stays
    nonsingular, but not on a degenerate problem: with a linear kernel in d dimensions at
    most d + 1 margin vectors have a nonsingular bordered kernel matrix, so once |S| = d + 1
    an example can only join S if another one leaves it *in the same move*; one at a time,
    the repair cycles between |S| = d + 1 and d + 2. When the repair does not end at a KT
    point (scaled residual above ``tol``, or :func:`kt_report`'s ``eq`` above 1e-13), the
    problem is solved again by :func:`active_set_qp` from ``alpha0``, which pivots
    correctly there, and the better of the two results is returned.

    Returns ``(alpha, b, report)`` where ``report`` is :func:`kt_report` of the result;
    callers must check it (this function does not claim success).
    """
    y = np.asarray(y, dtype=np.float64)
    cb = np.asarray(cb, dtype=np.float64)
    n = y.shape[0]
    live = cb > 0
    a0 = np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, None)
    state = np.zeros(n, dtype=np.int8)  # 0 R, 1 S, 2 E, -1 no constraint
    state[~live] = -1
    state[live & (a0 >= cb * (1 - rtol))] = 2
    state[live & (a0 > rtol * np.maximum(cb, 1e-300)) & (a0 < cb * (1 - rtol))] = 1
    max_iter = 4 * n + 20 if max_iter is None else max_iter
    for _ in range(max_iter):
        S = np.flatnonzero(state == 1)
        E = np.flatnonzero(state == 2)
        alpha, b = _solve_partition(K, y, cb, S, E)
        g = y * (K @ (alpha * y) + b) - 1.0
        scale = np.maximum(1.0, np.abs(K) @ np.abs(alpha) + abs(b))
        # violations, scaled like kt_report
        worst, who, to = 1e-13, -1, -1
        for i in S:
            if alpha[i] < 0 and -alpha[i] / max(cb[i], 1.0) > worst:
                worst, who, to = -alpha[i] / max(cb[i], 1.0), i, 0
            if alpha[i] > cb[i] and (alpha[i] - cb[i]) / max(cb[i], 1.0) > worst:
                worst, who, to = (alpha[i] - cb[i]) / max(cb[i], 1.0), i, 2
        for i in np.flatnonzero(state == 0):
            if -g[i] / scale[i] > worst:
                worst, who, to = -g[i] / scale[i], i, 1
        for i in E:
            if g[i] / scale[i] > worst:
                worst, who, to = g[i] / scale[i], i, 1
        if who < 0:
            break
        state[who] = to
    alpha = np.clip(alpha, 0.0, cb)
    report = kt_report(alpha, b, y, K, cb)
    if report["kt_scaled"] <= tol and report["eq"] <= 1e-13:
        return alpha, b, report
    a2, b2, rep2 = active_set_qp(K, y, cb, alpha0, tol=tol)
    if (rep2["kt_scaled"], rep2["eq"]) <= (report["kt_scaled"], report["eq"]):
        return a2, b2, rep2
    return alpha, b, report


# ----------------------------------------------------------------------------- active set
def _restore_equality(a, y, cb):
    """Make ``sum a_i y_i = 0`` by moving the variables with the most room (largest first)
    inside their box, so that a start read off an approximate solution is feasible.
    Modified in place."""
    r = float(a @ y)
    if r == 0.0:
        return a
    s = 1.0 if r > 0 else -1.0
    # a_i can reduce |r| by lowering it (y_i = s) or raising it (y_i = -s)
    room = np.where(y * s > 0, a, cb - a)
    need = abs(r)
    for i in np.argsort(-room, kind="stable"):
        if need <= 0.0 or room[i] <= 0.0:
            break
        step = min(room[i], need)
        a[i] -= s * y[i] * step
        need -= step
    return a


def _eqp(Q, y, G, F, r_eq):
    """The equality-constrained step on the free set ``F``:

    min_p 1/2 p' Q_FF p + G_F' p   subject to   y_F' p = -r_eq,

    through the bordered system [[Q_FF, y_F], [y_F', 0]] [p; b] = [-G_F; -r_eq], whose
    last unknown is the bias at the new point (G_i + (Q p)_i + y_i b = 0 on F).

    The bordered matrix is symmetric, so it is split by ``eigh`` into its range and its null
    space. ``(p, b)`` solves the system on the range (the minimiser when the system is
    consistent); ``d`` is the part of the right-hand side in the null space. A null vector
    (p, b) has Q_FF p = 0, y_F' p = 0 and b = 0 (F nonempty), and -G_F' d = |d|^2 for the
    right-hand side's own null part: when ``d`` is not zero, the problem is unbounded along
    ``d``, a descent direction of zero curvature -- the degenerate case, where F holds more
    examples than the kernel has room for (more than d + 1 for a linear kernel in d
    dimensions).

    Returns ``(p, b, d)``: p and d of shape (|F|,), b a float.
    """
    m = F.size
    M = np.zeros((m + 1, m + 1))
    M[:m, :m] = Q[np.ix_(F, F)]
    M[:m, m] = y[F]
    M[m, :m] = y[F]
    rhs = np.empty(m + 1)
    rhs[:m] = -G[F]
    rhs[m] = -r_eq
    lam, V = np.linalg.eigh(M)
    big = np.abs(lam) > 100 * (m + 1) * np.finfo(float).eps * np.abs(lam).max()
    c = V.T @ rhs
    sol = V[:, big] @ (c[big] / lam[big])
    null = V[:, ~big] @ c[~big]
    return sol[:m], float(sol[m]), null[:m]


def active_set_qp(K, y, cb, alpha0=None, tol=1e-12, max_iter=None):
    """Exact solution of the weighted dual by a primal active-set method that is safe on
    degenerate problems (Nocedal & Wright, Numerical Optimization, 2nd ed., Alg. 16.3, with
    a positive semidefinite Hessian and Bland's rule after a zero step).

    Every iterate is feasible (0 <= a <= cb, y'a = 0) and the objective never increases.
    The working set fixes each example at 0 or at cb or leaves it free (F, never empty, so
    that the working constraints are independent and b is unique). On F the step is the
    equality-constrained minimiser (:func:`_eqp`), cut at the first bound it meets; where
    that subproblem is unbounded -- F is degenerate, e.g. more than d + 1 free examples for
    a linear kernel in d dimensions -- the step follows the zero-curvature descent
    direction until an example reaches a bound and leaves F. This is the move the
    one-at-a-time repair of :func:`polish` cannot make: one example joins the margin while
    another leaves it. At the minimiser on F, the multipliers of the fixed examples are
    g_i = y_i f(x_i) - 1 (>= 0 at 0, <= 0 at cb); the most violated one is released (the
    smallest index, after a step of length zero, so that a degenerate vertex cannot cycle).

    ``alpha0`` (optional) is a warm start, snapped to the box and made to satisfy y'a = 0.
    ``tol`` is the KT tolerance in :func:`kt_report`'s scaled units. Returns ``(alpha, b,
    report)``; check ``report`` (this function does not claim success).
    """
    y = np.asarray(y, dtype=np.float64)
    cb = np.asarray(cb, dtype=np.float64)
    n = y.shape[0]
    live = cb > 0
    Q = (y[:, None] * y[None, :]) * K
    absK = np.abs(K)
    a = np.zeros(n) if alpha0 is None else np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, cb)
    a[~live] = 0.0
    snap = 1e-9  # an approximate start within this (relative) of a bound is at the bound
    a[live & (a <= snap * cb)] = 0.0
    up = live & (a >= (1 - snap) * cb)
    a[up] = cb[up]
    _restore_equality(a, y, np.where(live, cb, 0.0))
    state = np.full(n, -1, dtype=np.int8)  # 0 at zero, 1 free, 2 at cb, -1 no constraint
    state[live] = 1
    state[live & (a == 0.0)] = 0
    state[live & (a == cb)] = 2
    max_iter = 10 * n + 100 if max_iter is None else max_iter
    bland = False
    b = 0.0
    for _ in range(max_iter):
        F = np.flatnonzero(state == 1)
        G = Q @ a - 1.0
        if F.size == 0:
            # all fixed: b must satisfy g_i = G_i + y_i b >= 0 at zero and <= 0 at cb
            lo, hi, i_lo, i_hi = -np.inf, np.inf, -1, -1
            for i in np.flatnonzero(state >= 0):
                # at zero y_i b >= -G_i, at cb y_i b <= -G_i: a lower or an upper bound on b
                sign = (1.0 if state[i] == 0 else -1.0) * y[i]
                bound = -G[i] * y[i]
                if sign > 0 and bound > lo:
                    lo, i_lo = bound, i
                elif sign < 0 and bound < hi:
                    hi, i_hi = bound, i
            if lo <= hi:
                b = 0.5 * (lo + hi) if np.isfinite(lo) and np.isfinite(hi) else (
                    lo if np.isfinite(lo) else (hi if np.isfinite(hi) else 0.0))
                break
            state[min(i_lo, i_hi) if bland else i_lo] = 1  # no b fits: free one example
            continue
        if F.size >= 2:  # (with one free example, y'p = 0 leaves no step)
            p, _, d = _eqp(Q, y, G, F, float(a @ y))
            QFF = Q[np.ix_(F, F)]
            step = None
            # the degenerate case: descend along the null direction until a bound stops it
            # (a null part at round-off level, or one with enough curvature to stop before
            # any bound, is not a degeneracy: the range step below is taken instead)
            if np.linalg.norm(d) > 1e-12 * max(1.0, np.linalg.norm(G[F])) and G[F] @ d < 0:
                t_blk, blk = _ratio_test(a[F], cb[F], d, F)
                curv = d @ QFF @ d
                if blk >= 0 and (curv <= 0 or t_blk <= -(G[F] @ d) / curv):
                    step = (d, t_blk, blk)
            if step is None:
                t_blk, blk = _ratio_test(a[F], cb[F], p, F)
                if blk >= 0 and t_blk < 1.0:
                    step = (p, t_blk, blk)
                else:
                    a[F] = np.clip(a[F] + p, 0.0, cb[F])
            if step is not None:
                direction, t, blk = step
                a[F] = np.clip(a[F] + t * direction, 0.0, cb[F])
                a[blk] = 0.0 if direction[np.searchsorted(F, blk)] < 0 else cb[blk]
                state[blk] = 0 if a[blk] == 0.0 else 2
                bland = t == 0.0
                continue
        # the minimiser on the working set: b from the free examples, then the multipliers
        F = np.flatnonzero(state == 1)
        G = Q @ a - 1.0
        b = float(-(y[F] @ G[F]) / F.size)
        g = G + y * b
        scale = np.maximum(1.0, absK @ a + abs(b))
        viol = np.zeros(n)
        viol[state == 0] = -g[state == 0] / scale[state == 0]
        viol[state == 2] = g[state == 2] / scale[state == 2]
        cand = np.flatnonzero(viol > tol)
        if cand.size == 0:
            break
        j = cand[0] if bland else cand[np.argmax(viol[cand])]
        state[j] = 1
    return a, b, kt_report(a, b, y, K, cb)


def _ratio_test(aF, cbF, p, F):
    """Largest t with 0 <= aF + t p <= cbF, and the example that stops it (-1 if none):
    the first to reach its bound, the smallest index among ties (``F`` is sorted), which is
    Bland's choice."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(p < 0, aF / -p, np.where(p > 0, (cbF - aF) / p, np.inf))
    t = np.maximum(t, 0.0)
    k = int(np.argmin(t))
    if not np.isfinite(t[k]):
        return np.inf, -1
    return float(t[k]), int(F[k])


def sklearn_alpha(svc, y):
    """Full alpha vector (n,) of a fitted ``sklearn.svm.SVC`` on labels ``y`` in {-1, +1}
    (classes_ must be [-1, 1] or [0, 1] so that dual_coef_ = alpha * y)."""
    alpha = np.zeros(y.shape[0])
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return alpha


# ----------------------------------------------------------------------------- solver
def solve_qp(K, y, cb, x0=None):
    """Independent dual solver for small problems: SciPy SLSQP on the dual, then
    :func:`polish`. Returns ``(alpha, b, report)``; check ``report`` before trusting it."""
    y = np.asarray(y, dtype=np.float64)
    cb = np.asarray(cb, dtype=np.float64)
    n = y.shape[0]
    Q = (y[:, None] * y[None, :]) * K
    x0 = np.zeros(n) if x0 is None else x0
    res = minimize(
        lambda a: 0.5 * a @ Q @ a - a.sum(), x0, jac=lambda a: Q @ a - 1.0,
        method="SLSQP", bounds=list(zip(np.zeros(n), cb)),
        constraints=[{"type": "eq", "fun": lambda a: a @ y, "jac": lambda a: y}],
        options={"ftol": 1e-15, "maxiter": 2000},
    )
    return polish(K, y, cb, res.x, rtol=1e-6)


# ----------------------------------------------------------------------------- span
def span_sq(K, p, others):
    """Squared feature-space distance of point ``p`` to the affine span of ``others``:

    min_lambda ||phi_p - sum_q lambda_q phi_q||^2  subject to  sum_q lambda_q = 1,

    solved through its (bordered) normal equations by least squares.
    """
    others = np.asarray(others, dtype=np.int64)
    m = others.size
    if m == 0:
        return np.inf
    Koo = K[np.ix_(others, others)]
    kpo = K[others, p]
    A = np.zeros((m + 1, m + 1))
    A[:m, :m] = 2 * Koo
    A[:m, m] = 1.0
    A[m, :m] = 1.0
    rhs = np.concatenate([2 * kpo, [1.0]])
    lam = np.linalg.lstsq(A, rhs, rcond=None)[0][:m]
    return float(K[p, p] - 2 * lam @ kpo + lam @ Koo @ lam)


# ----------------------------------------------------------------------------- oracle
def oracle_fit(X, y, w, C, kernel="rbf", gamma=1.0, degree=3, coef0=0.0, sk_tol=1e-6):
    """The exact weighted SVM on (X, y, w) by the scikit-learn/libsvm partition, polished.

    ``sklearn.svm.SVC(C, kernel, gamma, degree, coef0).fit(X, y, sample_weight=w)`` gives an
    approximate solution (libsvm stops at its tolerance); :func:`polish` makes it exact for
    libsvm's partition, repairing the partition where libsvm's tolerance got it wrong.
    Examples of weight 0 are left out of the libsvm fit (they carry no constraint). With
    fewer than two classes among the weighted examples the solution is alpha = 0 and b is
    chosen in its feasible interval.

    Returns a dict: ``alpha`` (n,), ``b``, ``report`` (:func:`kt_report` of the polished
    solution, to be checked by the caller), ``K`` (n, n), ``cb`` (n,), ``svc`` (or None),
    ``alpha_sk`` (libsvm's raw alpha, n), ``b_sk``.
    """
    from sklearn.svm import SVC

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    K = kernel_matrix(X, X, kernel, gamma, degree, coef0)
    cb = C * w
    keep = cb > 0
    alpha0 = np.zeros(y.shape[0])
    svc = None
    b_sk = np.nan
    if np.unique(y[keep]).size == 2:
        svc = SVC(C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, tol=sk_tol,
                  max_iter=10**8, shrinking=True)
        svc.fit(X[keep], y[keep], sample_weight=w[keep])
        alpha0[keep] = sklearn_alpha(svc, y[keep])
        b_sk = float(svc.intercept_[0])
    alpha, b, report = polish(K, y, cb, alpha0)
    return {"alpha": alpha, "b": b, "report": report, "K": K, "cb": cb, "svc": svc,
            "alpha_sk": alpha0, "b_sk": b_sk}


def compare_models(alpha_a, b_a, alpha_b, b_b, y, K, cb, Kx=None):
    """How far apart two solutions of the same weighted dual are, as decision values.

    The feature-space part h = sum a_i y_i k(x_i, .) of an SVM is unique; b is unique
    when some solution has a margin vector (0 < a_i < cb_i), and otherwise any b in the
    feasible interval is optimal. Returns ``(rel, b_ok)``: ``rel`` the largest difference
    of decision values (on the training points and on the rows of ``Kx``) relative to
    ``max(1, max |f_b|)`` -- where b is not unique, of h only -- and ``b_ok`` whether both
    biases are optimal (always True when b is unique and rel is small).
    """
    blocks = [K] if Kx is None else [K, Kx]
    ha = np.concatenate([B @ (alpha_a * y) for B in blocks])
    hb = np.concatenate([B @ (alpha_b * y) for B in blocks])
    rep_a = kt_report(alpha_a, b_a, y, K, cb)
    rep_b = kt_report(alpha_b, b_b, y, K, cb)
    unique_b = rep_a["n_S"] > 0 or rep_b["n_S"] > 0
    denom = max(1.0, float(np.max(np.abs(hb + b_b), initial=0.0)))
    if unique_b:
        return float(np.max(np.abs((ha + b_a) - (hb + b_b)), initial=0.0)) / denom, True
    rel = float(np.max(np.abs(ha - hb), initial=0.0)) / denom
    ok = True
    for alpha, b in ((alpha_a, b_a), (alpha_b, b_b)):
        lo, hi = bias_interval(alpha, y, K, cb)
        slack = 1e-9 * max(1.0, abs(b))
        ok = ok and (lo - slack <= b <= hi + slack)
    return rel, ok
