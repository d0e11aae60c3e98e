"""Opening text sources: paths, file objects and standard input, plain or compressed.

Compression is recognised by its magic bytes (gzip ``1f 8b``, bzip2 ``BZh``, xz
``fd 37 7a 58 5a 00``); the file name's extension is only used to raise a clear error when it
promises a compression the content does not have, or names one that is not supported.
"""
import bz2
import gzip
import io
import lzma
import os
import stat
import sys
import zlib

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"))
_UNSUPPORTED_MAGIC = (
    (b"PK\x03\x04", "zip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"\x1f\x9d", "compress (.Z)"),
)
_EXT = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".xz": "xz"}
_UNSUPPORTED_EXT = {".zip": "zip", ".zst": "zstd", ".lz4": "lz4", ".7z": "7z", ".z": "compress (.Z)",
                    ".rar": "rar", ".tar": "tar", ".tgz": "tar", ".lzma": "lzma"}

BLOCK_BYTES = 1 << 20  # bytes read per block; tests lower it to exercise block boundaries


class _Prepended(io.RawIOBase):
    """A read-only stream that returns ``head`` and then the rest of ``raw``."""

    def __init__(self, head, raw):
        self._head = head
        self._raw = raw
        self._read = _reader(raw)

    def readable(self):
        return True

    def fileno(self):
        return self._raw.fileno()      # what it reads from (a pipe: see _reader)

    def readinto(self, b):
        n = len(b)
        if not self._head:
            data = self._read(n)
            if not data:
                return 0
            if isinstance(data, str):      # n characters may be more than n bytes in UTF-8:
                data = data.encode("utf-8")  # the rest is kept for the next call
            self._head = data
        k = min(n, len(self._head))
        b[:k] = self._head[:k]
        self._head = self._head[k:]
        return k


def source_name(src):
    """Human-readable name of a source for error messages."""
    if isinstance(src, (str, bytes, os.PathLike)):
        s = os.fsdecode(src)
        return "<stdin>" if s == "-" else s
    return str(getattr(src, "name", "<file object>"))


def _unsupported(kind, name):
    return ValueError(
        f"{name}: {kind} compression is not supported (supported: plain text, gzip, bzip2, xz). "
        f"Decompress it first, or pipe the decompressed text to standard input and pass '-'."
    )


def _peek(stream, n=8):
    """Return (first bytes, stream positioned at the start)."""
    if hasattr(stream, "peek"):
        try:
            head = stream.peek(n)[:n]
            return head, stream
        except (io.UnsupportedOperation, OSError, ValueError):
            pass
    head = stream.read(n)
    if isinstance(head, str):
        head = head.encode("utf-8")
    return head, io.BufferedReader(_Prepended(head, stream))


def open_source(src):
    """Open ``src`` for binary reading of its (decompressed) content.

    Parameters
    ----------
    src : str, os.PathLike or file object
        A path, ``'-'`` for standard input, or an open file object, read from its current
        position (binary preferred; a seekable text object is read through its text layer,
        re-encoded as UTF-8, a pipe or terminal opened as text through its ``buffer``).

    Returns
    -------
    stream : binary file object
    close : callable
        Closes what this function opened (never standard input or the caller's object).
    name : str
    reopen : callable or None
        Returns a fresh ``(stream, close)`` at the start of the data for a second pass, or
        None when the source cannot be read twice (standard input, pipes).
    """
    name = source_name(src)
    if isinstance(src, (str, bytes, os.PathLike)):
        path = os.fsdecode(src)
        if path == "-":
            raw = sys.stdin.buffer
            stream, _ = _wrap(raw, name, None)
            return stream, (lambda: None), name, None
        if not os.path.exists(path):
            raise FileNotFoundError(2, f"No such file: {path!r}", path)
        if os.path.isdir(path):
            raise IsADirectoryError(21, f"Expected a file, got a directory: {path!r}", path)
        ext = os.path.splitext(path)[1].lower()
        if ext in _UNSUPPORTED_EXT:
            raise _unsupported(_UNSUPPORTED_EXT[ext], name)

        def _open():
            raw = open(path, "rb")
            try:
                stream, opened = _wrap(raw, name, _EXT.get(ext))
            except Exception:
                raw.close()
                raise

            def close():
                if opened is not raw:
                    opened.close()
                raw.close()
            return stream, close

        stream, close = _open()
        return stream, close, name, _open
    # file object
    raw = src
    if isinstance(raw, io.TextIOBase):
        # The text layer reads ahead of what it has returned: after the caller's readline()
        # (a preamble skipped) its buffer is already blocks further on, so a text file is
        # read through the text layer. Only a pipe or terminal (standard input opened as
        # text) is read through its buffer, which keeps a live feed's lines coming as they
        # arrive (the text layer would wait for a whole block).
        try:
            seekable = raw.seekable()
        except (AttributeError, OSError, ValueError):
            seekable = False
        if not seekable:
            raw = getattr(raw, "buffer", raw)
    reopen = None
    try:
        if raw.seekable():
            start = raw.tell()

            def reopen():
                raw.seek(start)
                stream, opened = _wrap(raw, name, None)
                return stream, (lambda: opened.close() if opened is not raw else None)
    except (AttributeError, OSError, ValueError):
        reopen = None
    stream, opened = _wrap(raw, name, None)
    return stream, (lambda: opened.close() if opened is not raw else None), name, reopen


