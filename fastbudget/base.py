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

Feature names follow scikit-learn. A model started (``fit``, or the first ``partial_fit``) on
a table whose column names are all strings (a pandas DataFrame; anything with a ``columns``
attribute, pandas is never imported) records them in ``feature_names_in_`` (object ndarray);
started on anything else it has no such attribute. Every later call compares the names of
its X with them before anything else happens: other names, missing names or another order
raise ``ValueError``; names on one side only warn (``UserWarning``); column names that mix
strings with other types raise ``TypeError``. The one-example methods take a dict keyed by
feature name as such a table of one row (see ``BudgetClassifier._one_example``).
"""
import contextlib
import copy
import inspect
import math
import numbers
import operator
import sys
import warnings
from collections.abc import Mapping

import numpy as np

from .kernels.kernel import KERNEL_CODES, sq_norm


class NotFittedError(ValueError, AttributeError):
    """Raised when a model is used before it was fitted (same bases as scikit-learn's).

    When scikit-learn is already imported, the error raised is also an instance of
    ``sklearn.exceptions.NotFittedError`` (scikit-learn stays optional).
    """


class NonNumericError(TypeError, ValueError):
    """Raised for non-numeric input; both a ``TypeError`` (as NumPy and scikit-learn raise)
    and a ``ValueError`` (as every other input error of fastbudget)."""


_SKLEARN_NOT_FITTED = []


def _not_fitted_error(msg):
    """A NotFittedError that is also scikit-learn's, when scikit-learn is loaded."""
    if "sklearn" in sys.modules:
        if not _SKLEARN_NOT_FITTED:
            try:
                from sklearn.exceptions import NotFittedError as SkNFE

                _SKLEARN_NOT_FITTED.append(type("NotFittedError", (NotFittedError, SkNFE), {
                    "__module__": __name__, "__doc__": NotFittedError.__doc__}))
            except Exception:  # pragma: no cover - broken sklearn install
                _SKLEARN_NOT_FITTED.append(NotFittedError)
        return _SKLEARN_NOT_FITTED[0](msg)
    return NotFittedError(msg)


def _data_conversion_warning():
    if "sklearn" in sys.modules:
        try:
            from sklearn.exceptions import DataConversionWarning

            return DataConversionWarning
        except Exception:  # pragma: no cover
            pass
    return UserWarning


def as_kernel_array(a, dtype):
    """``a`` as the one array layout the compiled kernels are built for: ``dtype``
    (float64 or int64), C-contiguous, aligned and writable. Returns ``a`` itself when it
    already is, else a copy.

    Numba compiles a function once per type of its arguments, and an array's type includes
    its layout and whether it is writable: a read-only array (``np.load(mmap_mode='r')``,
    ``np.frombuffer``, a view pandas returns), a strided view or a float32 array would each
    compile every kernel it reaches again (seconds to a minute). Every array handed to
    ``fastbudget.kernels`` goes through here first.
    """
    return np.require(a, dtype, ("C", "A", "W"))


def check_array(X, *, name="X", allow_empty=False):
    """Validate a 2-D numeric array and return it as float64, C-contiguous and writable
    (``as_kernel_array``: a copy unless ``X`` already is one).

    Raises ``ValueError`` with a message that says what to do for 1-D input, empty input,
    non-numeric data, NaN or infinity.
    """
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):  # scipy.sparse
        X = X.toarray()
    if hasattr(X, "to_numpy") and hasattr(X, "dtypes"):
        # a pandas table: nullable columns (Int64, Float64, boolean) hold pd.NA, which
        # becomes NaN here, so the NaN check below names its row and column
        try:
            X = X.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            pass                      # text columns: refused below as non-numeric
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and similar
        raise ValueError(f"{name} could not be converted to a numeric array: {exc}") from None
    if arr.dtype.kind == "c" or (
        arr.dtype.kind == "O" and any(isinstance(v, complex) for v in arr.ravel()[:1000])
    ):
        raise ValueError(
            f"Complex data not supported in {name}: pass the real part, the modulus or both "
            "as separate real columns."
        )
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise NonNumericError(
                f"{name} must be numeric; got dtype {arr.dtype} ({exc}). Encode categorical or "
                "text columns as numbers first."
            ) from None
    if arr.ndim == 1:
        raise ValueError(
            f"Expected a 2-D array for {name}, got a 1-D array of shape {arr.shape}. Reshape your "
            "data with X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single example."
        )
    if arr.ndim != 2:
        raise ValueError(f"Expected a 2-D array for {name}, got {arr.ndim} dimensions.")
    if not allow_empty and arr.shape[0] == 0:
        raise ValueError(
            f"{name} is empty: 0 sample(s) (shape={arr.shape}) while a minimum of 1 is "
            "required. Pass at least one example."
        )
    if not allow_empty and arr.shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required. "
            "Pass at least one feature column."
        )
    arr = as_kernel_array(arr, np.float64)
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or infinity (first at row {bad[0]}, column {bad[1]}). "
            "Remove or impute those values before calling this method."
        )
    return arr


