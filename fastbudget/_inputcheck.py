"""Checks of prediction input without Numba, for ``fastbudget.serving``.

They are the checks of the compiled learners (``fastbudget._validation``: ``as_numeric_2d``,
``feature_names``, ``check_feature_names``), so that a model served with NumPy alone refuses
bad input as the fitted model does, in the same words (``tests/test_serving.py`` compares
the messages); a large X is checked block by block here instead of copied whole. Only the
standard library, NumPy and the NumPy-only modules ``fastbudget._validation`` and
``fastbudget.exceptions`` are imported.
"""
import numpy as np

from ._validation import (as_numeric_2d, check_feature_names, check_n_features,  # noqa: F401
                          feature_names, row_sq_norms)
from .exceptions import NonNumericError  # noqa: F401

#: ``check_names(X, fitted, model_name)``: compare the column names of ``X`` with ``fitted``
#: (a model's ``feature_names_in_`` or None), as the fitted model does.
check_names = check_feature_names
#: ``check_width(arr, n_features, model_name)``: the number of columns, as the model checks it.
check_width = check_n_features


def as_2d(X, n_features, model_name, name="X"):
    """``X`` as a 2-D NumPy array of a numeric dtype (not yet float64, not yet checked for
    NaN: ``check_block`` does that block by block, so a large X is never copied whole).

    Raises ``ValueError`` for 1-D, empty, complex or ragged input (the number of columns is
    ``check_width``'s), ``NonNumericError`` for text: ``fastbudget._validation.as_numeric_2d``.
    """
    return as_numeric_2d(X, name)


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
    return row_sq_norms(Xb, name, start)
