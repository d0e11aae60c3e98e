"""Compiled loops of the perceptron-family baselines: Perceptron, self-tuned Forgetron, Pegasos.

Every function here processes a whole chunk of a stream in one call, trusts its input
(float64 C-contiguous ``X``, labels ``y`` in {-1.0, +1.0}, non-negative weights ``sw``),
mutates the preallocated state arrays it is given in place and returns an integer status
(0 = success). Budgeted support-vector stores are ring buffers: while fewer than ``budget``
rows are live they fill rows ``0 .. n_live-1`` in arrival order; once full, row ``head``
holds the oldest support vector, which is the one that a new support vector overwrites
(removal of the oldest, O(1)).

Integer state vectors (``istate``, int64) use the layouts documented per function; the
estimator layer (``fastbudget.estimators.baselines``) owns and allocates them.

The chunk loops release the GIL (models learning in threads run at once; the estimators'
lock per model keeps two updates of one model apart, ``fastbudget._transaction``).
"""
import numpy as np
from ._jit import njit

from .kernel import kernel_value

# istate slots of the kernel perceptron and the Forgetron
SV_N_LIVE = 0
SV_HEAD = 1
SV_N_SEEN = 2
SV_N_MISTAKES = 3

# istate slots of Pegasos
PG_N_BUF = 0
PG_T = 1
PG_N_SEEN = 2


@njit(cache=True, no_cpython_wrapper=True)
def _sv_decision(code, kpar, SV, coef, n_live, x):
    """f(x) = sum_{i < n_live} coef[i] K(SV[i], x)."""
    f = 0.0
    for i in range(n_live):
        c = coef[i]
        if c != 0.0:
            f += c * kernel_value(code, kpar, SV[i], x)
    return f


@njit(cache=True, nogil=True)
def perceptron_kernel_fit(code, kpar, X, y, sw, SV, coef, sv_t, istate, budget, fout):
    """Kernel perceptron (Rosenblatt 1958) on a chunk, optional budget with oldest removal.

    On a mistake, ``y_t f(x_t) <= 0``, the example becomes a support vector with
    coefficient ``sw_t * y_t``. With ``budget > 0`` and a full store, the new support
    vector overwrites the oldest one (the budget perceptron of paper 000, Sec. 2, with the
    "remove the oldest" rule of Crammer et al. / the Forgetron without shrinking).

    Parameters
    ----------
    code : int
        Kernel code (``fastbudget.kernels.kernel``).
    kpar : ndarray of shape (3,), float64
        ``[gamma, degree, coef0]``.
    X : ndarray of shape (n, d), float64
    y : ndarray of shape (n,), float64
        Labels in {-1, +1}.
    sw : ndarray of shape (n,), float64
        Non-negative example weights (scale the perceptron step).
    SV : ndarray of shape (capacity, d), float64
        Support vectors. Modified in place.
    coef : ndarray of shape (capacity,), float64
        Signed coefficients. Modified in place.
    sv_t : ndarray of shape (capacity,), int64
        Stream position (0-based) of each support vector. Modified in place.
    istate : ndarray of shape (4,), int64
        ``[n_live, head, n_seen, n_mistakes]``. Modified in place.
    budget : int
        Maximum number of support vectors; ``<= 0`` means unbounded, in which case the
        caller guarantees ``capacity >= n_live + n``.
    fout : ndarray of shape (n,) or (0,), float64
        When of length n, row t's decision value before the row is learned (under the model
        of the rows before it) is written to ``fout[t]``, for the online calibration
        (``fastbudget.calibration``); length 0 writes nothing. Modified in place.

    Returns
    -------
    status : int
        0 on success.
    """
    n_live = istate[SV_N_LIVE]
    head = istate[SV_HEAD]
    n_seen = istate[SV_N_SEEN]
    n_mist = istate[SV_N_MISTAKES]
    d = X.shape[1]
    keep = fout.shape[0] > 0
    for t in range(X.shape[0]):
        x = X[t]
        f = _sv_decision(code, kpar, SV, coef, n_live, x)
        if keep:
            fout[t] = f
        if y[t] * f <= 0.0:
            n_mist += 1
            if sw[t] > 0.0:
                if budget > 0 and n_live == budget:
                    slot = head
                    head += 1
                    if head == budget:
                        head = 0
                else:
                    slot = n_live
                    n_live += 1
                for k in range(d):
                    SV[slot, k] = x[k]
                coef[slot] = sw[t] * y[t]
                sv_t[slot] = n_seen
        n_seen += 1
    istate[SV_N_LIVE] = n_live
    istate[SV_HEAD] = head
    istate[SV_N_SEEN] = n_seen
    istate[SV_N_MISTAKES] = n_mist
    return 0


