"""The ``fastbudget`` command line: demo, train, update, predict, evaluate, prequential, reproduce,
warmup.

Every command streams its data in chunks (constant memory whatever the file size), shows a
progress bar on standard error when it is a terminal (``--quiet`` turns it off), and reports
errors as one line ``fastbudget: error: ...`` with exit status 2 instead of a traceback.

Bad rows (``--on-bad-row``, ``train``/``update``/``prequential``/``evaluate``): by default
(``error``) the first malformed row stops the command with an error naming its line and
saying how to go on past such rows. With
``skip`` a row the reader refuses (a field that is not a finite number, a wrong number of
fields, a bad LIBSVM index or one beyond a saved model's features, a quoted field) and, for
the commands that learn, a row whose label is not one of the model's classes (a saved
model's, ``--classes``, or the first chunk's) is left out: the rest of its chunk and the
stream go on, as if the row were not in the data (chunks are still ``--chunk-size`` rows of
the rows kept, so the model is the one learned from the stream without them). Each one gives
a warning line ``fastbudget: warning: skipped a bad row: FILE, line L: REASON`` (the error's
text) for the first 10, then one line saying that only their number follows; the summary
line counts them and gives the first lines. ``--quiet`` does not hide them. What is not a
row still stops the command (an unreadable file, a label column not in the header, a format
that cannot be told). ``predict`` has no ``--on-bad-row``: its output lines follow the input
rows one for one, and a bad row stops it.

Data sources (the ``DATA`` argument):

- a path to a LIBSVM/svmlight or delimited text (CSV/TSV) file, plain or gzip/bzip2/xz
  compressed; ``--format auto`` (default) tells them apart by the file name (``.libsvm``,
  ``.svm``, ``.svmlight``, ``.scale``; ``.csv``, ``.tsv``, ``.tab``), else by the first line
  (``index:value`` tokens mean LIBSVM): ``.t``, ``.tr`` and ``.dat`` are read either way
  (LIBSVM's test files and SVMlight's examples use them, and so do plain tables such as
  Ripley's ``synth.tr``). CSV fields are separated by a tab, ``;``, ``,`` or whitespace
  (sniffed from the first line; ``--delimiter`` to say); quoted fields are refused with a
  message, except a header's names; lines whose first non-blank character is ``#`` are
  comments, skipped (``--comments CHAR`` for another character, ``--comments none`` for
  none; a ``#`` after data on a line is an error);
- ``-`` for standard input (a LIBSVM stream's number of features is that of its first chunk
  unless ``--n-features N`` says it, and its index base too unless ``--zero-based yes|no``);
- ``gen:NAME`` for a built-in synthetic stream (``checkerboard``, ``gauss``, ``waveform``,
  ``drifting_gaussians``, ``streamsvm_A``/``B``/``C``) with ``--n`` rows, ``--seed`` and
  ``--gen-param k=v`` (e.g. ``--gen-param noise=0.15``).

Standardisation (``train --standardize``): ``warmup`` (default) takes the mean and standard
deviation of the first ``--warmup-rows`` rows and then freezes them; ``pass`` makes one extra
pass over the file first (not possible on standard input); ``none`` uses the data as given.
``--clip SD`` clips the standardised values to ``[-SD, SD]`` (rows far out on heavy-tailed
attributes otherwise become isolated twins of a budget learner). ``train`` saves next to the
model ``<model>.scaler.json`` (JSON: ``mode``; with standardisation ``mean`` and ``scale``
lists and ``clip``; ``libsvm_zero_based``, the index base of a LIBSVM training file, or null;
``csv_label_column`` and ``csv_delimiter``, the label column and the ``--delimiter`` of a CSV
training file, or null), and ``predict``/``evaluate``/``update``/``prequential --model`` read
the data through it: a LIBSVM file with the training file's index base and the model's number
of features (a test file with no index 0 would otherwise look one-based), a CSV file with the
training file's label column and delimiter unless ``--label-column``/``--delimiter`` say
otherwise (an option that names another column than the recorded one is used, with a
warning). Copy it with the model; without it they use the data as given and say so (and
``update``/``prequential --save`` save the model without one, so that later commands say so
too).

Endless streams (``train``, ``update``): ``update MODEL_FILE DATA`` continues a saved model on
more data, through the scaler saved with it. ``--checkpoint-every ROWS`` also saves the model
(atomically: a reader sees the old file or the new one) after every ROWS rows; SIGINT (Ctrl-C)
or SIGTERM ends the stream early and saves the model as it was after its last complete chunk
(exit status 0; 130/143 when no chunk had been learned yet, and nothing is saved). Standard
input is read as rows arrive, so ``tail -f feed | fastbudget train tvm - --chunk-size 1000
--checkpoint-every 100000`` learns a live feed; a chunk is learned once it is full. Its
format is told from its first line that is not blank or a ``#`` comment, and for CSV from the
line after it too (a header's labels), waiting for them however slowly they arrive.

Concurrent writers: ``update`` (from loading the model to the rename of the last save) and
``train -o`` (with its checkpoints) hold an exclusive lock on the model file
(``fastbudget.persist.model_lock``: ``fcntl.flock`` on ``MODEL.lock``, removed when released).
A second writer of the same file says that it waits for the holder's process id and waits,
so two updates started together give the model updated by both; ``--no-wait`` refuses
instead (exit status 2).

Labels: LIBSVM labels are numbers; a CSV label column is read as text when the label of
its first data line is not a number (UCI letter's ``T,2,8,...``; that line is then data, not
a header), and as the saved model's labels by ``predict``/``evaluate``/``update``. The first
line is a header when a field other than the label is not a number, when the others number
the columns (``0,1,2,...,target``), or when its label field is not a number while the labels
of the lines below it are all numbers (``400,410,420,label`` above numeric labels: class
labels are all numbers or all text). Numeric column names above text labels cannot be told
from a data line, which is what they are taken for: pass ``--header yes`` (``--header no``:
the first line is data). More than
two labels (or ``--multiclass``) train one-vs-rest: one learner per class, each with
``--budget``, or sharing ``--total-budget``.

Class weights (``train``/``prequential --class-weight``): ``LABEL:WEIGHT`` pairs such as
``1:5,-1:1`` or a JSON object; they become the learner's ``class_weight`` (the
``OneVsRestClassifier``'s for more than two classes). ``balanced`` is refused: the stream is
learned chunk by chunk before the class counts are known.
"""
import argparse
import contextlib
import io
import json
import math
import os
import signal
import sys
import threading
import time
import warnings
from collections import deque

import numpy as np

from ..persist import SCALER_SUFFIX

__all__ = ["main", "LEARNERS"]

LEARNERS = {
    "tvm": "TVMClassifier",
    "idsvm": "IncrementalSVC",
    "streamsvm": "StreamSVMClassifier",
    "random": "RandomBudgetClassifier",
    "forgetron": "ForgetronClassifier",
    "perceptron": "PerceptronClassifier",
    "pegasos": "PegasosClassifier",
    "bsgd": "BSGDClassifier",
    "span": "SpanBudgetClassifier",
    "svincremental": "SVIncrementalClassifier",
}
COMMON_FLAGS = ("budget", "C", "kernel", "gamma", "degree", "coef0")
GENERATORS = ("checkerboard", "gauss", "waveform", "drifting_gaussians",
              "streamsvm_A", "streamsvm_B", "streamsvm_C")
_LIBSVM_EXT = (".libsvm", ".svm", ".svmlight", ".scale")
_CSV_EXT = (".csv", ".tsv", ".tab")
# .t/.tr (LIBSVM's test/train files, but also e.g. Ripley's synth.tr table) and .dat (SVMlight's
# examples, but also many tables) say nothing about the format: their content decides

_COMPRESSED_EXT = (".gz", ".bz2", ".xz")
CB_GAMMA = 1.0 / (2 * 0.37)          # paper 000: RBF delta = 0.37 on standardised checkerboards
CB_SCALE = 4.0 / math.sqrt(12.0)     # sd of U[0, 4)


class CLIError(Exception):
    """An error reported as one line at the command line (exit status 2)."""


# ----------------------------------------------------------------------------- progress
def want_progress(quiet):
    """Progress bars only when asked for and standard error is a terminal."""
    return not quiet and sys.stderr.isatty()


def progress(total=None, desc="", unit="ex", quiet=False):
    """A tqdm bar (disabled with ``quiet`` or when stderr is not a terminal)."""
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, dynamic_ncols=True,
                disable=not want_progress(quiet), leave=False, file=sys.stderr)


def note(msg, quiet=False):
    """A status line on stderr (shown unless ``--quiet``)."""
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- parsing values
def parse_value(text):
    """``'100'`` -> 100, ``'0.5'`` -> 0.5, ``'none'`` -> None, ``'true'`` -> True, else the string."""
    low = text.strip().lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_label(text):
    """A label of ``--classes``/``--class-weight``: a number, else the text as it is (never
    a boolean or None: 'yes'/'no' are labels like any other word)."""
    t = text.strip()
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def parse_kv(items, what="--param"):
    out = {}
    for item in items or ():
        if "=" not in item:
            raise CLIError(f"{what} expects KEY=VALUE, got {item!r}.")
        k, v = item.split("=", 1)
        if not k.strip():
            raise CLIError(f"{what} expects KEY=VALUE, got {item!r}.")
        out[k.strip()] = parse_value(v)
    return out


def parse_class_weight(text):
    """``--class-weight``: ``'1:5,-1:1'`` or a JSON object ``'{"1": 5, "-1": 1}'`` ->
    ``{1: 5.0, -1: 1.0}`` (labels parsed as ``--classes`` labels: numbers or strings)."""
    if text is None:
        return None
    t = text.strip()
    if t.lower() == "balanced":
        raise CLIError(
            "--class-weight balanced is not available: the command line learns the stream "
            "chunk by chunk (partial_fit), before the class counts are known. Count the labels "
            "and pass LABEL:WEIGHT pairs, e.g. --class-weight 1:5,-1:1 ('balanced' would be "
            "n / (n_classes * n_label) for each label).")
    if t.startswith("{"):
        try:
            d = json.loads(t)
        except ValueError as exc:
            raise CLIError(f"--class-weight is not valid JSON ({exc}).") from None
        if not isinstance(d, dict) or not d:
            raise CLIError("--class-weight as JSON must be an object {\"label\": weight, ...}.")
        items = list(d.items())
    else:
        items = []
        for item in t.split(","):
            k, sep, v = item.strip().rpartition(":")
            if not sep or not k.strip() or not v.strip():
                raise CLIError(
                    f"--class-weight expects LABEL:WEIGHT pairs separated by commas (e.g. "
                    f"1:5,-1:1) or a JSON object; got {text!r}.")
            items.append((k, v))
    out = {}
    for k, v in items:
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                raise CLIError(f"--class-weight: weight {v!r} of label {k!r} is not a number.") from None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise CLIError(f"--class-weight: weight {v!r} of label {k!r} is not a number.")
        out[parse_label(str(k))] = float(v)
    return out


