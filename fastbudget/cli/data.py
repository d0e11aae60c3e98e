"""The data a command reads: ``DATA`` (a file, ``-`` or ``gen:NAME``) opened as chunks
``(X, y)`` with the reading options (:func:`open_data`), standardised for a new model
(:func:`standardized_stream`) or read as a saved model's training data was
(:func:`model_chunks`), and rows named by their line (:class:`Where`)."""
import itertools
import math
import os
import warnings

import numpy as np

from .._progress import note, warn
from ..datasets import StreamingStandardizer, read_csv, read_libsvm, stream_chunks
from ..datasets.readers import RowLines
from ..datasets.sniff import detect_format
from ..exceptions import FeatureCountError, FormatError
from ..persist import SCALER_SUFFIX
from .errors import CLIError, cli_wording, no_rows, raise_row_error, row_error_like, width_error
from .scaler import Scaler
from .values import YES_NO_AUTO, delimiter_option, parse_kv, parse_value


GENERATORS = ("checkerboard", "gauss", "waveform", "drifting_gaussians",
              "streamsvm_A", "streamsvm_B", "streamsvm_C")


def open_data(opts, bad=None, n_features=None, chunk_size=None, label_type="auto",
              zero_based="auto", indexing=None, row_lines=None, csv_options=None):
    """Chunks ``(X, y)`` of the source named by ``opts.data``; also a short description.

    ``bad`` (a :class:`~fastbudget.cli.bad_rows.BadRows`, for ``--on-bad-row skip``) is
    called for each row the reader leaves out and sets the classes from the first chunk.
    ``n_features`` (a saved model's) is used for LIBSVM files, whose missing trailing columns
    are zeros; other sources must have exactly that many columns (checked by the caller).
    ``row_lines`` (a :class:`~fastbudget.datasets.readers.RowLines`) records the line of each
    row of a file or standard input. ``csv_options``: the CSV label column and delimiter
    recorded beside a saved model, the defaults of ``--label-column``/``--delimiter``;
    ``indexing['csv']`` is set to those used when the source is CSV.
    """
    chunk_size = chunk_size or opts.chunk_size
    data = opts.data
    if data.startswith("gen:"):
        name = data[4:]
        if name not in GENERATORS:
            raise CLIError(f"unknown generator {name!r}; choose one of {', '.join(GENERATORS)}.")
        params = parse_kv(opts.gen_param, "--gen-param")
        try:
            chunks = stream_chunks(name, opts.n, chunk_size, random_state=opts.seed, **params)
            first = next(chunks)
        except TypeError as exc:
            raise CLIError(f"bad --gen-param for {name}: {exc}") from None
        except StopIteration:
            raise CLIError(f"the stream gen:{name} has no rows; pass --n N with N >= 1.") from None
        return itertools.chain([first], chunks), f"{name} stream ({opts.n:,} rows)", opts.n
    fmt, src = data_format(data, opts.format, opts.comments)
    if fmt == "libsvm":
        model_width = n_features is not None
        n_features, zero_based = _libsvm_options(opts, n_features, zero_based)
        chunks = read_libsvm(src, n_features=n_features, chunk_size=chunk_size,
                             zero_based=zero_based, indexing=indexing, row_lines=row_lines,
                             **_skipping(opts, bad))
        chunks = _reader_cli_errors(chunks, model_width)
    else:
        label, delim = _csv_options(opts, csv_options, n_features)
        if indexing is not None:          # how the columns were read, kept beside the model
            indexing["csv"] = {"label_column": label, "delimiter": delim}
        header = YES_NO_AUTO[opts.header]
        try:
            chunks = read_csv(src, label_column=label, chunk_size=chunk_size,
                              label_type=label_type, delimiter=delim, header=header,
                              row_lines=row_lines, comments=opts.comments,
                              **_skipping(opts, bad))
        except ValueError as exc:             # the options' checks (--comments ...)
            raise CLIError(cli_wording(str(exc))) from None
        chunks = _reader_cli_errors(chunks, False)
    if bad is not None:
        chunks = bad.latch(chunks)
    return chunks, f"{data} ({fmt})", None


def data_format(path, fmt, comments):
    """:func:`fastbudget.datasets.sniff.detect_format`, its errors as :class:`CLIError`
    worded with the options."""
    try:
        return detect_format(path, fmt, comments)
    except (FormatError, FileNotFoundError, IsADirectoryError) as exc:
        raise CLIError(cli_wording(str(exc))) from None


