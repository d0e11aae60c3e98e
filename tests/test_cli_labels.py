"""The command line with text labels in CSV files (UCI letter's 'T,2,8,...') and with a budget
shared by the one-vs-rest learners of a multi-class stream (``--total-budget``)."""
import json

import numpy as np
import pytest

import fastbudget
from fastbudget.datasets import make_waveform

from test_cli import error_line, run

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
