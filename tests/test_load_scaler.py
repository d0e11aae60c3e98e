"""A model trained by the command line, used from Python.

``fastbudget train`` standardises its input (``--standardize warmup`` by default) and saves the
statistics beside the model (``<model>.scaler.json``); ``fastbudget predict`` applies them.
From Python, ``fastbudget.load`` used to give the model alone, with nothing public to apply
the scaler file and nothing said: predictions on raw rows were silently wrong. Now ``load``
warns and ``fastbudget.load_scaler`` returns the standardiser.
"""
import json
import os
import pathlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

import fastbudget
from fastbudget import cli
from fastbudget.cli.files import load_model as cli_load_model
from fastbudget.datasets import StreamingStandardizer, make_checkerboard

ROOT = pathlib.Path(__file__).resolve().parents[1]


def train(tmp_path, name, *extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    X, y = make_checkerboard(3000, random_state=3)
    X = X * 50.0 + 1000.0                       # far from standardised
    data = tmp_path / f"{name}.csv"
    with open(data, "w") as f:
        for row, lab in zip(X, y):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{lab:g}\n")
    model = tmp_path / f"{name}.npz"
    r = subprocess.run([sys.executable, "-m", "fastbudget.cli", "train", "tvm", str(data), "-o",
                        str(model), "--gamma", "1.35", "--quiet", *extra],
                       capture_output=True, cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    return model, data, X, y


def cli_predictions(model, data):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "fastbudget.cli", "predict", str(model),
                        str(data)], capture_output=True, cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    return np.array([float(v) for v in r.stdout.decode().split()])


def test_a_cli_model_warns_on_load_and_load_scaler_gives_the_cli_predictions(tmp_path):
    model, data, X, y = train(tmp_path, "m")
    with pytest.warns(UserWarning, match=r"standardised rows.*fastbudget\.load_scaler"):
        clf = fastbudget.load(model)
    scaler = fastbudget.load_scaler(model)
    assert isinstance(scaler, StreamingStandardizer) and scaler.frozen_
    doc = json.loads((tmp_path / "m.npz.scaler.json").read_text())
    np.testing.assert_array_equal(scaler.mean_, doc["mean"])
    np.testing.assert_array_equal(scaler.scale_, doc["scale"])
    ours = clf.predict(scaler.transform(X))
    np.testing.assert_array_equal(ours, cli_predictions(model, data))
    # on raw rows the same model is far off: what the warning is about
    assert clf.score(scaler.transform(X), y) > clf.score(X, y) + 0.2
    # the estimator's own load warns too; the command line's does not (it applies the file)
    with pytest.warns(UserWarning, match="load_scaler"):
        type(clf).load(model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m2, sc2 = cli_load_model(str(model))
    np.testing.assert_array_equal(m2.predict(sc2(X)), ours)


def test_clip_is_kept(tmp_path):
    model, _, X, _ = train(tmp_path, "c", "--clip", "0.5")
    scaler = fastbudget.load_scaler(model)
    assert scaler.clip == 0.5
    Z = scaler.transform(X)
    assert Z.max() == 0.5 and Z.min() == -0.5


def test_no_standardisation_no_warning(tmp_path):
    model, _, X, _ = train(tmp_path, "n", "--standardize", "none")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fastbudget.load(model)
    assert fastbudget.load_scaler(model) is None


def test_a_python_model_has_no_scaler_file(tmp_path):
    X, y = make_checkerboard(300, random_state=0)
    path = tmp_path / "p.npz"
    fastbudget.TVMClassifier(budget=10, rejection=None).fit(X, y).save(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fastbudget.load(path)
    with pytest.raises(FileNotFoundError, match="p.npz.scaler.json.*copy it with the model"):
        fastbudget.load_scaler(path)


@pytest.mark.parametrize("text, msg", [
    ("{not json", "cannot read the scaler file"),
    ('{"mean": [0.0, 1.0], "scale": [1.0]}', "is inconsistent"),
    ('{"mean": [0.0], "scale": [-1.0]}', "is inconsistent"),
    ('{"mean": [0.0], "scale": [1.0], "clip": 0}', "is inconsistent"),
    ('[1, 2]', "cannot read the scaler file"),
])
def test_a_damaged_scaler_file(tmp_path, text, msg):
    """``load`` still loads the model (the command line reports the file); ``load_scaler``
    and the command line refuse it, with the same message."""
    X, y = make_checkerboard(300, random_state=0)
    path = tmp_path / "d.npz"
    fastbudget.TVMClassifier(budget=10, rejection=None).fit(X, y).save(path)
    (tmp_path / "d.npz.scaler.json").write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fastbudget.load(path)
    with pytest.raises(fastbudget.ModelFormatError, match=msg):
        fastbudget.load_scaler(path)
    with pytest.raises(cli.CLIError, match=msg):
        cli_load_model(str(path))
