"""Streaming standardisation (mean 0, sd 1) in constant memory.

Policy. Paper 000 scales attributes to mean 0 and sd 1, which needs statistics before the
first example is used. On a stream the statistics come from a warm-up window: the first
``n_warmup`` rows (default 10,000). After the window they are frozen, so every later example
is transformed by the same affine map and a model never sees its input scale change.
:meth:`StreamingStandardizer.transform_stream` holds back the warm-up rows (at most
``n_warmup`` x d floats), then yields them transformed with the frozen statistics in their
original chunks, and transforms the rest as it arrives. When a file can be read twice,
:meth:`StreamingStandardizer.fit` makes one constant-memory pass over all of it instead.

Statistics are merged chunk by chunk with the pairwise update of Chan, Golub & LeVeque (the
batch form of Welford's recurrence): ``n = n_a + n_b``, ``delta = mean_b - mean_a``,
``mean = mean_a + delta n_b / n``, ``M2 = M2_a + M2_b + delta^2 n_a n_b / n``; within a chunk
NumPy's two-pass mean and variance are used. The sd is the population sd (``ddof=0``, as
``numpy.std``). A column whose variance is zero up to rounding
(``var <= (n eps |mean|)^2``) keeps scale 1, so it maps to 0 instead of noise.

Outliers. With ``clip=c`` the standardised values are clipped to ``[-c, c]``. Heavy-tailed
attributes put rare rows tens of sd away (Shuttle: 76 training rows beyond 10 sd, up to
96 sd); an RBF budget learner sees such a row as isolated (its kernel values are 0), and
in TVM such twins can fill a small budget (docs/results/tvm_table3.md). Clipping at a few
sd keeps them inside the data's range.
"""
import numbers

import numpy as np

from .._validation import check_array
from ..exceptions import NotFittedError

__all__ = ["StreamingStandardizer"]


