"""Online probability calibration: decision values -> P(y = classes_[1] | x).

Every binary fastbudget learner keeps a calibration map fitted *prequentially*: when it
learns a chunk it first scores the chunk with the model as it stands (the decision values of
examples it has not learned yet, so honest out-of-sample scores, as cross-validation would
give, at the price of one ``decision_function`` per example), adds them to the map's
statistics, and only then learns the chunk (from the second chunk on: the first has no model
to score it). TVM, the perceptrons, Forgetron, Pegasos, BSGD, Span and ``IncrementalSVC``
take each row's score in their learning loop, under the model of the rows before it
(``_calibration_per_row``), and so score every chunk, the first and ``fit``'s included, at
no extra pass. There is no second pass, no held-out set and no cross-validation, and the
memory is constant: three arrays of ``N_BINS`` float64. Files written before the recency
weighting (below) hold plain sums, in the same format: they load and learn on.

The statistics
--------------
Decision values ``f`` are binned on a fixed grid of ``u = asinh(f)`` (linear near the margin,
logarithmic far from it, so one grid serves learners whose scores are of order 1, such as
the SVMs, and of order 100, such as the perceptrons): ``N_BINS`` bins of width
``2 * U_MAX / N_BINS`` over ``[-U_MAX, U_MAX]``, values beyond that range counted in the end
bins. ``f = 0`` is a bin edge: a bin holds only negative (``f <= 0``) or only positive
decision values. Each bin keeps the weight of its examples, the weight of its positives and
the weighted sum of their ``u`` (its centroid). Example weights are the ``sample_weight``
given to ``partial_fit`` (not multiplied by ``class_weight``, which reweights what the learner
learns, not how often a label occurs).

Recency
-------
The decision values of early examples were given by a young model, whose scores mean less
than the final model's (TVM at budget 100 on IJCNN1: of the examples scored in ``(0, 1]``,
65 % are positive in the first ten chunks of 1,000, 83 % in the last ten). So before each
example of weight ``w`` is added, the statistics are multiplied by ``2 W / (2 W + w)``,
``W`` their total weight. With unit weights ``W`` grows as ``t / 2`` after ``t`` examples
and the example that arrived ``s``-th weighs about ``s / t``: a weight proportional to
arrival time, with no parameter and no state but the statistics (the first half of the
stream holds a quarter of the weight; the effective sample size is ``3 t / 4``). A chunk is
added as its examples one by one would be. ``calibration_counts_`` (the total weight) is
therefore about half the number of examples scored. Statistics saved before this weighting
(plain sums, same format) load and learn on: their total counts as that of a longer
stream.

The map
-------
From the statistics, at prediction time (cached until the next update):

1. Platt's sigmoid ``1 / (1 + exp(-(A f + B)))`` fitted to the binned data by Newton's method
   with a weak ridge pulling ``(A, B)`` towards ``(1, 0)`` (so that an empty map is the
   sigmoid of ``f``);
2. each non-empty bin's positive rate, shrunk towards that sigmoid with ``PRIOR_WEIGHT``
   pseudo-examples (so a bin of a few examples does not give 0 or 1);
3. pool-adjacent-violators over the bins (the isotonic fit on a fixed grid): a monotone,
   non-parametric map that can level off below 1 where labels are noisy (a plain sigmoid
   cannot: it tends to 1);
4. the rates clamped to ``<= 1/2`` on the negative bins and ``>= 1/2`` on the positive ones,
   and linear interpolation in ``u`` between the bin centroids through ``(0, 1/2)``: so
   ``predict_proba`` agrees with ``predict`` (``p > 1/2`` exactly when ``f > 0``);
5. a small strictly increasing term (weight ``TIE_BREAK``) so that the map is strictly
   increasing and ranks examples as the decision values do.

The probabilities are kept in ``[P_MIN, 1 - P_MIN]``.
"""
import math

import numpy as np

from ._validation import plain

__all__ = ["N_BINS", "U_MAX", "new_stats", "update_stats", "update_one", "check_stats",
           "CalibrationMap"]

#: number of bins of the grid (even: ``f = 0`` is the middle edge)
N_BINS = 128
#: the grid covers ``asinh(f)`` in ``[-U_MAX, U_MAX]``, ``|f|`` up to about 1,500
U_MAX = 8.0
#: pseudo-examples drawn from the fitted sigmoid added to each bin
PRIOR_WEIGHT = 3.0
#: weight of the strictly increasing tie-breaking term
TIE_BREAK = 1e-4
#: smallest probability returned
P_MIN = 1e-6
#: ridge strength of the sigmoid fit (in examples)
RIDGE = 1.0

