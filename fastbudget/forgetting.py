"""Forgetting on concept drift: the ``forgetting`` parameter of the budgeted learners.

``forgetting=None`` (the default) leaves a learner exactly as it is. With
``forgetting='auto'`` the learner scores every example before it learns it (test, then
train) and feeds its 0/1 error to a drift detector (``kernels.drift``: DDM on the error
rate since the model started, and a one-sided ADWIN cut test on its last ``W`` errors).
When the detector flags a drift, the model is replaced by a new one of the same learner,
which first learns the examples of the new concept that the detector points at (the
recent part of the window, at most ``W`` examples, kept in a circular buffer) and then
continues with the stream. Nothing needs tuning: the detector's levels are the papers'
(DDM 2 / 3 sd, ADWIN delta = 0.002) and ``W = 20 * budget`` (2000 for a learner without a
budget).

Why a detector and a restart: a budget learner that has learned one concept keeps
*defending* it. TVM learns an example only when ``|f(x)| <= m1`` (Beneficial), so after an
abrupt drift most of the examples the old model gets confidently wrong are never learned. A
restart at a detected drift reaches the accuracy of a model started fresh at the drift, and
relearning the buffered part of the new concept gives it the examples it missed while the
detector waited. A restarted model is checked once, ``W / 2`` examples later, against the
level of the model it replaced (a restart inside a gradual change can leave a model that
learned both concepts). An exponential decay of the stored weights (measured as new
examples weighing ``exp(t / tau)``) also tracked drift, but needs ``tau`` chosen per stream
and overflows on an endless stream without a renormalisation (``docs/results/drift.md``
has the figures and the alternatives measured).

Incremental drift, where the concept moves a little with every example, raises the error
of an old model too slowly for either test. So every ``W / 4`` examples a model that has
seen at least ``W``, and whose error over the last ``W / 2`` is above its rate since it
started by more than 1 sd, meets a younger rival: a new model of the same learner, trained on
the older half of the buffer and scored on the newer half, against the current model's
own (prequential) errors there. When the younger one is better by more than 3 sd of a
paired sign test, the model restarts on the whole buffer (``kernels.drift.challenge``).
The rival is a temporary model: while it is trained, a second model of the learner's
size exists (TVM, budget 100, 6 features: about 0.8 MB); it is dropped after the test.

Costs when on: one extra decision value per example (``O(budget * n_features)``), the
detector (``O(1)`` per example, ``O(W / 32)`` per 32 examples), the buffer
(``W * (n_features + 2)`` floats), the younger rival (learning ``W / 2`` examples and
scoring ``W / 2`` every ``W / 4`` examples), and a learn in pieces of at most ``PIECE`` rows with a
copy of the learner's state per piece after the first (the undo record of its
numerical-failure handling). The errors of a ``partial_fit`` chunk are those of the
model as it was at the start of each piece, so ``partial_fit`` on a chunk and ``learn_one`` on its rows (pieces
of one row) may flag a drift a few examples apart.
"""
import copy
import warnings
from collections import namedtuple

import numpy as np

from .exceptions import NumericalError
from .kernels import drift as kd

#: rows learned between two looks at the detector in ``partial_fit``
PIECE = 32
#: the example buffer and the error window hold this many examples per unit of budget
WINDOW_PER_BUDGET = 20
#: ... and this many for a learner without a budget
WINDOW_DEFAULT = 2000

ForgetState = namedtuple("ForgetState", ["err", "ist", "fs", "par", "X", "y", "w"])


def check_forgetting(est):
    """Raise ``ValueError`` unless ``est.forgetting`` is None or 'auto'."""
    f = est.forgetting
    if f is None or (isinstance(f, str) and f == "auto"):
        return
    raise ValueError(
        f"forgetting must be None (off: the model keeps every concept it learned) or "
        f"'auto' (detect concept drift and restart on the new concept); got {f!r}.")


def window(est):
    """W, the number of errors and examples the detector keeps, for ``est``."""
    B = getattr(est, "budget", None)
    return WINDOW_DEFAULT if B is None else WINDOW_PER_BUDGET * int(B)


def alloc(W, d):
    """The detector's state and the example buffer for W examples of d features."""
    det = kd.alloc_drift(W)
    return ForgetState(*det, X=np.zeros((W, d)), y=np.zeros(W), w=np.zeros(W))


def nbytes(W, d):
    """Bytes of ``alloc(W, d)``: ``W (1 + 8 (d + 2)) + 8 (N_DIST + N_DFS + N_DPAR)``."""
    return W * (1 + 8 * (d + 2)) + 8 * (kd.N_DIST + kd.N_DFS + kd.N_DPAR)


def state_of(est):
    """The forgetting state of a started learner (allocated on first use)."""
    fg = est.__dict__.get("forget_state_")
    if fg is None:
        fg = alloc(window(est), int(est.n_features_in_))
        est.forget_state_ = fg
    return fg