# Largest value a row's kernel with itself may reach (and, for RBF and linear kernels, its
# squared norm): by Cauchy-Schwarz |K(x, z)| <= max(K(x, x), K(z, z)) for the linear and the
# polynomial kernel (|gamma <x, z> + coef0| <= gamma |x| |z| + |coef0|), so the kernel values
# between accepted rows, and the products of two of them that the solvers form, stay finite.
KERNEL_LIMIT = 1e150


def _check_kernel_range(X, name="X", spec=None):
    """``X`` (validated by ``check_array``) unless a row's squared norm overflows float64
    (values beyond about 1e154) or exceeds ``KERNEL_LIMIT``, or, for ``spec = (kernel,
    gamma, degree, coef0)`` of a polynomial kernel, unless a row's kernel bound
    ``(gamma |x|^2 + |coef0|)^degree`` exceeds ``KERNEL_LIMIT``: a kernel of such a row is
    infinite or NaN (or its products are) and would poison the model. Raises ``ValueError``
    saying to rescale."""
    with np.errstate(over="ignore"):
        sq = np.einsum("ij,ij->i", X, X)
    if not np.isfinite(sq).all():
        i = int(np.argmax(~np.isfinite(sq)))
        raise ValueError(
            f"{name} has values too large for a kernel (row {i}: its squared norm overflows "
            f"float64; largest |value| {np.abs(X[i]).max():.3g}). Rescale the features, e.g. "
            "standardise them.")
    what = "its squared norm"
    bound = sq
    if spec is not None and spec[0] == "poly":
        kernel, gamma, degree, coef0 = spec
        with np.errstate(over="ignore", invalid="ignore"):
            bound = (gamma * sq + abs(coef0)) ** degree
        what = f"its polynomial kernel bound (gamma |x|^2 + |coef0|)^degree"
    bad = ~(bound <= KERNEL_LIMIT)
    if bad.any():
        i = int(np.argmax(bad))
        hint = " (or lower gamma, coef0 or degree)" if bound is not sq else ""
        raise ValueError(
            f"{name} has values too large for a kernel (row {i}: {what} is {bound[i]:.3g}, "
            f"beyond {KERNEL_LIMIT:.0e}, so kernel values would overflow float64; largest "
            f"|value| {np.abs(X[i]).max():.3g}). Rescale the features, e.g. standardise "
            f"them{hint}.")
    return X


def _row_kernel_ok(est, sq):
    """``_poly_bound_ok`` for one row of ``est`` (cheap unless its kernel is polynomial)."""
    if est.__dict__.get("kernel") != "poly":
        return sq <= KERNEL_LIMIT
    return _poly_bound_ok(est._kernel_spec(None), sq)


def _poly_bound_ok(spec, sq):
    """Whether one row of squared norm ``sq`` passes ``_check_kernel_range`` for ``spec``."""
    if not sq <= KERNEL_LIMIT:
        return False
    if spec is None or spec[0] != "poly":
        return True
    _, gamma, degree, coef0 = spec
    if gamma is None:
        return False
    try:
        return (gamma * sq + abs(coef0)) ** degree <= KERNEL_LIMIT
    except OverflowError:
        return False


