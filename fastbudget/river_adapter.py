"""river-style one-example-at-a-time interface for any fastbudget classifier.

``RiverClassifier(estimator)`` exposes ``learn_one(x, y)`` and ``predict_one(x)`` where ``x`` is
a dict of feature name -> number, as river's classifiers do. It works without river; when river
is installed the class is also a ``river.base.Classifier``, so river's evaluation tools
(``river.evaluate.progressive_val_score``, metrics, pipelines) accept it.

Feature order: the features are those of the first dict seen, in sorted order of their
names (so the order of a dict's keys never matters, for the first dict neither; names that
cannot be compared, such as a mix of numbers and strings, keep the first dict's order), or the
wrapped model's ``feature_names_in_`` when it was fitted on a named table; a model fitted
before it was wrapped, on an array, reads them in the first dict's key order. Later dicts must
have the same keys (in any order): a key never seen before raises ``ValueError`` unless
``unknown_features='ignore'`` (the model's width is fixed, so it is then dropped), and a
missing key raises ``ValueError`` unless ``missing_value`` is set (for example 0.0 for sparse
streams).

Classes: pass ``classes`` when known. Otherwise the adapter buffers examples until two distinct
labels have appeared and then starts the model on the buffer. Until the model starts (this, or
the warm-up below) ``predict_one`` returns the most frequent label seen so far (the first seen
among equally frequent ones; None before any example), and ``predict_proba_one`` the labels'
frequencies seen so far (see ``RiverClassifier.predict_proba_one``). Once started,
``predict_proba_one`` gives the learner's calibrated probabilities (``predict_proba``; see
``fastbudget.calibration``). A fastbudget model cannot add a class once it has started (its
learners and their budgets are set up per class), so river's habit of learning new classes on
the fly is not available: a label outside the model's classes raises ``ValueError`` (the model
unchanged) saying to pass ``classes``. A multi-class estimator
(``OneVsRestClassifier``) therefore needs ``classes`` from the first call; a binary learner
without ``classes`` is started on the first two labels of the stream.

Kernel scale: a learner with ``gamma='scale'`` computes its kernel coefficient
``1 / (n_features * X.var())`` from the first chunk it learns. One example is not enough (the
variance would be that of its feature values), so for such a learner the adapter buffers the
first ``warm_up`` examples (default 100) and starts the model on them as one chunk, in stream
order; ``predict_one`` predicts the most frequent label meanwhile. The scale is the statistic
of ``fastbudget.engine.resolve_gamma`` on that chunk, the one every learner computes on its
first chunk. With a numeric gamma (or a linear kernel) there
is no warm-up. A learner's own ``learn_one`` / ``partial_fit`` refuse a first chunk of one row
with ``gamma='scale'``.

Cloning: ``clone()`` (river) and ``sklearn.base.clone`` give an unfitted adapter around an
unfitted copy of the estimator (same parameters); ``clone(include_attributes=True)`` copies the
fitted model too.

Class weights: a dict ``class_weight`` of the wrapped estimator applies to every example
(``learn_one`` learns through the estimator's ``learn_one`` or ``partial_fit``, which apply
it). ``class_weight='balanced'`` needs the whole data, so ``learn_one`` refuses it with a
``ValueError`` at the first call (before anything is buffered or learned): pass a dict.

Mini-batches: ``learn_many(X, y)``, ``predict_many(X)`` and ``predict_proba_many(X)`` take a
pandas DataFrame (columns named as the dicts' keys; a column of ``X`` is a feature, a NaN
cell an absent one, so ``missing_value`` and ``unknown_features`` apply as to a dict) and,
once the model has started, learn the batch as one ``partial_fit`` chunk and score it in one
call; before, the rows go through ``learn_one`` / ``predict_one`` one by one. A chunk is
learned as its rows one at a time would be, up to the rounding of the calibration
statistics (river's ``check_learn_many_matches_learn_one`` passes): TVM, the perceptrons,
Forgetron, Pegasos, BSGD, Span and ``IncrementalSVC`` score each row in their loop before
they learn it; the other learners (StreamSVM, Random, SV-incremental), and any learner with
``forgetting``, learn a batch row by row (its rows already converted), since their chunk
would score the calibration under the model at the chunk's start, or cut it for the drift
detector.

Cost: once the model has started, each ``learn_one`` calls the estimator's own ``learn_one``
(TVM's skips most of the validation, and the transactional snapshot for an example it only
counts); a learner without one gets a ``partial_fit`` of one row. Prefer ``partial_fit`` on
chunks when throughput matters.
"""
import copy

