"""A tiny budgeted kernel perceptron in plain NumPy, used to test the shared machinery.

It follows the BudgetClassifier protocol exactly as the real learners do (preallocated state
sized by the budget, an RNG whose state is part of the model), so the generic checks
(persistence, transactions, validation, scikit-learn and river fit) can be tested before and
independently of the real learners. It is test code: a per-example Python loop is fine here.
"""
import numpy as np

from fastbudget.base import BudgetClassifier
from fastbudget.kernels.kernel import KERNEL_CODES, LINEAR, RBF
from fastbudget.persist import register_estimator


@register_estimator
class DummyBudgetPerceptron(BudgetClassifier):
    """Kernel perceptron; when the budget is full a uniformly random support vector is dropped.

    Parameters
    ----------
    budget : int
        Maximum number of support vectors.
    gamma : float
        RBF width, K(x, z) = exp(-gamma ||x - z||^2).
    kernel : {"rbf", "linear"}
    random_state : int or None
    fail_after : int or None
        Test hook: raise ``FloatingPointError`` once this many examples have been learned in
        total, *after* the state of the current example has been half-updated, to simulate a
        numerical failure in the middle of a chunk.
    """

    _per_chunk_params = ("class_weight", "fail_after")  # the test hook may be armed mid-stream

    def __init__(self, budget=20, gamma=0.5, kernel="rbf", random_state=0, fail_after=None):
        self.budget = budget
        self.gamma = gamma
        self.kernel = kernel
        self.random_state = random_state
        self.fail_after = fail_after

    def _validate_params(self):
        if self.kernel not in ("rbf", "linear"):
            raise ValueError(f"kernel must be 'rbf' or 'linear' for this dummy; got {self.kernel!r}.")

    def _init_state(self, n_features):
        self._SV = np.zeros((self.budget, n_features))
        self._alpha = np.zeros(self.budget)
        self._n_sv = 0
        self._b = 0.0
        self._n_seen = 0
        self._rng = np.random.default_rng(self.random_state)

    def _kernel(self, A, z):
        if KERNEL_CODES[self.kernel] == RBF:
            return np.exp(-self.gamma * ((A - z) ** 2).sum(axis=1))
        assert KERNEL_CODES[self.kernel] == LINEAR
        return A @ z

    def _f(self, x):
        n = self._n_sv
        if n == 0:
            return self._b
        return float(self._alpha[:n] @ self._kernel(self._SV[:n], x)) + self._b

    def _partial_fit_encoded(self, X, y_pm, sample_weight):
        for i in range(X.shape[0]):
            if sample_weight[i] == 0:
                continue
            x, y = X[i], y_pm[i]
            if y * self._f(x) <= 0:
                if self._n_sv == self.budget:
                    j = int(self._rng.integers(self.budget))
                    last = self._n_sv - 1
                    self._SV[j] = self._SV[last]
                    self._alpha[j] = self._alpha[last]
                    self._n_sv -= 1
                k = self._n_sv
                self._SV[k] = x
                self._alpha[k] = y * sample_weight[i]
                self._n_sv += 1
                self._b += 0.1 * y * sample_weight[i]
            self._n_seen += 1
            if self.fail_after is not None and self._n_seen >= self.fail_after:
                self._alpha[: self._n_sv] *= 3.0  # leave the state half-updated on purpose
                raise FloatingPointError("simulated numerical failure (test hook fail_after)")

    def _decision(self, X):
        return np.array([self._f(x) for x in X])

    def memory_bytes(self):
        """Bytes of the state arrays, ``8 budget (n_features + 1)`` (as the real learners')."""
        self._check_fitted()
        return 8 * self.budget * (self.n_features_in_ + 1)

    def _get_state(self):
        return {
            "SV": self._SV,
            "alpha": self._alpha,
            "n_sv": self._n_sv,
            "b": self._b,
            "n_seen": self._n_seen,
            "rng": self._rng.bit_generator.state,
        }

    def _check_state(self, state):
        B, d = self.budget, self.n_features_in_
        if state["SV"].shape != (B, d) or state["alpha"].shape != (B,):
            raise ValueError(f"SV/alpha shapes {state['SV'].shape}/{state['alpha'].shape} do not match budget {B} and {d} features")
        if not (isinstance(state["n_sv"], int) and 0 <= state["n_sv"] <= B):
            raise ValueError(f"n_sv={state['n_sv']!r} outside [0, {B}]")
        if state["SV"].dtype != np.float64 or state["alpha"].dtype != np.float64:
            raise ValueError("SV and alpha must be float64")

    def _set_state(self, state):
        self._SV = state["SV"]
        self._alpha = state["alpha"]
        self._n_sv = int(state["n_sv"])
        self._b = float(state["b"])
        self._n_seen = int(state["n_seen"])
        rng = np.random.default_rng(0)
        rng.bit_generator.state = state["rng"]
        self._rng = rng
