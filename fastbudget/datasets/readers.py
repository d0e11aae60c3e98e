"""Chunked, constant-memory readers for LIBSVM/svmlight and delimited text (CSV/TSV).

Both readers return a generator of ``(X_chunk, y_chunk)`` with at most ``chunk_size`` rows,
``X_chunk`` float64 C-contiguous of shape (m, n_features). They read the source in blocks of
about 1 MiB (``fastbudget.datasets._source.BLOCK_BYTES``) and parse each block in compiled code
(:mod:`fastbudget.kernels.readers`), so memory stays at one block plus one chunk whatever the
file size. Sources: a path (plain, gzip, bzip2 or xz, recognised by magic bytes), ``'-'`` for
standard input, or an open file object. Lines end in ``\\n``, ``\\r\\n`` or ``\\r`` alone
(classic Mac OS files); a UTF-8 byte-order mark is skipped.

Errors: a missing file raises ``FileNotFoundError`` when the reader is created; malformed
content raises ``ValueError`` naming the file, the 1-based line number and what is wrong, when
the generator reaches that line (chunks before it have already been yielded), unless
``on_bad_row`` is a callable: it is then given each malformed line's number and error, and
the line is left out (the chunks hold the other rows, ``chunk_size`` of them but the last).
"""
import bisect
import itertools
import numbers
import os

import math

import numpy as np

from ..exceptions import FeatureCountError
from ..kernels import readers as _k
from ._source import line_blocks, open_source

__all__ = ["read_libsvm", "read_csv", "RowLines"]

_SLOW_EXTRA = 4096


def _check_chunk_size(chunk_size):
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size!r}.")
    return int(chunk_size)


def _check_exists(src):
    """Fail early (at reader creation) for a missing path or an unusable argument."""
    if isinstance(src, (str, bytes, os.PathLike)):
        path = os.fsdecode(src)
        if path != "-" and not os.path.exists(path):
            raise FileNotFoundError(2, f"No such file: {path!r}", path)
        if path != "-" and os.path.isdir(path):
            raise IsADirectoryError(21, f"Expected a file, got a directory: {path!r}", path)
    elif not hasattr(src, "read"):
        raise TypeError(
            f"path_or_file must be a path, '-' for standard input, or a file object with read(); "
            f"got {type(src).__name__}."
        )


def _new_info():
    info = np.zeros(_k.INFO_SIZE, dtype=np.int64)
    info[_k.I_MAXIDX] = -1
    info[_k.I_MININDEX] = -1
    return info


def _fix_slow(buf, slow, n, X, y, name, line_base, bad, index_base=None, comment=None):
    """Parse the slow tokens with Python's float and store them; record ``bad[row] =
    (line, error)`` (``bad`` a dict) for the first non-number of each row and go on.
    ``index_base``: a LIBSVM file's (its errors name the feature by its index on the line,
    not by its column). ``comment``: a CSV file's comment character, or None."""
    for k in range(n):
        s, e, r, c, ln = (int(v) for v in slow[k])
        tok = buf[s:e]
        try:
            if b"_" in tok:
                raise ValueError
            v = float(tok)
        except ValueError:
            v = None
        if v is None or not math.isfinite(v):  # 'nan', 'inf', '1e400': no learner takes them
            what = ("label" if c < 0 else f"value in feature column {c}" if index_base is None
                    else f"value of feature index {c + index_base}")
            kind = "a number" if v is None else "a finite number"
            hint = ""
            text = tok.decode("utf-8", "replace")
            if v is None and comment is not None and comment in text:
                kind += _comment_hint(comment)
            elif v is None and _quoted(text):
                hint = " " + _NO_QUOTES
            elif v is None and _is_number(tok.replace(b",", b".").decode("utf-8", "replace")):
                # ',' is then not the delimiter, so it is safe to replace everywhere
                hint = (" It has a decimal comma: numbers need a decimal point. Export the "
                        "file with '.' as the decimal mark, or replace every ',' by '.' "
                        "(e.g. tr , . < IN > OUT).")
            exc = ValueError(
                f"{name}, line {line_base + ln + 1}: {what} {_shown(text)} is not {kind}.{hint}"
            )
            if index_base is None and c >= 0 and v is None:
                # (for the caller's advice: a CSV column of text may be the labels)
                exc.text_field = (line_base + ln + 1, c, _shown(text))
            bad.setdefault(r, (line_base + ln + 1, exc))
            continue
        if c < 0:
            y[r] = v
        else:
            X[r, c] = v


_NO_QUOTES = ("Quoted fields are not supported (a field ends at the next delimiter): "
              "export the file without quotes, or remove them (e.g. tr -d '\"' < IN > OUT "
              "when no field holds the delimiter).")


def _comment_hint(comment):
    """Added to the error of a field or line holding the comment character."""
    return f"; comments are only read as whole lines starting with {comment!r}"