def _buffer(fg, X, y, w):
    """Append the rows to the circular example buffer (in place)."""
    W = fg.y.shape[0]
    n = X.shape[0]
    if n > W:
        X, y, w = X[-W:], y[-W:], w[-W:]
        n = W
    # the buffer position of an example is its error's position: the count fed so far
    # (the caller feeds the errors of these rows right after)
    idx = (int(fg.ist[kd.D_N]) + np.arange(n)) % W
    fg.X[idx] = X
    fg.y[idx] = y
    fg.w[idx] = w


def _feed(fg, X, y, w, e):
    """Buffer the rows and feed their errors ``e`` (bool) to the detector, in place;
    returns ``drift_update``'s cut (0: no drift)."""
    _buffer(fg, X, y, w)
    return kd.drift_update(fg.err, fg.ist, fg.fs, fg.par, e.astype(np.uint8))


def count_one(est, X, y_pm, w, f):
    """What :func:`learn` does with one row (``X`` of shape (1, d), label ``y_pm``,
    effective weight ``w``, decision value ``f`` before the row) that the learner only
    counts: feed it to the detector (a weight-0 row is not). Returns True; on a drift, or
    when a younger rival is due after the row (``kernels.drift.challenge_due``), puts the
    detector and its buffer back as they were and returns False, for the caller to take
    :func:`learn`'s path, which restarts the model or tries the rival."""
    if not w[0] > 0.0:
        return True
    fg = state_of(est)
    n = int(fg.ist[kd.D_N])
    row = n % fg.y.shape[0]
    err0, ist0, fs0 = fg.err[row], fg.ist.copy(), fg.fs.copy()
    x0, y0, w0 = fg.X[row].copy(), fg.y[row], fg.w[row]
    # a drift, or a younger rival to try after this row: learn's path does either
    if (_feed(fg, X, y_pm, w, (f > 0.0) != (y_pm > 0.0))
            or kd.challenge_due(fg.err, fg.ist, fg.fs, n)):
        fg.err[row], fg.X[row], fg.y[row], fg.w[row] = err0, x0, y0, w0
        fg.ist[:] = ist0
        fg.fs[:] = fs0
        return False
    return True


def learn(est, X, y_pm, w):
    """Learn a validated chunk (``X`` float64, ``y_pm`` in {-1, +1}, weights ``w``) with
    drift detection: the body of ``partial_fit`` for ``forgetting='auto'``.

    Runs inside the caller's transaction. Its snapshot holds the learner's state at the
    start of the call (a restart allocates a new model and leaves those arrays as they
    were); the detector and the buffer rows this call overwrites are put back here when an
    exception leaves, so the model is then exactly as before the call. A learner with an
    undo buffer (``_state_arrays``; TVM) rolls a failed piece back to the piece's start:
    the first piece of a call uses the transaction's buffer, later pieces a second buffer
    kept as ``_undo_piece``.
    """
    fg = state_of(est)
    W = fg.y.shape[0]
    n0 = int(fg.ist[kd.D_N])
    rows = (n0 + np.arange(min(X.shape[0], W))) % W
    saved = ([a.copy() for a in (fg.err, fg.ist, fg.fs)],
             (fg.X[rows], fg.y[rows], fg.w[rows]))
    d = est.__dict__
    outer = d.get("_undo")
    pieces = d.pop("_undo_piece", None)
    first = True
    try:
        for start in range(0, X.shape[0], PIECE):
            Xp, yp, wp = (X[start:start + PIECE], y_pm[start:start + PIECE],
                          w[start:start + PIECE])
            live = wp > 0.0
            e = ((est._decision(Xp) > 0.0) != (yp > 0.0)) if est._forget_started() else None
            if not first:
                _piece_undo(est, outer, pieces)
                est._save_undo()
                pieces = d.get("_undo")
            first = False
            est._partial_fit_encoded(Xp, yp, wp)
            if e is None or not live.any():
                continue
            # weight-0 rows are not part of the stream's concept: neither buffered nor scored
            n_before = int(fg.ist[kd.D_N])
            cut = _feed(fg, Xp[live], yp[live], wp[live], e[live])
            if not cut and kd.challenge_due(fg.err, fg.ist, fg.fs, n_before):
                cut = _challenge(est, fg)
            if cut:
                _restart(est, fg, cut, outer, pieces)
                pieces = d.get("_undo")
                first = False
    except BaseException:
        for a, b in zip((fg.err, fg.ist, fg.fs), saved[0]):
            a[...] = b
        fg.X[rows], fg.y[rows], fg.w[rows] = saved[1]
        raise
    finally:
        if pieces is not None and pieces is not outer:
            d["_undo_piece"] = pieces
        if outer is None:
            d.pop("_undo", None)
        else:
            d["_undo"] = outer


def _younger(est):
    """A new, empty model of the same learner (its parameters, classes, features and
    ``gamma_``), sharing no array with ``est``: what a restart would start from."""
    ch = copy.copy(est)
    d = ch.__dict__
    for k in ("forget_state_", "_calibration_stats", "_scores_out", "_undo", "_undo_piece"):
        d.pop(k, None)
    for k, v in d.items():
        if isinstance(v, (np.random.Generator, np.random.RandomState)):
            d[k] = copy.deepcopy(v)      # its draws must not advance the model's generator
    ch._forget_reset()
    return ch