_H = 2.0 * U_MAX / N_BINS
_HALF = N_BINS // 2


def new_stats():
    """Empty statistics: float64 ``(3, N_BINS)``, rows weight, positive weight, weight * u."""
    return np.zeros((3, N_BINS))


def _bins(f):
    u = np.arcsinh(f)
    b = np.floor(u / _H).astype(np.intp) + _HALF
    b[f <= 0.0] = np.minimum(b[f <= 0.0], _HALF - 1)    # f = 0 counts as negative
    np.clip(b, 0, N_BINS - 1, out=b)
    return b, np.clip(u, -U_MAX, U_MAX)


def _recency(total, weight):
    """The factors by which the statistics are multiplied before each of the examples of
    weight ``weight`` (in order) is added to statistics of total weight ``total``, and the
    total after them (see "Recency" in the module docstring). Compiled
    (``kernels.calibration.recency``; imported here, so that reading a saved map needs no
    Numba); :func:`_recency_python` is the same recurrence in Python."""
    from .kernels.calibration import recency
    w = np.ascontiguousarray(weight, dtype=np.float64)
    rho = np.empty(w.shape[0])
    total = recency(float(total), w, rho)
    return rho, total


def _recency_python(total, weight):
    """:func:`_recency` in plain Python (the reference the compiled loop is tested against)."""
    rho = np.empty(len(weight))
    for i, w in enumerate(weight.tolist()):
        r = 2.0 * total / (2.0 * total + w) if w > 0.0 else 1.0
        rho[i] = r
        total = r * total + w
    return rho, total


def update_stats(stats, f, y_pm, weight):
    """The statistics with the examples ``(f, y_pm, weight)`` added, in order (a new array).

    Each example first multiplies the statistics by ``2 W / (2 W + w)`` (``W`` their total
    weight, ``w`` the example's), so an example's weight decays as the stream goes on:
    see "Recency" in the module docstring. The result equals ``update_one`` applied to the
    examples one by one (up to rounding).

    Parameters
    ----------
    stats : ndarray of shape (3, N_BINS), float64, or None (empty)
    f : ndarray of shape (n,), float64
        Decision values of examples the model has not learned yet.
    y_pm : ndarray of shape (n,)
        Their labels, > 0 for ``classes_[1]``.
    weight : ndarray of shape (n,), float64
        Non-negative example weights.

    Returns
    -------
    ndarray of shape (3, N_BINS), float64
        A new array (``stats`` is not modified, so a transaction that keeps the old one can
        put it back).
    """
    out = new_stats() if stats is None else np.array(stats, dtype=np.float64, copy=True)
    f = np.asarray(f, dtype=np.float64)
    w = np.asarray(weight, dtype=np.float64)
    ok = np.isfinite(f)
    if not ok.all():                     # a learner in trouble: do not poison the map
        f, y_pm, w = f[ok], np.asarray(y_pm)[ok], w[ok]
    if f.size == 0:
        return out
    rho, _ = _recency(float(out[0].sum()), w)
    # example i keeps the factors of the examples after it: w_i * rho_{i+1} * ... * rho_n;
    # the statistics before the chunk keep all of them (compiled: a reversed product and
    # the bins' sums, 0.2 s per 10^6 examples in NumPy, 8 % of a TVM fit at d = 2)
    from .kernels.calibration import chunk_sums
    sums = np.zeros((3, N_BINS))
    keep = chunk_sums(f, np.arcsinh(f), np.ascontiguousarray(y_pm, dtype=np.float64),
                      np.ascontiguousarray(w), rho, _H, _HALF, U_MAX, sums,
                      np.empty(f.shape[0]))
    out *= keep
    out += sums
    return out


def check_stats(stats):
    """Raise ``ValueError`` unless ``stats`` is a valid statistics array (for loading)."""
    if (not isinstance(stats, np.ndarray) or stats.dtype != np.float64
            or stats.shape != (3, N_BINS)):
        raise ValueError(f"calibration statistics must be float64 of shape (3, {N_BINS}); got "
                         f"{getattr(stats, 'dtype', type(stats).__name__)} of shape "
                         f"{np.shape(stats)}")
    if not np.isfinite(stats).all() or (stats[:2] < 0).any() or (stats[1] > stats[0] * (1 + 1e-9) + 1e-9).any():
        raise ValueError("calibration statistics hold negative, non-finite or inconsistent "
                         "counts")