def _skipping(opts, bad):
    """The readers' arguments for ``--on-bad-row``: for ``error``, a callback that raises
    the reader's error marked as a row error (see :func:`~fastbudget.cli.errors.row_error`)."""
    if bad is None:
        return {"on_bad_row": raise_row_error} if opts.on_bad_row is not None else {}
    return {"on_bad_row": bad, "_label_check": bad.check_labels}


def _libsvm_options(opts, n_features, zero_based):
    """``(n_features, zero_based)`` for reading a LIBSVM source: a saved model's
    ``n_features`` (``--n-features``, if given, must be the same) and recorded
    ``zero_based`` (``--zero-based`` overrides it, with a warning when it contradicts it),
    else the options, else 'auto'."""
    given = opts.n_features
    if given is not None:
        if n_features is not None and given != n_features:
            raise CLIError(f"--n-features {given}, but the model was trained on {n_features} "
                           f"features; leave --n-features out.")
        n_features = given
    given = opts.zero_based
    if given is not None:
        want = YES_NO_AUTO[given]
        if zero_based != "auto" and want != zero_based:
            warn(f"--zero-based {given}, but the model's training file had "
                 f"{'zero' if zero_based else 'one'}-based indices (recorded in "
                 f"{opts.model}{SCALER_SUFFIX}); using --zero-based {given} as asked.")
        zero_based = want
    return n_features, zero_based


def _reader_cli_errors(chunks, model_width):
    """A reader's chunks, with its advice about its arguments given as the command line
    options (``n_features`` -> ``--n-features``, ``zero_based`` -> ``--zero-based``,
    ``comments=None`` -> ``--comments none`` ...). With ``model_width`` (a LIBSVM source
    whose width is a saved model's) a wider line is left to the caller."""
    try:
        yield from chunks
    except ValueError as exc:
        if model_width and isinstance(exc, FeatureCountError):
            raise
        msg = str(exc)
        new = cli_wording(msg)
        if new == msg:
            raise
        raise row_error_like(CLIError(new), exc) from None


def _csv_options(opts, recorded, n_features):
    """``(label_column, delimiter)`` for reading a CSV source: the options given, else those
    ``recorded`` beside a saved model (its training data's), else the defaults (the last
    column; the delimiter sniffed). A given option that names another column than the
    recorded one is used, with a warning."""
    recorded = recorded or {}
    given = opts.label_column
    if given is None:
        label = recorded.get("label_column", -1)
    else:
        label = parse_value(str(given))
        rec = recorded.get("label_column")
        # None (no label column, e.g. predicting unlabelled rows) never contradicts it
        if rec is not None and label is not None and not _same_column(label, rec, n_features):
            warn(f"--label-column {given} is not the label column the model was trained "
                 f"with ({rec}, recorded in {opts.model}{SCALER_SUFFIX}); reading the label "
                 f"from column {given} as asked (leave the option out to use the recorded "
                 f"one).")
    given = opts.delimiter
    rec = recorded.get("delimiter")
    if given is None:
        delim = rec
    else:
        delim = delimiter_option(given)
        if rec is not None and delim != rec:
            warn(f"--delimiter {given!r} is not the field separator the model was trained "
                 f"with ({rec!r}, recorded in {opts.model}{SCALER_SUFFIX}); using {given!r} "
                 f"as asked.")
    return label, delim


def _same_column(a, b, n_features):
    """Whether label columns ``a`` and ``b`` (indexes, negative from the end, or names) are
    the same column of rows of ``n_features`` features and a label."""
    if a == b:
        return True
    if isinstance(a, int) and isinstance(b, int) and n_features is not None:
        n = n_features + 1
        return -n <= a < n and -n <= b < n and a % n == b % n
    return False


class Where:
    """Names a row of the data by its number in the stream: ``where(i)`` is ``'FILE, line
    L'`` (header, blank and comment lines counted) for a file or standard input, else
    ``'DATA, row i+1'``."""

    def __init__(self, opts):
        self.data = opts.data
        self.rows = None if opts.data.startswith("gen:") else RowLines()

    def forget_before(self, i):
        """Rows before ``i`` will not be named again (their chunks are learned): drop their
        lines, so that a long stream with comment lines does not grow the record."""
        if self.rows is not None:
            self.rows.forget_before(i)

    def __call__(self, i):
        if self.rows is not None and i < self.rows.n_rows:
            name = "<stdin>" if self.data == "-" else self.data
            return f"{name}, line {self.rows.line(i):,}"
        return f"{self.data}, row {i + 1:,}"