import numpy as np

from ._validation import plain as _plain
from .base import BudgetClassifier

try:  # river is optional
    from river import base as _river_base

    _Base = _river_base.MiniBatchClassifier
    HAVE_RIVER = True
except ImportError:  # pragma: no cover - depends on the environment
    _Base = object
    HAVE_RIVER = False

__all__ = ["RiverClassifier", "HAVE_RIVER"]


def _is_nan(v):
    try:
        return v != v
    except Exception:  # noqa: BLE001 - a value that does not compare is not NaN
        return False


def _chunk_is_rows(est):
    """Whether ``partial_fit`` of a chunk learns it as ``learn_one`` of its rows would, the
    calibration statistics included: every learner scores each row in its loop, before it
    learns it, and none has a drift detector."""
    learners = getattr(est, "estimators_", None) or [est]
    return all(getattr(e, "_calibration_per_row", False)
               and getattr(e, "forgetting", None) is None for e in learners)


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
    unknown_features : {'raise', 'ignore'}, default='raise'
        What to do with a key that the model's features do not include (a feature that
        appears after the columns were fixed): raise ``ValueError``, or drop it.

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

    def __init__(self, estimator, classes=None, missing_value=None, warm_up=100,
                 unknown_features="raise"):
        self.estimator = estimator
        self.classes = classes
        self.missing_value = missing_value
        self.warm_up = warm_up
        self.unknown_features = unknown_features
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

    @classmethod
    def _unit_test_params(cls):
        """Settings for river's ``check_estimator``: binary learners (river's checks stream
        its Phishing data set, binary labels), with ``missing_value`` and
        ``unknown_features`` set because some checks drop or add features between
        examples; TVM with ``gamma='scale'`` (its warm-up) and with a numeric gamma. Budgeted
        learners only: river's memory check streams 2,000 examples, more than an exact
        ``IncrementalSVC`` of a fixed capacity holds."""
        from .estimators.baselines import PerceptronClassifier
        from .estimators.tvm import TVMClassifier

        common = {"missing_value": 0.0, "unknown_features": "ignore"}
        yield {"estimator": TVMClassifier(budget=20), "warm_up": 10, **common}
        yield {"estimator": TVMClassifier(budget=20, gamma=0.1), **common}
        yield {"estimator": PerceptronClassifier(budget=20, kernel="rbf", gamma=0.1), **common}

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
                if not self.estimator.__sklearn_is_fitted__():
                    try:       # a model started here: columns in the order of their names
                        features = sorted(features)
                    except TypeError:
                        pass
            index = {k: i for i, k in enumerate(features)}
        self._check_unknown_option()
        unknown = [] if self.unknown_features == "ignore" else [k for k in x if k not in index]
        if unknown:
            raise self._unknown(unknown, features)
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

    def _check_unknown_option(self):
        if self.unknown_features not in ("raise", "ignore"):
            raise ValueError(f"unknown_features must be 'raise' or 'ignore'; got "
                             f"{self.unknown_features!r}.")

    def _unknown(self, unknown, features):
        """The ``ValueError`` for features the model does not know."""
        origin = ("the wrapped model's feature_names_in_"
                  if getattr(self.estimator, "feature_names_in_", None) is not None
                  else "the first example")
        return ValueError(
            f"x has feature(s) {unknown[:5]!r} that the model does not know; its features "
            f"are fixed to {features[:10]!r} (by {origin}). Pass "
            "unknown_features='ignore' to drop such features.")

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
            self._learn_row(v, y)
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

    def _learn_row(self, v, y):
        """Learn the row ``v`` of a started model (a binary learner's ``learn_one`` skips
        ``partial_fit``'s general validation)."""
        est = self.estimator
        one = getattr(est, "learn_one", None)
        try:
            if one is not None:
                one(v, y)
            else:
                est.partial_fit(v[None, :], [y])
        except ValueError:
            self._check_known_label(y)
            raise

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
        """Predicted label of one example. Before the model has started (see the module
        docstring): the most frequent label seen so far (the first seen among equally
        frequent ones), or None before any example."""
        if not self.estimator.__sklearn_is_fitted__():
            if self._features is not None or self.estimator.__dict__.get(
                    "feature_names_in_") is not None:
                self._vector(x)      # (validated as it will be once the model starts)
            counts = self._buffer_counts()
            if not counts:
                return None
            return max(counts, key=counts.get)       # (ties: the first seen)
        v = self._vector(x)
        one = getattr(self.estimator, "predict_one", None)   # (a binary learner's is cheap)
        p = one(v) if one is not None else self.estimator.predict(v[None, :])[0]
        return p.item() if isinstance(p, np.generic) else p

    def _buffer_counts(self):
        """Label -> number of buffered examples, in order of first appearance."""
        counts = {}
        for t in self._buffer_y:
            t = t.item() if isinstance(t, np.generic) else t
            counts[t] = counts.get(t, 0) + 1
        return counts

    def predict_proba_one(self, x):
        """Class probabilities of one example, a dict label -> probability summing to 1.

        Once the model has started: the learner's calibrated ``predict_proba`` (binary
        learners, and ``OneVsRestClassifier``'s normalised one-vs-rest probabilities).
        Before: the frequencies of the labels seen so far (with the classes given, over
        those classes, each counted once more so that none gets 0; for a binary learner
        without them whose labels so far are booleans, over ``False`` and ``True``, as
        river's binary models, also before any example); otherwise ``{}`` before any
        example.
        """
        est = self.estimator
        if not est.__sklearn_is_fitted__():
            if self._features is not None or est.__dict__.get("feature_names_in_") is not None:
                self._vector(x)
            counts = self._buffer_counts()
            if self.classes is not None:
                labels = [c.item() if isinstance(c, np.generic) else c for c in self.classes]
                counts = {c: counts.get(c, 0) + 1 for c in labels}
            elif getattr(est, "_binary_only", True) and all(
                    isinstance(c, bool) for c in counts):
                # river's binary convention: both booleans, frequencies counted once more
                counts = {c: counts.get(c, 0) + 1 for c in (False, True)}
            if not counts:
                return {}
            total = sum(counts.values())
            return {c: n / total for c, n in counts.items()}
        v = self._vector(x)
        one = getattr(est, "predict_proba_one", None)        # (a binary learner's is cheap)
        if one is not None:
            return {(c.item() if isinstance(c, np.generic) else c): float(q)
                    for c, q in one(v).items()}
        p = est.predict_proba(v[None, :])[0]
        return {(c.item() if isinstance(c, np.generic) else c): float(q)
                for c, q in zip(est.classes_, p)}

    # ------------------------------------------------------------------ mini-batches
    def _rows(self, X):
        """The row dicts of DataFrame ``X`` (NaN cells left out), one at a time, for the
        paths that go one example at a time (lazily: ``learn_many`` stops taking them once
        the model has started)."""
        cols = list(X.columns)
        for r in X.itertuples(index=False, name=None):
            yield {c: v for c, v in zip(cols, r) if not _is_nan(v)}

    def _matrix(self, X):
        """The model's rows for DataFrame ``X``, as :meth:`_vector` builds each row's dict (a
        NaN cell is an absent feature)."""
        if not hasattr(X, "columns"):
            raise ValueError(f"X must be a pandas DataFrame; got {type(X).__name__}.")
        if self._features is None:
            if len(X) == 0:
                raise ValueError("X has no rows.")
            self._vector(next(self._rows(X.iloc[:1])))  # fixes the columns, as learn_one
        features, index = self._features, self._index
        self._check_unknown_option()
        unknown = [c for c in X.columns if c not in index]
        if unknown and self.unknown_features == "raise":
            raise self._unknown(unknown, features)
        M = np.full((len(X), len(features)), np.nan)
        for c in X.columns:
            if c in index:
                try:
                    M[:, index[c]] = np.asarray(X[c], dtype=np.float64)
                except (TypeError, ValueError):
                    raise ValueError(f"feature {c!r} has non-numeric values.") from None
        absent = np.isnan(M)
        if absent.any():
            if self.missing_value is None:
                k = features[int(np.argmax(absent.any(axis=0)))]
                raise ValueError(f"X lacks feature {k!r} (a column, or NaN cells); pass every "
                                 "feature or set missing_value (e.g. 0.0).")
            M[absent] = float(self.missing_value)
        if not np.isfinite(M).all():
            bad = features[int(np.argmax(~np.isfinite(M).all(axis=0)))]
            raise ValueError(f"feature {bad!r} is infinite; impute it before learn_many.")
        return M

    def learn_many(self, X, y):
        """Learn a mini-batch: DataFrame ``X``, Series (or sequence) ``y`` of its labels.
        Returns None. Before the model starts the rows go through :meth:`learn_one`; once it
        has, the rest is one ``partial_fit`` chunk (the model unchanged if it fails)."""
        ys = list(y)
        if len(ys) != len(X):
            raise ValueError(f"X has {len(X)} rows but y has {len(ys)} labels.")
        i = 0
        if not self.estimator.__sklearn_is_fitted__():
            rows = self._rows(X)
            while i < len(ys) and not self.estimator.__sklearn_is_fitted__():
                self.learn_one(next(rows), ys[i])
                i += 1
        if i == len(ys):
            return
        M = self._matrix(X.iloc[i:])
        est = self.estimator
        if not _chunk_is_rows(est):
            # the learner scores a chunk for its calibration under the model at the chunk's
            # start (or its drift detector cuts chunks into pieces): row by row, as learn_one,
            # its labels checked first so that a bad one leaves the model as it was
            known = est.classes_.tolist()
            for t in ys[i:]:
                if not any(bool(t == c) for c in known):
                    self._check_known_label(t)
                    raise ValueError(f"label {_plain([t])[0]!r} is not one of the model's "
                                     f"classes {known!r}.")
            for v, t in zip(M, ys[i:]):
                self._learn_row(v, t)
            return
        try:
            est.partial_fit(M, ys[i:])
        except ValueError:
            for t in ys[i:]:               # (a label the model cannot add: say what to do)
                self._check_known_label(t)
            raise

    def predict_many(self, X):
        """Predicted labels of a mini-batch, a pandas Series indexed as ``X``."""
        import pandas as pd

        if not self.estimator.__sklearn_is_fitted__():
            return pd.Series([self.predict_one(x) for x in self._rows(X)], index=X.index,
                             dtype=object)
        labels = self.estimator.predict(self._matrix(X)) if len(X) else []
        return pd.Series(_plain(list(labels)), index=X.index, dtype=object)

    def predict_proba_many(self, X):
        """Class probabilities of a mini-batch, a pandas DataFrame indexed as ``X``, one
        column per class (as :meth:`predict_proba_one` gives them)."""
        import pandas as pd

        est = self.estimator
        if not est.__sklearn_is_fitted__():
            return pd.DataFrame([self.predict_proba_one(x) for x in self._rows(X)],
                                index=X.index).fillna(0.0)
        classes = _plain(est.classes_.tolist())
        P = est.predict_proba(self._matrix(X)) if len(X) else np.zeros((0, len(classes)))
        return pd.DataFrame(P, index=X.index, columns=classes)

    def decision_one(self, x):
        """Decision value(s) of one example (float, or dict label -> value for multi-class)."""
        v = self._vector(x)
        self.estimator._check_fitted()
        f = self.estimator.decision_function(v[None, :])
        if f.ndim == 1:
            return float(f[0])
        return {c.item() if isinstance(c, np.generic) else c: float(s)
                for c, s in zip(self.estimator.classes_, f[0])}
