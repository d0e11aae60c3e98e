"""Compiled loop of Budgeted Stochastic Gradient Descent (Wang, Crammer & Vucetic, JMLR 13, 2012).

BSGD is kernelized Pegasos with a cap on the number of support vectors. Its primal
objective (paper eq. 1, no bias) is ``P(w) = lam/2 ||w||^2 + 1/N sum_t l(w; x_t, y_t)``
with the hinge loss; the step size is ``eta_t = 1/(lam t)``. One SGD step (Algorithm 1):

    w_{t+1} = (1 - 1/t) w_t + beta_t Phi(x_t),   beta_t = y_t / (lam t)  if y_t f_t(x_t) < 1

(0 otherwise), followed, when the budget B is exceeded, by budget maintenance (Sec. 4):
removal of the SV with smallest |alpha| (4.1; ties to the oldest), its projection onto the remaining SVs (4.2),
or merging two SVs into a new point (4.3, RBF kernel).

State (allocated once by the estimator layer, capacity ``B + 1``): ``SV`` (B+1, d),
``alpha`` (B+1,), the SV kernel matrix ``Kc`` (B+1, B+1), int64 ``istate``
``[n_live, t, n_seen, n_maintenance]``. Rows ``[0, n_live)`` are live; deletion swaps the
last live row in. Work arrays (``krow``, ``Lw``, ``v``, ``z``) are preallocated too.
"""
import numpy as np
from ._jit import NO_REFCOUNT, njit

from .kernel import RBF, kernel_value

BS_N_LIVE = 0
BS_T = 1
BS_N_SEEN = 2
BS_N_MAINT = 3

MAINT_REMOVE = 0
MAINT_PROJECT = 1
MAINT_MERGE = 2

_INVPHI = 0.6180339887498949  # (sqrt(5) - 1) / 2


@njit(cache=True)
def _delete_row(SV, alpha, Kc, sv_t, n_live, m):
    """Delete live row ``m`` by moving the last live row into it; returns the new n_live."""
    last = n_live - 1
    if m != last:
        for k in range(SV.shape[1]):
            SV[m, k] = SV[last, k]
        alpha[m] = alpha[last]
        sv_t[m] = sv_t[last]
        for j in range(n_live):
            v = Kc[last, j]
            Kc[m, j] = v
            Kc[j, m] = v
        Kc[m, m] = Kc[last, last]
    alpha[last] = 0.0
    return last


@njit(cache=True)
def _argmin_abs(alpha, sv_t, n_live):
    """The SV with the smallest |alpha|; ties (within a relative 1e-9, which plain Pegasos
    steps produce routinely: every unmerged SV has |alpha| = 1/(lam t)) go to the oldest."""
    best = abs(alpha[0])
    for i in range(1, n_live):
        a = abs(alpha[i])
        if a < best:
            best = a
    lim = best * (1.0 + 1e-9)
    m = -1
    for i in range(n_live):
        if abs(alpha[i]) <= lim and (m < 0 or sv_t[i] < sv_t[m]):
            m = i
    return m


@njit(cache=True)
def merge_h(a, k_mn, tol):
    """Best interpolation ``h`` in [0, 1] for merging two same-sign SVs (paper Sec. 4.3).

    With ``z = h x_m + (1 - h) x_n`` and an RBF kernel, ``K(x_m, z) = k_mn^((1-h)^2)`` and
    ``K(x_n, z) = k_mn^(h^2)``; the merged coefficient is
    ``alpha_z = alpha_m k_mn^((1-h)^2) + alpha_n k_mn^(h^2)`` and the weight degradation
    ``||Delta||^2 = alpha_m^2 + alpha_n^2 + 2 alpha_m alpha_n k_mn - alpha_z^2`` is smallest
    where ``s(h) = a k_mn^((1-h)^2) + (1 - a) k_mn^(h^2)``, ``a = alpha_m/(alpha_m+alpha_n)``,
    is largest. Golden-section search to tolerance ``tol``, as in the paper, but on one half
    of [0, 1]: for distant points s(h) has two peaks, and since
    ``s(h) - s(1-h) = (2a - 1)(k^((1-h)^2) - k^(h^2))`` the global one lies in [1/2, 1]
    when ``a >= 1/2`` (z nearer the heavier SV), in [0, 1/2] otherwise.
    """
    if k_mn <= 1e-300:
        return 1.0 if a >= 0.5 else 0.0
    lk = np.log(k_mn)
    if a >= 0.5:
        lo = 0.5
        hi = 1.0
    else:
        lo = 0.0
        hi = 0.5
    h1 = hi - _INVPHI * (hi - lo)
    h2 = lo + _INVPHI * (hi - lo)
    s1 = a * np.exp(lk * (1.0 - h1) * (1.0 - h1)) + (1.0 - a) * np.exp(lk * h1 * h1)
    s2 = a * np.exp(lk * (1.0 - h2) * (1.0 - h2)) + (1.0 - a) * np.exp(lk * h2 * h2)
    while hi - lo > tol:
        if s1 < s2:
            lo = h1
            h1 = h2
            s1 = s2
            h2 = lo + _INVPHI * (hi - lo)
            s2 = a * np.exp(lk * (1.0 - h2) * (1.0 - h2)) + (1.0 - a) * np.exp(lk * h2 * h2)
        else:
            hi = h2
            h2 = h1
            s2 = s1
            h1 = hi - _INVPHI * (hi - lo)
            s1 = a * np.exp(lk * (1.0 - h1) * (1.0 - h1)) + (1.0 - a) * np.exp(lk * h1 * h1)
    return 0.5 * (lo + hi)