class StreamingStandardizer:
    """Standardise a stream with statistics from a warm-up window, or from one full pass.

    Parameters
    ----------
    n_warmup : int or None, default=10000
        Rows used by :meth:`partial_fit` / :meth:`transform_stream` before the statistics are
        frozen. None means never freeze (every :meth:`partial_fit` call updates them).
    clip : float or None, default=None
        When set, :meth:`transform` clips the standardised values to ``[-clip, clip]``
        (see the module notes on outliers); :meth:`inverse_transform` cannot undo it.

    Attributes
    ----------
    mean_ : ndarray of float64, shape (n_features,)
    var_ : ndarray of float64, shape (n_features,)
        Population variance.
    scale_ : ndarray of float64, shape (n_features,)
        ``sqrt(var_)``, with 1 for (numerically) constant columns.
    n_samples_seen_ : int
    frozen_ : bool
        True once the warm-up window is full or after :meth:`fit`.

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget.datasets import StreamingStandardizer
    >>> X = np.array([[1.0, 5.0], [3.0, 5.0]])
    >>> StreamingStandardizer().fit(X).transform(X)
    array([[-1.,  0.],
           [ 1.,  0.]])
    """

    def __init__(self, n_warmup=10000, clip=None):
        self.n_warmup = n_warmup
        self.clip = clip

    # ------------------------------------------------------------------ internals
    def _check_params(self):
        w = self.n_warmup
        if w is not None and (isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 1):
            raise ValueError(f"n_warmup must be a positive integer or None, got {w!r}.")
        c = self.clip
        if c is not None and (isinstance(c, bool) or not isinstance(c, numbers.Real)
                              or not c > 0 or not np.isfinite(c)):
            raise ValueError(f"clip must be a positive number (in sd) or None, got {c!r}.")

    def _reset(self):
        for a in ("mean_", "var_", "scale_", "_m2", "n_samples_seen_", "frozen_"):
            self.__dict__.pop(a, None)

    def _merge(self, X):
        """Merge the rows of X into the running statistics."""
        nb = X.shape[0]
        if nb == 0:
            return
        mb = X.mean(axis=0)
        m2b = ((X - mb) ** 2).sum(axis=0)
        if not hasattr(self, "_m2"):
            self.n_samples_seen_ = nb
            self.mean_ = mb
            self._m2 = m2b
        else:
            if X.shape[1] != self.mean_.shape[0]:
                raise ValueError(
                    f"X has {X.shape[1]} features, but the standardizer was fitted with "
                    f"{self.mean_.shape[0]}."
                )
            na = self.n_samples_seen_
            n = na + nb
            delta = mb - self.mean_
            self.mean_ = self.mean_ + delta * (nb / n)
            self._m2 = self._m2 + m2b + delta * delta * (na * nb / n)
            self.n_samples_seen_ = n
        self._finish()

    def _finish(self):
        n = self.n_samples_seen_
        self.var_ = self._m2 / n
        eps = np.finfo(np.float64).eps
        const = self.var_ <= (n * eps * np.abs(self.mean_)) ** 2
        self.scale_ = np.where(const, 1.0, np.sqrt(self.var_))

    @staticmethod
    def _as_X(chunk):
        if isinstance(chunk, tuple):
            chunk = chunk[0]
        return check_array(chunk, allow_empty=True)

    # ------------------------------------------------------------------ API
    def fit(self, X_or_chunks):
        """Statistics from all the data, in one pass and constant memory; then frozen.

        Parameters
        ----------
        X_or_chunks : array-like of shape (n, d), or an iterable of arrays or of
            ``(X_chunk, y_chunk)`` tuples (e.g. a reader from :func:`read_libsvm`).
            An array, a pandas DataFrame, a sparse matrix or a list of rows is one array;
            other iterables are chunks.

        Returns
        -------
        self
        """
        self._check_params()
        # statistics gathered apart and kept only when every chunk was read: a bad chunk
        # (or a reader's error on a later line) leaves the standardizer as it was, not
        # holding the statistics of the chunks before it
        acc = StreamingStandardizer.__new__(StreamingStandardizer)
        if hasattr(X_or_chunks, "__array__") or hasattr(X_or_chunks, "toarray") or (
                isinstance(X_or_chunks, (list, tuple)) and len(X_or_chunks) > 0
                and np.ndim(X_or_chunks[0]) == 1):
            acc._merge(check_array(X_or_chunks))
        else:
            for chunk in X_or_chunks:
                acc._merge(self._as_X(chunk))
        if not hasattr(acc, "_m2"):
            raise ValueError("fit received no rows; pass a non-empty array or iterable of chunks.")
        self._reset()
        self.__dict__.update(acc.__dict__)
        self.frozen_ = True
        return self

    def partial_fit(self, X):
        """Add rows to the warm-up statistics; rows past the window are ignored.

        Parameters
        ----------
        X : array-like of shape (m, d)

        Returns
        -------
        self
        """
        self._check_params()
        X = check_array(X, allow_empty=True)
        if getattr(self, "frozen_", False):
            if X.shape[1] != self.mean_.shape[0]:
                raise ValueError(
                    f"X has {X.shape[1]} features, but the standardizer was fitted with "
                    f"{self.mean_.shape[0]}."
                )
            return self
        room = X.shape[0] if self.n_warmup is None else self.n_warmup - getattr(self, "n_samples_seen_", 0)
        self._merge(X[:room])
        self.frozen_ = self.n_warmup is not None and getattr(self, "n_samples_seen_", 0) >= self.n_warmup
        return self

    def transform(self, X):
        """Return ``(X - mean_) / scale_`` as a new float64 array (X is not modified),
        clipped to ``[-clip, clip]`` when ``clip`` is set.

        Parameters
        ----------
        X : array-like of shape (m, d)

        Returns
        -------
        Z : ndarray of float64, shape (m, d)
        """
        if not hasattr(self, "scale_"):
            raise NotFittedError(
                "This StreamingStandardizer has no statistics yet; call fit or partial_fit first."
            )
        X = check_array(X, allow_empty=True)
        if X.shape[1] != self.mean_.shape[0]:
            raise ValueError(
                f"X has {X.shape[1]} features, but the standardizer was fitted with "
                f"{self.mean_.shape[0]}."
            )
        self._check_params()
        Z = (X - self.mean_) / self.scale_
        if self.clip is not None:
            np.clip(Z, -self.clip, self.clip, out=Z)
        return Z

    def fit_transform(self, X):
        """``fit(X).transform(X)`` for an array."""
        return self.fit(X).transform(X)

    def inverse_transform(self, Z):
        """Map standardised rows back: ``Z * scale_ + mean_`` (a new array)."""
        if not hasattr(self, "scale_"):
            raise NotFittedError("Call fit or partial_fit before inverse_transform.")
        Z = check_array(Z, allow_empty=True)
        return Z * self.scale_ + self.mean_

    def transform_stream(self, chunks):
        """Standardise a stream of chunks with warm-up statistics (see the module policy).

        The first ``n_warmup`` rows are held back (with their labels) until the window is
        full or the stream ends, then yielded transformed with the frozen statistics, in their
        original chunks; later chunks are transformed as they arrive. Statistics are reset at
        the start.

        Parameters
        ----------
        chunks : iterable of ``(X_chunk, y_chunk)`` tuples or of arrays

        Yields
        ------
        ``(Z_chunk, y_chunk)`` (or ``Z_chunk`` when the input chunks are arrays)
        """
        self._check_params()
        if self.n_warmup is None:
            raise ValueError("transform_stream needs a finite n_warmup.")
        self._reset()
        held = []
        for chunk in chunks:
            is_tuple = isinstance(chunk, tuple)
            if not getattr(self, "frozen_", False):
                self.partial_fit(chunk[0] if is_tuple else chunk)
                held.append(chunk)
                if not self.frozen_:
                    continue
                for c in held:
                    yield (self.transform(c[0]),) + tuple(c[1:]) if isinstance(c, tuple) else self.transform(c)
                held = []
                continue
            yield (self.transform(chunk[0]),) + tuple(chunk[1:]) if is_tuple else self.transform(chunk)
        if held and hasattr(self, "scale_"):
            self.frozen_ = True
            for c in held:
                yield (self.transform(c[0]),) + tuple(c[1:]) if isinstance(c, tuple) else self.transform(c)
