"""Learning a stream: ``partial_fit`` chunk by chunk with checkpoints (:func:`learn_stream`),
SIGINT and SIGTERM ending it after a complete chunk (:func:`stoppable`), and the summary
line (:func:`finish`)."""
import contextlib
import os
import signal
import threading
import time

from .._progress import note
from ._learners import memory_text
from .bad_rows import check_labels
from .errors import CLIError
from .files import save_model
from .scaler import SCALER_SUFFIX


class _Stop(Exception):
    """Raised by the signal handler of :func:`stoppable` to leave a blocking read."""


@contextlib.contextmanager
def stoppable():
    """SIGINT and SIGTERM end a stream early instead of the process.

    Yields a dict: set ``busy`` while the model or its file is being changed; a signal that
    arrives then is only recorded in ``signal`` (the caller stops after that step), a signal
    at any other moment, e.g. while a read waits for a live feed, raises ``_Stop``
    at once. Outside the main thread (no handlers there) it only yields the dict."""
    state = {"busy": False, "signal": None}

    def handler(signum, frame):
        state["signal"] = signum
        if not state["busy"]:
            raise _Stop()

    old = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, handler)
    try:
        yield state
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def until_stopped(chunks, state, needs):
    """The labelled chunks, until the stream ends or a signal is recorded in ``state``."""
    for X, y in chunks:
        if y is None:
            raise CLIError(f"the data has no label column; {needs}.")
        yield X, y
        if state["signal"] is not None:
            return


def learn_stream(model, chunks, classes, bar, where, checkpoint=None, every=None):
    """partial_fit over the chunks, calling ``checkpoint()`` after every ``every`` rows (at
    the end of the chunk that reaches a multiple of ``every``, so that checkpoints keep
    ``every`` rows apart on average whatever the chunk size) and stopping early on SIGINT/SIGTERM with the model as it was after
    its last complete chunk. A chunk with a label the model does not know stops it with an
    error that names the row by ``where`` (see :class:`Where`); with ``--on-bad-row skip``
    the reader has left such rows out already (:class:`BadRows`). Returns (n rows learned,
    seconds in partial_fit, the signal's name or None, number of checkpoints)."""
    n = n_saves = 0
    t_fit = 0.0
    first = True
    with stoppable() as state:
        try:
            for X, y in until_stopped(chunks, state, "pass --label-column"):
                check_labels(y, classes if first and classes is not None else model.classes_,
                             n, where, saved=classes is None)
                where.forget_before(n)
                state["busy"] = True
                t = time.perf_counter()
                if first:
                    model.partial_fit(X, y, classes=classes)
                    first = False
                else:
                    model.partial_fit(X, y)
                t_fit += time.perf_counter() - t
                n += X.shape[0]
                if every and n // every > (n - X.shape[0]) // every:
                    checkpoint()          # this chunk crossed a multiple of ``every`` rows
                    n_saves += 1
                state["busy"] = False
                bar.update(X.shape[0])
        except _Stop:
            pass
    sig = state["signal"]
    return n, t_fit, (None if sig is None else signal.Signals(sig).name), n_saves


def check_features(X0, desc):
    """A new model needs at least one feature column."""
    if X0.shape[1] == 0:
        raise CLIError(
            f"{desc} has no feature columns, only the label: is the field separator one that "
            f"is not sniffed (tab, ';', ',', whitespace)? Pass it with --delimiter.")


def check_every(every):
    """``--checkpoint-every`` (None: not given), refused unless positive."""
    if every is not None and every < 1:
        raise CLIError(f"--checkpoint-every must be a positive number of rows; got {every}.")
    return every


def finish(model, scaler, out, n, wall, what, d, stop, n_saves, bad=None):
    """Save the model after a stream (also after SIGINT/SIGTERM) and print the summary
    (with ``bad``, a :class:`BadRows`, the number of bad rows skipped)."""
    if stop is not None and n == 0:
        note(f"fastbudget: stopped by {stop} before a chunk was learned; nothing saved.")
        return 130 if stop == "SIGINT" else 143
    save_model(model, scaler, out)
    mem = memory_text(model)
    if stop is not None:
        note(f"stopped by {stop}: the model learned the stream up to its last complete "
             f"chunk; saving it.")
    saves = f"; {n_saves} checkpoint{'s' if n_saves != 1 else ''}" if n_saves else ""
    if bad is not None:
        saves += f"; {bad.summary()}"
    print(f"{what} on {n:,} examples x {d} features in {wall:.2f} s "
          f"({n / max(wall, 1e-9):,.0f} examples/s){saves}; model memory {mem}; saved to {out}"
          + (f" (+ {os.path.basename(out) + SCALER_SUFFIX})" if scaler.found else
             f" (without {os.path.basename(out) + SCALER_SUFFIX}, as it was loaded)"))
    return 0
