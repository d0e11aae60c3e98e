"""The command line's refusals and notes: a label outside the model's classes named by its
line in the file, counts that must be positive, empty and one-class files, a chunk too small
for gamma 'scale', unknown learners and files, the learner flags' help against the learners'
own defaults, and one readable line for each (no traceback, no 'please report')."""
import os

import numpy as np
import pytest

import fastbudget
from fastbudget import cli
from fastbudget.cli.errors import report
from fastbudget.cli.options import COMMON_FLAGS
from fastbudget.cli.parser import build_parser
from fastbudget.datasets import make_checkerboard

from _cli import SCALER_WARNING_IGNORED, error_line, run, write_libsvm
from _cli import small  # noqa: F401 (a fixture)


pytestmark = SCALER_WARNING_IGNORED


def _line_of(path, text):
    """1-based number of the only line of ``path`` equal to ``text``."""
    lines = path.read_text().split("\n")
    hits = [i + 1 for i, ln in enumerate(lines) if ln == text]
    assert len(hits) == 1, hits
    return hits[0]


@pytest.fixture
def new_label_csv(tmp_path):
    """A header, blank lines, and a label 7 that first appears in the third chunk of 10."""
    rng = np.random.default_rng(5)
    rows = [f"{a:.4f},{b:.4f},{1 if i % 2 else -1}"
            for i, (a, b) in enumerate(rng.normal(size=(30, 2)))]
    rows[24] = rows[24].rsplit(",", 1)[0] + ",7"
    rows.insert(12, "")                       # blank lines are not rows
    rows.insert(3, "  ")
    path = tmp_path / "new_label.csv"
    path.write_text("a,b,label\n" + "\n".join(rows) + "\n")
    return path, rows[26]


@pytest.mark.parametrize("command", ["train", "prequential"])
def test_unknown_label_names_its_line_in_the_file(new_label_csv, tmp_path, command):
    path, bad_row = new_label_csv
    extra = ["--no-plot", "--out", tmp_path] if command == "prequential" else ["-o", tmp_path / "m.npz"]
    line = error_line(command, "tvm", path, "--chunk-size", 10, "--budget", 10, *extra)
    want = _line_of(path, bad_row)            # 28: header, 2 blank lines, row 25
    assert f"{path}, line {want}: label 7 is not one of the model's classes (-1, 1)" in line
    assert "--classes -1,1,7" in line
    assert not (tmp_path / "m.npz").exists()


def test_unknown_label_line_with_standardize_pass_and_stdin(new_label_csv, tmp_path):
    path, bad_row = new_label_csv
    want = _line_of(path, bad_row)
    line = error_line("train", "tvm", path, "--chunk-size", 10, "--standardize", "pass",
                      "-o", tmp_path / "m.npz")
    assert f"line {want}: label 7" in line
    line = error_line("train", "tvm", "-", "--chunk-size", 10, "-o", tmp_path / "m.npz",
                      stdin=path.read_bytes())
    assert f"<stdin>, line {want}: label 7" in line


def test_update_unknown_label_names_line_and_keeps_model(tmp_path):
    X, y = make_checkerboard(40, random_state=0)
    write_libsvm(tmp_path / "a.svm", X[:20], y[:20])
    run("train", "tvm", tmp_path / "a.svm", "-o", tmp_path / "m.npz", "-q")
    before = (tmp_path / "m.npz").read_bytes()
    write_libsvm(tmp_path / "b.svm", X[20:], y[20:])
    with open(tmp_path / "b.svm", "a") as f:
        f.write("# more rows\n\n3 1:0.5 2:0.5\n")
    line = error_line("update", tmp_path / "m.npz", tmp_path / "b.svm", "--chunk-size", 7)
    assert f"b.svm, line {_line_of(tmp_path / 'b.svm', '3 1:0.5 2:0.5')}: label 3" in line
    assert "a saved model cannot learn a new class" in line
    assert (tmp_path / "m.npz").read_bytes() == before


@pytest.mark.parametrize("args", [("demo", "--n", 0), ("demo", "--n", -5),
                                  ("demo", "--exact-n", 0), ("demo", "--chunk-size", 0),
                                  ("demo", "--budget", 1),
                                  ("train", "tvm", "gen:gauss", "--n", 0),
                                  ("train", "tvm", "gen:gauss", "--chunk-size", -1),
                                  ("train", "tvm", "gen:gauss", "--warmup-rows", 0)])
def test_counts_must_be_positive(args):
    code, out, err = run(*args, "--no-plot" if args[0] == "demo" else "-q", ok=False)
    assert code == 2 and out == ""
    assert err.startswith(f"fastbudget: error: argument {args[-2]}: must be at least ")
    assert f"(see 'fastbudget {args[0]} --help')" in err


def test_header_only_and_empty_files_are_named(tmp_path):
    (tmp_path / "h.csv").write_text("a,b,label\n")
    (tmp_path / "e.csv").write_text("")
    for name in ("h.csv", "e.csv"):
        line = error_line("train", "tvm", tmp_path / name, "-o", tmp_path / "m.npz")
        assert f"{name} (csv) holds no data rows" in line


def test_one_class_file_and_feature_as_label(tmp_path):
    (tmp_path / "one.csv").write_text("a,b,label\n1,2,1\n3,4,1\n5,6,1\n")
    line = error_line("train", "tvm", tmp_path / "one.csv", "-o", tmp_path / "m.npz")
    assert "all 3 rows" in line and "label 1" in line and "--label-column" in line
    X, y = make_checkerboard(20, random_state=6)
    with open(tmp_path / "f.csv", "w") as f:
        for (a, b), lab in zip(X, y):
            f.write(f"{lab:g},{a:.5f},{b:.5f}\n")
    line = error_line("train", "tvm", tmp_path / "f.csv", "-o", tmp_path / "m.npz")
    assert "looks like a feature" in line and "--label-column" in line
    _, out, _ = run("train", "tvm", tmp_path / "f.csv", "--label-column", 0,
                    "-o", tmp_path / "m.npz", "-q")
    assert "20 examples x 2 features" in out


