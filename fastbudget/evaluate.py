"""Streaming evaluation: test-then-train (prequential) and holdout, one loop each.

:func:`prequential` tests each chunk of a stream before the model learns it (the accuracy of
a model that has never seen the rows it is scored on), with a running accuracy over a
window of the most recent examples; ``fastbudget prequential`` writes its steps as a curve.
:func:`holdout` trains on a stream and scores a fixed test set after given numbers of
examples; ``fastbudget demo`` and the reproductions (``fastbudget reproduce``) use it.
:func:`ordered_chunks` cuts a training set, in a given order, into the chunks of a stream.

Both loops call ``partial_fit`` once per chunk (per piece of a chunk cut at a checkpoint), so
a model learns the same stream whichever loop drives it.
"""
import contextlib
import time
from collections import deque
from dataclasses import dataclass, field
from typing import List, Tuple

import numpy as np

__all__ = ["PrequentialStep", "HoldoutResult", "prequential", "holdout", "ordered_chunks"]


@dataclass(frozen=True)
class PrequentialStep:
    """The state of a prequential evaluation after one chunk was tested and learned.

    Attributes
    ----------
    n_learned : int
        Examples the model has learned so far (including a first chunk's untested half).
    n_tested : int
        Examples tested so far.
    n_correct : int
        Of them, predicted right.
    accuracy : float
        ``n_correct / n_tested``.
    window_tested : int
        Examples of the running window: the most recent chunks holding at least
        ``window`` examples (all of them when fewer were tested).
    window_accuracy : float
        Accuracy over the running window.
    chunk_tested : int
        Examples of this chunk that were tested.
    """

    n_learned: int
    n_tested: int
    n_correct: int
    accuracy: float
    window_tested: int
    window_accuracy: float
    chunk_tested: int


