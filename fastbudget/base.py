"""Shared estimator layer: parameters, input validation, label encoding, scoring.

Every fastbudget classifier derives from :class:`BudgetClassifier`. It follows the
scikit-learn conventions without importing scikit-learn at run time: ``__init__`` only stores
keyword arguments, validation happens at fit time, fitted attributes end in ``_``.

Subclass protocol
-----------------
A learner implements

- ``_validate_params()``: raise ``ValueError`` for bad hyper-parameters (the base class already
  checks the common ones: ``budget``, ``C``, ``gamma``, ``kernel``, when present);
- ``_init_state(n_features)``: allocate the state of a fresh model (``classes_`` and
  ``n_features_in_`` are already set);
- ``_partial_fit_encoded(X, y_pm, sample_weight)``: learn one validated chunk, ``X`` float64
  C-contiguous ``(n, d)``, ``y_pm`` float64 in {-1, +1}, ``sample_weight`` float64 ``(n,)``;
- ``_decision(X)``: decision values ``(n,)`` float64;
- ``_get_state()`` / ``_set_state(state)``: the complete fitted state (including the RNG state)
  as a dict of name -> ``numpy.ndarray`` or JSON-able value (int, float, str, bool, None, and
  lists/dicts of these). ``_set_state`` must rebuild a working model from such a dict on a
  freshly constructed instance (``classes_`` and ``n_features_in_`` already set). It may keep
  references to the arrays it is given.

A learner with a ``class_weight`` parameter gets scikit-learn's class weights: the base class
multiplies ``sample_weight`` by the weight of each example's class before
``_partial_fit_encoded`` sees it (``_weigh``; a ``learn_one`` that bypasses ``partial_fit``
and ``_check_one`` calls it itself, as ``IncrementalSVC``'s).

The base class then provides ``fit`` (resets the model), ``partial_fit`` (``classes`` on the
first call, as scikit-learn), ``predict_proba`` (an online calibration map of the decision
values: every chunk after the first is scored with ``_decision`` before it is learned, see
``fastbudget.calibration``; a ``learn_one`` that bypasses ``partial_fit`` does the same
itself, as TVM's and ``IncrementalSVC``'s), transactional updates (a call that raises leaves the model exactly
as before), ``save``/``load`` (see ``fastbudget.persist`` and docs/format.md), pickling, and the
scikit-learn tags.

The parts that are not the estimator contract live in their own modules: the input checks in
``fastbudget._validation``, the class-weight arithmetic in ``fastbudget._class_weight``
(``ClassWeightMixin``), the snapshot and rollback in ``fastbudget._transaction``
(``TransactionMixin``), and the exception classes in ``fastbudget.exceptions``.

Feature names follow scikit-learn. A model started (``fit``, or the first ``partial_fit``) on
a table whose column names are all strings (a pandas DataFrame; anything with a ``columns``
attribute, pandas is never imported) records them in ``feature_names_in_`` (object ndarray);
started on anything else it has no such attribute. Every later call compares the names of
its X with them before anything else happens: other names, missing names or another order
raise ``ValueError``; names on one side only warn (``UserWarning``); column names that mix
strings with other types raise ``TypeError``. The one-example methods take a dict keyed by
feature name as such a table of one row (see ``BudgetClassifier._one_example``).
"""
import inspect

import numpy as np

from ._class_weight import ClassWeightMixin, is_balanced
from ._kernel_args import resolve_gamma
from ._transaction import TransactionMixin, locked
from ._validation import (PLAIN_LABEL, check_array, check_bool, check_feature_names,
                          check_kernel_range, check_known_labels, check_n_features,
                          check_param, check_same_classes, check_sample_weight, check_y,
                          feature_names, label_kinds, new_classes, one_example, plain,
                          row_kernel_ok)
from .calibration import ProbabilityMixin
from .exceptions import _not_fitted_error
from .kernels.kernel import KERNEL_CODES, sq_norm