def parse_classes(text):
    if text is None:
        return None
    vals = [parse_label(t) for t in text.split(",") if t.strip()]
    if len(vals) < 2:
        raise CLIError(f"--classes needs at least two comma-separated labels, got {text!r}.")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return np.array(vals, dtype=np.float64)
    return np.array([str(v) for v in vals])


# ----------------------------------------------------------------------------- data sources
class _Chain(io.RawIOBase):
    """A read-only stream: ``head`` bytes, then the rest of ``stream``."""

    def __init__(self, head, stream, name="<stdin>"):
        from ..datasets._source import _reader
        self.name = name               # what errors call the source (BufferedReader asks)
        self._head = memoryview(head)
        self._read = _reader(stream)
        self._fileno = stream.fileno

    def readable(self):
        return True

    def fileno(self):
        return self._fileno()          # the pipe's, so that readers take what has arrived

    def readinto(self, b):
        if len(self._head):
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._read(len(b))      # read1 on a pipe: what has arrived, not len(b)
        b[:len(data)] = data
        return len(data)


def _sniff_format(head, name):
    from ..datasets.readers import _is_number
    if b"\x00" in head[:4096]:
        raise CLIError(f"cannot tell the format of {name} (binary content); "
                       f"pass --format libsvm or --format csv for a text file.")
    text = head.decode("utf-8", errors="replace")
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        toks = line.replace(",", " ").split()
        if len(toks) >= 2 and all(":" in t for t in toks[1:]):
            return "libsvm"
        if len(toks) == 1 and not any(c in line for c in ",;\t") and _is_number(toks[0]):
            return "libsvm"   # a label with no features (all zeros)
        return "csv"
    raise CLIError(f"cannot tell the format of {name} (empty or binary content); "
                   f"pass --format libsvm or --format csv.")


def _head_is_enough(head, comments="#"):
    """Whether ``head`` (the start of standard input) holds what the format and the CSV
    label sniffing look at: the first complete line that is not blank or a ``#`` comment
    (nor a CSV comment line, ``comments``), and, when that line is CSV (a header, or data),
    a line after it that is not blank or a CSV comment line."""
    if b"\x00" in head[:4096]:
        return True                        # binary: _sniff_format refuses it
    cb = None if comments is None else comments.encode()
    first = False
    for raw in head.split(b"\n")[:-1]:    # complete lines
        text = raw.strip()
        if cb is not None and text.startswith(cb):
            continue
        if not first:
            if not raw.split(b"#", 1)[0].strip():
                continue
            first = True
            try:
                if _sniff_format(raw + b"\n", "<stdin>") == "libsvm":
                    return True
            except CLIError:
                return True
        elif text:
            return True
    return False


def _read_compressed(read, n, name):
    """``read(n)``; a damaged compressed stream (zlib's "Error -3 while decompressing",
    bz2's "Invalid data stream", a truncated file) is a ``CLIError`` naming the file."""
    import lzma
    import zlib
    try:
        return read(n)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise CLIError(f"{name}: could not read or decompress the data: {exc}") from None


def _read_head(stream, limit=65536, comments="#"):
    """The first bytes of standard input for format sniffing: up to ``limit``, but no more
    than :func:`_head_is_enough` needs once it has arrived (``read(limit)`` would wait for
    ``limit`` bytes, which a slow live feed may take minutes to send); what arrives later
    than the first line is waited for, however slowly it comes, so the result does not
    depend on timing."""
    from ..datasets._source import _reader
    read = _reader(stream)
    head = b""
    while len(head) < limit and not _head_is_enough(head, comments):
        part = _read_compressed(read, limit - len(head), "<stdin>")
        if not part:
            break
        head += part
    return head


def detect_format(path, fmt, comments="#"):
    """Return 'libsvm' or 'csv' (and, for standard input, a file object to read from).
    ``comments``: the CSV comment character (or None), which lines standard input's head
    need not hold."""
    if fmt not in ("auto", "libsvm", "csv"):
        raise CLIError(f"unknown format {fmt!r}: use libsvm, csv or auto.")
    from ..datasets._source import open_source
    if path == "-":
        stream, _close, name, _ = open_source("-")
        # also with --format: the CSV reader decides the label type from its first block,
        # which must hold a header's next line however late it arrives
        head = _read_head(stream, comments=comments)
        if fmt == "auto":
            fmt = _sniff_format(head, name)
        return fmt, io.BufferedReader(_Chain(head, stream, name))
    if not os.path.exists(path):
        raise CLIError(f"no such file: {path}")
    if os.path.isdir(path):
        raise CLIError(f"{path} is a directory, not a data file.")
    if fmt != "auto":
        return fmt, path
    base = path.lower()
    for ext in _COMPRESSED_EXT:
        if base.endswith(ext):
            base = base[: -len(ext)]
    ext = os.path.splitext(base)[1]
    if ext in _LIBSVM_EXT:
        return "libsvm", path
    if ext in _CSV_EXT:
        return "csv", path
    stream, close, name, _ = open_source(path)
    try:
        head = _read_compressed(stream.read, 65536, name) or b""
    finally:
        close()
    return _sniff_format(head, name), path


def open_data(args, n_features=None, chunk_size=None, label_type="auto", zero_based="auto",
              indexing=None, row_lines=None, csv_options=None):
    """Chunks ``(X, y)`` of the source named by ``args.data``; also a short description.

    ``n_features`` (a saved model's) is used for LIBSVM files, whose missing trailing columns
    are zeros; other sources must have exactly that many columns (checked by the caller).
    ``row_lines`` (a :class:`~fastbudget.datasets.readers.RowLines`) records the line of each
    row of a file or standard input. ``csv_options``: the CSV label column and delimiter
    recorded beside a saved model, the defaults of ``--label-column``/``--delimiter``;
    ``indexing['csv']`` is set to those used when the source is CSV.
    """
    chunk_size = chunk_size or args.chunk_size
    data = args.data
    if data.startswith("gen:"):
        from ..datasets import stream_chunks
        name = data[4:]
        if name not in GENERATORS:
            raise CLIError(f"unknown generator {name!r}; choose one of {', '.join(GENERATORS)}.")
        params = parse_kv(getattr(args, "gen_param", None), "--gen-param")
        try:
            chunks = stream_chunks(name, args.n, chunk_size, random_state=args.seed, **params)
            first = next(chunks)
        except TypeError as exc:
            raise CLIError(f"bad --gen-param for {name}: {exc}") from None
        except StopIteration:
            raise CLIError(f"the stream gen:{name} has no rows; pass --n N with N >= 1.") from None
        import itertools
        return itertools.chain([first], chunks), f"{name} stream ({args.n:,} rows)", args.n
    fmt, src = detect_format(data, getattr(args, "format", "auto"),
                             getattr(args, "comments", "#"))
    from ..datasets import read_csv, read_libsvm
    if fmt == "libsvm":
        model_width = n_features is not None
        n_features, zero_based = _libsvm_options(args, n_features, zero_based)
        chunks = read_libsvm(src, n_features=n_features, chunk_size=chunk_size,
                             zero_based=zero_based, indexing=indexing, row_lines=row_lines,
                             **_skipping(args))
        chunks = _reader_cli_errors(chunks, model_width)
    else:
        label, delim = _csv_options(args, csv_options, n_features)
        if indexing is not None:          # how the columns were read, kept beside the model
            indexing["csv"] = {"label_column": label, "delimiter": delim}
        header = _YES_NO_AUTO[getattr(args, "header", "auto")]
        try:
            chunks = read_csv(src, label_column=label, chunk_size=chunk_size,
                              label_type=label_type, delimiter=delim, header=header,
                              row_lines=row_lines, comments=getattr(args, "comments", "#"),
                              **_skipping(args))
        except ValueError as exc:             # the options' checks (--comments ...)
            raise CLIError(_cli_wording(str(exc))) from None
        chunks = _reader_cli_errors(chunks, False)
    bad = getattr(args, "bad_rows", None)
    if bad is not None:
        chunks = bad.latch(chunks)
    return chunks, f"{data} ({fmt})", None


def _skipping(args):
    """The readers' arguments for ``--on-bad-row``: for ``error``, a callback that raises
    the reader's error marked as a row error (see :func:`_row_error`)."""
    bad = getattr(args, "bad_rows", None)
    if bad is None:
        return {"on_bad_row": _raise_row_error} if hasattr(args, "on_bad_row") else {}
    return {"on_bad_row": bad, "_label_check": bad.check_labels}


def _raise_row_error(line, exc):
    """``--on-bad-row error``: the readers' error for a row that ``skip`` would leave out."""
    raise _row_error(exc)


def _row_error(exc):
    """``exc``, marked as the error of one row that ``--on-bad-row skip`` would leave out,
    so that its message says so (:func:`_skip_hint`)."""
    exc.fastbudget_row_error = True
    return exc


def _row_error_like(new, old):
    """``new`` (an error rewording ``old``), marked as a row error when ``old`` is one."""
    return _row_error(new) if getattr(old, "fastbudget_row_error", False) else new


def _skip_hint(args, exc):
    """The advice added to a row error of a command that has ``--on-bad-row``; when the
    second line of a CSV file has a field that is not a number and no label column was given
    (nor recorded with a model), also how to name it: UCI letter's ``T,2,8,...`` has its text
    labels in column 0, where the default (the last column) leaves them as a feature, so its
    first line reads as a header and the second fails, and skipping would leave out every
    row."""
    if getattr(args, "on_bad_row", None) != "error" or not getattr(exc, "fastbudget_row_error",
                                                                   False):
        return ""
    line, col, text = getattr(exc, "text_field", (None, None, None))   # (see read_csv)
    if line == 2 and getattr(args, "label_column", None) is None and not getattr(args, "model",
                                                                                None):
        # (with the label last, the default, feature column k is the file's column k)
        return (f" If column {col} holds the labels ({text} is text), pass --label-column "
                f"{col}; to leave such rows out and go on, pass --on-bad-row skip.")
    return " To leave such rows out and go on, pass --on-bad-row skip."


