"""What the Python layer hands to the compiled kernels besides arrays: the kernel parameters
as ``(code, kpar)``, the kernel coefficient resolved from data, and the order of support
vectors scikit-learn's ``SVC`` uses. (The one array layout the kernels take is
``fastbudget._validation.as_kernel_array``.)

A low-level module: it imports NumPy and the kernel codes of
:mod:`fastbudget.kernels.kernel` only, so the engine and the estimators both import it
without importing one another.
"""
import math

import numpy as np

from .kernels.kernel import KERNEL_CODES


def resolve_gamma(gamma, X):
    """The kernel coefficient for data ``X``.

    Parameters
    ----------
    gamma : float, 'scale', 'auto' or None
        A number is kept; ``'scale'`` (scikit-learn's default) is
        ``1 / (n_features * X.var())`` (1.0 when X has no variance); ``'auto'`` or None is
        ``1 / n_features``.
    X : ndarray of shape (n_samples, n_features)
        The data (a first chunk).

    Returns
    -------
    float
    """
    d = X.shape[1]
    if gamma is None or (isinstance(gamma, str) and gamma == "auto"):
        return 1.0 / d
    if isinstance(gamma, str) and gamma == "scale":
        var = _column_order_free_var(X)
        return 1.0 / (d * var) if var > 0 else 1.0
    return float(gamma)


def _column_order_free_var(X):
    """``X.var()`` (over every entry) computed so that permuting the columns of ``X`` gives
    the same float: each column is reduced over its rows (the same operations wherever it
    stands), and the columns' sums are added exactly (``math.fsum``), so no rounding depends
    on the column order."""
    n, d = X.shape
    mean = math.fsum(X.sum(axis=0).tolist()) / (n * d)
    return math.fsum(((X - mean) ** 2).sum(axis=0).tolist()) / (n * d)


def kernel_params(kernel, gamma, degree, coef0):
    """Map scikit-learn style kernel parameters to ``(code, kpar)``.

    Parameters
    ----------
    kernel : str
        A key of ``KERNEL_CODES`` ('rbf', 'linear', 'poly').
    gamma, degree, coef0 : float
        The kernel's coefficient, degree and constant.

    Returns
    -------
    code : int
        The kernel's code for the compiled kernels.
    kpar : ndarray of shape (3,), float64
        ``[gamma, degree, coef0]``.

    Raises
    ------
    ValueError
        For an unknown kernel.
    """
    if kernel not in KERNEL_CODES:
        raise ValueError(f"Unknown kernel {kernel!r}; use one of {sorted(KERNEL_CODES)}.")
    return KERNEL_CODES[kernel], np.array([float(gamma), float(degree), float(coef0)])


def sv_by_class(idx, positive):
    """Support vectors laid out as scikit-learn's ``SVC`` lays out a binary model.

    Parameters
    ----------
    idx : array-like of int
        Indices of the support vectors, in storage order.
    positive : array-like of bool
        Whether each belongs to ``classes_[1]``.

    Returns
    -------
    order : ndarray
        ``idx`` reordered with those of ``classes_[0]`` first, then those of
        ``classes_[1]``, each group in storage order.
    n_support : ndarray of shape (2,), int32
        The two counts.
    """
    idx = np.asarray(idx)
    positive = np.asarray(positive, dtype=bool)
    order = np.concatenate([idx[~positive], idx[positive]])
    n_pos = int(np.count_nonzero(positive))
    return order, np.array([positive.size - n_pos, n_pos], dtype=np.int32)