# names that other modules imported from here before they moved (plain re-exports)
from ._validation import as_kernel_array  # noqa: F401,E402
from ._validation import check_stored_arrays as _check_stored_arrays  # noqa: F401,E402
from ._validation import check_stored_indices as _check_stored_indices  # noqa: F401,E402
from .exceptions import NonNumericError, NotFittedError  # noqa: F401,E402


class BudgetClassifier(TransactionMixin, ClassWeightMixin, ProbabilityMixin):
    """Base class of the fastbudget classifiers (binary unless stated otherwise).

    Subclasses implement ``_validate_params()``, ``_init_state(n_features)``,
    ``_partial_fit_encoded(X, y_pm, sample_weight)`` (``y_pm`` in {-1.0, +1.0}),
    ``_decision(X)``, ``_get_state()`` and ``_set_state(state)``; this class does the rest
    (see the module docstring).

    Every fitted model has ``classes_`` and ``n_features_in_``; one started on a table whose
    column names are all strings (a pandas DataFrame) also has ``feature_names_in_``, an
    object ndarray of those names, and refuses data whose names differ (see the module
    docstring).
    """

    #: True for learners that only handle two classes (scikit-learn tag ``multi_class=False``).
    _binary_only = True
    #: Set True in a subclass whose accuracy on easy problems is expected to be poor
    #: (scikit-learn tag ``poor_score``).
    _poor_score = False
    #: Default of the ``class_weight`` parameter, for subclasses that do not have it.
    class_weight = None
    #: Names of state arrays that may legitimately hold +-inf sentinels (never NaN).
    #: Any other non-finite state value marks a corrupted model: ``save`` and ``load`` refuse it.
    _state_nonfinite_ok = ()

    def _state_may_be_infinite(self, name):
        """Whether the state entry ``name`` may hold +-inf (``_state_nonfinite_ok``); a wrapper
        answers for the learners whose state it holds under other names."""
        return name in self._state_nonfinite_ok

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Library classes register themselves for ``fastbudget.load``; user classes call
        # fastbudget.persist.register_estimator explicitly.
        if cls.__module__.startswith("fastbudget.") and not cls.__name__.startswith("_"):
            from . import persist

            persist.register_estimator(cls)
        # memory_bytes() counts the calibration statistics too (three arrays of
        # calibration.N_BINS float64, allocated when the model starts), added
        # here once for every learner rather than in each learner's closed form
        own = cls.__dict__.get("memory_bytes")
        if own is not None and not getattr(own, "_counts_calibration", False):
            def memory_bytes(self, _own=own):
                stats = self.__dict__.get("_calibration_stats")
                return _own(self) + (0 if stats is None else stats.nbytes)

            memory_bytes.__doc__ = own.__doc__
            memory_bytes.__name__ = own.__name__
            memory_bytes.__qualname__ = own.__qualname__
            memory_bytes._counts_calibration = True
            cls.memory_bytes = memory_bytes

    # ------------------------------------------------------------------ parameters
    @classmethod
    def _get_param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(
            p.name for p in sig.parameters.values()
            if p.name != "self" and p.kind != p.VAR_KEYWORD
        )

    # Hyper-parameters a fitted model keeps. Its state is built from them (sized by the
    # budget, the kernel fixed, TVM's thresholds copied into compiled state), so a change
    # after fitting would be ignored or inconsistent: partial_fit / learn_one refuse it
    # instead, and fit starts over with the new values. ``class_weight`` weighs each chunk as
    # it comes (like sample_weight) and may change between chunks.
    _per_chunk_params = ("class_weight",)

    def __setattr__(self, name, value):
        # marks a fitted model whose hyper-parameters were assigned (set_params or direct),
        # so the one-example fast paths compare them only then
        if "_fitted_params" in self.__dict__ and (
                name in self.__dict__["_fitted_params"] or name in self._per_chunk_params):
            self.__dict__["_params_touched"] = True
        object.__setattr__(self, name, value)

    @staticmethod
    def _param_value(v):
        # nested estimators (OneVsRest's template) are compared by their parameters
        return (type(v), v.get_params(deep=False)) if hasattr(v, "get_params") and not \
            isinstance(v, type) else v

    def _snapshot_params(self):
        self.__dict__["_fitted_params"] = {
            k: self._param_value(getattr(self, k)) for k in self._get_param_names()
            if k not in self._per_chunk_params}
        self.__dict__.pop("_params_touched", None)

    def _check_params_kept(self, doing="partial_fit / learn_one continue that model"):
        """Raise ``ValueError`` when a hyper-parameter differs from the fitted model's
        (``doing``: what the refused call does with the fitted model, for the message)."""
        snap = self.__dict__.get("_fitted_params")
        if snap is None:
            return
        if self.__dict__.get("_params_touched"):
            # the per-chunk ones (and any other) are checked again, before anything changes
            self._validate_common_params()
            self._validate_params()
        for k, old in snap.items():
            new = self._param_value(getattr(self, k))
            if new is old:
                continue
            try:
                same = bool(new == old)
            except Exception:
                same = False
            if not same:
                raise ValueError(
                    f"{type(self).__name__}: {k} was changed from {old!r} to {new!r} after "
                    "the model was fitted. A fitted model keeps the hyper-parameters it was "
                    f"fitted with (its state is built from them), and {doing}: call fit to "
                    f"start a new model with the new {k}, or set it back.")
        self.__dict__.pop("_params_touched", None)

    def get_params(self, deep=True):
        """Parameters of this estimator, as scikit-learn's ``get_params``.

        With ``deep=True`` parameters of nested estimators appear as ``name__param``.
        """
        out = {}
        for k in self._get_param_names():
            v = getattr(self, k)
            if deep and hasattr(v, "get_params") and not isinstance(v, type):
                for kk, vv in v.get_params(deep=True).items():
                    out[f"{k}__{kk}"] = vv
            out[k] = v
        return out

    def set_params(self, **params):
        """Set parameters, as scikit-learn's ``set_params`` (``name__param`` for nested
        estimators); returns self."""
        valid = self._get_param_names()
        nested = {}
        for k, v in params.items():
            key, sep, sub = k.partition("__")
            if key not in valid:
                raise ValueError(
                    f"Invalid parameter {key!r} for {type(self).__name__}; valid ones are {valid}."
                )
            if sep:
                nested.setdefault(key, {})[sub] = v
            else:
                setattr(self, key, v)
        for key, sub_params in nested.items():
            getattr(self, key).set_params(**sub_params)
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
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(
            estimator_type="classifier",
            target_tags=TargetTags(required=True),
            classifier_tags=ClassifierTags(
                multi_class=not getattr(self, "_binary_only", True),
                poor_score=bool(getattr(self, "_poor_score", False)),
            ),
            # sparse input is accepted (each chunk is densified; state stays dense)
            input_tags=InputTags(sparse=True),
        )

    def __sklearn_is_fitted__(self):
        return hasattr(self, "classes_")

    # ------------------------------------------------------------------ helpers
    def _check_fitted(self):
        if not hasattr(self, "classes_"):
            raise _not_fitted_error(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' or "
                "'partial_fit' with training data before using this method."
            )

    def _check_X_names(self, X):
        """Compare the column names of ``X`` with ``feature_names_in_`` (a fitted model),
        as :func:`fastbudget._validation.check_feature_names` does: ``ValueError`` when both
        have names and they differ, ``TypeError`` for mixed-type names, a ``UserWarning``
        when only one side has names. Nothing is modified."""
        check_feature_names(X, self.__dict__.get("feature_names_in_"), type(self).__name__,
                            stacklevel=5)

    def _one_example(self, x):
        """One example ``x`` (a 1-D array-like or a dict ``{feature: value}``) as the X of one
        row that ``partial_fit`` and ``predict`` take; see
        :func:`fastbudget._validation.one_example`. Nothing is modified."""
        return one_example(x, self.__dict__.get("feature_names_in_"))

    @locked
    def learn_one(self, x, y, sample_weight=1.0, classes=None):
        """Learn from a single example: ``partial_fit`` on a chunk of one row, with the same
        model, errors and rollback.

        Parameters
        ----------
        x : array-like of shape (n_features,) or dict
            A dict keyed by feature names is read by name (see ``feature_names_in_`` and
            ``_one_example``); other dicts give their values in their order.
        y : label
        sample_weight : float >= 0, default=1.0
        classes : array-like, optional
            All labels of the stream; needed on the first call (one example shows one
            class), as ``partial_fit``'s.

        Returns
        -------
        self

        Pays Python overhead (and the transactional snapshot) per call; prefer
        ``partial_fit`` on chunks. A fitted binary model given a float64 array ``x`` of its
        width, a plain label and a float weight (``_check_one``) skips ``partial_fit``'s
        general validation, about half of the call's time; anything else takes it.
        """
        one = None if classes is not None else self._check_one(x, y, sample_weight)
        if one is None:
            return self.partial_fit(self._one_example(x), [y], classes=classes,
                                    sample_weight=[sample_weight])
        with self._transaction():
            # (one's weight has class_weight applied; _partial_fit_checked applies it)
            self._partial_fit_checked(one[0], one[1], np.array([sample_weight]))
        return self

    def predict_one(self, x):
        """Predicted label of a single example, given as ``learn_one`` takes it. (A float64
        row of a fitted binary model skips ``predict``'s general validation.)"""
        f = (self._one_row_scored(x) if type(self).predict is BudgetClassifier.predict
             else None)
        if f is None:
            return self.predict(self._one_example(x))[0]
        return self.classes_[int(f[0] > 0)]

    def predict_proba_one(self, x):
        """Class probabilities of one example (given as ``learn_one`` takes it), as a dict
        label -> probability. (A float64 row of a fitted binary model skips
        ``predict_proba``'s general validation.)"""
        f = (self._one_row_scored(x)
             if type(self).predict_proba is ProbabilityMixin.predict_proba else None)
        if f is None:
            return super().predict_proba_one(x)
        p = float(self._calibration()(f)[0])
        return dict(zip(plain(self.classes_.tolist()), (1.0 - p, p)))

    def _kernel_spec(self, X, fresh=False):
        """``(kernel, gamma, degree, coef0)`` of this learner for ``check_kernel_range``,
        with gamma as the learner resolved it (``gamma_``; not when ``fresh``, a new model),
        else as it would resolve it on the chunk ``X`` (gamma None when ``X`` is None); None
        without a kernel parameter."""
        kernel = self.__dict__.get("kernel")
        if not isinstance(kernel, str):
            return None
        try:
            if fresh:
                raise AttributeError("gamma_")
            gamma = float(self.gamma_)
        except Exception:
            gamma = None
            if X is not None:
                try:
                    gamma = float(resolve_gamma(self.gamma, X))
                except (TypeError, ValueError):
                    return None      # a bad gamma: the parameter checks say so
        try:
            return (kernel, gamma, float(self.__dict__.get("degree", 3)),
                    float(self.__dict__.get("coef0", 0.0)))
        except (TypeError, ValueError):
            return None

    def _check_X_predict(self, X):
        self._check_fitted()
        self._check_X_names(X)
        X = check_array(X)
        X = check_kernel_range(X, spec=self._kernel_spec(X))
        check_n_features(X, self.n_features_in_, type(self).__name__)
        return X

    _check_bool = staticmethod(check_bool)
    _check_param = staticmethod(check_param)

    def _validate_common_params(self):
        """Check the hyper-parameters shared by several learners, when present:
        ``budget`` (whole number >= 2), ``C`` (> 0), ``gamma`` (> 0, or None/'scale'/'auto'),
        ``kernel`` (one of ``KERNEL_CODES``)."""
        names = set(self._get_param_names())
        if "budget" in names:
            self._check_param("budget", self.budget, low=2, low_inclusive=True, integer=True)
        if "C" in names:
            self._check_param("C", self.C, low=0)
        if "gamma" in names:
            self._check_param("gamma", self.gamma, low=0, allow=(None, "scale", "auto"))
        if "kernel" in names and (
            not isinstance(self.kernel, str) or self.kernel not in KERNEL_CODES
        ):
            raise ValueError(
                f"Unknown kernel {self.kernel!r}; choose one of {sorted(KERNEL_CODES)}."
            )

    def _validate_params(self):
        """Hook for learner-specific hyper-parameter checks (raise ``ValueError``)."""

    def _gamma_from_data(self):
        """Whether the kernel coefficient is computed from the first chunk: ``gamma='scale'``
        with a kernel that uses gamma (for a wrapper, its template ``estimator``'s)."""
        inner = getattr(self, "estimator", None)
        if isinstance(inner, BudgetClassifier):
            return inner._gamma_from_data()
        g = getattr(self, "gamma", None)
        return isinstance(g, str) and g == "scale" and getattr(self, "kernel", None) != "linear"

    def _check_sample_weight(self, sample_weight, n):
        """``sample_weight`` as float64 ``(n,)``: :func:`fastbudget._validation.check_sample_weight`."""
        return check_sample_weight(sample_weight, n)

    def _encode_y(self, y, cls):
        """Map labels (already checked to lie in ``cls``) to the learner's encoding:
        float64 +1.0 for ``cls[-1]``, -1.0 otherwise."""
        return np.where(y == cls[-1], 1.0, -1.0)

    def _check_Xy(self, X, y, classes=None, reset=False):
        """Validate a training chunk; return (X, y in {-1,+1}, classes).

        ``reset`` starts a new model: classes come from ``classes`` or from ``y`` (the column
        names of ``X``, for ``feature_names_in_``, are read by the caller); otherwise the
        column names of ``X`` are checked against ``feature_names_in_`` first.
        Nothing on ``self`` is modified (the caller commits ``classes_`` after success).
        The whole chunk is checked before anything is learned, and errors name the first
        offending row.
        """
        if not reset:
            self._check_params_kept()
            self._check_X_names(X)
        X = check_array(X)
        X = check_kernel_range(X, spec=self._kernel_spec(X, fresh=reset))
        y = check_y(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels; they must match.")
        if reset:
            cls = new_classes(y, classes, self._binary_only, type(self).__name__)
        else:
            cls = self.classes_
            check_same_classes(classes, cls)
            check_n_features(X, self.n_features_in_, type(self).__name__)
        check_known_labels(y, cls)
        return X, self._encode_y(y, cls), cls

    def _check_one(self, x, y, sample_weight):
        """Validate one example of a fitted binary learner in its plain form, cheaply.

        ``x`` a C-contiguous, writable float64 ndarray of shape ``(n_features_in_,)`` with finite
        values, ``y`` a scalar equal to one of the two ``classes_``, ``sample_weight`` a
        finite non-negative float. Returns the chunk of one row ``partial_fit`` would learn
        from them, ``(X (1, d), y_pm (1,), w (1,))``, the same arrays as ``_check_Xy`` and
        ``_check_sample_weight`` return; or None for anything else (an unfitted or
        multi-class learner, a model with ``feature_names_in_``, whose unnamed input warns,
        other types, bad values), which the general validation then decides on, raising for
        bad input. Nothing is modified.
        """
        cls = self.__dict__.get("classes_")
        if self.__dict__.get("_params_touched"):
            self._check_params_kept()
        if (type(self)._encode_y is not BudgetClassifier._encode_y
                or not isinstance(y, PLAIN_LABEL) or not isinstance(sample_weight, float)
                or not 0.0 <= sample_weight < np.inf):
            return None
        X = self._one_row(x)
        if X is None:
            return None
        # (the squared norm is finite iff every value is and the squares do not overflow,
        # which the general validation refuses too; compiled, it warns of no overflow, and
        # costs a quarter of np.isfinite(x).all() at small d. A label of
        # another type compares unequal to both classes, as do NaN and a continuous value:
        # None, and the general validation says why.)
        if y == cls[-1]:
            y_pm = 1.0
        elif y == cls[0]:
            y_pm = -1.0
        else:
            return None
        if self.class_weight is not None:
            # validated as partial_fit does ('balanced' or a bad value: None, and the general
            # validation raises), once per content of the dict and classes_
            cw = self.class_weight
            cache = self.__dict__.get("_cw_cache")
            try:
                items = tuple(cw.items())
                if cache is None or cache[0] is not cls or cache[1] != items:
                    cache = (cls, items, self._class_weights(cls).tolist())
                    self.__dict__["_cw_cache"] = cache
            except (AttributeError, TypeError, ValueError):
                return None
            sample_weight = sample_weight * cache[2][1 if y_pm > 0.0 else 0]
        return X, np.array([y_pm]), np.array([sample_weight])

    def _one_row(self, x):
        """``x`` as the X of one row (shape (1, d), a view) when it is in the plain form
        ``_check_one`` takes: a fitted binary learner without ``feature_names_in_``, and a
        C-contiguous, writable float64 ndarray of shape ``(n_features_in_,)`` with finite
        values within the kernel's range; None for anything else, which the general
        validation decides on. Nothing is modified."""
        if ("classes_" not in self.__dict__ or not self._binary_only
                or "feature_names_in_" in self.__dict__
                or type(x) is not np.ndarray or x.dtype != np.float64 or x.ndim != 1
                or x.shape[0] != self.n_features_in_ or not x.flags.c_contiguous
                or not x.flags.writeable or not x.flags.aligned
                or not row_kernel_ok(self, sq_norm(x))):
            return None
        return x.reshape(1, -1)

    def _one_row_scored(self, x):
        """The decision value of ``x`` (array of one) when ``_one_row`` takes it and this
        learner scores as ``BudgetClassifier.decision_function`` does; else None."""
        if type(self).decision_function is not BudgetClassifier.decision_function:
            return None
        X = self._one_row(x)
        return None if X is None else self._decision(X)

    # attributes that tools (scikit-learn's callbacks and metadata routing) attach to an
    # estimator from outside; fitting must not remove them
    _FOREIGN_ATTR_PREFIXES = ("_skl", "_parent_callback", "_callback", "_metadata_request", "_sklearn")

    def _reset_fitted(self):
        """Forget the fitted model (keep the hyper-parameters and attributes set by tools)."""
        params = set(self._get_param_names())
        for k in list(self.__dict__):
            if k not in params and not k.startswith(self._FOREIGN_ATTR_PREFIXES):
                del self.__dict__[k]

    def _start(self, classes, n_features, feature_names=None):
        self.classes_ = classes
        self.n_features_in_ = int(n_features)
        if feature_names is None:
            self.__dict__.pop("feature_names_in_", None)
        else:
            self.feature_names_in_ = feature_names
        self._init_state(self.n_features_in_)
        if self._calibrates:
            from .calibration import new_stats

            # allocated with the model, so that its memory does not change along the stream
            self.__dict__["_calibration_stats"] = new_stats()
        self._snapshot_params()

    # ------------------------------------------------------------------ learning
    @locked
    def fit(self, X, y, sample_weight=None):
        """Learn a new model from (X, y) in one pass, forgetting any previous one.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two distinct labels (any number for multi-class estimators).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights, multiplied by ``class_weight`` of each example's class
            (when the learner has that parameter and it is not None); at least one of the
            products must be positive. ``class_weight='balanced'`` is computed on ``y``.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On bad hyper-parameters or bad input; the model is then left as before the call.
        """
        self._validate_common_params()
        self._validate_params()
        names = feature_names(X)
        X, y_enc, cls = self._check_Xy(X, y, reset=True)
        sw = self._check_sample_weight(sample_weight, X.shape[0])
        w, cwv = self._weigh(sw, y_enc, cls, fit=True)
        with self._transaction():
            self._reset_fitted()
            self._start(cls, X.shape[1], names)
            if is_balanced(self.class_weight):
                self._balanced_weights = cwv     # for class_weight_ (and saved with the model)
            # a learner that scores each row before learning it (``_calibration_per_row``)
            # calibrates in fit too
            f = self._calibration_scores(X, True)
            self._learn_encoded(X, y_enc, w)
            if f is not None:
                self._add_calibration(f, y_enc, sw)
        # a one-shot fit keeps no rollback buffer (partial_fit, the streaming call, does:
        # it costs the state's size once, less than the copy per call it replaces)
        self.__dict__.pop("_undo", None)
        return self

    @locked
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Learn one chunk of the stream.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like, optional
            All labels of the stream. Needed on the first call when that chunk does not show
            every class; later calls may omit it (or must repeat the same classes).
        sample_weight : array-like of shape (n_samples,), optional
            Multiplied by a dict ``class_weight`` of each example's class;
            ``class_weight='balanced'`` raises ``ValueError`` here (pass a dict).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            On bad input anywhere in the chunk (the message names the first bad row), bad
            hyper-parameters, or a first chunk of one row with ``gamma='scale'`` (which
            needs several rows to estimate the scale from). Nothing of the chunk is learned
            and the model is left exactly as before the call; the same holds for a numerical
            failure inside the learner.
        """
        first = not self.__sklearn_is_fitted__()
        names = None
        if first:
            self._validate_common_params()
            self._validate_params()
            names = feature_names(X)
        X, y_enc, cls = self._check_Xy(X, y, classes=classes, reset=first)
        if first and X.shape[0] < 2 and self._gamma_from_data():
            raise ValueError(_SCALE_ONE_ROW_MSG.format(name=type(self).__name__))
        sw = self._check_sample_weight(sample_weight, X.shape[0])
        w, _ = self._weigh(sw, y_enc, cls)
        with self._transaction():
            if first:
                self._start(cls, X.shape[1], names)
            f = self._calibration_scores(X, first)
            self._learn_encoded(X, y_enc, w)
            if f is not None:
                self._add_calibration(f, y_enc, sw)
        return self

    def _partial_fit_checked(self, X, y_pm, sample_weight):
        """``partial_fit(X, y_pm, classes=[-1, 1], sample_weight=sample_weight)`` of a
        started binary learner on a chunk that a wrapper has validated (X float64 of the
        model's width, ``y_pm`` in {-1.0, +1.0}, ``sample_weight`` an array), run inside
        the wrapper's transaction, whose snapshot holds this learner's (``_snapshot``): the
        same model without a second validation and a second snapshot."""
        self._check_params_kept()
        w, _ = self._weigh(sample_weight, y_pm, self.classes_)
        f = self._calibration_scores(X, False)
        self._learn_encoded(X, y_pm, w)
        if f is not None:
            self._add_calibration(f, y_pm, sample_weight)

    # ------------------------------------------------------------------ forgetting
    def _learn_encoded(self, X, y_pm, sample_weight):
        """``_partial_fit_encoded``, through the drift detector when the learner has a
        ``forgetting`` parameter that is not None (``fastbudget.forgetting``)."""
        if getattr(self, "forgetting", None) is None:
            self._partial_fit_encoded(X, y_pm, sample_weight)
        else:
            from . import forgetting

            forgetting.learn(self, X, y_pm, sample_weight)

    def _forget_started(self):
        """Whether the model can score an example (``forgetting``: errors are counted
        from then on)."""
        return True

    def _forget_reset(self):
        """Start a new model after a drift: as ``_start`` does, keeping the classes, the
        features and ``gamma_`` (``forgetting``)."""
        gamma = self.__dict__.get("gamma_")
        self._init_state(self.n_features_in_)
        if gamma is not None:
            self.gamma_ = gamma

    # ------------------------------------------------------------------ protocol stubs
    def _get_state(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement _get_state()")

    def _set_state(self, state):
        raise NotImplementedError(f"{type(self).__name__} does not implement _set_state()")

    # ------------------------------------------------------------------ persistence
    def save(self, path):
        """Write the fitted model to ``path`` atomically (format: docs/format.md).

        The file is written under a temporary name beside ``path``, flushed to disk and
        renamed over ``path``: a crash during ``save`` leaves any previous file at ``path``
        intact, and a reader sees the old file or the new one, never a part. The file holds
        arrays and JSON only (no pickle), so loading it cannot run code.

        ``save`` takes no lock: two processes that each load the same file, learn and save
        it lose one update (the later rename wins). Hold
        ``fastbudget.persist.model_lock(path)`` from ``load`` to ``save`` for such a
        read-modify-write, as ``fastbudget update`` does.

        Parameters
        ----------
        path : str or os.PathLike
            Destination; written exactly there (no suffix is added). ``.npz`` is customary.
        """
        from .persist import save_model

        save_model(self, path)

    @classmethod
    def load(cls, path):
        """Load a model written by ``save``; it must be an instance of this class.

        Raises ``fastbudget.persist.ModelFormatError`` (a ``ValueError``) for a damaged,
        foreign or newer-format file.
        """
        from .persist import load_model

        return load_model(path, expected_class=cls)

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
        """Mean accuracy on (X, y), weighted by ``sample_weight``, as scikit-learn's
        ``accuracy_score``: one label per row of X (a column vector is raveled with a
        warning, as in ``fit``); a label not in ``classes_`` counts as a miss, but labels of
        another kind (text for a model fitted on numbers, or numbers for text) raise
        ``ValueError``, as there."""
        y = check_y(y)
        pred = self.predict(X)
        if y.shape[0] != pred.shape[0]:
            raise ValueError(
                f"X has {pred.shape[0]} rows but y has {y.shape[0]} labels; pass one label per "
                "row of X.")
        y_kinds, fitted_kinds = label_kinds(y), label_kinds(self.classes_)
        if y_kinds != fitted_kinds:
            hint = (" (e.g. y.astype(int) for numbers read as text)"
                    if y_kinds == {"text"} and fitted_kinds == {"number"} else "")
            raise ValueError(
                f"Mix of label input types (string and number): y has "
                f"{' and '.join(sorted(y_kinds))} labels but the model's classes_ are "
                f"{' and '.join(sorted(fitted_kinds))} ({plain(self.classes_[:5].tolist())!r}), "
                f"so no label could match. Pass labels of the kind the model was fitted "
                f"with{hint}.")
        hit = pred == y
        if sample_weight is None:
            return float(np.mean(hit))
        w = self._check_sample_weight(sample_weight, y.shape[0])
        if not w.sum() > 0.0:
            raise ValueError("sample_weight sums to 0: give some example a positive weight.")
        return float(np.sum(w * hit) / np.sum(w))


_SCALE_ONE_ROW_MSG = (
    "{name} with gamma='scale' computes the kernel coefficient 1 / (n_features * X.var()) "
    "from its first chunk, but this first chunk has a single row: the variance "
    "would be that of one example's feature values, not of the data. Pass a number for "
    "gamma (e.g. 1 / (n_features * X_sample.var()) on a sample of the stream), or start "
    "the model with a chunk of many rows (fastbudget.RiverClassifier buffers its warm_up "
    "examples for this).")
