"""How the command line reads its data: the format told by name or content (ambiguous
extensions .t, .tr, .dat; single fields), CSV separators, headers and decimal commas, the CSV
options kept beside a model, LIBSVM on standard input (its width, slow arrival), quoted
fields, damaged gzip files and indices beyond the inferred width."""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import fastbudget
from fastbudget.datasets import make_checkerboard
from fastbudget.datasets.sniff import sniff_format

from _cli import ROOT, SCALER_WARNING_IGNORED, error_line, run, write_libsvm, write_rows
from _cli import small  # noqa: F401 (a fixture)


pytestmark = SCALER_WARNING_IGNORED


def test_tr_table_with_header_is_read_as_text(tmp_path):
    """Ripley's synth.tr: a whitespace table with the header 'xs ys yc'."""
    X, y = make_checkerboard(60, random_state=1)
    path = tmp_path / "synth.tr"
    path.write_text("    xs            ys       yc\n" + "".join(
        f"  {a: .8f}  {b: .8f}    {int(lab > 0)}\n" for (a, b), lab in zip(X, y)))
    _, out, _ = run("train", "tvm", path, "-o", tmp_path / "m.npz", "-q")
    assert "60 examples x 2 features" in out
    assert "(csv)" in run("evaluate", tmp_path / "m.npz", path, "-q")[1]


@pytest.mark.parametrize("name", ["test.t", "train.tr", "train.dat", "test.t.gz"])
def test_libsvm_with_ambiguous_extension_is_still_libsvm(tmp_path, name):
    X, y = make_checkerboard(50, random_state=2)
    plain = tmp_path / "plain.svm"
    write_libsvm(plain, X, y)
    path = tmp_path / name
    if name.endswith(".gz"):
        import gzip
        path.write_bytes(gzip.compress(plain.read_bytes()))
    else:
        path.write_bytes(plain.read_bytes())
    _, out, _ = run("train", "tvm", path, "-o", tmp_path / "m.npz", "-q")
    assert "50 examples x 2 features" in out
    assert "(libsvm)" in run("evaluate", tmp_path / "m.npz", path, "-q")[1]


def test_sniff_format_single_fields():
    assert sniff_format(b"1\n-1 3:2\n", "x") == "libsvm"     # a label, no features
    assert sniff_format(b"a;b;label\n1;2;0\n", "x") == "csv"
    assert sniff_format(b"1;2;0\n", "x") == "csv"
    assert sniff_format(b"a|b|c\n", "x") == "csv"


def test_semicolon_csv_is_read(tmp_path):
    X, y = make_checkerboard(40, random_state=3)
    path = tmp_path / "excel.csv"
    path.write_text("a;b;label\n" + "".join(
        f"{a:.6f};{b:.6f};{lab:g}\n" for (a, b), lab in zip(X, y)))
    _, out, _ = run("train", "tvm", path, "-o", tmp_path / "m.npz", "-q",
                    "--standardize", "none")
    assert "40 examples x 2 features" in out
    model = fastbudget.load(tmp_path / "m.npz")
    assert list(model.classes_) == [-1.0, 1.0]
    assert model.n_features_in_ == 2


