"""Kernel functions dispatched on an integer code.

Codes (``KERNEL_CODES``): 0 linear ``<x, z>``, 1 RBF ``exp(-gamma ||x - z||^2)``,
2 polynomial ``(gamma <x, z> + coef0) ** degree``. Parameters travel in a float array
``kpar = [gamma, degree, coef0]`` so that compiled callers never receive Python callables
(they would defeat ``cache=True``).
"""
import numpy as np
from numba import njit

LINEAR = 0
RBF = 1
POLY = 2
KERNEL_CODES = {"linear": LINEAR, "rbf": RBF, "poly": POLY}


@njit(cache=True)
def sq_norm(x):
    """``sum(x ** 2)`` of a 1-D float64 array: finite iff every value is and the squares do
    not overflow. The one-example validation's test (``BudgetClassifier._check_one``); unlike
    ``x.dot(x)`` it is silent on overflow (compiled code sets no floating-point warnings) and
    costs about half as much from Python at small d."""
    s = 0.0
    for v in x:
        s += v * v
    return s


@njit(cache=True, inline="always")
def kernel_value(code, kpar, x, z):
    """K(x, z) for 1-D float64 arrays ``x`` and ``z`` of equal length.

    Inlined into its callers (``inline="always"``): as an ordinary call, the two array
    views it receives cost reference-count updates that made scoring eight times slower.
    """
    d = x.shape[0]
    if code == RBF:
        s = 0.0
        for k in range(d):
            t = x[k] - z[k]
            s += t * t
        return np.exp(-kpar[0] * s)
    dot = 0.0
    for k in range(d):
        dot += x[k] * z[k]
    if code == LINEAR:
        return dot
    return (kpar[0] * dot + kpar[2]) ** kpar[1]


@njit(cache=True, inline="always")
def kernel_at(code, kpar, A, i, z):
    """K(A[i], z) without creating the row view ``A[i]`` (a view in a hot loop costs two
    atomic reference-count updates)."""
    d = z.shape[0]
    if code == RBF:
        s = 0.0
        for k in range(d):
            t = A[i, k] - z[k]
            s += t * t
        return np.exp(-kpar[0] * s)
    dot = 0.0
    for k in range(d):
        dot += A[i, k] * z[k]
    if code == LINEAR:
        return dot
    return (kpar[0] * dot + kpar[2]) ** kpar[1]


@njit(cache=True)
def kernel_row(code, kpar, X, n, z, out):
    """out[i] = K(X[i], z) for i < n. ``out`` is modified in place."""
    for i in range(n):
        out[i] = kernel_value(code, kpar, X[i], z)


@njit(cache=True)
def kernel_block(code, kpar, A, B, out):
    """out[i, j] = K(A[i], B[j]). ``out`` (len(A), len(B)) is modified in place."""
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            out[i, j] = kernel_value(code, kpar, A[i], B[j])


@njit(cache=True)
def kernel_diag(code, kpar, A, out):
    """out[i] = K(A[i], A[i]). ``out`` is modified in place."""
    for i in range(A.shape[0]):
        out[i] = kernel_value(code, kpar, A[i], A[i])


@njit(cache=True)
def decision_values(code, kpar, SV, coef, n, b, X, out):
    """out[t] = sum_{i<n} coef[i] K(SV[i], X[t]) + b. ``out`` is modified in place."""
    for t in range(X.shape[0]):
        s = b
        for i in range(n):
            c = coef[i]
            if c != 0.0:
                s += c * kernel_value(code, kpar, SV[i], X[t])
        out[t] = s


@njit(cache=True, inline="always")
def kernel_expansion_at(code, kpar, A, coef, X, t, b):
    """b + sum_i coef[i] K(A[i], X[t]) over the rows with coef[i] != 0.

    The kernel branch is taken once, outside the loop, so each branch is a tight loop
    (this is the scoring floor of every budgeted learner); X[t] is read in place, since a
    row view in a hot loop costs reference-count updates."""
    d = X.shape[1]
    s = b
    n = coef.shape[0]
    if code == RBF:
        g = kpar[0]
        for i in range(n):
            c = coef[i]
            if c != 0.0:
                q = 0.0
                for k in range(d):
                    u = A[i, k] - X[t, k]
                    q += u * u
                s += c * np.exp(-g * q)
    elif code == LINEAR:
        for i in range(n):
            c = coef[i]
            if c != 0.0:
                q = 0.0
                for k in range(d):
                    q += A[i, k] * X[t, k]
                s += c * q
    else:
        g = kpar[0]
        deg = kpar[1]
        c0 = kpar[2]
        for i in range(n):
            c = coef[i]
            if c != 0.0:
                q = 0.0
                for k in range(d):
                    q += A[i, k] * X[t, k]
                s += c * (g * q + c0) ** deg
    return s


@njit(cache=True)
def kernel_row_at(code, kpar, X, rows, n_rows, x, out):
    """out[k] = K(X[rows[k]], x) for k < n_rows (modified in place), without row views:
    one call per kernel row, so the arrays are not re-referenced per entry."""
    d = x.shape[0]
    if code == RBF:
        g = kpar[0]
        for k in range(n_rows):
            i = rows[k]
            q = 0.0
            for m in range(d):
                u = X[i, m] - x[m]
                q += u * u
            out[k] = np.exp(-g * q)
    else:
        for k in range(n_rows):
            i = rows[k]
            q = 0.0
            for m in range(d):
                q += X[i, m] * x[m]
            out[k] = q if code == LINEAR else (kpar[0] * q + kpar[2]) ** kpar[1]
