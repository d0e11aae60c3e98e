"""What the command line writes: outputs checked before any work, ``predict -o`` (never its
input, the whole file or none, '-' for standard output, nothing for an empty input), the
scaler file beside a model (kept out when it was missing, never left without its model) and
checkpoints that fail on a full disk."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fastbudget
from fastbudget.datasets import make_checkerboard

from _cli import ROOT, SCALER_WARNING_IGNORED, error_line, run, write_libsvm
from _cli import small  # noqa: F401 (a fixture)


pytestmark = SCALER_WARNING_IGNORED


def test_output_checked_before_training(tmp_path):
    X, y = make_checkerboard(30, random_state=4)
    write_libsvm(tmp_path / "a.svm", X, y)
    line = error_line("train", "tvm", tmp_path / "a.svm", "-o", tmp_path)
    assert "is a directory; give a file name" in line
    line = error_line("train", "tvm", tmp_path / "a.svm", "-o", tmp_path / "no" / "m.npz")
    assert f"the directory {tmp_path / 'no'} does not exist" in line
    run("train", "tvm", tmp_path / "a.svm", "-o", tmp_path / "m.npz", "-q")
    line = error_line("update", tmp_path / "m.npz", tmp_path / "a.svm", "-o", tmp_path)
    assert "is a directory" in line
    line = error_line("prequential", "tvm", tmp_path / "a.svm", "--no-plot", "--out", tmp_path,
                      "--save", tmp_path / "no" / "m.npz")
    assert "does not exist" in line


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


@pytest.mark.parametrize("values,classes", [
    (np.array([-1.0, 1.0, 1.0, -1.0]), np.array([-1.0, 1.0])),
    (np.array([0, 2, 1, 2]), np.array([0, 1, 2])),
    (np.array(["dog", "T", "cat"]), np.array(["T", "cat", "dog"])),
    (np.array([-0.0, 0.0, 2.5, 3.0]), np.array([0.0, 2.5, 3.0])),
    (np.array([1.0, 7.0, np.nan]), np.array([1.0, 7.0])),      # a label that is no class
    (np.array([5.0, 9.0]), np.array(["a", "b"])),              # classes of another kind
    (np.array([2.0, 1.0]), None),
    (np.zeros(0), np.array([0.0, 1.0])),
])
def test_predict_lines_are_each_label_formatted(values, classes):
    """``predict``'s lines of a block, built from each distinct label formatted once, are the
    label-by-label formatting (``labels_fmt``) of every row, whatever the classes given."""
    from fastbudget.cli.values import labels_fmt, rows_text
    assert rows_text(values, classes=classes) == "\n".join(labels_fmt(v) for v in values)


@pytest.mark.parametrize("scores", [
    np.array([0.123456789, -1e-9, 3e20, -0.0, np.inf, -np.inf, np.nan, 5e-324]),
    np.random.default_rng(0).normal(size=(7, 3)),
])
def test_predict_score_lines_are_each_value_formatted(scores):
    """``predict --scores``: one line per row, its values as ``%.6g`` separated by spaces."""
    from fastbudget.cli.values import rows_text
    expected = "\n".join(" ".join(f"{v:.6g}" for v in np.atleast_1d(r)) for r in scores)
    assert rows_text(scores, scores=True) == expected
