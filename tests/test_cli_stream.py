"""The command line on long and endless streams: ``update`` continues a saved model,
``--checkpoint-every`` saves during the stream, standard input is learned as rows arrive, and
SIGINT/SIGTERM end a stream with the model of its last complete chunk saved.

The live-feed tests keep the child's standard input open (a pipe that is written to but not
closed), so the child can only get past a chunk if the reader returns the rows that have
arrived, and only stop if the signal interrupts a read that is waiting for more.
"""
import json
import signal

import numpy as np
import pytest

import fastbudget
from fastbudget.cli.commands.prequential import _Curve
from fastbudget.datasets import make_checkerboard

from _cli import (GAMMA, SCALER_WARNING_IGNORED, error_line, libsvm_bytes, n_seen, run,
                  spawn, stop_with, wait_for, write_libsvm)

pytestmark = SCALER_WARNING_IGNORED

@pytest.fixture(scope="module")
def stream():
    X, y = make_checkerboard(2000, noise=0.1, random_state=5)
    return X, y


def test_update_continues_the_saved_model_through_its_scaler(stream, tmp_path):
    X, y = stream
    write_libsvm(tmp_path / "a.svm", X[:1200], y[:1200])
    write_libsvm(tmp_path / "b.svm", X[1200:], y[1200:])
    run("train", "tvm", tmp_path / "a.svm", "--budget", 30, "--gamma", GAMMA,
        "--warmup-rows", 500, "--chunk-size", 400, "-o", tmp_path / "a.npz", "-q")
    _, out, _ = run("update", tmp_path / "a.npz", tmp_path / "b.svm", "--chunk-size", 300,
                    "-o", tmp_path / "ab.npz", "-q")
    assert "800 examples" in out and "seen before: 1,200" in out
    # the scaler of the first run is the one applied and saved again (not re-estimated)
    doc = json.loads((tmp_path / "a.npz.scaler.json").read_text())
    assert json.loads((tmp_path / "ab.npz.scaler.json").read_text()) == doc
    mean, scale = np.array(doc["mean"]), np.array(doc["scale"])
    np.testing.assert_allclose(mean, X[:500].mean(axis=0), rtol=1e-12)
    # in-process: the saved first model, then the second file in the same chunks
    ref = fastbudget.load(tmp_path / "a.npz")
    Z = (X[1200:] - mean) / scale
    for i in range(0, 800, 300):
        ref.partial_fit(Z[i:i + 300], y[1200 + i:1500 + i])
    got = fastbudget.load(tmp_path / "ab.npz")
    assert got.n_seen_ == 2000
    Zt = (X[:300] - mean) / scale
    np.testing.assert_array_equal(got.decision_function(Zt), ref.decision_function(Zt))
    # without -o the model file itself is replaced
    before = (tmp_path / "a.npz").read_bytes()
    run("update", tmp_path / "a.npz", tmp_path / "b.svm", "--chunk-size", 300, "-q")
    assert (tmp_path / "a.npz").read_bytes() != before
    assert fastbudget.load(tmp_path / "a.npz").n_seen_ == 2000


def small_model(tmp_path, X, y):
    """``a.npz``, trained on ``a.svm`` (the first 600 rows); returns the model file's bytes."""
    write_libsvm(tmp_path / "a.svm", X[:600], y[:600])
    run("train", "tvm", tmp_path / "a.svm", "--budget", 20, "--gamma", GAMMA,
        "-o", tmp_path / "a.npz", "-q")
    return (tmp_path / "a.npz").read_bytes()


def test_update_errors_leave_the_model_file_as_it_was(stream, tmp_path):
    X, y = stream
    before = small_model(tmp_path, X, y)
    (tmp_path / "bad.svm").write_text("1 1:0.5 2:0.5\n7 1:0.1 2:0.2\n")
    line = error_line("update", tmp_path / "a.npz", tmp_path / "bad.svm")
    assert "7" in line
    (tmp_path / "empty.svm").write_text("")
    line = error_line("update", tmp_path / "a.npz", tmp_path / "empty.svm")
    assert "no rows" in line or "empty" in line
    line = error_line("update", tmp_path / "a.npz", tmp_path / "a.svm", "--checkpoint-every", 0)
    assert "--checkpoint-every" in line
    line = error_line("update", tmp_path / "missing.npz", tmp_path / "a.svm")
    assert "missing.npz" in line
    assert (tmp_path / "a.npz").read_bytes() == before