@njit(cache=True)
def _maintain_merge(code, kpar, SV, alpha, Kc, sv_t, n_live, z, tol):
    """Merging (Sec. 4.3): m = argmin |alpha|; partner n of the same sign minimising the
    weight degradation; replace both by z. Falls back to removal without a partner."""
    m = _argmin_abs(alpha, sv_t, n_live)
    am = alpha[m]
    best_e = np.inf
    best_n = np.int64(-1)   # (a literal -1 would compile _delete_row for it too)
    best_h = 0.0
    best_az = 0.0
    for n in range(n_live):
        if n == m:
            continue
        an = alpha[n]
        if an * am <= 0.0:
            continue
        k = Kc[m, n]
        h = merge_h(am / (am + an), k, tol)
        if k <= 1e-300:
            az = am if h == 1.0 else an
        else:
            lk = np.log(k)
            az = am * np.exp(lk * (1.0 - h) * (1.0 - h)) + an * np.exp(lk * h * h)
        e = am * am + an * an + 2.0 * am * an * k - az * az
        if e < best_e:
            best_e = e
            best_n = n
            best_h = h
            best_az = az
    if best_n < 0:
        return _delete_row(SV, alpha, Kc, sv_t, n_live, m)
    d = SV.shape[1]
    for k in range(d):
        z[k] = best_h * SV[m, k] + (1.0 - best_h) * SV[best_n, k]
    # delete the partner first (m moves if it was the last row)
    last = n_live - 1
    stamp = max(sv_t[m], sv_t[best_n])
    n_live = _delete_row(SV, alpha, Kc, sv_t, n_live, best_n)
    if m == last:
        m = best_n
    for k in range(d):
        SV[m, k] = z[k]
    alpha[m] = best_az
    sv_t[m] = stamp
    for j in range(n_live):
        v = kernel_value(code, kpar, SV[j], z)
        Kc[m, j] = v
        Kc[j, m] = v
    return n_live


