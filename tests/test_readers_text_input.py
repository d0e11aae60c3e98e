"""The readers take text as users have it: lines ending in a lone CR, UTF-16 refused with what
to do, a text file object read from where the caller left it, multibyte characters in a text
object. Each test failed before its fix."""
import io

import numpy as np
import pytest

from fastbudget.datasets import _source, collect, read_csv, read_libsvm


@pytest.mark.parametrize("block", [None, 1, 2, 5, 64])
def test_lone_cr_line_ends_read_as_the_same_file_with_newlines(block, monkeypatch):
    """A file whose lines end in '\\r' alone (classic Mac OS; Excel's "CSV (Macintosh)") was
    one long line: read_csv took it for a header and returned no rows, without an error."""
    if block is not None:
        monkeypatch.setattr(_source, "BLOCK_BYTES", block)
    rng = np.random.default_rng(0)
    rows = [f"{a:.3f},{b:.3f},{int(c)}" for a, b, c in rng.normal(size=(40, 3))]
    csv_lf = ("x1,x2,label\n" + "\n".join(rows) + "\n").encode()
    svm_lf = ("# comment\n" + "\n".join(f"{r.split(',')[2]} 1:{r.split(',')[0]} "
                                        f"3:{r.split(',')[1]}" for r in rows) + "\n").encode()
    for read, lf in ((read_csv, csv_lf), (read_libsvm, svm_lf)):
        want_X, want_y = collect(read(io.BytesIO(lf), chunk_size=7))
        assert want_X.shape[0] == 40
        for cr in (lf.replace(b"\n", b"\r"), lf.replace(b"\n", b"\r")[:-1]):
            X, y = collect(read(io.BytesIO(cr), chunk_size=7))
            assert np.array_equal(X, want_X) and np.array_equal(y, want_y)
    # a bad line is named by its line number, as in the '\n' file
    bad = csv_lf.replace(b"\n", b"\r").replace(rows[30].encode(), b"1,x,0")
    with pytest.raises(ValueError, match=r"line 32: value in feature column 1 'x'"):
        collect(read_csv(io.BytesIO(bad)))
    # '\r\n' files keep their line numbers (the '\r' is not a line of its own)
    bad = csv_lf.replace(b"\n", b"\r\n").replace(rows[30].encode(), b"1,x,0")
    with pytest.raises(ValueError, match=r"line 32: value in feature column 1 'x'"):
        collect(read_csv(io.BytesIO(bad)))


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
@pytest.mark.parametrize("read,text", [(read_csv, "a\tb\tlabel\n1\t2\t0\n3\t4\t1\n"),
                                       (read_libsvm, "1 1:2\n-1 2:1\n")])
def test_utf16_text_is_refused_with_what_to_do(tmp_path, encoding, read, text):
    """UTF-16 text (Excel's 'Unicode Text' export) failed on its NUL bytes with an error
    such as "label '\\ufffd\\ufffd1\\x00' is not a number", which does not say what is wrong."""
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):
        data = ("\ufeff" + text).encode(encoding)    # with the byte-order mark Excel writes
    path = tmp_path / "unicode.txt"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=r"unicode\.txt: the text is UTF-16 .*save it as UTF-8"):
        collect(read(str(path)))
    # the same text in UTF-8, with or without its byte-order mark, reads
    for raw in (text.encode(), b"\xef\xbb\xbf" + text.encode()):
        path.write_bytes(raw)
        assert collect(read(str(path)))[0].shape[0] == 2


@pytest.mark.parametrize("read,kind", [(read_csv, "csv"), (read_libsvm, "libsvm")])
def test_text_file_object_is_read_from_where_the_caller_left_it(tmp_path, read, kind):
    """A file opened in text mode was read through its binary buffer, which the text layer
    had already read ahead (8 KiB) when the caller skipped a preamble line with readline():
    the rows in between were lost without an error (3,000 rows read as 2,161)."""
    rows = ([f"{i},{i / 7:.4f},{i % 2}" for i in range(3000)] if kind == "csv"
            else [f"{i % 2} 1:{i} 3:{i / 7:.4f}" for i in range(3000)])
    body = ("x,z,label\n" if kind == "csv" else "") + "\n".join(rows) + "\n"
    path = tmp_path / f"data.{kind}"
    path.write_text("# exported by some tool\n" + body)
    want_X, want_y = collect(read(io.BytesIO(body.encode()), chunk_size=500))
    assert want_X.shape[0] == 3000
    with open(path) as f:
        f.readline()                                    # skip the preamble
        X, y = collect(read(f, chunk_size=500))
    assert np.array_equal(X, want_X) and np.array_equal(y, want_y)
    with open(path) as f:
        next(iter(f))                                   # the same with iteration
        X, y = collect(read(f, chunk_size=500))
    assert np.array_equal(X, want_X) and np.array_equal(y, want_y)


def test_text_object_with_multibyte_characters_reads():
    """A text object (io.StringIO) returns n characters for n bytes asked, and 'é' is two
    bytes in UTF-8: past the first block this crashed with "memoryview assignment: lvalue
    and rvalue have different structures"."""
    body = "".join(f"{i},{i % 3},{i % 2}\n" for i in range(200_000))
    text = "é" * 600_000 + ",b,label\n" + body
    X, y = collect(read_csv(io.StringIO(text)))
    want_X, want_y = collect(read_csv(io.BytesIO(body.encode()), header=False))
    assert np.array_equal(X, want_X) and np.array_equal(y, want_y)
