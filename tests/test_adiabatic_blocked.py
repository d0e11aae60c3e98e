"""The engine's blocked products of R (``kernels.jacobian``) against plain loops.

``r_mul_neg`` (-R v, eight rows at a time) and ``jr_residual`` / ``jr_residual_into``
(max |J R - I|, a row of J R at a time, as axpys over rows of R) only reorder
*independent* sums; each sum keeps the order of the plain
double loop, so the results must be equal to the last bit, not merely close: the engine's
paths, and with them every learned model, depend on these bits (``tests/test_engine.py``
pins them). The references below are that plain loop, run by the interpreter.
"""
import numpy as np
import pytest

from fastbudget.kernels import jacobian as jac


def _plain_mul_neg(R, v, m):
    out = np.zeros(m)
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += R[i, j] * v[j]
        out[i] = -s
    return out


def _plain_jr(y, K, S_idx, nS, R):
    if nS == 0:
        return 0.0
    m = nS + 1
    worst = 0.0
    for i in range(m):
        for j in range(m):
            if i == 0:
                s = 0.0
                for q in range(nS):
                    s += y[S_idx[q]] * R[q + 1, j]
            else:
                a = S_idx[i - 1]
                s = y[a] * R[0, j]
                for q in range(nS):
                    c = S_idx[q]
                    s += y[a] * y[c] * K[a, c] * R[q + 1, j]
            if i == j:
                s -= 1.0
            if abs(s) > worst:
                worst = abs(s)
    return worst


def _margin_problem(rng, n, nS):
    """A random RBF problem of n slots with a margin set of nS of them and its exact R,
    perturbed (a drifted R, so that J R - I is not ~0 everywhere)."""
    X = rng.normal(size=(n, 3))
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-0.5 * d2)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    S_idx = np.full(n, -1, dtype=np.int64)
    S_idx[:nS] = rng.permutation(n)[:nS]
    R = np.zeros((n + 1, n + 1))
    if nS:
        s = S_idx[:nS]
        J = np.zeros((nS + 1, nS + 1))
        J[0, 1:] = y[s]
        J[1:, 0] = y[s]
        J[1:, 1:] = np.outer(y[s], y[s]) * K[np.ix_(s, s)]
        R[:nS + 1, :nS + 1] = np.linalg.inv(J) + 1e-9 * rng.normal(size=(nS + 1, nS + 1))
    return y, K, S_idx, R


@pytest.mark.parametrize("m", [1, 2, 3, 7, 8, 9, 15, 16, 17, 30, 71])
def test_r_mul_neg_equals_the_plain_loop_bit_for_bit(m):
    rng = np.random.default_rng(m)
    n = m + 5
    R = rng.normal(size=(n + 1, n + 1)) * 10.0 ** rng.integers(-8, 8, size=(n + 1, n + 1))
    v = rng.normal(size=n + 1) * 10.0 ** rng.integers(-8, 8, size=n + 1)
    out = np.full(n + 1, 7.0)
    jac.r_mul_neg(R, v, m, out)
    ref = _plain_mul_neg(R, v, m)
    assert np.array_equal(out[:m], ref)
    assert np.all(out[m:] == 7.0)  # nothing beyond the live block is written


@pytest.mark.parametrize("nS", [0, 1, 2, 6, 7, 8, 9, 15, 16, 24, 40])
def test_jr_residual_equals_the_plain_loop_bit_for_bit(nS):
    rng = np.random.default_rng(100 + nS)
    y, K, S_idx, R = _margin_problem(rng, nS + 4, nS)
    got = jac.jr_residual(y, K, S_idx, nS, R)
    assert got == _plain_jr(y, K, S_idx, nS, R)
    if nS:
        assert 0.0 < got < 1e-5  # the perturbation shows, and R is still close to J^-1


def test_jr_residual_an_infinite_entry_is_returned():
    rng = np.random.default_rng(3)
    y, K, S_idx, R = _margin_problem(rng, 14, 10)
    R[4, 9] = np.inf
    assert jac.jr_residual(y, K, S_idx, 10, R) == np.inf == _plain_jr(y, K, S_idx, 10, R)


@pytest.mark.parametrize("nS", [1, 7, 8, 9, 33, 70])
def test_jr_residual_into_uses_only_its_scratch_row(nS):
    """The engine's drift check passes a scratch row (``st.beta``, n + 1 entries): the
    result is the plain loop's to the bit, only the first nS + 1 entries of the scratch
    are written, and R, K, y are read only."""
    rng = np.random.default_rng(200 + nS)
    n = nS + 6
    y, K, S_idx, R = _margin_problem(rng, n, nS)
    before = [a.copy() for a in (y, K, S_idx, R)]
    acc = np.full(n + 1, 7.0)
    got = jac.jr_residual_into(y, K, S_idx, nS, R, acc)
    assert got == _plain_jr(y, K, S_idx, nS, R)
    assert np.all(acc[nS + 1:] == 7.0)
    for a, b in zip((y, K, S_idx, R), before):
        assert np.array_equal(a, b)