@njit(cache=True, no_cpython_wrapper=True)
def _cholesky_solve(A, n, rhs, L, jitter):
    """Solve (A[:n,:n] + jitter I) x = rhs[:n] in place of rhs; L is work space.
    Returns 0, or 1 if the matrix is not positive definite."""
    for j in range(n):
        s = A[j, j] + jitter
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if s <= 0.0:
            return 1
        ljj = np.sqrt(s)
        L[j, j] = ljj
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / ljj
    for i in range(n):
        s = rhs[i]
        for k in range(i):
            s -= L[i, k] * rhs[k]
        rhs[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = rhs[i]
        for k in range(i + 1, n):
            s -= L[k, i] * rhs[k]
        rhs[i] = s / L[i, i]
    return 0


@njit(cache=True, no_cpython_wrapper=True)
def _project_out(SV, alpha, Kc, sv_t, n_live, Lw, v, jitter):
    """Projection (Sec. 4.2): m = argmin |alpha|; ``alpha_j += alpha_m beta_j`` with
    ``K_{-m} beta = k_{-m, m}`` (the projection of alpha_m Phi(x_m) onto the span of the
    other SVs), solved by a Cholesky factorisation of ``K_{-m} + jitter * mean(diag) I``
    in ``Lw``; O(B^3) per maintenance step. Returns (n_live, status)."""
    m = _argmin_abs(alpha, sv_t, n_live)
    am = alpha[m]
    # move m to the last row so that K_{-m} is the leading block
    last = n_live - 1
    if m != last:
        for k in range(SV.shape[1]):
            t = SV[m, k]
            SV[m, k] = SV[last, k]
            SV[last, k] = t
        t = alpha[m]
        alpha[m] = alpha[last]
        alpha[last] = t
        ti = sv_t[m]
        sv_t[m] = sv_t[last]
        sv_t[last] = ti
        for j in range(n_live):   # swap rows m and last
            t = Kc[m, j]
            Kc[m, j] = Kc[last, j]
            Kc[last, j] = t
        for j in range(n_live):   # swap columns m and last
            t = Kc[j, m]
            Kc[j, m] = Kc[j, last]
            Kc[j, last] = t
    nb = last
    dmean = 0.0
    for j in range(nb):
        v[j] = Kc[j, last]
        dmean += Kc[j, j]
    dmean /= max(nb, 1)
    status = _cholesky_solve(Kc, nb, v, Lw, jitter * dmean)
    if status == 0:
        for j in range(nb):
            alpha[j] += am * v[j]
    alpha[last] = 0.0
    return nb, status


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def bsgd_fit(code, kpar, X, y, sw, SV, alpha, Kc, sv_t, istate, lam, budget, maintenance,
             krow, Lw, v, z, tol, jitter, fout):
    """BSGD on a chunk (Wang, Crammer & Vucetic 2012, Algorithm 1 with Sec. 4 maintenance).
    Releases the GIL, and is compiled without reference counting, as
    ``tvm.tvm_partial_fit`` is.

    Parameters
    ----------
    code, kpar : kernel code and ``[gamma, degree, coef0]``
    X : ndarray of shape (n, d), float64
    y, sw : ndarray of shape (n,), float64
        Labels in {-1, +1}; non-negative example weights (scale the hinge sub-gradient).
    SV : ndarray of shape (budget + 1, d), float64
        Modified in place.
    alpha : ndarray of shape (budget + 1,), float64
        Modified in place.
    Kc : ndarray of shape (budget + 1, budget + 1), float64
        Kernel matrix of the live SVs. Modified in place.
    sv_t : ndarray of shape (budget + 1,), int64
        Arrival time t of each SV (a merged SV keeps the newer of the two); breaks ties of
        the smallest |alpha| in favour of the oldest. Modified in place.
    istate : ndarray of shape (4,), int64
        ``[n_live, t, n_seen, n_maintenance]``. Modified in place.
    lam : float
        Regularisation lambda > 0.
    budget : int
    maintenance : int
        0 removal, 1 projection, 2 merging (RBF only; the caller checks).
    krow, v : ndarray of shape (budget + 1,), float64
        Work space. Modified in place.
    Lw : ndarray of shape (budget, budget), float64
        Work space for projection. Modified in place.
    z : ndarray of shape (d,), float64
        Work space for merging. Modified in place.
    tol : float
        Golden-section tolerance of merging.
    jitter : float
        Relative ridge (times the mean kernel diagonal) added to the kernel matrix in
        projection.
    fout : ndarray of shape (n,) or (0,), float64
        When of length n, row t's decision value before the row is learned (under the model
        of the rows before it) is written to ``fout[t]``, for the online calibration
        (``fastbudget.calibration``); length 0 writes nothing. Modified in place.

    Returns
    -------
    status : int
        0 on success; 1 if a projection met a kernel matrix that is not positive definite
        (the SV was then removed without projection and the loop went on).
    """
    n_live = istate[BS_N_LIVE]
    t = istate[BS_T]
    n_maint = istate[BS_N_MAINT]
    d = X.shape[1]
    status = 0
    keep = fout.shape[0] > 0
    for i in range(X.shape[0]):
        x = X[i]
        t += 1
        f = 0.0
        for j in range(n_live):
            kv = kernel_value(code, kpar, SV[j], x)
            krow[j] = kv
            f += alpha[j] * kv
        if keep:
            fout[i] = f
        scale = 1.0 - 1.0 / t
        for j in range(n_live):
            alpha[j] *= scale
        if y[i] * f < 1.0 and sw[i] > 0.0:
            s = n_live
            for k in range(d):
                SV[s, k] = x[k]
            alpha[s] = sw[i] * y[i] / (lam * t)
            sv_t[s] = t
            for j in range(n_live):
                Kc[s, j] = krow[j]
                Kc[j, s] = krow[j]
            Kc[s, s] = kernel_value(code, kpar, x, x)
            n_live += 1
            if n_live > budget:
                n_maint += 1
                if maintenance == MAINT_MERGE:
                    n_live = _maintain_merge(code, kpar, SV, alpha, Kc, sv_t, n_live, z, tol)
                elif maintenance == MAINT_PROJECT:
                    n_live, st = _project_out(SV, alpha, Kc, sv_t, n_live, Lw, v, jitter)
                    if st != 0:
                        status = 1
                else:
                    m = _argmin_abs(alpha, sv_t, n_live)
                    n_live = _delete_row(SV, alpha, Kc, sv_t, n_live, m)
        istate[BS_N_SEEN] += 1
    istate[BS_N_LIVE] = n_live
    istate[BS_T] = t
    istate[BS_N_MAINT] = n_maint
    return status