def test_decimal_comma_is_named(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text("a;b;label\n0,5;1,25;1\n2,5;3;-1\n")
    line = error_line("train", "tvm", path, "-o", tmp_path / "m.npz")
    assert "line 2" in line and "'0,5'" in line and "decimal comma" in line


def test_other_separator_says_delimiter(tmp_path):
    path = tmp_path / "pipes.txt"
    path.write_text("a|b|label\n1|2|0\n3|4|1\n5|1|0\n")
    line = error_line("train", "tvm", path, "-o", tmp_path / "m.npz")
    assert "no feature columns" in line and "--delimiter" in line
    _, out, _ = run("train", "tvm", path, "--delimiter", "|", "-o", tmp_path / "m.npz", "-q")
    assert "3 examples x 2 features" in out


def test_predict_on_unlabelled_csv_rows_says_to_pass_label_column_none(tmp_path):
    """predict on a CSV of feature columns only (no label) reads the last feature as the
    label and then finds one feature too few: the error said only '1 features but the model
    was trained on 2', not that such rows need --label-column none. With it they predict."""
    X, y = make_checkerboard(40, random_state=4)
    rows = [f"{a:.6f},{b:.6f},{int(c)}" for (a, b), c in zip(X, y)]
    (tmp_path / "a.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "u.csv").write_text("\n".join(r.rsplit(",", 1)[0] for r in rows) + "\n")
    run("train", "tvm", tmp_path / "a.csv", "--budget", 10, "-o", tmp_path / "m.npz", "-q")
    line = error_line("predict", tmp_path / "m.npz", tmp_path / "u.csv")
    assert "has 1 features but the model was trained on 2" in line
    assert "--label-column none" in line
    code, out, err = run("predict", tmp_path / "m.npz", tmp_path / "u.csv", "--label-column", "none")
    assert len(out.split()) == 40
    # a wrong width that a missing label cannot explain, or a command that needs the labels,
    # gets no such advice
    (tmp_path / "w.csv").write_text("\n".join(r + ",0.5" for r in rows) + "\n")
    assert "--label-column none" not in error_line("predict", tmp_path / "m.npz", tmp_path / "w.csv")
    assert "--label-column none" not in error_line("evaluate", tmp_path / "m.npz", tmp_path / "u.csv")


def test_label_column_and_delimiter_are_kept_with_the_model(tmp_path):
    X, y = make_checkerboard(400, noise=0.0, random_state=6)
    X = np.column_stack([X, X[:, 0] * X[:, 1]])
    path = tmp_path / "first.csv"
    write_rows(path, X, y, header=None, label_first=True)
    # the label first and ';' between the fields (given, not sniffed: the file has commas)
    semi = tmp_path / "semi.txt"
    semi.write_text(path.read_text().replace(",", ":"))
    run("train", "perceptron", path, "--label-column", 0, "--standardize", "none",
        "-o", tmp_path / "m.npz", "-q")
    model = fastbudget.load(tmp_path / "m.npz")
    want = model.predict(X)
    assert model.n_features_in_ == 3
    _, out, err = run("predict", tmp_path / "m.npz", path)
    assert out.split() == [f"{v:g}" for v in want] and "warning" not in err
    doc = json.loads((tmp_path / "m.npz.scaler.json").read_text())
    assert doc["csv_label_column"] == 0 and doc["csv_delimiter"] is None
    _, out, _ = run("evaluate", tmp_path / "m.npz", path, "--json")
    assert json.loads(out)["accuracy"] == pytest.approx(np.mean(want == y), abs=1e-12)
    # an explicit option that names another column is used, with a warning
    code, out, err = run("evaluate", tmp_path / "m.npz", path, "--label-column", 2, "--json",
                         ok=False)
    assert "warning: --label-column 2 is not the label column the model was trained with (0" \
        in err
    # the same column named from the end: no warning
    _, out, err = run("evaluate", tmp_path / "m.npz", path, "--label-column", -4, "--json")
    assert "warning" not in err
    # update keeps what is recorded
    run("update", tmp_path / "m.npz", path, "-q")
    doc = json.loads((tmp_path / "m.npz.scaler.json").read_text())
    assert doc["csv_label_column"] == 0
    # a delimiter given in training is recorded and used
    run("train", "perceptron", semi, "--format", "csv", "--label-column", 0, "--delimiter", ":",
        "--standardize", "none", "-o", tmp_path / "s.npz", "-q")
    doc = json.loads((tmp_path / "s.npz.scaler.json").read_text())
    assert doc["csv_delimiter"] == ":" and doc["csv_label_column"] == 0
    _, out, err = run("predict", tmp_path / "s.npz", semi, "--format", "csv")
    assert out.split() == [f"{v:g}" for v in fastbudget.load(tmp_path / "s.npz").predict(X)]
    assert "warning" not in err


def test_reader_header_of_numbers_above_numeric_labels():
    import io
    from fastbudget.datasets import read_csv
    from fastbudget.datasets.readers import collect
    text = b"400,410,420,label\n1,2,3,0\n4,5,6,1\n7,8,9,0\n"
    X, y = collect(read_csv(io.BytesIO(text), label_type="auto"))
    assert X.tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]] and y.tolist() == [0, 1, 0]
    # over text labels the line is data, as UCI letter's first line
    text = b"400,410,420,label\n1,2,3,A\n4,5,6,B\n"
    X, y = collect(read_csv(io.BytesIO(text), label_type="auto"))
    assert X.shape == (3, 3) and y.tolist() == ["label", "A", "B"]
    X, y = collect(read_csv(io.BytesIO(text), label_type="auto", header=True))
    assert X.shape == (2, 3) and y.tolist() == ["A", "B"]
    # with header=False, or alone, such a line stays data
    text = b"400,410,420,label\n1,2,3,0\n"
    X, y = collect(read_csv(io.BytesIO(text), label_type="auto", header=False))
    assert y.tolist() == ["label", "0"]
    X, y = collect(read_csv(io.BytesIO(b"5,2,7,x\n"), label_type="auto"))
    assert X.tolist() == [[5, 2, 7]] and y.tolist() == ["x"]


