"""Kill test: a process saving in a loop is SIGKILLed at random moments; the file on disk must
always load and be exactly one of the versions that were saved."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from _dummy import DummyBudgetPerceptron
from _helpers import assert_same_state, model_state
from fastbudget.persist import load_model

CHUNK = 40
# large enough that one save takes a few milliseconds, so kills land inside saves
BUDGET, D = 3000, 40

# run with the tests directory as its working directory, so that `python -c` finds _dummy
# there (fastbudget is the installed package)
CHILD = textwrap.dedent("""
    import numpy as np
    from _dummy import DummyBudgetPerceptron
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200000, {d}))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    est = DummyBudgetPerceptron(budget={budget}, gamma=0.05)
    v = 0
    while True:
        est.partial_fit(X[v * {chunk}:(v + 1) * {chunk}], y[v * {chunk}:(v + 1) * {chunk}],
                        classes=[0, 1])
        v += 1
        est.save({path!r})
        print(v, flush=True)
""")


def _version(v, X, y):
    est = DummyBudgetPerceptron(budget=BUDGET, gamma=0.05)
    for i in range(v):
        est.partial_fit(X[i * CHUNK:(i + 1) * CHUNK], y[i * CHUNK:(i + 1) * CHUNK], classes=[0, 1])
    return est


@pytest.mark.parametrize("seed", range(6))
def test_sigkill_during_save_loop_leaves_a_loadable_saved_version(tmp_path, seed):
    path = str(tmp_path / "model.npz")
    code = CHILD.format(d=D, budget=BUDGET, chunk=CHUNK, path=path)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__)))
    try:
        first = proc.stdout.readline()  # at least one complete save exists
        assert first.strip() == "1", first
        time.sleep(np.random.default_rng(seed).uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    done = [int(s) for s in proc.stdout.read().split()] + [1]
    assert proc.returncode == -signal.SIGKILL
    loaded = load_model(path)  # never a damaged file
    v = loaded._n_seen // CHUNK
    # the version on disk is the last reported save, or the one being renamed when killed
    assert max(done) <= v <= max(done) + 1
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200000, D))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    assert_same_state(model_state(loaded), model_state(_version(v, X, y)))
    # leftovers are only our temporary files, never a partial file under the real name
    for name in os.listdir(tmp_path):
        assert name == "model.npz" or (name.startswith(".model.npz.") and name.endswith(".tmp"))