class CalibrationMap:
    """The monotone map fitted to a statistics array (see the module docstring).

    Parameters
    ----------
    stats : ndarray of shape (3, N_BINS), float64, or None (no data: Platt's sigmoid of f)
    """

    def __init__(self, stats):
        # compiled (kernels.calibration.fit_map: Platt's Newton steps and the PAV over at
        # most N_BINS bins; about 100 us in NumPy and Python, which learn_one followed by
        # predict_proba_one paid on every call)
        from .kernels.calibration import fit_map
        stats = new_stats() if stats is None else np.ascontiguousarray(stats, np.float64)
        k_u, k_p = np.empty(N_BINS + 1), np.empty(N_BINS + 1)
        k, self.A, self.B = fit_map(stats, _H, _HALF, PRIOR_WEIGHT, RIDGE, k_u, k_p)
        # knots: the bin centroids and (0, 1/2); beyond the outer knots the map is flat
        self.knots_u = k_u[:k]
        self.knots_p = k_p[:k]

    def __call__(self, f):
        """P(y = classes_[1]) for decision values ``f`` (ndarray (n,)) -> ndarray (n,)."""
        from .kernels.calibration import apply_map
        f = np.ascontiguousarray(f, dtype=np.float64)
        out = np.empty(f.shape)
        apply_map(f.reshape(-1), np.arcsinh(f).reshape(-1), self.knots_u, self.knots_p,
                  TIE_BREAK, P_MIN, out.reshape(-1))
        return out


def update_one(stats, f, y_pm, weight):
    """``update_stats`` for a single example (plain floats), cheaper for ``learn_one``."""
    out = new_stats() if stats is None else stats.copy()
    if not math.isfinite(f) or weight == 0.0:
        return out
    total = float(out[0].sum())
    out *= 2.0 * total / (2.0 * total + weight)
    u = math.asinh(f)
    b = math.floor(u / _H) + _HALF
    if f <= 0.0:
        b = min(b, _HALF - 1)
    b = min(max(b, 0), N_BINS - 1)
    out[0, b] += weight
    if y_pm > 0:
        out[1, b] += weight
    out[2, b] += weight * min(max(u, -U_MAX), U_MAX)
    return out


_DEFAULT = []
_RECENT = []          # (stats, map) of the last few statistics arrays, newest last
_N_RECENT = 16


def map_for(stats):
    """The ``CalibrationMap`` of ``stats`` (None: no data), cached by the identity of the
    array: the statistics are replaced, never modified in place, by every update, so an
    array seen before has the same map. The cache lives here rather than on the model, so
    that ``predict_proba`` leaves the model's attributes untouched."""
    if stats is None:
        if not _DEFAULT:
            _DEFAULT.append(CalibrationMap(None))
        return _DEFAULT[0]
    for k in range(len(_RECENT) - 1, -1, -1):
        if _RECENT[k][0] is stats:
            return _RECENT[k][1]
    cmap = CalibrationMap(stats)
    _RECENT.append((stats, cmap))
    if len(_RECENT) > _N_RECENT:
        del _RECENT[0]
    return cmap


_POOLED = []          # (tuple of statistics arrays, map of their sum), newest last

#: the ``fout`` a compiled learning loop gets when no row's score is wanted (length 0: the
#: loops write each row's score only into an array with one entry per row)
NO_SCORES = np.zeros(0)


def pooled_map(stats_list):
    """One ``CalibrationMap`` fitted on the sum of several learners' statistics (None
    entries add nothing), cached by the identities of the arrays as ``map_for`` is.

    ``OneVsRestClassifier`` maps every learner's decision values through it: one strictly
    increasing map for all columns keeps the argmax of the probabilities that of the
    decision values (``predict``), which K maps of their own would not."""
    present = tuple(s for s in stats_list if s is not None)
    if len(present) <= 1:
        return map_for(present[0] if present else None)
    for k in range(len(_POOLED) - 1, -1, -1):
        key, cmap = _POOLED[k]
        if len(key) == len(present) and all(a is b for a, b in zip(key, present)):
            return cmap
    cmap = CalibrationMap(np.sum(present, axis=0))
    _POOLED.append((present, cmap))
    if len(_POOLED) > _N_RECENT:
        del _POOLED[0]
    return cmap


