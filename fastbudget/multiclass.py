"""One-vs-rest multi-class wrapper with a total memory budget.

``OneVsRestClassifier(estimator, total_budget)`` trains one binary fastbudget learner per class
(class k against the rest) on every chunk and predicts the class whose learner gives the
largest decision value. With two classes a single learner is trained, as in scikit-learn.

Budget split
------------
``total_budget`` counts in the base learner's own budget unit (support vectors, twins, ...).
With K classes (K > 2) each of the K learners gets ``total_budget // K``; the remainder
``total_budget % K`` is left unused, so the sum of the learners' budgets never exceeds
``total_budget``. Each share must be at least 2. With ``total_budget=None`` every learner keeps
the ``budget`` of ``estimator`` (the total is then K times that).
"""
import re

import numpy as np

from .base import BudgetClassifier
from .calibration import check_stats, new_stats, pooled_map

__all__ = ["OneVsRestClassifier"]

_KEY_RE = re.compile(r"^e(\d+)\.(.+)$")
_CALIB = "calibration_stats"


def _clone(est, **overrides):
    params = est.get_params(deep=False)
    params.update(overrides)
    return type(est)(**params)


class OneVsRestClassifier(BudgetClassifier):
    """One-vs-rest wrapper that turns a binary fastbudget learner into a multi-class one.

    Parameters
    ----------
    estimator : BudgetClassifier
        Binary learner used as a template; it is copied (never fitted itself).
    total_budget : int or None
        Budget shared by all binary learners (see the module docstring for the split); None
        keeps the template's own ``budget`` for every learner.
    class_weight : dict, 'balanced' or None, default=None
        Class weights as in scikit-learn's ``SVC``: a dict ``{label: weight}`` (labels not in
        it weigh 1) or ``'balanced'``, ``n_samples / (n_classes * np.bincount(y))`` on the
        data of ``fit`` (``partial_fit`` and ``learn_one`` refuse it: pass a dict). An
        example's weight is ``sample_weight * class_weight[label]``, keys being the
        original labels. That weight of an example of class c is passed, as its sample
        weight, to every binary learner (positive for learner c, negative for the others),
        so each sub-problem sees the classes weighted as in the multi-class problem;
        'balanced' counts all ``n_classes``. The template ``estimator`` must keep
        ``class_weight=None`` (its keys would be the sub-problems' labels -1 / +1).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimators_ : list of BudgetClassifier
        One learner per class (a single learner when there are two classes); learner k sees
        labels +1 for ``classes_[k]`` and -1 for every other class.
    budget_per_estimator_ : int or None
        The budget each learner received.
    feature_names_in_ : ndarray of shape (n_features,), object
        The column names of a DataFrame the model was started on (only when all are
        strings); its learners are given arrays and have none.

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget.multiclass import OneVsRestClassifier
    >>> from fastbudget.estimators.baselines import PerceptronClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-3, 1, (50, 2)), rng.normal(0, 1, (50, 2)), rng.normal(3, 1, (50, 2))]
    >>> y = np.repeat([0, 1, 2], 50)
    >>> clf = OneVsRestClassifier(PerceptronClassifier(budget=10, kernel="rbf"), total_budget=30)
    >>> clf.fit(X, y).score(X, y) > 0.8
    True
    """

    _binary_only = False
    _calibrates = False        # each binary learner keeps its own calibration map

    def __init__(self, estimator=None, total_budget=None, class_weight=None):
        self.estimator = estimator
        self.total_budget = total_budget
        self.class_weight = class_weight

    # ------------------------------------------------------------------ params
    def _validate_params(self):
        if not isinstance(self.estimator, BudgetClassifier):
            raise ValueError(
                "estimator must be a fastbudget binary learner instance (for example "
                f"PerceptronClassifier(budget=100)); got {self.estimator!r}."
            )
        if isinstance(self.estimator, OneVsRestClassifier):
            raise ValueError("estimator must be a binary learner, not another OneVsRestClassifier.")
        if getattr(self.estimator, "class_weight", None) is not None:
            raise ValueError(
                f"Set class_weight on the OneVsRestClassifier, not on its estimator (got "
                f"estimator.class_weight={self.estimator.class_weight!r}): the wrapper's keys are "
                "the original labels and it weights every binary learner's examples by their "
                "original class.")
        if self.total_budget is not None:
            self._check_param("total_budget", self.total_budget, low=2, low_inclusive=True,
                              integer=True)
            if "budget" not in self.estimator._get_param_names():
                raise ValueError(
                    f"total_budget is set but {type(self.estimator).__name__} has no budget "
                    "parameter; leave total_budget=None."
                )

    def _share(self, n_learners):
        if self.total_budget is None:
            return None
        share = int(self.total_budget) // n_learners
        if share < 2:
            raise ValueError(
                f"total_budget={self.total_budget} is too small for {n_learners} one-vs-rest "
                f"learners: each needs a budget of at least 2, so use total_budget >= "
                f"{2 * n_learners}."
            )
        return share

    @property
    def _poor_score(self):
        return bool(getattr(self.estimator, "_poor_score", False))

    # ------------------------------------------------------------------ learning
    def _kernel_spec(self, X, fresh=False):
        ests = self.__dict__.get("estimators_")
        if not fresh and ests and ests[0].__sklearn_is_fitted__():
            return ests[0]._kernel_spec(X)
        est = self.__dict__.get("estimator")
        return est._kernel_spec(X, fresh=True) if isinstance(est, BudgetClassifier) else None

    def _check_Xy(self, X, y, classes=None, reset=False):
        X, y_idx, cls = super()._check_Xy(X, y, classes=classes, reset=reset)
        if reset:
            self._share(1 if cls.shape[0] == 2 else cls.shape[0])  # fail before any change
        return X, y_idx, cls

    def _encode_y(self, y, cls):
        return np.searchsorted(cls, y).astype(np.int64)

    def _class_index(self, y_idx):
        return y_idx

    def _n_learners(self):
        return 1 if len(self.classes_) == 2 else len(self.classes_)

    def _new_learner(self):
        share = self._share(self._n_learners())
        return _clone(self.estimator) if share is None else _clone(self.estimator, budget=share)

    def _init_state(self, n_features):
        n = self._n_learners()
        self.budget_per_estimator_ = self._share(n)
        self.estimators_ = [self._new_learner() for _ in range(n)]

    def _partial_fit_encoded(self, X, y_idx, sample_weight):
        pm = np.array([-1, 1])
        one = len(self.estimators_) == 1
        for k, est in enumerate(self.estimators_):
            y_pm = np.where(y_idx == (1 if one else k), 1.0, -1.0)
            if est.__sklearn_is_fitted__():
                # validated here, and inside this model's transaction (see _save_undo)
                est._partial_fit_checked(X, y_pm, sample_weight)
            else:
                est.partial_fit(X, y_pm.astype(np.int64), classes=pm, sample_weight=sample_weight)

    # ------------------------------------------------------------------ transactions
    def _save_undo(self):
        """The learners' own snapshots (each a copy into its undo buffer, or its light
        engine snapshot) rather than a copy of the whole state: cheap enough for
        ``learn_one``. A learner's own transaction, if one runs inside this one, snapshots
        the same state again (nothing touches learner k before its update)."""
        ests = self.__dict__.get("estimators_")
        if not ests or not all(e.__sklearn_is_fitted__() for e in ests):
            return None
        return [e._snapshot() for e in ests]

    def _rollback(self, saved):
        for est, snap in zip(self.estimators_, saved):
            est._restore(snap)

    def memory_bytes(self):
        """Bytes of the model state: the sum of the binary learners' ``memory_bytes()``
        (one learner for two classes, K for K > 2 classes, each with
        ``budget_per_estimator_``)."""
        self._check_fitted()
        return sum(int(est.memory_bytes()) for est in self.estimators_)

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X):
        """Decision values: shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else (n_samples, n_classes), column k from learner k."""
        X = self._check_X_predict(X)
        if len(self.estimators_) == 1:
            return self.estimators_[0].decision_function(X)
        return np.column_stack([est.decision_function(X) for est in self.estimators_])

    def predict(self, X):
        """Class of the learner with the largest decision value (ties: the first)."""
        f = self.decision_function(X)
        if f.ndim == 1:
            return self.classes_[(f > 0).astype(np.intp)]
        return self.classes_[np.argmax(f, axis=1)]

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes), columns in ``classes_`` order.

        Each binary learner k's decision value is mapped to a probability of
        ``classes_[k]`` against the rest by one calibration map fitted on the sum of the
        learners' online statistics (``fastbudget.calibration.pooled_map``); the K
        probabilities of a row are divided by their sum. One strictly increasing map for
        every column keeps ``predict_proba(X).argmax(1)`` equal to ``predict(X)`` (a map
        per learner would not: the learners' maps cross) wherever the probabilities can
        tell the classes apart: a row far from the data, whose decision values all lie
        within about 1e-11 of 0, gets 1/2 for every class up to the map's resolution there
        (1e-12), and its argmax may then be another class than ``predict``'s. With two
        classes, the single learner's probabilities.

        Raises
        ------
        NotFittedError
            Before ``fit`` / ``partial_fit``.
        """
        X = self._check_X_predict(X)
        if len(self.estimators_) == 1:
            return self.estimators_[0].predict_proba(X)
        g = pooled_map([est.__dict__.get("_calibration_stats") for est in self.estimators_])
        P = np.column_stack([g(est._decision(X)) for est in self.estimators_])
        return P / P.sum(axis=1, keepdims=True)

    def predict_proba_one(self, x):
        """Class probabilities of one example as a dict label -> probability."""
        p = self.predict_proba(self._one_example(x))[0]
        return {(c.item() if isinstance(c, np.generic) else c): float(v)
                for c, v in zip(self.classes_, p)}

    # ------------------------------------------------------------------ state protocol
    def _get_state(self):
        state = {"n_estimators": len(self.estimators_),
                 "budget_per_estimator": self.budget_per_estimator_}
        for k, est in enumerate(self.estimators_):
            if not est.__sklearn_is_fitted__():
                raise ValueError(f"learner {k} is not fitted; the model is incomplete.")
            for name, v in est._get_state().items():
                state[f"e{k}.{name}"] = v
            calib = est.__dict__.get("_calibration_stats")
            if calib is not None:      # learner k's calibration (absent in older files)
                state[f"e{k}.{_CALIB}"] = calib
        return state

    def _state_may_be_infinite(self, name):
        m = _KEY_RE.match(name)
        return m is not None and self.estimator._state_may_be_infinite(m.group(2))

    def _check_state(self, state):
        n = state.get("n_estimators")
        if not isinstance(n, int) or n != self._n_learners():
            raise ValueError(f"n_estimators={n!r} does not match {len(self.classes_)} classes")
        if state.get("budget_per_estimator") != self._share(n):
            raise ValueError("budget_per_estimator does not match total_budget")
        for key in state:
            if key in ("n_estimators", "budget_per_estimator"):
                continue
            m = _KEY_RE.match(key)
            if m is None or int(m.group(1)) >= n:
                raise ValueError(f"unexpected state entry {key!r}")

    def _set_state(self, state):
        n = int(state["n_estimators"])
        subs = [{} for _ in range(n)]
        for key, v in state.items():
            m = _KEY_RE.match(key)
            if m is not None:
                subs[int(m.group(1))][m.group(2)] = v
        estimators = []
        for sub in subs:
            calib = sub.pop(_CALIB, None)
            if calib is not None:
                check_stats(calib)
            est = self._new_learner()
            # the checks its first partial_fit would run (a loaded template is not checked)
            est._validate_common_params()
            est._validate_params()
            est.classes_ = np.array([-1, 1])
            est.n_features_in_ = int(self.n_features_in_)
            check = getattr(est, "_check_state", None)
            if check is not None:
                check(sub)
            est._set_state(sub)
            # (a file from before calibration: empty statistics)
            est._calibration_stats = new_stats() if calib is None else np.array(
                calib, dtype=np.float64)
            estimators.append(est)
        self.budget_per_estimator_ = state["budget_per_estimator"]
        self.estimators_ = estimators