_YES_NO_AUTO = {"auto": "auto", "yes": True, "no": False}   # --header, --zero-based


def _libsvm_options(args, n_features, zero_based):
    """``(n_features, zero_based)`` for reading a LIBSVM source: a saved model's
    ``n_features`` (``--n-features``, if given, must be the same) and recorded
    ``zero_based`` (``--zero-based`` overrides it, with a warning when it contradicts it),
    else the options, else 'auto'."""
    given = getattr(args, "n_features", None)
    if given is not None:
        if n_features is not None and given != n_features:
            raise CLIError(f"--n-features {given}, but the model was trained on {n_features} "
                           f"features; leave --n-features out.")
        n_features = given
    given = getattr(args, "zero_based", None)
    if given is not None:
        want = _YES_NO_AUTO[given]
        if zero_based != "auto" and want != zero_based:
            _warn(f"--zero-based {given}, but the model's training file had "
                  f"{'zero' if zero_based else 'one'}-based indices (recorded in "
                  f"{args.model}{SCALER_SUFFIX}); using --zero-based {given} as asked.")
        zero_based = want
    return n_features, zero_based


def _reader_cli_errors(chunks, model_width):
    """A reader's chunks, with its advice about its arguments given as the command line
    options (``n_features`` -> ``--n-features``, ``zero_based`` -> ``--zero-based``,
    ``comments=None`` -> ``--comments none`` ...). With ``model_width`` (a LIBSVM source
    whose width is a saved model's) a wider line is left to the caller."""
    from ..datasets.readers import FeatureCountError
    try:
        yield from chunks
    except ValueError as exc:
        if model_width and isinstance(exc, FeatureCountError):
            raise
        msg = str(exc)
        new = _cli_wording(msg)
        if new == msg:
            raise
        raise _row_error_like(CLIError(new), exc) from None


def _cli_wording(msg):
    """A reader's message with its arguments named as the command line options."""
    return (msg.replace("pass comments=None", "pass --comments none")
               .replace("pass another comments= or the delimiter",
                        "pass another --comments or --delimiter")
               .replace("or None for no comment lines", "or none for no comment lines")
               .replace("comments must be", "--comments must be")
               .replace("header=True, but", "--header yes, but")
               .replace("pass header=False", "pass --header no")
               .replace("pass n_features explicitly",
                        "pass --n-features N (the number of features: the largest index, "
                        "plus 1 if indices start at 0)")
               .replace("pass a larger n_features", "pass a larger --n-features")
               .replace("n_features=", "--n-features ")
               .replace("zero_based=True or 'auto'", "--zero-based yes or auto")
               .replace("zero_based=False", "--zero-based no")
               .replace("zero_based=True", "--zero-based yes"))


def _width_error(where, d):
    return f"{where}: the data has more features than the model, which was trained on {d}."


