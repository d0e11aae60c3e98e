"""The bordered inverse R = J^-1 of the margin-set Jacobian (Cauwenberghs & Poggio 2000).

J = [[0, y_S^T], [y_S, Q_SS]] with Q_ij = y_i y_j K(x_i, x_j). Bordered index 0 is the
bias b, index p + 1 the p-th margin vector ``S_idx[p]``. Only the leading
``(nS + 1) x (nS + 1)`` block of the preallocated ``R`` is live.
"""
import numpy as np
from numba import njit

OK = 0
SINGULAR = 1


@njit(cache=True, inline="always")
def r_first(R, yk, Qkk):
    """R for a margin set of one vector k: inv([[0, y_k], [y_k, Q_kk]]).

    ``R`` is modified in place.
    """
    R[0, 0] = -Qkk
    R[0, 1] = yk
    R[1, 0] = yk
    R[1, 1] = 0.0


@njit(cache=True, no_cpython_wrapper=True)
def r_grow(R, nS, v, Qkk, beta, tol):
    """Grow R by one margin vector k (paper 003, eq. 13).

    Parameters
    ----------
    R : (n+1, n+1) float64, live block (nS+1, nS+1). Modified in place.
    nS : int, current margin-set size (>= 1).
    v : (>= nS+1,) float64, ``[y_k, Q_{s_1 k}, ..., Q_{s_nS k}]``.
    Qkk : float, Q_kk.
    beta : (>= nS+1,) float64 work buffer; on return ``beta = -R v``.
    tol : float, singularity tolerance on gamma_kk relative to the size of the terms
        it is the difference of (``|Q_kk| + sum_i |v_i beta_i|``).

    Returns
    -------
    status : int, OK or SINGULAR (R untouched when SINGULAR).
    pivot : float, gamma_kk / scale: the relative size of the pivot gamma_kk = Q_kk + v . beta
        (the squared distance of k to the span of S, Vapnik-Chapelle; 0 means k is linearly
        dependent on S). Errors already in R reach the new column amplified by 1 / pivot.
    """
    m = nS + 1
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += R[i, j] * v[j]
        beta[i] = -s
    gkk = Qkk
    scale = abs(Qkk)
    for i in range(m):
        t = v[i] * beta[i]
        gkk += t
        scale += abs(t)
    # gamma_kk is a difference of terms of size ``scale``: below tol * scale it is
    # round-off, and k is (numerically) linearly dependent on S.
    if not (gkk > tol * scale):
        return SINGULAR, gkk / scale
    inv = 1.0 / gkk
    for i in range(m):
        bi = beta[i] * inv
        for j in range(m):
            R[i, j] += bi * beta[j]
        R[i, m] = bi
        R[m, i] = bi
    R[m, m] = inv
    return OK, gkk / scale


@njit(cache=True, no_cpython_wrapper=True)
def r_swap(R, m, p, q):
    """Swap bordered rows/columns p and q of the live (m, m) block. Modified in place."""
    if p == q:
        return
    for j in range(m):
        t = R[p, j]
        R[p, j] = R[q, j]
        R[q, j] = t
    for i in range(m):
        t = R[i, p]
        R[i, p] = R[i, q]
        R[i, q] = t


@njit(cache=True, no_cpython_wrapper=True)
def r_shrink_last(R, m):
    """Remove the last bordered index (m - 1) from the live (m, m) block (paper 003, eq. 14).

    ``R`` is modified in place; the new live block is (m-1, m-1).
    """
    k = m - 1
    rkk = R[k, k]
    inv = 1.0 / rkk
    for i in range(k):
        rik = R[i, k] * inv
        if rik != 0.0:
            for j in range(k):
                R[i, j] -= rik * R[k, j]


@njit(cache=True, inline="always")
def build_J(y, K, S_idx, nS, J):
    """Fill the live (nS+1, nS+1) block of ``J`` (modified in place)."""
    J[0, 0] = 0.0
    for p in range(nS):
        i = S_idx[p]
        J[0, p + 1] = y[i]
        J[p + 1, 0] = y[i]
        for q in range(nS):
            j = S_idx[q]
            J[p + 1, q + 1] = y[i] * y[j] * K[i, j]


@njit(cache=True, inline="always")
def invert_into(A, out, tol):
    """Gauss-Jordan inverse of the square ``A`` (destroyed) into ``out`` with partial
    pivoting. Returns OK, or SINGULAR (``out`` then undefined) when a pivot falls below
    ``tol`` times the largest entry of ``A``: LAPACK's ``inv`` would raise instead, and
    compiled kernels report failures as status codes."""
    m = A.shape[0]
    scale = 0.0
    for i in range(m):
        for j in range(m):
            out[i, j] = 1.0 if i == j else 0.0
            if abs(A[i, j]) > scale:
                scale = abs(A[i, j])
    if scale == 0.0:
        return SINGULAR
    for col in range(m):
        piv = col
        best = abs(A[col, col])
        for r in range(col + 1, m):
            if abs(A[r, col]) > best:
                best = abs(A[r, col])
                piv = r
        if best <= tol * scale:
            return SINGULAR
        if piv != col:
            for j in range(m):
                t = A[col, j]
                A[col, j] = A[piv, j]
                A[piv, j] = t
                t = out[col, j]
                out[col, j] = out[piv, j]
                out[piv, j] = t
        inv = 1.0 / A[col, col]
        for j in range(m):
            A[col, j] *= inv
            out[col, j] *= inv
        for r in range(m):
            if r != col:
                f = A[r, col]
                if f != 0.0:
                    for j in range(m):
                        A[r, j] -= f * A[col, j]
                        out[r, j] -= f * out[col, j]
    return OK


@njit(cache=True, no_cpython_wrapper=True)
def r_rebuild(y, K, S_idx, nS, R):
    """Rebuild R = J^-1 from scratch (O(nS^3)); ``R`` is modified in place.

    Returns OK, or SINGULAR when J is numerically singular (R then untouched).
    """
    m = nS + 1
    J = np.empty((m, m))
    build_J(y, K, S_idx, nS, J)
    Rn = np.empty((m, m))
    if invert_into(J, Rn, 1e-13) != OK:
        return SINGULAR
    for i in range(m):
        for j in range(m):
            if not np.isfinite(Rn[i, j]):
                return SINGULAR
    for i in range(m):
        for j in range(m):
            R[i, j] = Rn[i, j]
    return OK


@njit(cache=True)
def jr_residual(y, K, S_idx, nS, R):
    """max |J R - I| over the live block (the drift certificate)."""
    if nS == 0:
        return 0.0
    m = nS + 1
    worst = 0.0
    for i in range(m):
        for j in range(m):
            # row i of J times column j of R
            if i == 0:
                s = 0.0
                for q in range(nS):
                    s += y[S_idx[q]] * R[q + 1, j]
            else:
                a = S_idx[i - 1]
                s = y[a] * R[0, j]
                for q in range(nS):
                    c = S_idx[q]
                    s += y[a] * y[c] * K[a, c] * R[q + 1, j]
            if i == j:
                s -= 1.0
            if abs(s) > worst:
                worst = abs(s)
    return worst
