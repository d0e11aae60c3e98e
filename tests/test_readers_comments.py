"""Full-line comments in read_csv (``comments='#'``, None for none) and on the command line.

A comment line (first non-blank character the comment character) is read as a blank line
is: skipped when the first line is looked for (delimiter, header, label type) and by the
compiled parser, and counted in line numbers and RowLines. A comment character later in a
line is not a comment: the line is an error that says so."""
import gzip
import io
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from fastbudget import cli
from fastbudget.datasets.sniff import head_is_enough
from fastbudget.datasets import _source, collect, read_csv
from fastbudget.datasets.readers import RowLines

HINT = "comments are only read as whole lines starting with '#'"


def read(data, **kw):
    return collect(read_csv(io.BytesIO(data), **kw))


def error(data, **kw):
    with pytest.raises(ValueError) as exc:
        read(data, **kw)
    return str(exc.value)


# ------------------------------------------------------------------- where comments may be
@pytest.mark.parametrize("data", [
    b"# comment line\n1.0,2.0,1\n3,4,0\n",                      # first line, no header
    b"# comment line\na,b,label\n1.0,2.0,1\n3,4,0\n",           # before the header
    b"a,b,label\n# comment\n1.0,2.0,1\n3,4,0\n",                # between header and data
    b"a,b,label\n1.0,2.0,1\n# comment\n3,4,0\n",                # between data lines
    b"a,b,label\n1.0,2.0,1\n  \t# indented, 1,2,3\n3,4,0\n",    # indented
    b"a,b,label\n1.0,2.0,1\n3,4,0\n# at the end\n",             # at the end
    b"a,b,label\n1.0,2.0,1\n3,4,0\n# at the end, no newline",
    b"\xef\xbb\xbf# after a byte-order mark\r\na,b,label\r\n1.0,2.0,1\r\n#\r\n3,4,0\r\n",
    b"# classic Mac line ends\ra,b,label\r1.0,2.0,1\r# c\r3,4,0\r",
    b"#\n#\n\n##\n1.0 2.0 1\n# x y z\n3 4 0\n",                 # whitespace-separated
    b"a\tb\tlabel\n#\tc\n1.0\t2.0\t1\n3\t4\t0\n",                  # tab-separated
])
def test_comment_lines_are_skipped(data):
    X, y = read(data)
    assert X.tolist() == [[1.0, 2.0], [3.0, 4.0]] and y.tolist() == [1.0, 0.0]


@pytest.mark.parametrize("data", [b"# only a comment\n", b"# a\n\n   # b\n#", b"#"])
def test_a_file_of_comments_is_an_empty_file(data):
    assert list(read_csv(io.BytesIO(data))) == list(read_csv(io.BytesIO(b""))) == []
    assert list(read_csv(io.BytesIO(data), label_type="auto", label_column="x")) == []


def test_comments_none_reads_such_lines_as_before():
    # the comment is the header, whitespace-separated: the next line is one field
    msg = error(b"# comment line\n1.0,2.0,1\n", comments=None)
    assert msg == ("<file object>, line 2: value in feature column 0 '1.0,2.0,1' is not "
                   "a number.")
    assert "line 3: value in feature column 0 '# comment' is not a number." in error(
        b"a,b,label\n1,2,1\n# comment\n", comments=None)
    # a header that numpy.savetxt wrote as a comment: a comment by default, the header
    # with comments=None
    data = b"# a,b,label\n1,2,1\n3,4,0\n"
    msg = error(data, label_column="label")
    assert "label_column 'label' is not in the header ['1', '2', '1']" in msg
    assert "pass comments=None if the header is one of them" in msg
    X, y = read(data, label_column="label", comments=None)
    assert X.tolist() == [[1, 2], [3, 4]] and y.tolist() == [1, 0]
    X, y = read(data)                        # by default: a comment, then data
    assert X.tolist() == [[1, 2], [3, 4]] and y.tolist() == [1, 0]
    # a text label in the first column that starts with '#'
    data = b"#tag,1,2\nA,3,4\n"
    X, y = read(data, label_column=0, label_type="str", comments=None)
    assert y.tolist() == ["#tag", "A"] and X.tolist() == [[1, 2], [3, 4]]
    X, y = read(data, label_column=0, label_type="str")
    assert y.tolist() == ["A"] and X.tolist() == [[3, 4]]


