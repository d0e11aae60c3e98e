"""Kernel functions (fastbudget/kernels/kernel.py) against scikit-learn's pairwise kernels."""
import numpy as np
import pytest

from fastbudget.kernels import kernel as kk

pw = pytest.importorskip("sklearn.metrics.pairwise")


def reference(kernel, A, B, gamma, degree, coef0):
    if kernel == "rbf":
        return pw.rbf_kernel(A, B, gamma=gamma)
    if kernel == "linear":
        return pw.linear_kernel(A, B)
    return pw.polynomial_kernel(A, B, degree=degree, gamma=gamma, coef0=coef0)


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_block_row_diag_expansion_match_sklearn(rng, kernel):
    A = rng.normal(size=(13, 4))
    B = rng.normal(size=(9, 4))
    gamma, degree, coef0 = 0.7, 3.0, 1.5
    code = kk.KERNEL_CODES[kernel]
    kpar = np.array([gamma, degree, coef0])
    ref = reference(kernel, A, B, gamma, int(degree), coef0)
    out = np.empty((13, 9))
    kk.kernel_block(code, kpar, A, B, out)
    assert np.allclose(out, ref, rtol=1e-12, atol=1e-12)
    row = np.empty(13)
    kk.kernel_row(code, kpar, A, 13, B[2], row)
    assert np.allclose(row, ref[:, 2], rtol=1e-12, atol=1e-12)
    diag = np.empty(13)
    kk.kernel_diag(code, kpar, A, diag)
    assert np.allclose(diag, np.diag(reference(kernel, A, A, gamma, int(degree), coef0)),
                       rtol=1e-12, atol=1e-12)
    rows = np.array([4, 0, 12], dtype=np.int64)
    vals = np.empty(3)
    kk.kernel_row_at(code, kpar, A, rows, 3, B[5], vals)
    assert np.allclose(vals, ref[rows, 5], rtol=1e-12, atol=1e-12)
    coef = rng.normal(size=13)
    coef[3] = 0.0
    f = kk.kernel_expansion_at(code, kpar, A, coef, B, 7, 0.25)
    assert f == pytest.approx(coef @ ref[:, 7] + 0.25, rel=1e-12, abs=1e-12)
    out1 = np.empty(9)
    kk.decision_values(code, kpar, A, coef, 13, 0.25, B, out1)
    assert np.allclose(out1, coef @ ref + 0.25, rtol=1e-12, atol=1e-12)