class _BadRows:
    """``--on-bad-row skip``: the readers' ``on_bad_row`` callback. Each row left out gives
    a warning line naming its line and the error it would have stopped the command with
    (the first ``SHOWN``; then one line saying that only their count follows), and
    ``summary()`` counts them for the command's last line. With ``labels`` (commands that
    learn) a row whose label is not one of the model's classes is left out too:
    ``classes`` are the model's (``saved``), ``--classes`` or, left None, those of the
    first chunk (set by ``latch``)."""

    SHOWN = 10
    LINES = 5

    def __init__(self, args, labels):
        self.name = "<stdin>" if args.data == "-" else args.data
        self.labels = labels
        self.classes = None
        self.saved = False
        self.width = None            # a saved model's number of features (LIBSVM)
        self.count = 0
        self.lines = []
        self.replay = 0

    def __call__(self, line, exc):
        from ..datasets.readers import FeatureCountError
        self.count += 1
        if len(self.lines) < self.LINES:
            self.lines.append(line)
        if self.count <= self.replay:     # the second pass of --standardize pass
            return
        if self.count <= self.SHOWN:
            if self.width is not None and isinstance(exc, FeatureCountError):
                msg = _width_error(exc.where, self.width)
            else:
                msg = _cli_wording(str(exc))
            _warn(f"skipped a bad row: {msg}")
        elif self.count == self.SHOWN + 1:
            _warn(f"more bad rows skipped; past the first {self.SHOWN}, only their number "
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
        bad = _unknown_labels(y, self.classes)
        return [(int(k), CLIError(_label_error(f"{self.name}, line {int(lines[k]):,}", y[k],
                                               self.classes, self.saved)))
                for k in np.flatnonzero(bad)]

    def summary(self):
        if not self.count:
            return "no bad rows skipped"
        more = ", ..." if self.count > len(self.lines) else ""
        return (f"{self.count:,} bad row{'s' if self.count != 1 else ''} skipped "
                f"(line{'s' if self.count != 1 else ''} "
                f"{', '.join(f'{v:,}' for v in self.lines)}{more})")


def _bad_rows(args, labels):
    """Set ``args.bad_rows`` (a :class:`_BadRows` for ``--on-bad-row skip``, else None)."""
    args.bad_rows = (_BadRows(args, labels)
                     if getattr(args, "on_bad_row", "error") == "skip" else None)
    return args.bad_rows


def _comments(text):
    """``--comments``: the character, or None for 'none' (read_csv checks the rest)."""
    return None if text.lower() == "none" else text


def _delimiter(text):
    return {"tab": "\t", "\\t": "\t", "space": "whitespace"}.get(text, text)


def _csv_options(args, recorded, n_features):
    """``(label_column, delimiter)`` for reading a CSV source: the options given, else those
    ``recorded`` beside a saved model (its training data's), else the defaults (the last
    column; the delimiter sniffed). A given option that names another column than the
    recorded one is used, with a warning."""
    recorded = recorded or {}
    given = getattr(args, "label_column", None)
    if given is None:
        label = recorded.get("label_column", -1)
    else:
        label = parse_value(str(given))
        rec = recorded.get("label_column")
        # None (no label column, e.g. predicting unlabelled rows) never contradicts it
        if rec is not None and label is not None and not _same_column(label, rec, n_features):
            _warn(f"--label-column {given} is not the label column the model was trained "
                  f"with ({rec}, recorded in {args.model}{SCALER_SUFFIX}); reading the label "
                  f"from column {given} as asked (leave the option out to use the recorded "
                  f"one).")
    given = getattr(args, "delimiter", None)
    rec = recorded.get("delimiter")
    if given is None:
        delim = rec
    else:
        delim = _delimiter(given)
        if rec is not None and delim != rec:
            _warn(f"--delimiter {given!r} is not the field separator the model was trained "
                  f"with ({rec!r}, recorded in {args.model}{SCALER_SUFFIX}); using {given!r} "
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


def _warn(msg):
    """A warning line on stderr (shown also with --quiet: the result may be wrong)."""
    print(f"fastbudget: warning: {msg}", file=sys.stderr, flush=True)


class _Where:
    """Names a row of the data by its number in the stream: ``where(i)`` is ``'FILE, line
    L'`` (header, blank and comment lines counted) for a file or standard input, else
    ``'DATA, row i+1'``."""

    def __init__(self, args):
        from ..datasets.readers import RowLines
        self.data = args.data
        self.rows = None if args.data.startswith("gen:") else RowLines()

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


# ----------------------------------------------------------------------------- scaler sidecar
class Scaler:
    """Frozen ``(X - mean) / scale`` (identity when ``mean`` is None)."""

    def __init__(self, mean=None, scale=None, mode="none", n_rows=0, clip=None, zero_based=None,
                 csv=None):
        self.zero_based = zero_based      # LIBSVM indexing of the training data (None: unknown)
        self.csv = csv                    # CSV label column and delimiter (None: not CSV)
        self.found = True                 # False: no sidecar file beside the model
        self.mean = None if mean is None else np.asarray(mean, dtype=np.float64)
        self.scale = None if scale is None else np.asarray(scale, dtype=np.float64)
        self.mode = mode
        self.n_rows = int(n_rows)
        self.clip = None if clip is None else float(clip)

    def __call__(self, X):
        if self.mean is None:
            return X
        Z = (X - self.mean) / self.scale
        if self.clip is not None:
            np.clip(Z, -self.clip, self.clip, out=Z)
        return Z

    def save(self, model_path, model=None):
        """Write the sidecar of ``model_path``; with ``model``, save the model too, so that
        a failure of either leaves both files as they were: the sidecar is written and
        flushed to disk under a temporary name first, then the model is saved (renamed over
        its file), then the sidecar is renamed over its file."""
        path = os.fspath(model_path) + SCALER_SUFFIX
        doc = {"format": "fastbudget-scaler", "version": 1, "mode": self.mode,
               "n_rows": self.n_rows, "clip": self.clip, "libsvm_zero_based": self.zero_based,
               "csv_label_column": None if self.csv is None else self.csv["label_column"],
               "csv_delimiter": None if self.csv is None else self.csv["delimiter"]}
        if self.mean is not None:
            doc.update(mean=self.mean.tolist(), scale=self.scale.tolist())
        from ..persist import atomic_file
        with atomic_file(path, "w") as f:
            json.dump(doc, f)
            if model is not None:
                try:
                    f.flush()
                    os.fsync(f.fileno())
                except OSError as exc:
                    raise type(exc)(exc.errno, f"cannot write {path!r}: {exc.strerror}",
                                    path) from None
                model.save(model_path)
        return path

    @classmethod
    def load(cls, model_path):
        from ..persist import ModelFormatError, read_scaler_file
        try:
            path, doc = read_scaler_file(model_path)
        except ModelFormatError as exc:
            raise CLIError(str(exc)) from None
        if doc is None:
            out = cls()
            out.found = False
            return out
        try:
            csv = _recorded_csv(doc)
        except ValueError as exc:
            raise CLIError(f"cannot read the scaler file {path}: {exc}") from None
        zb = doc.get("libsvm_zero_based")
        if doc.get("mean") is None:       # trained without standardisation
            return cls(mode=doc.get("mode", "none"), zero_based=zb, csv=csv)
        return cls(doc["mean"], doc["scale"], doc.get("mode", "?"), doc.get("n_rows", 0),
                   doc["clip"], zb, csv)


def _recorded_csv(doc):
    """The CSV reading options of a scaler file (None: trained on another format, or
    written before they were recorded)."""
    label, delim = doc.get("csv_label_column"), doc.get("csv_delimiter")
    if label is None and delim is None:
        return None
    if isinstance(label, bool) or not isinstance(label, (int, str, type(None))):
        raise ValueError("csv_label_column is not an integer, a name or null")
    if not isinstance(delim, (str, type(None))):
        raise ValueError("csv_delimiter is not a string or null")
    return {"label_column": -1 if label is None else label, "delimiter": delim}


def load_model(path):
    import fastbudget
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
    from ..serving import ModelFormatError, load_predictor as _load

    if not os.path.exists(path):
        raise CLIError(f"no such model file: {path}")
    try:
        model = _load(path)
    except ModelFormatError as exc:
        raise CLIError(f"{path} is not a usable fastbudget model: {exc}") from None
    return model, Scaler.load(path)


# ----------------------------------------------------------------------------- learners
def make_learner(name, params, multiclass=False, total_budget=None):
    """The learner ``name`` with ``params``; with ``multiclass`` wrapped in
    ``OneVsRestClassifier``, which then takes ``class_weight`` (keyed by the original labels)
    and ``total_budget``."""
    import fastbudget
    _check_learner(name)
    cls = getattr(fastbudget, LEARNERS[name])
    valid = cls._get_param_names()
    for k in params:
        if k not in valid:
            raise CLIError(f"learner {name!r} has no parameter {k!r}; valid ones are "
                           f"{', '.join(valid)}.")
    params = dict(params)
    class_weight = params.pop("class_weight", None)
    est = cls(**params)
    if multiclass:
        model = fastbudget.OneVsRestClassifier(est, total_budget=total_budget,
                                               class_weight=class_weight)
        try:
            model._validate_params()
        except ValueError as exc:
            raise CLIError(str(exc).replace("leave total_budget=None", "drop --total-budget")
                           .replace("total_budget", "--total-budget")) from None
        return model
    return est.set_params(class_weight=class_weight)


def new_model(args, desc, y0):
    """The learner of ``train``/``prequential`` for a stream whose first chunk has labels
    ``y0``: (model, the classes to pass to the first partial_fit: ``--classes`` or those of
    the first chunk)."""
    classes = parse_classes(args.classes)
    if classes is not None:
        classes = np.unique(classes)          # '--classes 1,-1,1' lists two classes
    labels = classes if classes is not None else np.unique(y0)
    if classes is None and len(labels) < 2:
        if len(y0) < args.chunk_size:     # a short chunk is the last one: all the data
            raise CLIError(f"all {len(y0):,} rows of {desc} have the label "
                           f"{_labels_fmt(labels[0])}; a classifier needs rows of two "
                           f"classes. Is the label in another column (--label-column)?")
        raise CLIError(f"the first chunk of {desc} holds only the label "
                       f"{_labels_fmt(labels[0])}; pass --classes (e.g. --classes -1,1).")
    if classes is None and len(labels) > 2 and labels.dtype.kind == "f":
        frac = labels[labels != np.round(labels)]
        if len(frac):
            raise CLIError(f"the label column of {desc} holds {len(labels):,} different values, "
                           f"some not whole numbers (e.g. {_labels_fmt(frac[0])}): it looks like "
                           f"a feature, not class labels. Pass the label's column with "
                           f"--label-column (or list the classes with --classes).")
    multiclass = args.multiclass or len(labels) > 2
    params = learner_params(args)
    total = args.total_budget
    if total is not None and "budget" in params:
        raise CLIError("pass one of --budget (each learner's) and --total-budget (the sum).")
    if total is not None and not multiclass:
        params["budget"] = total            # one learner (make_learner checks it has a budget)
        total = None
    k = len(labels)
    n_learners = 1 if k == 2 else k           # two classes: one binary learner
    if multiclass and total is not None and total // n_learners < 2:
        raise CLIError(f"--total-budget {total} is too small for {n_learners} one-vs-rest "
                       f"learners: each needs a budget of at least 2, so pass at least "
                       f"{2 * n_learners}.")
    model = make_learner(args.learner, params, multiclass, total)
    if len(y0) < 2 and model._gamma_from_data():
        raise CLIError(f"the first chunk of {desc} has one row, but gamma 'scale' (the default) "
                       f"is 1 / (n_features * variance) of the first chunk, which one row cannot "
                       f"tell: pass --gamma NUMBER (about 1 / n_features on standardised data) "
                       f"or a --chunk-size of at least 2.")
    if multiclass:
        share = model.estimator.get_params().get("budget")
        if total is not None:
            share = total // n_learners
        if share is not None and n_learners == 1:
            note(f"one-vs-rest over 2 classes: 1 learner with a budget of {share:,} (two "
                 f"classes need one binary learner); later chunks may not add classes "
                 f"(--classes lists them all).", args.quiet)
        elif share is not None:
            note(f"one-vs-rest over {k} classes: {k} learners with a budget of {share:,} each "
                 f"({k * share:,} in all{'' if total is not None else '; --total-budget N shares N'}"
                 f"); later chunks may not add classes (--classes lists them all).", args.quiet)
    return model, labels


def learner_params(args):
    params = {}
    for flag in COMMON_FLAGS:
        v = getattr(args, flag, None)
        if v is not None:
            params[flag] = parse_value(v) if isinstance(v, str) else v
    params.update(parse_kv(args.param))
    cw = getattr(args, "class_weight", None)
    if isinstance(params.get("class_weight"), str):     # --param class_weight=...
        if cw is not None:
            raise CLIError("pass --class-weight once (not also --param class_weight=...).")
        cw = params.pop("class_weight")
    if cw is not None:
        params["class_weight"] = parse_class_weight(cw)
    if "random_state" not in params and args.seed is not None:
        import fastbudget
        cls = getattr(fastbudget, LEARNERS.get(args.learner, "TVMClassifier"), None)
        if cls is not None and "random_state" in cls._get_param_names():
            params["random_state"] = args.seed
    return params


def _no_rows(desc):
    return CLIError(f"{desc} holds no data rows (it is empty, or has only a header, blank or "
                    f"comment lines).")


def _peek(chunks, desc):
    it = iter(chunks)
    try:
        first = next(it)
    except StopIteration:
        raise _no_rows(desc) from None
    import itertools
    return first, itertools.chain([first], it)


def _labels_fmt(v):
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


class _Stop(Exception):
    """Raised by the signal handler of :func:`_stoppable` to leave a blocking read."""


@contextlib.contextmanager
def _stoppable():
    """SIGINT and SIGTERM end a stream early instead of the process.

    Yields a dict: set ``busy`` while the model or its file is being changed; a signal that
    arrives then is only recorded in ``signal`` (the caller stops after that step), a signal
    at any other moment, e.g. while a read waits for a live feed, raises :class:`_Stop`
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


def _check_features(X0, desc):
    """A new model needs at least one feature column."""
    if X0.shape[1] == 0:
        raise CLIError(
            f"{desc} has no feature columns, only the label: is the field separator one that "
            f"is not sniffed (tab, ';', ',', whitespace)? Pass it with --delimiter.")


def _check_labels(y, classes, row0, where, saved):
    """Refuse a chunk with a label outside ``classes`` before the model sees it, naming
    the row's line (the learner's own message counts rows within the chunk). ``row0`` is
    the stream row of ``y[0]``; ``saved``: the classes are a saved model's."""
    bad = _unknown_labels(y, classes)
    if not bad.any():
        return
    i = int(np.argmax(bad))
    raise _row_error(CLIError(_label_error(where(row0 + i), y[i], classes, saved)))


def _unknown_labels(y, classes):
    """Whether each label of ``y`` is not one of ``classes``."""
    cls = np.asarray(classes)
    try:
        return ~np.isin(y, cls)
    except TypeError:
        return np.array([not any(v == c for c in cls.tolist()) for v in y.tolist()],
                        dtype=bool)


def _label_error(where, label, classes, saved):
    known = [_labels_fmt(c) for c in np.asarray(classes)]
    if saved:
        fix = ("a saved model cannot learn a new class; train a new model with --classes "
               "listing every label")
    else:
        fix = ("the classes are fixed by the first chunk (or --classes): pass --classes "
               f"with every label, e.g. --classes {','.join(known + [_labels_fmt(label)])}")
    return (f"{where}: label {_labels_fmt(label)} is not one of the model's classes "
            f"({', '.join(known)}); {fix}.")


def _until_stopped(chunks, state, needs):
    """The labelled chunks, until the stream ends or a signal is recorded in ``state``."""
    for X, y in chunks:
        if y is None:
            raise CLIError(f"the data has no label column; {needs}.")
        yield X, y
        if state["signal"] is not None:
            return


def _learn_stream(model, chunks, classes, bar, where, checkpoint=None, every=None):
    """partial_fit over the chunks, calling ``checkpoint()`` after every ``every`` rows (at
    the end of the chunk that reaches a multiple of ``every``, so that checkpoints keep
    ``every`` rows apart on average whatever the chunk size) and stopping early on SIGINT/SIGTERM with the model as it was after
    its last complete chunk. A chunk with a label the model does not know stops it with an
    error that names the row by ``where`` (see :class:`_Where`); with ``--on-bad-row skip``
    the reader has left such rows out already (:class:`_BadRows`). Returns (n rows learned,
    seconds in partial_fit, the signal's name or None, number of checkpoints)."""
    n = n_saves = 0
    t_fit = 0.0
    first = True
    with _stoppable() as state:
        try:
            for X, y in _until_stopped(chunks, state, "pass --label-column"):
                _check_labels(y, classes if first and classes is not None else model.classes_,
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


def standardized_stream(args, chunks, name, row_lines=None):
    """Apply ``--standardize``; return (chunks, Scaler). ``row_lines``: the RowLines that
    ``chunks`` fill, started again for the second pass of ``pass``."""
    from ..datasets import StreamingStandardizer
    mode = args.standardize
    clip = getattr(args, "clip", None)
    if clip is not None and not (math.isfinite(clip) and clip > 0):
        raise CLIError(f"--clip must be a positive number of standard deviations; got {clip}.")
    if mode == "none":
        if clip is not None:
            raise CLIError("--clip applies to standardised values: use it with "
                           "--standardize warmup or pass.")
        return chunks, Scaler()
    if mode == "warmup":
        st = StreamingStandardizer(n_warmup=args.warmup_rows, clip=clip)
        out = st.transform_stream(chunks)
        first, out = _peek(out, name)  # the warm-up window is complete (or the stream ended)
        return out, Scaler(st.mean_, st.scale_, "warmup", st.n_samples_seen_, clip)
    if mode == "pass":
        if args.data == "-":
            raise CLIError("--standardize pass needs two passes; it cannot read standard input "
                           "(use --standardize warmup).")
        st = StreamingStandardizer(n_warmup=None, clip=clip).fit(chunks)
        if row_lines is not None:
            row_lines.clear()
        if getattr(args, "bad_rows", None) is not None:
            args.bad_rows.restart()
        chunks2, _, _ = open_data(args, row_lines=row_lines)
        return ((st.transform(X), y) for X, y in chunks2), Scaler(st.mean_, st.scale_, "pass",
                                                                  st.n_samples_seen_, clip)
    raise CLIError(f"unknown --standardize {mode!r}: use warmup, pass or none.")


# ----------------------------------------------------------------------------- commands
def _check_output(path, option):
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


def _check_out_dir(path, option="--out"):
    """Refuse, before any work, an output directory that cannot be one."""
    if not path.strip():
        raise CLIError(f"{option} needs a directory name; got an empty one ({option} '').")
    if os.path.exists(path) and not os.path.isdir(path):
        raise CLIError(f"{option} {path} is a file, not a directory (the command writes its "
                       f"files into it); give a new or existing directory name.")


def _check_not_input(path, option, inputs):
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


def _save(model, scaler, out):
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
def _model_locks(args, *paths):
    """Hold the lock of every model file in ``paths`` (``persist.model_lock``, in a fixed
    order) for a command that reads a model and writes it back, or writes one: a second
    writer of the same file waits (saying so), or with ``--no-wait`` refuses."""
    from ..persist import ModelLockedError, model_lock

    def waiting(path):
        def on_wait(pid):
            who = f"process {pid}" if pid else "another process"
            note(f"fastbudget: waiting for {who} to finish writing {path} (it holds "
                 f"{path}.lock; --no-wait refuses instead)", args.quiet)
        return on_wait

    unique = sorted({os.path.abspath(os.fspath(p)) for p in paths if p is not None})
    with contextlib.ExitStack() as stack:
        for path in unique:
            try:
                stack.enter_context(model_lock(path, wait=not args.no_wait,
                                               on_wait=waiting(path)))
            except ModelLockedError as exc:
                raise CLIError(f"{exc} (--no-wait)") from None
        yield


def _check_every(args):
    every = getattr(args, "checkpoint_every", None)
    if every is not None and every < 1:
        raise CLIError(f"--checkpoint-every must be a positive number of rows; got {every}.")
    return every


def _finish(model, scaler, out, n, wall, what, d, stop, n_saves, bad=None):
    """Save the model after a stream (also after SIGINT/SIGTERM) and print the summary
    (with ``bad``, a :class:`_BadRows`, the number of bad rows skipped)."""
    if stop is not None and n == 0:
        note(f"fastbudget: stopped by {stop} before a chunk was learned; nothing saved.")
        return 130 if stop == "SIGINT" else 143
    _save(model, scaler, out)
    mem = _memory(model)
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


def _check_learner(name):
    """Refuse an unknown learner before any data is read."""
    if name not in LEARNERS:
        raise CLIError(f"unknown learner {name!r}; choose one of {', '.join(LEARNERS)}.")


def cmd_train(args):
    _check_learner(args.learner)
    if getattr(args, "workers", None) is not None or getattr(args, "scheduler", None):
        from .. import _cli_dask               # (imports Dask only when asked for)
        return _cli_dask.train(args)
    every = _check_every(args)
    out = args.output
    _check_output(out, "-o")
    _check_not_input(out, "-o", [("input data", args.data)])
    indexing = {}
    where = _Where(args)
    bad = _new_model_bad_rows(args)
    chunks, desc, total = open_data(args, indexing=indexing, row_lines=where.rows)
    chunks, scaler = standardized_stream(args, chunks, desc, where.rows)
    (X0, y0), chunks = _peek(chunks, desc)
    _check_features(X0, desc)
    scaler.zero_based = indexing.get("zero_based")   # decided by the reader by now
    scaler.csv = indexing.get("csv")
    model, classes = new_model(args, desc, y0)
    with _model_locks(args, out):
        t0 = time.perf_counter()
        with progress(total, f"train {args.learner}", quiet=args.quiet) as bar:
            n, t_fit, stop, n_saves = _learn_stream(model, chunks, classes, bar, where,
                                                    lambda: _save(model, scaler, out), every)
        wall = time.perf_counter() - t0
        return _finish(model, scaler, out, n, wall,
                       f"trained {type(model).__name__} ({args.learner})", X0.shape[1], stop,
                       n_saves, bad)


def _new_model_bad_rows(args):
    """``--on-bad-row`` of a command that learns a new model: rows with a label outside
    ``--classes``, or (without it) outside the first chunk's labels, are bad rows."""
    bad = _bad_rows(args, labels=True)
    if bad is not None and args.classes is not None:
        bad.classes = np.unique(parse_classes(args.classes))
    return bad


def _saved_model_bad_rows(args, model, labels=True):
    """``--on-bad-row`` of a command on a saved model (its classes and width)."""
    bad = _bad_rows(args, labels)
    if bad is not None:
        bad.classes = np.asarray(model.classes_)
        bad.saved = True
    return bad


def cmd_update(args):
    every = _check_every(args)
    out = args.model if args.output is None else args.output
    _check_output(out, "-o")
    _check_not_input(out, "-o", [("input data", args.data)])
    # (the file written is locked, from loading the model to the last rename; a model read
    # from elsewhere needs no lock: a save replaces it atomically, and its directory may be
    # read-only)
    with _model_locks(args, out):
        return _update_locked(args, every, out)


def _update_locked(args, every, out):
    model, scaler = load_model(args.model)
    where = _Where(args)
    bad = _saved_model_bad_rows(args, model)
    chunks, desc, total = _model_chunks(args, model, scaler, where.rows)
    n_before = getattr(model, "n_seen_", None)
    t0 = time.perf_counter()
    with progress(total, "update", quiet=args.quiet) as bar:
        n, t_fit, stop, n_saves = _learn_stream(model, chunks, None, bar, where,
                                                lambda: _save(model, scaler, out), every)
    wall = time.perf_counter() - t0
    if n == 0 and stop is None:
        raise CLIError(f"{str(_no_rows(desc))[:-1]}; the model is unchanged.")
    what = f"updated {type(model).__name__}"
    if n_before is not None:
        # (SV-incremental's n_seen_ is a total weight, a float)
        seen = (f"{int(n_before):,}" if float(n_before).is_integer() else f"{n_before:,.6g}")
        what += f" (seen before: {seen})"
    return _finish(model, scaler, out, n, wall, what, model.n_features_in_, stop,
                   n_saves, bad)


def _memory(model):
    try:
        b = model.memory_bytes()
    except (AttributeError, NotImplementedError):
        try:
            b = sum(e.memory_bytes() for e in model.estimators_)
        except Exception:  # noqa: BLE001 - report what we know
            return "n/a"
    return f"{b / 1024:,.1f} KiB"


def _model_chunks(args, model, scaler, row_lines=None):
    """The data of a command on a saved model, read as the training data was (CSV labels as
    the model's, text or numbers; LIBSVM indices with the training file's base and the
    model's number of features), checked against the model's width and standardised:
    (chunks, description, number of rows or None)."""
    from ..datasets.readers import FeatureCountError
    d = model.n_features_in_
    if not scaler.found:
        note(f"note: no {os.path.basename(args.model)}{SCALER_SUFFIX} beside the model, so "
             f"the data is used as given; a model saved by 'fastbudget train' needs that file "
             f"(its standardisation and LIBSVM indexing): copy it with the model.", args.quiet)
    names = getattr(model, "feature_names_in_", None)
    if names is not None:
        # the rows read here have no names: say once how they are taken, rather than let
        # every chunk warn about it
        shown = ", ".join(map(str, names[:6])) + (", ..." if len(names) > 6 else "")
        note(f"note: the model was fitted in Python on named columns ({shown}); the data's "
             f"columns are taken by position as those, in that order.", args.quiet)
        warnings.filterwarnings("ignore", message="This X has no column names",
                                category=UserWarning)
    text = np.asarray(model.classes_).dtype.kind in "OUS"
    zb = "auto" if scaler.zero_based is None else scaler.zero_based
    if getattr(args, "bad_rows", None) is not None:
        args.bad_rows.width = d          # a wider LIBSVM row is a bad row
    chunks, desc, total = open_data(args, n_features=d, zero_based=zb,
                                    label_type="str" if text else "numeric", row_lines=row_lines,
                                    csv_options=scaler.csv)

    def ready():
        try:
            for X, y in chunks:
                if X.shape[1] != d:          # CSV and gen: sources (LIBSVM is read at d)
                    hint = ""
                    if y is not None and X.shape[1] == d - 1 and args.command == "predict":
                        hint = (" If its rows have no label (one column of each was read as "
                                "the label), pass --label-column none.")
                    raise CLIError(f"{desc} has {X.shape[1]} features but the model was "
                                   f"trained on {d}.{hint}")
                yield scaler(X), y
        except FeatureCountError as exc:
            raise _row_error_like(CLIError(_width_error(exc.where, d)), exc) from None

    return ready(), desc, total


def cmd_predict(args):
    if getattr(args, "workers", None) is not None or getattr(args, "scheduler", None):
        from .. import _cli_dask               # (imports Dask only when asked for)
        return _cli_dask.predict(args)
    to_file = args.output is not None and args.output != "-"    # '-': standard output
    if to_file:
        _check_output(args.output, "-o")
        _check_not_input(args.output, "-o", [
            ("input data", args.data), ("model file", args.model),
            ("model's scaler file", args.model + SCALER_SUFFIX)])
    model, scaler = load_predictor(args.model)
    chunks, desc, total = _model_chunks(args, model, scaler)
    from ..persist import atomic_file
    # a file is written under a temporary name and renamed at the end: after an error
    # the previous file (if any) stays as it was
    with (atomic_file(args.output, "w") if to_file else contextlib.nullcontext(sys.stdout)) \
            as out, progress(total, "predict", quiet=args.quiet) as bar:
        n = 0
        for X, _y in chunks:
            n += X.shape[0]
            if args.scores:
                s = np.asarray(model.decision_function(X))
                rows = (" ".join(f"{v:.6g}" for v in np.atleast_1d(r)) for r in s)
            else:
                rows = (_labels_fmt(v) for v in model.predict(X))
            out.write("\n".join(rows) + "\n")
            bar.update(X.shape[0])
        if n == 0:          # (as evaluate and update refuse it; -o FILE is not written)
            raise _no_rows(desc)
    return 0


def cmd_export(args):
    """``fastbudget export MODEL -o OUT.onnx``: the model as an ONNX graph (see
    ``fastbudget.onnx``), with the scaler saved beside it baked in front unless
    ``--no-scaler``, so that the graph takes the rows ``fastbudget predict`` takes."""
    _check_output(args.output, "-o")
    _check_not_input(args.output, "-o", [
        ("model file", args.model), ("model's scaler file", args.model + SCALER_SUFFIX)])
    try:
        from ..onnx import to_onnx
    except ImportError as exc:
        raise CLIError(f"export needs the onnx package ({exc}); install it with "
                       "pip install 'fastbudget[onnx]'.") from None
    model, scaler = load_model(args.model)
    baked = None
    if not args.no_scaler and scaler.mean is not None:
        from types import SimpleNamespace
        baked = SimpleNamespace(mean_=scaler.mean, scale_=scaler.scale, clip=scaler.clip)
    elif not args.no_scaler and not scaler.found:
        note(f"fastbudget: no {os.path.basename(args.model) + SCALER_SUFFIX} beside the model: "
             "the graph takes the rows as the model does (no standardisation baked in).")
    proto = to_onnx(model, scaler=baked, target_opset=args.opset,
                    dtype=np.float32 if args.float32 else np.float64)
    from ..persist import atomic_file
    with atomic_file(args.output, "wb") as f:
        f.write(proto.SerializeToString())
    how = ("raw rows, standardised inside the graph" if baked is not None else
           "rows as the model takes them")
    print(f"exported {type(model).__name__} ({model.n_features_in_} features, "
          f"{len(model.classes_)} classes) to {args.output}: input X "
          f"{'float32' if args.float32 else 'float64'} ({how}); outputs label, scores")
    return 0


def cmd_evaluate(args):
    model, scaler = load_model(args.model)
    bad = _saved_model_bad_rows(args, model, labels=False)  # unknown labels count as errors
    chunks, desc, total = _model_chunks(args, model, scaler)
    classes = list(model.classes_)
    cls_arr = np.asarray(model.classes_)
    conf = np.zeros((len(classes), len(classes)), dtype=np.int64)
    n = correct = 0
    unknown = {}
    with progress(total, "evaluate", quiet=args.quiet) as bar:
        for X, y in chunks:
            if y is None:
                raise CLIError("the data has no label column; evaluate needs labels.")
            p = model.predict(X)
            correct += int(np.sum(p == y))
            n += len(y)
            ti = np.searchsorted(cls_arr, y)
            known = (ti < len(cls_arr)) & (cls_arr[np.minimum(ti, len(cls_arr) - 1)] == y)
            np.add.at(conf, (ti[known], np.searchsorted(cls_arr, p)[known]), 1)
            if not known.all():
                for lab, c in zip(*np.unique(y[~known], return_counts=True)):
                    unknown[_labels_fmt(lab)] = unknown.get(_labels_fmt(lab), 0) + int(c)
            bar.update(len(y))
    if n == 0:
        raise _no_rows(desc)
    if unknown:
        note(f"note: {sum(unknown.values()):,} rows have labels the model was not trained on "
             f"({', '.join(f'{k}: {v:,}' for k, v in list(unknown.items())[:10])}); they count "
             f"as errors and are not in the confusion matrix (the model's labels: "
             f"{', '.join(_labels_fmt(c) for c in classes)}).")
    if args.json:
        doc = {"accuracy": correct / n, "n": n, "classes": [_labels_fmt(c) for c in classes],
               "confusion": conf.tolist(), "unknown_labels": unknown}
        if bad is not None:
            doc["skipped_rows"] = bad.count
        print(json.dumps(doc))
    else:
        print(f"accuracy {correct / n:.4f} ({correct:,} / {n:,}) on {desc}"
              + ("" if bad is None else f"; {bad.summary()}"))
        print("confusion (rows: true, columns: predicted): "
              + "; ".join(f"{_labels_fmt(c)}: " + " ".join(str(v) for v in conf[i])
                          for i, c in enumerate(classes)))
    return 0


def cmd_prequential(args):
    _check_learner(args.learner)
    if args.window < 1:
        raise CLIError(f"--window must be a positive number of examples; got {args.window}.")
    _check_out_dir(args.out)
    if args.save is not None:
        _check_output(args.save, "--save")
        _check_not_input(args.save, "--save", [("input data", args.data)])
    if args.save is None:
        return _prequential(args)
    with _model_locks(args, args.save):         # (--model M --save M updates M)
        return _prequential(args)


def _prequential(args):
    where = _Where(args)
    if args.model:
        model, scaler = load_model(args.model)
        bad = _saved_model_bad_rows(args, model)
        chunks, desc, total = _model_chunks(args, model, scaler, where.rows)
        classes = None
        first_fit = False
    else:
        indexing = {}
        bad = _new_model_bad_rows(args)
        chunks, desc, total = open_data(args, indexing=indexing, row_lines=where.rows)
        chunks, scaler = standardized_stream(args, chunks, desc, where.rows)
        (X0, y0), chunks = _peek(chunks, desc)
        _check_features(X0, desc)
        scaler.zero_based = indexing.get("zero_based")
        scaler.csv = indexing.get("csv")
        model, classes = new_model(args, desc, y0)
        first_fit = True
    n_read = 0                        # rows of the stream read so far
    window = deque()
    w_n = w_c = 0
    n = correct = 0
    curve = _Curve()
    csv_path = os.path.join(args.out, "prequential.csv")
    os.makedirs(args.out, exist_ok=True)
    t0 = time.perf_counter()
    # the curve goes to the CSV as it grows (an endless stream is the point), and SIGINT or
    # SIGTERM ends the stream with everything below done as at its end
    with progress(total, f"prequential {args.learner}", quiet=args.quiet) as bar, \
            open(csv_path, "w") as f, _stoppable() as state:
        f.write("n_tested,cumulative_accuracy,window_accuracy\n")
        try:
            for X, y in _until_stopped(chunks, state, "prequential evaluation needs labels"):
                _check_labels(y, classes if first_fit else model.classes_, n_read, where,
                              saved=bool(args.model))
                where.forget_before(n_read)
                n_read += len(y)
                state["busy"] = True
                if first_fit:
                    # nothing to test before the first chunk is learned: learn its first
                    # half, then continue test-then-train from its second half
                    h = max(2, X.shape[0] // 2)
                    model.partial_fit(X[:h], y[:h], classes=classes)
                    first_fit = False
                    X, y = X[h:], y[h:]
                    bar.update(h)
                    if X.shape[0] == 0:
                        state["busy"] = False
                        continue
                c = int(np.sum(model.predict(X) == y))      # test ...
                model.partial_fit(X, y)                      # ... then train
                state["busy"] = False
                m = len(y)
                n += m
                correct += c
                window.append((m, c))
                w_n += m
                w_c += c
                while w_n - window[0][0] >= args.window:
                    a, b = window.popleft()
                    w_n -= a
                    w_c -= b
                row = (n, correct / n, w_c / w_n)
                f.write(f"{row[0]},{row[1]:.6f},{row[2]:.6f}\n")
                f.flush()
                curve.add(row)
                bar.update(m)
        except _Stop:
            pass
    wall = time.perf_counter() - t0
    stop = state["signal"]
    if stop is not None:
        note(f"stopped by {signal.Signals(stop).name} after {n:,} tested examples.")
    if n == 0:
        if stop is not None:
            return 130 if stop == signal.SIGINT else 143
        raise CLIError("the stream is too short for prequential evaluation (one chunk).")
    print(f"prequential accuracy {correct / n:.4f} over {n:,} tested examples "
          f"(last {w_n:,}: {w_c / w_n:.4f}); {n / max(wall, 1e-9):,.0f} examples/s; "
          + ("" if bad is None else f"{bad.summary()}; ") + f"curve in {csv_path}")
    if not args.no_plot:
        from .. import plotting
        png = os.path.join(args.out, "prequential.png")
        if plotting.plot_prequential(curve.rows, png, title=f"{args.learner} on {desc}",
                                     window=args.window, quiet=args.quiet):
            print(f"plot in {png}")
    if args.save is not None:
        _save(model, scaler, args.save)
    return 0


class _Curve:
    """At most ``2 * cap`` points of a curve of any length, evenly thinned (every
    ``stride``-th point, the stride doubling when the list fills) plus the last point."""

    def __init__(self, cap=2000):
        self.cap = cap
        self.stride = 1
        self.k = 0
        self.kept = []
        self.last = None

    def add(self, row):
        if self.k % self.stride == 0:
            self.kept.append(row)
            if len(self.kept) >= 2 * self.cap:
                self.kept = self.kept[::2]
                self.stride *= 2
        self.k += 1
        self.last = row

    @property
    def rows(self):
        if self.kept and self.kept[-1] is not self.last:
            return self.kept + [self.last]
        return list(self.kept)


class _ExactSVM:
    """The demo's exact SVM on the first ``n`` examples of the stream, fitted and scored.

    scikit-learn's ``SVC`` (when installed) releases the GIL while it trains and predicts,
    so the demo runs it in a thread while Numba compiles TVM; without scikit-learn the
    fallback is fastbudget's own ``IncrementalSVC``, which needs Numba and runs after TVM.
    """

    def __init__(self, args, std, Xt, yt):
        from ..datasets import stream_chunks
        try:
            from sklearn.svm import SVC
        except ImportError:
            from ..estimators.idsvm import IncrementalSVC
            self.n = min(args.exact_n or 2_000, args.n)
            self.model = IncrementalSVC(C=100.0, gamma=CB_GAMMA, capacity=self.n)
            self.name, self.threaded, self.where = "fastbudget IncrementalSVC", False, ""
        else:
            self.n = min(args.exact_n or 10_000, args.n)
            self.model = SVC(C=100.0, gamma=CB_GAMMA)
            self.name, self.threaded = "scikit-learn SVC", True
            self.where = ", in a thread beside TVM"
        X, self.y = next(stream_chunks("checkerboard", args.n, self.n,
                                       random_state=args.seed, noise=0.15))
        self.X, self.Xt, self.yt = std(X), Xt, yt
        self._thread, self._out, self._error = None, None, None

    def _run(self):
        try:
            t = time.perf_counter()
            self.model.fit(self.X, self.y)
            seconds = time.perf_counter() - t
            m = self.model
            n_sv = int(np.sum(getattr(m, "n_support_", [len(getattr(m, "support_vectors_", []))])))
            self._out = (self.model.score(self.Xt, self.yt), seconds, n_sv)
        except BaseException as exc:      # re-raised in the main thread by result()
            self._error = exc

    def start(self, quiet):
        import threading
        note(f"training the exact SVM ({self.name}) on the first {self.n:,} examples...", quiet)
        if self.threaded:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        else:
            self._run()

    def result(self):
        """(test accuracy, seconds of fit, number of support vectors)."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out


def cmd_demo(args):
    """TVM (B = budget) on a noisy checkerboard stream beside an exact SVM on a prefix."""
    import fastbudget
    from ..datasets import make_checkerboard, stream_chunks
    q = args.quiet

    def std(X):
        return (X - 2.0) / CB_SCALE

    if not args.no_plot:
        _check_out_dir(args.out)
    Xt, yt = make_checkerboard(5000, noise=0.0, random_state=args.seed + 1)
    Xt = std(Xt)
    print(f"fastbudget demo: TVM with budget B = {args.budget} learns a {args.n:,}-example "
          f"N-Checkerboard stream (15% of labels flipped), RBF delta = 0.37, C = 100")
    # the exact (unbounded) SVM on a prefix of the same stream; scikit-learn's SVC releases
    # the GIL while it trains and predicts, so it runs in a thread beside TVM's compile
    exact = _ExactSVM(args, std, Xt, yt)
    if exact.threaded:
        exact.start(q)
    note("compiling (first run only)...", q)
    t = time.perf_counter()
    tvm = fastbudget.TVMClassifier(budget=args.budget, C=100.0, gamma=CB_GAMMA)
    Xw, yw = make_checkerboard(200, 0.15, random_state=10_000 + args.seed)
    tvm.partial_fit(std(Xw), yw, classes=[-1, 1])     # compiles (or loads) the TVM code
    tvm.decision_function(Xt[:10])
    t_compile = time.perf_counter() - t
    tvm = fastbudget.TVMClassifier(budget=args.budget, C=100.0, gamma=CB_GAMMA)
    n = 0
    t_fit = 0.0
    with progress(args.n, "TVM", quiet=q) as bar:
        for X, y in stream_chunks("checkerboard", args.n, args.chunk_size,
                                  random_state=args.seed, noise=0.15):
            t = time.perf_counter()
            tvm.partial_fit(std(X), y, classes=[-1, 1])
            t_fit += time.perf_counter() - t
            n += len(y)
            bar.update(len(y))
    acc = tvm.score(Xt, yt)
    if not exact.threaded:
        exact.start(q)
    acc_ex, t_exact, n_sv = exact.result()
    n_ex, exact_name = exact.n, exact.name
    sv_bytes = n_sv * (Xt.shape[1] + 1) * 8
    print(f"  TVM (B = {args.budget}) on all {n:,} examples : test accuracy {100 * acc:6.2f} %  "
          f"({n / max(t_fit, 1e-9):,.0f} examples/s, {t_fit:.1f} s; model memory "
          f"{tvm.memory_bytes() / 1024:,.1f} KiB, {tvm.n_twins_} twin vectors)")
    print(f"  exact SVM on the first {n_ex:,} examples   : test accuracy {100 * acc_ex:6.2f} %  "
          f"({exact_name}, {t_exact:.1f} s{exact.where}, {n_sv:,} support vectors = "
          f"{sv_bytes / 1024:,.1f} KiB of vectors)")
    print(f"  test set: 5,000 points of the noise-free board; best possible 100 %. "
          f"Paper 000 (Fig. 2): TVM B = 100 reaches 98.7 % after 10^7 examples.")
    print(f"  startup: {t_compile:.1f} s (Numba compiles TVM on the first run after install "
          f"and loads it from its on-disk cache afterwards)")
    if not args.no_plot:
        from .. import plotting
        os.makedirs(args.out, exist_ok=True)
        png = os.path.join(args.out, "demo_boundary.png")
        title = (f"TVM, B = {args.budget}, after {n:,} N-Checkerboard examples "
                 f"(test accuracy {100 * acc:.2f} %)")
        if plotting.plot_boundary(tvm, png, title=title, transform=std,
                                  bounds=(0.0, 4.0), quiet=q):
            print(f"  decision boundary with its twin vectors: {png}")
    return 0


def cmd_reproduce(args):
    from .. import reproduce
    return reproduce.run_cli(args)


def cmd_warmup(args):
    from .. import warmup
    note("compiling every learner (first run only; later runs load the on-disk cache)...",
         args.quiet)
    t = warmup(verbose=not args.quiet)
    print(f"warmup done in {t:.1f} s")
    return 0


# ----------------------------------------------------------------------------- parser
class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CLIError(f"{message} (see '{self.prog} --help')")


def _int_at_least(low):
    """An argparse ``type``: a whole number >= ``low`` (counts of rows, examples ...)."""
    def convert(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {v}")
        return v
    convert.__name__ = "int"          # argparse names the type in some messages
    return convert


_count = _int_at_least(1)


def _data_options(p, formats=True, bad_rows=True):
    p.add_argument("data", metavar="DATA",
                   help="file (LIBSVM or CSV, optionally .gz/.bz2/.xz), '-' for stdin, or gen:NAME")
    if formats:
        p.add_argument("--format", default="auto", help="libsvm, csv or auto (default)")
        p.add_argument("--label-column",
                       help="CSV label column: index (negative from the end) or header name "
                            "(default: the last; with a saved model, the one it was trained "
                            "with); 'none' for rows without a label")
        p.add_argument("--delimiter", metavar="CHAR",
                       help="CSV field separator: one character, 'tab' or 'whitespace' "
                            "(default: with a saved model, the one given when it was trained, "
                            "else from the first line: tab, ';', ',' or whitespace)")
        p.add_argument("--n-features", type=_count, metavar="N",
                       help="LIBSVM: number of features (default: the largest index of a "
                            "file; of standard input, of its first chunk, so a later larger "
                            "index needs this; with a saved model, the model's)")
        p.add_argument("--zero-based", choices=("auto", "yes", "no"),
                       help="LIBSVM: whether feature indices start at 0 (default auto: when "
                            "an index 0 is seen in the file, or the first chunk of standard "
                            "input; with a saved model, as its training file)")
        p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                       help="whether the first line of a CSV file is a header (default auto: "
                            "when a field but the label is not a number, or the label field "
                            "is not a number while the labels below it are; 'yes' for numeric "
                            "column names above text labels)")
        p.add_argument("--comments", metavar="CHAR", default="#", type=_comments,
                       help="CSV: lines whose first non-blank character is CHAR are skipped "
                            "(default '#'; only whole lines); 'none' for no comment lines")
    p.add_argument("--chunk-size", type=_count, default=10000,
                   help="rows per chunk (default %(default)s)")
    p.add_argument("--n", type=_count, default=100_000, help="rows of a gen:NAME stream")
    p.add_argument("--gen-param", action="append", metavar="K=V",
                   help="generator keyword, e.g. noise=0.15 (repeatable)")
    p.add_argument("--seed", type=_int_at_least(0), default=0,
                   help="seed of gen: streams and learners (a whole number >= 0)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or notes")
    if bad_rows:
        p.add_argument("--on-bad-row", choices=("error", "skip"), default="error",
                       help="a malformed row (a field that is not a finite number, a wrong "
                            "number of fields, a bad LIBSVM index or one beyond a saved "
                            "model's features, a quoted field; for "
                            "learning, a label that is not one of the model's classes): "
                            "'error' (default) stops with an error naming its line; 'skip' "
                            "leaves it out with a warning naming its line (the first 10), "
                            "and the last line counts them")


def _learner_options(p):
    p.add_argument("learner", metavar="MODEL", help="learner: " + ", ".join(LEARNERS))
    # (the defaults are the learners' own, which differ: tests/test_cli_audit.py checks
    # these texts against their signatures)
    p.add_argument("--budget", type=int,
                   help="vectors the model keeps (default: the learner's, 100; span 50; "
                        "perceptron: unbounded; idsvm, svincremental, streamsvm and pegasos "
                        "take none: "
                        "the memory of idsvm and svincremental is --param capacity=N)")
    p.add_argument("--C", type=float,
                   help="box constraint (default: the learner's: 100 for tvm and random, 1 "
                        "for idsvm, span, svincremental and streamsvm)")
    p.add_argument("--kernel", choices=("rbf", "poly", "linear"),
                   help="(default: the learner's: rbf; linear for streamsvm and perceptron)")
    p.add_argument("--gamma", help="float, 'scale' or 'auto' (default: the learner's: 'scale' "
                                   "for tvm, idsvm, span and svincremental, 'auto' "
                                   "(1 / n_features) for the others)")
    p.add_argument("--degree", type=int, help="poly kernel degree (default 3)")
    p.add_argument("--coef0", type=float,
                   help="poly kernel term (default: the learner's: 1; 0 for idsvm, span, "
                        "svincremental and streamsvm)")
    p.add_argument("--param", action="append", metavar="K=V",
                   help="any other learner parameter, e.g. m1=1 (repeatable)")
    p.add_argument("--standardize", default="warmup", help="warmup (default), pass or none")
    p.add_argument("--warmup-rows", type=_count, default=10000,
                   help="rows whose statistics standardise the stream (default 10000)")
    p.add_argument("--clip", type=float, metavar="SD",
                   help="clip standardised values to [-SD, SD] (heavy-tailed attributes; "
                        "saved with the scaler)")
    p.add_argument("--classes", help="comma-separated labels, when the first chunk lacks one")
    p.add_argument("--class-weight", metavar="LABEL:W,...",
                   help="weight of each class, e.g. 1:5,-1:1 or a JSON object (labels not "
                        "given weigh 1; 'balanced' is not available on a stream: count the "
                        "labels and pass n / (n_classes * n_label))")
    p.add_argument("--multiclass", action="store_true",
                   help="one-vs-rest even if the first chunk shows two labels")
    p.add_argument("--total-budget", type=int, metavar="N",
                   help="with more than two classes, one-vs-rest trains one learner per class: "
                        "share N among them (N // classes each); without it each has --budget, "
                        "and memory grows with the number of classes")


def _checkpoint_option(p):
    p.add_argument("--checkpoint-every", type=int, metavar="ROWS",
                   help="also save the model (atomically) after every ROWS rows, at the end "
                        "of the chunk that reaches a multiple of ROWS; on SIGINT or SIGTERM the model of the last complete "
                        "chunk is saved in any case")
    p.add_argument("--no-wait", action="store_true",
                   help="refuse (exit status 2) instead of waiting when another fastbudget "
                        "process is writing the model file (it holds MODEL.lock)")


def _cluster_options(p):
    g = p.add_argument_group("on a Dask cluster (pip install 'fastbudget[dask]'; DATA may "
                             "then be a glob such as 'data/*.svm', one task per file)")
    g.add_argument("--workers", type=int, metavar="N",
                   help="start a local cluster of N worker processes")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="use a running cluster, e.g. tcp://scheduler:8786")


def build_parser():
    ap = _Parser(prog="fastbudget", description=__doc__.split("\n\n")[0].replace("``", ""),
                 epilog="Run 'fastbudget COMMAND --help' for a command's options.")
    ap.add_argument("--version", action="store_true", help="print the version and exit")
    sub = ap.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    p = sub.add_parser("demo", help="TVM (B = 100) on a 10^6-example noisy checkerboard stream")
    p.add_argument("--n", type=_count, default=1_000_000, help="stream length (default 10^6)")
    p.add_argument("--budget", type=_int_at_least(2), default=100,
                   help="TVM's budget (default 100)")
    p.add_argument("--seed", type=_int_at_least(0), default=0)
    p.add_argument("--chunk-size", type=_count, default=50_000,
                   help="rows per chunk (default 50000)")
    p.add_argument("--exact-n", type=_count, default=None,
                   help="examples for the exact SVM (default 10000 with scikit-learn, else 2000)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--out", default="fastbudget-demo", help="directory of the PNG")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("train", help="train a learner on a stream and save it")
    _learner_options(p)
    _data_options(p)
    p.add_argument("-o", "--output", default="model.npz", help="model file (default model.npz)")
    _checkpoint_option(p)
    _cluster_options(p)
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("update", help="continue training a saved model on more data")
    p.add_argument("model", metavar="MODEL_FILE")
    _data_options(p)
    p.add_argument("-o", "--output", help="where to save the model (default: MODEL_FILE, "
                                          "replaced atomically)")
    _checkpoint_option(p)
    p.set_defaults(func=cmd_update)

    p = sub.add_parser("predict", help="print one predicted label per row")
    p.add_argument("model", metavar="MODEL_FILE")
    _data_options(p, bad_rows=False)      # its lines follow the rows: a bad row stops it
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write to this file instead of stdout (written in full or not at "
                        "all: it replaces FILE at the end); '-' for stdout")
    p.add_argument("--scores", action="store_true", help="decision values instead of labels")
    _cluster_options(p)
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("export", help="write a saved model as an ONNX graph (needs the onnx "
                                      "extra)")
    p.add_argument("model", metavar="MODEL_FILE")
    p.add_argument("-o", "--output", required=True, metavar="OUT.onnx", help="the ONNX file")
    p.add_argument("--no-scaler", action="store_true",
                   help="leave out the standardisation saved beside the model (the graph then "
                        "takes standardised rows)")
    p.add_argument("--opset", type=_int_at_least(13), default=None,
                   help="ONNX opset of the graph (default 17)")
    p.add_argument("--float32", action="store_true",
                   help="float32 input X (the graph still computes in float64)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("evaluate", help="accuracy and confusion matrix of a saved model")
    p.add_argument("model", metavar="MODEL_FILE")
    _data_options(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("prequential", help="test-then-train evaluation of a stream")
    _learner_options(p)
    _data_options(p)
    p.add_argument("--model", help="continue from a saved model instead of a new learner")
    p.add_argument("--window", type=int, default=10_000,
                   help="examples of the running accuracy (default 10000; chunks are 1000 rows "
                        "here unless --chunk-size)")
    p.add_argument("--out", default="fastbudget-prequential", help="directory for CSV/PNG")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--save", help="save the final model here")
    p.add_argument("--no-wait", action="store_true",
                   help="with --save: refuse (exit status 2) instead of waiting when another "
                        "fastbudget process is writing that model file")
    p.set_defaults(func=cmd_prequential, chunk_size=1000)

    p = sub.add_parser("reproduce", help="reproduce a paper table as a Markdown report")
    p.add_argument("name", metavar="NAME", help="a reproduction name, or 'list'")
    p.add_argument("--data-dir", default=os.environ.get("FASTBUDGET_DATA_DIR"),
                   help="directory of the real data sets (default $FASTBUDGET_DATA_DIR)")
    p.add_argument("--orders", type=int, default=None,
                   help="random stream orders (default 5, --quick 1); span, rueping: seeds or "
                        "repetitions when given (else the script's default); streamsvm: 4 x "
                        "orders")
    p.add_argument("--quick", action="store_true", help="a small version (about a minute)")
    p.add_argument("--n-max", type=int, default=None,
                   help="cap on training examples per data set (tests, quick looks)")
    p.add_argument("--budgets", default=None, help="comma-separated budgets (tvm-table3)")
    p.add_argument("--sets", default=None, help="comma-separated data set names")
    p.add_argument("--idsvm-seconds", type=float, default=None,
                   help="tvm-table2: stop IDSVM after this much training (default 120, "
                        "--quick 2; the paper used 3000)")
    p.add_argument("--idsvm-capacity", type=int, default=10_000,
                   help="tvm-table2: most examples IDSVM holds (memory ~16*capacity^2 bytes; "
                        "default 10000)")
    p.add_argument("--svc-n-max", default=None, metavar="N|SET=N,...",
                   help="tvm-table2: fit LIBSVM (SVC) on at most N training examples (of every "
                        "set, or of the sets named)")
    p.add_argument("--svc-cache-mb", type=float, default=1000.0,
                   help="tvm-table2: SVC kernel cache in MB (default 1000)")
    p.add_argument("--no-table2", action="store_true",
                   help="'reproduce all': skip tvm-table2 (its LIBSVM and IDSVM columns are slow)")
    p.add_argument("--out", default=os.path.join("docs", "results"), help="report directory")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=cmd_reproduce)

    p = sub.add_parser("warmup", help="compile every learner now (fills the on-disk cache)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.set_defaults(func=cmd_warmup)
    return ap


# options whose value is a list of labels, which may begin with a negative one ("-1,1")
LABEL_OPTIONS = ("--classes", "--class-weight")


def _attach_label_values(argv):
    """``--classes -1,1`` as ``--classes=-1,1``: argparse takes a value that starts with '-'
    and is not a plain number for an option, and would report the option's value missing."""
    out = []
    i = 0
    while i < len(argv):
        a = argv[i]
        nxt = str(argv[i + 1]) if i + 1 < len(argv) else ""
        if a in LABEL_OPTIONS and nxt[:1] == "-" and nxt[1:2].isdigit():
            out.append(f"{a}={nxt}")
            i += 2
        else:
            out.append(a)
            i += 1
    return out


def _warning_line(message, category, filename, lineno, line=None):
    """Warnings at the command line: one line, without the source line that raised them."""
    return f"fastbudget: warning: {' '.join(str(message).split())} ({category.__name__})\n"


def main(argv=None):
    """Entry point of the ``fastbudget`` console script; returns the exit status."""
    fmt = warnings.formatwarning
    warnings.formatwarning = _warning_line      # for this call only (main may be imported)
    try:
        return _main(argv)
    finally:
        warnings.formatwarning = fmt


def _main(argv):
    ap = build_parser()
    debug = bool(os.environ.get("FASTBUDGET_DEBUG"))
    args = None
    try:
        argv = _attach_label_values(list(sys.argv[1:] if argv is None else argv))
        args = ap.parse_args(argv)
        if args.version:
            from .. import __version__
            print(f"fastbudget {__version__}")
            return 0
        if args.command is None:
            ap.print_help()
            return 2
        with warnings.catch_warnings(), _sigterm_raises():   # filters a command sets end with it
            return args.func(args) or 0
    except _Terminated:
        print("fastbudget: stopped by SIGTERM", file=sys.stderr)
        return 143
    except CLIError as exc:
        msg = str(exc) + _skip_hint(args, exc)
    except Exception as exc:
        if debug:
            raise
        return _report(exc, _skip_hint(args, exc))
    except KeyboardInterrupt:
        print("fastbudget: interrupted", file=sys.stderr)
        return 130
    print(f"fastbudget: error: {msg}", file=sys.stderr)
    return 2


class _Terminated(BaseException):
    """SIGTERM outside a stream's own handling (:func:`_stoppable`), e.g. while the first
    chunk is read: the command ends as after Ctrl-C, with its files' clean-up run."""


@contextlib.contextmanager
def _sigterm_raises():
    """SIGTERM raises :class:`_Terminated` (main thread only) instead of ending the process
    at once, so that an atomic write under way removes its temporary file and the command
    ends with one line and status 143, as SIGINT ends with 130."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _report(exc, hint=""):
    """Turn an exception into one line on stderr (ending with ``hint``) and an exit status."""
    from ..engine import CapacityError
    try:
        raise exc
    except CapacityError as exc:      # a full exact learner: expected, and the message says why
        msg = " ".join(str(exc).split()) + " On the command line: --param capacity=N (memory "
        if "batch" in msg:
            # (SV-incremental learns each chunk as one batch, with the support vectors kept)
            msg += "grows as N^2), or a smaller --chunk-size (each chunk is one batch)."
        else:
            msg += "grows as N^2)."
    except FileNotFoundError as exc:
        # keep a message written for the case (a data set's file not in --data-dir ...)
        own = exc.strerror and exc.strerror != os.strerror(2)
        if not own:
            msg = f"no such file: {exc.filename or exc}"
        else:
            msg = " ".join(exc.strerror.split())
            if exc.filename and os.fspath(exc.filename) not in msg:
                msg += f": {exc.filename}"
    except IsADirectoryError as exc:
        msg = f"{exc.filename or exc} is a directory, not a file."
    except BrokenPipeError:
        return 0
    except (ValueError, OSError, TypeError, MemoryError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - last resort: still one line, and say it is a bug
        msg = (f"unexpected {type(exc).__name__}: {exc} (please report it; "
               f"set FASTBUDGET_DEBUG=1 for the traceback)")
    print(f"fastbudget: error: {msg}{hint}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
