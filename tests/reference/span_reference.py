"""Slow, plain NumPy/SciPy references for the span of support vectors (paper 002).

- ``affine_span_sq``: squared feature-space distance of p to the affine span of a set (no
  constraint on lambda besides sum = 1), by the bordered normal equations;
- ``constrained_span_sq``: the span as defined, a constrained minimisation over lambda solved
  directly (SciPy SLSQP from the affine solution):

  * ``definition='vc'`` (Vapnik & Chapelle 2000, non-separable case): lambda over the other
    *margin* vectors, ``0 <= alpha_i + y_i y_p alpha_p lambda_i <= C_i``;
  * ``definition='paper'`` (paper 002 Sec. 2, written for the separable case): lambda over all
    other support vectors, ``alpha_i + y_i y_p alpha_p lambda_i >= 0``;
- ``s_span_sq_of_set``: the S-span of the exact SVM trained from scratch on a set (SVC,
  polished), with margin spans and error-vector distances computed by ``affine_span_sq``;
- ``brute_force_swap``: paper 002 steps 3-5 written out: retrain from scratch for every swap.
"""
import numpy as np
from scipy.optimize import minimize

from reference import svm_reference as ref


def affine_span_sq(K, p, others):
    """min ||phi_p - sum_q lambda_q phi_q||^2 s.t. sum lambda = 1 (inf for an empty set)."""
    return ref.span_sq(K, p, others)


def _objective(K, p, others):
    Koo = K[np.ix_(others, others)]
    kpo = K[others, p]

    def f(lam):
        return K[p, p] - 2 * lam @ kpo + lam @ Koo @ lam

    def jac(lam):
        return -2 * kpo + 2 * Koo @ lam

    return f, jac, Koo, kpo


def constrained_span_sq(K, y, alpha, cb, p, margin, support, definition="vc"):
    """The span of support vector ``p`` as the constrained minimisation it is defined as.

    Parameters
    ----------
    K : (n, n) kernel matrix; y : (n,) in {-1, +1}; alpha : (n,) SVM multipliers;
    cb : (n,) bounds; p : int; margin : indices of margin vectors; support : indices of all
    support vectors; definition : 'vc' or 'paper' (see the module docstring).

    Returns
    -------
    (value, lam, others) : the minimum, the minimiser and the indices it weighs.
    """
    pool = margin if definition == "vc" else support
    others = np.array([q for q in pool if q != p], dtype=np.int64)
    if others.size == 0:
        return np.inf, np.zeros(0), others
    f, jac, Koo, kpo = _objective(K, p, others)
    coef = y[others] * y[p] * alpha[p]
    # start from the affine (unconstrained) solution, clipped into the box when possible
    m = others.size
    A = np.zeros((m + 1, m + 1))
    A[:m, :m] = 2 * Koo
    A[:m, m] = 1.0
    A[m, :m] = 1.0
    lam0 = np.linalg.lstsq(A, np.concatenate([2 * kpo, [1.0]]), rcond=None)[0][:m]
    cons = [{"type": "eq", "fun": lambda lam: lam.sum() - 1.0, "jac": lambda lam: np.ones(m)},
            {"type": "ineq", "fun": lambda lam: alpha[others] + coef * lam,
             "jac": lambda lam: np.diag(coef)}]
    if definition == "vc":
        cons.append({"type": "ineq", "fun": lambda lam: cb[others] - alpha[others] - coef * lam,
                     "jac": lambda lam: -np.diag(coef)})
    best = None
    for start in (lam0, np.full(m, 1.0 / m)):
        res = minimize(f, start, jac=jac, method="SLSQP", constraints=cons,
                       options={"ftol": 1e-14, "maxiter": 1000})
        feas = (abs(res.x.sum() - 1) < 1e-7 and np.all(alpha[others] + coef * res.x > -1e-7)
                and (definition != "vc" or np.all(cb[others] - alpha[others] - coef * res.x > -1e-7)))
        if feas and (best is None or res.fun < best.fun):
            best = res
    if best is None:
        return np.inf, np.full(m, np.nan), others
    return float(best.fun), best.x, others


def lambda_feasible(K, y, alpha, cb, p, margin, tol=1e-9):
    """Whether the affine minimiser over the other margin vectors satisfies the box
    constraints of the 'vc' definition (then constrained and affine spans coincide)."""
    others = np.array([q for q in margin if q != p], dtype=np.int64)
    if others.size == 0:
        return False
    m = others.size
    Koo = K[np.ix_(others, others)]
    A = np.zeros((m + 1, m + 1))
    A[:m, :m] = 2 * Koo
    A[:m, m] = 1.0
    A[m, :m] = 1.0
    lam = np.linalg.lstsq(A, np.concatenate([2 * K[others, p], [1.0]]), rcond=None)[0][:m]
    a_new = alpha[others] + y[others] * y[p] * alpha[p] * lam
    return bool(np.all(a_new >= -tol) and np.all(a_new <= cb[others] + tol))


def partition(alpha, cb, rtol=1e-9):
    """(margin, error) index arrays of a solution: 0 < alpha < cb, alpha = cb > 0."""
    scale = np.maximum(cb, 1e-300)
    margin = np.flatnonzero((alpha > rtol * scale) & (alpha < cb * (1 - rtol)))
    error = np.flatnonzero((alpha >= cb * (1 - rtol)) & (cb > 0))
    return margin, error


def spans_of_solution(K, alpha, cb):
    """Squared spans of all support vectors of a solution: margin vectors to the affine span
    of the other margin vectors, error vectors to the affine span of the margin set. Returns
    a dict index -> S_i^2."""
    margin, error = partition(alpha, cb)
    out = {}
    for p in margin:
        out[int(p)] = affine_span_sq(K, p, [q for q in margin if q != p])
    for c in error:
        out[int(c)] = affine_span_sq(K, c, margin)
    return out


def s_span_sq_of_set(X, y, w, C, kernel="rbf", gamma=1.0, degree=3, coef0=0.0):
    """S-span^2 (max over support vectors) of the exact SVM trained from scratch on (X, y, w)."""
    fit = ref.oracle_fit(X, y, w, C, kernel, gamma, degree, coef0)
    spans = spans_of_solution(fit["K"], fit["alpha"], fit["cb"])
    return max(spans.values()) if spans else 0.0


def brute_force_swap(Xs, ys, x, yx, C, kernel="rbf", gamma=1.0):
    """Paper 002 steps 3-5 by retraining from scratch: S_old and S_i^2 for every swap i.

    Returns (s_old, s_new) with ``s_new[i]`` the S-span^2 of the SVM on ``Xs - Xs[i] + x``.
    """
    n = Xs.shape[0]
    s_old = s_span_sq_of_set(Xs, ys, np.ones(n), C, kernel, gamma)
    s_new = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        Xi = np.vstack([Xs[keep], x[None, :]])
        yi = np.concatenate([ys[keep], [yx]])
        s_new[i] = s_span_sq_of_set(Xi, yi, np.ones(n), C, kernel, gamma)
    return s_old, s_new
