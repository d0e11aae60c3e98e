"""StreamSVM ball updates and the small ball-and-points enclosing solver (paper 001).

Rai, Daume III & Venkatasubramanian, *Streamed Learning: One-Pass SVMs*, IJCAI 2009.

The l2-SVM is a minimum enclosing ball (MEB) problem over the label-augmented points
(eq. 3, eq. 7)

    p_n = [ y_n phi(x_n) ; (C s_n)^(-1/2) e_n ],

where ``e_n`` is the n-th unit vector of an N-dimensional slack block and ``s_n`` an optional
example weight (``s_n = 1`` gives the paper). A ball centre is ``c = [w ; v]``; its slack part
``v`` is never stored, only ``xi2 = C ||v||^2`` (Algorithm 1, lines 3 and 9). Because every
``e_n`` is orthogonal to everything seen before it, the squared distance from a centre to a new
point is

    d^2 = ||w - y_n phi(x_n)||^2 + (xi2 + 1/s_n) / C                       (Algorithm 1, line 5)

Notes on the transcription (all exact in the augmented space, all reduce to the paper for
``C = 1``, ``s_n = 1``):

* The paper's line 5 reads ``xi^2 + 1/C`` while lines 3 and 9 keep ``xi^2`` in units of the
  label coefficients (``xi^2 = sum_m alpha_m^2``, initialised to 1). The slack block of the
  centre then has squared norm ``xi^2 / C``, so the distance is ``(xi^2 + 1)/C``; both readings
  agree when C = 1. We keep lines 3 and 9 verbatim and use ``(xi2 + 1/s_n)/C`` in line 5.
* Lines 7-9 use one step ``beta = (1 - R/d)/2`` computed with the radius *before* line 8
  (eq. 4-6: the centre moves ``delta = (d - R)/2`` towards the point).
* A bias is the usual augmented feature: ``x~ = [x ; b0]`` (``b0 = 0``: no bias, as in the
  paper). For kernels, ``k~(x, z) = k(x, z) + b0^2``.
* Unequal weights need a centre constraint. The MEB dual is
  ``max_mu sum_n mu_n ||p_n||^2 - ||sum_n mu_n p_n||^2`` over the simplex, which is the l2-SVM
  dual only while ``||p_n||^2 = k~_nn + 1/(C s_n)`` is the same for every n. With unequal
  ``s_n`` the linear term favours light examples, so a heavier class was predicted *less*.
  As in the centre-constrained MEB of Tsang et al. (generalized core vector machines), each
  point is lifted by a height ``h_n = sqrt((1/s_min - 1/s_n)/C)`` along a direction the centre
  never uses, which makes ``||p_n||^2 + h_n^2`` the same for all n and the dual exactly the
  weighted l2-SVM's. ``s_min`` is the smallest weight seen so far (``fst[3] = 1/s_min``);
  when it falls, every height grows by the same amount and so does every radius
  (``R^2 += (1/s_new - 1/s_min)/C``), which keeps all earlier points enclosed. Equal weights
  give ``h_n = 0``: the paper's algorithm unchanged. Enclosing a ball (c, R) and a lifted
  point at subspace distance D: the centre moves ``t = min(D, (D^2 + h^2 - R^2) / (2 (R + D)))``
  towards it (``_lifted_step``; ``t = (D - R)/2`` when h = 0).

Conventions: ``fst``/``ist`` are small float/int state vectors (layouts below), mutated in place.
Functions return an integer status (``OK`` or one of the codes below) instead of raising.

Linear state (``stream_linear``): ``w`` (d+1,) with ``w[d]`` the bias component;
``fst = [R, xi2, (unused), 1/s_min]``; ``ist = [M, n_buf, n_seen, n_solves, n_skipped, first_failed_row]``.
Kernel state (``stream_kernel``): core vectors ``SV`` (capacity, d), ``alpha`` (capacity,)
signed coefficients (``alpha_m = lambda_m y_m``), ``sv_s`` (capacity,) their weights;
``fst = [R, xi2, wn2, 1/s_min]`` with ``wn2 = ||w||^2``; ``ist`` as above (M = live core vectors).
Lookahead buffer: ``bufX`` (L, d), ``bufy``, ``bufs``, ``bufg`` (<centre, p_k>), ``bufk``
(k~(x_k, x_k)), all (L,).
"""
import numpy as np
from ._jit import njit

from .kernel import kernel_at, kernel_value

OK = 0
FULL = 1          # kernel capacity reached (policy "raise")
SOLVER_FAIL = 2   # Gram matrix not positive definite or Newton failed

FULL_RAISE = 0    # on_full policies of stream_coreset
FULL_IGNORE = 1
FULL_EVICT = 2

_FST_FLOOR = 3    # fst[3] = 1 / (smallest example weight seen)
FST_SIZE = 4

_IST_M = 0
_IST_NBUF = 1
_IST_NSEEN = 2
_IST_NSOLVES = 3
_IST_NSKIPPED = 4
_IST_FAILROW = 5
IST_SIZE = 6


# ---------------------------------------------------------------------------- small dense LA
@njit(cache=True, no_cpython_wrapper=True)
def _cholesky(A, n, Lf):
    """Lower Cholesky factor of A[:n, :n] into Lf[:n, :n] (modified in place); False if not PD."""
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= Lf[i, k] * Lf[j, k]
            if i == j:
                if not s > 0.0:
                    return False
                Lf[i, i] = np.sqrt(s)
            else:
                Lf[i, j] = s / Lf[j, j]
        for j in range(i + 1, n):
            Lf[i, j] = 0.0
    return True


