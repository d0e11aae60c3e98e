"""Compiled text parsers for the chunked readers in :mod:`fastbudget.datasets`.

All functions work on a block of raw bytes (``buf``, a 1-D ``uint8`` array holding whole lines,
each ending in ``\\n``) and write parsed rows into preallocated output arrays. They allocate
nothing, never raise, and report through an ``int64`` ``info`` array and an integer status
(``OK``, ``CHUNK_FULL``, ``SLOW_FULL`` or one of the ``ERR_*`` codes below), which the Python
layer turns into exceptions naming the file and line.

Numbers are parsed on a fast path that is exact: a decimal mantissa of at most 2**53 scaled by
10**k with |k| <= 22 is one correctly rounded IEEE multiplication or division (Clinger's fast
path). Any token outside that grammar (more digits, big exponents, ``nan``, ``inf``, garbage) is
recorded as a *slow token* ``(start, end, row, col, line)`` and parsed by Python's ``float``,
which also produces the error message when it is not a number. Results are therefore
bit-identical to ``float(token)`` for every token.

``info`` layout (indices are the ``I_*`` constants): byte position where parsing stopped (the
start of the first unparsed line), rows filled so far, lines consumed in this call, status, the
failing line (relative to the call), a detail value, the number of slow tokens, the failing
token's start and end, the largest and smallest feature index seen (LIBSVM).
"""
import numpy as np
from ._jit import njit

# status codes
OK = 0
CHUNK_FULL = 1
SLOW_FULL = 2
ERR_NO_COLON = 10
ERR_BAD_INDEX = 11
ERR_NOT_INCREASING = 12
ERR_ZERO_INDEX = 13
ERR_INDEX_TOO_LARGE = 14
ERR_EMPTY_VALUE = 15
ERR_TOO_FEW = 20
ERR_TOO_MANY = 21
ERR_EMPTY_FIELD = 22

# info slots
I_POS = 0
I_ROWS = 1
I_LINES = 2
I_STATUS = 3
I_ERRLINE = 4
I_DETAIL = 5
I_NSLOW = 6
I_TOKS = 7
I_TOKE = 8
I_MAXIDX = 9
I_MININDEX = 10
INFO_SIZE = 11

# slow-token columns
S_START = 0
S_END = 1
S_ROW = 2
S_COL = 3
S_LINE = 4

_POW10 = np.array([10.0 ** k for k in range(23)])
_TWO53 = 9007199254740992


@njit(cache=True)
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True)
def fast_float(buf, s, e):
    """Parse ``buf[s:e]`` as a decimal float on the exact fast path.

    Returns
    -------
    value : float
    ok : bool
        False when the token is outside the fast grammar
        ``[+-]? digits [. digits] [(e|E) [+-]? digits]`` or too long to be parsed exactly;
        the caller must then fall back to Python's ``float``.
    """
    i = s
    neg = False
    if i < e and (buf[i] == 45 or buf[i] == 43):
        neg = buf[i] == 45
        i += 1
    m = 0
    exp10 = 0
    any_digit = False
    while i < e and buf[i] >= 48 and buf[i] <= 57:
        m = m * 10 + (buf[i] - 48)
        if m > _TWO53:
            return 0.0, False
        any_digit = True
        i += 1
    if i < e and buf[i] == 46:
        i += 1
        while i < e and buf[i] >= 48 and buf[i] <= 57:
            m = m * 10 + (buf[i] - 48)
            if m > _TWO53:
                return 0.0, False
            exp10 -= 1
            any_digit = True
            i += 1
    if not any_digit:
        return 0.0, False
    if i < e and (buf[i] == 101 or buf[i] == 69):
        i += 1
        eneg = False
        if i < e and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        ex = 0
        nd = 0
        while i < e and buf[i] >= 48 and buf[i] <= 57:
            if ex < 100000:
                ex = ex * 10 + (buf[i] - 48)
            nd += 1
            i += 1
        if nd == 0:
            return 0.0, False
        if eneg:
            exp10 -= ex
        else:
            exp10 += ex
    if i != e:
        return 0.0, False
    v = float(m)
    if m != 0:
        if exp10 > 0:
            if exp10 > 22:
                return 0.0, False
            v = v * _POW10[exp10]
        elif exp10 < 0:
            if exp10 < -22:
                return 0.0, False
            v = v / _POW10[-exp10]
    if neg:
        v = -v
    return v, True