class ProbabilityMixin:
    """``predict_proba`` and the online calibration statistics of a binary learner.

    Mixed into ``fastbudget.base.BudgetClassifier``: ``partial_fit`` and ``learn_one`` call
    ``_calibration_scores`` before a chunk is learned and ``_add_calibration`` after; the
    statistics live in the estimator's ``_calibration_stats`` (saved with the model).
    """

    #: whether this learner keeps an online calibration map (binary learners; a wrapper's
    #: learners keep their own)
    _calibrates = True
    #: whether the learner's compiled loop writes each row's decision value, taken before
    #: it learns the row, into the array ``_row_scores(X)`` returns (TVM, the perceptrons,
    #: Forgetron, Pegasos, BSGD, Span, IncrementalSVC through the engine's ``add_batch``):
    #: then every chunk is scored row by row, the first chunk and ``fit``'s one too, at no
    #: extra pass over the chunk
    _calibration_per_row = False

    def _calibration_scores(self, X, first):
        """Decision values of a validated chunk under the model as it is, before it learns
        the chunk, for the calibration statistics (``fastbudget.calibration``); None when
        there is nothing to score (a first chunk: the model knows nothing yet) or the
        model keeps no map (a wrapper: its learners keep theirs). The caller learns the
        chunk, then passes them to ``_add_calibration`` (called inline rather than through
        a helper, so that the learners' warnings keep pointing at the user's call).

        A learner with ``_calibration_per_row`` (and no ``forgetting``, whose drift
        detector cuts the chunk into pieces) returns an array of NaN that its learning
        loop fills: each row scored under the model that has learned every row before it,
        the chunk's earlier rows included (prequential per row, as ``learn_one`` scores),
        so the statistics do not depend on how the stream is cut into chunks; the first
        row of a stream is scored under the empty model (f = 0), and the recency
        weighting gives the young scores little weight (the first tenth of a stream holds
        a hundredth of it). A row the loop leaves NaN is not counted."""
        if not self._calibrates:
            return None
        if self._calibration_per_row and getattr(self, "forgetting", None) is None:
            f = np.full(X.shape[0], np.nan)
            self.__dict__["_scores_out"] = (X, f)
            return f
        if first:
            return None
        return self._decision(X)

    def _row_scores(self, X):
        """The array that ``_calibration_scores`` handed out for this chunk (the same
        ``X``), for the learning loop to fill; a length-0 array (write nothing) when none
        was."""
        pending = self.__dict__.pop("_scores_out", None)
        return pending[1] if pending is not None and pending[0] is X else NO_SCORES

    def _add_calibration(self, f, y_pm, raw_weight):
        """Add examples' decision values (taken before they were learned) to the
        calibration statistics. ``raw_weight`` is ``sample_weight`` before class weights.
        The statistics are replaced, never modified in place, so a transaction that fails
        puts the old ones back."""
        stats = self.__dict__.get("_calibration_stats")
        if len(f) == 1:
            new = update_one(stats, float(f[0]), float(y_pm[0]), float(raw_weight[0]))
        else:
            new = update_stats(stats, f, y_pm, raw_weight)
        self.__dict__["_calibration_stats"] = new

    def _calibration(self):
        """The calibration map of the current statistics (cached by
        ``fastbudget.calibration.map_for`` until they change)."""
        return map_for(self.__dict__.get("_calibration_stats"))

    @property
    def calibration_counts_(self):
        """Recency-weighted total weight of the examples the calibration map was fitted on
        (scored before they were learned; the s-th of t examples counts about s/t, see
        ``fastbudget.calibration``); 0.0 for a model that has learned a single chunk."""
        self._check_fitted()
        stats = self.__dict__.get("_calibration_stats")
        return 0.0 if stats is None else float(stats[0].sum())

    def predict_proba(self, X):
        """Calibrated class probabilities.

        The map from decision values to probabilities is fitted online, on the decision
        values of examples taken *before* the model learned them (see
        ``fastbudget.calibration``). TVM, the perceptrons, Forgetron, Pegasos, BSGD, Span
        and ``IncrementalSVC`` score every row in their learning loop before they learn
        it, so ``fit`` and every chunk add to it; the other learners score each
        ``partial_fit`` / ``learn_one`` chunk after the first (a model of theirs fitted
        with a single ``fit`` call has only the sigmoid of its decision values). It is
        monotone, so probabilities rank examples as ``decision_function`` does, and
        ``predict_proba(X).argmax(1)`` is ``predict(X)``.

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
        return {c: float(v) for c, v in zip(plain(self.classes_.tolist()), p)}