def test_chunk_of_one_row_with_gamma_scale_says_what_to_pass(tmp_path):
    X, y = make_checkerboard(40, random_state=8)
    with open(tmp_path / "c.csv", "w") as f:
        for (a, b), lab in zip(X, y):
            f.write(f"{a:.5f},{b:.5f},{lab:g}\n")
    for learner in ("tvm", "idsvm"):
        line = error_line("train", learner, tmp_path / "c.csv", "--chunk-size", 1,
                          "--classes", "-1,1", "-o", tmp_path / "m.npz")
        assert "one row" in line and "--gamma" in line and "--chunk-size" in line
    assert not (tmp_path / "m.npz").exists()
    _, out, _ = run("train", "tvm", tmp_path / "c.csv", "--chunk-size", 1, "--classes", "-1,1",
                    "--gamma", "0.5", "-o", tmp_path / "m.npz", "-q")
    assert "40 examples x 2 features" in out
    _, out, _ = run("train", "tvm", tmp_path / "c.csv", "--chunk-size", 1, "--classes", "-1,1",
                    "--kernel", "linear", "-o", tmp_path / "m.npz", "-q")
    assert "40 examples x 2 features" in out


def test_unknown_learner_before_reading_data(tmp_path):
    (tmp_path / "one.csv").write_text("a,b,label\n1,2,1\n")
    assert "unknown learner 'nope'" in error_line("train", "nope", tmp_path / "one.csv")
    assert "unknown learner 'nope'" in error_line("prequential", "nope", tmp_path / "one.csv")


def test_file_not_found_keeps_its_own_message(capsys):
    exc = FileNotFoundError(2, "Data set 'banana': file 'x.txt' not found in '/d'", "/d/x.txt")
    assert report(exc) == 2
    err = capsys.readouterr().err
    assert "Data set 'banana': file 'x.txt' not found in '/d': /d/x.txt" in err
    assert report(FileNotFoundError(2, os.strerror(2), "gone.csv")) == 2
    assert "no such file: gone.csv" in capsys.readouterr().err


def test_help_has_no_markup():
    _, out, _ = run("--help")
    assert "``" not in out and "fastbudget command line" in out


def test_learner_flags_say_their_defaults_which_are_the_learners():
    """train --help gave --budget, --C, --degree and --coef0 no text at all, though their
    defaults differ between learners (C: TVM 100, IncrementalSVC 1 as SVC; kernel: linear
    for streamsvm and perceptron). The texts name each learner's default, checked here
    against the signatures so that they cannot drift apart."""
    import inspect
    import re
    helps = {a.dest: a.help or "" for a in
             build_parser()._subparsers._group_actions[0].choices["train"]._actions}
    for flag in COMMON_FLAGS:
        text = helps[flag]
        assert "default" in text, flag
        for name, cls_name in cli.LEARNERS.items():
            params = inspect.signature(getattr(fastbudget, cls_name).__init__).parameters
            if flag not in params:
                if flag == "budget":
                    assert name in text, (flag, name)
                continue
            value = params[flag].default
            if value is None:
                want = {"budget": "unbounded", "gamma": "'auto'"}[flag]
            elif isinstance(value, str):
                want = repr(value) if flag == "gamma" else value
            else:
                want = f"{value:g}"
            assert re.search(rf"(?<![\w.']){re.escape(want)}(?![\w.'])", text) or \
                want.startswith("'") and want in text, (flag, name, value, text)


@pytest.mark.parametrize("name, extra", [
    ("span", ("--budget", "30")),
    ("svincremental", ("--chunk-size", "200", "--param", "capacity=800")),
])
def test_span_and_svincremental_on_the_command_line(tmp_path, name, extra):
    """The two engine learners the README lists were not commands' learners: train / update /
    predict now take them, and the saved model is the one the same stream gives in Python
    (through the saved scaler)."""
    from fastbudget.datasets import make_checkerboard
    X, y = make_checkerboard(600, random_state=2)
    data = tmp_path / "cb.csv"
    data.write_text("\n".join(",".join(f"{v:.17g}" for v in r) + f",{int(t)}"
                              for r, t in zip(X, y)) + "\n")
    model = tmp_path / "m.npz"
    run("train", name, data, "-o", model, "--gamma", "1.35", "--C", "10", "-q", *extra)
    got = fastbudget.persist.load_model(model, _warn_scaler=False)
    assert type(got).__name__ == cli.LEARNERS[name]
    Z = fastbudget.load_scaler(model).transform(X)
    params = {"gamma": 1.35, "C": 10.0, **({"budget": 30} if name == "span" else
                                            {"capacity": 800})}
    ref = type(got)(**params)
    step = 200 if name == "svincremental" else 10_000
    for i in range(0, len(y), step):
        ref.partial_fit(Z[i:i + step], y[i:i + step], classes=[-1, 1])
    np.testing.assert_allclose(got.decision_function(Z), ref.decision_function(Z), atol=1e-9)
    _, out, _ = run("predict", model, data)
    np.testing.assert_array_equal(np.array(out.split(), dtype=float), got.predict(Z))
    run("update", model, data, "-o", tmp_path / "u.npz", "-q",
        *(extra[:2] if name == "svincremental" else ()))
    assert fastbudget.persist.load_model(tmp_path / "u.npz", _warn_scaler=False).n_features_in_ == 2


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