def _shown(text, limit=80):
    """``repr(text)`` for an error message, cut to about ``limit`` characters (a runaway
    field, such as a whole line read as one value, must not fill the terminal)."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit - 20]!r}... ({len(text):,} characters)"


def _quoted(tok):
    return len(tok) >= 2 and tok[0] == tok[-1] and tok[0] in "\"'"


def _skip_bad(err, info, r0, bad, line_base, labels, label_check, on_bad_row, X, y, row_line,
              zero):
    """After one call of a compiled parser that filled rows ``r0`` to ``info[I_ROWS]`` and,
    when ``err`` (its error) is given, stopped at a malformed line: report the rows refused
    (``bad``: ``{row: (line, error)}``, the failing line, and the labels ``label_check``
    refuses) to ``on_bad_row`` in line order (``'error'``'s raises at the first), and
    remove them from the rows (zeroing the rows freed when ``zero``). Returns (end of the
    rows kept, their string labels or None)."""
    r1 = int(info[_k.I_ROWS])
    events = []
    if err is not None:    # a non-number on that line came first, as when raising
        events.append(bad.pop(r1, (line_base + int(info[_k.I_ERRLINE]) + 1, err)))
    if label_check is not None and r1 > r0:
        vals = np.asarray(labels) if labels is not None else y[r0:r1]
        for k, exc in label_check(vals, line_base + row_line[r0:r1] + 1):
            bad.setdefault(r0 + k, (line_base + int(row_line[r0 + k]) + 1, exc))
    if not bad and not events:
        return r1, labels
    events.extend(bad.values())
    events.sort(key=lambda e: e[0])
    for line, exc in events:
        on_bad_row(line, exc)
    m = r1
    if bad:
        keep = np.ones(r1 - r0, dtype=bool)
        keep[np.array(sorted(bad), dtype=np.int64) - r0] = False
        m = r0 + int(keep.sum())
        X[r0:m] = X[r0:r1][keep]
        y[r0:m] = y[r0:r1][keep]
        row_line[r0:m] = row_line[r0:r1][keep]
        if labels is not None:
            labels = [lab for lab, k in zip(labels, keep.tolist()) if k]
    if zero:               # LIBSVM rows are zero-filled: clear what the bad rows wrote
        X[m:min(r1 + 1, X.shape[0])] = 0.0
    return m, labels


def _raise_bad_row(line, exc):
    """``on_bad_row='error'``: the first malformed line stops the reading."""
    raise exc


def _check_on_bad_row(on_bad_row):
    if on_bad_row == "error":
        return _raise_bad_row
    if not callable(on_bad_row):
        raise TypeError(f"on_bad_row must be 'error' or a callable f(line, error), got "
                        f"{on_bad_row!r}.")
    return on_bad_row


def _token(buf, info):
    return buf[int(info[_k.I_TOKS]):int(info[_k.I_TOKE])].decode("utf-8", "replace")


class RowLines:
    """Where the rows of a reader are in its file: pass one as ``row_lines`` to
    :func:`read_libsvm` or :func:`read_csv`, and ``line(i)`` gives the 1-based line of the
    file (or stream) that holds data row ``i`` (0-based, counted over all chunks), header,
    blank and comment lines included.

    Memory: one entry where lines that are not rows (a header, blank or comment lines)
    come between rows, not one per row; ``forget_before(i)`` drops the entries of rows
    before ``i`` (a stream reader that no longer needs them keeps its memory bounded).

    Examples
    --------
    >>> import io
    >>> from fastbudget.datasets.readers import RowLines, read_csv
    >>> where = RowLines()
    >>> chunks = list(read_csv(io.BytesIO(b"a,label\\n1,0\\n\\n2,1\\n"), row_lines=where))
    >>> [where.line(i) for i in range(where.n_rows)]
    [2, 4]
    """

    def __init__(self):
        self.n_rows = 0      # rows recorded so far
        self._row = []       # first row of each run of rows whose lines follow one another
        self._gap = []       # its 0-based line minus its row index
        self._first = 0      # rows before this one are forgotten

    def _add(self, lines):
        """Record the 0-based lines (int64 array) of the next rows."""
        m = lines.shape[0]
        if m == 0:
            return
        gap = lines - np.arange(self.n_rows, self.n_rows + m)
        starts = np.flatnonzero(np.diff(gap)) + 1
        if not self._gap or gap[0] != self._gap[-1]:
            starts = np.concatenate(([0], starts))
        for k in starts.tolist():
            self._row.append(self.n_rows + k)
            self._gap.append(int(gap[k]))
        self.n_rows += m

    def clear(self):
        """Forget the rows recorded (before the same source is read again)."""
        self.__init__()

    def forget_before(self, i):
        """Drop what is recorded of the rows before row ``i`` (``line`` then refuses them)."""
        k = bisect.bisect_right(self._row, i) - 1
        if k > 0:
            del self._row[:k]
            del self._gap[:k]
        self._first = max(self._first, min(i, self.n_rows))

    def line(self, i):
        """The 1-based line of data row ``i`` (0-based); ``i`` must be below ``n_rows`` and
        not forgotten (``forget_before``)."""
        if not 0 <= i < self.n_rows:
            raise IndexError(f"row {i} has not been read (rows read: {self.n_rows}).")
        if i < self._first:
            raise IndexError(f"row {i} has been forgotten (rows kept: from {self._first}).")
        k = bisect.bisect_right(self._row, i) - 1
        return i + self._gap[k] + 1


# --------------------------------------------------------------------------- LIBSVM
def read_libsvm(path_or_file, n_features=None, chunk_size=10000, zero_based="auto",
                indexing=None, row_lines=None, on_bad_row="error", _label_check=None):
    """Stream a LIBSVM/svmlight file as dense chunks.

    Each line is ``label [qid:n] index:value index:value ... [# comment]`` with strictly
    increasing indices; missing indices are zeros. Blank lines and ``#`` comments are skipped.

    Parameters
    ----------
    path_or_file : str, os.PathLike or binary file object
        Path (plain, ``.gz``, ``.bz2`` or ``.xz``; compression is detected from the content),
        ``'-'`` for standard input, or an open file.
    n_features : int or None, default=None
        Number of columns of the dense chunks. Policy when None:

        - seekable source (a path or a seekable file object): a first pass over the whole file
          finds the largest index (constant memory, costs one extra read);
        - non-seekable source (standard input, pipes): it is inferred from the first chunk
          (the first ``chunk_size`` data lines), and a later line with a larger index raises a
          ``ValueError`` asking for ``n_features``.

        Indices beyond ``n_features`` raise ``ValueError``. Inferred, it is at most
        ``MAX_INFERRED_FEATURES`` (10^6): a larger index raises ``ValueError`` naming its
        line (the chunks are dense; pass ``n_features`` for wider data).
    chunk_size : int, default=10000
        Maximum number of rows per chunk.
    zero_based : bool or 'auto', default='auto'
        Whether indices start at 0. ``'auto'``: zero-based if an index 0 occurs in the scanned
        part (the whole file when a first pass is made, otherwise the first chunk); a later
        index 0 in a file taken as one-based raises ``ValueError``.
    indexing : dict or None, default=None
        When given, ``indexing['zero_based']`` is set (True or False) once the reader has
        decided, before the first chunk: a file read later with the same model should be
        read with that value (``fastbudget train`` saves it beside the model).
    row_lines : RowLines or None, default=None
        When given, it records the line of each row as the rows are read, so that a
        problem found later in a row (e.g. a label a model does not know) can name its line.
    on_bad_row : 'error' or callable, default='error'
        What a malformed line does: ``'error'`` raises the ``ValueError`` described below;
        a callable is called as ``on_bad_row(line, error)`` with the 1-based line number and
        that ``ValueError``, the line is left out (as if it were not in the file) and reading
        goes on. Problems that are not a line's (a file that cannot be read) still raise.
        The number of features and the index base inferred from the file (``n_features=None``,
        ``zero_based='auto'``) count the indices of every line, left-out ones included.

    Yields
    ------
    X_chunk : ndarray of float64, shape (m, n_features), m <= chunk_size
        Dense, C-contiguous.
    y_chunk : ndarray of float64, shape (m,)
        Labels as written in the file (e.g. -1.0, 1.0, 2.0).

    Raises
    ------
    FileNotFoundError
        When the path does not exist (at call time).
    ValueError
        Bad arguments (at call time); malformed lines (naming file and line), unsupported
        compression (when iteration starts).

    Examples
    --------
    >>> import io
    >>> from fastbudget.datasets import read_libsvm
    >>> f = io.BytesIO(b"+1 1:0.5 3:2\\n-1 2:1\\n")
    >>> [(X.tolist(), y.tolist()) for X, y in read_libsvm(f)]
    [([[0.5, 0.0, 2.0], [0.0, 1.0, 0.0]], [1.0, -1.0])]
    """
    chunk_size = _check_chunk_size(chunk_size)
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) or n_features < 0:
            raise ValueError(f"n_features must be a non-negative integer or None, got {n_features!r}.")
        n_features = int(n_features)
    if zero_based not in (True, False, "auto"):
        raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}.")
    _check_exists(path_or_file)
    _check_row_lines(row_lines)
    on_bad_row = _check_on_bad_row(on_bad_row)
    return _libsvm_chunks(path_or_file, n_features, chunk_size, zero_based, indexing,
                          row_lines, on_bad_row, _label_check)


def _check_row_lines(row_lines):
    if row_lines is not None and not isinstance(row_lines, RowLines):
        raise TypeError(f"row_lines must be a RowLines object or None, got "
                        f"{type(row_lines).__name__}.")


#: The largest number of features ``read_libsvm`` infers from the indices of a file
#: (``n_features=None``): chunks are dense, so a line such as ``+1 1:0.5 1000000000000:0.3``
#: would otherwise ask for a chunk of 10^12 columns (71 PiB). A file with a larger index is
#: refused naming its line; pass ``n_features`` when the data really has more features.
MAX_INFERRED_FEATURES = 1_000_000


def _index_beyond(blocks, bound, offset, name):
    """``ValueError`` naming the first line of ``blocks`` (``(buf, pos, end)``, as the
    parser takes them) holding a feature index beyond ``bound`` features."""
    line = 0
    for buf, pos, end in blocks:
        line_no = line + buf.count(b"\n", 0, pos)
        for text in buf[pos:end].split(b"\n"):
            line_no += 1
            body = text.split(b"#", 1)[0].split()
            for tok in body[1:]:
                idx = tok.split(b":", 1)[0]
                if idx.isdigit() and int(idx) + 1 - offset > bound:
                    return ValueError(
                        f"{name}, line {line_no}: feature index {int(idx)} in "
                        f"{tok.decode('ascii', 'replace')!r} is beyond the "
                        f"{MAX_INFERRED_FEATURES:,} features read_libsvm infers at most (dense "
                        f"chunks of that width would not fit in memory); pass n_features "
                        f"(--n-features on the command line) if the data really has that many "
                        f"features, or fix the line.")
        line = line_no - 1 if buf[end - 1:end] == b"\n" else line_no
    return ValueError(f"{name}: a feature index is beyond the {MAX_INFERRED_FEATURES:,} "
                      f"features read_libsvm infers at most; pass n_features.")


def _libsvm_chunks(src, n_features, chunk_size, zero_based, indexing=None, row_lines=None,
                   on_bad_row=_raise_bad_row, label_check=None):
    stream, close, name, reopen = open_source(src)
    try:
        offset = None if zero_based == "auto" else (0 if zero_based else 1)
        inferred = False
        offset_from = "argument"
        blocks = ((b, 0, e) for b, e in line_blocks(stream, name))
        if n_features is None and reopen is not None:
            info = _new_info()
            for buf, _, end in blocks:
                _k.scan_libsvm(np.frombuffer(buf, dtype=np.uint8), 0, end, -1, info)
            close()
            stream, close = reopen()
            blocks = ((b, 0, e) for b, e in line_blocks(stream, name))
            mx, mn = int(info[_k.I_MAXIDX]), int(info[_k.I_MININDEX])
            if offset is None:
                offset = 0 if mn == 0 else 1
                offset_from = "the whole file"
            n_cols = max(mx + 1 - offset, 0)
            if n_cols > MAX_INFERRED_FEATURES:
                raise _index_beyond(blocks, MAX_INFERRED_FEATURES, offset, name)
        else:
            if offset is None or n_features is None:
                info = _new_info()
                pre = []
                for item in blocks:
                    pre.append(item)
                    buf, _, end = item
                    st = _k.scan_libsvm(np.frombuffer(buf, dtype=np.uint8), 0, end, chunk_size, info)
                    if st == _k.CHUNK_FULL:
                        break
                blocks = itertools.chain(pre, blocks)
                mx, mn = int(info[_k.I_MAXIDX]), int(info[_k.I_MININDEX])
                if offset is None:
                    offset = 0 if mn == 0 else 1
                    offset_from = "the first chunk"
            if n_features is None:
                n_cols = max(mx + 1 - offset, 0)
                inferred = True
                if n_cols > MAX_INFERRED_FEATURES:
                    raise _index_beyond(pre, MAX_INFERRED_FEATURES, offset, name)
            else:
                n_cols = n_features
        if indexing is not None:
            indexing["zero_based"] = offset == 0
        yield from _libsvm_parse(blocks, n_cols, offset, chunk_size, name, inferred, offset_from,
                                 row_lines, on_bad_row, label_check)
    finally:
        close()


def _libsvm_parse(blocks, d, offset, chunk_size, name, inferred, offset_from, row_lines,
                  on_bad_row=_raise_bad_row, label_check=None):
    X = np.zeros((chunk_size, d))
    y = np.zeros(chunk_size)
    row_line = np.zeros(chunk_size, dtype=np.int64)
    row = 0
    slow = np.empty((d + _SLOW_EXTRA, 5), dtype=np.int64)
    info = _new_info()
    line_base = 0
    for buf, pos, end in blocks:
        arr = np.frombuffer(buf, dtype=np.uint8)
        line_base += buf.count(b"\n", 0, pos)
        while pos < end:
            info[_k.I_NSLOW] = 0
            r0 = row
            st = _k.parse_libsvm(arr, pos, end, X, y, row, offset, True, slow, row_line, info)
            bad = {}
            _fix_slow(buf, slow, int(info[_k.I_NSLOW]), X, y, name, line_base, bad,
                      index_base=offset)
            err = None if st < 10 else _libsvm_error(st, buf, info, name, line_base, d,
                                                     offset, inferred, offset_from)
            r1, _ = _skip_bad(err, info, r0, bad, line_base, None, label_check,
                              on_bad_row, X, y, row_line, True)
            if row_lines is not None:
                row_lines._add(line_base + row_line[r0:r1])
            line_base += int(info[_k.I_LINES])
            pos = int(info[_k.I_POS])
            if st >= 10:           # skipped: go on after the bad line
                pos = buf.index(b"\n", pos) + 1
                line_base += 1
            row = r1
            if row == chunk_size:
                yield X, y
                X = np.zeros((chunk_size, d))
                y = np.zeros(chunk_size)
                row = 0
    if row:
        yield X[:row], y[:row]


def _libsvm_error(st, buf, info, name, line_base, d, offset, inferred, offset_from):
    where = f"{name}, line {line_base + int(info[_k.I_ERRLINE]) + 1}"
    tok = _token(buf, info)
    detail = int(info[_k.I_DETAIL])
    if st == _k.ERR_NO_COLON:
        msg = f"token {tok!r} is not of the form index:value (is the label missing or doubled?)"
    elif st == _k.ERR_BAD_INDEX:
        msg = f"the feature index in {tok!r} is not a non-negative integer"
    elif st == _k.ERR_NOT_INCREASING:
        msg = (f"feature index {detail} in {tok!r} is not larger than the previous index on the "
               "line; indices must be sorted and unique")
    elif st == _k.ERR_ZERO_INDEX:
        if offset_from == "argument":
            msg = f"feature index 0 in {tok!r} but zero_based=False; pass zero_based=True or 'auto'"
        else:
            msg = (f"feature index 0 in {tok!r}, but indices were taken as one-based because "
                   f"{offset_from} had no index 0; pass zero_based=True")
    elif st == _k.ERR_INDEX_TOO_LARGE:
        if inferred:
            msg = (f"feature index {detail} is beyond the {d} features inferred from the first "
                   "chunk of a non-seekable source; pass n_features explicitly")
        else:
            msg = (f"feature index {detail} is beyond n_features={d} "
                   f"({'zero' if offset == 0 else 'one'}-based indices); pass a larger n_features")
            return FeatureCountError(f"{where}: {msg}.", where, d)
    elif st == _k.ERR_EMPTY_VALUE:
        msg = f"token {tok!r} has no value after ':'"
    else:  # pragma: no cover - all codes are handled above
        msg = f"parse error code {st}"
    return ValueError(f"{where}: {msg}.")


# --------------------------------------------------------------------------- CSV / TSV
def _is_number(tok):
    try:
        float(tok)
    except ValueError:
        return False
    return "_" not in tok


def _split(text, delim):
    if delim is None:
        return text.split()
    return [t.strip() for t in text.split(delim)]


def _numbered_columns(tokens, label_col):
    """A header of column numbers, as pandas' ``to_csv`` of an unnamed frame or PMLB write:
    the fields other than the label are at least 3 plain integers counting up by one from 0
    or 1 (``0,1,...,33,target``, ``0,1,2,3``)."""
    vals = [t for j, t in enumerate(tokens) if j != label_col]
    if len(vals) < 3 or not all(t.isdigit() for t in vals):
        return False
    first = int(vals[0])
    return first in (0, 1) and [int(t) for t in vals] == list(range(first, first + len(vals)))


_LABELS_LOOKED_AT = 1000


def _skipped(text, comment):
    """Whether a stripped line is blank or a comment line (``comment`` None: no comments)."""
    return not text or (comment is not None and text.startswith(comment))


def _labels_after_are_numbers(buf, q, end, delim, label_col, n_tokens, comment=None):
    """Whether the lines after the first (those in the same block, at most
    ``_LABELS_LOOKED_AT`` of them, lines with another number of fields left out) hold
    at least one line and only numbers in the label field."""
    seen = 0
    p = q + 1
    while p < end and seen < _LABELS_LOOKED_AT:
        r = buf.index(b"\n", p)
        text = buf[p:r].decode("utf-8", "replace").strip()
        p = r + 1
        if _skipped(text, comment):
            continue
        tokens = _split(text, delim)
        if len(tokens) != n_tokens:
            continue                       # the parser reports it
        if not _is_number(tokens[label_col]):
            return False
        seen += 1
    return seen > 0


def _label_type(tokens, label_col, label_column, header, buf, q, end, delim, comment=None):
    """``label_type='auto'``: 'str' when the label field of the first data line is not a
    number. The first line is data unless ``header`` says so, the label is named, a field
    other than the label is not a number, or (``header='auto'``) its label field is not a
    number while those of the lines after it in the block are all numbers (class labels
    are all numbers or all text, so it is a header of numbered or numeric feature names);
    the data line after a header is looked for in the same block (if it is not there,
    numbers)."""
    if label_column is None:
        return "numeric"
    others_numeric = all(_is_number(t) for j, t in enumerate(tokens) if j != label_col)
    if header is True or isinstance(label_column, str) or (header == "auto" and (
            not others_numeric or _numbered_columns(tokens, label_col))):
        p = q + 1
        while p < end:
            r = buf.index(b"\n", p)
            text = buf[p:r].decode("utf-8", "replace").strip()
            if not _skipped(text, comment):
                tokens = _split(text, delim)
                break
            p = r + 1
        else:
            return "numeric"
        if label_col >= len(tokens):
            return "numeric"
        return "numeric" if _is_number(tokens[label_col]) else "str"
    if _is_number(tokens[label_col]):
        return "numeric"
    if header == "auto" and _labels_after_are_numbers(buf, q, end, delim, label_col,
                                                      len(tokens), comment):
        return "numeric"                   # then a header: its label field is not a number
    return "str"


def read_csv(path_or_file, label_column=-1, delimiter=None, header="auto", chunk_size=10000,
             label_type="numeric", row_lines=None, on_bad_row="error", comments="#",
             _label_check=None):
    """Stream delimited text (CSV, TSV, whitespace-separated) as dense chunks.

    All columns except the label must be numbers; there is no quoting and no missing-value
    support (an empty field raises; so does a quoted field, label included: only a header's
    names may be quoted, and they are read without their quotes). Spaces around fields are
    ignored, blank lines and comment lines (first non-blank character ``#``) skipped; a
    comment after data on the same line is not supported (it raises).

    Parameters
    ----------
    path_or_file : str, os.PathLike or binary file object
        Path (plain, ``.gz``, ``.bz2`` or ``.xz``), ``'-'`` for standard input, or a file.
    label_column : int, str or None, default=-1
        Column holding the label: an index (negative counts from the end), a header name, or
        None when the file has no label (``y_chunk`` is then None).
    delimiter : str or None, default=None
        A single character, or ``'whitespace'`` for runs of spaces/tabs. None sniffs the first
        line that is not blank or a comment: tab if it has one, else semicolon if it has one
        (spreadsheets export ';'-separated files where ',' is the decimal mark), else comma if
        it has one, else whitespace. Numbers need a decimal point: a decimal comma (``1,5``)
        raises a ``ValueError`` that says so.
    header : 'auto', bool, default='auto'
        Whether the first line that is not blank or a comment is a header. ``'auto'``: it is
        a header when one of its fields is not a number (the label field is ignored when
        ``label_type='str'``), or when its fields other than the label number the columns (at
        least 3 plain integers counting up from 0 or 1, as ``0,1,2,...,target`` or pandas'
        ``0,1,2,3``). With ``label_type='auto'`` a first line whose fields are all numbers
        but the label is a header when the label fields of the lines after it (those read
        with it, up to 1000) are all numbers (``400,410,420,label`` over numeric labels: class
        labels are all numbers or all text); over text labels such a line is data (UCI
        letter's ``T,2,8,...``), so pass ``header=True`` for a header of numeric feature names
        above text labels.
    chunk_size : int, default=10000
        Maximum number of rows per chunk.
    label_type : {'numeric', 'str', 'auto'}, default='numeric'
        Labels as float64, or as strings (e.g. ``'A'`` in UCI letter). ``'auto'``: strings
        when the label field of the first data line is not a number (that line is data, not a
        header, when every other field is a number, unless the labels after it are numbers:
        see ``header``), else numbers.
    row_lines : RowLines or None, default=None
        As in :func:`read_libsvm`: records the line of each row.
    on_bad_row : 'error' or callable, default='error'
        As in :func:`read_libsvm`: a callable is told of each malformed data line (a field
        that is not a finite number, another number of fields, an empty or quoted field),
        which is left out. The first line that is not blank or a comment still decides the
        delimiter, the header and the number of fields; a bad label column or header still
        raises.
    comments : str or None, default='#'
        Lines whose first non-blank character is this one are skipped, as blank lines are
        (they still count in line numbers and :class:`RowLines`). A single ASCII character
        other than the delimiter, a space, a digit, a sign, ``.``, ``e`` or ``E``; None: no
        comment lines (a line starting with ``#`` is then data). Only whole lines: a ``#``
        after a field raises. A header written as a comment (``numpy.savetxt``'s
        ``# a,b,label``) is skipped too; pass None to read it as the header (also when a
        text label in the first column may start with ``#``).

    Yields
    ------
    X_chunk : ndarray of float64, shape (m, n_features), m <= chunk_size
    y_chunk : ndarray of float64 or str, shape (m,), or None

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`read_libsvm`; a line with a different number of fields than the first data
        line raises ``ValueError`` with its line number.

    Examples
    --------
    >>> import io
    >>> from fastbudget.datasets import read_csv
    >>> f = io.BytesIO(b"a,b,label\\n1,2,0\\n3,4,1\\n")
    >>> [(X.tolist(), y.tolist()) for X, y in read_csv(f)]
    [([[1.0, 2.0], [3.0, 4.0]], [0.0, 1.0])]
    """
    chunk_size = _check_chunk_size(chunk_size)
    if delimiter is not None:
        if delimiter == "whitespace":
            delimiter = " "
        if not isinstance(delimiter, str) or len(delimiter) != 1 or ord(delimiter) > 127 \
                or delimiter in "\n\r.-+0123456789eE":
            raise ValueError(
                f"delimiter must be a single ASCII character such as ',' or '\\t', 'whitespace', "
                f"or None to sniff it; got {delimiter!r}."
            )
    if comments is not None and (
            not isinstance(comments, str) or len(comments) != 1 or ord(comments) > 127
            or comments in "\n\r\t\v\f .-+0123456789eE" or comments == delimiter):
        raise ValueError(
            f"comments must be a single ASCII character such as '#' or '%' (not the delimiter, "
            f"a space, a digit, a sign, '.', 'e' or 'E'), or None for no comment lines; got "
            f"{comments!r}."
        )
    if header not in (True, False, "auto"):
        raise ValueError(f"header must be True, False or 'auto', got {header!r}.")
    if label_type not in ("numeric", "str", "auto"):
        raise ValueError(f"label_type must be 'numeric', 'str' or 'auto', got {label_type!r}.")
    if not (label_column is None or isinstance(label_column, str)
            or (isinstance(label_column, numbers.Integral) and not isinstance(label_column, bool))):
        raise ValueError(f"label_column must be an int, a column name or None, got {label_column!r}.")
    if isinstance(label_column, str) and header is False:
        raise ValueError("label_column given by name needs a header line; pass header=True or 'auto'.")
    _check_row_lines(row_lines)
    _check_exists(path_or_file)
    on_bad_row = _check_on_bad_row(on_bad_row)
    return _csv_chunks(path_or_file, label_column, delimiter, header, chunk_size, label_type,
                       row_lines, on_bad_row, _label_check, comments)


def _csv_chunks(src, label_column, delimiter, header, chunk_size, label_type, row_lines=None,
                on_bad_row=_raise_bad_row, label_check=None, comment="#"):
    stream, close, name, _ = open_source(src)
    try:
        raw_blocks = line_blocks(stream, name)
        first = None
        line_base = 0
        cb = None if comment is None else comment.encode()
        commented = False                  # comment lines before the first line
        for buf, end in raw_blocks:
            p = 0
            while p < end:
                q = buf.index(b"\n", p)
                text = buf[p:q].strip()
                if text:
                    if cb is None or not text.startswith(cb):
                        first = (buf, p, q, end)
                        break
                    commented = True
                p = q + 1
            if first is not None:
                break
            line_base += buf.count(b"\n", 0, end)
        if first is None:
            return
        buf, p, q, end = first
        text = buf[p:q].decode("utf-8", "replace").strip()
        if delimiter is None:
            delim = next((c for c in "\t;," if c in text), None)
        else:
            delim = None if delimiter == " " else delimiter
        if comment is not None and comment == delim:
            first_line_no = line_base + buf.count(b"\n", 0, p) + 1
            raise ValueError(
                f"{name}: the comment character {comment!r} is the delimiter sniffed from line "
                f"{first_line_no}; pass another comments= or the delimiter."
            )
        tokens = _split(text, delim)
        n_tokens = len(tokens)
        names = [t.strip().strip('"').strip("'") for t in tokens]
        if label_column is None:
            label_col = -1
        elif isinstance(label_column, str):
            if label_column not in names:
                hint = (f" Lines starting with {comment!r} above it were skipped as comments: "
                        f"pass comments=None if the header is one of them." if commented else "")
                raise ValueError(
                    f"{name}: label_column {label_column!r} is not in the header {names}.{hint}"
                )
            label_col = names.index(label_column)
        else:
            label_col = int(label_column)
            if not -n_tokens <= label_col < n_tokens:
                first_line_no = line_base + buf.count(b"\n", 0, p) + 1
                raise ValueError(
                    f"{name}: label_column={label_column} is out of range for the {n_tokens} "
                    f"columns of line {first_line_no}."
                )
            label_col %= n_tokens
        if label_type == "auto":
            label_type = _label_type(tokens, label_col, label_column, header, buf, q, end,
                                     delim, comment)
        if header == "auto":
            is_header = isinstance(label_column, str) or _numbered_columns(
                tokens, label_col) or any(
                not _is_number(t) for j, t in enumerate(tokens)
                if not (label_type == "str" and j == label_col)
            )
        else:
            is_header = header
            if header is True and commented and all(_is_number(t) for t in tokens):
                # numpy.savetxt writes its header as a comment ('# a,b,label'): the line
                # taken as the header would be the first row of data, lost without a word
                first_line_no = line_base + buf.count(b"\n", 0, p) + 1
                raise ValueError(
                    f"{name}: header=True, but line {first_line_no}, the first that is not a "
                    f"comment, holds only numbers, and lines starting with {comment!r} above "
                    f"it were skipped as comments. If the header is one of them (numpy.savetxt "
                    f"writes '# a,b,label'), pass comments=None; if the file has no header, "
                    f"pass header=False.")
        start = q + 1 if is_header else p
        line_base += buf.count(b"\n", 0, start)
        blocks = itertools.chain([(buf, start, end)], ((b, 0, e) for b, e in raw_blocks))
        dbyte = -1 if delim is None else ord(delim)
        yield from _csv_parse(blocks, dbyte, n_tokens, label_col, chunk_size, label_type, name,
                              line_base, delim, row_lines, on_bad_row, label_check, comment)
    finally:
        close()


def _csv_parse(blocks, dbyte, n_tokens, label_col, chunk_size, label_type, name, line_base,
               delim, row_lines, on_bad_row=_raise_bad_row, label_check=None, comment="#"):
    d = n_tokens - (1 if label_col >= 0 else 0)
    str_labels = label_type == "str" and label_col >= 0
    if label_col < 0:
        label_check = None                 # no labels to check
    X = np.empty((chunk_size, d))
    y = np.zeros(chunk_size)
    labels = []
    span = np.empty((chunk_size if str_labels else 0, 2), dtype=np.int64)
    row_line = np.zeros(chunk_size, dtype=np.int64)
    row = 0
    slow = np.empty((n_tokens + _SLOW_EXTRA, 5), dtype=np.int64)
    info = _new_info()
    cbyte = -1 if comment is None else ord(comment)
    first_block = True
    for buf, pos, end in blocks:
        arr = np.frombuffer(buf, dtype=np.uint8)
        if not first_block:
            line_base += buf.count(b"\n", 0, pos)
        first_block = False
        while pos < end:
            info[_k.I_NSLOW] = 0
            r0 = row
            st = _k.parse_delimited(arr, pos, end, dbyte, cbyte, n_tokens, label_col, X, y, span,
                                    row, slow, row_line, info)
            bad = {}
            _fix_slow(buf, slow, int(info[_k.I_NSLOW]), X, y, name, line_base, bad,
                      comment=comment)
            r1 = int(info[_k.I_ROWS])
            new = None
            if str_labels:
                new = [buf[s:e].decode("utf-8", "replace") for s, e in span[r0:r1].tolist()]
                for k, lab in enumerate(new):
                    if _quoted(lab):
                        line = line_base + int(row_line[r0 + k]) + 1
                        exc = ValueError(f"{name}, line {line}: label {lab!r} is in quotes. "
                                         f"{_NO_QUOTES}")
                        bad.setdefault(r0 + k, (line, exc))
            err = None if st < 10 else _csv_error(st, buf, info, name, line_base, n_tokens,
                                                  delim, comment)
            r1, new = _skip_bad(err, info, r0, bad, line_base, new, label_check, on_bad_row,
                                X, y, row_line, False)
            if row_lines is not None:
                row_lines._add(line_base + row_line[r0:r1])
            if str_labels:
                labels.extend(new)
            line_base += int(info[_k.I_LINES])
            pos = int(info[_k.I_POS])
            if st >= 10:           # skipped: go on after the bad line
                pos = buf.index(b"\n", pos) + 1
                line_base += 1
            row = r1
            if row == chunk_size:
                yield X, (np.array(labels) if str_labels else (y if label_col >= 0 else None))
                X = np.empty((chunk_size, d))
                y = np.zeros(chunk_size)
                labels = []
                row = 0
    if row:
        yield X[:row], (np.array(labels) if str_labels else (y[:row] if label_col >= 0 else None))


def _csv_error(st, buf, info, name, line_base, n_tokens, delim, comment=None):
    where = f"{name}, line {line_base + int(info[_k.I_ERRLINE]) + 1}"
    detail = int(info[_k.I_DETAIL])
    dname = {None: "whitespace", ",": "','", "\t": "tab", ";": "';'"}.get(delim, repr(delim))
    if st in (_k.ERR_TOO_FEW, _k.ERR_TOO_MANY):
        msg = (f"expected {n_tokens} fields (as on the first line) separated by {dname}, "
               f"found {detail}: {_token(buf, info)[:200]!r}")
    elif st == _k.ERR_EMPTY_FIELD:
        msg = (f"field {detail + 1} is empty; missing values are not supported, impute or drop "
               "them first")
    else:  # pragma: no cover
        msg = f"parse error code {st}"
    if comment is not None and comment in _token(buf, info):    # the line
        msg += _comment_hint(comment)
    return ValueError(f"{where}: {msg}.")


def collect(chunks):
    """Concatenate the chunks of a reader into ``(X, y)`` (for data that fits in memory)."""
    Xs, ys = [], []
    for X, y in chunks:
        Xs.append(X)
        ys.append(y)
    if not Xs:
        return np.zeros((0, 0)), np.zeros(0)
    X = np.ascontiguousarray(np.concatenate(Xs, axis=0))
    y = None if ys[0] is None else np.concatenate(ys)
    return X, y

