"""The ``fastbudget`` command line, driven as a subprocess (``python -m fastbudget.cli``).

Each command runs on small data and its output is checked against the same computation done
in-process (the saved model, its scaler sidecar, a manual test-then-train loop); each error
path must give one readable line on stderr and exit status 2, never a traceback.
"""
import bz2
import gzip
import json

import numpy as np
import pytest

import fastbudget
from fastbudget.datasets import make_checkerboard, make_waveform

from _cli import GAMMA, SCALER_WARNING_IGNORED, error_line, run, write_csv, write_libsvm

pytestmark = SCALER_WARNING_IGNORED

@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    X, y = make_checkerboard(3000, noise=0.1, random_state=1)
    Xt, yt = make_checkerboard(800, random_state=2)
    write_libsvm(d / "train.svm", X, y)
    write_libsvm(d / "test.svm", Xt, yt)
    write_csv(d / "test.csv", Xt, yt)
    with gzip.open(d / "test.svm.gz", "wt") as f:
        f.write((d / "test.svm").read_text())
    with bz2.open(d / "test.data", "wt") as f:          # unknown extension: content sniffed
        f.write((d / "test.svm").read_text())
    code, out, err = run("train", "tvm", d / "train.svm", "--budget", 30, "--gamma", GAMMA,
                         "--warmup-rows", 1000, "--chunk-size", 700, "-o", d / "m.npz")
    assert "trained TVMClassifier" in out and "3,000 examples" in out
    return d, X, y, Xt, yt


def _scaled(d, X):
    doc = json.loads((d / "m.npz.scaler.json").read_text())
    return (X - np.array(doc["mean"])) / np.array(doc["scale"]), doc


