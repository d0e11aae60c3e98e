"""The command line with text labels in CSV files (UCI letter's 'T,2,8,...') and with a budget
shared by the one-vs-rest learners of a multi-class stream (``--total-budget``)."""
import json

import numpy as np
import pytest

import fastbudget
from fastbudget.datasets import make_waveform

from _cli import SCALER_WARNING_IGNORED, error_line, run

pytestmark = SCALER_WARNING_IGNORED

NAMES = np.array(["circle", "square", "star"])


@pytest.fixture(scope="module")
def text_csv(tmp_path_factory):
    """Waveform's three classes as words in the first column, no header (as UCI letter)."""
    d = tmp_path_factory.mktemp("labels")
    X, y = make_waveform(1500, binary=False, random_state=3)
    words = NAMES[y.astype(int)]
    for name, sl in (("train.csv", slice(0, 1000)), ("test.csv", slice(1000, 1500))):
        with open(d / name, "w") as f:
            for w, row in zip(words[sl], X[sl]):
                f.write(w + "," + ",".join(f"{v:.17g}" for v in row) + "\n")
    return d, X, words


def test_text_labels_train_evaluate_predict_update(text_csv, tmp_path):
    d, X, words = text_csv
    _, out, err = run("train", "tvm", d / "train.csv", "--label-column", 0, "--total-budget", 60,
                      "--warmup-rows", 400, "--chunk-size", 250, "-o", tmp_path / "m.npz")
    # the first line is data (1,000 rows learned), and the budget is shared
    assert "1,000 examples" in out
    assert "3 learners with a budget of 20 each (60 in all)" in err
    model = fastbudget.load(tmp_path / "m.npz")
    assert list(model.classes_) == list(NAMES)
    assert model.budget_per_estimator_ == 20
    assert [e.budget for e in model.estimators_] == [20, 20, 20]
    # in-process on the same scaled stream and chunks
    doc = json.loads((tmp_path / "m.npz.scaler.json").read_text())
    mean, scale = np.array(doc["mean"]), np.array(doc["scale"])
    Z = (X - mean) / scale
    ref = fastbudget.OneVsRestClassifier(fastbudget.TVMClassifier(), total_budget=60)
    for i in range(0, 1000, 250):
        ref.partial_fit(Z[i:i + 250], words[i:i + 250], classes=NAMES)
    np.testing.assert_array_equal(ref.decision_function(Z[1000:]),
                                  model.decision_function(Z[1000:]))
    want = ref.predict(Z[1000:])
    _, out, _ = run("predict", tmp_path / "m.npz", d / "test.csv", "--label-column", 0)
    assert out.split() == list(want)
    _, out, _ = run("evaluate", tmp_path / "m.npz", d / "test.csv", "--label-column", 0, "--json")
    res = json.loads(out)
    assert res["classes"] == list(NAMES)
    assert res["accuracy"] == pytest.approx(np.mean(want == words[1000:]), abs=1e-12)
    _, out, _ = run("update", tmp_path / "m.npz", d / "test.csv", "--label-column", 0, "-q")
    assert "500 examples" in out
    ref.partial_fit(Z[1000:], words[1000:])
    got = fastbudget.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(ref.decision_function(Z[:100]), got.decision_function(Z[:100]))


def test_total_budget_of_two_classes_is_the_budget(tmp_path):
    X, y = make_waveform(600, random_state=1)
    with open(tmp_path / "b.csv", "w") as f:
        for lab, row in zip(y, X):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{lab:g}\n")
    run("train", "tvm", tmp_path / "b.csv", "--total-budget", 25, "-o", tmp_path / "b.npz", "-q")
    model = fastbudget.load(tmp_path / "b.npz")
    assert isinstance(model, fastbudget.TVMClassifier) and model.budget == 25


def test_total_budget_errors(text_csv):
    d = text_csv[0]
    args = ("train", "tvm", d / "train.csv", "--label-column", 0)
    assert "pass at least 6" in error_line(*args, "--total-budget", 5)
    assert "one of --budget" in error_line(*args, "--total-budget", 60, "--budget", 20)
    line = error_line("train", "idsvm", d / "train.csv", "--label-column", 0, "--total-budget", 60)
    assert "drop --total-budget" in line


@pytest.mark.parametrize("header", ["0,1,2,3", "1,2,3,target", "0,1,2,target"])
def test_a_header_of_column_numbers_is_not_a_row(tmp_path, header):
    """pandas' to_csv of an unnamed frame and PMLB write the column numbers as the header;
    read as data it became one more example of a bogus class."""
    X, y = make_waveform(400, random_state=2)
    with open(tmp_path / "h.csv", "w") as f:
        f.write(header + "\n")
        for lab, row in zip(y, X[:, :3]):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{lab:g}\n")
    _, out, _ = run("train", "tvm", tmp_path / "h.csv", "--budget", 20, "-o", tmp_path / "h.npz",
                    "-q")
    assert "400 examples" in out
    model = fastbudget.load(tmp_path / "h.npz")
    assert list(model.classes_) == [-1.0, 1.0]