def test_custom_comment_character():
    data = b"% ARFF-style comment\na,b,label\n  % another\n1,2,1\n3,4,0\n"
    X, y = read(data, comments="%")
    assert X.tolist() == [[1, 2], [3, 4]] and y.tolist() == [1, 0]
    # '#' is then data, and '%' after a field gets the hint with '%'
    assert "line 3: value in feature column 0 '# x' is not a number." in error(
        b"a,b,label\n1,2,1\n# x,1,2\n", comments="%")
    assert ("label '1 % note' is not a number; comments are only read as whole lines "
            "starting with '%'.") in error(b"a,b,label\n1,2,1 % note\n", comments="%")
    # by default '%' is not a comment character
    assert "value in feature column 0 '% x' is not a number." in error(
        b"a,b,label\n% x,1,2\n")


@pytest.mark.parametrize("bad", ["", "##", "1", "-", "+", ".", "e", "E", " ", "\t", "\n",
                                 "\r", "\u00a7", b"#", 35])
def test_bad_comment_characters_are_refused(bad):
    with pytest.raises(ValueError, match="comments must be a single ASCII character such as "
                                         "'#'.*or None for no comment lines; got "):
        read_csv(io.BytesIO(b"1,2\n"), comments=bad)


def test_the_comment_character_cannot_be_the_delimiter():
    with pytest.raises(ValueError, match="comments must be .*not the delimiter"):
        read_csv(io.BytesIO(b"1;2\n"), delimiter=";", comments=";")
    with pytest.raises(ValueError, match="comment character ';' is the delimiter sniffed "
                                         "from line 2; pass another comments="):
        read(b"\n1;2;3\n", comments=";")
    X, y = read(b";x\n1,2,3\n", comments=";")      # sniffed ',' and a ';' comment
    assert X.tolist() == [[1, 2]] and y.tolist() == [3]


# ----------------------------------------------------------------- a '#' later in a line
@pytest.mark.parametrize("line,what", [
    (b"1,2,1 # note", "label '1 # note'"),
    (b"1,2,1# note", "label '1# note'"),
    (b"1 # note,2,1", "value in feature column 0 '1 # note'"),
    (b"1,2,#", "label '#'"),
])
def test_a_comment_after_data_is_an_error_that_says_so(line, what):
    msg = error(b"a,b,label\n3,4,0\n" + line + b"\n")
    assert msg == f"<file object>, line 3: {what} is not a number; {HINT}."
    # the same with comments=None: no hint
    assert error(b"a,b,label\n3,4,0\n" + line + b"\n", comments=None).endswith(
        "is not a number.")


def test_a_comment_after_whitespace_separated_data_is_an_error_that_says_so():
    msg = error(b"1 2 1\n3 4 0 # note\n")
    assert msg == ("<file object>, line 2: expected 3 fields (as on the first line) separated "
                   f"by whitespace, found 5: '3 4 0 # note'; {HINT}.")
    assert error(b"1 2 1\n3 4 #\n").endswith(f"label '#' is not a number; {HINT}.")
    assert error(b"1 2 1\n3 # 4\n").endswith(f"'#' is not a number; {HINT}.")
    assert error(b"1,2,1\n3,4 # note\n").endswith(f"'4 # note' is not a number; {HINT}.")
    assert error(b"1;2;1\n3;4;0;# note\n").endswith(
        f"expected 3 fields (as on the first line) separated by ';', found 4: "
        f"'3;4;0;# note'; {HINT}.")
    assert error(b"1 2 1\n3 4 0 # note\n", comments=None).endswith("'3 4 0 # note'.")
    # a string label keeps its '#': a class may be named so (C#, F#)
    X, y = read(b"a,b,lang\n1,2,C#\n3,4,F# \n", label_type="str")
    assert y.tolist() == ["C#", "F#"]


# ------------------------------------------------------------- line numbers and bad rows
DATA = (b"# made by hand\n"          # 1
        b"a,b,label\n"               # 2
        b"# units\n"                 # 3
        b"1,2,1\n"                   # 4
        b"  # indented\n"            # 5
        b"\n"                        # 6
        b"3,4,0\n"                   # 7
        b"#\n"                       # 8
        b"5,x,1\n"                   # 9  bad
        b"# 6,7,1\n"                 # 10
        b"7,8\n"                     # 11 bad
        b"9,10,1\n")                 # 12


