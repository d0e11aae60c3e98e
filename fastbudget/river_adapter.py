"""river-style one-example-at-a-time interface for any fastbudget classifier.

``RiverClassifier(estimator)`` exposes ``learn_one(x, y)`` and ``predict_one(x)`` where ``x`` is
a dict of feature name -> number, as river's classifiers do. It works without river; when river
is installed the class is also a ``river.base.Classifier``, so river's evaluation tools
(``river.evaluate.progressive_val_score``, metrics, pipelines) accept it.

Feature order is fixed by the first dict seen (its key order), or by the wrapped model's
``feature_names_in_`` when it was fitted on a named table. Later dicts must have the same
keys (in any order); a key never seen before raises ``ValueError``, and a missing key raises
``ValueError`` unless ``missing_value`` is set (for example 0.0 for sparse streams).

Classes: pass ``classes`` when known. Otherwise the adapter buffers examples until two distinct
labels have appeared and then starts the model on the buffer; ``predict_one`` returns None until
then (river's convention for a model that knows nothing yet). A fastbudget model cannot add a
class once it has started (its learners and their budgets are set up per class), so river's
habit of learning new classes on the fly is not available: a label outside the model's classes
raises ``ValueError`` (the model unchanged) saying to pass ``classes``. A multi-class estimator
(``OneVsRestClassifier``) therefore needs ``classes`` from the first call; a binary learner
without ``classes`` is started on the first two labels of the stream.

Kernel scale: a learner with ``gamma='scale'`` computes its kernel coefficient
``1 / (n_features * X.var())`` from the first chunk it learns. One example is not enough (the
variance would be that of its feature values), so for such a learner the adapter buffers the
first ``warm_up`` examples (default 100) and starts the model on them as one chunk, in stream
order; ``predict_one`` returns None meanwhile. With a numeric gamma (or a linear kernel) there
is no warm-up. A learner's own ``learn_one`` / ``partial_fit`` refuse a first chunk of one row
with ``gamma='scale'``.

Cloning: ``clone()`` (river) and ``sklearn.base.clone`` give an unfitted adapter around an
unfitted copy of the estimator (same parameters); ``clone(include_attributes=True)`` copies the
fitted model too.

Class weights: a dict ``class_weight`` of the wrapped estimator applies to every example
(``learn_one`` learns through the estimator's ``learn_one`` or ``partial_fit``, which apply
it). ``class_weight='balanced'`` needs the whole data, so ``learn_one`` refuses it with a
``ValueError`` at the first call (before anything is buffered or learned): pass a dict.

Cost: once the model has started, each ``learn_one`` calls the estimator's own ``learn_one``
(TVM's skips most of the validation, and the transactional snapshot for an example it only
counts); a learner without one gets a ``partial_fit`` of one row. Prefer ``partial_fit`` on
chunks when throughput matters.
"""
import copy

import numpy as np

from .base import BudgetClassifier, _plain

try:  # river is optional
    from river import base as _river_base

    _Base = _river_base.Classifier
    HAVE_RIVER = True
except ImportError:  # pragma: no cover - depends on the environment
    _Base = object
    HAVE_RIVER = False

__all__ = ["RiverClassifier", "HAVE_RIVER"]


def _unfitted_copy(est):
    """A new unfitted estimator with the parameters of ``est`` (nested estimators copied the
    same way, other values deep-copied), as scikit-learn's ``clone``; a value without
    ``get_params`` is deep-copied."""
    if not hasattr(est, "get_params") or isinstance(est, type):
        return copy.deepcopy(est)
    params = {k: _unfitted_copy(v) for k, v in est.get_params(deep=False).items()}
    return type(est)(**params)