def _wrap(raw, name, expected):
    """Detect compression from magic bytes; return (decompressed stream, object to close)."""
    head, raw = _peek(raw)
    kind = None
    for magic, k in _MAGIC:
        if head.startswith(magic):
            kind = k
            break
    if kind is None:
        for magic, k in _UNSUPPORTED_MAGIC:
            if head.startswith(magic):
                raise _unsupported(k, name)
    if expected is not None and kind != expected and head:
        raise ValueError(
            f"{name}: the file name says {expected}-compressed but the content does not start "
            f"with {expected} magic bytes (first bytes {head[:4]!r}); rename the file or check it."
        )
    if kind == "gzip":
        s = gzip.GzipFile(fileobj=raw, mode="rb")
    elif kind == "bz2":
        s = bz2.BZ2File(raw, mode="rb")
    elif kind == "xz":
        s = lzma.LZMAFile(raw, mode="rb")
    else:
        return raw, raw
    return s, s


def _reader(stream):
    """``stream.read``, or ``stream.read1`` on a pipe, socket or terminal: ``read(n)`` waits
    for n bytes, so on a live feed (``tail -f log | fastbudget train ... -``) rows would reach
    the learner only a block (1 MiB) at a time; ``read1`` returns what has arrived. Files
    and in-memory streams keep ``read`` (full blocks)."""
    try:
        mode = os.fstat(stream.fileno()).st_mode
        live = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)
    except (AttributeError, OSError, ValueError):
        live = False
    if live and hasattr(stream, "read1"):
        return stream.read1
    return stream.read


def _lone_cr(buf):
    """Whether the first line end in ``buf`` is a ``\\r`` alone (classic Mac OS line ends,
    still written by some spreadsheet exports): True or False, or None while ``buf`` holds
    no line end yet (or ends in the ``\\r`` that may be the start of ``\\r\\n``)."""
    i = buf.find(b"\r")
    j = buf.find(b"\n", 0, len(buf) if i < 0 else i + 2)
    if 0 <= j <= i + 1 or (i < 0 and j >= 0):
        return False
    if i < 0 or i + 1 == len(buf):
        return None
    return True


def line_blocks(stream, name="<input>", block_bytes=None):
    """Yield ``(buf, end)``: ``buf[:end]`` holds whole lines, each ending in ``\\n``.

    Memory is one block plus the unfinished last line. A final line without newline gets one.
    A UTF-8 byte-order mark at the start is dropped; a UTF-16 or UTF-32 one raises ValueError. Lines may end in ``\\n``, ``\\r\\n``
    (the parsers ignore the ``\\r``) or ``\\r`` alone, as decided at the first line end:
    a ``\\r`` alone there makes every ``\\r`` a line end.
    """
    nb = BLOCK_BYTES if block_bytes is None else block_bytes
    read = _reader(stream)
    carry = b""
    first = True
    lone_cr = None
    while True:
        try:
            raw = read(nb)
        except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
            # (a damaged gzip stream raises zlib.error, which is none of the others)
            raise ValueError(f"{name}: could not read or decompress the data: {exc}") from exc
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        if first and raw:
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            elif raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                raise ValueError(
                    f"{name}: the text is UTF-16 or UTF-32 encoded (it starts with that byte-order "
                    "mark, as Excel's 'Unicode Text' export); save it as UTF-8 or ASCII, e.g. "
                    "iconv -f UTF-16 -t UTF-8 < IN > OUT."
                )
            first = False
        if not raw:
            if carry:
                yield carry + b"\n", len(carry) + 1
            return
        buf = carry + raw if carry else raw
        if lone_cr is None:
            lone_cr = _lone_cr(buf)
        if lone_cr:
            buf = buf.replace(b"\r", b"\n")
        k = buf.rfind(b"\n")
        if k < 0:
            carry = buf
            continue
        yield buf, k + 1
        carry = buf[k + 1:]