@pytest.mark.parametrize("block", [None, 7, 16, 23, 64])
@pytest.mark.parametrize("chunk", [1, 2, 3, 100])
def test_line_numbers_count_comment_lines(block, chunk, monkeypatch):
    if block is not None:
        monkeypatch.setattr(_source, "BLOCK_BYTES", block)
    with pytest.raises(ValueError, match="^<file object>, line 9: value in feature column 1 "
                                         "'x' is not a number.$"):
        collect(read_csv(io.BytesIO(DATA), chunk_size=chunk))
    seen = []
    where = RowLines()
    X, y = collect(read_csv(io.BytesIO(DATA), chunk_size=chunk, row_lines=where,
                            on_bad_row=lambda line, exc: seen.append((line, str(exc)))))
    assert X.tolist() == [[1, 2], [3, 4], [9, 10]] and y.tolist() == [1, 0, 1]
    assert [ln for ln, _ in seen] == [9, 11]
    assert "line 11: expected 3 fields" in seen[1][1]
    assert [where.line(i) for i in range(where.n_rows)] == [4, 7, 12]


def test_comments_read_as_blank_lines_across_chunks_and_blocks(tmp_path, monkeypatch):
    """A file with comment lines reads as the same file with blank lines in their place:
    the same chunks, row lines and bad-row reports, whatever the block and chunk sizes
    (comments at block and chunk boundaries), plain and gzip."""
    rng = np.random.default_rng(7)
    lines = ["# a comment before the header", "f0,f1,label"]
    for i in range(300):
        r = rng.random()
        if r < 0.25:
            lines.append(rng.choice(["#", "# note", "   # 1,2,3", "\t#x", "#,#,#"]))
        elif r < 0.27:
            lines.append("9,oops,1")                  # bad rows too
        a, b = rng.integers(-9, 9, size=2)
        lines.append(f"{a},{b}.5,{i % 3}")
    blank = ["" if ln.strip().startswith("#") else ln for ln in lines]
    text = ("\n".join(lines) + "\n").encode()
    want_text = ("\n".join(blank) + "\n").encode()
    paths = {}
    for name, data in (("c.csv", text), ("b.csv", want_text)):
        paths[name] = tmp_path / name
        paths[name].write_bytes(data)
        paths[name + ".gz"] = tmp_path / (name + ".gz")
        paths[name + ".gz"].write_bytes(gzip.compress(data))

    def run(path, chunk):
        seen, where = [], RowLines()
        chunks = list(read_csv(str(path), chunk_size=chunk, row_lines=where,
                               on_bad_row=lambda line, exc: seen.append((line, str(exc)))))
        return chunks, [where.line(i) for i in range(where.n_rows)], seen

    n_bad = sum(ln == "9,oops,1" for ln in lines)
    for block in (5, 17, 64, 1000):
        monkeypatch.setattr(_source, "BLOCK_BYTES", block)
        for chunk in (1, 4, 37):
            for gz in ("", ".gz"):
                got, got_lines, got_bad = run(paths["c.csv" + gz], chunk)
                want, want_lines, want_bad = run(paths["b.csv" + gz], chunk)
                assert len(got) == len(want)
                for (Xg, yg), (Xw, yw) in zip(got, want):
                    np.testing.assert_array_equal(Xg, Xw)
                    np.testing.assert_array_equal(yg, yw)
                assert sum(len(c[1]) for c in got) == 300
                assert got_lines == want_lines
                assert [ln for ln, _ in got_bad] == [ln for ln, _ in want_bad]
                assert len(got_bad) == n_bad
    # the row lines are the file's: each names a data line
    assert all(not lines[k - 1].startswith("#") and lines[k - 1] != "9,oops,1"
               for k in got_lines)