class RiverClassifier(_Base):
    """Adapter giving a fastbudget classifier river's ``learn_one`` / ``predict_one``.

    Parameters
    ----------
    estimator : BudgetClassifier
        The learner; it is used (and fitted) in place.
    classes : sequence, optional
        All labels of the stream. Required for a multi-class estimator such as
        ``OneVsRestClassifier``; without it a binary learner starts on the first two labels
        of the stream, and a later third label raises ``ValueError``.
    missing_value : float or None
        Value for a known feature absent from a dict; None makes absence an error.
    warm_up : int, default=100
        For a learner with ``gamma='scale'`` (and a kernel that uses gamma): the number of
        examples buffered before the model starts, on which the scale is estimated (then
        learned as one chunk). Unused with a numeric gamma. At least 2.

    Examples
    --------
    Test-then-train on a checkerboard stream of dicts (river's progressive validation):

    >>> from fastbudget import TVMClassifier
    >>> from fastbudget.datasets import make_checkerboard
    >>> from fastbudget.river_adapter import RiverClassifier
    >>> X, y = make_checkerboard(3000, random_state=0)
    >>> X = (X - 2) / (4 / 12 ** 0.5)                        # standardised
    >>> model = RiverClassifier(TVMClassifier(budget=50, gamma=1.35), classes=[-1, 1])
    >>> hits = 0
    >>> for i, (row, label) in enumerate(zip(X, y)):
    ...     x = {"a": row[0], "b": row[1]}
    ...     if i >= 2000:                                    # score the last 1,000
    ...         hits += model.predict_one(x) == label
    ...     model.learn_one(x, label)
    >>> bool(hits / 1000 > 0.85)
    True
    """

    def __init__(self, estimator, classes=None, missing_value=None, warm_up=100):
        self.estimator = estimator
        self.classes = classes
        self.missing_value = missing_value
        self.warm_up = warm_up
        self._features = None
        self._index = None
        self._buffer_X = []
        self._buffer_y = []

    # scikit-learn's parameter protocol (sklearn.base.clone uses it), as the estimators'
    _get_param_names = BudgetClassifier.__dict__["_get_param_names"]
    get_params = BudgetClassifier.get_params
    set_params = BudgetClassifier.set_params

    def clone(self, new_params=None, include_attributes=False):
        """A fresh adapter with the same parameters, as river's ``clone``: the estimator is
        an unfitted copy of ``estimator`` (unless ``new_params`` gives one), so the clone
        has learned nothing. With ``include_attributes`` the fitted estimator and the
        adapter's state (features, buffer) are deep-copied instead."""
        params = {k: getattr(self, k) for k in self._get_param_names()}
        if not include_attributes:
            params["estimator"] = _unfitted_copy(self.estimator)
        params.update(new_params or {})
        new = type(self)(**copy.deepcopy(params))
        if include_attributes:
            for k, v in self.__dict__.items():
                if k not in params:
                    setattr(new, k, copy.deepcopy(v))
        return new

    @property
    def _multiclass(self):  # river property
        return not getattr(self.estimator, "_binary_only", True)

    @property
    def feature_names(self):
        """Feature names in model column order (None before the first example)."""
        return None if self._features is None else list(self._features)

    def _vector(self, x):
        """The model's row for dict ``x``. The column order is the wrapped model's
        ``feature_names_in_`` when it has them (a model fitted on a named table), otherwise
        that of the first example's keys; it is fixed once a row is built without error."""
        if not isinstance(x, dict):
            raise ValueError(f"x must be a dict of feature name -> number; got {type(x).__name__}.")
        features, index = self._features, self._index
        if features is None:
            names = getattr(self.estimator, "feature_names_in_", None)
            if names is not None:
                features = [str(n) for n in names]
            elif not x:
                raise ValueError("x is empty: at least one feature is required.")
            else:
                features = list(x)
            index = {k: i for i, k in enumerate(features)}
        unknown = [k for k in x if k not in index]
        if unknown:
            origin = ("the wrapped model's feature_names_in_"
                      if getattr(self.estimator, "feature_names_in_", None) is not None
                      else "the first example")
            raise ValueError(
                f"x has feature(s) {unknown[:5]!r} that the model does not know; its features "
                f"are fixed to {features[:10]!r} (by {origin})."
            )
        v = np.empty(len(features))
        for k, i in index.items():
            if k in x:
                val = x[k]
            elif self.missing_value is not None:
                val = self.missing_value
            else:
                raise ValueError(
                    f"x lacks feature {k!r}; pass every feature or set missing_value (e.g. 0.0)."
                )
            try:
                v[i] = float(val)
            except (TypeError, ValueError):
                raise ValueError(f"feature {k!r} has non-numeric value {val!r}.") from None
        if not np.isfinite(v).all():
            bad = features[int(np.argmax(~np.isfinite(v)))]
            raise ValueError(f"feature {bad!r} is NaN or infinite; impute it before learn_one.")
        self._features, self._index = features, index
        return v

    def learn_one(self, x, y):
        """Learn from one example (dict ``x``, label ``y``). Returns None, as river does.

        Until the model starts (see the module docstring: two labels seen without
        ``classes``, ``warm_up`` examples with ``gamma='scale'``) the example is buffered.

        Raises
        ------
        ValueError
            For a malformed example, a label outside the model's classes (a started model
            cannot add one), a multi-class estimator without ``classes``, or a bad
            ``warm_up``. The model and the buffer are then unchanged.
        """
        v = self._vector(x)
        est = self.estimator
        if est.__sklearn_is_fitted__():
            one = getattr(est, "learn_one", None)     # (TVM's skips most of the overhead)
            try:
                if one is not None:
                    one(v, y)
                else:
                    est.partial_fit(v[None, :], [y])
            except ValueError:
                self._check_known_label(y)
                raise
            return
        self._check_can_start()
        if self.classes is not None:
            est._check_Xy(v[None, :], [y], classes=self.classes, reset=True)  # raises only
        self._buffer_X.append(v)
        self._buffer_y.append(y)
        if self.classes is None and len(set(self._buffer_y)) < 2:
            return
        gamma_from_data = getattr(est, "_gamma_from_data", None)
        if gamma_from_data is not None and gamma_from_data() \
                and len(self._buffer_y) < self.warm_up:
            return
        X, ys = np.array(self._buffer_X), list(self._buffer_y)
        try:
            est.partial_fit(X, ys, classes=self.classes)
        except BaseException:
            self._buffer_X.pop()    # the buffer as before this call (the model is, too)
            self._buffer_y.pop()
            raise
        self._buffer_X, self._buffer_y = [], []

    def _check_can_start(self):
        """Raise ``ValueError`` for settings that cannot start a model (before buffering)."""
        est = self.estimator
        if isinstance(getattr(est, "class_weight", None), str):
            est._check_string_class_weight()    # raises: 'balanced' cannot stream
        BudgetClassifier._check_param("warm_up", self.warm_up, low=2, low_inclusive=True,
                                      integer=True)
        if self.classes is None and not getattr(est, "_binary_only", True):
            raise ValueError(
                f"RiverClassifier needs classes=[...] (every label of the stream) for the "
                f"multi-class {type(est).__name__}: a fastbudget model cannot add a class once "
                "it has started, and its learners are set up per class when it starts.")

    def _check_known_label(self, y):
        """Raise a ``ValueError`` that says what to do when ``y`` is not among the fitted
        model's classes and ``classes`` was not given (return otherwise)."""
        if self.classes is not None:
            return
        known = self.estimator.classes_.tolist()
        try:
            if any(bool(y == c) for c in known):
                return
        except (TypeError, ValueError):    # a label that does not compare: say nothing more
            return
        raise ValueError(
            f"label {_plain([y])[0]!r} is not one of the model's classes {known!r}: a "
            "fastbudget model cannot add a class once it has started, and without classes= "
            "the adapter starts it on the first two labels of the stream. Create the adapter "
            "with every label of the stream, RiverClassifier(estimator, classes=[...]), and "
            "for more than two classes wrap a binary learner in "
            "fastbudget.OneVsRestClassifier.") from None

    def predict_one(self, x):
        """Predicted label of one example, or None while the model has not started."""
        v = self._vector(x)
        if not self.estimator.__sklearn_is_fitted__():
            return None
        p = self.estimator.predict(v[None, :])[0]
        return p.item() if isinstance(p, np.generic) else p

    def decision_one(self, x):
        """Decision value(s) of one example (float, or dict label -> value for multi-class)."""
        v = self._vector(x)
        self.estimator._check_fitted()
        f = self.estimator.decision_function(v[None, :])
        if f.ndim == 1:
            return float(f[0])
        return {c.item() if isinstance(c, np.generic) else c: float(s)
                for c, s in zip(self.estimator.classes_, f[0])}