def test_checkpoints_during_a_file_stream(stream, tmp_path):
    X, y = stream
    write_libsvm(tmp_path / "a.svm", X, y)
    _, out, _ = run("train", "tvm", tmp_path / "a.svm", "--budget", 30, "--gamma", GAMMA,
                    "--chunk-size", 250, "--checkpoint-every", 600, "-o", tmp_path / "m.npz",
                    "-q")
    # saves after rows 750, 1250 and 2000: the chunks that reach 600, 1200 and 1800 rows
    # (checkpoints ROWS apart on average; restarting the count at each save made them
    # every 750 rows here, at 750 and 1500)
    assert "3 checkpoints" in out
    plain = tmp_path / "plain.npz"
    run("train", "tvm", tmp_path / "a.svm", "--budget", 30, "--gamma", GAMMA,
        "--chunk-size", 250, "-o", plain, "-q")
    # checkpointing does not change what is learned
    a, b = fastbudget.load(tmp_path / "m.npz"), fastbudget.load(plain)
    np.testing.assert_array_equal(a.decision_function(X[:200]), b.decision_function(X[:200]))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_live_stdin_is_learned_as_it_arrives_and_a_signal_saves_it(stream, tmp_path, sig):
    X, y = stream
    out = tmp_path / "live.npz"
    proc = spawn("train", "tvm", "-", "--budget", 30, "--gamma", GAMMA, "--standardize", "none",
                 "--chunk-size", 100, "--checkpoint-every", 500, "-o", out, "-q")
    # 1,000 rows written (and the pipe left open): the checkpoint after the tenth chunk
    # holds all of them, which needs a reader that does not wait for a full block
    proc.stdin.write(libsvm_bytes(X[:1000], y[:1000]))
    proc.stdin.flush()
    wait_for(lambda: n_seen(out) == 1000, proc)
    # 50 more rows: less than a chunk, so the child waits in a read when the signal comes
    proc.stdin.write(libsvm_bytes(X[1000:1050], y[1000:1050]))
    proc.stdin.flush()
    stdout, stderr = stop_with(proc, sig)
    assert proc.returncode == 0, stderr
    assert f"stopped by {sig.name}" in stderr
    assert "1,000 examples" in stdout
    got = fastbudget.load(out)
    assert got.n_seen_ == 1000              # the unfinished chunk is not learned
    ref = fastbudget.TVMClassifier(budget=30, gamma=1.35)
    for i in range(0, 1000, 100):
        ref.partial_fit(X[i:i + 100], y[i:i + 100], classes=[-1, 1])
    np.testing.assert_array_equal(got.decision_function(X[:200]), ref.decision_function(X[:200]))


def test_update_stopped_before_a_chunk_saves_nothing(stream, tmp_path):
    X, y = stream
    before = small_model(tmp_path, X, y)
    proc = spawn("update", tmp_path / "a.npz", "-", "--format", "libsvm", "--chunk-size", 100)
    proc.stdin.write(libsvm_bytes(X[600:650], y[600:650]))    # half a chunk
    proc.stdin.flush()
    # the handlers are in place once the model is loaded and the stream opened; until
    # then SIGTERM would end the child unhandled (status -15), which also saves nothing
    _, stderr = stop_with(proc, signal.SIGTERM, delay=8)
    assert proc.returncode in (143, -signal.SIGTERM), stderr
    assert (tmp_path / "a.npz").read_bytes() == before


def test_sigterm_while_waiting_for_the_first_line_ends_with_one_line(tmp_path):
    """SIGTERM while the command still waits for its stream's first line (before the
    stream's own handlers): one line and status 143, as Ctrl-C gives 'interrupted' and 130,
    rather than death by the signal (which skips the clean-up of a write under way)."""
    proc = spawn("train", "tvm", "-", "-o", tmp_path / "m.npz")
    _, stderr = stop_with(proc, signal.SIGTERM, delay=8)
    assert proc.returncode == 143, stderr
    assert stderr.strip().splitlines() == ["fastbudget: stopped by SIGTERM"]
    assert list(tmp_path.iterdir()) == []


def test_prequential_stopped_by_a_signal_reports_and_saves(stream, tmp_path):
    X, y = stream
    outdir = tmp_path / "pq"
    proc = spawn("prequential", "tvm", "-", "--budget", 30, "--gamma", GAMMA, "--standardize",
                 "none", "--chunk-size", 100, "--out", outdir, "--no-plot", "--save",
                 tmp_path / "p.npz", "-q")
    proc.stdin.write(libsvm_bytes(X[:1000], y[:1000]))
    proc.stdin.flush()
    csv = outdir / "prequential.csv"
    # the curve is written as it grows: 950 tested rows (the first 50 are learned first)
    wait_for(lambda: csv.exists() and csv.read_text().count("\n") == 11, proc)
    stdout, stderr = stop_with(proc, signal.SIGINT, delay=0)
    assert proc.returncode == 0, stderr
    assert "950 tested examples" in stdout
    rows = np.loadtxt(outdir / "prequential.csv", delimiter=",", skiprows=1)
    assert rows.shape == (10, 3) and rows[-1, 0] == 950
    assert fastbudget.load(tmp_path / "p.npz").n_seen_ == 1000


def test_curve_thinning_keeps_constant_memory():
    c = _Curve(cap=50)
    for k in range(1, 100_001):
        c.add((k, 1.0 / k, 0.5))
    rows = c.rows
    assert len(rows) <= 2 * 50 + 1
    xs = np.array([r[0] for r in rows])
    assert xs[0] == 1 and xs[-1] == 100_000
    steps = np.diff(xs[:-1])
    assert np.all(steps == steps[0])         # evenly thinned
    small = _Curve(cap=50)
    for k in range(30):
        small.add((k, 0.0, 0.0))
    assert [r[0] for r in small.rows] == list(range(30))