def test_a_comment_exactly_at_a_chunk_boundary(monkeypatch):
    data = b"a,b,label\n" + b"".join(f"{i},{i},1\n# after row {i}\n".encode()
                                     for i in range(12))
    for block in (None, 11, 14, 25):
        if block is not None:
            monkeypatch.setattr(_source, "BLOCK_BYTES", block)
        where = RowLines()
        chunks = list(read_csv(io.BytesIO(data), chunk_size=3, row_lines=where))
        assert [c[0][:, 0].tolist() for c in chunks] == [[0, 1, 2], [3, 4, 5], [6, 7, 8],
                                                        [9, 10, 11]]
        assert [where.line(i) for i in range(12)] == list(range(2, 26, 2))


def test_comments_fill_the_first_blocks(monkeypatch):
    """The first line is looked for past blocks that hold only comment lines, and its line
    number counts them."""
    monkeypatch.setattr(_source, "BLOCK_BYTES", 8)
    data = b"# a long comment of several blocks\n" * 5 + b"a,b,label\n1,2,1\n3,x,0\n"
    assert error(data).startswith("<file object>, line 8: value in feature column 1 'x'")
    assert error(data, label_column=5) == ("<file object>: label_column=5 is out of range "
                                           "for the 3 columns of line 6.")


# ----------------------------------------------------------------------- header and labels
def test_label_type_auto_looks_past_comments():
    # a header (names) above a comment whose label field is a number, then text labels
    data = b"# exported\na,b,label\n# x,y,9\n1,2,A\n3,4,B\n"
    X, y = read(data, label_type="auto")
    assert y.tolist() == ["A", "B"] and X.tolist() == [[1, 2], [3, 4]]
    # numeric column names above numeric labels, a comment line in between whose label
    # field is not a number: still a header
    data = b"# exported\n400,410,label\n# a,b,c\n1,2,0\n3,4,1\n"
    X, y = read(data, label_type="auto")
    assert y.tolist() == [0, 1] and X.tolist() == [[1, 2], [3, 4]]
    # UCI letter's text labels in the first column, a comment first: data, not a header
    data = b"# letter\nT,2,8\n# I,5,12\nI,5,12\n"
    X, y = read(data, label_type="auto", label_column=0)
    assert y.tolist() == ["T", "I"] and X.tolist() == [[2, 8], [5, 12]]


def test_header_auto_and_true_after_a_comment():
    X, y = read(b"# c\n0,1,2,target\n5,6,7,1\n", header="auto")     # numbered columns
    assert X.tolist() == [[5, 6, 7]] and y.tolist() == [1]
    X, y = read(b"# c\n1,2,A\n3,4,B\n", header=True, label_type="str")
    assert X.tolist() == [[3, 4]] and y.tolist() == ["B"]
    X, y = read(b"# c\n1,2,1\n3,4,0\n", header=False)
    assert X.tolist() == [[1, 2], [3, 4]]


# ----------------------------------------------------------------------------- command line
def test_cli_train_predict_evaluate_on_a_csv_with_comments(tmp_path, capsys):
    rng = np.random.default_rng(1)
    rows = ["# generated", "x0,x1,label", "# units: none"]
    for i in range(200):
        a, b = rng.normal(size=2)
        rows.append(f"{a:.5f},{b:.5f},{'pos' if a + b > 0 else 'neg'}")
        if i % 17 == 0:
            rows.append("  # checkpoint")
    data = tmp_path / "d.csv"
    data.write_text("\n".join(rows) + "\n# end\n")
    model = tmp_path / "m.npz"
    assert cli.main(["train", "perceptron", str(data), "-o", str(model), "--quiet"]) == 0
    assert "on 200 examples" in capsys.readouterr().out
    out = tmp_path / "p.txt"
    assert cli.main(["predict", str(model), str(data), "-o", str(out), "--quiet"]) == 0
    assert len(out.read_text().split()) == 200
    assert cli.main(["evaluate", str(model), str(data), "--quiet"]) == 0
    assert "/ 200)" in capsys.readouterr().out
    # --comments none: the first line is data (a header here), the next comment is a bad row
    assert cli.main(["train", "perceptron", str(data), "-o", str(model), "--quiet",
                     "--comments", "none"]) == 2
    err = capsys.readouterr().err
    assert "d.csv, line 2: value in feature column 0 'x0,x1,label' is not a number" in err
    # another comment character
    data.write_text("\n".join(r.replace("#", "%") for r in rows) + "\n")
    assert cli.main(["train", "perceptron", str(data), "-o", str(model), "--quiet",
                     "--comments", "%"]) == 0
    # '%' is not a comment character by default: the first line is then the header
    assert cli.main(["evaluate", str(model), str(data), "--quiet"]) == 2
    assert "d.csv, line 2: value in feature column 0 'x0,x1,label' is not a number" in \
        capsys.readouterr().err
    assert cli.main(["train", "perceptron", str(data), "-o", str(model), "--quiet",
                     "--comments", "1"]) == 2
    assert "comments must be a single ASCII character" in capsys.readouterr().err


