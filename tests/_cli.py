"""Helpers of the command-line tests (``tests/test_cli*.py``, ``tests/test_reproduce.py``):
run ``fastbudget`` in a child process, read its one error line, write data files, and drive a
long-running child (a live feed on standard input, signals).

Test modules import these from here, never from one another.
"""
import os
import pathlib
import subprocess
import sys
import time

import pytest

import fastbudget

ROOT = pathlib.Path(__file__).resolve().parents[1]
GAMMA = "1.35"


def run(*args, stdin=None, ok=True, cwd=None):
    """Run ``python -m fastbudget.cli ARGS``; (exit status, stdout, stderr). With ``ok`` the
    status must be 0."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("FASTBUDGET_DEBUG", None)
    r = subprocess.run([sys.executable, "-m", "fastbudget.cli", *map(str, args)],
                       input=stdin, capture_output=True, cwd=cwd or ROOT, env=env, timeout=300)
    out, err = r.stdout.decode(), r.stderr.decode()
    if ok:
        assert r.returncode == 0, err
    return r.returncode, out, err


def error_line(*args, stdin=None):
    """The one line ``fastbudget: error: ...`` of a command that must fail with status 2 and
    no traceback."""
    code, out, err = run(*args, stdin=stdin, ok=False)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("fastbudget: error: ")
    return lines[0]


def write_libsvm(path, X, y):
    with open(path, "w") as f:
        for row, lab in zip(X, y):
            f.write(f"{lab:g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row)) + "\n")


def write_csv(path, X, y, header=True):
    with open(path, "w") as f:
        if header:
            f.write(",".join(f"x{j}" for j in range(X.shape[1])) + ",label\n")
        for row, lab in zip(X, y):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{lab:g}\n")


def write_rows(path, X, y, header="x0,x1,label", label_first=False):
    """A CSV file with the given ``header`` line (None: none), the label last or first."""
    with open(path, "w") as f:
        if header:
            f.write(header + "\n")
        for row, lab in zip(X, y):
            vals = [f"{v:.17g}" for v in row]
            lab = f"{lab:g}"
            f.write(",".join([lab] + vals if label_first else vals + [lab]) + "\n")


def libsvm_bytes(X, y):
    return "".join(f"{lab:g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row)) + "\n"
                   for row, lab in zip(X, y)).encode()


def spawn(*args):
    """``python -m fastbudget.cli ARGS`` as a child with pipes for its standard streams."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("FASTBUDGET_DEBUG", None)
    return subprocess.Popen([sys.executable, "-m", "fastbudget.cli", *map(str, args)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, env=env)


def wait_for(cond, proc, seconds=240):
    """Wait until ``cond()``; fail when the child ends first or after ``seconds``."""
    t = time.monotonic()
    while time.monotonic() - t < seconds:
        if cond():
            return
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the command ended early ({proc.returncode}): {out!r} {err!r}")
        time.sleep(0.1)
    proc.kill()
    pytest.fail("timed out")


def stop_with(proc, sig, delay=0.5):
    """Send ``sig`` after ``delay`` seconds; the child's (stdout, stderr)."""
    try:
        time.sleep(delay)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return out.decode(), err.decode()


def n_seen(path):
    """``n_seen_`` of the model saved at ``path`` (-1 while it cannot be read)."""
    try:
        return fastbudget.load(path).n_seen_
    except (OSError, fastbudget.ModelFormatError):
        return -1


def train_small(d):
    """A perceptron trained by the command line on a 300-row CSV ``d/a.csv`` (header
    x0,x1,label) without standardisation, saved as ``d/m.npz``; (d, X, y)."""
    from fastbudget.datasets import make_checkerboard
    X, y = make_checkerboard(300, noise=0.0, random_state=4)
    write_rows(d / "a.csv", X, y)
    run("train", "perceptron", d / "a.csv", "-o", d / "m.npz", "--standardize", "none", "-q")
    return d, X, y


# the CLI tests load models the command line trained and check them in-process, on rows they
# standardise themselves; load's warning to do so is tested in test_load_scaler.py
SCALER_WARNING_IGNORED = pytest.mark.filterwarnings(
    "ignore:.*trained by the command line on standardised rows:UserWarning")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A perceptron trained on a 300-row CSV (header x0,x1,label), not standardised
    (:func:`train_small`); a fixture for the modules that import it."""
    return train_small(tmp_path_factory.mktemp("small"))
