"""BSGD against BudgetedSVM's C++ BSGD (the peer of issue #25) on the same 100k noisy board.

Run with ``-m peer`` and ``BUDGETEDSVM_BIN`` naming the directory that holds
``budgetedsvm-train`` and ``budgetedsvm-predict`` (built from the BudgetedSVM toolbox's
sources with its ``make``; nothing of it ships with fastbudget)::

    BUDGETEDSVM_BIN=/path/to/BudgetedSVM/bin python -m pytest perf/test_bench_peer.py \\
        --benchmark-only -m peer

Both learn the standardised 100,000-example N-Checkerboard (15 % flipped labels) in one pass,
in the stream's order (``-r 0``), B = 100, merging, lambda = 1e-4, the suite's gamma, and are
scored on the 5,000 clean test points. The peer's CPU seconds are its process's
(``RUSAGE_CHILDREN``), ours ``time.process_time``; ``peer_ratio`` is ours over the peer's
(issue #25: BSGD merging at least 50 times faster, ``peer_ratio <= 0.02``, at no lower
accuracy). The peer runs without a bias term (``-b 0``), as the BSGD of the paper and ours.
"""
import os
import resource
import subprocess

import numpy as np
import pytest

from _bench import CB_GAMMA, checkerboard
import fastbudget as fb

pytestmark = pytest.mark.peer


def _write_svm(path, X, y):
    with open(path, "w") as fh:
        for xi, yi in zip(X, y):
            fh.write(f"{int(yi)} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(xi))
                     + "\n")


def _children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _bsgd():
    return fb.BSGDClassifier(budget=100, gamma=CB_GAMMA, lambda_=1e-4, maintenance="merging")


def test_bsgd_against_budgetedsvm(benchmark, tmp_path):
    bindir = os.environ.get("BUDGETEDSVM_BIN")
    train_bin = os.path.join(bindir or "", "budgetedsvm-train")
    if not bindir or not os.access(train_bin, os.X_OK):
        pytest.fail("set BUDGETEDSVM_BIN to the directory of a built budgetedsvm-train and "
                    "budgetedsvm-predict (this module's docstring says how)")
    X, y, Xt, yt = checkerboard(100_000)
    _bsgd().partial_fit(X[:200], y[:200], classes=[-1, 1])     # compile outside the timing
    model = benchmark.pedantic(lambda: _bsgd().fit(X, y), rounds=3, iterations=1)
    ours_acc = model.score(Xt, yt)
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    _write_svm(train, X, y)
    _write_svm(test, Xt, yt)
    c0 = _children_cpu()
    subprocess.run([train_bin, "-A", "4", "-B", "100", "-m", "1", "-L", "0.0001",
                    "-g", repr(CB_GAMMA), "-e", "1", "-r", "0", "-b", "0", "-D", str(X.shape[1]),
                    str(train), str(tmp_path / "model.txt")], check=True, capture_output=True)
    peer_s = _children_cpu() - c0
    subprocess.run([os.path.join(bindir, "budgetedsvm-predict"), str(test),
                    str(tmp_path / "model.txt"), str(tmp_path / "pred.txt")],
                   check=True, capture_output=True)
    peer_acc = float(np.mean(np.loadtxt(tmp_path / "pred.txt", usecols=0) == yt))
    ratio = benchmark.stats.stats.min / peer_s
    benchmark.extra_info.update(peer_s=peer_s, peer_ratio=ratio, accuracy=ours_acc,
                                peer_accuracy=peer_acc)
    assert ours_acc >= peer_acc, (ours_acc, peer_acc)
    assert ratio <= 1 / 50, f"BSGD / BudgetedSVM = {ratio:.4f} (goal <= 0.02)"