@njit(cache=True, no_cpython_wrapper=True)
def _chol_solve(Lf, n, b, out):
    """Solve (Lf Lf^T) out = b for the first n entries; ``out`` modified in place."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= Lf[i, k] * out[k]
        out[i] = s / Lf[i, i]
    for i in range(n - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, n):
            s -= Lf[k, i] * out[k]
        out[i] = s / Lf[i, i]


# ---------------------------------------------------------------------------- enclosing solver
@njit(cache=True, no_cpython_wrapper=True)
def _barrier_value(A, r, q, m, z, tau):
    """tau * t - sum_i log((t - r_i)^2 - ||c - a_i||^2 - q_i); inf outside the interior."""
    t = z[m]
    val = tau * t
    for i in range(m):
        s = t - r[i]
        if not s > 0.0:
            return np.inf
        uu = 0.0
        for k in range(m):
            u = z[k] - A[i, k]
            uu += u * u
        D = s * s - uu - q[i]
        if not D > 0.0:
            return np.inf
        val -= np.log(D)
    return val


@njit(cache=True)
def meb_balls(G, r, q, m, mu, rel_tol):
    """Minimum ball enclosing m balls given by the Gram matrix of their centres.

    Solves ``min_c max_i sqrt(||c - c_i||^2 + q_i) + r_i`` for centres ``c_i`` known only through
    ``G[i, j] = <c_i, c_j>`` (positive definite: in the augmented space of eq. 3 every ball and
    every point owns disjoint slack coordinates, so G >= diag(xi2_i / C) > 0). The optimal
    centre lies in the span of the c_i; it is returned as ``c = sum_i mu_i c_i``.

    Method: Cholesky ``G = L L^T`` gives coordinates ``a_i = L[i, :]`` in R^m; the second-order
    cone program ``min t s.t. ||(c - a_i, sqrt(q_i))|| <= t - r_i`` is solved by a primal
    log-barrier method (barrier ``-log((t - r_i)^2 - ||c - a_i||^2 - q_i)``, parameter 2 per
    cone) with damped Newton
    steps. It stops when the barrier duality-gap bound ``2 m / tau`` is below
    ``rel_tol * t / 4``, so the returned radius exceeds the optimum by at most about
    ``rel_tol`` relatively. The returned radius is recomputed at the returned centre, so the
    ball encloses every input exactly (up to rounding).

    ``q_i > 0`` makes input i a *lifted point*: a point at height ``sqrt(q_i)`` in a direction
    the centre may not use (the centre constraint of weighted examples, module notes); balls
    have ``q_i = 0``.

    Parameters
    ----------
    G : ndarray (>= m, >= m) float64
        Gram matrix of the centres.
    r : ndarray (>= m,) float64
        Radii (>= 0).
    q : ndarray (>= m,) float64
        Squared heights of lifted points (>= 0; 0 for balls and ordinary points).
    m : int
        Number of balls (points are balls of radius 0).
    mu : ndarray (>= m,) float64
        Output coefficients. Modified in place.
    rel_tol : float
        Relative accuracy of the radius (e.g. 1e-6).

    Returns
    -------
    status : int
        ``OK`` or ``SOLVER_FAIL``.
    radius : float
        Radius of the returned ball.

    Notes
    -----
    Allocates O(m^2) scratch per call (called once per L buffered points, never per example).
    """
    if m == 1:
        mu[0] = 1.0
        return OK, np.sqrt(q[0]) + r[0]
    A = np.zeros((m, m))
    if not _cholesky(G, m, A):
        return SOLVER_FAIL, 0.0
    n = m + 1
    z = np.zeros(n)
    # start at the centre of the largest ball, pushed towards the mean
    big = 0
    for i in range(1, m):
        if r[i] > r[big]:
            big = i
    for k in range(m):
        mean = 0.0
        for i in range(m):
            mean += A[i, k]
        z[k] = 0.5 * A[big, k] + 0.5 * mean / m
    t0 = 0.0
    for i in range(m):
        uu = 0.0
        for k in range(m):
            u = z[k] - A[i, k]
            uu += u * u
        v = np.sqrt(uu + q[i]) + r[i]
        if v > t0:
            t0 = v
    scale = t0 if t0 > 0.0 else 1.0
    z[m] = t0 + 0.5 * scale
    tau = 2.0 * m / scale
    g = np.zeros(n)
    H = np.zeros((n, n))
    Lh = np.zeros((n, n))
    dz = np.zeros(n)
    zt = np.zeros(n)
    u = np.zeros(m)
    status = OK
    for outer in range(80):
        fval = _barrier_value(A, r, q, m, z, tau)
        for it in range(200):
            for a in range(n):
                g[a] = 0.0
                for b in range(n):
                    H[a, b] = 0.0
            g[m] = tau
            t = z[m]
            for i in range(m):
                s = t - r[i]
                uu = 0.0
                for k in range(m):
                    u[k] = z[k] - A[i, k]
                    uu += u[k] * u[k]
                D = s * s - uu - q[i]
                iD = 1.0 / D
                iD2 = iD * iD
                for k in range(m):
                    g[k] += 2.0 * u[k] * iD
                    for l in range(k + 1):
                        H[k, l] += 4.0 * u[k] * u[l] * iD2
                    H[k, k] += 2.0 * iD
                    H[m, k] -= 4.0 * s * u[k] * iD2
                g[m] -= 2.0 * s * iD
                H[m, m] += 4.0 * s * s * iD2 - 2.0 * iD
            for k in range(n):
                for l in range(k + 1, n):
                    H[k, l] = H[l, k]
            if not _cholesky(H, n, Lh):
                return SOLVER_FAIL, 0.0
            for a in range(n):
                g[a] = -g[a]
            _chol_solve(Lh, n, g, dz)
            lam2 = 0.0
            for a in range(n):
                lam2 += g[a] * dz[a]
            if lam2 < 1e-14:
                break
            step = 1.0
            ok = False
            for ls in range(80):
                for a in range(n):
                    zt[a] = z[a] + step * dz[a]
                fnew = _barrier_value(A, r, q, m, zt, tau)
                if fnew <= fval - 0.25 * step * lam2:
                    ok = True
                    break
                step *= 0.5
            if not ok:
                break
            for a in range(n):
                z[a] = zt[a]
            fval = fnew
            if lam2 < 1e-10:
                break
        if 2.0 * m / tau <= 0.25 * rel_tol * z[m]:
            break
        tau *= 8.0
    # coefficients: L^T mu = c (back substitution)
    for i in range(m - 1, -1, -1):
        s = z[i]
        for k in range(i + 1, m):
            s -= A[k, i] * mu[k]
        mu[i] = s / A[i, i]
    rad = 0.0
    for i in range(m):
        uu = 0.0
        for k in range(m):
            d = z[k] - A[i, k]
            uu += d * d
        v = np.sqrt(uu + q[i]) + r[i]
        if v > rad:
            rad = v
    return status, rad


# ---------------------------------------------------------------------------- weighted points
@njit(cache=True, no_cpython_wrapper=True)
def _lift(fst, s_i, inv_C):
    """Squared height ``h^2`` of an example of weight ``s_i`` (module notes). Lowers the
    weight floor first when ``s_i`` is the smallest weight so far; returns the amount
    ``eps`` by which every squared radius must then grow (0 otherwise)."""
    inv_s = 1.0 / s_i
    eps = 0.0
    if fst[_FST_FLOOR] == 0.0:          # not set yet (no example yet, or a state saved without it)
        fst[_FST_FLOOR] = inv_s
    elif inv_s > fst[_FST_FLOOR]:
        eps = (inv_s - fst[_FST_FLOOR]) * inv_C
        fst[_FST_FLOOR] = inv_s
    return (fst[_FST_FLOOR] - inv_s) * inv_C, eps


@njit(cache=True, no_cpython_wrapper=True)
def _lifted_step(D2, h2, R):
    """Smallest ball enclosing the ball (c, R) and a point at squared distance ``D2`` from c in
    the centre's subspace and squared height ``h2`` above it: returns ``(beta, R_new)``, the
    centre moving to ``c + beta (p - c)``. The caller checks ``D2 + h2 >= R^2``; ``D2 > 0``
    always holds in the augmented space (the point's own slack coordinate)."""
    D = np.sqrt(D2)
    if h2 == 0.0:                       # the paper's step (Algorithm 1, lines 6-8)
        return 0.5 * (1.0 - R / D), R + 0.5 * (D - R)
    if R + D <= 0.0:
        return 0.0, np.sqrt(h2)
    t = (D2 + h2 - R * R) / (2.0 * (R + D))
    if t > D:
        t = D
    if t < 0.0:
        t = 0.0
    rest = D - t
    R_new = np.sqrt(rest * rest + h2)
    if R + t > R_new:
        R_new = R + t
    return (t / D if D > 0.0 else 0.0), R_new


# ---------------------------------------------------------------------------- linear kernel
@njit(cache=True, no_cpython_wrapper=True)
def _dot_aug(w, x, b0):
    """<w, [x ; b0]> for w of length len(x) + 1."""
    d = x.shape[0]
    s = w[d] * b0
    for k in range(d):
        s += w[k] * x[k]
    return s


@njit(cache=True, no_cpython_wrapper=True)
def _norm2_aug(x, b0):
    s = b0 * b0
    for k in range(x.shape[0]):
        s += x[k] * x[k]
    return s


@njit(cache=True)
def absorb_buffer_linear(w, fst, ist, bufX, bufy, bufs, bufg, bufk, nb, inv_C, b0, rel_tol, G, mu, r,
                         q):
    """Replace the ball (w, R, xi2) by the minimum ball enclosing it and nb buffered points.

    Algorithm 2, lines 6-8 and 12-14. ``w``, ``fst`` and ``ist`` (M += nb, n_buf = 0,
    n_solves += 1) are modified in place; ``G`` (L+1, L+1), ``mu``, ``r`` and ``q`` (L+1,) are
    scratch.
    ``bufg[k] = y_k <w, x~_k>`` must hold for the current ball.
    """
    if nb == 0:
        return OK
    d = bufX.shape[1]
    m = nb + 1
    R = fst[0]
    xi2 = fst[1]
    wn2 = 0.0
    for k in range(d + 1):
        wn2 += w[k] * w[k]
    # Gram of the augmented centres: [ball centre, p_1 .. p_nb]
    G[0, 0] = wn2 + xi2 * inv_C
    r[0] = R
    q[0] = 0.0
    for j in range(nb):
        G[0, j + 1] = bufg[j]
        G[j + 1, 0] = bufg[j]
        r[j + 1] = 0.0
        q[j + 1] = (fst[_FST_FLOOR] - 1.0 / bufs[j]) * inv_C
        for i in range(j + 1):
            if i == j:
                G[j + 1, j + 1] = bufk[j] + inv_C / bufs[j]
            else:
                s = b0 * b0
                for k in range(d):
                    s += bufX[i, k] * bufX[j, k]
                s *= bufy[i] * bufy[j]
                G[i + 1, j + 1] = s
                G[j + 1, i + 1] = s
    status, rad = meb_balls(G, r, q, m, mu, rel_tol)
    if status != OK:
        return status
    mu0 = mu[0]
    for k in range(d + 1):
        w[k] *= mu0
    xi2 = mu0 * mu0 * xi2
    for j in range(nb):
        c = mu[j + 1] * bufy[j]
        for k in range(d):
            w[k] += c * bufX[j, k]
        w[d] += c * b0
        xi2 += mu[j + 1] * mu[j + 1] / bufs[j]
    fst[0] = rad
    fst[1] = xi2
    ist[_IST_M] += nb
    ist[_IST_NBUF] = 0
    ist[_IST_NSOLVES] += 1
    return OK


@njit(cache=True)
def stream_linear(X, y, sw, inv_C, b0, L, w, fst, ist, bufX, bufy, bufs, bufg, bufk, rel_tol, G, mu, r,
                  q):
    """One pass of StreamSVM (Algorithm 1 if L == 1, Algorithm 2 otherwise), linear kernel.

    Parameters
    ----------
    X : ndarray (n, d) float64
    y : ndarray (n,) float64 in {-1, +1}
    sw : ndarray (n,) float64
        Example weights (C_n = C s_n); rows with weight 0 are skipped.
    inv_C : float
        1 / C.
    b0 : float
        Bias feature value (0 for the unbiased formulation of the paper).
    L : int
        Lookahead (1: closed-form update of Algorithm 1).
    w : ndarray (d+1,) float64
        Centre (weight vector, last entry the bias component). Modified in place.
    fst : ndarray (4,) float64
        [R, xi2, (unused), 1/s_min]. Modified in place.
    ist : ndarray (6,) int64
        Counters, see module docstring. Modified in place.
    bufX, bufy, bufs, bufg, bufk : ndarrays (L, d), (L,) x4 float64
        Lookahead buffer. Modified in place.
    rel_tol : float
        Relative accuracy of the enclosing solver.
    G, mu, r, q : ndarrays (L+1, L+1), (L+1,) x3 float64
        Solver scratch. Modified in place.

    Returns
    -------
    status : int

    Notes
    -----
    Algorithm 1 (eq. 4-7): ``d = sqrt(||w - y x||^2 + (xi2 + 1/s)/C)``; if ``d >= R``:
    ``beta = (1 - R/d)/2``, ``w += beta (y x - w)``, ``R += (d - R)/2``,
    ``xi2 = xi2 (1 - beta)^2 + beta^2 / s``, ``M += 1``. With unequal weights the point is
    lifted (module notes): the test uses ``sqrt(d^2 + h^2)`` and the step ``_lifted_step``.
    Algorithm 2: points with ``d >= R`` go to the buffer; when it holds L points the ball is
    replaced by the minimum ball enclosing the ball and the buffer (``meb_balls``).
    """
    n = X.shape[0]
    d = X.shape[1]
    for i in range(n):
        s_i = sw[i]
        if s_i <= 0.0:
            continue
        x = X[i]
        yi = y[i]
        if ist[_IST_NSEEN] == 0 and ist[_IST_M] == 0:
            # line 3: M = 1, R = 0, xi2 = 1, w = y_1 x_1
            for k in range(d):
                w[k] = yi * x[k]
            w[d] = yi * b0
            fst[0] = 0.0
            fst[1] = 1.0 / s_i
            fst[_FST_FLOOR] = 1.0 / s_i
            ist[_IST_M] = 1
            ist[_IST_NSEEN] = 1
            continue
        ist[_IST_NSEEN] += 1
        h2, eps = _lift(fst, s_i, inv_C)
        if eps > 0.0:
            fst[0] = np.sqrt(fst[0] * fst[0] + eps)
        R = fst[0]
        xi2 = fst[1]
        # line 5
        dd = 0.0
        for k in range(d):
            t = w[k] - yi * x[k]
            dd += t * t
        t = w[d] - yi * b0
        dd += t * t
        D2 = dd + (xi2 + 1.0 / s_i) * inv_C
        if np.sqrt(D2 + h2) >= R:
            if L == 1:
                beta, fst[0] = _lifted_step(D2, h2, R)
                for k in range(d):
                    w[k] += beta * (yi * x[k] - w[k])
                w[d] += beta * (yi * b0 - w[d])
                omb = 1.0 - beta
                fst[1] = xi2 * omb * omb + beta * beta / s_i
                ist[_IST_M] += 1
            else:
                nb = ist[_IST_NBUF]
                for k in range(d):
                    bufX[nb, k] = x[k]
                bufy[nb] = yi
                bufs[nb] = s_i
                bufg[nb] = yi * _dot_aug(w, x, b0)
                bufk[nb] = _norm2_aug(x, b0)
                ist[_IST_NBUF] = nb + 1
                if nb + 1 == L:
                    st = absorb_buffer_linear(w, fst, ist, bufX, bufy, bufs, bufg, bufk, nb + 1,
                                              inv_C, b0, rel_tol, G, mu, r, q)
                    if st != OK:
                        ist[_IST_FAILROW] = i
                        return st
    return OK


# ---------------------------------------------------------------------------- multiple balls
@njit(cache=True, no_cpython_wrapper=True)
def _ball_dist(Wb, xib, i, j, inv_C):
    """Augmented distance between centres i and j (disjoint slack supports)."""
    s = 0.0
    for k in range(Wb.shape[1]):
        t = Wb[i, k] - Wb[j, k]
        s += t * t
    return np.sqrt(s + (xib[i] + xib[j]) * inv_C)


@njit(cache=True, no_cpython_wrapper=True)
def _merge_items(ra, qa, rb, qb, D):
    """Smallest ball enclosing items a and b whose centres are D apart: returns ``(lam, R)``,
    the new centre at ``(1 - lam) c_a + lam c_b``. An item is a ball (radius r, q = 0) or a
    lifted point (r = 0, squared height q > 0); either may contain the other."""
    if qa == 0.0 and qb == 0.0:
        if D + rb <= ra:
            return 0.0, ra
        if D + ra <= rb:
            return 1.0, rb
        Rn = 0.5 * (D + ra + rb)
        return (Rn - ra) / D, Rn
    if qa == 0.0:
        return _lifted_step(D * D, qb, ra)
    if qb == 0.0:
        beta, Rn = _lifted_step(D * D, qa, rb)
        return 1.0 - beta, Rn
    t = (D * D + qb - qa) / (2.0 * D)     # two lifted points: equal distances
    if t < 0.0:
        t = 0.0
    if t > D:
        t = D
    Rn = np.sqrt(t * t + qa)
    rest = D - t
    v = np.sqrt(rest * rest + qb)
    if v > Rn:
        Rn = v
    return t / D, Rn


@njit(cache=True, no_cpython_wrapper=True)
def _merge_into(Wb, Rb, Qb, xib, i, j, D):
    """Replace item i by the smallest ball enclosing items i and j (``_merge_items``)."""
    lam, Rn = _merge_items(Rb[i], Qb[i], Rb[j], Qb[j], D)
    for k in range(Wb.shape[1]):
        Wb[i, k] = (1.0 - lam) * Wb[i, k] + lam * Wb[j, k]
    xib[i] = (1.0 - lam) * (1.0 - lam) * xib[i] + lam * lam * xib[j]
    Rb[i] = Rn
    Qb[i] = 0.0


@njit(cache=True, no_cpython_wrapper=True)
def _copy_item(Wb, Rb, Qb, xib, src, dst):
    for k in range(Wb.shape[1]):
        Wb[dst, k] = Wb[src, k]
    Rb[dst] = Rb[src]
    Qb[dst] = Qb[src]
    xib[dst] = xib[src]


@njit(cache=True)
def stream_multiball(X, y, sw, inv_C, b0, K, Wb, Rb, Qb, xib, Dm, fst, ist, dnew):
    """One pass of the multiple-balls StreamSVM (Sec. 4.3), linear kernel.

    Keeps up to K items (rows of ``Wb`` (K+1, d+1), radii ``Rb``, squared heights ``Qb`` and
    ``xib`` (K+1,); row K is scratch for the incoming point). An item is a ball or, with
    unequal weights, a single lifted point (module notes; ``_merge_items``). A point inside
    some ball is discarded. Otherwise, while fewer than K items exist it becomes a new item;
    else the K+1 items (the K and the point) are reduced to K by merging the pair whose
    enclosing ball is smallest (greedy policy; merging the point into ball i is the Algorithm 1
    update of ball i). ``Dm`` (K+1, K+1) caches centre distances (in the centre subspace). All
    arrays, ``fst`` (``fst[3]``: weight floor) and ``ist`` (ist[1] = number of live items) are
    modified in place; ``dnew`` (K,) is scratch.
    """
    n = X.shape[0]
    d = X.shape[1]
    for i in range(n):
        s_i = sw[i]
        if s_i <= 0.0:
            continue
        x = X[i]
        yi = y[i]
        ist[_IST_NSEEN] += 1
        nb = ist[_IST_NBUF]
        h2, eps = _lift(fst, s_i, inv_C)
        if eps > 0.0:                    # every lifted point rises; balls grow to match
            for b in range(nb):
                if Rb[b] == 0.0:
                    Qb[b] += eps
                else:
                    Rb[b] = np.sqrt(Rb[b] * Rb[b] + eps)
        enclosed = False
        for b in range(nb):
            dd = 0.0
            for k in range(d):
                t = Wb[b, k] - yi * x[k]
                dd += t * t
            t = Wb[b, d] - yi * b0
            dd += t * t
            D2 = dd + (xib[b] + 1.0 / s_i) * inv_C
            dnew[b] = np.sqrt(D2)
            if np.sqrt(D2 + h2) < Rb[b]:
                enclosed = True
                break
        if enclosed:
            continue
        ist[_IST_M] += 1
        # the point as item K (scratch row)
        for k in range(d):
            Wb[K, k] = yi * x[k]
        Wb[K, d] = yi * b0
        Rb[K] = 0.0
        Qb[K] = h2
        xib[K] = 1.0 / s_i
        if nb < K:
            slot = nb
            _copy_item(Wb, Rb, Qb, xib, K, slot)
            ist[_IST_NBUF] = nb + 1
            for b in range(nb):
                Dm[slot, b] = dnew[b]
                Dm[b, slot] = dnew[b]
            Dm[slot, slot] = 0.0
            continue
        # choose the cheapest merge among K+1 items
        best = np.inf
        bi = np.int64(-1)
        bj = np.int64(-1)
        for a in range(K):
            v = _merge_items(Rb[a], Qb[a], 0.0, h2, dnew[a])[1]
            if v < best:
                best = v
                bi = a
                bj = K
        for a in range(K):
            for b in range(a):
                v = _merge_items(Rb[a], Qb[a], Rb[b], Qb[b], Dm[a, b])[1]
                if v < best:
                    best = v
                    bi = a
                    bj = b
        if bj == K:
            _merge_into(Wb, Rb, Qb, xib, bi, K, dnew[bi])
            changed0 = bi
            changed1 = np.int64(-1)
        else:
            _merge_into(Wb, Rb, Qb, xib, bi, bj, Dm[bi, bj])
            _copy_item(Wb, Rb, Qb, xib, K, bj)
            changed0 = bi
            changed1 = bj
        for b in range(K):
            if b != changed0:
                v = _ball_dist(Wb, xib, changed0, b, inv_C)
                Dm[changed0, b] = v
                Dm[b, changed0] = v
        if changed1 >= 0:
            for b in range(K):
                if b != changed1:
                    v = _ball_dist(Wb, xib, changed1, b, inv_C)
                    Dm[changed1, b] = v
                    Dm[b, changed1] = v
    return OK


@njit(cache=True)
def merge_balls_linear(Wb, Rb, Qb, xib, nb, inv_C, rel_tol, w, fst):
    """Minimum ball enclosing the nb live items (end of stream, Sec. 4.3).

    Writes the centre to ``w`` (d+1,) and ``fst = [R, xi2]`` (modified in place). Returns status.
    """
    G = np.zeros((nb, nb))
    r = np.zeros(nb)
    q = np.zeros(nb)
    mu = np.zeros(nb)
    for i in range(nb):
        r[i] = Rb[i]
        q[i] = Qb[i]
        for j in range(i + 1):
            s = 0.0
            for k in range(Wb.shape[1]):
                s += Wb[i, k] * Wb[j, k]
            if i == j:
                s += xib[i] * inv_C
            G[i, j] = s
            G[j, i] = s
    status, rad = meb_balls(G, r, q, nb, mu, rel_tol)
    if status != OK:
        return status
    for k in range(Wb.shape[1]):
        s = 0.0
        for i in range(nb):
            s += mu[i] * Wb[i, k]
        w[k] = s
    xi2 = 0.0
    for i in range(nb):
        xi2 += mu[i] * mu[i] * xib[i]
    fst[0] = rad
    fst[1] = xi2
    return OK


# ---------------------------------------------------------------------------- kernelized
@njit(cache=True, no_cpython_wrapper=True)
def _kaug(code, kpar, b0, x, z):
    return kernel_value(code, kpar, x, z) + b0 * b0


@njit(cache=True)
def absorb_buffer_kernel(code, kpar, b0, SV, alpha, sv_s, fst, ist, bufX, bufy, bufs, bufg, bufk,
                         nb, inv_C, rel_tol, G, mu, r, q):
    """Kernel version of ``absorb_buffer_linear`` (Algorithm 2 with Sec. 4.2's coefficients).

    Appends the nb buffered points as core vectors (caller checks capacity); ``SV``, ``alpha``,
    ``sv_s``, ``fst = [R, xi2, wn2]`` and ``ist`` are modified in place.
    """
    if nb == 0:
        return OK
    m = nb + 1
    R = fst[0]
    xi2 = fst[1]
    wn2 = fst[2]
    G[0, 0] = wn2 + xi2 * inv_C
    r[0] = R
    q[0] = 0.0
    for j in range(nb):
        G[0, j + 1] = bufg[j]
        G[j + 1, 0] = bufg[j]
        r[j + 1] = 0.0
        q[j + 1] = (fst[_FST_FLOOR] - 1.0 / bufs[j]) * inv_C
        for i in range(j + 1):
            if i == j:
                G[j + 1, j + 1] = bufk[j] + inv_C / bufs[j]
            else:
                s = bufy[i] * bufy[j] * _kaug(code, kpar, b0, bufX[i], bufX[j])
                G[i + 1, j + 1] = s
                G[j + 1, i + 1] = s
    status, rad = meb_balls(G, r, q, m, mu, rel_tol)
    if status != OK:
        return status
    M = ist[_IST_M]
    mu0 = mu[0]
    for a in range(M):
        alpha[a] *= mu0
    # ||w||^2 of the new centre: Gram of the w-parts (slack parts removed)
    wn = mu0 * mu0 * wn2
    xi2 = mu0 * mu0 * xi2
    for j in range(nb):
        wn += 2.0 * mu0 * mu[j + 1] * bufg[j]
        for i in range(nb):
            wn += mu[i + 1] * mu[j + 1] * (G[i + 1, j + 1] - (inv_C / bufs[j] if i == j else 0.0))
        xi2 += mu[j + 1] * mu[j + 1] / bufs[j]
        for k in range(bufX.shape[1]):
            SV[M + j, k] = bufX[j, k]
        alpha[M + j] = mu[j + 1] * bufy[j]
        sv_s[M + j] = bufs[j]
    fst[0] = rad
    fst[1] = xi2
    fst[2] = wn
    ist[_IST_M] = M + nb
    ist[_IST_NBUF] = 0
    ist[_IST_NSOLVES] += 1
    return OK


@njit(cache=True)
def stream_kernel(code, kpar, b0, X, y, sw, inv_C, L, on_full_raise, SV, alpha, sv_s, fst, ist,
                  bufX, bufy, bufs, bufg, bufk, rel_tol, G, mu, r, q):
    """One pass of kernelized StreamSVM (Sec. 4.2; Algorithm 1 if L == 1, else Algorithm 2).

    Distance (Sec. 4.2, with the slack scaling of the module notes):
    ``d^2 = sum_nm alpha_n alpha_m k~_nm + k~(x, x) - 2 y sum_m alpha_m k~(x_m, x)
    + (xi2 + 1/s)/C``; update ``alpha_{1:M} *= 1 - beta``, ``alpha_{M+1} = beta y`` with
    ``beta = (1 - R/d)/2`` (``_lifted_step`` for unequal weights, module notes); ``||w||^2`` is
    carried along in ``fst[2]``.

    Core vectors live in ``SV`` (capacity, d) and ``alpha``/``sv_s`` (capacity,), all modified in
    place, as are ``fst``, ``ist`` and the buffer arrays. When an update needs more rows than the
    capacity: with ``on_full_raise`` the function returns ``FULL`` (ist[5] = row); otherwise the
    update is skipped and counted in ist[4] (the ball then no longer encloses that point).
    """
    n = X.shape[0]
    cap = SV.shape[0]
    d = X.shape[1]
    for i in range(n):
        s_i = sw[i]
        if s_i <= 0.0:
            continue
        x = X[i]
        yi = y[i]
        M = ist[_IST_M]
        kxx = _kaug(code, kpar, b0, x, x)
        if ist[_IST_NSEEN] == 0 and M == 0:
            if cap < 1:
                if on_full_raise:
                    ist[_IST_FAILROW] = i
                    return FULL
                ist[_IST_NSKIPPED] += 1
                continue
            for k in range(d):
                SV[0, k] = x[k]
            alpha[0] = yi
            sv_s[0] = s_i
            fst[0] = 0.0
            fst[1] = 1.0 / s_i
            fst[2] = kxx
            fst[_FST_FLOOR] = 1.0 / s_i
            ist[_IST_M] = 1
            ist[_IST_NSEEN] = 1
            continue
        ist[_IST_NSEEN] += 1
        h2, eps = _lift(fst, s_i, inv_C)
        if eps > 0.0:
            fst[0] = np.sqrt(fst[0] * fst[0] + eps)
        R = fst[0]
        xi2 = fst[1]
        wn2 = fst[2]
        f = 0.0
        for a in range(M):
            c = alpha[a]
            if c != 0.0:
                f += c * _kaug(code, kpar, b0, SV[a], x)
        dd = wn2 + kxx - 2.0 * yi * f + (xi2 + 1.0 / s_i) * inv_C
        if dd < 0.0:
            dd = 0.0
        if np.sqrt(dd + h2) < R:
            continue
        if L == 1:
            if M + 1 > cap:
                if on_full_raise:
                    ist[_IST_FAILROW] = i
                    return FULL
                ist[_IST_NSKIPPED] += 1
                continue
            beta, R_new = _lifted_step(dd, h2, R)
            omb = 1.0 - beta
            for a in range(M):
                alpha[a] *= omb
            for k in range(d):
                SV[M, k] = x[k]
            alpha[M] = beta * yi
            sv_s[M] = s_i
            fst[2] = omb * omb * wn2 + 2.0 * omb * beta * yi * f + beta * beta * kxx
            fst[1] = xi2 * omb * omb + beta * beta / s_i
            fst[0] = R_new
            ist[_IST_M] = M + 1
        else:
            nb = ist[_IST_NBUF]
            for k in range(d):
                bufX[nb, k] = x[k]
            bufy[nb] = yi
            bufs[nb] = s_i
            bufg[nb] = yi * f
            bufk[nb] = kxx
            ist[_IST_NBUF] = nb + 1
            if nb + 1 == L:
                if M + L > cap:
                    if on_full_raise:
                        ist[_IST_FAILROW] = i
                        return FULL
                    ist[_IST_NSKIPPED] += L
                    ist[_IST_NBUF] = 0
                    continue
                st = absorb_buffer_kernel(code, kpar, b0, SV, alpha, sv_s, fst, ist, bufX, bufy,
                                          bufs, bufg, bufk, L, inv_C, rel_tol, G, mu, r, q)
                if st != OK:
                    ist[_IST_FAILROW] = i
                    return st
    return OK


@njit(cache=True, nogil=True)
def kernel_decision(code, kpar, b0, SV, alpha, M, X, out):
    """out[t] = sum_{m<M} alpha_m k~(x_m, X[t]). ``out`` is modified in place."""
    for t in range(X.shape[0]):
        s = 0.0
        for a in range(M):
            c = alpha[a]
            if c != 0.0:
                s += c * _kaug(code, kpar, b0, SV[a], X[t])
        out[t] = s


@njit(cache=True)
def dot_floor(X, w, out):
    """out[i] = <X[i], w>: the one-pass compiled floor used by perf/bench_streamsvm.py."""
    for i in range(X.shape[0]):
        s = 0.0
        for k in range(X.shape[1]):
            s += X[i, k] * w[k]
        out[i] = s


# ---------------------------------------------------------------------------- core-set re-solve
@njit(cache=True, no_cpython_wrapper=True)
def _kcol(code, kpar, b0, SV, M, i, col):
    """col[k] = k~(x_k, x_i) for k < M (unsigned, no slack term). ``col`` modified in place."""
    for k in range(M):
        col[k] = kernel_at(code, kpar, SV, k, SV[i]) + b0 * b0


@njit(cache=True)
def coreset_solve(code, kpar, b0, SV, ysv, alpha, sv_s, g, kd, M, fst, inv_C, eps, max_iter,
                  coli, colj):
    """Re-solve the minimum enclosing ball of the M core vectors (warm start).

    The MEB dual ``max_mu sum_k mu_k (k~_kk + 1/(C s_min)) - mu^T G mu`` over the simplex,
    ``G_kl = y_k y_l k~(x_k, x_l) + [k == l]/(C s_k)`` (weighted points lifted as in the module
    notes, which adds the same ``1/(C s_min)`` to every diagonal entry), is solved by pairwise
    Frank-Wolfe (SMO) steps: weight moves from the active core vector nearest the centre to
    the one farthest from it, with the exact line search. The gradient ``g = G mu`` is kept
    for the core set; a step costs two kernel columns, O(M d). The squared distance of core
    vector k from the centre is ``a_k + Q`` with ``a_k = k~_kk + 1/(C s_min) - 2 g_k`` and
    ``Q = mu^T G mu``. Stops when the farthest core vector and the nearest active one differ
    in squared distance by at most ``eps R^2``, or after ``max_iter`` steps.

    ``alpha = mu y`` (signed coefficients), ``g`` and ``fst = [R, xi2, wn2, 1/s_min]`` are
    modified in place; R is the largest distance of a core vector from the centre, so the
    ball encloses the core set whatever the accuracy. ``ysv`` holds the labels (+-1), ``kd``
    the augmented diagonal; ``coli``/``colj`` (>= M,) are scratch. Returns the number of steps.
    """
    if M == 0:
        return 0
    lift = fst[_FST_FLOOR] * inv_C
    Q = 0.0
    for k in range(M):
        Q += alpha[k] * ysv[k] * g[k]
    it = 0
    R2 = 0.0
    while True:
        i = np.int64(-1)
        j = np.int64(-1)
        ai = -np.inf
        aj = np.inf
        for k in range(M):
            a = kd[k] + lift - 2.0 * g[k]
            if a > ai:
                ai = a
                i = k
            if alpha[k] != 0.0 and a < aj:
                aj = a
                j = k
        R2 = ai + Q
        if R2 < 0.0:
            R2 = 0.0
        if it >= max_iter or i == j or ai - aj <= eps * R2:
            break
        _kcol(code, kpar, b0, SV, M, i, coli)
        _kcol(code, kpar, b0, SV, M, j, colj)
        yi = ysv[i]
        yj = ysv[j]
        di = inv_C / sv_s[i]
        dj = inv_C / sv_s[j]
        curv = coli[i] + di + colj[j] + dj - 2.0 * yi * yj * coli[j]
        muj = alpha[j] * yj
        t = muj
        if curv > 0.0:
            t = 0.5 * (ai - aj) / curv
            if t > muj:
                t = muj
        Q += 2.0 * t * (g[i] - g[j]) + t * t * curv
        for k in range(M):
            g[k] += t * ysv[k] * (yi * coli[k] - yj * colj[k])
        g[i] += t * di
        g[j] -= t * dj
        alpha[i] += t * yi
        if t == muj:
            alpha[j] = 0.0
        else:
            alpha[j] -= t * yj
        it += 1
    Q = 0.0
    xi2 = 0.0
    for k in range(M):
        Q += alpha[k] * ysv[k] * g[k]
        xi2 += alpha[k] * alpha[k] / sv_s[k]
    fst[0] = np.sqrt(R2)
    fst[1] = xi2
    fst[2] = Q - xi2 * inv_C
    return it


@njit(cache=True)
def stream_coreset(code, kpar, b0, X, y, sw, inv_C, L, on_full, SV, ysv, alpha, sv_s, g, kd,
                   fst, ist, eps, max_iter, shrink, coli, colj):
    """One pass of the core-set StreamSVM: a point outside the current ball shrunk to radius
    ``sqrt(shrink) R`` (``shrink`` <= 1: also points just inside join) joins the core set
    (coefficient 0) and the MEB of the core set is re-solved (``coreset_solve``) after every L
    such points. A core vector whose coefficient fell to 0 gives its row to the next newcomer
    when the capacity is reached; with no such row the ``on_full`` policy applies:
    ``FULL_RAISE`` returns ``FULL`` (ist[5] = row), ``FULL_IGNORE`` skips the point (counted
    in ist[4]), ``FULL_EVICT`` gives the row of the core vector of smallest coefficient
    ``mu_r`` to the newcomer with that coefficient (a pairwise step from r to the newcomer
    of length ``mu_r``: ``g`` stays exact, two kernel columns).

    The ball is the exact MEB of the core set (to ``eps``), not an enclosing ball of the
    stream: a point that was inside an earlier ball may lie outside a later one. State arrays
    (capacity rows): ``SV``, ``ysv``, ``alpha``, ``sv_s``, ``g``, ``kd``; ``fst``, ``ist``
    (ist[1] = points added since the last solve); all modified in place.
    """
    n = X.shape[0]
    cap = SV.shape[0]
    d = X.shape[1]
    for i in range(n):
        s_i = sw[i]
        if s_i <= 0.0:
            continue
        x = X[i]
        yi = y[i]
        M = ist[_IST_M]
        kxx = _kaug(code, kpar, b0, x, x)
        ist[_IST_NSEEN] += 1
        h2, eps_r = _lift(fst, s_i, inv_C)
        lift = fst[_FST_FLOOR] * inv_C
        f = 0.0
        for a in range(M):
            c = alpha[a]
            if c != 0.0:
                f += c * (kernel_at(code, kpar, SV, a, x) + b0 * b0)
        Q = fst[2] + fst[1] * inv_C
        if M > 0:
            dist2 = kxx + lift - 2.0 * yi * f + Q
            R = fst[0]
            if eps_r > 0.0:
                R = np.sqrt(R * R + eps_r)
                fst[0] = R
            if dist2 < shrink * R * R:
                continue
        slot = M
        if M == cap:
            slot = np.int64(-1)
            for a in range(M):
                if alpha[a] == 0.0:
                    slot = a
                    break
            if slot < 0:
                if on_full == FULL_RAISE:
                    ist[_IST_FAILROW] = i
                    return FULL
                if on_full == FULL_IGNORE:
                    ist[_IST_NSKIPPED] += 1
                    continue
                r = np.int64(0)
                for a in range(1, M):
                    if abs(alpha[a]) < abs(alpha[r]):
                        r = a
                mur = alpha[r] * ysv[r]
                yr = ysv[r]
                _kcol(code, kpar, b0, SV, M, r, coli)
                for a in range(M):
                    colj[a] = kernel_at(code, kpar, SV, a, x) + b0 * b0
                for a in range(M):
                    if a != r:
                        g[a] += mur * ysv[a] * (yi * colj[a] - yr * coli[a])
                g[r] = yi * f - mur * yi * yr * colj[r] + mur * (kxx + inv_C / s_i)
                alpha[r] = mur * yi
                for k in range(d):
                    SV[r, k] = x[k]
                ysv[r] = yi
                sv_s[r] = s_i
                kd[r] = kxx
                ist[_IST_NBUF] += 1
                if ist[_IST_NBUF] >= L:
                    coreset_solve(code, kpar, b0, SV, ysv, alpha, sv_s, g, kd, M, fst, inv_C,
                                  eps, max_iter, coli, colj)
                    ist[_IST_NBUF] = 0
                    ist[_IST_NSOLVES] += 1
                ist[_IST_NSKIPPED] += 1
                continue
        for k in range(d):
            SV[slot, k] = x[k]
        ysv[slot] = yi
        sv_s[slot] = s_i
        kd[slot] = kxx
        if M == 0:
            alpha[0] = yi
            g[0] = kxx + inv_C / s_i
            fst[0] = np.sqrt(h2)
            fst[1] = 1.0 / s_i
            fst[2] = kxx
            ist[_IST_M] = 1
            continue
        alpha[slot] = 0.0
        g[slot] = yi * f
        if slot == M:
            ist[_IST_M] = M + 1
        ist[_IST_NBUF] += 1
        if ist[_IST_NBUF] >= L:
            coreset_solve(code, kpar, b0, SV, ysv, alpha, sv_s, g, kd, ist[_IST_M], fst, inv_C,
                          eps, max_iter, coli, colj)
            ist[_IST_NBUF] = 0
            ist[_IST_NSOLVES] += 1
    return OK


# ---------------------------------------------------------------------------- several balls, any kernel
@njit(cache=True, no_cpython_wrapper=True)
def _item_dist(Gb, xib, i, j, inv_C):
    """Augmented distance between item centres i and j from the Gram ``Gb`` of their w-parts
    (slack supports are disjoint)."""
    v = Gb[i, i] + Gb[j, j] - 2.0 * Gb[i, j] + (xib[i] + xib[j]) * inv_C
    return np.sqrt(v) if v > 0.0 else 0.0


@njit(cache=True, no_cpython_wrapper=True)
def _merge_kitems(SV_M, alpha, owner, Rb, Qb, xib, Gb, nitems, i, j, D):
    """Replace item i by the smallest ball enclosing items i and j (``_merge_items``); the core
    vectors of j now belong to i. ``Gb`` rows/columns i follow by linearity. j is left stale
    (the caller overwrites or drops it)."""
    lam, Rn = _merge_items(Rb[i], Qb[i], Rb[j], Qb[j], D)
    oml = 1.0 - lam
    for a in range(SV_M):
        if owner[a] == i:
            alpha[a] *= oml
        elif owner[a] == j:
            alpha[a] *= lam
            owner[a] = i
    gii = oml * oml * Gb[i, i] + 2.0 * lam * oml * Gb[i, j] + lam * lam * Gb[j, j]
    for c in range(nitems):
        if c != i:
            v = oml * Gb[i, c] + lam * Gb[j, c]
            Gb[i, c] = v
            Gb[c, i] = v
    Gb[i, i] = gii
    xib[i] = oml * oml * xib[i] + lam * lam * xib[j]
    Rb[i] = Rn
    Qb[i] = 0.0


@njit(cache=True, no_cpython_wrapper=True)
def _move_kitem(SV_M, owner, Rb, Qb, xib, Gb, nitems, src, dst):
    """Item src takes the place of item dst (dst's old content is gone)."""
    for a in range(SV_M):
        if owner[a] == src:
            owner[a] = dst
    for c in range(nitems):
        if c != src and c != dst:
            Gb[dst, c] = Gb[src, c]
            Gb[c, dst] = Gb[src, c]
    Gb[dst, dst] = Gb[src, src]
    Rb[dst] = Rb[src]
    Qb[dst] = Qb[src]
    xib[dst] = xib[src]


@njit(cache=True, no_cpython_wrapper=True)
def _item_f(code, kpar, b0, SV, alpha, owner, M, x, nb, fb):
    """fb[b] = <w_b, phi~(x)> = sum over core vectors a of item b of alpha_a k~(x_a, x)."""
    for b in range(nb):
        fb[b] = 0.0
    for a in range(M):
        o = owner[a]
        if o >= 0 and o < nb and alpha[a] != 0.0:
            fb[o] += alpha[a] * (kernel_at(code, kpar, SV, a, x) + b0 * b0)


@njit(cache=True)
def flush_kmultiball(code, kpar, b0, SV, alpha, sv_s, owner, Rb, Qb, xib, Gb, fst, ist, ysv,
                     bufrow, nbuf, inv_C, rel_tol, F, BG, grp, Gold, G, mu, r, q, mu0, nu):
    """Lookahead with several balls: absorb the ``nbuf`` buffered core vectors (rows
    ``bufrow``, owner -1). Each buffered point goes to the item whose enclosing ball with it
    (``_merge_items``) is smallest; each item with a non-empty group is replaced by the exact
    minimum ball enclosing it and its group (``meb_balls``, Algorithm 2 per ball). The Gram
    ``Gb`` of the item centres is updated in closed form from the kernel values computed once
    at the start (``F``: buffered point against every item, ``BG``: buffer Gram). All state
    arrays are modified in place; F (L, K+1), BG (L, L), grp (L,), Gold (K+1, K+1), G (L+1,
    L+1), mu, r, q (L+1,), mu0 (K+1,), nu (L,) are scratch. Returns a status."""
    nb = ist[_IST_NBUF]
    M = ist[_IST_M]
    for j in range(nbuf):
        rj = bufrow[j]
        _item_f(code, kpar, b0, SV, alpha, owner, M, SV[rj], nb, F[j])
        for k in range(j + 1):
            v = kernel_at(code, kpar, SV, bufrow[k], SV[rj]) + b0 * b0
            BG[j, k] = v
            BG[k, j] = v
    for j in range(nbuf):
        rj = bufrow[j]
        h2 = (fst[_FST_FLOOR] - 1.0 / sv_s[rj]) * inv_C
        best = np.inf
        grp[j] = 0
        for b in range(nb):
            D2 = Gb[b, b] - 2.0 * ysv[rj] * F[j, b] + BG[j, j] + (xib[b] + 1.0 / sv_s[rj]) * inv_C
            v = _merge_items(Rb[b], Qb[b], 0.0, h2, np.sqrt(D2 if D2 > 0.0 else 0.0))[1]
            if v < best:
                best = v
                grp[j] = b
    for b in range(nb):
        for c in range(nb):
            Gold[b, c] = Gb[b, c]
        mu0[b] = 1.0
    for j in range(nbuf):
        nu[j] = 0.0
    for b in range(nb):
        m = np.int64(1)
        for j in range(nbuf):
            if grp[j] == b:
                m += 1
        if m == 1:
            continue
        G[0, 0] = Gold[b, b] + xib[b] * inv_C
        r[0] = Rb[b]
        q[0] = Qb[b]
        p = 1
        for j in range(nbuf):
            if grp[j] != b:
                continue
            rj = bufrow[j]
            G[0, p] = ysv[rj] * F[j, b]
            G[p, 0] = G[0, p]
            r[p] = 0.0
            q[p] = (fst[_FST_FLOOR] - 1.0 / sv_s[rj]) * inv_C
            pp = 1
            for k in range(nbuf):
                if grp[k] != b:
                    continue
                G[p, pp] = ysv[rj] * ysv[bufrow[k]] * BG[j, k]
                if k == j:
                    G[p, pp] += inv_C / sv_s[rj]
                pp += 1
            p += 1
        status, rad = meb_balls(G, r, q, m, mu, rel_tol)
        if status != OK:
            return status
        mu0[b] = mu[0]
        xi = mu[0] * mu[0] * xib[b]
        for a in range(M):
            if owner[a] == b:
                alpha[a] *= mu[0]
        p = 1
        for j in range(nbuf):
            if grp[j] != b:
                continue
            rj = bufrow[j]
            nu[j] = mu[p]
            alpha[rj] = mu[p] * ysv[rj]
            xi += mu[p] * mu[p] / sv_s[rj]
            p += 1
        xib[b] = xi
        Rb[b] = rad
        Qb[b] = 0.0
    for b in range(nb):
        for c in range(b + 1):
            v = mu0[b] * mu0[c] * Gold[b, c]
            for j in range(nbuf):
                yj = ysv[bufrow[j]]
                if grp[j] == b:
                    v += mu0[c] * nu[j] * yj * F[j, c]
                if grp[j] == c:
                    v += mu0[b] * nu[j] * yj * F[j, b]
                if grp[j] == b:
                    for k in range(nbuf):
                        if grp[k] == c:
                            v += nu[j] * nu[k] * yj * ysv[bufrow[k]] * BG[j, k]
            Gb[b, c] = v
            Gb[c, b] = v
    for j in range(nbuf):
        owner[bufrow[j]] = grp[j]
    ist[_IST_NSOLVES] += 1
    return OK


@njit(cache=True)
def stream_kmultiball(code, kpar, b0, X, y, sw, inv_C, K, L, on_full_raise, SV, ysv, alpha, sv_s,
                      owner, Rb, Qb, xib, Gb, fst, ist, bufrow, nbuf_arr, rel_tol, fb, F, BG, grp,
                      Gold, G, mu, r, q, mu0, nu):
    """Several balls (Sec. 4.3) for any kernel, with optional lookahead L (Algorithm 2 per ball).

    Items (at most K; row K of ``Rb``/``Qb``/``xib``/``Gb`` is scratch for the incoming
    point) are balls or single lifted points; their centres are ``w_b = sum_{owner_a = b}
    alpha_a phi~(x_a)`` over the core vectors (``SV``, ``ysv``, ``alpha``, ``sv_s``,
    ``owner``; capacity rows), with slack parts of squared norm ``xib[b] / C``, and ``Gb``
    holds ``<w_b, w_c>``. A point inside some item is discarded. Otherwise it becomes a core
    vector; while fewer than K items exist it is a new item; else with L == 1 the K+1 items
    are reduced to K by merging the pair whose enclosing ball is smallest (the greedy policy
    of ``stream_multiball``), and with L > 1 it waits in the buffer (owner -1, rows
    ``bufrow``, count ``nbuf_arr[0]``) until L points are buffered (``flush_kmultiball``).
    ``ist[0]`` counts core vectors, ``ist[1]`` items. Capacity: a point that needs a row when
    all are taken gives ``FULL`` (``on_full_raise``) or is skipped (ist[4]). All state arrays
    are modified in place; the rest are scratch (see ``flush_kmultiball``; fb (K+1,)).
    """
    n = X.shape[0]
    d = X.shape[1]
    cap = SV.shape[0]
    for i in range(n):
        s_i = sw[i]
        if s_i <= 0.0:
            continue
        x = X[i]
        yi = y[i]
        ist[_IST_NSEEN] += 1
        nb = ist[_IST_NBUF]
        M = ist[_IST_M]
        h2, eps = _lift(fst, s_i, inv_C)
        if eps > 0.0:
            for b in range(nb):
                if Rb[b] == 0.0:
                    Qb[b] += eps
                else:
                    Rb[b] = np.sqrt(Rb[b] * Rb[b] + eps)
        kxx = _kaug(code, kpar, b0, x, x)
        _item_f(code, kpar, b0, SV, alpha, owner, M, x, nb, fb)
        enclosed = False
        for b in range(nb):
            D2 = Gb[b, b] - 2.0 * yi * fb[b] + kxx + (xib[b] + 1.0 / s_i) * inv_C
            if D2 < 0.0:
                D2 = 0.0
            if np.sqrt(D2 + h2) < Rb[b]:
                enclosed = True
                break
        if enclosed:
            continue
        if M + 1 > cap:
            if on_full_raise:
                ist[_IST_FAILROW] = i
                return FULL
            ist[_IST_NSKIPPED] += 1
            continue
        for k in range(d):
            SV[M, k] = x[k]
        ysv[M] = yi
        alpha[M] = yi
        sv_s[M] = s_i
        ist[_IST_M] = M + 1
        if nb < K:
            owner[M] = nb
            for b in range(nb):
                Gb[nb, b] = yi * fb[b]
                Gb[b, nb] = yi * fb[b]
            Gb[nb, nb] = kxx
            Rb[nb] = 0.0
            Qb[nb] = h2
            xib[nb] = 1.0 / s_i
            ist[_IST_NBUF] = nb + 1
            continue
        if L > 1:
            owner[M] = -1
            nbf = nbuf_arr[0]
            bufrow[nbf] = M
            nbuf_arr[0] = nbf + 1
            if nbf + 1 == L:
                st = flush_kmultiball(code, kpar, b0, SV, alpha, sv_s, owner, Rb, Qb, xib, Gb, fst,
                                      ist, ysv, bufrow, L, inv_C, rel_tol, F, BG, grp, Gold, G,
                                      mu, r, q, mu0, nu)
                nbuf_arr[0] = 0
                if st != OK:
                    ist[_IST_FAILROW] = i
                    return st
            continue
        # the point as item K, then the cheapest merge among the K + 1 items
        owner[M] = K
        for b in range(K):
            Gb[K, b] = yi * fb[b]
            Gb[b, K] = yi * fb[b]
        Gb[K, K] = kxx
        Rb[K] = 0.0
        Qb[K] = h2
        xib[K] = 1.0 / s_i
        best = np.inf
        bi = np.int64(-1)
        bj = np.int64(-1)
        for a in range(K + 1):
            for b in range(a):
                v = _merge_items(Rb[a], Qb[a], Rb[b], Qb[b], _item_dist(Gb, xib, a, b, inv_C))[1]
                if v < best:
                    best = v
                    bi = a
                    bj = b
        # merge into the lower index so that item K (scratch) is never the survivor
        D = _item_dist(Gb, xib, bi, bj, inv_C)
        _merge_kitems(M + 1, alpha, owner, Rb, Qb, xib, Gb, K + 1, bj, bi, D)
        if bi != K:
            _move_kitem(M + 1, owner, Rb, Qb, xib, Gb, K + 1, K, bi)
    return OK


@njit(cache=True)
def final_kmultiball(Gb, Rb, Qb, xib, nb, alpha, owner, M, inv_C, rel_tol, fst):
    """Minimum ball enclosing the nb items (end of stream): scales each core vector's
    coefficient by its item's weight and writes ``fst = [R, xi2, wn2]`` (all modified in
    place). Returns a status."""
    G = np.zeros((nb, nb))
    r = np.zeros(nb)
    q = np.zeros(nb)
    mu = np.zeros(nb)
    for i in range(nb):
        r[i] = Rb[i]
        q[i] = Qb[i]
        for j in range(nb):
            G[i, j] = Gb[i, j]
        G[i, i] += xib[i] * inv_C
    status, rad = meb_balls(G, r, q, nb, mu, rel_tol)
    if status != OK:
        return status
    for a in range(M):
        alpha[a] *= mu[owner[a]]
    wn2 = 0.0
    xi2 = 0.0
    for i in range(nb):
        xi2 += mu[i] * mu[i] * xib[i]
        for j in range(nb):
            wn2 += mu[i] * mu[j] * Gb[i, j]
    fst[0] = rad
    fst[1] = xi2
    fst[2] = wn2
    return OK