@njit(cache=True, nogil=True)
def perceptron_linear_fit(X, y, sw, w, istate, fit_intercept, fout):
    """Primal linear perceptron on a chunk: on ``y_t (w.x_t + b) <= 0`` do
    ``w += sw_t y_t x_t`` and ``b += sw_t y_t``.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
    y : ndarray of shape (n,), float64
    sw : ndarray of shape (n,), float64
    w : ndarray of shape (d + 1,), float64
        Weights, the last entry is the intercept ``b``. Modified in place.
    istate : ndarray of shape (2,), int64
        ``[n_seen, n_mistakes]``. Modified in place.
    fit_intercept : bool
    fout : ndarray of shape (n,) or (0,), float64
        When of length n, row t's decision value before the row is learned (under the model
        of the rows before it) is written to ``fout[t]``, for the online calibration
        (``fastbudget.calibration``); length 0 writes nothing. Modified in place.

    Returns
    -------
    status : int
    """
    d = X.shape[1]
    keep = fout.shape[0] > 0
    for t in range(X.shape[0]):
        f = w[d]
        for k in range(d):
            f += w[k] * X[t, k]
        if keep:
            fout[t] = f
        if y[t] * f <= 0.0:
            istate[1] += 1
            s = sw[t] * y[t]
            for k in range(d):
                w[k] += s * X[t, k]
            if fit_intercept:
                w[d] += s
        istate[0] += 1
    return 0


@njit(cache=True)
def forgetron_phi(sigma_r, mu_prime, Q, M):
    """Self-tuned shrinking coefficient of the Forgetron (Dekel et al. 2008, Sec. 5).

    The largest ``phi`` in (0, 1] with ``Q + Psi(phi sigma_r, phi mu') <= (15/32) M`` where
    ``Psi(lam, mu) = lam^2 + 2 lam - 2 lam mu`` and ``mu' = y_r f'_t(x_r)`` is the margin
    of the oldest example under the hypothesis after the perceptron update (the shrunk
    hypothesis gives it margin ``phi mu'``). Expanding, ``a phi^2 + b phi + c <= 0`` with
    ``a = sigma_r^2 - 2 sigma_r mu'``, ``b = 2 sigma_r``, ``c = Q - 15 M / 32``.
    """
    a = sigma_r * sigma_r - 2.0 * sigma_r * mu_prime
    b = 2.0 * sigma_r
    c = Q - 15.0 * M / 32.0
    if a + b + c <= 0.0 or b == 0.0:      # phi = 1 satisfies the constraint
        return 1.0
    if a > 0.0:
        disc = b * b - 4.0 * a * c
        phi = (-b + np.sqrt(max(disc, 0.0))) / (2.0 * a)
    elif a == 0.0:
        phi = -c / b
    else:
        # concave in phi, the feasible set is [0, r_small] U [r_big, inf); phi = 1 is
        # infeasible here, so the answer is the smaller root
        disc = b * b - 4.0 * a * c
        phi = (-b + np.sqrt(max(disc, 0.0))) / (2.0 * a)
    if phi > 1.0:
        phi = 1.0
    if phi < 0.0:
        phi = 0.0
    return phi