@njit(cache=True)
def scan_libsvm(buf, pos, end, max_lines, info):
    """Scan LIBSVM lines for the largest and smallest feature index, without storing values.

    Lenient: malformed tokens are skipped (the parsing pass reports them). Stops after
    ``max_lines`` data lines (use a negative value for no limit).

    Parameters
    ----------
    buf : ndarray of uint8, shape (n_bytes,)
    pos, end : int
        Byte range to scan; ``buf[end - 1]`` is ``\\n``.
    max_lines : int
    info : ndarray of int64, shape (INFO_SIZE,)
        Modified in place: ``I_POS`` (where scanning stopped), ``I_ROWS`` (data lines seen,
        accumulated), ``I_MAXIDX`` and ``I_MININDEX`` (accumulated; -1 when none yet).

    Returns
    -------
    status : int
        ``OK`` or ``CHUNK_FULL`` when ``max_lines`` was reached.
    """
    rows = info[I_ROWS]
    mx = info[I_MAXIDX]
    mn = info[I_MININDEX]
    status = OK
    while pos < end:
        if max_lines >= 0 and rows >= max_lines:
            status = CHUNK_FULL
            break
        le = pos
        while le < end and buf[le] != 10:
            le += 1
        ce = pos
        while ce < le and buf[ce] != 35:
            ce += 1
        i = pos
        while i < ce and _is_space(buf[i]):
            i += 1
        if i < ce:
            rows += 1
            # skip the label
            while i < ce and not _is_space(buf[i]):
                i += 1
            while True:
                while i < ce and _is_space(buf[i]):
                    i += 1
                if i >= ce:
                    break
                ts = i
                while i < ce and not _is_space(buf[i]):
                    i += 1
                te = i
                c = ts
                idx = 0
                nd = 0
                while c < te and buf[c] >= 48 and buf[c] <= 57:
                    if idx < 1000000000000:
                        idx = idx * 10 + (buf[c] - 48)
                    nd += 1
                    c += 1
                if nd > 0 and c < te and buf[c] == 58:
                    if idx > mx:
                        mx = idx
                    if mn < 0 or idx < mn:
                        mn = idx
        pos = le + 1
    info[I_POS] = pos
    info[I_ROWS] = rows
    info[I_MAXIDX] = mx
    info[I_MININDEX] = mn
    return status


@njit(cache=True)
def _add_slow(slow, k, s, e, row, col, line):
    slow[k, S_START] = s
    slow[k, S_END] = e
    slow[k, S_ROW] = row
    slow[k, S_COL] = col
    slow[k, S_LINE] = line