def test_cli_stdin_head_looks_past_comment_lines():
    assert not head_is_enough(b"a,b,label\n# comment\n")
    assert not head_is_enough(b"a,b,label\n  # comment\n\n1,2,")
    assert head_is_enough(b"a,b,label\n# comment\n1,2,A\n")
    assert head_is_enough(b"a,b,label\n# comment\n", comments=None)
    assert not head_is_enough(b"% c\na,b,label\n% c\n", comments="%")
    assert head_is_enough(b"% c\na,b,label\n% c\n1,2,A\n", comments="%")


def test_cli_learns_a_slow_stdin_feed_with_a_comment_after_the_header(tmp_path):
    """The text labels are found on the data line, which arrives after the comment."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    env.pop("FASTBUDGET_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "fastbudget.cli", "train", "perceptron",
                             "-", "-o", str(tmp_path / "m.npz")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        proc.stdin.write(b"a,b,label\n# a comment\n")
        proc.stdin.flush()
        time.sleep(1.0)
        out, err = proc.communicate(b"1,2,A\n-3,4,B\n5,-6,A\n", timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err.decode()
    assert b"on 3 examples" in out


def test_header_true_above_a_savetxt_header_is_refused():
    """numpy.savetxt writes its header as a comment ('# a,b,label'); with header=True the first
    line that is not a comment would be taken as the header: a row of data lost without a
    word. It is refused with what to pass; comments=None reads the comment as the header,
    and the default header='auto' reads the data rows."""
    buf = io.BytesIO()
    X = np.array([[1.0, 2.0, 1.0], [3.0, 4.0, -1.0], [1.5, 2.5, 1.0]])
    np.savetxt(buf, X, delimiter=",", header="a,b,label")
    raw = buf.getvalue()
    msg = error(raw, header=True)
    assert "header=True, but line 2" in msg and "pass comments=None" in msg
    assert "pass header=False" in msg
    for kw in ({}, {"header": True, "comments": None},
               {"header": True, "comments": None, "label_column": "label"}):
        got, y = read(raw, **kw)
        np.testing.assert_array_equal(got, X[:, :2])
        np.testing.assert_array_equal(y, X[:, 2])
    # numeric names above text labels, the documented use of header=True, still read
    got, y = read(b"# note\n400,410,label\n1,2,a\n3,4,b\n", header=True, label_type="str")
    assert got.tolist() == [[1.0, 2.0], [3.0, 4.0]] and y.tolist() == ["a", "b"]


def test_the_command_line_names_its_options_in_csv_errors(tmp_path, capsys):
    """The CSV reader's advice in terms of the command line: --comments none, --header no,
    --header yes (it said comments=None, header=False); and a bad --comments value."""
    buf = io.BytesIO()
    np.savetxt(buf, np.array([[1.0, 2.0, 1.0], [3.0, 4.0, -1.0]]), delimiter=",",
               header="a,b,label")
    data = tmp_path / "sv.csv"
    data.write_bytes(buf.getvalue())
    assert cli.main(["train", "perceptron", str(data), "-o", str(tmp_path / "m.npz"),
                     "--header", "yes"]) == 2
    err = capsys.readouterr().err
    assert "--header yes, but line 2" in err and "pass --comments none" in err
    assert "pass --header no" in err and "comments=None" not in err
    assert cli.main(["train", "perceptron", str(data), "-o", str(tmp_path / "m.npz"),
                     "--comments", "xx"]) == 2
    err = capsys.readouterr().err
    assert "--comments must be a single ASCII character" in err
    assert "or none for no comment lines; got 'xx'" in err
