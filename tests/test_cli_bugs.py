"""Fixes from a tester's report on the command line: ``predict -o`` (the input file, partial
output, '-', ''), the CSV reading options kept with the model, headers of numbers, sparse
LIBSVM on standard input, the scaler sidecar of ``update``, standard input that arrives
slowly, and small messages."""
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import fastbudget
from fastbudget.datasets import make_checkerboard

from test_cli import ROOT, error_line, run

# these tests load models the command line trained and check them in-process, on rows they
# standardise themselves; load's warning to do so is tested in test_load_scaler.py
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*trained by the command line on standardised rows:UserWarning")


def write_rows(path, X, y, header="x0,x1,label", label_first=False):
    with open(path, "w") as f:
        if header:
            f.write(header + "\n")
        for row, lab in zip(X, y):
            vals = [f"{v:.17g}" for v in row]
            lab = f"{lab:g}"
            f.write(",".join([lab] + vals if label_first else vals + [lab]) + "\n")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A perceptron trained on a 300-row CSV (header x0,x1,label), not standardised."""
    d = tmp_path_factory.mktemp("bugs")
    X, y = make_checkerboard(300, noise=0.0, random_state=4)
    write_rows(d / "a.csv", X, y)
    run("train", "perceptron", d / "a.csv", "-o", d / "m.npz", "--standardize", "none", "-q")
    return d, X, y


# ----------------------------------------------------------------------------- 1. predict -o
def test_predict_refuses_to_overwrite_its_input(small, tmp_path):
    d, X, y = small
    v = tmp_path / "v.csv"
    v.write_bytes((d / "a.csv").read_bytes())
    before = v.read_bytes()
    line = error_line("predict", d / "m.npz", v, "-o", v)
    assert "is the input data" in line and "another output file" in line
    assert v.read_bytes() == before
    # the same file under another name (a symbolic link) is the same file
    link = tmp_path / "link.csv"
    link.symlink_to(v)
    line = error_line("predict", d / "m.npz", link, "-o", v)
    assert "is the input data" in line
    assert v.read_bytes() == before
    # nor through standard input
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(v, "rb") as f:
        r = subprocess.run([sys.executable, "-m", "fastbudget.cli", "predict", str(d / "m.npz"),
                            "-", "-o", str(v)], stdin=f, capture_output=True, env=env,
                           timeout=300)
    assert r.returncode == 2 and "is the input data (standard input)" in r.stderr.decode()
    assert v.read_bytes() == before
    # nor a model saved over the data
    line = error_line("train", "perceptron", v, "-o", v)
    assert "is the input data" in line
    line = error_line("update", d / "m.npz", v, "-o", v)
    assert "is the input data" in line
    assert v.read_bytes() == before
    # nor the model file
    model = (d / "m.npz").read_bytes()
    line = error_line("predict", d / "m.npz", v, "-o", d / "m.npz")
    assert "is the model file" in line
    assert (d / "m.npz").read_bytes() == model


def test_predict_output_is_replaced_whole_or_not_at_all(small, tmp_path):
    d, X, y = small
    out = tmp_path / "pred.txt"
    run("predict", d / "m.npz", d / "a.csv", "-o", out)
    good = out.read_text()
    want = fastbudget.load(d / "m.npz").predict(X)
    assert good.split() == [f"{v:g}" for v in want]
    lines = (d / "a.csv").read_text().split("\n")
    lines[201] = "not,a,number"                  # line 202, in the fifth chunk of 50
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines))
    line = error_line("predict", d / "m.npz", bad, "-o", out, "--chunk-size", 50)
    assert "line 202" in line
    assert out.read_text() == good              # the previous output, not the first 200 rows
    assert sorted(os.listdir(tmp_path)) == ["bad.csv", "pred.txt"]    # no temporary file left


def test_predict_dash_is_stdout_and_empty_output_is_refused(small, tmp_path):
    d, X, y = small
    _, out, _ = run("predict", d / "m.npz", d / "a.csv", "-o", "-", cwd=tmp_path)
    assert out.split() == [f"{v:g}" for v in fastbudget.load(d / "m.npz").predict(X)]
    assert not (tmp_path / "-").exists()
    for args in (("predict", d / "m.npz", d / "a.csv", "-o", ""),
                 ("train", "perceptron", d / "a.csv", "-o", ""),
                 ("update", d / "m.npz", d / "a.csv", "-o", ""),
                 ("prequential", "perceptron", d / "a.csv", "--no-plot", "--save", "",
                  "--out", tmp_path / "pq")):
        code, out, err = run(*args, ok=False, cwd=tmp_path)
        assert code == 2 and "Traceback" not in err
        assert "needs a file name" in err, err
    assert os.listdir(tmp_path) == []           # no ./.scaler.json, no '-', no curve


# ----------------------------------------------------------------------------- 2. CSV options
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


# ----------------------------------------------------------------------------- 3. headers
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


# ----------------------------------------------------------------------------- 4. LIBSVM stdin
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


# ----------------------------------------------------------------------------- 5. no sidecar
def test_update_without_sidecar_keeps_the_note(small, tmp_path):
    d, X, y = small
    nos = tmp_path / "nos.npz"
    nos.write_bytes((d / "m.npz").read_bytes())            # copied without its sidecar
    _, out, err = run("update", nos, d / "a.csv")
    assert "no nos.npz.scaler.json beside the model" in err
    assert "without nos.npz.scaler.json" in out
    assert not (tmp_path / "nos.npz.scaler.json").exists()
    _, _, err = run("predict", nos, d / "a.csv")
    assert "no nos.npz.scaler.json beside the model" in err      # still said
    # saved elsewhere: the sidecar of the file it replaces no longer belongs to it
    other = tmp_path / "other.npz"
    other.write_bytes((d / "m.npz").read_bytes())
    (tmp_path / "other.npz.scaler.json").write_bytes((d / "m.npz.scaler.json").read_bytes())
    run("update", nos, d / "a.csv", "-o", other, "-q")
    assert not (tmp_path / "other.npz.scaler.json").exists()
    ref = fastbudget.load(nos)
    ref.partial_fit(X, y)                                      # the data as given
    np.testing.assert_array_equal(fastbudget.load(other).decision_function(X),
                                  ref.decision_function(X))


# ----------------------------------------------------------------------------- 6. slow stdin
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


# ----------------------------------------------------------------------------- 7. small ones
def test_one_vs_rest_note_matches_the_model(small, tmp_path):
    d, X, y = small
    for extra in (["--multiclass"], ["--classes", "1,-1,1"]):
        _, _, err = run("train", "perceptron", d / "a.csv", "--budget", 20, *extra,
                        "-o", tmp_path / "m.npz")
        model = fastbudget.load(tmp_path / "m.npz")
        learners = getattr(model, "estimators_", [model])
        assert model.classes_.tolist() == [-1, 1]
        assert [e.budget for e in learners] == [20]
        assert "2 learners" not in err and "40 in all" not in err
        if extra == ["--multiclass"]:
            assert "1 learner with a budget of 20" in err


def test_prequential_out_that_is_a_file_and_negative_seed(small, tmp_path):
    d, X, y = small
    f = tmp_path / "taken"
    f.write_text("keep")
    line = error_line("prequential", "perceptron", d / "a.csv", "--out", f, "--no-plot")
    assert f"--out {f} is a file, not a directory" in line
    assert f.read_text() == "keep"
    line = error_line("train", "perceptron", "gen:gauss", "--n", 100, "--seed", -1,
                      "-o", tmp_path / "m.npz")
    assert "--seed" in line and "at least 0" in line


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


# ----------------------------------------------------------------------------- issue 30
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


def test_predict_on_an_empty_file_refuses(small, tmp_path):
    d, X, y = small
    for text in ("", "x0,x1,label\n", "# nothing\n\n"):
        (tmp_path / "e.csv").write_text(text)
        line = error_line("predict", d / "m.npz", tmp_path / "e.csv", "-o", tmp_path / "p.txt")
        assert "holds no data rows" in line
        assert not (tmp_path / "p.txt").exists()
        code, out, err = run("predict", d / "m.npz", tmp_path / "e.csv", ok=False)
        assert code == 2 and out == ""


def _fail_writes(monkeypatch, after=0):
    """np.savez (the model's writer) raises ENOSPC, as on a full disk, after ``after``
    successful calls."""
    import errno
    calls = []
    real = np.savez

    def savez(*a, **k):
        calls.append(1)
        if len(calls) > after:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(*a, **k)
    monkeypatch.setattr(np, "savez", savez)


def _main(capsys, *args):
    from fastbudget.cli import main
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("existing", [False, True])
def test_failed_train_o_leaves_no_scaler_without_its_model(small, tmp_path, monkeypatch,
                                                           capsys, existing):
    """A disk that fills while 'train -o' saves: the error names the model file (it said
    only '[Errno 28] No space left on device'), and the model file and its scaler sidecar
    are both as they were (none for a new path; the old pair for an existing one), where
    the sidecar used to be written first and left without its model. No temporary file
    stays behind."""
    d, X, y = small
    out = tmp_path / "m.npz"
    if existing:
        run("train", "perceptron", d / "a.csv", "-o", out, "-q")
        before = out.read_bytes(), (tmp_path / "m.npz.scaler.json").read_bytes()
    _fail_writes(monkeypatch)
    code, err = _main(capsys, "train", "perceptron", d / "a.csv", "--warmup-rows", "50",
                      "-o", out, "-q")
    assert code == 2
    assert f"cannot write {str(out)!r}: No space left on device" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    if existing:
        assert (out.read_bytes(), (tmp_path / "m.npz.scaler.json").read_bytes()) == before
    else:
        assert sorted(os.listdir(tmp_path)) == []
    assert not [f for f in os.listdir(tmp_path) if f.endswith((".tmp", ".lock"))]


def test_failed_checkpoint_leaves_the_previous_pair(small, tmp_path, monkeypatch, capsys):
    """--checkpoint-every: the first checkpoint is saved, the second fails (disk full):
    the model and sidecar on disk are the first checkpoint's, consistent."""
    d, X, y = small
    out = tmp_path / "m.npz"
    _fail_writes(monkeypatch, after=1)
    code, err = _main(capsys, "train", "perceptron", d / "a.csv", "--chunk-size", "100",
                      "--checkpoint-every", "100", "--standardize", "none", "-o", out, "-q")
    assert code == 2 and "No space left on device" in err and str(out) in err
    monkeypatch.undo()
    m = fastbudget.load(out)
    assert m.n_features_in_ == 2
    assert json.loads((tmp_path / "m.npz.scaler.json").read_text())["mode"] == "none"
