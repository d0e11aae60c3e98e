"""Input checks of the estimators: arrays, labels, weights, feature names, hyper-parameters.

Every check says what was wrong and what to do, and modifies nothing: the estimators run
them before a transaction starts (see :mod:`fastbudget._transaction`), so bad input leaves a
model exactly as it was. Only NumPy and the standard library are imported (no Numba), so
the checks of prediction input that ``fastbudget.serving`` runs with NumPy alone
(``fastbudget._inputcheck``) are these same functions.
"""
import numbers
import warnings
from collections.abc import Mapping

import numpy as np

from .exceptions import NonNumericError, _data_conversion_warning


def as_kernel_array(a, dtype):
    """``a`` in the one array layout the compiled kernels are built for.

    Numba compiles a function once per type of its arguments, and an array's type includes
    its layout and whether it is writable: a read-only array (``np.load(mmap_mode='r')``,
    ``np.frombuffer``, a view pandas returns), a strided view or a float32 array would each
    compile every kernel it reaches again (seconds to a minute). Every array handed to
    ``fastbudget.kernels`` goes through here first.

    Parameters
    ----------
    a : array-like
        The array.
    dtype : numpy dtype
        ``np.float64`` or ``np.int64``.

    Returns
    -------
    ndarray
        ``a`` itself when it already is of ``dtype``, C-contiguous, aligned and writable,
        else such a copy.
    """
    return np.require(a, dtype, ("C", "A", "W"))


def as_numeric_2d(X, name="X", allow_empty=False):
    """``X`` as a 2-D NumPy array of a numeric dtype, not yet float64 and not yet checked for
    NaN or infinity (``fastbudget._inputcheck`` checks a large X block by block instead of
    copying it whole).

    A scipy.sparse matrix is densified; a pandas table's nullable columns give NaN.
    Raises ``ValueError`` for ragged, complex, 1-D, other than 2-D or (unless
    ``allow_empty``) empty input, and ``NonNumericError`` for text.
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
    return arr


def all_finite(arr):
    """Whether every entry of the float array ``arr`` is finite, without an array of its
    size: a NaN or an infinity makes the sum NaN or infinite, so a finite sum settles it in
    one pass; only a sum that overflowed (finite values near 1e308), or a bad entry, takes
    the element-wise check (the fast path of scikit-learn's check as well)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(arr)):
            return True
    return bool(np.isfinite(arr).all())


def check_array(X, *, name="X", allow_empty=False):
    """Validate a 2-D numeric array and return it as float64, C-contiguous and writable
    (``as_kernel_array``: a copy unless ``X`` already is one).

    Raises ``ValueError`` with a message that says what to do for 1-D input, empty input,
    non-numeric data, NaN or infinity.
    """
    arr = as_numeric_2d(X, name, allow_empty)
    arr = as_kernel_array(arr, np.float64)
    if not all_finite(arr):
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


def row_sq_norms(X, name="X", start=0):
    """The squared norm of every row of the float64 array ``X``, float64 ``(n,)``.

    Raises ``ValueError`` saying to rescale when one overflows float64 (values beyond about
    1e154), naming its row as ``start`` + its index in ``X`` (``X`` may be a block of a
    larger array).
    """
    with np.errstate(over="ignore"):
        sq = np.einsum("ij,ij->i", X, X)
    if not np.isfinite(sq).all():
        i = int(np.argmax(~np.isfinite(sq)))
        raise ValueError(
            f"{name} has values too large for a kernel (row {start + i}: its squared norm "
            f"overflows float64; largest |value| {np.abs(X[i]).max():.3g}). Rescale the "
            "features, e.g. standardise them.")
    return sq


def check_kernel_range(X, name="X", spec=None):
    """``X`` (validated by ``check_array``) unless a row's squared norm overflows float64
    (values beyond about 1e154) or exceeds ``KERNEL_LIMIT``, or, for ``spec = (kernel,
    gamma, degree, coef0)`` of a polynomial kernel, unless a row's kernel bound
    ``(gamma |x|^2 + |coef0|)^degree`` exceeds ``KERNEL_LIMIT``: a kernel of such a row is
    infinite or NaN (or its products are) and would poison the model. Raises ``ValueError``
    saying to rescale."""
    sq = row_sq_norms(X, name)
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


def row_kernel_ok(est, sq):
    """``poly_bound_ok`` for one row of ``est`` (cheap unless its kernel is polynomial)."""
    if est.__dict__.get("kernel") != "poly":
        return sq <= KERNEL_LIMIT
    return poly_bound_ok(est._kernel_spec(None), sq)


def poly_bound_ok(spec, sq):
    """Whether one row of squared norm ``sq`` passes ``check_kernel_range`` for ``spec``."""
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


def check_stored_arrays(state, prefix, reference, what, holder):
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


def check_stored_indices(state, prefix, names, n, what):
    """For ``persist.load``: raise ``ValueError`` unless the index arrays
    ``state[prefix + name]`` hold only -1 (none) and indices in [0, n)."""
    for name in names:
        a = state.get(prefix + name)
        if a is not None and a.size and (a.min() < -1 or a.max() >= n):
            raise ValueError(f"{what} {name!r} holds an index outside [-1, {n})")


def feature_names(X):
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


class NamedTable:
    """Rows with column names, as a table: the ``columns`` and ``__array__`` that the
    validation of X reads (one example given as a dict ``{feature name: value}``)."""

    __slots__ = ("columns", "_rows")

    def __init__(self, columns, rows):
        self.columns = columns
        self._rows = rows

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._rows, dtype=dtype)