@njit(cache=True, nogil=True)
def forgetron_fit(code, kpar, X, y, SV, coef, sv_t, istate, fstate, budget, fout):
    """Self-tuned Forgetron (Dekel, Shalev-Shwartz & Singer, SIAM J. Comput. 37(5), 2008).

    Round t: predict ``sign f_t(x_t)``, ``f_t(x) = sum_{i in I_t} sigma_i y_i K(x_i, x)``.
    On a mistake (``y_t f_t(x_t) <= 0``, M += 1): perceptron step ``I' = I + {t}``,
    ``sigma_t = 1`` (f'_t = f_t + y_t K(x_t, .)). If ``|I'| > B``: shrink every weight by
    ``phi_t`` (:func:`forgetron_phi`, Sec. 5), then remove the oldest ``r_t = min I'``, and
    add ``Psi(phi sigma_r, phi mu'_t)`` to ``Q``. ``coef`` stores ``sigma_i y_i``.

    Parameters
    ----------
    code, kpar : kernel code and ``[gamma, degree, coef0]``
    X : ndarray of shape (n, d), float64
    y : ndarray of shape (n,), float64
    SV : ndarray of shape (budget, d), float64
        Modified in place (ring buffer, row ``head`` is the oldest once full).
    coef : ndarray of shape (budget,), float64
        ``sigma_i y_i``. Modified in place.
    sv_t : ndarray of shape (budget,), int64
        Stream position of each support vector. Modified in place.
    istate : ndarray of shape (4,), int64
        ``[n_live, head, n_seen, n_mistakes]``. Modified in place.
    fstate : ndarray of shape (1,), float64
        ``[Q]``, the accumulated ``Psi`` of past removals. Modified in place.
    budget : int
        B >= 1.
    fout : ndarray of shape (n,) or (0,), float64
        When of length n, row t's decision value before the row is learned (under the model
        of the rows before it) is written to ``fout[t]``, for the online calibration
        (``fastbudget.calibration``); length 0 writes nothing. Modified in place.

    Returns
    -------
    status : int
    """
    n_live = istate[SV_N_LIVE]
    head = istate[SV_HEAD]
    n_seen = istate[SV_N_SEEN]
    M = istate[SV_N_MISTAKES]
    Q = fstate[0]
    d = X.shape[1]
    keep = fout.shape[0] > 0
    for t in range(X.shape[0]):
        x = X[t]
        f = _sv_decision(code, kpar, SV, coef, n_live, x)
        if keep:
            fout[t] = f
        if y[t] * f <= 0.0:
            M += 1
            if n_live < budget:
                slot = n_live
                n_live += 1
                phi = 1.0
            else:
                r = head
                xr = SV[r]
                yr = 1.0 if coef[r] > 0.0 else -1.0
                sigma_r = abs(coef[r])
                # margin of the oldest example under f'_t = f_t + y_t K(x_t, .)
                fp = _sv_decision(code, kpar, SV, coef, n_live, xr) + y[t] * kernel_value(code, kpar, x, xr)
                mu_p = yr * fp
                phi = forgetron_phi(sigma_r, mu_p, Q, M)
                lam = phi * sigma_r
                Q += lam * lam + 2.0 * lam - 2.0 * lam * (phi * mu_p)
                for i in range(n_live):
                    coef[i] *= phi
                slot = r
                head += 1
                if head == budget:
                    head = 0
            for k in range(d):
                SV[slot, k] = x[k]
            coef[slot] = phi * y[t]
            sv_t[slot] = n_seen
        n_seen += 1
    istate[SV_N_LIVE] = n_live
    istate[SV_HEAD] = head
    istate[SV_N_SEEN] = n_seen
    istate[SV_N_MISTAKES] = M
    fstate[0] = Q
    return 0


@njit(cache=True, no_cpython_wrapper=True)
def _pegasos_block(Xb, yb, sb, n_b, w, g, t, lam, fit_intercept):
    """One Pegasos step on the block ``Xb[:n_b]`` (Shalev-Shwartz, Singer & Srebro 2007, Fig. 2).

    ``A+ = {i : y_i <w_t, x_i> < 1}``; ``eta_t = 1/(lam t)``;
    ``w_{t+1/2} = (1 - eta_t lam) w_t + (eta_t / k) sum_{A+} y_i x_i``;
    ``w_{t+1} = min(1, (1/sqrt(lam)) / ||w_{t+1/2}||) w_{t+1/2}`` (the norm projection).
    ``w`` (d + 1,) with the intercept last, regularised like a constant feature 1 when
    ``fit_intercept`` (Sec. 6 of the paper). ``w`` and ``g`` are modified in place.
    """
    d = Xb.shape[1]
    for k in range(d + 1):
        g[k] = 0.0
    for i in range(n_b):
        f = w[d] if fit_intercept else 0.0
        for k in range(d):
            f += w[k] * Xb[i, k]
        if yb[i] * f < 1.0:
            s = sb[i] * yb[i]
            for k in range(d):
                g[k] += s * Xb[i, k]
            if fit_intercept:
                g[d] += s
    eta = 1.0 / (lam * t)
    shrink = 1.0 - eta * lam
    step = eta / n_b
    nrm2 = 0.0
    for k in range(d + 1):
        w[k] = shrink * w[k] + step * g[k]
        nrm2 += w[k] * w[k]
    radius = 1.0 / np.sqrt(lam)
    if nrm2 > radius * radius:
        scale = radius / np.sqrt(nrm2)
        for k in range(d + 1):
            w[k] *= scale