def test_numeric_feature_names_are_a_header(tmp_path):
    X, y = make_checkerboard(200, noise=0.0, random_state=8)
    path = tmp_path / "spectra.csv"
    write_rows(path, X, y, header="400,410,label")
    _, out, _ = run("train", "perceptron", path, "-o", tmp_path / "s.npz", "-q")
    assert "on 200 examples" in out
    assert fastbudget.load(tmp_path / "s.npz").classes_.tolist() == [-1, 1]
    # the ambiguous case: numeric names above text labels; --header yes says it
    words = np.where(y > 0, "yes", "no")
    with open(path, "w") as f:
        f.write("400,410,label\n")
        for row, w in zip(X, words):
            f.write(f"{row[0]:.17g},{row[1]:.17g},{w}\n")
    _, out, _ = run("train", "perceptron", path, "-o", tmp_path / "w.npz", "--header", "yes")
    assert "on 200 examples" in out
    assert fastbudget.load(tmp_path / "w.npz").classes_.tolist() == ["no", "yes"]
    _, out, _ = run("train", "perceptron", path, "-o", tmp_path / "w.npz", "-q")
    assert "on 201 examples" in out            # without it the line is data, as documented


def test_thyroid_header_is_not_a_class(tmp_path, shared_data):
    thyroid = shared_data / "thyroid" / "new-thyroid.tsv.gz"
    _, out, _ = run("train", "perceptron", thyroid, "-o", tmp_path / "t.npz")
    assert fastbudget.load(tmp_path / "t.npz").classes_.tolist() == [1, 2, 3]
    assert "on 215 examples" in out


def _sparse_stdin(n=60, d=9, later=12):
    """LIBSVM rows over features 1..d, then rows that also use feature ``later`` > d."""
    rng = np.random.default_rng(2)
    lines = []
    for i in range(n):
        top = d if i < n // 2 else later
        idx = sorted(rng.choice(np.arange(1, top + 1), size=3, replace=False))
        if i >= n // 2:
            idx = sorted(set(idx[:2]) | {later})
        lab = 1 if i % 2 else -1
        lines.append(f"{lab} " + " ".join(f"{j}:{rng.normal():.6f}" for j in idx))
    return ("\n".join(lines) + "\n").encode()


