"""Concurrent writers of one model file (issue 30, item 1).

``fastbudget update`` (and ``train -o``, with its checkpoints) hold an exclusive lock on the
model (``fcntl.flock`` on ``MODEL.lock``, ``fastbudget.persist.model_lock``) from loading it
to the rename of the saved file: two updates started together give the model updated by
both (in one order or the other), never one of the two lost. A second writer waits and says
so; with ``--no-wait`` it refuses. Everything runs as real processes.
"""
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

import fastbudget
from fastbudget.datasets import make_checkerboard
from fastbudget.persist import ModelLockedError, model_lock

pytestmark = pytest.mark.filterwarnings(
    "ignore:.*trained by the command line on standardised rows:UserWarning")

ROOT = pathlib.Path(__file__).resolve().parents[1]
LEARN = ("--chunk-size", "100", "--param", "capacity=1200", "--gamma", "1.35")


def _env():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("FASTBUDGET_DEBUG", None)
    return env


def start(*args):
    return subprocess.Popen([sys.executable, "-m", "fastbudget.cli", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT,
                            env=_env())


def finish(p, timeout=300):
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out.decode(), err.decode()


def run(*args):
    code, out, err = finish(start(*args))
    assert code == 0, err
    return out, err


def write_csv(path, X, y):
    with open(path, "w") as f:
        f.write(",".join(f"x{j}" for j in range(X.shape[1])) + ",label\n")
        for row, lab in zip(X, y):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{lab:g}\n")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("lock")
    for name, seed in (("train", 1), ("a", 2), ("b", 3)):
        X, y = make_checkerboard(300, noise=0.1, random_state=seed)
        write_csv(d / f"{name}.csv", X, y)
    run("train", "svincremental", d / "train.csv", *LEARN, "--warmup-rows", "200",
        "-o", d / "base.npz")
    # the two sequential orders, for reference
    for first, second in (("a", "b"), ("b", "a")):
        out = d / f"seq_{first}{second}.npz"
        run("update", d / "base.npz", d / f"{first}.csv", "--chunk-size", "100", "-o", out)
        run("update", out, d / f"{second}.csv", "--chunk-size", "100")
    return d


def _copy_model(d, name):
    for suffix in ("", ".scaler.json"):
        (d / (name + suffix)).write_bytes((d / ("base.npz" + suffix)).read_bytes())
    return d / name


def _same(m1, m2):
    s1, s2 = m1._get_state(), m2._get_state()
    if set(s1) != set(s2):
        return False
    for k in s1:
        a, b = s1[k], s2[k]
        if isinstance(a, np.ndarray):
            if not (a.dtype == b.dtype and a.shape == b.shape
                    and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")):
                return False
        elif a != b:
            return False
    return True


@pytest.mark.parametrize("attempt", range(3))
def test_two_concurrent_updates_both_count(files, attempt):
    """Two ``update`` processes started together on one model: both exit 0, and the saved
    model is the one a sequential run gives in one of the two orders (n_seen_ counts the
    rows of both); without the lock one of the two updates used to be lost (9 of 10 runs)."""
    d = files
    model = _copy_model(d, f"m{attempt}.npz")
    p1 = start("update", model, d / "a.csv", "--chunk-size", "100")
    p2 = start("update", model, d / "b.csv", "--chunk-size", "100")
    (c1, o1, e1), (c2, o2, e2) = finish(p1), finish(p2)
    assert c1 == 0 and c2 == 0, (e1, e2)
    base = fastbudget.load(d / "base.npz")
    got = fastbudget.load(model)
    assert got.n_seen_ == base.n_seen_ + 600
    seq = [fastbudget.load(d / f"seq_{o}.npz") for o in ("ab", "ba")]
    assert seq[0].n_seen_ == seq[1].n_seen_ == got.n_seen_
    assert not _same(seq[0], seq[1])     # the two orders differ: the check tells them apart
    assert _same(got, seq[0]) or _same(got, seq[1])
    assert not os.path.exists(str(model) + ".lock")   # removed by its last holder


def test_a_second_writer_waits_for_the_lock_and_says_whose_it_is(files):
    """While this process holds the lock, an update waits (naming this process) and does not
    touch the file; released, it runs and saves."""
    d = files
    model = _copy_model(d, "wait.npz")
    before = model.read_bytes()
    with model_lock(model):
        assert (d / "wait.npz.lock").read_text().strip() == str(os.getpid())
        p = start("update", model, d / "a.csv", "--chunk-size", "100")
        err = b""
        deadline = time.monotonic() + 120
        while b"waiting" not in err and time.monotonic() < deadline:
            line = p.stderr.readline()
            if not line:
                break
            err += line
        assert f"waiting for process {os.getpid()} to finish writing".encode() in err, err
        assert b"--no-wait" in err
        time.sleep(0.5)
        assert p.poll() is None                  # still waiting
        assert model.read_bytes() == before
    code, out, rest = finish(p)
    assert code == 0, rest
    assert "updated SVIncrementalClassifier" in out
    assert fastbudget.load(model).n_seen_ == fastbudget.load(d / "base.npz").n_seen_ + 300


@pytest.mark.parametrize("command", ["update", "train", "prequential"])
def test_no_wait_refuses_while_another_process_writes(files, command, tmp_path):
    d = files
    model = _copy_model(d, f"nowait_{command}.npz")
    before = model.read_bytes()
    with model_lock(model):
        if command == "update":
            args = ("update", model, d / "a.csv", "--no-wait")
        elif command == "prequential":      # --model M --save M: a read-modify-write of M
            args = ("prequential", "svincremental", d / "a.csv", "--model", model,
                    "--save", model, "--no-plot", "--out", tmp_path / "pq", "--no-wait")
        else:
            args = ("train", "svincremental", d / "a.csv", *LEARN, "-o", model, "--no-wait")
        code, out, err = finish(start(*args))
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("fastbudget: error: ")
    assert f"is locked by another process (pid {os.getpid()})" in lines[0]
    assert "--no-wait" in lines[0]
    assert model.read_bytes() == before


def test_model_lock_in_python(tmp_path):
    """The context manager the command line uses: exclusive between processes, wait=False
    refuses, the lock file is removed on release (also after an exception)."""
    path = tmp_path / "m.npz"
    code = ("import sys; from fastbudget.persist import model_lock, ModelLockedError\n"
            "try:\n"
            "    with model_lock(sys.argv[1], wait=False):\n"
            "        print('got')\n"
            "except ModelLockedError as e:\n"
            "    print('locked:', e)\n")
    with model_lock(path):
        r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                           env=_env(), timeout=120)
        assert r.stdout.decode().startswith("locked:"), r.stderr
        assert f"pid {os.getpid()}" in r.stdout.decode()
        with pytest.raises(ModelLockedError):   # flock: a second open file, also in-process
            with model_lock(path, wait=False):
                pass
    assert not (tmp_path / "m.npz.lock").exists()
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                       env=_env(), timeout=120)
    assert r.stdout.decode().strip() == "got", r.stderr
    with pytest.raises(RuntimeError, match="boom"):
        with model_lock(path):
            raise RuntimeError("boom")
    assert not (tmp_path / "m.npz.lock").exists()
    with model_lock(path, wait=False):            # free again
        pass
