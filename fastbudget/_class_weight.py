"""Class weights as scikit-learn's ``class_weight``: the arithmetic and its checks.

:class:`ClassWeightMixin` gives :class:`fastbudget.base.BudgetClassifier` the per-class
weights of its ``class_weight`` parameter (None, a dict ``{label: weight}`` or
``'balanced'``), the effective example weights ``sample_weight * class_weight[label]`` and
the fitted ``class_weight_``. Nothing here modifies the model except ``fit``'s record of
the balanced weights, which the base class keeps.
"""
import math
import numbers
from collections.abc import Mapping

import numpy as np

from ._validation import plain

BALANCED_STREAMING_MSG = (
    "class_weight='balanced' is not supported by {name}.partial_fit and learn_one: the class "
    "frequencies of a stream are not known in advance. Compute the weights on a "
    "representative sample of the labels, e.g. sklearn.utils.class_weight."
    "compute_class_weight('balanced', classes=classes, y=y_sample) or, with numpy, "
    "len(y_sample) / (n_classes * np.bincount(...)), and pass them as a dict "
    "class_weight={{label: weight, ...}}; or use fit, which computes 'balanced' on its data.")


def is_balanced(class_weight):
    """Whether ``class_weight`` is the string ``'balanced'``."""
    return isinstance(class_weight, str) and class_weight == "balanced"


class ClassWeightMixin:
    """The class weights of a learner with a ``class_weight`` parameter.

    Mixed into :class:`fastbudget.base.BudgetClassifier`: ``fit`` and ``partial_fit`` call
    ``_weigh``; a ``learn_one`` that bypasses them calls it itself. A learner without that
    parameter has ``class_weight = None`` (the class attribute), which weighs nothing.
    """

    def _class_weights(self, cls, y_enc=None, *, fit=False):
        """Per-class weights aligned with ``cls`` (float64 ``(n_classes,)``), or None when
        ``class_weight`` is None (or the learner has no such parameter).

        ``class_weight`` as scikit-learn's: None, a dict {label: weight} (absent labels weigh
        1) or ``'balanced'``, ``n_samples / (n_classes * bincount(y))`` on the labels of a
        ``fit`` call (``y_enc``, encoded; ``fit=True``). Raises ``ValueError`` for anything
        else, for keys that are not among ``cls``, for weights that are not finite
        non-negative numbers, and for ``'balanced'`` outside ``fit``. Nothing is modified.
        """
        cw = self.class_weight
        if cw is None:
            return None
        if isinstance(cw, str):
            self._check_string_class_weight(fit=fit)
            counts = np.bincount(self._class_index(y_enc), minlength=len(cls))
            return self._unit_weights_check(
                cls, y_enc.shape[0] / (len(cls) * counts.astype(np.float64)))
        if not isinstance(cw, Mapping):
            raise ValueError(
                f"class_weight must be None, 'balanced' or a dict {{label: weight}}; got "
                f"{cw!r} of type {type(cw).__name__}.")
        index = {c: i for i, c in enumerate(cls.tolist())}
        bad = [k for k in cw if k not in index]
        if bad:
            raise ValueError(
                f"class_weight has label(s) {plain(bad)!r} that are not among the classes "
                f"{cls.tolist()!r}; use the labels of y as keys.")
        out = np.ones(len(cls))
        for k, v in cw.items():
            if (isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real)
                    or not math.isfinite(v) or v < 0):
                raise ValueError(
                    f"class_weight[{plain([k])[0]!r}] must be a finite non-negative number; "
                    f"got {v!r}.")
            out[index[k]] = float(v)
        return self._unit_weights_check(cls, out)

    def _check_string_class_weight(self, *, fit=False):
        """Raise ``ValueError`` unless a string ``class_weight`` is ``'balanced'`` and the
        call is a ``fit`` (a stream's class counts are not known in advance)."""
        cw = self.class_weight
        if cw != "balanced":
            raise ValueError(
                f"class_weight must be None, 'balanced' or a dict {{label: weight}}; got "
                f"{cw!r}.")
        if not fit:
            raise ValueError(BALANCED_STREAMING_MSG.format(name=type(self).__name__))

    def _unit_weights_check(self, cls, out):
        if getattr(self, "_unit_weights_only", False) and (out != 1.0).any():
            raise ValueError(
                f"{type(self).__name__} does not support example weights, so class_weight "
                f"can only give weight 1 to every class (got {plain(cls.tolist())!r} -> "
                f"{out.tolist()!r}); leave class_weight=None, or resample the classes instead.")
        return out

    @property
    def class_weight_(self):
        """Weight of each class of ``classes_`` (float64 ``(n_classes,)``), as ``SVC``'s:
        ones when ``class_weight`` is None, the dict's values (1 for absent labels), or for
        ``'balanced'`` the weights ``fit`` computed on its labels. Only on a fitted model;
        absent when ``class_weight`` was set to ``'balanced'`` after fitting (no ``fit`` has
        computed the weights)."""
        self._check_fitted()
        if is_balanced(self.class_weight):
            w = self.__dict__.get("_balanced_weights")
            if w is None:
                raise AttributeError(
                    "class_weight_ is not known: class_weight='balanced' was set after the "
                    "model was fitted, and only fit computes the balanced weights.")
            return np.array(w, dtype=np.float64)
        w = self._class_weights(self.classes_)
        return np.ones(len(self.classes_)) if w is None else w

    def _class_index(self, y_enc):
        """Index into ``classes_`` of every encoded label (binary: -1 -> 0, +1 -> 1)."""
        return (y_enc > 0).astype(np.intp)

    def _weigh(self, w, y_enc, cls, *, fit=False):
        """Effective example weights ``sample_weight * class_weight[label]`` (``w`` itself,
        untouched, when ``class_weight`` is None) and the per-class weights used (None when
        ``class_weight`` is None). Raises as ``_class_weights``; with ``fit`` also when
        every effective weight is zero."""
        cwv = self._class_weights(cls, y_enc, fit=fit)
        if cwv is not None:
            w = np.ascontiguousarray(w * cwv[self._class_index(y_enc)])
        if fit and not (w > 0).any():
            raise ValueError(
                "Sample weights must contain at least one non-zero number: all weights are zero"
                + (" once multiplied by class_weight" if cwv is not None else "")
                + ", so there is nothing to learn.")
        return w, cwv
