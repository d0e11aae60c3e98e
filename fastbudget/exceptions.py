"""Every exception and warning class of fastbudget, in one module that anything may import.

This module imports only the standard library, so any part of the package (and a user's
code) can import it without pulling in NumPy, Numba or scikit-learn. The modules that used
to define these classes still export them under their old names (``fastbudget.base``,
``fastbudget.engine``, ``fastbudget.persist``, ``fastbudget._modelfile``,
``fastbudget.datasets.readers``, ``fastbudget.estimators.tvm``); they are the same classes.
"""
import sys

__all__ = [
    "CLIError",
    "FormatError",
    "CapacityError",
    "CollapseWarning",
    "FeatureCountError",
    "ModelFormatError",
    "ModelLockedError",
    "NonNumericError",
    "NotFittedError",
    "NumericalError",
    "NumericalWarning",
    "RejectionWarning",
]


class NotFittedError(ValueError, AttributeError):
    """A model was used before it was fitted.

    It has the bases of scikit-learn's ``sklearn.exceptions.NotFittedError``. When
    scikit-learn is already imported, the error a fastbudget model raises is also an instance
    of scikit-learn's class (scikit-learn stays optional; see :func:`_not_fitted_error`).

    Call ``fit`` or ``partial_fit`` with training data first.
    """


class NonNumericError(TypeError, ValueError):
    """Input that is not numeric (text, categorical columns).

    Both a ``TypeError``, as NumPy and scikit-learn raise for such input, and a
    ``ValueError``, as every other input error of fastbudget. Encode such columns as
    numbers first.
    """


class NumericalError(RuntimeError):
    """An exact update failed, also after rebuilding R and relearning from an empty model.

    The model is unchanged: it is the model from before the call that raised.
    """


class NumericalWarning(UserWarning):
    """A stream learner skipped an example whose exact update failed numerically.

    The update failed even after rebuilding R; the model is the exact one without that
    example.
    """


class CapacityError(RuntimeError):
    """The engine is full; the message says how to make room."""


class FeatureCountError(ValueError):
    """A LIBSVM line has a feature index beyond the ``n_features`` given to the reader.

    Parameters
    ----------
    msg : str
        The message.
    where : str
        The file and line of the offending index.
    n_features : int
        The number of features the reader was given.

    Attributes
    ----------
    where : str
        The file and line of the offending index.
    n_features : int
        The number of features the reader was given.
    """

    def __init__(self, msg, where, n_features):
        super().__init__(msg)
        self.where = where
        self.n_features = n_features


class ModelFormatError(ValueError):
    """A model file is damaged, foreign, inconsistent or from a newer format version."""


class ModelLockedError(RuntimeError):
    """Another process holds the lock of a model file (``model_lock(..., wait=False)``)."""


class RejectionWarning(UserWarning):
    """TVM has stopped learning for good.

    No pair of twin vectors passes the rejection test, so every example that would be
    learned is dropped, and since the twins cannot change, that stays so.
    """


class CollapseWarning(UserWarning):
    """TVM's control of C has made the model call all its twin vectors one class.

    Control of C has shrunk TVM's ``C_eff`` until the model calls all its twin vectors one
    class although they hold examples of both, so it predicts that class near every one of
    them (see ``TVMClassifier``, ``control_C``).
    """


class CLIError(Exception):
    """An error reported as one line at the command line (exit status 2)."""


class FormatError(ValueError):
    """The format of a data source cannot be told, or is not one fastbudget reads."""


_SKLEARN_NOT_FITTED = []


def _not_fitted_error(msg):
    """A :class:`NotFittedError` that is also scikit-learn's, when scikit-learn is loaded.

    Parameters
    ----------
    msg : str
        The message.

    Returns
    -------
    NotFittedError
        An instance of a subclass of both :class:`NotFittedError` and
        ``sklearn.exceptions.NotFittedError`` when ``sklearn`` is in ``sys.modules``, else of
        :class:`NotFittedError` itself. scikit-learn is never imported here for this.
    """
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
    """scikit-learn's ``DataConversionWarning`` when scikit-learn is loaded, else
    ``UserWarning`` (scikit-learn is never imported here for this)."""
    if "sklearn" in sys.modules:
        try:
            from sklearn.exceptions import DataConversionWarning

            return DataConversionWarning
        except Exception:  # pragma: no cover
            pass
    return UserWarning
