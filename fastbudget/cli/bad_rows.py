"""``--on-bad-row``: the rows a command leaves out with ``skip`` (:class:`BadRows`) and the
labels that are not one of the model's classes (:func:`check_labels`)."""
import numpy as np

from .._progress import warn
from ..exceptions import FeatureCountError
from .errors import CLIError, cli_wording, row_error, width_error
from .values import labels_fmt, parse_classes


class BadRows:
    """``--on-bad-row skip``: the readers' ``on_bad_row`` callback. Each row left out gives
    a warning line naming its line and the error it would have stopped the command with
    (the first ``SHOWN``; then one line saying that only their count follows), and
    ``summary()`` counts them for the command's last line. With ``labels`` (commands that
    learn) a row whose label is not one of the model's classes is left out too:
    ``classes`` are the model's (``saved``), ``--classes`` or, left None, those of the
    first chunk (set by ``latch``)."""

    SHOWN = 10
    LINES = 5

    def __init__(self, opts, labels):
        self.name = "<stdin>" if opts.data == "-" else opts.data
        self.labels = labels
        self.classes = None
        self.saved = False
        self.width = None            # a saved model's number of features (LIBSVM)
        self.count = 0
        self.lines = []
        self.replay = 0

    def __call__(self, line, exc):
        self.count += 1
        if len(self.lines) < self.LINES:
            self.lines.append(line)
        if self.count <= self.replay:     # the second pass of --standardize pass
            return
        if self.count <= self.SHOWN:
            if self.width is not None and isinstance(exc, FeatureCountError):
                msg = width_error(exc.where, self.width)
            else:
                msg = cli_wording(str(exc))
            warn(f"skipped a bad row: {msg}")
        elif self.count == self.SHOWN + 1:
            warn(f"more bad rows skipped; past the first {self.SHOWN}, only their number "
                 f"is given, at the end.")

    def restart(self):
        """The source is read again from its start: its bad rows are not shown again."""
        self.replay = max(self.replay, self.count)
        self.count = 0
        self.lines = []

    def latch(self, chunks):
        """The chunks; the labels of the first one are the classes when none are set."""
        for X, y in chunks:
            if self.labels and self.classes is None and y is not None:
                self.classes = np.unique(y)
            yield X, y

    def check_labels(self, y, lines):
        """``(k, error)`` for each label ``y[k]`` (on line ``lines[k]``) that is not one of
        the classes."""
        if not self.labels or self.classes is None:
            return []
        bad = unknown_labels(y, self.classes)
        return [(int(k), CLIError(label_error(f"{self.name}, line {int(lines[k]):,}", y[k],
                                              self.classes, self.saved)))
                for k in np.flatnonzero(bad)]

    def summary(self):
        if not self.count:
            return "no bad rows skipped"
        more = ", ..." if self.count > len(self.lines) else ""
        return (f"{self.count:,} bad row{'s' if self.count != 1 else ''} skipped "
                f"(line{'s' if self.count != 1 else ''} "
                f"{', '.join(f'{v:,}' for v in self.lines)}{more})")


def _bad_rows(opts, labels):
    """A :class:`BadRows` for ``--on-bad-row skip``, else None."""
    return BadRows(opts, labels) if opts.on_bad_row == "skip" else None


def new_model_bad_rows(opts, classes):
    """``--on-bad-row`` of a command that learns a new model: rows with a label outside
    ``--classes`` (``classes``, as given), or (without it) outside the first chunk's
    labels, are bad rows."""
    bad = _bad_rows(opts, labels=True)
    if bad is not None and classes is not None:
        bad.classes = np.unique(parse_classes(classes))
    return bad


def saved_model_bad_rows(opts, model, labels=True):
    """``--on-bad-row`` of a command on a saved model (its classes and width)."""
    bad = _bad_rows(opts, labels)
    if bad is not None:
        bad.classes = np.asarray(model.classes_)
        bad.saved = True
    return bad


def check_labels(y, classes, row0, where, saved):
    """Refuse a chunk with a label outside ``classes`` before the model sees it, naming
    the row's line (the learner's own message counts rows within the chunk). ``row0`` is
    the stream row of ``y[0]``; ``saved``: the classes are a saved model's."""
    bad = unknown_labels(y, classes)
    if not bad.any():
        return
    i = int(np.argmax(bad))
    raise row_error(CLIError(label_error(where(row0 + i), y[i], classes, saved)))


def unknown_labels(y, classes):
    """Whether each label of ``y`` is not one of ``classes``."""
    cls = np.asarray(classes)
    try:
        return ~np.isin(y, cls)
    except TypeError:
        return np.array([not any(v == c for c in cls.tolist()) for v in y.tolist()],
                        dtype=bool)


def label_error(where, label, classes, saved):
    """The message for ``label`` (on the row ``where``) outside ``classes``."""
    known = [labels_fmt(c) for c in np.asarray(classes)]
    if saved:
        fix = ("a saved model cannot learn a new class; train a new model with --classes "
               "listing every label")
    else:
        fix = ("the classes are fixed by the first chunk (or --classes): pass --classes "
               f"with every label, e.g. --classes {','.join(known + [labels_fmt(label)])}")
    return (f"{where}: label {labels_fmt(label)} is not one of the model's classes "
            f"({', '.join(known)}); {fix}.")