def test_train_saves_model_and_warmup_scaler(data):
    d, X, y, Xt, yt = data
    model = fastbudget.load(d / "m.npz")
    assert isinstance(model, fastbudget.TVMClassifier) and model.budget == 30
    assert model.n_seen_ == 3000
    Z, doc = _scaled(d, X)
    # warm-up statistics: the first 1000 rows (then frozen)
    np.testing.assert_allclose(doc["mean"], X[:1000].mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(doc["scale"], X[:1000].std(axis=0), rtol=1e-12)
    # the same model trained in-process on the same standardised stream and chunks
    ref = fastbudget.TVMClassifier(budget=30, gamma=1.35)
    for i in range(0, 3000, 700):
        ref.partial_fit(Z[i:i + 700], y[i:i + 700], classes=[-1, 1])
    np.testing.assert_array_equal(ref.decision_function(Z[:200]), model.decision_function(Z[:200]))


def test_predict_and_evaluate_agree_with_the_model(data):
    d, X, y, Xt, yt = data
    model = fastbudget.load(d / "m.npz")
    Zt, _ = _scaled(d, Xt)
    want = model.predict(Zt)
    _, out, _ = run("predict", d / "m.npz", d / "test.svm", "--chunk-size", 300)
    got = np.array([float(v) for v in out.split()])
    np.testing.assert_array_equal(got, want)
    _, out, _ = run("evaluate", d / "m.npz", d / "test.svm", "--json", "--chunk-size", 300)
    res = json.loads(out)
    assert res["n"] == 800
    assert res["accuracy"] == pytest.approx(np.mean(want == yt), abs=1e-12)
    from sklearn.metrics import log_loss
    assert res["log_loss"] == pytest.approx(log_loss(yt, model.predict_proba(Zt),
                                                     labels=model.classes_), rel=1e-9)
    assert np.trace(res["confusion"]) == round(res["accuracy"] * 800)
    _, out, _ = run("predict", d / "m.npz", d / "test.svm", "--scores")
    np.testing.assert_allclose([float(v) for v in out.split()], model.decision_function(Zt),
                               rtol=1e-5, atol=1e-6)
    # --proba: a line of the classes, then each row's label and probabilities (as LIBSVM's
    # svm-predict -b 1), over chunks
    _, out, _ = run("predict", d / "m.npz", d / "test.svm", "--proba", "--chunk-size", 300)
    lines = out.splitlines()
    assert lines[0] == "labels -1 1" and len(lines) == 801
    rows = np.array([[float(v) for v in ln.split()] for ln in lines[1:]])
    np.testing.assert_array_equal(rows[:, 0], want)
    np.testing.assert_allclose(rows[:, 1:], model.predict_proba(Zt), rtol=1e-5, atol=1e-6)
    code, _, err = run("predict", d / "m.npz", d / "test.svm", "--proba", "--scores",
                       ok=False)
    assert code == 2 and "not allowed with" in err


@pytest.mark.parametrize("source", ["test.csv", "test.svm.gz", "test.data", "-"])
def test_every_source_gives_the_same_predictions(data, source):
    d = data[0]
    _, ref, _ = run("predict", d / "m.npz", d / "test.svm")
    if source == "-":
        _, out, _ = run("predict", d / "m.npz", "-", stdin=(d / "test.svm").read_bytes())
    else:
        _, out, _ = run("predict", d / "m.npz", d / source)
    assert out == ref


def test_no_progress_bar_when_not_a_terminal(data):
    d = data[0]
    _, _, err = run("evaluate", d / "m.npz", d / "test.svm")
    assert "it/s" not in err and "ex/s" not in err and "\r" not in err


def test_standardize_pass_and_none(data, tmp_path):
    d, X, y, Xt, yt = data
    run("train", "perceptron", d / "train.svm", "--standardize", "pass", "--kernel", "rbf",
        "--gamma", GAMMA, "-o", tmp_path / "p.npz", "-q")
    doc = json.loads((tmp_path / "p.npz.scaler.json").read_text())
    np.testing.assert_allclose(doc["mean"], X.mean(axis=0), rtol=1e-10)
    np.testing.assert_allclose(doc["scale"], X.std(axis=0), rtol=1e-10)
    run("train", "pegasos", d / "train.svm", "--standardize", "none", "-o", tmp_path / "q.npz")
    # the sidecar is written without standardisation too: it records that, and the LIBSVM
    # indexing of the training file (one-based here), for the commands that read more data
    doc = json.loads((tmp_path / "q.npz.scaler.json").read_text())
    assert doc["mode"] == "none" and "mean" not in doc and doc["libsvm_zero_based"] is False
    assert isinstance(fastbudget.load(tmp_path / "q.npz"), fastbudget.PegasosClassifier)


def test_multiclass_wraps_one_vs_rest(tmp_path):
    X, y = make_waveform(1500, binary=False, random_state=3)
    write_csv(tmp_path / "w.csv", X, y, header=False)
    _, out, _ = run("train", "random", tmp_path / "w.csv", "--budget", 40, "--param",
                    "random_state=1", "-o", tmp_path / "w.npz")
    model = fastbudget.load(tmp_path / "w.npz")
    assert isinstance(model, fastbudget.OneVsRestClassifier)
    np.testing.assert_array_equal(model.classes_, [0.0, 1.0, 2.0])
    _, out, _ = run("evaluate", tmp_path / "w.npz", tmp_path / "w.csv", "--json")
    acc = json.loads(out)["accuracy"]
    doc = json.loads((tmp_path / "w.npz.scaler.json").read_text())
    Z = (X - np.array(doc["mean"])) / np.array(doc["scale"])
    assert acc == pytest.approx(model.score(Z, y), abs=1e-12)
    assert acc > 0.6     # three balanced classes: chance is 1/3


def test_classes_option_for_a_first_chunk_with_one_label(tmp_path):
    X = np.r_[np.zeros((50, 2)) + [0, 0.5], np.ones((50, 2))]
    X += np.random.default_rng(0).normal(scale=0.1, size=X.shape)
    y = np.r_[-np.ones(50), np.ones(50)]
    write_libsvm(tmp_path / "s.svm", X, y)
    line = error_line("train", "tvm", tmp_path / "s.svm", "--chunk-size", 20,
                      "--standardize", "none", "-o", tmp_path / "s.npz")
    assert "--classes" in line
    run("train", "tvm", tmp_path / "s.svm", "--chunk-size", 20, "--standardize", "none",
        "--classes=-1,1", "-o", tmp_path / "s.npz")
    assert fastbudget.load(tmp_path / "s.npz").n_seen_ == 100


def test_prequential_is_test_then_train(tmp_path):
    out_dir = tmp_path / "pq"
    _, out, _ = run("prequential", "tvm", "gen:checkerboard", "--n", 4000, "--gen-param",
                    "noise=0.1", "--seed", 5, "--budget", 20, "--gamma", GAMMA,
                    "--standardize", "none", "--chunk-size", 500, "--window", 1000,
                    "--out", out_dir, "--no-plot")
    rows = np.loadtxt(out_dir / "prequential.csv", delimiter=",", skiprows=1)
    # reference: the same stream, first half-chunk learned, then predict-before-learn per chunk
    from fastbudget.datasets import stream_chunks
    ref = fastbudget.TVMClassifier(budget=20, gamma=1.35)
    n = correct = 0
    curve = []
    for k, (X, y) in enumerate(stream_chunks("checkerboard", 4000, 500, random_state=5,
                                             noise=0.1)):
        if k == 0:
            ref.partial_fit(X[:250], y[:250], classes=[-1, 1])
            X, y = X[250:], y[250:]
        correct += int(np.sum(ref.predict(X) == y))
        n += len(y)
        ref.partial_fit(X, y)
        curve.append((n, correct / n))
    np.testing.assert_allclose(rows[:, :2], curve, rtol=0, atol=1e-6)
    assert np.all((rows[:, 2] >= 0) & (rows[:, 2] <= 1))
    assert f"{curve[-1][1]:.4f}" in out


def test_demo_small(tmp_path):
    _, out, err = run("demo", "--n", 10000, "--budget", 20, "--exact-n", 400, "--out",
                      tmp_path, cwd=tmp_path)
    assert "compiling (first run only)" in err
    assert "exact SVM on the first 400 examples" in out
    assert "examples/s" in out and "model memory" in out
    accs = [float(v) for v in __import__("re").findall(r"test accuracy\s+([\d.]+) %", out)]
    assert len(accs) == 2 and all(50 < a <= 100 for a in accs)
    assert (tmp_path / "demo_boundary.png").stat().st_size > 10_000


def test_reproduce_quick_table3(tmp_path):
    _, out, _ = run("reproduce", "tvm-table3", "--quick", "--n-max", 600, "--sets",
                    "Gauss,Checkerboard", "--budgets", "20,50", "--out", tmp_path, "-q")
    text = (tmp_path / "tvm_table3_quick.md").read_text()
    assert "report written" in out
    for needle in ("Command: `fastbudget reproduce tvm-table3 --quick", "commit:", "Machine:",
                   "| Gauss |", "| Checkerboard |", "[81.3;", "[91.3;", "600 / 2,000"):
        assert needle in text, needle
    assert "| Adult |" not in text


def test_reproduce_list_and_unknown():
    _, out, _ = run("reproduce", "list")
    for name in ("tvm-table3", "tvm-table4", "tvm-table5", "tvm-figure2", "streamsvm"):
        assert name in out
    assert "tvm-table3" in error_line("reproduce", "tvm-table9")


def test_error_missing_file(data):
    d = data[0]
    assert "no such file" in error_line("train", "tvm", d / "nope.svm")
    assert "no such model file" in error_line("predict", d / "nope.npz", d / "test.svm")


def test_error_unknown_format(data, tmp_path):
    d = data[0]
    assert "unknown format 'xml'" in error_line("train", "tvm", d / "train.svm", "--format", "xml")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    assert "--format" in error_line("train", "tvm", tmp_path / "blob.bin")
    assert "not a usable fastbudget model" in error_line("evaluate", d / "test.csv", d / "test.svm")


def test_error_malformed_row_names_its_line(data, tmp_path):
    lines = (data[0] / "test.svm").read_text().splitlines()
    lines[6] = "1 1:0.5 2:abc"
    (tmp_path / "bad.svm").write_text("\n".join(lines) + "\n")
    line = error_line("evaluate", data[0] / "m.npz", tmp_path / "bad.svm")
    assert "line 7" in line
    (tmp_path / "bad.csv").write_text("1,2,1\n3,4,-1\n5,-1\n")
    assert "line 3" in error_line("train", "tvm", tmp_path / "bad.csv")


def test_error_wrong_feature_count(data, tmp_path):
    d, X, y, Xt, yt = data
    write_csv(tmp_path / "three.csv", np.c_[Xt, Xt[:, :1]], yt)
    line = error_line("evaluate", d / "m.npz", tmp_path / "three.csv")
    assert "3 features" in line and "trained on 2" in line
    write_libsvm(tmp_path / "three.svm", np.c_[Xt, Xt[:, :1]], yt)
    assert "trained on 2" in error_line("predict", d / "m.npz", tmp_path / "three.svm")


def test_error_learner_and_params(data):
    d = data[0]
    assert "unknown learner 'svm'" in error_line("train", "svm", d / "train.svm")
    assert "no parameter 'zz'" in error_line("train", "tvm", d / "train.svm", "--param", "zz=1")
    assert "m1" in error_line("train", "tvm", d / "train.svm", "--param", "m1=abc")
    assert "KEY=VALUE" in error_line("train", "tvm", d / "train.svm", "--param", "m1")
    assert "budget" in error_line("train", "tvm", d / "train.svm", "--budget", "-3")
    assert "--standardize pass" in error_line("train", "tvm", "-", "--standardize", "pass",
                                              stdin=b"1 1:0\n-1 1:1\n")
    assert "unknown generator" in error_line("prequential", "tvm", "gen:spiral")
    # a full exact learner is an expected error with the command-line remedy, not a bug report
    line = error_line("train", "idsvm", d / "train.svm", "--param", "capacity=100")
    assert "--param capacity=N" in line and "please report" not in line


def test_clip_is_applied_in_training_and_saved_with_the_scaler(data, tmp_path):
    """``--clip`` clips the standardised stream the model learns from, and predict applies
    the same clip from the scaler file."""
    d, X, y, Xt, yt = data
    Xo = X.copy()
    Xo[::50, 0] += 1e3                      # far outliers on one attribute
    write_libsvm(tmp_path / "o.svm", Xo, y)
    run("train", "tvm", tmp_path / "o.svm", "--budget", 30, "--gamma", GAMMA, "--standardize",
        "pass", "--clip", 3, "--chunk-size", 700, "-o", tmp_path / "c.npz", "-q")
    doc = json.loads((tmp_path / "c.npz.scaler.json").read_text())
    assert doc["clip"] == 3.0
    Z = np.clip((Xo - np.array(doc["mean"])) / np.array(doc["scale"]), -3, 3)
    assert (np.abs((Xo - np.array(doc["mean"])) / np.array(doc["scale"])) > 3).any()
    ref = fastbudget.TVMClassifier(budget=30, gamma=1.35)
    for i in range(0, len(y), 700):
        ref.partial_fit(Z[i:i + 700], y[i:i + 700], classes=[-1, 1])
    model = fastbudget.load(tmp_path / "c.npz")
    np.testing.assert_array_equal(ref.decision_function(Z[:300]), model.decision_function(Z[:300]))
    _, out, _ = run("predict", tmp_path / "c.npz", tmp_path / "o.svm", "--scores")
    np.testing.assert_allclose([float(v) for v in out.split()], model.decision_function(Z),
                               rtol=1e-5, atol=1e-6)
    assert "--clip" in error_line("train", "tvm", tmp_path / "o.svm", "--standardize", "none",
                                  "--clip", 3, "-o", tmp_path / "e.npz")
    assert "--clip must be a positive" in error_line("train", "tvm", tmp_path / "o.svm",
                                                     "--clip", -1, "-o", tmp_path / "e.npz")


def test_predict_with_a_model_fitted_on_named_columns(tmp_path):
    """A model fitted in Python on a DataFrame and saved: the command line reads the data's
    columns by position; it says so once (a note on stderr) instead of warning per chunk,
    and predicts as the model does on the named table."""
    import pandas as pd
    X, y = make_checkerboard(600, random_state=2)
    names = ["width", "height"]
    model = fastbudget.TVMClassifier(budget=30, gamma=2.0).fit(pd.DataFrame(X, columns=names), y)
    model.save(tmp_path / "named.npz")
    np.savetxt(tmp_path / "x.csv", np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    _, out, err = run("predict", tmp_path / "named.npz", tmp_path / "x.csv", "--chunk-size", 100)
    want = model.predict(pd.DataFrame(X, columns=names))
    np.testing.assert_array_equal(np.array([float(v) for v in out.split()]), want)
    assert err.count("fitted in Python on named columns (width, height)") == 1
    assert "Warning" not in err and "column names" not in err


def test_warmup_command_says_only_what_it_did():
    # the warm-up's tiny fits are not the user's model: the RejectionWarning that a budget-6
    # TVM on 40 points raises ("has stopped learning") used to reach the user twice
    _, out, err = run("warmup")
    assert "warmup done in" in out
    assert "TVMClassifier" in out and "SVIncrementalClassifier" in out
    assert "warning" not in err.lower(), err
    # each line says which compiled variant it is (TVM was listed six times alike)
    names = [ln.rsplit(None, 2)[0] for ln in out.splitlines() if ln.endswith(" s")
             and not ln.startswith("warmup done")]
    assert len(names) == len(set(names)) > 15 and "TVMClassifier(kernel='poly', merge='feature')" in names
