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