def test_yes_no_labels_stay_words(tmp_path):
    X, y = make_waveform(400, random_state=4)
    with open(tmp_path / "yn.csv", "w") as f:
        for lab, row in zip(y, X[:, :4]):
            f.write(",".join(f"{v:.17g}" for v in row) + (",yes\n" if lab > 0 else ",no\n"))
    run("train", "tvm", tmp_path / "yn.csv", "--budget", 20, "--class-weight", "yes:3,no:1",
        "--classes", "no,yes", "-o", tmp_path / "yn.npz", "-q")
    model = fastbudget.load(tmp_path / "yn.npz")
    assert list(model.classes_) == ["no", "yes"]
    assert model.class_weight == {"yes": 3.0, "no": 1.0}


def test_evaluate_names_labels_the_model_does_not_know(tmp_path):
    X, y = make_waveform(300, random_state=5)
    with open(tmp_path / "a.csv", "w") as f:
        for lab, row in zip(y, X[:, :3]):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{lab:g}\n")
    run("train", "tvm", tmp_path / "a.csv", "--budget", 20, "-o", tmp_path / "a.npz", "-q")
    with open(tmp_path / "b.csv", "w") as f:            # 0/1 labels on a -1/+1 model
        for lab, row in zip(y, X[:, :3]):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{max(lab, 0):g}\n")
    _, out, err = run("evaluate", tmp_path / "a.npz", tmp_path / "b.csv", "--json")
    n0 = int(np.sum(y < 0))
    assert f"{n0:,} rows have labels the model was not trained on (0: {n0:,})" in err
    assert json.loads(out)["unknown_labels"] == {"0": n0}


def test_prequential_window_must_be_positive(text_csv):
    line = error_line("prequential", "tvm", text_csv[0] / "train.csv", "--label-column", 0,
                      "--window", 0)
    assert "--window must be a positive" in line


def test_warnings_are_one_line(tmp_path):
    _, _, err = run("train", "tvm", "gen:checkerboard", "--n", 3000, "--param", "budget=3",
                    "-o", tmp_path / "w.npz", "-q")
    lines = [ln for ln in err.splitlines() if "RejectionWarning" in ln]
    assert len(lines) == 1 and lines[0].startswith("fastbudget: warning: ")
    assert "partial_fit(" not in err        # no source line


def _svm(path, X, y, zero_based):
    with open(path, "w") as f:
        for lab, row in zip(y, X):
            f.write(f"{lab:g} " + " ".join(f"{j + (0 if zero_based else 1)}:{v:.17g}"
                                           for j, v in enumerate(row) if v != 0) + "\n")


def test_libsvm_indexing_of_the_training_file_is_kept(tmp_path):
    """A zero-based training file (it has index 0) and a test file with no index 0: the test
    file alone looks one-based, which shifted every feature by one (44 % instead of 91 %)."""
    X, y = make_waveform(1200, random_state=6)
    X = X[:, :4].copy()
    Xt = X[800:].copy()
    Xt[:, 0] = 0.0                     # no index 0 in the test file
    _svm(tmp_path / "tr.svm", X[:800], y[:800], zero_based=True)
    _svm(tmp_path / "te.svm", Xt, y[800:], zero_based=True)
    run("train", "tvm", tmp_path / "tr.svm", "--budget", 30, "-o", tmp_path / "z.npz", "-q")
    doc = json.loads((tmp_path / "z.npz.scaler.json").read_text())
    assert doc["libsvm_zero_based"] is True
    model = fastbudget.load(tmp_path / "z.npz")
    Z = (Xt - np.array(doc["mean"])) / np.array(doc["scale"])
    _, out, _ = run("predict", tmp_path / "z.npz", tmp_path / "te.svm")
    assert [float(v) for v in out.split()] == list(model.predict(Z))
    # standard input, whose first chunk lacks the last feature: the model's width is used
    _, out2, _ = run("predict", tmp_path / "z.npz", "-", "--chunk-size", 50,
                     stdin=(tmp_path / "te.svm").read_bytes())
    assert out2 == out


def test_a_missing_scaler_file_is_noted(tmp_path):
    X, y = make_waveform(500, random_state=7)
    _svm(tmp_path / "a.svm", X[:, :3], y, zero_based=False)
    run("train", "tvm", tmp_path / "a.svm", "--budget", 20, "-o", tmp_path / "a.npz", "-q")
    (tmp_path / "b.npz").write_bytes((tmp_path / "a.npz").read_bytes())   # copied alone
    _, _, err = run("evaluate", tmp_path / "b.npz", tmp_path / "a.svm")
    assert "no b.npz.scaler.json beside the model" in err
    _, _, err = run("evaluate", tmp_path / "a.npz", tmp_path / "a.svm")
    assert "scaler.json" not in err


def test_main_called_from_python_leaves_the_warning_format_as_it_was(tmp_path):
    """cli.main sets the one-line warning format for its own call only: a program (or
    notebook) that calls it keeps its own format afterwards (the command line's format is
    checked by test_warnings_are_one_line)."""
    import warnings

    from fastbudget.cli import main

    before = warnings.formatwarning
    assert main(["train", "tvm", "gen:checkerboard", "--n", "600", "--param", "budget=3",
                 "-o", str(tmp_path / "w.npz"), "-q"]) == 0
    assert warnings.formatwarning is before
