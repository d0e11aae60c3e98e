"""Which format a data file is in: LIBSVM/svmlight or delimited text (CSV).

:func:`detect_format` decides by the file name (``.libsvm``, ``.svm``, ``.svmlight``,
``.scale``; ``.csv``, ``.tsv``, ``.tab``; after a ``.gz``/``.bz2``/``.xz`` suffix), else by the
first line that is not blank or a ``#`` comment (``index:value`` tokens mean LIBSVM):
``.t``, ``.tr`` and ``.dat`` say nothing about the format (LIBSVM's test and train files,
SVMlight's examples, but also plain tables such as Ripley's ``synth.tr``), so their content
decides. On standard input it reads only as much as it needs, however slowly a live feed
sends it, and hands back a stream that replays what it read.

Errors are :class:`FormatError` (a ``ValueError``), ``FileNotFoundError`` and
``IsADirectoryError``, worded with the arguments of :func:`detect_format` (the command line
rewords ``fmt=`` as ``--format``).
"""
import io
import os

from ..exceptions import FormatError
from ._source import _reader, open_source
from .readers import _is_number

__all__ = ["FormatError", "detect_format", "sniff_format"]


_LIBSVM_EXT = (".libsvm", ".svm", ".svmlight", ".scale")
_CSV_EXT = (".csv", ".tsv", ".tab")
# .t/.tr (LIBSVM's test/train files, but also e.g. Ripley's synth.tr table) and .dat (SVMlight's
# examples, but also many tables) say nothing about the format: their content decides
_COMPRESSED_EXT = (".gz", ".bz2", ".xz")


class _Chain(io.RawIOBase):
    """A read-only stream: ``head`` bytes, then the rest of ``stream``."""

    def __init__(self, head, stream, name="<stdin>"):
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


def sniff_format(head, name):
    """The format of a source whose first bytes are ``head``.

    Parameters
    ----------
    head : bytes
        The start of the (decompressed) data.
    name : str
        What errors call the source.

    Returns
    -------
    str
        ``'libsvm'`` when the first line that is not blank or a ``#`` comment holds a label
        and ``index:value`` tokens (or a lone number: a label with no features), else
        ``'csv'``.

    Raises
    ------
    FormatError
        Binary content, or no line to tell by.
    """
    if b"\x00" in head[:4096]:
        raise FormatError(f"cannot tell the format of {name} (binary content); "
                          f"pass fmt='libsvm' or fmt='csv' for a text file.")
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
    raise FormatError(f"cannot tell the format of {name} (empty or binary content); "
                      f"pass fmt='libsvm' or fmt='csv'.")


def head_is_enough(head, comments="#"):
    """Whether ``head`` (the start of standard input) holds what the format and the CSV
    label sniffing look at: the first complete line that is not blank or a ``#`` comment
    (nor a CSV comment line, ``comments``), and, when that line is CSV (a header, or data),
    a line after it that is not blank or a CSV comment line."""
    if b"\x00" in head[:4096]:
        return True                        # binary: sniff_format refuses it
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
                if sniff_format(raw + b"\n", "<stdin>") == "libsvm":
                    return True
            except FormatError:
                return True
        elif text:
            return True
    return False


def _read_compressed(read, n, name):
    """``read(n)``; a damaged compressed stream (zlib's "Error -3 while decompressing",
    bz2's "Invalid data stream", a truncated file) is a :class:`FormatError` naming the
    file."""
    import lzma
    import zlib
    try:
        return read(n)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
        raise FormatError(f"{name}: could not read or decompress the data: {exc}") from None


def _read_head(stream, limit=65536, comments="#"):
    """The first bytes of standard input for format sniffing: up to ``limit``, but no more
    than :func:`head_is_enough` needs once it has arrived (``read(limit)`` would wait for
    ``limit`` bytes, which a slow live feed may take minutes to send); what arrives later
    than the first line is waited for, however slowly it comes, so the result does not
    depend on timing."""
    read = _reader(stream)
    head = b""
    while len(head) < limit and not head_is_enough(head, comments):
        part = _read_compressed(read, limit - len(head), "<stdin>")
        if not part:
            break
        head += part
    return head


def detect_format(path, fmt="auto", comments="#"):
    """The format of a data source, and what to read it from.

    Parameters
    ----------
    path : str
        A file (plain or gzip/bzip2/xz compressed), or ``'-'`` for standard input.
    fmt : {'auto', 'libsvm', 'csv'}
        ``'auto'`` decides by the name, else by the content (see the module's docstring);
        the others are taken as given.
    comments : str or None
        The CSV comment character (None: none): the lines of standard input that its head,
        read for sniffing, need not hold.

    Returns
    -------
    fmt : str
        ``'libsvm'`` or ``'csv'``.
    source : str or file object
        ``path``; for standard input a binary stream that replays the bytes read to sniff
        it, then the rest.

    Raises
    ------
    FormatError
        ``fmt`` is not one of the three, or the content cannot be told.
    FileNotFoundError, IsADirectoryError
        ``path`` is not a file.

    Examples
    --------
    >>> import os, tempfile
    >>> from fastbudget.datasets.sniff import detect_format
    >>> path = os.path.join(tempfile.mkdtemp(), "synth.tr")
    >>> with open(path, "w") as f:
    ...     _ = f.write("1 1:0.5 3:2\\n-1 2:1\\n")
    >>> detect_format(path)[0]
    'libsvm'
    """
    if fmt not in ("auto", "libsvm", "csv"):
        raise FormatError(f"unknown format {fmt!r}: use libsvm, csv or auto.")
    if path == "-":
        stream, _close, name, _ = open_source("-")
        # also with --format: the CSV reader decides the label type from its first block,
        # which must hold a header's next line however late it arrives
        head = _read_head(stream, comments=comments)
        if fmt == "auto":
            fmt = sniff_format(head, name)
        return fmt, io.BufferedReader(_Chain(head, stream, name))
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a directory, not a data file.")
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
    return sniff_format(head, name), path
