"""StreamSVM's final-ball solver in plain Python, for ``fastbudget.serving``.

A StreamSVM model saved with points still in its lookahead buffer, or with several balls,
is scored by the ball that encloses them (``StreamSVMClassifier._final_ball``), which the
compiled learner computes with ``fastbudget.kernels.meb``. This module is a line-by-line
transcription of the functions that computation uses (``meb_balls`` and its Cholesky
helpers, ``absorb_buffer_linear``, ``absorb_buffer_kernel``, ``merge_balls_linear``), with
``math`` in place of the compiled ``np.sqrt``/``np.log``/``np.exp`` (both are the C
library's), the same loops in the same order, so that it returns the same ball to rounding.
It runs once per load on at most ``lookahead + 1`` (or ``n_balls + 1``) items. Keep it in
step with ``fastbudget/kernels/meb.py`` (``tests/test_serving.py`` compares the two).
Only the outputs prediction needs are written (the centre, the coefficients).
"""
import math

import numpy as np

from .exceptions import ModelFormatError

OK = 0
SOLVER_FAIL = 2
FST_SIZE = 4
_FST_FLOOR = 3
_INF = float("inf")


def check(status):
    if status != OK:
        raise ModelFormatError(
            "the enclosing-ball solver failed on the stored lookahead buffer (Gram matrix not "
            "positive definite), as the fitted model would.")


def _cholesky(A, n, Lf):
    for i in range(n):
        Ai, Li = A[i], Lf[i]
        for j in range(i + 1):
            s = Ai[j]
            Lj = Lf[j]
            for k in range(j):
                s -= Li[k] * Lj[k]
            if i == j:
                if not s > 0.0:
                    return False
                Li[i] = math.sqrt(s)
            else:
                Li[j] = s / Lj[j]
        for j in range(i + 1, n):
            Li[j] = 0.0
    return True


def _chol_solve(Lf, n, b, out):
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= Lf[i][k] * out[k]
        out[i] = s / Lf[i][i]
    for i in range(n - 1, -1, -1):
        s = out[i]
        for k in range(i + 1, n):
            s -= Lf[k][i] * out[k]
        out[i] = s / Lf[i][i]


def _barrier_value(A, r, q, m, z, tau):
    t = z[m]
    val = tau * t
    for i in range(m):
        s = t - r[i]
        if not s > 0.0:
            return _INF
        uu = 0.0
        Ai = A[i]
        for k in range(m):
            u = z[k] - Ai[k]
            uu += u * u
        D = s * s - uu - q[i]
        if not D > 0.0:
            return _INF
        val -= math.log(D)
    return val


def _zeros(n, m=None):
    return [0.0] * n if m is None else [[0.0] * m for _ in range(n)]


def meb_balls(G, r, q, m, mu, rel_tol):
    """``fastbudget.kernels.meb.meb_balls`` on Python lists: returns (status, radius) and
    writes ``mu[:m]``."""
    if m == 1:
        mu[0] = 1.0
        return OK, math.sqrt(q[0]) + r[0]
    A = _zeros(m, m)
    if not _cholesky(G, m, A):
        return SOLVER_FAIL, 0.0
    n = m + 1
    z = _zeros(n)
    big = 0
    for i in range(1, m):
        if r[i] > r[big]:
            big = i
    for k in range(m):
        mean = 0.0
        for i in range(m):
            mean += A[i][k]
        z[k] = 0.5 * A[big][k] + 0.5 * mean / m
    t0 = 0.0
    for i in range(m):
        uu = 0.0
        for k in range(m):
            u = z[k] - A[i][k]
            uu += u * u
        v = math.sqrt(uu + q[i]) + r[i]
        if v > t0:
            t0 = v
    scale = t0 if t0 > 0.0 else 1.0
    z[m] = t0 + 0.5 * scale
    tau = 2.0 * m / scale
    g = _zeros(n)
    H = _zeros(n, n)
    Lh = _zeros(n, n)
    dz = _zeros(n)
    zt = _zeros(n)
    u = _zeros(m)
    status = OK
    for outer in range(80):
        fval = _barrier_value(A, r, q, m, z, tau)
        for it in range(200):
            for a in range(n):
                g[a] = 0.0
                Ha = H[a]
                for b in range(n):
                    Ha[b] = 0.0
            g[m] = tau
            t = z[m]
            Hm = H[m]
            for i in range(m):
                s = t - r[i]
                uu = 0.0
                Ai = A[i]
                for k in range(m):
                    u[k] = z[k] - Ai[k]
                    uu += u[k] * u[k]
                D = s * s - uu - q[i]
                iD = 1.0 / D
                iD2 = iD * iD
                for k in range(m):
                    g[k] += 2.0 * u[k] * iD
                    Hk = H[k]
                    for l in range(k + 1):
                        Hk[l] += 4.0 * u[k] * u[l] * iD2
                    Hk[k] += 2.0 * iD
                    Hm[k] -= 4.0 * s * u[k] * iD2
                g[m] -= 2.0 * s * iD
                Hm[m] += 4.0 * s * s * iD2 - 2.0 * iD
            for k in range(n):
                for l in range(k + 1, n):
                    H[k][l] = H[l][k]
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
    for i in range(m - 1, -1, -1):
        s = z[i]
        for k in range(i + 1, m):
            s -= A[k][i] * mu[k]
        mu[i] = s / A[i][i]
    rad = 0.0
    for i in range(m):
        uu = 0.0
        for k in range(m):
            d = z[k] - A[i][k]
            uu += d * d
        v = math.sqrt(uu + q[i]) + r[i]
        if v > rad:
            rad = v
    return status, rad


