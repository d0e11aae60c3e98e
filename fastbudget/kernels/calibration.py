"""Compiled helpers of the online calibration map (``fastbudget.calibration``).

The recency factors of a chunk are a recurrence over its examples (each factor depends on
the total weight the ones before it left), so NumPy cannot vectorise them; in Python the loop
cost about 0.45 microseconds per example, 5 % of a TVM stream at d = 2. The map's fit
(Platt's Newton steps, pool-adjacent-violators over at most ``N_BINS`` bins) cost about
110 microseconds in NumPy and Python, paid by every ``predict_proba_one`` after a
``learn_one`` (river's progressive validation with ``LogLoss``: 3.6 s of 15,000 examples
against 1.0 s); compiled, 13-21 microseconds.
"""
import numpy as np

from ._jit import njit


@njit(cache=True, nogil=True)
def recency(total, weight, rho):
    """Write into ``rho`` the factor ``2 W / (2 W + w)`` (``W`` the running total, 1.0 for a
    weight of 0) that multiplies the statistics before each example of ``weight`` is
    added, in order, and return the total after them. The same floating-point operations
    in the same order as ``fastbudget.calibration._recency_python``: equal bit for bit."""
    for i in range(weight.shape[0]):
        w = weight[i]
        if w > 0.0:
            r = 2.0 * total / (2.0 * total + w)
        else:
            r = 1.0
        rho[i] = r
        total = r * total + w
    return total


@njit(cache=True, nogil=True)
def chunk_sums(f, u, y_pm, weight, rho, h, half, u_max, sums, after):
    """The statistics a chunk adds (``fastbudget.calibration.update_stats``): into the
    zeroed ``sums`` (3, n_bins), each example's weight times the product of the recency
    factors ``rho`` of the examples after it, in its bin, and of those the positives' and
    the weighted clipped ``u``; returns the product of all the factors, by which the
    statistics before the chunk are multiplied. ``u = asinh(f)`` is taken by NumPy (its
    vectorised asinh). ``after`` is scratch of the chunk's length. The same operations in
    the same order as the NumPy form it replaced (a reversed ``cumprod`` of the factors,
    then ``bincount`` with weights): equal bit for bit (``tests/test_probability.py``)."""
    n = f.shape[0]
    n_bins = sums.shape[1]
    a = 1.0
    for i in range(n - 1, -1, -1):
        after[i] = a
        a = a * rho[i]
    for i in range(n):
        b = int(np.floor(u[i] / h)) + half
        if f[i] <= 0.0 and b > half - 1:
            b = half - 1
        if b < 0:
            b = 0
        elif b > n_bins - 1:
            b = n_bins - 1
        wi = weight[i] * after[i]
        sums[0, b] += wi
        sums[1, b] += wi * (1.0 if y_pm[i] > 0 else 0.0)
        sums[2, b] += wi * min(max(u[i], -u_max), u_max)
    return a


