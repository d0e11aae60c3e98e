"""The files a command reads and writes: saved models with their scaler file
(:func:`load_model`, :func:`save_model`), the checks on an output before any work, and the
lock of a model file being written (:func:`model_locks`)."""
import contextlib
import os
import sys

import fastbudget

from .. import serving
from .._progress import note
from ..exceptions import ModelLockedError
from ..persist import model_lock
from .errors import CLIError
from .scaler import SCALER_SUFFIX, Scaler


def load_model(path):
    """``(model, Scaler)`` of the model file ``path``; a :class:`CLIError` for a missing or
    unusable file."""
    if not os.path.exists(path):
        raise CLIError(f"no such model file: {path}")
    try:
        # (its warning that X must be standardised is for Python: the commands here
        # read the scaler file themselves)
        model = fastbudget.persist.load_model(path, _warn_scaler=False)
    except fastbudget.ModelFormatError as exc:
        raise CLIError(f"{path} is not a usable fastbudget model: {exc}") from None
    return model, Scaler.load(path)


def load_predictor(path):
    """``load_model`` for the commands that only predict: the model scored with NumPy
    alone (``fastbudget.serving``), with the same refusals as ``load_model``."""
    if not os.path.exists(path):
        raise CLIError(f"no such model file: {path}")
    try:
        model = serving.load_predictor(path)
    except serving.ModelFormatError as exc:
        raise CLIError(f"{path} is not a usable fastbudget model: {exc}") from None
    return model, Scaler.load(path)


def check_output(path, option):
    """Refuse, before any work, a place a file cannot be written to."""
    if not path.strip():
        raise CLIError(f"{option} needs a file name; got an empty one ({option} '').")
    if os.path.isdir(path):
        raise CLIError(f"{option} {path} is a directory; give a file name, e.g. "
                       f"{os.path.join(path, 'model.npz')}.")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CLIError(f"{option} {path}: the directory {parent} does not exist; create it "
                       f"first.")
    if not os.access(parent, os.W_OK):
        raise CLIError(f"{option} {path}: the directory {parent} is not writable.")


def check_out_dir(path, option="--out"):
    """Refuse, before any work, an output directory that cannot be one."""
    if not path.strip():
        raise CLIError(f"{option} needs a directory name; got an empty one ({option} '').")
    if os.path.exists(path) and not os.path.isdir(path):
        raise CLIError(f"{option} {path} is a file, not a directory (the command writes its "
                       f"files into it); give a new or existing directory name.")


def check_not_input(path, option, inputs):
    """Refuse an output file that is one of the command's inputs (``(what, path)`` pairs):
    writing it would destroy what is being read."""
    if not os.path.exists(path):
        return
    for what, src in inputs:
        if src == "-":                     # standard input redirected from the file?
            try:
                st, out = os.fstat(sys.stdin.fileno()), os.stat(path)
                same = (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino)
            except (OSError, ValueError, AttributeError):
                same = False
            src = "standard input"
        else:
            same = bool(src) and os.path.exists(src) and os.path.samefile(path, src)
        if same:
            raise CLIError(f"{option} {path} is the {what} ({src}); writing it would destroy "
                           f"the {what}. Give another output file.")


def save_model(model, scaler, out):
    """Save the model and its scaler sidecar; a model whose sidecar was missing when it was
    loaded gets none (one would say 'no standardisation' and silence the note of every
    later command), and an old sidecar of the file it replaces is removed."""
    if scaler.found:
        scaler.save(out, model)        # (both files change, or neither)
    else:
        model.save(out)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.fspath(out) + SCALER_SUFFIX)


@contextlib.contextmanager
def model_locks(opts, *paths):
    """Hold the lock of every model file in ``paths`` (``persist.model_lock``, in a fixed
    order) for a command that reads a model and writes it back, or writes one: a second
    writer of the same file waits (saying so), or with ``--no-wait`` refuses."""

    def waiting(path):
        def on_wait(pid):
            who = f"process {pid}" if pid else "another process"
            note(f"fastbudget: waiting for {who} to finish writing {path} (it holds "
                 f"{path}.lock; --no-wait refuses instead)", opts.quiet)
        return on_wait

    unique = sorted({os.path.abspath(os.fspath(p)) for p in paths if p is not None})
    with contextlib.ExitStack() as stack:
        for path in unique:
            try:
                stack.enter_context(model_lock(path, wait=not opts.no_wait,
                                               on_wait=waiting(path)))
            except ModelLockedError as exc:
                raise CLIError(f"{exc} (--no-wait)") from None
        yield
