"""The bordered inverse R = J^-1 of the margin-set Jacobian (Cauwenberghs & Poggio 2000).

J = [[0, y_S^T], [y_S, Q_SS]] with Q_ij = y_i y_j K(x_i, x_j). Bordered index 0 is the
bias b, index p + 1 the p-th margin vector ``S_idx[p]``. Only the leading
``(nS + 1) x (nS + 1)`` block of the preallocated ``R`` is live.
"""
import numpy as np
from ._jit import njit

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


@njit(cache=True)
def r_mul_neg(R, v, m, out):
    """out[i] = -sum_{j < m} R[i, j] v[j] for i < m (``out`` modified in place): -R v on the
    live (m, m) block, each row's sum taken in increasing j from 0.0, as the plain double
    loop takes it (the same bits), but eight rows at a time.

    A row's sum is a chain of dependent additions that may not be reordered (no fastmath),
    so one row at a time runs at the latency of an addition per entry; eight independent
    chains keep the adder busy. (R is not symmetric to the last bit after the rank-one
    updates, so its columns cannot stand in for its rows.) This product is the O(|S|^2)
    part of every adiabatic step and of every growth of R."""
    i = 0
    while i + 8 <= m:
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        s4 = 0.0
        s5 = 0.0
        s6 = 0.0
        s7 = 0.0
        for j in range(m):
            vj = v[j]
            s0 += R[i, j] * vj
            s1 += R[i + 1, j] * vj
            s2 += R[i + 2, j] * vj
            s3 += R[i + 3, j] * vj
            s4 += R[i + 4, j] * vj
            s5 += R[i + 5, j] * vj
            s6 += R[i + 6, j] * vj
            s7 += R[i + 7, j] * vj
        out[i] = -s0
        out[i + 1] = -s1
        out[i + 2] = -s2
        out[i + 3] = -s3
        out[i + 4] = -s4
        out[i + 5] = -s5
        out[i + 6] = -s6
        out[i + 7] = -s7
        i += 8
    while i + 2 <= m:
        s0 = 0.0
        s1 = 0.0
        for j in range(m):
            vj = v[j]
            s0 += R[i, j] * vj
            s1 += R[i + 1, j] * vj
        out[i] = -s0
        out[i + 1] = -s1
        i += 2
    while i < m:
        s0 = 0.0
        for j in range(m):
            s0 += R[i, j] * v[j]
        out[i] = -s0
        i += 1


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
    r_mul_neg(R, v, m, beta)
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


@njit(cache=True, inline="always")
def _worse(worst, s, diag):
    """max(worst, |s - [diag]|) as ``jr_residual`` takes it (a NaN is passed over)."""
    if diag:
        s -= 1.0
    if abs(s) > worst:
        return abs(s)
    return worst


@njit(cache=True)
def jr_residual(y, K, S_idx, nS, R):
    """max |J R - I| over the live block (the drift certificate): ``jr_residual_into``
    with a scratch row of its own (allocated per call; compiled callers that must not
    allocate pass one to ``jr_residual_into``)."""
    acc = np.empty(nS + 1)
    return jr_residual_into(y, K, S_idx, nS, R, acc)


@njit(cache=True)
def jr_residual_into(y, K, S_idx, nS, R, acc):
    """max |J R - I| over the live block (the drift certificate); ``acc`` (>= nS + 1
    float64) is scratch, modified in place.

    Entry (i, j) is row i of J times column j of R, summed in increasing q as
    ``s = J[i, 0] R[0, j] + sum_q J[i, q + 1] R[q + 1, j]`` with J's entries formed from
    K (never stored). A whole row i of J R is summed at once in ``acc``: for each q, row
    q + 1 of R scaled by J[i, q + 1] is added to the row's m sums (an axpy over a
    contiguous row of R, which vectorises), so every entry's sum is taken in that order
    (the same bits as one entry at a time) and every J[i, q] is formed once. (A NaN entry
    is passed over by the maximum, as before; an infinite one is returned.)"""
    if nS == 0:
        return 0.0
    m = nS + 1
    worst = 0.0
    for i in range(m):
        if i == 0:
            for j in range(m):
                acc[j] = 0.0
            for q in range(nS):
                w = y[S_idx[q]]
                for j in range(m):
                    acc[j] += w * R[q + 1, j]
        else:
            a = S_idx[i - 1]
            ya = y[a]
            for j in range(m):
                acc[j] = ya * R[0, j]
            for q in range(nS):
                c = S_idx[q]
                w = ya * y[c] * K[a, c]
                for j in range(m):
                    acc[j] += w * R[q + 1, j]
        for j in range(m):
            worst = _worse(worst, acc[j], i == j)
    return worst