PLAIN_LABEL = (int, float, str, np.integer, np.floating, np.bool_, np.str_)


def label_kinds(labels):
    """The kinds of the labels of an array, ``{'text'}``, ``{'number'}`` or both (an object
    array of mixed labels), as scikit-learn's ``unique_labels`` tells strings from the rest."""
    kind = labels.dtype.kind
    if kind in "US":
        return {"text"}
    if kind != "O":
        return {"number"}
    return {"text" if isinstance(v, str) else "number" for v in labels.ravel().tolist()}


def plain(values):
    """Labels as plain Python values for messages (numpy scalars unwrapped)."""
    return [v.item() if isinstance(v, np.generic) else v for v in values]


def check_y(y, *, name="y"):
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


def unique_labels(y):
    try:
        return np.unique(y)
    except TypeError:
        raise ValueError(
            "Labels mix types that cannot be ordered (e.g. numbers and strings); use one type."
        ) from None


def check_feature_names(X, fitted, model_name, stacklevel=4):
    """Compare the column names of ``X`` with ``fitted``, a model's ``feature_names_in_``.

    Parameters
    ----------
    X : array-like
        The data; a table's column names are read by :func:`feature_names`.
    fitted : ndarray of object or None
        The names the model was started on (None: it has none).
    model_name : str
        The model's class name, for the messages.
    stacklevel : int, default=4
        Of the warnings, counted from this function.

    Raises
    ------
    ValueError
        When both have names and they differ (other names, missing ones, another order);
        its message starts with the lines scikit-learn's own check
        (``check_dataframe_column_names_consistency``) matches.
    TypeError
        For column names that mix strings with other types.

    Warns
    -----
    UserWarning
        When only one side has names.
    """
    names = feature_names(X)
    if fitted is None and names is None:
        return
    if fitted is None:
        warnings.warn(
            f"This X has column names, but {model_name} was trained on data without them; its "
            "columns are used by position, so they must come in the training data's order.",
            UserWarning, stacklevel=stacklevel)
        return
    if names is None:
        warnings.warn(
            f"This X has no column names, but {model_name} was trained on named columns "
            "(feature_names_in_); its columns are taken by position as those, in that "
            "order. Pass a DataFrame with those column names to have them checked.",
            UserWarning, stacklevel=stacklevel)
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
        msg + f"{model_name} was fitted on the columns in feature_names_in_ and reads the "
        "columns of X by position: select and order them as there, e.g. "
        "X[model.feature_names_in_] for a pandas DataFrame (a dict example needs "
        "exactly those keys).")