@njit(cache=True, nogil=True)
def sigmoid(z):
    """``1 / (1 + exp(-z))``, as ``0.5 (1 + tanh(z / 2))`` (no overflow at any ``z``)."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@njit(cache=True, nogil=True)
def _log1p_exp(z):
    """``log(1 + exp(z))`` without overflow."""
    if z > 0.0:
        return z + np.log1p(np.exp(-z))
    return np.log1p(np.exp(z))


@njit(cache=True, nogil=True)
def _sigmoid_objective(f, n, pos, m, A, B, ridge):
    """The binned log-loss of ``sigmoid(A f + B)`` plus ``ridge / 2 ((A - 1)^2 + B^2)``."""
    s = 0.0
    for i in range(m):
        z = A * f[i] + B
        s += n[i] * _log1p_exp(z) - pos[i] * z
    return s + 0.5 * ridge * ((A - 1.0) ** 2 + B * B)


@njit(cache=True, nogil=True)
def fit_sigmoid(f, n, pos, m, ridge):
    """Platt's ``(A, B)`` on binned data (the first ``m`` entries of the centres ``f``,
    weights ``n`` and positive weights ``pos``): Newton's method with a backtracking line
    search on the binned log-loss plus the ridge ``ridge / 2 ((A - 1)^2 + B^2)``, which is
    strictly convex, so this converges from any start; with no data it is ``(1, 0)``."""
    A, B = 1.0, 0.0
    obj = _sigmoid_objective(f, n, pos, m, A, B, ridge)
    for _ in range(100):
        gA = ridge * (A - 1.0)
        gB = ridge * B
        hAA = ridge
        hAB = 0.0
        hBB = ridge
        for i in range(m):
            p = sigmoid(A * f[i] + B)
            r = n[i] * p - pos[i]             # gradient of the log-loss w.r.t. A f + B
            gA += r * f[i]
            gB += r
            s = n[i] * p * (1.0 - p)
            hAA += s * f[i] * f[i]
            hAB += s * f[i]
            hBB += s
        det = hAA * hBB - hAB * hAB
        if not det > 0.0:
            break
        dA = (hBB * gA - hAB * gB) / det
        dB = (hAA * gB - hAB * gA) / det
        dec = gA * dA + gB * dB                # > 0: Newton's direction descends
        if dec < 1e-12 * (1.0 + abs(obj)):
            # converged: one full step more, without the line search (whose test cannot
            # tell a decrease this small from rounding), so that fits in other arithmetic
            # (fastbudget.serving's NumPy copy) end at the same point to rounding
            A -= dA
            B -= dB
            break
        t = 1.0
        new = obj
        while t > 1e-12:
            new = _sigmoid_objective(f, n, pos, m, A - t * dA, B - t * dB, ridge)
            if new <= obj - 1e-4 * t * dec:
                break
            t *= 0.5
        if not t > 1e-12:
            break
        A, B, obj = A - t * dA, B - t * dB, new
    return A, B


@njit(cache=True, nogil=True)
def pav(v, w, m, out):
    """Write into ``out[:m]`` the weighted non-decreasing least-squares fit of ``v[:m]``
    with weights ``w[:m]`` (pool adjacent violators: the isotonic regression on the
    index)."""
    vals = np.empty(m)
    wts = np.empty(m)
    cnt = np.empty(m, np.int64)
    k = 0
    for i in range(m):
        vals[k] = v[i]
        wts[k] = w[i]
        cnt[k] = 1
        k += 1
        while k > 1 and vals[k - 2] > vals[k - 1]:
            tot = wts[k - 2] + wts[k - 1]
            vals[k - 2] = (vals[k - 2] * wts[k - 2] + vals[k - 1] * wts[k - 1]) / tot
            wts[k - 2] = tot
            cnt[k - 2] += cnt[k - 1]
            k -= 1
    j = 0
    for b in range(k):
        for _ in range(cnt[b]):
            out[j] = vals[b]
            j += 1


@njit(cache=True, nogil=True)
def fit_map(stats, h, half, prior_weight, ridge, knots_u, knots_p):
    """The calibration map of a statistics array (``fastbudget.calibration.CalibrationMap``,
    whose docstring states the steps): its knots written into ``knots_u`` / ``knots_p``
    (length ``n_bins + 1``); returns the number of knots and Platt's ``(A, B)``."""
    n_bins = stats.shape[1]
    u = np.empty(n_bins)
    f = np.empty(n_bins)
    nl = np.empty(n_bins)
    pl = np.empty(n_bins)
    neg = np.empty(n_bins, np.bool_)
    m = 0
    for b in range(n_bins):
        if stats[0, b] > 0.0:
            u[m] = stats[2, b] / stats[0, b]
            f[m] = np.sinh(u[m])
            nl[m] = stats[0, b]
            pl[m] = stats[1, b]
            neg[m] = b < half
            m += 1
    A, B = fit_sigmoid(f, nl, pl, m, ridge)
    rate = np.empty(n_bins)
    if m > 0:
        shrunk = np.empty(m)
        wt = np.empty(m)
        for i in range(m):
            shrunk[i] = (pl[i] + prior_weight * sigmoid(A * f[i] + B)) / (nl[i] + prior_weight)
            wt[i] = nl[i] + prior_weight
        pav(shrunk, wt, m, rate)
    else:
        # no data at all: the sigmoid at the middle of each bin
        m = n_bins
        for b in range(n_bins):
            u[b] = (b - half + 0.5) * h
            rate[b] = sigmoid(A * np.sinh(u[b]) + B)
            neg[b] = b < half
    # knots: the bin centroids and (0, 1/2), negative bins first (they come first in bin
    # order); the rates clamped to the side of 1/2 of their bin; non-decreasing
    k = 0
    top = -np.inf
    for i in range(m):
        if neg[i]:
            knots_u[k] = min(u[i], 0.0)
            top = max(top, min(rate[i], 0.5))
            knots_p[k] = top
            k += 1
    knots_u[k] = 0.0
    top = max(top, 0.5)
    knots_p[k] = top
    k += 1
    for i in range(m):
        if not neg[i]:
            knots_u[k] = u[i]
            top = max(top, max(rate[i], 0.5))
            knots_p[k] = top
            k += 1
    return k, A, B


@njit(cache=True, nogil=True)
def apply_map(f, u, knots_u, knots_p, tie_break, p_min, out):
    """Write into ``out`` P(y = classes_[1]) of the decision values ``f`` under the map of
    knots ``(knots_u, knots_p)`` (``fastbudget.calibration.CalibrationMap.__call__``):
    linear interpolation in ``u = asinh(f)`` (given: NumPy's asinh vectorises, about a
    sixth of the time over 10^6 values), flat beyond the outer knots, plus the
    strictly increasing term of weight ``tie_break``, kept in ``[p_min, 1 - p_min]`` and
    on the side of 1/2 that the sign of ``f`` gives (as ``predict``)."""
    k = knots_u.shape[0]
    for i in range(f.shape[0]):
        fi = f[i]
        ui = u[i]
        if ui != ui:                      # NaN in, NaN out (as NumPy's interpolation)
            out[i] = np.nan
            continue
        if ui <= knots_u[0]:
            m = knots_p[0]
        elif ui >= knots_u[k - 1]:
            m = knots_p[k - 1]
        else:
            j = np.searchsorted(knots_u, ui, side="right") - 1
            du = knots_u[j + 1] - knots_u[j]
            m = knots_p[j] if du <= 0.0 else (
                knots_p[j] + (ui - knots_u[j]) * (knots_p[j + 1] - knots_p[j]) / du)
        p = (1.0 - 2.0 * tie_break) * m + tie_break * (1.0 + ui / (1.0 + abs(ui)))
        p = min(max(p, p_min), 1.0 - p_min)
        if fi > 0.0:
            out[i] = max(p, 0.5 + 1e-12)
        else:
            out[i] = min(p, 0.5)