def _sv_by_class(idx, positive):
    """Support vectors laid out as scikit-learn's ``SVC`` lays out a binary model: ``idx``
    reordered with those of ``classes_[0]`` (``positive`` False) first, then those of
    ``classes_[1]``, each group in storage order; and ``n_support_``, the two counts
    (int32, shape (2,))."""
    idx = np.asarray(idx)
    positive = np.asarray(positive, dtype=bool)
    order = np.concatenate([idx[~positive], idx[positive]])
    n_pos = int(np.count_nonzero(positive))
    return order, np.array([positive.size - n_pos, n_pos], dtype=np.int32)


def _check_stored_arrays(state, prefix, reference, what, holder):
    """For ``persist.load``: raise ``ValueError`` unless every array ``state[prefix + name]``
    present has the dtype and shape of ``reference[name]`` (the arrays a fresh model of
    these parameters allocates; ``holder`` names that model in the message)."""
    for name, want in reference.items():
        got = state.get(prefix + name)
        if got is None:                 # absent: left to _set_state
            continue
        if not isinstance(got, np.ndarray) or got.dtype != want.dtype or got.shape != want.shape:
            raise ValueError(
                f"{what} {name!r} is {getattr(got, 'dtype', type(got).__name__)} of shape "
                f"{np.shape(got)}; {holder} holds {want.dtype} of shape {want.shape}")


def _check_stored_indices(state, prefix, names, n, what):
    """For ``persist.load``: raise ``ValueError`` unless the index arrays
    ``state[prefix + name]`` hold only -1 (none) and indices in [0, n)."""
    for name in names:
        a = state.get(prefix + name)
        if a is not None and a.size and (a.min() < -1 or a.max() >= n):
            raise ValueError(f"{what} {name!r} holds an index outside [-1, {n})")


def _feature_names(X):
    """Column names of a table ``X`` as an object ndarray, or None.

    A table is anything with a ``columns`` attribute (a pandas or polars DataFrame; pandas is
    never imported). Its names count only when every one is a string, as in scikit-learn:
    numbers as names (``pandas.DataFrame(array)`` gives 0, 1, ...) or no columns give None.
    Raises ``TypeError`` when strings are mixed with names of other types.
    """
    if isinstance(X, np.ndarray) or not hasattr(X, "columns"):
        return None
    try:
        cols = list(X.columns)
    except TypeError:
        return None
    is_str = [isinstance(c, str) for c in cols]
    if not cols or not any(is_str):
        return None
    if not all(is_str):
        kinds = sorted({type(c).__name__ for c in cols})
        raise TypeError(
            f"The column names of X mix strings with other types ({', '.join(kinds)}). "
            "Feature names are recorded and checked only when every column name is a string: "
            "convert them all, e.g. X.columns = X.columns.astype(str), or give every column a "
            "non-string name (or pass a NumPy array) to go without feature names.")
    names = np.empty(len(cols), dtype=object)
    names[:] = cols
    return names


def _name_list(names, limit=5):
    """Lines ``- name`` for a message, at most ``limit`` of them, then how many more."""
    lines = [f"- {n}\n" for n in names[:limit]]
    if len(names) > limit:
        lines.append(f"- ... ({len(names) - limit} more)\n")
    return "".join(lines)


class _NamedTable:
    """Rows with column names, as a table: the ``columns`` and ``__array__`` that the
    validation of X reads (one example given as a dict ``{feature name: value}``)."""

    __slots__ = ("columns", "_rows")

    def __init__(self, columns, rows):
        self.columns = columns
        self._rows = rows

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._rows, dtype=dtype)