def one_example(x, fitted):
    """One example ``x`` as the X of one row that ``partial_fit`` and ``predict`` take.

    Parameters
    ----------
    x : array-like of shape (n_features,) or (1, n_features), or dict
        A dict whose keys are all strings is a table of one row named by its keys: a model
        started on it records them as ``feature_names_in_``, and a model with
        ``feature_names_in_`` (``fitted``) reads the values of those keys in its own order
        (the order of a dict does not matter then; a key missing or unknown raises
        ``ValueError`` as other names do). The values of any other dict are taken in the
        dict's order. A one-dimensional table row with an index (a pandas Series, e.g.
        ``df.iloc[i]``) is the dict of its index and values.
    fitted : ndarray of object or None
        The model's ``feature_names_in_``.

    Returns
    -------
    ndarray of shape (1, n_features), float64, or NamedTable
        Nothing is modified.
    """
    if (not isinstance(x, (Mapping, np.ndarray)) and getattr(x, "ndim", None) == 1
            and hasattr(x, "index") and hasattr(x, "to_dict")):
        d = x.to_dict()
        if len(d) == len(x):        # (a repeated index label cannot name a feature)
            x = d
    if isinstance(x, Mapping):
        keys = list(x)
        if keys and all(isinstance(k, str) for k in keys):
            if (fitted is not None and len(keys) == len(fitted)
                    and set(keys) == set(fitted.tolist())):
                keys = fitted.tolist()
            return NamedTable(keys, [[x[k] for k in keys]])
        x = list(x.values())
    x = np.asarray(x, dtype=np.float64)
    if not (x.ndim == 1 or (x.ndim == 2 and x.shape[0] == 1)):   # a (1, d) row is one too
        raise ValueError(
            f"Expected one example as a 1-D array-like or a dict of features; got an array "
            f"of shape {x.shape}. Use partial_fit / predict for several rows.")
    return x.reshape(1, -1)


def check_sample_weight(sample_weight, n):
    """Example weights as float64 ``(n,)`` in the kernels' layout (ones for None).

    Raises ``ValueError`` for non-numeric weights, a shape other than ``(n,)`` (a scalar is
    broadcast) and weights that are not finite and non-negative.
    """
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


def check_bool(name, value):
    """Raise ``ValueError`` unless ``value`` is True or False (a string such as 'False'
    would otherwise count as true)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}.")


def check_param(name, value, *, low=None, low_inclusive=False, integer=False, allow=()):
    """Raise ``ValueError`` unless the hyper-parameter ``value`` is a finite (whole, with
    ``integer``) number above ``low`` (or at it, with ``low_inclusive``), or a string or
    None listed in ``allow``."""
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


def check_n_features(X, n_features, model_name):
    """Raise ``ValueError`` unless the 2-D ``X`` has ``n_features`` columns, the number a
    model named ``model_name`` was fitted on."""
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features, but {model_name} is expecting "
            f"{n_features} features as input. Pass data with the same columns as "
            "in training."
        )


def new_classes(y, classes, binary_only, model_name):
    """The classes of a new model: those of ``classes`` when given, else those of the labels
    ``y`` (both as ``unique_labels`` sorts them).

    Raises ``ValueError`` for fewer than two classes, or more than two when ``binary_only``
    (saying to wrap the learner in ``OneVsRestClassifier``).
    """
    if classes is not None:
        cls = unique_labels(check_y(classes, name="classes"))
    else:
        cls = unique_labels(y)
    if cls.shape[0] > 2 and binary_only:
        raise ValueError(
            f"Only binary classification is supported by {model_name}, but got "
            f"{cls.shape[0]} classes ({str(cls[:5].tolist())[1:-1]}"
            f"{', ...' if cls.shape[0] > 5 else ''}). Wrap it in "
            "fastbudget.OneVsRestClassifier for multi-class problems."
        )
    if cls.shape[0] < 2:
        raise ValueError(
            f"Only one class ({cls.tolist()}) in y. A classifier needs two: pass "
            "classes=[neg, pos] to partial_fit when a first chunk holds one class only."
        )
    return cls


def check_same_classes(classes, cls):
    """Raise ``ValueError`` unless ``classes`` (of a later ``partial_fit``) is None or holds
    the classes ``cls`` of the first call."""
    if classes is not None and not np.array_equal(
        unique_labels(check_y(classes, name="classes")), cls
    ):
        raise ValueError(
            f"classes={list(classes)} differs from the classes of the first call "
            f"{cls.tolist()}; pass the same classes (or none) on later calls."
        )


def check_known_labels(y, cls):
    """Raise ``ValueError``, naming the first such label and its row, unless every label of
    ``y`` is one of the classes ``cls``."""
    try:
        unseen = ~np.isin(y, cls)
    except TypeError:
        unseen = np.array([not any(v == c for c in cls.tolist()) for v in y.tolist()])
    if unseen.any():
        raise ValueError(
            f"y contains label {plain(y[unseen][:1].tolist())[0]!r} (row "
            f"{int(np.argmax(unseen))}) not among the classes {cls.tolist()}; pass all labels "
            "with classes= on the first partial_fit."
        )
