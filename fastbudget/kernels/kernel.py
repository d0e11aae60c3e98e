"""Kernel functions dispatched on an integer code.

Codes (``KERNEL_CODES``): 0 linear ``<x, z>``, 1 RBF ``exp(-gamma ||x - z||^2)``,
2 polynomial ``(gamma <x, z> + coef0) ** degree``. Parameters travel in a float array
``kpar = [gamma, degree, coef0]`` so that compiled callers never receive Python callables
(they would defeat ``cache=True``).

``exp_neg`` is an exponential for arguments <= 0 written in plain arithmetic (no libm
call), so that LLVM vectorises a loop of it over a row; it is within 1 ulp of the exact
exponential on [-745.2, 0] (``tests/test_fast_exp.py``), so within 1 ulp of NumPy 2.x's
``np.exp`` (NumPy 1.24's is itself up to 1.5 ulp off: 2 ulp apart at worst there). TVM's
kernel values (``kernels.tvm`` and ``kernel_expansion_at``, TVM's scoring) and prediction
(``decision_values``) use it; the exact engine's learning path (``kernel_value``,
``kernel_at``, ``kernel_row_at``) keeps libm's ``np.exp``: its path (e.g. whether a growth
of R is refused and R rebuilt) depends on the last bits of the kernel values, and
``tests/test_engine.py`` pins such a path.
"""
import struct

import numpy as np
from llvmlite import ir
from numba import config, types
from numba.extending import intrinsic

from ._jit import njit

LINEAR = 0
RBF = 1
POLY = 2
KERNEL_CODES = {"linear": LINEAR, "rbf": RBF, "poly": POLY}


if config.DISABLE_JIT:
    # the compiled code run as Python (NUMBA_DISABLE_JIT=1, e.g. for coverage)
    def _f64_from_bits(i):
        """The float64 whose IEEE 754 bits are the int64 ``i``."""
        return struct.unpack("<d", struct.pack("<q", int(i)))[0]

    def _bits_from_f64(x):
        """The IEEE 754 bits of the float64 ``x`` as an int64."""
        return struct.unpack("<q", struct.pack("<d", float(x)))[0]
else:
    @intrinsic
    def _f64_from_bits(typingctx, i):
        """The float64 whose IEEE 754 bits are the int64 ``i`` (a bit cast; free in a vector
        loop)."""
        if i != types.int64:
            return None

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], ir.DoubleType())
        return types.float64(types.int64), codegen

    @intrinsic
    def _bits_from_f64(typingctx, x):
        """The IEEE 754 bits of the float64 ``x`` as an int64 (a bit cast)."""
        if x != types.float64:
            return None

        def codegen(context, builder, sig, args):
            return builder.bitcast(args[0], ir.IntType(64))
        return types.int64(types.float64), codegen


_LOG2E = 1.4426950408889634
# ln 2 split (Cody and Waite) so that n * _LN2_HI is exact for |n| < 2**21
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
# 1.5 * 2**52: x + _SHIFT rounds x to an integer (to nearest, ties to even) held in the
# low bits of the sum, for |x| < 2**51
_SHIFT = 6755399441055744.0
_SHIFT_BITS = 0x4338000000000000
# below it, exp(x) rounds to 0 (exp(-745.1332...) is half the least subnormal)
_EXP_XMIN = -745.2
# Taylor coefficients 1/k!, k = 2..13 (on |r| <= ln(2)/2 the first term left out,
# r**14 / 14!, is below 5e-18 of exp(r))
_E2 = 1.0 / 2.0
_E3 = _E2 / 3.0
_E4 = _E3 / 4.0
_E5 = _E4 / 5.0
_E6 = _E5 / 6.0
_E7 = _E6 / 7.0
_E8 = _E7 / 8.0
_E9 = _E8 / 9.0
_E10 = _E9 / 10.0
_E11 = _E10 / 11.0
_E12 = _E11 / 12.0
_E13 = _E12 / 13.0