class BudgetClassifier:
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

    def _check_params_kept(self):
        """Raise ``ValueError`` when a hyper-parameter differs from the fitted model's."""
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
                    "fitted with (its state is built from them), and partial_fit / learn_one "
                    f"continue that model: call fit to start a new model with the new {k}, "
                    "or set it back.")
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
        """Compare the column names of ``X`` with ``feature_names_in_`` (a fitted model).

        Raises ``ValueError`` when both have names and they differ (other names, missing ones,
        another order) and ``TypeError`` for mixed-type names; warns (``UserWarning``) when
        only one side has names. Nothing is modified. The ``ValueError`` starts with the lines
        scikit-learn's own check (``check_dataframe_column_names_consistency``) matches.
        """
        fitted = self.__dict__.get("feature_names_in_")
        names = _feature_names(X)
        if fitted is None and names is None:
            return
        name = type(self).__name__
        if fitted is None:
            warnings.warn(
                f"This X has column names, but {name} was trained on data without them; its "
                "columns are used by position, so they must come in the training data's order.",
                UserWarning, stacklevel=4)
            return
        if names is None:
            warnings.warn(
                f"This X has no column names, but {name} was trained on named columns "
                "(feature_names_in_); its columns are taken by position as those, in that "
                "order. Pass a DataFrame with those column names to have them checked.",
                UserWarning, stacklevel=4)
            return
        if names.shape == fitted.shape and (names == fitted).all():
            return
        seen = set(fitted.tolist())
        given = set(names.tolist())
        unseen = sorted(given - seen)
        missing = sorted(seen - given)
        msg = "The feature names should match those that were passed during fit.\n"
        if unseen:
            msg += "Feature names unseen at fit time:\n" + _name_list(unseen)
        if missing:
            msg += "Feature names seen at fit time, yet now missing:\n" + _name_list(missing)
        if not unseen and not missing:
            msg += "Feature names must be in the same order as they were in fit.\n"
        raise ValueError(
            msg + f"{name} was fitted on the columns in feature_names_in_ and reads the "
            "columns of X by position: select and order them as there, e.g. "
            "X[model.feature_names_in_] for a pandas DataFrame (a dict example needs "
            "exactly those keys).")

    def _one_example(self, x):
        """One example ``x`` as the X of one row that ``partial_fit`` and ``predict`` take.

        ``x`` is a 1-D array-like or a dict ``{feature: value}``. A dict whose keys are all
        strings is a table of one row named by its keys: a model started on it records them
        as ``feature_names_in_``, and a model with ``feature_names_in_`` reads the values of
        those keys in its own order (the order of a dict does not matter then; a key missing
        or unknown raises ``ValueError`` as other names do). The values of any other dict
        are taken in the dict's order. A one-dimensional table row with an index (a pandas
        Series, e.g. ``df.iloc[i]``) is the dict of its index and values. Nothing is
        modified.
        """
        if (not isinstance(x, (Mapping, np.ndarray)) and getattr(x, "ndim", None) == 1
                and hasattr(x, "index") and hasattr(x, "to_dict")):
            d = x.to_dict()
            if len(d) == len(x):        # (a repeated index label cannot name a feature)
                x = d
        if isinstance(x, Mapping):
            keys = list(x)
            if keys and all(isinstance(k, str) for k in keys):
                fitted = self.__dict__.get("feature_names_in_")
                if (fitted is not None and len(keys) == len(fitted)
                        and set(keys) == set(fitted.tolist())):
                    keys = fitted.tolist()
                return _NamedTable(keys, [[x[k] for k in keys]])
            x = list(x.values())
        x = np.asarray(x, dtype=np.float64)
        if not (x.ndim == 1 or (x.ndim == 2 and x.shape[0] == 1)):   # a (1, d) row is one too
            raise ValueError(
                f"Expected one example as a 1-D array-like or a dict of features; got an array "
                f"of shape {x.shape}. Use partial_fit / predict for several rows.")
        return x.reshape(1, -1)

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
        ``partial_fit`` on chunks.
        """
        return self.partial_fit(self._one_example(x), [y], classes=classes,
                                sample_weight=[sample_weight])

    def predict_one(self, x):
        """Predicted label of a single example, given as ``learn_one`` takes it."""
        return self.predict(self._one_example(x))[0]

    def _kernel_spec(self, X, fresh=False):
        """``(kernel, gamma, degree, coef0)`` of this learner for ``_check_kernel_range``,
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
                from .engine import resolve_gamma
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
        X = _check_kernel_range(X, spec=self._kernel_spec(X))
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input. Pass data with the same columns as "
                "in training."
            )
        return X

    @staticmethod
    def _check_bool(name, value):
        """Raise ``ValueError`` unless ``value`` is True or False (a string such as 'False'
        would otherwise count as true)."""
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False; got {value!r}.")

    @staticmethod
    def _check_param(name, value, *, low=None, low_inclusive=False, integer=False, allow=()):
        if value in allow if isinstance(value, (str, type(None))) else False:
            return
        kind = numbers.Integral if integer else numbers.Real
        if isinstance(value, bool) or not isinstance(value, kind):
            also = f" or one of {', '.join(map(repr, allow))}" if allow else ""
            raise ValueError(
                f"{name} must be a {'whole' if integer else 'real'} number{also}; got {value!r}.")
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite; got {value!r}.")
        if low is not None:
            if (value < low) if low_inclusive else (value <= low):
                op = ">=" if low_inclusive else ">"
                raise ValueError(f"{name} must be {op} {low}; got {value!r}.")

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
        if sample_weight is None:
            return np.ones(n)
        try:
            w = np.asarray(sample_weight, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError("sample_weight must be numeric (one non-negative weight per example).") from None
        if w.ndim == 0:
            w = np.full(n, float(w))
        if w.shape != (n,):
            raise ValueError(f"sample_weight has shape {w.shape}; expected ({n},), one weight per example.")
        if not np.isfinite(w).all() or (w < 0).any():
            raise ValueError("sample_weight must be finite and non-negative.")
        return as_kernel_array(w, np.float64)

    # ------------------------------------------------------------------ class weights
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
                f"class_weight has label(s) {_plain(bad)!r} that are not among the classes "
                f"{cls.tolist()!r}; use the labels of y as keys.")
        out = np.ones(len(cls))
        for k, v in cw.items():
            if (isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real)
                    or not math.isfinite(v) or v < 0):
                raise ValueError(
                    f"class_weight[{_plain([k])[0]!r}] must be a finite non-negative number; "
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
            raise ValueError(_BALANCED_STREAMING_MSG.format(name=type(self).__name__))

    def _unit_weights_check(self, cls, out):
        if getattr(self, "_unit_weights_only", False) and (out != 1.0).any():
            raise ValueError(
                f"{type(self).__name__} does not support example weights, so class_weight "
                f"can only give weight 1 to every class (got {_plain(cls.tolist())!r} -> "
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
        if _is_balanced(self.class_weight):
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
        X = _check_kernel_range(X, spec=self._kernel_spec(X, fresh=reset))
        y = _check_y(y)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels; they must match.")
        if reset:
            if classes is not None:
                cls = _unique_labels(_check_y(classes, name="classes"))
            else:
                cls = _unique_labels(y)
            if cls.shape[0] > 2 and self._binary_only:
                raise ValueError(
                    f"Only binary classification is supported by {type(self).__name__}, but got "
                    f"{cls.shape[0]} classes ({str(cls[:5].tolist())[1:-1]}"
                    f"{', ...' if cls.shape[0] > 5 else ''}). Wrap it in "
                    "fastbudget.OneVsRestClassifier for multi-class problems."
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
            if classes is not None and not np.array_equal(
                _unique_labels(_check_y(classes, name="classes")), cls
            ):
                raise ValueError(
                    f"classes={list(classes)} differs from the classes of the first call "
                    f"{cls.tolist()}; pass the same classes (or none) on later calls."
                )
            if X.shape[1] != n_features:
                raise ValueError(
                    f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                    f"{n_features} features as input. Pass data with the same columns as in "
                    "training."
                )
        try:
            unseen = ~np.isin(y, cls)
        except TypeError:
            unseen = np.array([not any(v == c for c in cls.tolist()) for v in y.tolist()])
        if unseen.any():
            raise ValueError(
                f"y contains label {_plain(y[unseen][:1].tolist())[0]!r} (row {int(np.argmax(unseen))}) not among the "
                f"classes {cls.tolist()}; pass all labels with classes= on the first partial_fit."
            )
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
        if (cls is None or not self._binary_only or "feature_names_in_" in self.__dict__
                or type(self)._encode_y is not BudgetClassifier._encode_y
                or type(x) is not np.ndarray or x.dtype != np.float64 or x.ndim != 1
                or x.shape[0] != self.n_features_in_ or not x.flags.c_contiguous
                or not x.flags.writeable or not x.flags.aligned
                or not isinstance(y, _PLAIN_LABEL) or not isinstance(sample_weight, float)
                or not 0.0 <= sample_weight < np.inf
                or not _row_kernel_ok(self, sq_norm(x))):
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
        return x.reshape(1, -1), np.array([y_pm]), np.array([sample_weight])

    # ------------------------------------------------------------------ transactions
    def _state_arrays(self):
        """The arrays holding the fitted state, not copied, or None (not exposed).

        A learner that lists them (all of ``_get_state()``'s arrays) gets the cheap rollback
        of ``_transaction``: they are copied into an undo buffer of the same shapes,
        allocated once, instead of a fresh copy of ``_get_state()`` per call (which at the
        sizes of a budget allocates, and page-faults, the whole state on every call).
        """
        return None

    def _undo_copy(self, live, to_live=False):
        """Copy ``live`` (``_state_arrays()``) into the undo buffer, or back (``to_live``)."""
        undo = self.__dict__.get("_undo")
        if undo is None or len(undo[0]) != len(live) or not all(map(operator.is_, live, undo[0])):
            if to_live:
                raise RuntimeError("no snapshot to roll back to")
            undo = (list(live), [np.empty_like(a) for a in live])
            self.__dict__["_undo"] = undo
        # (slice assignment, not np.copyto: the same copy at half the call overhead, which
        # is most of the cost for the dozens of small state arrays)
        if to_live:
            for a, u in zip(*undo):
                a[...] = u
        else:
            for a, u in zip(*undo):
                u[...] = a

    def _save_undo(self):
        """Save what :meth:`_rollback` needs to put the fitted state back as it is now, and
        return it (any object), or None when the learner has no cheap undo: the transaction
        then copies ``_get_state()``. By default the arrays of ``_state_arrays()`` are copied
        into the undo buffer; a learner whose updates touch a known part of a large state
        overrides this pair (``IncrementalSVC``: the engine's light snapshot)."""
        live = self._state_arrays()
        if live is None:
            return None
        self._undo_copy(live)
        return True

    def _rollback(self, saved=True):
        """Put the state back as :meth:`_save_undo` found it (in place); ``saved`` is what
        it returned (unused here: the undo buffer holds it)."""
        self._undo_copy(self._state_arrays(), to_live=True)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_undo", None)       # the rollback buffer is not part of the model
        state.pop("_undo_piece", None)  # (nor forgetting's second one)
        state.pop("_cw_cache", None)   # nor _check_one's cache of the class weights
        return state

    def _snapshot(self):
        """Everything needed to undo the next update (see ``_transaction``)."""
        if not self.__sklearn_is_fitted__():
            return dict(self.__dict__), None, False
        saved = self._save_undo()          # (first, so that the attributes hold the buffer)
        if saved is not None:
            return dict(self.__dict__), _Undo(saved), False
        attrs = dict(self.__dict__)
        try:
            state = self._get_state()
        except NotImplementedError:
            return attrs, copy.deepcopy(attrs), True
        return attrs, _copy_state(state), False

    def _restore(self, snap):
        attrs, state, whole = snap
        self.__dict__.clear()
        if whole:
            self.__dict__.update(state)
            return
        self.__dict__.update(attrs)
        if isinstance(state, _Undo):
            self._rollback(state.saved)
        elif state is not None:
            self._set_state(state)

    @contextlib.contextmanager
    def _transaction(self):
        """Run an update so that any exception leaves the model exactly as before.

        Snapshots the attribute bindings and the state: into a buffer allocated once when the
        learner exposes ``_state_arrays()``, else as a copy of ``_get_state()`` (cost: one
        copy of the budget-sized state); on an exception (including ``KeyboardInterrupt``)
        restores them and re-raises.
        """
        snap = self._snapshot()
        try:
            yield
        except BaseException:
            self._restore(snap)
            raise

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
        names = _feature_names(X)
        X, y_enc, cls = self._check_Xy(X, y, reset=True)
        sw = self._check_sample_weight(sample_weight, X.shape[0])
        w, cwv = self._weigh(sw, y_enc, cls, fit=True)
        with self._transaction():
            self._reset_fitted()
            self._start(cls, X.shape[1], names)
            if _is_balanced(self.class_weight):
                self._balanced_weights = cwv     # for class_weight_ (and saved with the model)
            self._learn_encoded(X, y_enc, w)
        # a one-shot fit keeps no rollback buffer (partial_fit, the streaming call, does:
        # it costs the state's size once, less than the copy per call it replaces)
        self.__dict__.pop("_undo", None)
        return self

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
            names = _feature_names(X)
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

    # ------------------------------------------------------------------ probabilities
    #: whether this learner keeps an online calibration map (binary learners; a wrapper's
    #: learners keep their own)
    _calibrates = True

    def _calibration_scores(self, X, first):
        """Decision values of a validated chunk under the model as it is, before it learns
        the chunk, for the calibration statistics (``fastbudget.calibration``); None when
        there is nothing to score (a first chunk: the model knows nothing yet) or the
        model keeps no map (a wrapper: its learners keep theirs). The caller learns the
        chunk, then passes them to ``_add_calibration`` (called inline rather than through
        a helper, so that the learners' warnings keep pointing at the user's call)."""
        if first or not self._calibrates:
            return None
        return self._decision(X)

    def _add_calibration(self, f, y_pm, raw_weight):
        """Add examples' decision values (taken before they were learned) to the
        calibration statistics. ``raw_weight`` is ``sample_weight`` before class weights.
        The statistics are replaced, never modified in place, so a transaction that fails
        puts the old ones back."""
        from . import calibration

        stats = self.__dict__.get("_calibration_stats")
        if len(f) == 1:
            new = calibration.update_one(stats, float(f[0]), float(y_pm[0]), float(raw_weight[0]))
        else:
            new = calibration.update_stats(stats, f, y_pm, raw_weight)
        self.__dict__["_calibration_stats"] = new

    def _calibration(self):
        """The calibration map of the current statistics (cached by
        ``fastbudget.calibration.map_for`` until they change)."""
        from .calibration import map_for

        return map_for(self.__dict__.get("_calibration_stats"))

    @property
    def calibration_counts_(self):
        """Total weight of the examples the calibration map was fitted on (scored before
        they were learned); 0.0 for a model that has learned a single chunk."""
        self._check_fitted()
        stats = self.__dict__.get("_calibration_stats")
        return 0.0 if stats is None else float(stats[0].sum())

    def predict_proba(self, X):
        """Calibrated class probabilities.

        The map from decision values to probabilities is fitted online, on the decision
        values of examples taken *before* the model learned them (see
        ``fastbudget.calibration``): every ``partial_fit`` / ``learn_one`` after the first
        chunk adds to it (a model fitted with a single ``fit`` call has only the sigmoid of
        its decision values). It is monotone, so probabilities rank examples as
        ``decision_function`` does, and ``predict_proba(X).argmax(1)`` is ``predict(X)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2), float64
            Columns in the order of ``classes_``; rows sum to 1.

        Raises
        ------
        NotFittedError
            Before ``fit`` / ``partial_fit``.
        """
        p = self._calibration()(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict_log_proba(self, X):
        """Logarithm of ``predict_proba(X)``."""
        return np.log(self.predict_proba(X))

    def predict_proba_one(self, x):
        """Class probabilities of one example (given as ``learn_one`` takes it), as a dict
        label -> probability."""
        p = self.predict_proba(self._one_example(x))[0]
        return {c: float(v) for c, v in zip(_plain(self.classes_.tolist()), p)}

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
        y = _check_y(y)
        pred = self.predict(X)
        if y.shape[0] != pred.shape[0]:
            raise ValueError(
                f"X has {pred.shape[0]} rows but y has {y.shape[0]} labels; pass one label per "
                "row of X.")
        y_kinds, fitted_kinds = _label_kinds(y), _label_kinds(self.classes_)
        if y_kinds != fitted_kinds:
            hint = (" (e.g. y.astype(int) for numbers read as text)"
                    if y_kinds == {"text"} and fitted_kinds == {"number"} else "")
            raise ValueError(
                f"Mix of label input types (string and number): y has "
                f"{' and '.join(sorted(y_kinds))} labels but the model's classes_ are "
                f"{' and '.join(sorted(fitted_kinds))} ({_plain(self.classes_[:5].tolist())!r}), "
                f"so no label could match. Pass labels of the kind the model was fitted "
                f"with{hint}.")
        hit = pred == y
        if sample_weight is None:
            return float(np.mean(hit))
        w = self._check_sample_weight(sample_weight, y.shape[0])
        if not w.sum() > 0.0:
            raise ValueError("sample_weight sums to 0: give some example a positive weight.")
        return float(np.sum(w * hit) / np.sum(w))


class _Undo:
    """What ``_save_undo`` returned, marked as such in a transaction's snapshot."""
    __slots__ = ("saved",)

    def __init__(self, saved):
        self.saved = saved


_BALANCED_STREAMING_MSG = (
    "class_weight='balanced' is not supported by {name}.partial_fit and learn_one: the class "
    "frequencies of a stream are not known in advance. Compute the weights on a "
    "representative sample of the labels, e.g. sklearn.utils.class_weight."
    "compute_class_weight('balanced', classes=classes, y=y_sample) or, with numpy, "
    "len(y_sample) / (n_classes * np.bincount(...)), and pass them as a dict "
    "class_weight={{label: weight, ...}}; or use fit, which computes 'balanced' on its data.")


_SCALE_ONE_ROW_MSG = (
    "{name} with gamma='scale' computes the kernel coefficient 1 / (n_features * X.var()) "
    "from its first chunk, but this first chunk has a single row: the variance "
    "would be that of one example's feature values, not of the data. Pass a number for "
    "gamma (e.g. 1 / (n_features * X_sample.var()) on a sample of the stream), or start "
    "the model with a chunk of many rows (fastbudget.RiverClassifier buffers its warm_up "
    "examples for this).")


def _is_balanced(class_weight):
    return isinstance(class_weight, str) and class_weight == "balanced"


def _plain(values):
    """Labels as plain Python values for messages (numpy scalars unwrapped)."""
    return [v.item() if isinstance(v, np.generic) else v for v in values]


# scalar labels that ``_check_one`` compares with the classes itself
_PLAIN_LABEL = (int, float, str, np.integer, np.floating, np.bool_, np.str_)


def _label_kinds(labels):
    """The kinds of the labels of an array, ``{'text'}``, ``{'number'}`` or both (an object
    array of mixed labels), as scikit-learn's ``unique_labels`` tells strings from the rest."""
    kind = labels.dtype.kind
    if kind in "US":
        return {"text"}
    if kind != "O":
        return {"number"}
    return {"text" if isinstance(v, str) else "number" for v in labels.ravel().tolist()}


def _copy_state(state):
    """Deep copy of a state dict (arrays copied, JSON values deep-copied)."""
    out = {}
    for k, v in state.items():
        out[k] = np.array(v, copy=True) if isinstance(v, np.ndarray) else copy.deepcopy(v)
    return out


def _check_y(y, *, name="y"):
    """Return labels as a 1-D array; refuse NaN/inf, continuous targets, 2-D targets."""
    if y is None:
        raise ValueError(
            f"This classifier requires y to be passed, but the target y is None. Pass one label "
            "per row of X."
        )
    if hasattr(y, "toarray") and not isinstance(y, np.ndarray):
        y = y.toarray()
    try:
        y = np.asarray(y)
    except Exception as exc:
        raise ValueError(f"{name} could not be converted to an array of labels: {exc}") from None
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            f"A column-vector {name} was passed when a 1d array was expected; it was raveled. "
            "Pass y.ravel() to avoid this warning.",
            _data_conversion_warning(),
            stacklevel=4,
        )
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one label per row); got shape {y.shape}.")
    if y.dtype.kind == "c":
        raise ValueError(f"Complex data not supported in {name}; labels must be integers or strings.")
    if y.dtype.kind == "f":
        bad = ~np.isfinite(y)
        if bad.any():
            raise ValueError(
                f"Input {name} contains NaN or infinity (first at row {int(np.argmax(bad))}); "
                "every example needs a finite label."
            )
        if y.size and (y != np.round(y)).any():
            raise ValueError(
                f"Unknown label type: continuous values in {name} (e.g. {y[y != np.round(y)][0]!r}). "
                "A classifier needs discrete labels; for regression use a regressor."
            )
    if y.dtype.kind == "O":
        for i, v in enumerate(y.tolist()):
            if v is None or (isinstance(v, float) and not np.isfinite(v)):
                raise ValueError(f"Input {name} contains a missing label (NaN/None) at row {i}.")
    return y


def _unique_labels(y):
    try:
        return np.unique(y)
    except TypeError:
        raise ValueError(
            "Labels mix types that cannot be ordered (e.g. numbers and strings); use one type."
        ) from None
