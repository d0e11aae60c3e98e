"""Compiled helper of the online calibration map (``fastbudget.calibration``).

The recency factors of a chunk are a recurrence over its examples (each factor depends on
the total weight the ones before it left), so NumPy cannot vectorise them; in Python the loop
cost about 0.45 microseconds per example, 5 % of a TVM stream at d = 2.
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