def _kernel_value(code, kpar, x, z):
    """``fastbudget.kernels.kernel.kernel_value`` (sums in the same order)."""
    if code == 1:
        s = 0.0
        for a, b in zip(x, z):
            t = a - b
            s += t * t
        return math.exp(-kpar[0] * s)
    dot = 0.0
    for a, b in zip(x, z):
        dot += a * b
    if code == 0:
        return dot
    return (kpar[0] * dot + kpar[2]) ** kpar[1]


def _buffer_gram(nb, fst, bufy, bufs, bufg, bufk, inv_C, pair):
    """The Gram matrix, radii and heights of [ball centre, p_1 .. p_nb] (both absorbs)."""
    m = nb + 1
    G = _zeros(m, m)
    r = _zeros(m)
    q = _zeros(m)
    for j in range(nb):
        G[0][j + 1] = bufg[j]
        G[j + 1][0] = bufg[j]
        r[j + 1] = 0.0
        q[j + 1] = (fst[_FST_FLOOR] - 1.0 / bufs[j]) * inv_C
        for i in range(j + 1):
            if i == j:
                G[j + 1][j + 1] = bufk[j] + inv_C / bufs[j]
            else:
                s = pair(i, j)
                G[i + 1][j + 1] = s
                G[j + 1][i + 1] = s
    return G, r, q


def absorb_buffer_linear(w, fst, ist, bufX, bufy, bufs, bufg, bufk, nb, inv_C, b0, rel_tol):
    """``meb.absorb_buffer_linear``: ``w`` (d+1,) becomes the centre of the final ball
    (modified in place). Returns the status."""
    d = bufX.shape[1]
    X = bufX.tolist()
    y = [float(v) for v in bufy]
    wl = [float(v) for v in w]
    R, xi2 = float(fst[0]), float(fst[1])
    wn2 = 0.0
    for k in range(d + 1):
        wn2 += wl[k] * wl[k]

    def pair(i, j):
        s = b0 * b0
        for k in range(d):
            s += X[i][k] * X[j][k]
        return s * (y[i] * y[j])

    G, r, q = _buffer_gram(nb, fst.tolist(), y, bufs.tolist(), bufg.tolist(), bufk.tolist(),
                           inv_C, pair)
    G[0][0] = wn2 + xi2 * inv_C
    r[0] = R
    mu = _zeros(nb + 1)
    status, _ = meb_balls(G, r, q, nb + 1, mu, rel_tol)
    if status != OK:
        return status
    mu0 = mu[0]
    for k in range(d + 1):
        wl[k] *= mu0
    for j in range(nb):
        c = mu[j + 1] * y[j]
        for k in range(d):
            wl[k] += c * X[j][k]
        wl[d] += c * b0
    w[:] = wl
    return OK


def absorb_buffer_kernel(code, kpar, b0, SV, alpha, fst, ist, bufX, bufy, bufs, bufg, bufk,
                         nb, inv_C, rel_tol):
    """``meb.absorb_buffer_kernel``: the M stored coefficients ``alpha[:M]`` are rescaled
    and the nb buffered points appended as core vectors (``SV`` and ``alpha``, of length
    M + nb, modified in place). Returns the status."""
    X = bufX.tolist()
    y = [float(v) for v in bufy]
    kp = [float(v) for v in kpar]
    R, xi2, wn2 = float(fst[0]), float(fst[1]), float(fst[2])

    def pair(i, j):
        return y[i] * y[j] * (_kernel_value(code, kp, X[i], X[j]) + b0 * b0)

    G, r, q = _buffer_gram(nb, fst.tolist(), y, bufs.tolist(), bufg.tolist(), bufk.tolist(),
                           inv_C, pair)
    G[0][0] = wn2 + xi2 * inv_C
    r[0] = R
    mu = _zeros(nb + 1)
    status, _ = meb_balls(G, r, q, nb + 1, mu, rel_tol)
    if status != OK:
        return status
    M = int(ist[0])
    mu0 = mu[0]
    alpha[:M] *= mu0
    for j in range(nb):
        SV[M + j] = bufX[j]
        alpha[M + j] = mu[j + 1] * y[j]
    return OK


def merge_balls_linear(Wb, Rb, Qb, xib, nb, inv_C, rel_tol, w, fst):
    """``meb.merge_balls_linear``: ``w`` (d+1,) becomes the centre of the ball enclosing the
    nb balls (modified in place). Returns the status."""
    W = Wb.tolist()
    G = _zeros(nb, nb)
    r = [float(v) for v in Rb[:nb]]
    q = [float(v) for v in Qb[:nb]]
    xi = [float(v) for v in xib[:nb]]
    width = Wb.shape[1]
    for i in range(nb):
        for j in range(i + 1):
            s = 0.0
            for k in range(width):
                s += W[i][k] * W[j][k]
            if i == j:
                s += xi[i] * inv_C
            G[i][j] = s
            G[j][i] = s
    mu = _zeros(nb)
    status, _ = meb_balls(G, r, q, nb, mu, rel_tol)
    if status != OK:
        return status
    for k in range(width):
        s = 0.0
        for i in range(nb):
            s += mu[i] * W[i][k]
        w[k] = s
    return OK
