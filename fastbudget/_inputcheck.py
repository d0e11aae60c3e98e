"""Checks of prediction input without Numba: the copy that ``fastbudget.serving`` uses.

They say the same as the checks of the compiled learners (``fastbudget.base.check_array``,
``BudgetClassifier._check_X_names`` and ``_check_X_predict``), in the same words, so that a
model served with NumPy alone refuses bad input as the fitted model does. Keep the two in
step (``tests/test_serving.py`` compares the messages). Only the standard library and NumPy
are imported.
"""
import warnings

import numpy as np


def feature_names(X):
    """Column names of a table ``X`` as an object ndarray, or None (see
    ``fastbudget.base._feature_names``): names count only when every one is a string;
    strings mixed with other types raise ``TypeError``."""
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
    lines = [f"- {n}\n" for n in names[:limit]]
    if len(names) > limit:
        lines.append(f"- ... ({len(names) - limit} more)\n")
    return "".join(lines)


def check_names(X, fitted, model_name):
    """Compare the column names of ``X`` with ``fitted`` (the model's ``feature_names_in_``
    or None), as ``BudgetClassifier._check_X_names`` does: ``ValueError`` when they differ,
    a ``UserWarning`` when only one side has names."""
    names = feature_names(X)
    if fitted is None and names is None:
        return
    if fitted is None:
        warnings.warn(
            f"This X has column names, but {model_name} was trained on data without them; its "
            "columns are used by position, so they must come in the training data's order.",
            UserWarning, stacklevel=4)
        return
    if names is None:
        warnings.warn(
            f"This X has no column names, but {model_name} was trained on named columns "
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
        msg + f"{model_name} was fitted on the columns in feature_names_in_ and reads the "
        "columns of X by position: select and order them as there, e.g. "
        "X[model.feature_names_in_] for a pandas DataFrame (a dict example needs "
        "exactly those keys).")


class NonNumericError(TypeError, ValueError):
    """Non-numeric input: a ``TypeError`` and a ``ValueError`` (as ``fastbudget.base``'s)."""


def as_2d(X, n_features, model_name, name="X"):
    """``X`` as a 2-D NumPy array of a numeric dtype (not yet float64, not yet checked for
    NaN: ``check_block`` does that block by block, so a large X is never copied whole).

    Raises ``ValueError`` for 1-D, empty, complex or ragged input and for a number of
    columns other than ``n_features``, ``NonNumericError`` for text."""
    if hasattr(X, "toarray") and not isinstance(X, np.ndarray):  # scipy.sparse
        X = X.toarray()
    if hasattr(X, "to_numpy") and hasattr(X, "dtypes"):
        try:
            X = X.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError):
            pass
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
    if arr.shape[0] == 0:
        raise ValueError(
            f"{name} is empty: 0 sample(s) (shape={arr.shape}) while a minimum of 1 is "
            "required. Pass at least one example."
        )
    if arr.shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required. "
            "Pass at least one feature column."
        )
    return arr


def check_width(arr, n_features, model_name):
    if arr.shape[1] != n_features:
        raise ValueError(
            f"X has {arr.shape[1]} features, but {model_name} is expecting "
            f"{n_features} features as input. Pass data with the same columns as "
            "in training."
        )


def check_block(Xb, start, name="X"):
    """Raise ``ValueError`` (with the row number in the whole X, ``start`` + local) unless
    the float64 block ``Xb`` is finite and every row's squared norm is finite; returns the
    squared row norms."""
    finite = np.isfinite(Xb)
    if not finite.all():
        bad = np.argwhere(~finite)[0]
        raise ValueError(
            f"{name} contains NaN or infinity (first at row {start + bad[0]}, column {bad[1]}). "
            "Remove or impute those values before calling this method."
        )
    with np.errstate(over="ignore"):
        sq = np.einsum("ij,ij->i", Xb, Xb)
    if not np.isfinite(sq).all():
        i = int(np.argmax(~np.isfinite(sq)))
        raise ValueError(
            f"{name} has values too large for a kernel (row {start + i}: its squared norm "
            f"overflows float64; largest |value| {np.abs(Xb[i]).max():.3g}). Rescale the "
            "features, e.g. standardise them.")
    return sq