def prequential(model, chunks, classes=None, window=10_000, step=None):
    """Test-then-train a model on a stream: each chunk is predicted, then learned.

    Parameters
    ----------
    model : estimator
        A classifier with ``predict`` and ``partial_fit``; modified in place (it learns
        every row of the stream).
    chunks : iterable of (ndarray of shape (n_rows, n_features), ndarray of shape (n_rows,))
        The stream: labelled chunks.
    classes : array-like, optional
        The classes of a new model. Given, the first chunk cannot be tested (nothing has been
        learned): the model learns its first half (at least 2 rows) with
        ``partial_fit(..., classes=classes)`` and the second half is tested, then learned.
        None: ``model`` has learned already, and every chunk is tested.
    window : int
        Examples of the running accuracy: the most recent chunks whose rows add up to at
        least ``window`` (whole chunks, so the window holds a little more).
    step : callable, optional
        A context manager factory, entered around each chunk's learning (``step()``); the
        command line uses it to hold back a signal until the model is consistent.

    Yields
    ------
    PrequentialStep
        After each chunk that had rows to test.

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget import PerceptronClassifier
    >>> from fastbudget.evaluate import prequential
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(400, 2)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> chunks = [(X[i:i + 100], y[i:i + 100]) for i in range(0, 400, 100)]
    >>> steps = list(prequential(PerceptronClassifier(), chunks, classes=[-1, 1]))
    >>> steps[-1].n_tested, steps[-1].n_learned
    (350, 400)
    """
    if window < 1:
        raise ValueError(f"window must be a positive number of examples; got {window}.")
    step = step or contextlib.nullcontext
    first = classes is not None
    n_learned = n = correct = 0
    recent = deque()                   # (tested, correct) of the chunks in the window
    w_n = w_c = 0
    for X, y in chunks:
        with step():
            if first:
                # nothing to test before the first chunk is learned: learn its first
                # half, then continue test-then-train from its second half
                h = max(2, X.shape[0] // 2)
                model.partial_fit(X[:h], y[:h], classes=classes)
                first = False
                n_learned += min(h, X.shape[0])
                X, y = X[h:], y[h:]
                if X.shape[0] == 0:
                    continue
            c = int(np.sum(model.predict(X) == y))      # test ...
            model.partial_fit(X, y)                      # ... then train
        m = len(y)
        n_learned += m
        n += m
        correct += c
        recent.append((m, c))
        w_n += m
        w_c += c
        while w_n - recent[0][0] >= window:
            a, b = recent.popleft()
            w_n -= a
            w_c -= b
        yield PrequentialStep(n_learned, n, correct, correct / n, w_n, w_c / w_n, m)


@dataclass
class HoldoutResult:
    """What :func:`holdout` measured.

    Attributes
    ----------
    accuracy : float
        Test accuracy (a fraction) after the whole stream.
    curve : list of (int, float)
        ``(examples learned, test accuracy)`` at each checkpoint, and at the end of the
        stream when checkpoints were given and the last one is not there.
    n_learned : int
        Examples learned.
    fit_seconds : float
        Wall-clock seconds inside ``partial_fit``.
    """

    accuracy: float
    curve: List[Tuple[int, float]] = field(default_factory=list)
    n_learned: int = 0
    fit_seconds: float = 0.0


def holdout(model, chunks, X_test, y_test, classes=None, checkpoints=(), on_chunk=None,
            on_checkpoint=None):
    """Train a model on a stream and score it on a test set after given numbers of examples.

    Parameters
    ----------
    model : estimator
        A classifier with ``partial_fit`` and ``score``; modified in place.
    chunks : iterable of (ndarray of shape (n_rows, n_features), ndarray of shape (n_rows,))
        The training stream. A chunk that passes a checkpoint is cut there (the model learns
        the two pieces in two calls).
    X_test : ndarray of shape (n_test, n_features)
        Test rows.
    y_test : ndarray of shape (n_test,)
        Their labels.
    classes : array-like, optional
        Passed to every ``partial_fit`` call.
    checkpoints : sequence of int
        Example counts, increasing, after which the model is scored on the test set.
    on_chunk : callable, optional
        ``on_chunk(n_rows)`` after each ``partial_fit`` (a progress bar's ``update``).
    on_checkpoint : callable, optional
        ``on_checkpoint(n, accuracy, model)`` at each checkpoint (e.g. to copy the model).

    Returns
    -------
    HoldoutResult

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget import PerceptronClassifier
    >>> from fastbudget.evaluate import holdout, ordered_chunks
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(600, 2)); y = np.where(X[:, 0] > 0, 1, -1)
    >>> order = rng.permutation(500)
    >>> res = holdout(PerceptronClassifier(), ordered_chunks(X[:500], y[:500], order, 100),
    ...               X[500:], y[500:], classes=[-1, 1], checkpoints=[50, 500])
    >>> [n for n, _ in res.curve], res.n_learned
    ([50, 500], 500)
    """
    cps = list(checkpoints)
    curve = []
    n = 0
    fit = 0.0
    for X, y in chunks:
        i = 0
        while i < len(y):
            j = len(y) if not cps or cps[0] <= n else min(len(y), i + (cps[0] - n))
            t = time.perf_counter()
            model.partial_fit(X[i:j], y[i:j], classes=classes)
            fit += time.perf_counter() - t
            n += j - i
            if on_chunk is not None:
                on_chunk(j - i)
            i = j
            while cps and cps[0] <= n:
                acc = model.score(X_test, y_test)
                curve.append((n, acc))
                if on_checkpoint is not None:
                    on_checkpoint(n, acc, model)
                cps.pop(0)
    if curve and curve[-1][0] == n:
        acc = curve[-1][1]
    else:
        acc = model.score(X_test, y_test)
        if len(checkpoints):
            curve.append((n, acc))
    return HoldoutResult(acc, curve, n, fit)


def ordered_chunks(X, y, order, chunk_size, cuts=()):
    """The rows of a training set in a given order, as the chunks of a stream.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training rows.
    y : ndarray of shape (n_samples,)
        Their labels.
    order : ndarray of int
        Row indices in stream order (e.g. a random permutation).
    chunk_size : int
        Rows per chunk.
    cuts : sequence of int
        Example counts, increasing, at which a chunk ends early (the next one starts
        there, with ``chunk_size`` rows again).

    Yields
    ------
    (ndarray, ndarray)
        ``(X[idx], y[idx])`` for consecutive pieces ``idx`` of ``order`` (copies).
    """
    cps = list(cuts)
    n = 0
    while n < len(order):
        stop = min(len(order), n + chunk_size)
        if cps and cps[0] < stop:
            stop = max(cps[0], n + 1)
        idx = order[n:stop]
        n = stop
        while cps and cps[0] <= n:
            cps.pop(0)
        yield X[idx], y[idx]