@njit(cache=True)
def exp_neg(x):
    """exp(x) for a finite float64 ``x`` <= 0, without a libm call and without branches, so
    that a loop of it vectorises (``exp_neg_array``).

    Within 1 ulp of the exact exponential on [-745.2, 0] (the nearest double at 90 % of
    the points of [-708, 0]), subnormal results included (each is the rounding of the
    computed value to the subnormal grid); 0 below -745.2, as ``np.exp`` gives. Arguments
    > 0 are outside its domain (no overflow check); NaN and -inf are not expected (kernel
    arguments are finite: ``-gamma * ||x - z||**2``).

    Notes
    -----
    x = n ln 2 + r with n = round(x / ln 2) (rounded by adding 1.5 * 2**52, which leaves n
    in the low bits of the sum), r computed with a two-part ln 2 (Cody and Waite), |r| <=
    ln(2) / 2; exp(r) by its Taylor polynomial of degree 13 (Horner); 2**n built from its
    bits, in two factors 2**n1 * 2**(n - n1), n1 = floor(n / 2), both normal numbers, so
    that results below 2**-1022 are rounded once, to the subnormal grid. The first factor
    is exact; the only rounding after the polynomial is the last product's.
    """
    xc = x if x > _EXP_XMIN else _EXP_XMIN
    t = xc * _LOG2E + _SHIFT
    nf = t - _SHIFT
    r = (xc - nf * _LN2_HI) - nf * _LN2_LO
    p = _E13
    p = p * r + _E12
    p = p * r + _E11
    p = p * r + _E10
    p = p * r + _E9
    p = p * r + _E8
    p = p * r + _E7
    p = p * r + _E6
    p = p * r + _E5
    p = p * r + _E4
    p = p * r + _E3
    p = p * r + _E2
    p = 1.0 + (r + r * r * p)
    n = _bits_from_f64(t) - _SHIFT_BITS
    n1 = n >> 1
    v = (p * _f64_from_bits((n1 + 1023) << 52)) * _f64_from_bits((n - n1 + 1023) << 52)
    return v if x >= _EXP_XMIN else 0.0


@njit(cache=True)
def exp_neg_array(x, out):
    """out[i] = exp_neg(x[i]) (``out`` modified in place): the vectorised loop, for tests."""
    for i in range(x.shape[0]):
        out[i] = exp_neg(x[i])


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


@njit(cache=True, nogil=True)
def decision_values(code, kpar, SV, coef, n, b, X, out):
    """out[t] = sum_{i<n} coef[i] K(SV[i], X[t]) + b over the rows with coef[i] != 0.
    ``out`` is modified in place.

    The rows with a coefficient are copied once per call into a transposed block (each
    feature's values of all of them contiguous), so each row's squared distance (or dot
    product) is summed feature by feature with the loop over the vectors innermost, which
    LLVM vectorises; RBF values by ``exp_neg`` over that row. Each vector's sum runs over
    the features in order, and the terms are added in the order of ``SV``'s rows, as a
    row-by-row loop adds them: linear and polynomial values are that loop's to the bit, RBF
    values within an ulp of each kernel value (``exp_neg``). Used for prediction only
    (``engine.state_decision``, the kernel perceptrons' ``_decision``), never on the
    engine's learning path. Releases the GIL: threads scoring at once run on as many
    cores (``docs/results/distributed.md``, "Threads")."""
    d = X.shape[1]
    m = 0
    for i in range(n):
        if coef[i] != 0.0:
            m += 1
    SVT = np.empty((d, m))
    c = np.empty(m)
    j = 0
    for i in range(n):
        # (j < m: never past the block, even if another thread changed coef since it was
        # counted; this function releases the GIL, and a model learns in compiled code that
        # releases it too)
        if coef[i] != 0.0 and j < m:
            for k in range(d):
                SVT[k, j] = SV[i, k]
            c[j] = coef[i]
            j += 1
    m = j
    row = np.empty(m)
    g = kpar[0]
    for t in range(X.shape[0]):
        for j in range(m):
            row[j] = 0.0
        if code == RBF:
            for k in range(d):
                xk = X[t, k]
                for j in range(m):
                    u = SVT[k, j] - xk
                    row[j] += u * u
            for j in range(m):
                row[j] = exp_neg(-g * row[j])
        else:
            for k in range(d):
                xk = X[t, k]
                for j in range(m):
                    row[j] += SVT[k, j] * xk
            if code != LINEAR:
                for j in range(m):
                    row[j] = (g * row[j] + kpar[2]) ** kpar[1]
        s = b
        for j in range(m):
            s += c[j] * row[j]
        out[t] = s


@njit(cache=True, inline="always")
def kernel_expansion_at(code, kpar, A, coef, X, t, b):
    """b + sum_i coef[i] K(A[i], X[t]) over the rows with coef[i] != 0 (RBF values by
    ``exp_neg``: TVM's scoring).

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
                s += c * exp_neg(-g * q)
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
