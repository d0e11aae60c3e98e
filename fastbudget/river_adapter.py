"""river-style one-example-at-a-time interface for any fastbudget classifier.

``RiverClassifier(estimator)`` exposes ``learn_one(x, y)`` and ``predict_one(x)`` where ``x`` is
a dict of feature name -> number, as river's classifiers do. It works without river; when river
is installed the class is also a ``river.base.Classifier``, so river's evaluation tools
(``river.evaluate.progressive_val_score``, metrics, pipelines) accept it.

Feature order is fixed by the first dict seen (its key order). Later dicts must have the same
keys (in any order); a key never seen before raises ``ValueError``, and a missing key raises
``ValueError`` unless ``missing_value`` is set (for example 0.0 for sparse streams).

Classes: pass ``classes`` when known. Otherwise the adapter buffers examples until two distinct
labels have appeared and then starts the model on the buffer; ``predict_one`` returns None until
then (river's convention for a model that knows nothing yet).

Class weights: a dict ``class_weight`` of the wrapped estimator applies to every example
(``learn_one`` learns through the estimator's ``learn_one`` or ``partial_fit``, which apply
it). ``class_weight='balanced'`` needs the whole data, so ``learn_one`` refuses it with a
``ValueError`` at the first call (before anything is buffered or learned): pass a dict.

Cost: each ``learn_one`` is one ``partial_fit`` call on a single row, including the validation
and the transactional snapshot of the budget-sized state; prefer ``partial_fit`` on chunks when
throughput matters.
"""
import numpy as np

try:  # river is optional
    from river import base as _river_base

    _Base = _river_base.Classifier
    HAVE_RIVER = True
except ImportError:  # pragma: no cover - depends on the environment
    _Base = object
    HAVE_RIVER = False

__all__ = ["RiverClassifier", "HAVE_RIVER"]


class RiverClassifier(_Base):
    """Adapter giving a fastbudget classifier river's ``learn_one`` / ``predict_one``.

    Parameters
    ----------
    estimator : BudgetClassifier
        The learner; it is used (and fitted) in place.
    classes : sequence, optional
        All labels of the stream. Required for more than two classes (with a multi-class
        estimator such as ``OneVsRestClassifier``) unless the buffering start is acceptable.
    missing_value : float or None
        Value for a known feature absent from a dict; None makes absence an error.
    """

    def __init__(self, estimator, classes=None, missing_value=None):
        self.estimator = estimator
        self.classes = classes
        self.missing_value = missing_value
        self._features = None
        self._index = None
        self._buffer_X = []
        self._buffer_y = []

    @property
    def _multiclass(self):  # river property
        return not getattr(self.estimator, "_binary_only", True)

    @property
    def feature_names(self):
        """Feature names in model column order (None before the first example)."""
        return None if self._features is None else list(self._features)

    def _vector(self, x):
        if not isinstance(x, dict):
            raise ValueError(f"x must be a dict of feature name -> number; got {type(x).__name__}.")
        if self._features is None:
            if not x:
                raise ValueError("x is empty: at least one feature is required.")
            self._features = list(x)
            self._index = {k: i for i, k in enumerate(self._features)}
        unknown = [k for k in x if k not in self._index]
        if unknown:
            raise ValueError(
                f"x has feature(s) {unknown[:5]!r} not seen in the first example; the model's "
                f"features are fixed to {self._features[:10]!r}."
            )
        v = np.empty(len(self._features))
        for k, i in self._index.items():
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
            bad = self._features[int(np.argmax(~np.isfinite(v)))]
            raise ValueError(f"feature {bad!r} is NaN or infinite; impute it before learn_one.")
        return v

    def learn_one(self, x, y):
        """Learn from one example (dict ``x``, label ``y``). Returns None, as river does.

        Raises ``ValueError`` for a malformed example; the model is then unchanged.
        """
        v = self._vector(x)
        est = self.estimator
        if est.__sklearn_is_fitted__():
            one = getattr(est, "learn_one", None)     # (TVM's skips most of the overhead)
            if one is not None:
                one(v, y)
            else:
                est.partial_fit(v[None, :], [y])
            return
        if isinstance(getattr(est, "class_weight", None), str):
            est._check_string_class_weight()    # raises: 'balanced' cannot stream
        if self.classes is not None:
            est.partial_fit(v[None, :], [y], classes=self.classes)
            return
        self._buffer_X.append(v)
        self._buffer_y.append(y)
        if len(set(self._buffer_y)) >= 2:
            X, ys = np.array(self._buffer_X), list(self._buffer_y)
            est.partial_fit(X, ys)  # raises (and keeps the buffer) on failure
            self._buffer_X, self._buffer_y = [], []

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