def test_libsvm_stdin_takes_n_features(tmp_path):
    data = _sparse_stdin()
    line = error_line("train", "perceptron", "-", "--chunk-size", 20, "-o", tmp_path / "m.npz",
                      stdin=data)
    assert line.startswith("fastbudget: error: <stdin>, line 31: feature index 12")
    assert "--n-features N" in line and "n_features" not in line
    _, out, _ = run("train", "perceptron", "-", "--chunk-size", 20, "--n-features", 12,
                    "-o", tmp_path / "m.npz", stdin=data)
    assert "60 examples x 12 features" in out
    line = error_line("train", "perceptron", "-", "--chunk-size", 20, "--n-features", 10,
                      "-o", tmp_path / "m.npz", stdin=data)
    assert "beyond --n-features 10" in line and "pass a larger --n-features" in line
    # zero-based indices said on the command line
    line = error_line("train", "perceptron", "-", "--zero-based", "no", "-o",
                      tmp_path / "z.npz", stdin=b"1 0:1 2:1\n-1 1:1\n")
    assert "--zero-based no; pass --zero-based yes" in line
    _, out, _ = run("train", "perceptron", "-", "--zero-based", "yes", "--gamma", 1, "-o",
                    tmp_path / "z.npz", stdin=b"1 1:1 2:1\n-1 1:1\n")
    assert "x 3 features" in out
    assert json.loads((tmp_path / "z.npz.scaler.json").read_text())["libsvm_zero_based"] is True
    # with a saved model: its width
    line = error_line("predict", tmp_path / "m.npz", "-", "--n-features", 10,
                      stdin=data)
    assert "--n-features 10, but the model was trained on 12 features" in line


def test_stdin_errors_name_stdin(tmp_path):
    line = error_line("train", "perceptron", "-", "-o", tmp_path / "m.npz",
                      stdin=b"a,b,label\n1,2,1\n3,x,-1\n")
    assert line.startswith("fastbudget: error: <stdin>, line 3: value in feature column 1 'x'")