@njit(cache=True)
def parse_libsvm(buf, pos, end, X, y, row, offset, check_max, slow, row_line, info):
    """Parse LIBSVM/svmlight lines ``label idx:val idx:val ... [# comment]`` into dense rows.

    Parameters
    ----------
    buf : ndarray of uint8, shape (n_bytes,)
    pos, end : int
        Byte range; ``buf[end - 1]`` is ``\\n``.
    X : ndarray of float64, shape (chunk_size, n_features)
        Zero-filled output rows. Modified in place (rows ``row, row + 1, ...``).
    y : ndarray of float64, shape (chunk_size,)
        Labels. Modified in place.
    row : int
        First row of ``X`` to fill.
    offset : int
        1 for one-based indices, 0 for zero-based; column = index - offset.
    check_max : bool
        If True, an index beyond ``n_features`` is an error; otherwise it is ignored (only
        recorded in ``info[I_MAXIDX]``).
    slow : ndarray of int64, shape (cap, 5)
        Slow tokens (see module docstring). Modified in place. ``cap`` must exceed
        ``n_features + 2`` so that any valid line fits.
    row_line : ndarray of int64, shape (chunk_size,)
        The line of each row stored, counted from ``pos`` (0 for the first line of the
        call), so that the caller can name a row's line in the file. Modified in place.
    info : ndarray of int64, shape (INFO_SIZE,)
        Modified in place. ``I_NSLOW`` must be 0 on entry; ``I_MAXIDX`` and ``I_MININDEX``
        accumulate.

    Returns
    -------
    status : int
        ``OK`` (buffer exhausted), ``CHUNK_FULL``, ``SLOW_FULL`` (handle slow tokens, call
        again from ``info[I_POS]``) or an ``ERR_*`` code (``info[I_ERRLINE]``, ``I_TOKS``,
        ``I_TOKE``, ``I_DETAIL`` describe it).
    """
    n_rows = X.shape[0]
    n_cols = X.shape[1]
    cap = slow.shape[0]
    nslow = np.int64(0)   # (int64, not a literal: one signature of _add_slow)
    lines = np.int64(0)
    mx = info[I_MAXIDX]
    mn = info[I_MININDEX]
    status = OK
    while pos < end:
        if row >= n_rows:
            status = CHUNK_FULL
            break
        if cap - nslow < n_cols + 2:
            status = SLOW_FULL
            break
        le = pos
        while le < end and buf[le] != 10:
            le += 1
        ce = pos
        while ce < le and buf[ce] != 35:
            ce += 1
        i = pos
        while i < ce and _is_space(buf[i]):
            i += 1
        if i >= ce:
            pos = le + 1
            lines += 1
            continue
        # label
        ts = i
        while i < ce and not _is_space(buf[i]):
            i += 1
        v, ok = fast_float(buf, ts, i)
        if ok:
            y[row] = v
        else:
            _add_slow(slow, nslow, ts, i, row, np.int64(-1), lines)
            nslow += 1
        last = -1
        err = OK
        while True:
            while i < ce and _is_space(buf[i]):
                i += 1
            if i >= ce:
                break
            ts = i
            colon = -1
            while i < ce and not _is_space(buf[i]):
                if colon < 0 and buf[i] == 58:
                    colon = i
                i += 1
            te = i
            if colon < 0:
                err = ERR_NO_COLON
            elif (colon - ts == 3 and buf[ts] == 113 and buf[ts + 1] == 105
                  and buf[ts + 2] == 100):
                continue  # qid:n
            else:
                idx = 0
                c = ts
                while c < colon and buf[c] >= 48 and buf[c] <= 57:
                    if idx < 1000000000000:
                        idx = idx * 10 + (buf[c] - 48)
                    c += 1
                if c != colon or colon == ts:
                    err = ERR_BAD_INDEX
                elif idx <= last:
                    err = ERR_NOT_INCREASING
                    info[I_DETAIL] = idx
                elif idx < offset:
                    err = ERR_ZERO_INDEX
                elif colon + 1 >= te:
                    err = ERR_EMPTY_VALUE
                else:
                    last = idx
                    if idx > mx:
                        mx = idx
                    if mn < 0 or idx < mn:
                        mn = idx
                    col = idx - offset
                    if col >= n_cols:
                        if check_max:
                            err = ERR_INDEX_TOO_LARGE
                            info[I_DETAIL] = idx
                    else:
                        v, ok = fast_float(buf, colon + 1, te)
                        if ok:
                            X[row, col] = v
                        else:
                            _add_slow(slow, nslow, colon + 1, te, row, col, lines)
                            nslow += 1
            if err != OK:
                info[I_TOKS] = ts
                info[I_TOKE] = te
                break
        if err != OK:
            status = err
            info[I_ERRLINE] = lines
            break
        row_line[row] = lines
        row += 1
        lines += 1
        pos = le + 1
    info[I_POS] = pos
    info[I_ROWS] = row
    info[I_LINES] = lines
    info[I_STATUS] = status
    info[I_NSLOW] = nslow
    info[I_MAXIDX] = mx
    info[I_MININDEX] = mn
    return status