def standardized_stream(opts, chunks, name, bad=None, row_lines=None):
    """Apply ``--standardize``; return (chunks, Scaler). ``row_lines``: the RowLines that
    ``chunks`` fill, started again for the second pass of ``pass`` (as ``bad``, the
    bad-row record, if any)."""
    mode = opts.standardize
    clip = opts.clip
    if clip is not None and not (math.isfinite(clip) and clip > 0):
        raise CLIError(f"--clip must be a positive number of standard deviations; got {clip}.")
    if mode == "none":
        if clip is not None:
            raise CLIError("--clip applies to standardised values: use it with "
                           "--standardize warmup or pass.")
        return chunks, Scaler()
    if mode == "warmup":
        st = StreamingStandardizer(n_warmup=opts.warmup_rows, clip=clip)
        out = st.transform_stream(chunks)
        first, out = peek(out, name)  # the warm-up window is complete (or the stream ended)
        return out, Scaler(st.mean_, st.scale_, "warmup", st.n_samples_seen_, clip)
    if mode == "pass":
        if opts.data == "-":
            raise CLIError("--standardize pass needs two passes; it cannot read standard input "
                           "(use --standardize warmup).")
        st = StreamingStandardizer(n_warmup=None, clip=clip).fit(chunks)
        if row_lines is not None:
            row_lines.clear()
        if bad is not None:
            bad.restart()
        chunks2, _, _ = open_data(opts, bad, row_lines=row_lines)
        return ((st.transform(X), y) for X, y in chunks2), Scaler(st.mean_, st.scale_, "pass",
                                                                  st.n_samples_seen_, clip)
    raise CLIError(f"unknown --standardize {mode!r}: use warmup, pass or none.")


def peek(chunks, desc):
    """``(first chunk, all the chunks)``; a :class:`CLIError` when there is none."""
    it = iter(chunks)
    try:
        first = next(it)
    except StopIteration:
        raise no_rows(desc) from None
    return first, itertools.chain([first], it)


def model_chunks(opts, model, scaler, bad=None, row_lines=None):
    """The data of a command on a saved model, read as the training data was (CSV labels as
    the model's, text or numbers; LIBSVM indices with the training file's base and the
    model's number of features), checked against the model's width and standardised:
    (chunks, description, number of rows or None)."""
    d = model.n_features_in_
    if not scaler.found:
        note(f"note: no {os.path.basename(opts.model)}{SCALER_SUFFIX} beside the model, so "
             f"the data is used as given; a model saved by 'fastbudget train' needs that file "
             f"(its standardisation and LIBSVM indexing): copy it with the model.", opts.quiet)
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        # the rows read here have no names: say once how they are taken, rather than let
        # every chunk warn about it
        shown = ", ".join(map(str, names[:6])) + (", ..." if len(names) > 6 else "")
        note(f"note: the model was fitted in Python on named columns ({shown}); the data's "
             f"columns are taken by position as those, in that order.", opts.quiet)
        warnings.filterwarnings("ignore", message="This X has no column names",
                                category=UserWarning)
    text = np.asarray(model.classes_).dtype.kind in "OUS"
    zb = "auto" if scaler.zero_based is None else scaler.zero_based
    if bad is not None:
        bad.width = d                    # a wider LIBSVM row is a bad row
    chunks, desc, total = open_data(opts, bad, n_features=d, zero_based=zb,
                                    label_type="str" if text else "numeric", row_lines=row_lines,
                                    csv_options=scaler.csv)

    def ready():
        try:
            for X, y in chunks:
                if X.shape[1] != d:          # CSV and gen: sources (LIBSVM is read at d)
                    hint = ""
                    if y is not None and X.shape[1] == d - 1 and opts.command == "predict":
                        hint = (" If its rows have no label (one column of each was read as "
                                "the label), pass --label-column none.")
                    raise CLIError(f"{desc} has {X.shape[1]} features but the model was "
                                   f"trained on {d}.{hint}")
                yield scaler(X), y
        except FeatureCountError as exc:
            raise row_error_like(CLIError(width_error(exc.where, d)), exc) from None

    return ready(), desc, total