def _slow_stdin(parts, *args, pause=1.0):
    """Run the command line with ``parts`` written to its standard input ``pause`` seconds
    apart (a feed whose first line arrives alone)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("FASTBUDGET_DEBUG", None)
    proc = subprocess.Popen([sys.executable, "-m", "fastbudget.cli", *map(str, args)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env)
    try:
        for i, part in enumerate(parts):
            if i:
                time.sleep(pause)
            proc.stdin.write(part)
            proc.stdin.flush()
        proc.stdin.close()
    except BrokenPipeError:                 # it stopped reading (an error)
        pass
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=300)
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("parts,classes", [
    ([b"a,b,label\n", b"1,2,yes\n3,4,no\n5,6,yes\n"], ["no", "yes"]),       # header alone
    ([b"\n", b"a,b,label\n1,2,yes\n3,4,no\n"], ["no", "yes"]),               # blank line
    ([b"# comment\n", b"+1 1:1 2:1\n-1 1:2 2:0\n"], [-1, 1]),               # LIBSVM comment
])
def test_slow_stdin_is_read_as_a_fast_one(tmp_path, parts, classes):
    code, out, err = _slow_stdin(parts, "train", "perceptron", "-", "--gamma", 1,
                                 "-o", tmp_path / "s.npz")
    assert code == 0, err
    assert fastbudget.load(tmp_path / "s.npz").classes_.tolist() == classes
    fmt = "libsvm" if b":" in parts[1] else "csv"      # the format said: the same
    code, out, err = _slow_stdin(parts, "train", "perceptron", "-", "--gamma", 1,
                                 "--format", fmt, "-o", tmp_path / "s.npz")
    assert code == 0, err
    assert fastbudget.load(tmp_path / "s.npz").classes_.tolist() == classes
    # the same bytes at once give the same model
    _, out2, _ = run("train", "perceptron", "-", "--gamma", 1, "-o", tmp_path / "f.npz",
                     stdin=b"".join(parts))
    np.testing.assert_array_equal(fastbudget.load(tmp_path / "s.npz").decision_function([[1, 2]]),
                                  fastbudget.load(tmp_path / "f.npz").decision_function([[1, 2]]))


def test_quoted_fields_are_refused_with_a_message(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text('"a","b","label"\n1,2,"1"\n3,4,"0"\n5,6,"1"\n')
    line = error_line("train", "perceptron", path, "-o", tmp_path / "m.npz")
    assert "line 2: label '\"1\"' is in quotes" in line and "not supported" in line
    assert not (tmp_path / "m.npz").exists()
    path.write_text('a,b,label\n1,"2",1\n3,4,0\n')
    line = error_line("train", "perceptron", path, "-o", tmp_path / "m.npz")
    assert "line 2: value in feature column 1 '\"2\"' is not a number. Quoted fields" in line
    # a quoted header is still read (its names without quotes)
    path.write_text('"a","b","label"\n1,2,yes\n3,4,no\n')
    run("train", "perceptron", path, "--label-column", "label", "--gamma", 1,
        "-o", tmp_path / "m.npz")
    assert fastbudget.load(tmp_path / "m.npz").classes_.tolist() == ["no", "yes"]


def test_corrupt_gzip_names_the_file(small, tmp_path):
    """One flipped byte inside a .gz gave "unexpected error: Error -3 while decompressing
    data ... please report it" without the file; now one line naming the file, for a
    name that says gzip and for one sniffed from the content."""
    import gzip
    d, X, y = small
    raw = bytearray(gzip.compress(((d / "a.csv").read_text() * 20).encode()))
    raw[len(raw) // 2] ^= 0xFF
    for name in ("bad.csv.gz", "bad.data"):
        (tmp_path / name).write_bytes(bytes(raw))
        for args in (("train", "perceptron", tmp_path / name, "-o", tmp_path / "m.npz"),
                     ("predict", d / "m.npz", tmp_path / name),
                     ("evaluate", d / "m.npz", tmp_path / name)):
            line = error_line(*args)
            assert f"{name}: could not read or decompress the data" in line, line
            assert "please report" not in line and "unexpected" not in line
    assert not (tmp_path / "m.npz").exists()


def test_libsvm_index_beyond_the_inferred_bound_names_its_line(tmp_path):
    """'+1 1:0.5 1000000000000:0.3' tried to allocate a chunk of 10^12 columns (71 PiB);
    an inferred width beyond 10^6 features is refused naming the line, for a file (first
    pass) and for standard input (first chunk); --n-features still reads wider data."""
    from fastbudget.datasets.readers import MAX_INFERRED_FEATURES
    text = "+1 1:0.5 2:0.1\n-1 1:0.2 2:0.3\n+1 1:0.5 1000000000000:0.3\n-1 1:0.1\n"
    (tmp_path / "huge.svm").write_text(text)
    line = error_line("train", "perceptron", tmp_path / "huge.svm", "-o", tmp_path / "m.npz")
    assert "huge.svm, line 3: feature index 1000000000000" in line
    assert f"{MAX_INFERRED_FEATURES:,} features" in line and "--n-features" in line
    line = error_line("train", "perceptron", "-", "--format", "libsvm", "-o",
                      tmp_path / "m.npz", stdin=text.encode())
    assert "<stdin>, line 3: feature index 1000000000000" in line
    # the bound itself is read (one-based index 10^6: 10^6 features)
    edge = f"+1 1:0.5\n-1 {MAX_INFERRED_FEATURES}:0.3\n"
    (tmp_path / "edge.svm").write_text(edge)
    run("train", "perceptron", tmp_path / "edge.svm", "--standardize", "none", "-q",
        "--chunk-size", "2", "-o", tmp_path / "e.npz")
    assert fastbudget.load(tmp_path / "e.npz").n_features_in_ == MAX_INFERRED_FEATURES
    (tmp_path / "over.svm").write_text(f"+1 1:0.5\n-1 {MAX_INFERRED_FEATURES + 1}:0.3\n")
    line = error_line("train", "perceptron", tmp_path / "over.svm", "-o", tmp_path / "m.npz")
    assert "over.svm, line 2:" in line
    assert not (tmp_path / "m.npz").exists()