@njit(cache=True)
def parse_delimited(buf, pos, end, delim, comment, n_tokens, label_col, X, y, lab_span, row,
                    slow, row_line, info):
    """Parse delimited text lines (CSV, TSV or whitespace-separated) into dense rows.

    Each line that is not blank or a comment must hold exactly ``n_tokens`` fields. Spaces
    and tabs around a field are stripped; a trailing ``\\r`` is ignored; blank lines are
    skipped, and so are comment lines (whose first non-blank byte is ``comment``).

    Parameters
    ----------
    buf : ndarray of uint8, shape (n_bytes,)
    pos, end : int
        Byte range; ``buf[end - 1]`` is ``\\n``.
    delim : int
        Delimiter byte (44 ``,``, 9 tab, 59 ``;`` ...), or -1 for runs of whitespace.
    comment : int
        Comment byte (35 ``#``), or -1 for no comment lines. Only whole lines are comments:
        elsewhere in a line it is part of a field.
    n_tokens : int
        Fields per line, label included.
    label_col : int
        Field holding the label, in ``[0, n_tokens)``, or -1 for no label.
    X : ndarray of float64, shape (chunk_size, n_tokens - (label_col >= 0))
        Output rows. Modified in place.
    y : ndarray of float64, shape (chunk_size,)
        Numeric labels. Modified in place unless ``lab_span`` is used.
    lab_span : ndarray of int64, shape (chunk_size, 2) or (0, 2)
        When it has rows, the byte span of each row's label is stored here (modified in
        place) instead of parsing it as a number (string labels).
    row : int
        First row to fill.
    slow : ndarray of int64, shape (cap, 5)
        Slow tokens; ``cap`` must exceed ``n_tokens``. Modified in place.
    row_line : ndarray of int64, shape (chunk_size,)
        As in :func:`parse_libsvm`. Modified in place.
    info : ndarray of int64, shape (INFO_SIZE,)
        Modified in place (``I_DETAIL`` holds the field count or field number on errors).

    Returns
    -------
    status : int
        As :func:`parse_libsvm`, with errors ``ERR_TOO_FEW``, ``ERR_TOO_MANY`` and
        ``ERR_EMPTY_FIELD``.
    """
    n_rows = X.shape[0]
    cap = slow.shape[0]
    spans = lab_span.shape[0] > 0
    nslow = np.int64(0)
    lines = np.int64(0)
    status = OK
    while pos < end:
        if row >= n_rows:
            status = CHUNK_FULL
            break
        if cap - nslow < n_tokens + 1:
            status = SLOW_FULL
            break
        le = pos
        while le < end and buf[le] != 10:
            le += 1
        i = pos
        while i < le and _is_space(buf[i]):
            i += 1
        if i >= le or buf[i] == comment:    # blank or comment line
            pos = le + 1
            lines += 1
            continue
        k = 0
        err = OK
        if delim < 0:
            while True:
                while i < le and _is_space(buf[i]):
                    i += 1
                if i >= le:
                    break
                ts = i
                while i < le and not _is_space(buf[i]):
                    i += 1
                te = i
                if k >= n_tokens:
                    err = ERR_TOO_MANY
                    k += 1
                    while True:
                        while i < le and _is_space(buf[i]):
                            i += 1
                        if i >= le:
                            break
                        while i < le and not _is_space(buf[i]):
                            i += 1
                        k += 1
                    break
                if k == label_col:
                    if spans:
                        lab_span[row, 0] = ts
                        lab_span[row, 1] = te
                    else:
                        v, ok = fast_float(buf, ts, te)
                        if ok:
                            y[row] = v
                        else:
                            _add_slow(slow, nslow, ts, te, row, np.int64(-1), lines)
                            nslow += 1
                else:
                    col = k if (label_col < 0 or k < label_col) else k - 1
                    v, ok = fast_float(buf, ts, te)
                    if ok:
                        X[row, col] = v
                    else:
                        _add_slow(slow, nslow, ts, te, row, col, lines)
                        nslow += 1
                k += 1
        else:
            i = pos
            while True:
                fs = i
                while i < le and buf[i] != delim:
                    i += 1
                fe = i
                ts = fs
                te = fe
                while ts < te and _is_space(buf[ts]):
                    ts += 1
                while te > ts and _is_space(buf[te - 1]):
                    te -= 1
                if k >= n_tokens:
                    err = ERR_TOO_MANY
                    k += 1
                    while i < le:
                        if buf[i] == delim:
                            k += 1
                        i += 1
                    break
                if ts == te:
                    err = ERR_EMPTY_FIELD
                    info[I_DETAIL] = k
                    break
                if k == label_col:
                    if spans:
                        lab_span[row, 0] = ts
                        lab_span[row, 1] = te
                    else:
                        v, ok = fast_float(buf, ts, te)
                        if ok:
                            y[row] = v
                        else:
                            _add_slow(slow, nslow, ts, te, row, np.int64(-1), lines)
                            nslow += 1
                else:
                    col = k if (label_col < 0 or k < label_col) else k - 1
                    v, ok = fast_float(buf, ts, te)
                    if ok:
                        X[row, col] = v
                    else:
                        _add_slow(slow, nslow, ts, te, row, col, lines)
                        nslow += 1
                k += 1
                if i >= le:
                    break
                i += 1  # skip the delimiter
        if err == OK and k < n_tokens:
            err = ERR_TOO_FEW
        if err != OK:
            if err != ERR_EMPTY_FIELD:
                info[I_DETAIL] = k
            info[I_TOKS] = pos
            info[I_TOKE] = le
            info[I_ERRLINE] = lines
            status = err
            break
        row_line[row] = lines
        row += 1
        lines += 1
        pos = le + 1
    info[I_POS] = pos
    info[I_ROWS] = row
    info[I_LINES] = lines
    info[I_STATUS] = status
    info[I_NSLOW] = nslow
    return status
