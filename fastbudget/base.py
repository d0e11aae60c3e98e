"""Shared estimator layer: parameters, input validation, label encoding, scoring.

Every fastbudget classifier derives from :class:`BudgetClassifier`. It follows the
scikit-learn conventions without importing scikit-learn at run time: ``__init__`` only stores
keyword arguments, validation happens at fit time, fitted attributes end in ``_``.
"""
import inspect
import numbers

import numpy as np


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before it was fitted (same bases as scikit-learn's)."""


def check_array(X, *, name="X", allow_empty=False):
    """Validate a 2-D numeric array and return it as float64, C-contiguous.

    Raises ``ValueError`` with a message that says what to do for 1-D input, empty input,
    non-numeric data, NaN or infinity.
    """
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):  # scipy.sparse
        X = X.toarray()
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and similar
        raise ValueError(f"{name} could not be converted to a numeric array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must be numeric; got dtype {arr.dtype}. Encode categorical or text "
                "columns as numbers first."
            ) from None
    if arr.ndim == 1:
        raise ValueError(
            f"Expected a 2-D array for {name}, got a 1-D array of shape {arr.shape}. Reshape it "
            "with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single example."
        )
    if arr.ndim != 2:
        raise ValueError(f"Expected a 2-D array for {name}, got {arr.ndim} dimensions.")
    if not allow_empty and (arr.shape[0] == 0 or arr.shape[1] == 0):
        raise ValueError(
            f"{name} is empty (shape {arr.shape}): at least one example with at least one "
            "feature is required."
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or infinity (first at row {bad[0]}, column {bad[1]}). "
            "Remove or impute those values before calling this method."
        )
    return arr


class BudgetClassifier:
    """Base class of the fastbudget classifiers (binary unless stated otherwise).

    Subclasses implement ``_validate_params()``, ``_init_state(n_features)``,
    ``_partial_fit_encoded(X, y_pm, sample_weight)`` (``y_pm`` in {-1.0, +1.0}) and
    ``_decision(X)``; this class does the rest.
    """

    # ------------------------------------------------------------------ parameters
    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(
            p.name for p in sig.parameters.values()
            if p.name != "self" and p.kind != p.VAR_KEYWORD
        )

    def get_params(self, deep=True):
        """Parameters of this estimator, as scikit-learn's ``get_params``."""
        return {k: getattr(self, k) for k in self._get_param_names()}

    def set_params(self, **params):
        """Set parameters, as scikit-learn's ``set_params``; returns self."""
        valid = self._get_param_names()
        for k, v in params.items():
            if k not in valid:
                raise ValueError(
                    f"Invalid parameter {k!r} for {type(self).__name__}; valid ones are {valid}."
                )
            setattr(self, k, v)
        return self

    def __repr__(self):
        defaults = {
            p.name: p.default
            for p in inspect.signature(type(self).__init__).parameters.values()
        }
        parts = []
        for k in self._get_param_names():
            v = getattr(self, k, None)
            d = defaults.get(k, inspect.Parameter.empty)
            try:
                same = v is d or (type(v) is type(d) and v == d)
            except Exception:
                same = False
            if not same:
                parts.append(f"{k}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __sklearn_tags__(self):
        from sklearn.utils import Tags, ClassifierTags, InputTags, TargetTags  # noqa: F401

        tags = Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(multi_class=not getattr(self, "_binary_only", True)),
            input_tags=InputTags(),
        )
        return tags

    # ------------------------------------------------------------------ helpers
    _binary_only = True

    def _check_fitted(self):
        if not hasattr(self, "classes_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' or "
                "'partial_fit' with training data before using this method."
            )

    def _check_X_predict(self, X):
        self._check_fitted()
        X = check_array(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} was fitted with "
                f"{self.n_features_in_} features. Pass data with the same columns as in training."
            )
        return X

    @staticmethod
    def _check_param(name, value, *, low=None, low_inclusive=False, integer=False, allow=()):
        if value in allow if isinstance(value, (str, type(None))) else False:
            return
        kind = numbers.Integral if integer else numbers.Real
        if isinstance(value, bool) or not isinstance(value, kind):
            raise ValueError(f"{name} must be a {'whole' if integer else 'real'} number; got {value!r}.")
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite; got {value!r}.")
        if low is not None:
            if (value < low) if low_inclusive else (value <= low):
                op = ">=" if low_inclusive else ">"
                raise ValueError(f"{name} must be {op} {low}; got {value!r}.")

    def _check_sample_weight(self, sample_weight, n):
        if sample_weight is None:
            return np.ones(n)
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.ndim == 0:
            w = np.full(n, float(w))
        if w.shape != (n,):
            raise ValueError(f"sample_weight has shape {w.shape}; expected ({n},), one weight per example.")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("sample_weight must be finite and non-negative.")
        return np.ascontiguousarray(w)

    def _check_Xy(self, X, y, classes=None, reset=False):
        """Validate a training chunk; return (X, y in {-1,+1}).

        ``reset`` starts a new model: classes come from ``classes`` or from ``y``.
        Nothing on ``self`` is modified (the caller commits ``classes_`` after success).
        """
        X = check_array(X)
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D (one label per row); got shape {y.shape}.")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels; they must match.")
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise ValueError("y contains NaN or infinity; every example needs a label.")
        if reset:
            if classes is not None:
                cls = np.unique(np.asarray(classes))
            else:
                cls = np.unique(y)
            if cls.shape[0] > 2 and self._binary_only:
                raise ValueError(
                    f"{type(self).__name__} is a binary classifier but got {cls.shape[0]} classes "
                    f"({cls[:5].tolist()}...). Wrap it in fastbudget.OneVsRestClassifier for "
                    "multi-class problems."
                )
            if cls.shape[0] < 2:
                raise ValueError(
                    f"Only one class ({cls.tolist()}) in y. A classifier needs two: pass "
                    "classes=[neg, pos] to partial_fit when a first chunk holds one class only."
                )
            n_features = X.shape[1]
        else:
            cls = self.classes_
            n_features = self.n_features_in_
            if classes is not None and not np.array_equal(np.unique(np.asarray(classes)), cls):
                raise ValueError(
                    f"classes={list(classes)} differs from the classes of the first call "
                    f"{cls.tolist()}; pass the same classes (or none) on later calls."
                )
            if X.shape[1] != n_features:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} was fitted with "
                    f"{n_features} features. Pass data with the same columns as in training."
                )
        unseen = ~np.isin(y, cls)
        if unseen.any():
            raise ValueError(
                f"y contains label {y[unseen][0]!r} (row {int(np.argmax(unseen))}) not among the "
                f"classes {cls.tolist()}; pass all labels with classes= on the first partial_fit."
            )
        y_pm = np.where(y == cls[-1], 1.0, -1.0)
        return X, y_pm, cls

    # ------------------------------------------------------------------ prediction
    def decision_function(self, X):
        """Signed distance-like score; positive means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,), float64
        """
        X = self._check_X_predict(X)
        return self._decision(X)

    def predict(self, X):
        """Predicted labels, taken from ``classes_``."""
        f = self.decision_function(X)
        return self.classes_[(f > 0).astype(np.intp)]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy on (X, y)."""
        pred = self.predict(X)
        y = np.asarray(y)
        if sample_weight is None:
            return float(np.mean(pred == y))
        w = np.asarray(sample_weight, dtype=np.float64)
        return float(np.sum(w * (pred == y)) / np.sum(w))
