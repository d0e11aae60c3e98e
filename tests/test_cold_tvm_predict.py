"""TVM's ``decision_function`` calls the engine's compiled predict
(``kernels.kernel.decision_values``) from Python and divides by the margin target in NumPy,
instead of compiling ``kernels.tvm.twin_decision_batch`` for that one call site
(docs/results/cold_start.md): the values must be that function's bit for bit."""
import numpy as np
import pytest

from fastbudget import TVMClassifier
from fastbudget.kernels import tvm as ktvm


@pytest.mark.parametrize("kernel", ["rbf", "poly", "linear"])
def test_tvm_decision_function_equals_twin_decision_batch_bit_for_bit(kernel):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(1500, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, 1, -1)
    clf = TVMClassifier(budget=25, kernel=kernel, random_state=0).fit(X, y)
    Xt = np.vstack([rng.normal(size=(300, 3)), X[:20], X[:5]])   # duplicates of stream rows
    ref = np.zeros(Xt.shape[0])
    ktvm.twin_decision_batch(clf.engine_state_, clf.twins_, Xt, ref)
    f = clf.decision_function(Xt)
    assert np.array_equal(f, ref)
    assert np.all(np.isfinite(f)) and np.ptp(f) > 0.0


def test_tvm_decision_function_after_one_example_equals_twin_decision_batch():
    """A model of one learned example (one twin, the rest spares of coefficient 0)."""
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    clf = TVMClassifier(budget=4, gamma=1.0, random_state=0)
    clf.partial_fit(X[:1], np.array([1]), classes=[-1, 1])
    Xt = np.random.default_rng(2).normal(size=(7, 2))
    ref = np.zeros(7)
    ktvm.twin_decision_batch(clf.engine_state_, clf.twins_, Xt, ref)
    assert np.array_equal(clf.decision_function(Xt), ref)
