"""IncrementalSVC: the exact incremental/decremental SVM (IDSVM) of Cauwenberghs & Poggio."""
from collections.abc import Mapping

import numbers

import numpy as np

from .._transaction import locked
from ..base import BudgetClassifier
from ..engine import EngineSVViews, IncrementalEngine, resolve_gamma
from ..kernels import adiabatic as ad

_ENGINE_FIELDS = ad.EngineState._fields


def _slot(index):
    """A slot number as ``learn_one`` returns it (an integer, not 2.5 or True)."""
    if isinstance(index, (bool, np.bool_)) or not isinstance(index, numbers.Integral):
        raise TypeError(f"index must be a slot number (an int, as learn_one returns and "
                        f"support_ lists); got {index!r}.")
    return int(index)


class IncrementalSVC(EngineSVViews, BudgetClassifier):
    """Exact kernel SVM learned and unlearned one weighted example at a time.

    After every example the model is the exact solution of the weighted SVM dual on all the
    examples held, the same problem ``sklearn.svm.SVC(C=C, ...).fit(X, y, sample_weight=w)``
    solves (paper 003, Cauwenberghs & Poggio 2000). Memory is fixed by ``capacity``: the
    examples are all kept (reserve vectors included, so that unlearning stays exact).

    Parameters
    ----------
    C : float, default=1.0
        Box constraint; example i has bound ``C * sample_weight[i]``.
    kernel : {'rbf', 'linear', 'poly'}, default='rbf'
    gamma : float or {'scale', 'auto'}, default='scale'
        Kernel coefficient as in scikit-learn; ``'scale'`` is ``1 / (n_features * X.var())``
        computed on the data of the first ``fit``/``partial_fit`` call, ``'auto'`` is
        ``1 / n_features``.
    degree : int, default=3
    coef0 : float, default=0.0
    capacity : int, default=1000
        Most examples held at once. Memory is ``memory_bytes()``, about
        ``16 * capacity**2`` bytes, allocated at the first fit.
    class_weight : dict, 'balanced' or None, default=None
        Class weights as in scikit-learn's ``SVC``: a dict ``{label: weight}`` (labels not in
        it weigh 1) or ``'balanced'``, ``n_samples / (n_classes * np.bincount(y))`` on the
        data of ``fit`` (``partial_fit`` and ``learn_one`` refuse it: pass a dict). An
        example's weight is ``sample_weight * class_weight[label]``; its bound is ``C``
        times that, so class c has ``C * class_weight[c]`` (SVC's C per class);
        ``learn_one`` and ``reweight`` apply it too.

    Attributes
    ----------
    classes_, n_features_in_, gamma_ : fitted
    support_ : ndarray of int, slots of the support vectors (alpha > 0); as in
        scikit-learn's ``SVC``, those of ``classes_[0]`` come first, then those of
        ``classes_[1]``, each group in slot order (``support_vectors_`` and ``dual_coef_``
        follow the same order)
    support_vectors_ : ndarray (n_SV, n_features)
    dual_coef_ : ndarray (1, n_SV), ``alpha_i * y_i`` as in scikit-learn
    intercept_ : ndarray (1,)
    n_support_ : ndarray (2,) of int32, support vectors of each class
    class_weight_ : ndarray (n_classes,), the weight of each class (see ``class_weight``)

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget import IncrementalSVC
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = IncrementalSVC(C=10, gamma=1.0, capacity=200).fit(X, y)
    >>> clf = clf.unlearn(0)    # exact decremental unlearning of the first example
    >>> bool(clf.score(X, y) > 0.9)
    True
    """

    @classmethod
    def _unit_test_params(cls):
        """Small, fast parameter sets for the shared checks (``tests/_estimators.py``), by id."""
        return {"idsvm": {"C": 1.0, "kernel": "rbf", "gamma": 0.5, "capacity": 400}}

    @classmethod
    def _warmup_params(cls):
        """Parameter sets whose fits compile every compiled path (``fastbudget.warmup``)."""
        return [{"kernel": k, "gamma": 1.0, "capacity": 64} for k in ("rbf", "linear", "poly")]

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, capacity=1000,
                 class_weight=None):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.capacity = capacity
        self.class_weight = class_weight

    def _validate_params(self):
        self._check_param("capacity", self.capacity, low=2, low_inclusive=True, integer=True)
        self._check_param("degree", self.degree, low=0, integer=True)
        self._check_param("coef0", self.coef0)

    def _init_state(self, n_features):
        self.engine_ = None  # allocated on the first chunk (gamma='scale' needs data)

    def _make_engine(self, X):
        self.gamma_ = resolve_gamma(self.gamma, X)
        self.engine_ = IncrementalEngine(
            int(self.capacity), X.shape[1], C=float(self.C), kernel=self.kernel,
            gamma=self.gamma_, degree=self.degree, coef0=float(self.coef0))

    #: each row scored by the engine before it is learned (``fastbudget.calibration``): the
    #: SVM of every row before it, so ``fit`` calibrates too
    _calibration_per_row = True

    def _partial_fit_encoded(self, X, y_pm, sample_weight):
        if self.engine_ is None:
            self._make_engine(X)
        self.engine_.add_batch(X, y_pm, sample_weight, self._row_scores(X))

    def _decision(self, X):
        if self.engine_ is None:
            return np.full(X.shape[0], 0.0)
        return self.engine_.decision_function(X)

    # ------------------------------------------------------------ one at a time
    @locked
    def learn_one(self, x, y, sample_weight=1.0, classes=None):
        """Learn one example exactly; returns its slot (the index ``unlearn`` takes).

        Parameters
        ----------
        x : array-like of shape (n_features,), or dict
            A dict of features is keyed by feature name (see ``feature_names_in_``) or in a
            fixed order.
        y : label, one of ``classes_`` (or of ``classes``)
        sample_weight : float >= 0
        classes : array-like, optional
            All labels of the stream; needed on the first call (one example shows one
            class), as ``partial_fit``'s; later calls may omit it or repeat the same.

        Returns
        -------
        int
        """
        x = self._one_example(x) if isinstance(x, Mapping) or np.ndim(x) == 1 else x
        if not self.__sklearn_is_fitted__():
            if classes is None:
                raise ValueError(
                    "learn_one on a new model needs the classes (one example shows one): pass "
                    "classes=[neg, pos], or call partial_fit(X, y, classes=[neg, pos]) or fit "
                    "first.")
            self.partial_fit(x, np.asarray([y]), classes=classes,
                             sample_weight=[sample_weight])
            return int(self.engine_.live()[0])       # the only example: its slot
        X, y_pm, _ = self._check_Xy(x, np.asarray([y]), classes=classes, reset=False)
        sw = self._check_sample_weight(np.asarray([sample_weight], dtype=float), 1)
        w, _ = self._weigh(sw, y_pm, self.classes_)
        if self.engine_ is None:
            self._make_engine(X)
        f = np.full(1, np.nan)       # scored by the engine before it is learned (calibration)
        slot = int(self.engine_.add_batch(X, y_pm, w, f)[0])
        self._add_calibration(f, y_pm, sw)
        return slot

    @locked
    def unlearn(self, index):
        """Exactly remove the example in slot ``index`` (decremental unlearning, paper 003
        Sec. 3). The model becomes the one trained without it. The slot is reused later."""
        self._check_fitted()
        self.engine_.remove(_slot(index))
        return self

    @locked
    def reweight(self, index, sample_weight):
        """Change an example's weight exactly: its bound becomes ``C * sample_weight``,
        times ``class_weight`` of its class when that is a dict (``'balanced'`` raises, as in
        ``partial_fit``: pass a dict)."""
        self._check_fitted()
        i, w = _slot(index), float(sample_weight)
        if self.class_weight is not None:
            self.engine_._check_slot(i)         # (before reading its label)
            w = float(self._weigh(self._check_sample_weight(w, 1), self.engine_.st.y[[i]],
                                  self.classes_)[0][0])
        self.engine_.reweight(i, w)
        return self

    @locked
    def set_C(self, C):
        """Move the whole model to a new C along the exact regularisation path."""
        self._check_fitted()
        self._check_param("C", C, low=0)
        self.engine_.set_C(float(C))
        self.C = C
        self.__dict__["_fitted_params"]["C"] = C   # the fitted model now has this C
        return self

    def loo_margins(self):
        """Exact leave-one-out margins ``y_i f_{-i}(x_i)`` of every held example (paper 003,
        Algorithm 2), by slot; negative means a leave-one-out error."""
        self._check_fitted()
        live = self.engine_.live()
        return live, np.array([self.engine_.loo(i) for i in live])

    def loo_error(self):
        """Exact leave-one-out error rate over the held examples."""
        _, m = self.loo_margins()
        return float(np.mean(m < 0)) if m.size else 0.0

    # ------------------------------------------------------------ fitted views
    def _sv_state(self):
        return self.engine_.st

    def kkt_residual(self):
        """Largest KT violation over the held examples (margin units)."""
        self._check_fitted()
        return self.engine_.kkt_residual()

    def memory_bytes(self):
        """Bytes of the model state: a closed form of (capacity, n_features)."""
        self._check_fitted()
        return ad.engine_nbytes(int(self.capacity), self.n_features_in_)

    # ------------------------------------------------------------ transactions
    def _save_undo(self):
        # The engine's own snapshot: its per-slot vectors, scalars and the live block of R,
        # O(capacity + |S|^2). X and K (capacity^2) need no copy: an update writes only the
        # rows and columns of the slots it fills, and those are free again after a restore.
        # (The base class's undo buffer would hold a second capacity^2 K and R: 576 MB at
        # capacity 6,000.)
        eng = self.__dict__.get("engine_")
        return None if eng is None else eng.snapshot()

    def _rollback(self, saved):
        self.engine_.restore(saved)

    # ------------------------------------------------------------ persistence protocol

    def _get_state(self):
        self._check_fitted()
        if self.engine_ is None:
            return {"allocated": False}
        state = {"allocated": True, "gamma_": float(self.gamma_)}
        for name in _ENGINE_FIELDS:
            state["engine_" + name] = getattr(self.engine_.st, name).copy()
        return state

    def _set_state(self, state):
        if not state.get("allocated", False):
            self.engine_ = None
            return self
        self.gamma_ = float(state["gamma_"])
        eng = IncrementalEngine.__new__(IncrementalEngine)
        arrays = {name: np.ascontiguousarray(state["engine_" + name]) for name in _ENGINE_FIELDS}
        eng.st = ad.EngineState(**arrays)
        eng.capacity = arrays["status"].shape[0]
        eng.n_features = arrays["X"].shape[1]
        self.engine_ = eng
        return self