@njit(cache=True, nogil=True)
def pegasos_fit(X, y, sw, w, g, Xb, yb, sb, istate, lam, fit_intercept, flush, fout):
    """Pegasos, one pass, block size k = ``Xb.shape[0]`` (Shalev-Shwartz et al., ICML 2007).

    Examples are buffered in arrival order; each full block of k consecutive examples is
    one sub-gradient step (:func:`_pegasos_block`). A partial block stays in the buffer for
    the next call, unless ``flush`` (end of a finite data set), which applies it as a
    block of its actual size.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
    y, sw : ndarray of shape (n,), float64
    w : ndarray of shape (d + 1,), float64
        Modified in place.
    g : ndarray of shape (d + 1,), float64
        Work space. Modified in place.
    Xb : ndarray of shape (k, d), float64
    yb, sb : ndarray of shape (k,), float64
        Block buffer. Modified in place.
    istate : ndarray of shape (3,), int64
        ``[n_buf, t, n_seen]`` (t = number of steps taken). Modified in place.
    lam : float
    fit_intercept, flush : bool
    fout : ndarray of shape (n,) or (0,), float64
        When of length n, row i's decision value ``<w, x_i> + b`` on arrival (under the
        steps taken so far; rows buffered in a partial block are not applied yet, as in
        ``decision_function``) is written to ``fout[i]``, for the online calibration; length
        0 writes nothing. Modified in place.

    Returns
    -------
    status : int
    """
    k_block = Xb.shape[0]
    d = X.shape[1]
    n_b = istate[PG_N_BUF]
    t = istate[PG_T]
    keep = fout.shape[0] > 0
    for i in range(X.shape[0]):
        if keep:
            f = w[d]
            for k in range(d):
                f += w[k] * X[i, k]
            fout[i] = f
        for k in range(d):
            Xb[n_b, k] = X[i, k]
        yb[n_b] = y[i]
        sb[n_b] = sw[i]
        n_b += 1
        istate[PG_N_SEEN] += 1
        if n_b == k_block:
            t += 1
            _pegasos_block(Xb, yb, sb, n_b, w, g, t, lam, fit_intercept)
            n_b = 0
    if flush and n_b > 0:
        t += 1
        _pegasos_block(Xb, yb, sb, n_b, w, g, t, lam, fit_intercept)
        n_b = 0
    istate[PG_N_BUF] = n_b
    istate[PG_T] = t
    return 0


@njit(cache=True)
def reservoir_update(X, y, w, u, RX, Ry, Rw, dirty, istate, budget):
    """Reservoir sampling, Vitter's Algorithm R (ACM TOMS 11(1), 1985): a uniform sample of
    ``budget`` examples of the stream so far.

    The first ``budget`` examples fill the reservoir; example number ``t`` (1-based,
    ``t > budget``) replaces slot ``j = floor(u_t t)`` when ``j < budget``, which keeps
    every example seen so far in the sample with probability ``budget / t``.

    Parameters
    ----------
    X : ndarray of shape (n, d), float64
    y : ndarray of shape (n,), float64
    w : ndarray of shape (n,), float64
        Example weights, kept beside the examples (they do not change the sampling; the
        caller leaves out examples of weight 0).
    u : ndarray of shape (n,), float64
        Uniform [0, 1) variates, one per example (drawn by the caller from its seeded
        generator, whose state is part of the model).
    RX : ndarray of shape (budget, d), float64
        Reservoir. Modified in place.
    Ry : ndarray of shape (budget,), float64
        Modified in place.
    Rw : ndarray of shape (budget,), float64
        Weights of the reservoir's examples. Modified in place.
    dirty : ndarray of shape (budget,), int8
        Set to 1 for every slot written. Modified in place.
    istate : ndarray of shape (2,), int64
        ``[n_in_reservoir, n_seen]``. Modified in place.
    budget : int

    Returns
    -------
    n_written : int
        Number of slots written (>= 0).
    """
    n_res = istate[0]
    n_seen = istate[1]
    d = X.shape[1]
    written = 0
    for i in range(X.shape[0]):
        if n_res < budget:
            slot = n_res
            n_res += 1
        else:
            slot = int(u[i] * (n_seen + 1))
            if slot >= budget:
                slot = -1
        if slot >= 0:
            for k in range(d):
                RX[slot, k] = X[i, k]
            Ry[slot] = y[i]
            Rw[slot] = w[i]
            dirty[slot] = 1
            written += 1
        n_seen += 1
    istate[0] = n_res
    istate[1] = n_seen
    return written