def _challenge(est, fg):
    """Train a younger model on the older half of the buffer, score the newer half, and
    return ``kernels.drift.challenge``'s cut (``W``: restart on the whole buffer; 0: keep
    the model). ``est`` is not changed."""
    W = fg.y.shape[0]
    h = W // 2
    n = int(fg.ist[kd.D_N])
    old = (n - W + np.arange(h)) % W
    new = (n - h + np.arange(h)) % W
    y_old = fg.y[old]
    if not ((y_old > 0).any() and (y_old < 0).any()):
        return 0                          # one class: no model to compare
    ch = _younger(est)
    try:
        with warnings.catch_warnings():
            # what the rival's learning warns about (a skipped example, a collapse) is not
            # about the user's model. (Python's warning filters are process-wide: a warning
            # another thread raises during these few milliseconds is not shown either.)
            warnings.simplefilter("ignore")
            ch._partial_fit_encoded(fg.X[old], y_old, fg.w[old])
            f = ch._decision(fg.X[new])
    except NumericalError:
        return 0          # a rival that cannot be trained does not win
    ech = ((f > 0.0) != (fg.y[new] > 0.0)).astype(np.uint8)
    return kd.challenge(fg.err, fg.ist, fg.par, ech)


def _piece_undo(est, outer, pieces):
    """Bind the second undo buffer (or none yet) in place of the transaction's."""
    if pieces is None or pieces is outer:
        est.__dict__.pop("_undo", None)
    else:
        est.__dict__["_undo"] = pieces


def _restart(est, fg, cut, outer=None, pieces=None):
    """Replace the model by a new one that has learned the last ``cut`` buffered examples."""
    W = fg.y.shape[0]
    idx = (int(fg.ist[kd.D_N]) - cut + np.arange(cut)) % W
    est._forget_reset()
    kd.restart(fg.err, fg.ist, fg.fs)
    _piece_undo(est, outer, pieces)
    est._save_undo()
    est._partial_fit_encoded(fg.X[idx], fg.y[idx], fg.w[idx])


def get_state(est):
    """The forgetting state as ``forget_<name>`` arrays for ``_get_state`` ({} when off or
    not started)."""
    fg = est.__dict__.get("forget_state_")
    if getattr(est, "forgetting", None) is None or fg is None:
        return {}
    return {"forget_" + k: v.copy() for k, v in fg._asdict().items()}


def set_state(est, state):
    """Restore what ``get_state`` wrote (absent in files saved without forgetting: the
    detector then starts afresh). Raises ``ValueError`` on arrays of the wrong layout."""
    est.__dict__.pop("forget_state_", None)
    if "forget_ist" not in state:
        return
    if getattr(est, "forgetting", None) is None:
        raise ValueError("the file holds a drift detector's state but forgetting is None")
    ref = alloc(window(est), int(est.n_features_in_))
    arrays = {}
    for k, r in ref._asdict().items():
        a = state.get("forget_" + k)
        if not isinstance(a, np.ndarray) or a.shape != r.shape or a.dtype != r.dtype:
            raise ValueError(
                f"forget_{k} must be a {r.dtype} array of shape {r.shape} for this model; "
                f"got {getattr(a, 'dtype', type(a))} {getattr(a, 'shape', '')}")
        arrays[k] = np.ascontiguousarray(a)
    ist = arrays["ist"]
    n, start, W = int(ist[kd.D_N]), int(ist[kd.D_START]), ref.y.shape[0]
    # the invariants the detector keeps (``kernels.drift``): a crafted state that breaks one
    # could divide by zero or index past the window at the next chunk
    if not (0 <= start <= n and -1 <= ist[kd.D_WARN] <= n
            and ist[kd.D_DN] == n - start and 0 <= ist[kd.D_DK] <= ist[kd.D_DN]
            and 0 <= ist[kd.D_SINCE] <= n - start and ist[kd.D_DRIFTS] >= 0
            and (ist[kd.D_LAST] == -1 or 0 <= ist[kd.D_LAST] <= n)
            and (ist[kd.D_PROBE] == -1 or start <= ist[kd.D_PROBE] <= n + W)
            and 0 <= ist[kd.D_KIND] <= 3):
        raise ValueError("forget_ist holds inconsistent positions or counts")
    if not np.array_equal(arrays["par"], ref.par):
        raise ValueError(f"forget_par must hold the detector's parameters {ref.par.tolist()}")
    fs = arrays["fs"]
    if not (np.all(np.isfinite(fs)) and np.all((fs >= 0.0) & (fs <= kd.NONE))):
        raise ValueError(f"forget_fs must hold rates in [0, {kd.NONE}]")
    if not (np.all(arrays["err"] <= 1) and np.all(np.isin(arrays["y"], (-1.0, 0.0, 1.0)))
            and np.all(np.isfinite(arrays["X"])) and np.all(np.isfinite(arrays["w"]))
            and np.all(arrays["w"] >= 0.0)):
        raise ValueError("forget_err, forget_y, forget_X or forget_w hold values no stream "
                         "gives (errors 0/1, labels -1/+1, finite rows, weights >= 0)")
    est.forget_state_ = ForgetState(**arrays)
