"""Prediction over transposed stored vectors (``kernels.kernel.decision_values``, which TVM's
``decision_function`` calls too): the values of a row-by-row loop, summed in the same order."""
import numpy as np
import pytest

from fastbudget import PerceptronClassifier, TVMClassifier
from fastbudget.kernels import kernel as kk

CODES = (kk.LINEAR, kk.RBF, kk.POLY)


def _row_by_row(code, kpar, SV, coef, n, b, X):
    """Plain Python: each vector's sum over the features in order, then the terms in the
    order of the rows (the rows with a zero coefficient skipped)."""
    out = np.empty(X.shape[0])
    for t in range(X.shape[0]):
        s = b
        for i in range(n):
            c = coef[i]
            if c == 0.0:
                continue
            q = 0.0
            for k in range(X.shape[1]):
                if code == kk.RBF:
                    u = SV[i, k] - X[t, k]
                    q += u * u
                else:
                    q += SV[i, k] * X[t, k]
            if code == kk.RBF:
                v = float(np.exp(-kpar[0] * q))
            elif code == kk.POLY:
                v = (kpar[0] * q + kpar[2]) ** kpar[1]
            else:
                v = q
            s += c * v
        out[t] = s
    return out


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("d", [1, 3, 22])
def test_decision_values_equal_a_row_by_row_loop(code, d):
    rng = np.random.default_rng(d + 10 * code)
    SV = rng.normal(size=(15, d))
    coef = rng.normal(size=15)
    coef[[2, 9]] = 0.0
    X = rng.normal(size=(40, d))
    kpar = np.array([0.7 / d, 3.0, 0.5])
    out = np.empty(40)
    kk.decision_values(code, kpar, SV, coef, 13, 0.25, X, out)   # the last two rows unused
    ref = _row_by_row(code, kpar, SV, coef, 13, 0.25, X)
    if code == kk.RBF:
        # exp_neg is within an ulp of np.exp per kernel value: each term moves by at most
        # |c| eps, and each of the 13 additions by an ulp of a partial sum (<= sum|c| + |b|)
        bound = np.finfo(float).eps * (np.abs(coef).sum() + 13 * (np.abs(coef).sum() + 0.25))
        np.testing.assert_allclose(out, ref, rtol=0.0, atol=bound)
    else:
        assert np.array_equal(out, ref)


def test_decision_values_with_no_vector_gives_the_intercept():
    out = np.empty(4)
    kk.decision_values(kk.RBF, np.array([1.0, 3.0, 0.0]), np.zeros((3, 2)), np.zeros(3), 3,
                       -0.5, np.ones((4, 2)), out)
    assert np.array_equal(out, np.full(4, -0.5))


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
@pytest.mark.parametrize("d", [2, 22])
def test_tvm_predict_equals_its_one_row_scoring_bit_for_bit(d, kernel):
    """TVM's ``decision_function`` and ``kernel_expansion_at`` (the one-row scoring of the
    learning loop) give the same bits."""
    rng = np.random.default_rng(d)
    X = rng.normal(size=(3000, d))
    y = np.where(X[:, 0] * X[:, 1 % d] > 0.1, 1, -1)
    clf = TVMClassifier(budget=30, kernel=kernel).fit(X, y)
    Xt = rng.normal(size=(200, d))
    f = clf.decision_function(Xt)
    st, tw = clf.engine_state_, clf.twins_
    assert np.count_nonzero(tw.coef) < tw.coef.shape[0]     # some twins without a coefficient
    from fastbudget.kernels import adiabatic as ad
    mu = st.fs[ad.F_MU]
    one = np.array([kk.kernel_expansion_at(int(st.ist[ad.I_KCODE]), st.kpar, tw.Q, tw.coef,
                                           Xt, t, st.fs[ad.F_B]) / mu
                    for t in range(Xt.shape[0])])
    assert np.array_equal(f, one)


def test_kernel_perceptron_predict_uses_the_transposed_scoring():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    y = np.where(X[:, 0] + X[:, 1] ** 2 > 0.5, 1, -1)
    clf = PerceptronClassifier(kernel="rbf", budget=50).fit(X, y)
    f = clf.decision_function(X[:50])
    SV, coef, n = clf._SV, clf._coef, int(clf._istate[0])
    ref = _row_by_row(kk.RBF, clf._kpar, SV, coef, n, 0.0, X[:50])
    c = np.abs(coef[:n]).sum()
    np.testing.assert_allclose(f, ref, rtol=0.0, atol=np.finfo(float).eps * (c + n * c))
