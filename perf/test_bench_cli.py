"""``fastbudget predict`` on a LIBSVM file of 10^6 rows, run in this process: what the command
adds to the library's own work.

``library_ratio`` = the command's best round over the least time of what it cannot avoid, timed
in the same run: the file read by ``fastbudget.datasets.read_libsvm`` (the command's reader,
chunks of 10,000 rows) and its rows scored by the serving predictor the command loads
(``fastbudget.serving``). ``floor_ratio``: the command over the suite's compiled floor. Until
2026-11-27 the command formatted every label in a Python generator (0.5 us per row, as long as
reading and scoring together); each distinct label is now formatted once
(``fastbudget.cli.values.rows_text``).
"""
import numpy as np

from _bench import CB_GAMMA, best_seconds, checkerboard, floor_seconds, record
import fastbudget as fb
from fastbudget.cli.main import main
from fastbudget.datasets import read_libsvm
from fastbudget.serving import load_predictor

N_ROWS = 10**6


def _write_libsvm(path, X, y):
    lines = np.char.add(np.char.add(np.char.add(np.where(y > 0, "+1", "-1"), " 1:"),
                                    np.char.mod("%.6f", X[:, 0])),
                        np.char.add(" 2:", np.char.mod("%.6f", X[:, 1])))
    path.write_text("\n".join(lines.tolist()) + "\n")


def test_cli_predict(benchmark, tmp_path):
    X, y, Xt, yt = checkerboard(30_000)
    model = fb.TVMClassifier(budget=100, gamma=CB_GAMMA).fit(X, y)
    mpath, data, out = tmp_path / "m.npz", tmp_path / "rows.svm", tmp_path / "labels.txt"
    model.save(mpath)
    Xs, ys, _, _ = checkerboard(N_ROWS, seed=5)
    _write_libsvm(data, Xs, ys)
    argv = ["predict", str(mpath), str(data), "-q", "-o", str(out)]
    rc = benchmark.pedantic(main, args=(argv,), rounds=3, iterations=1)
    assert rc == 0
    pred = load_predictor(str(mpath))

    def library():
        for Xc, _y in read_libsvm(str(data), n_features=2, chunk_size=10_000):
            pred.predict(Xc)
    lib = best_seconds(library, 3)
    rows = np.concatenate([Xc for Xc, _y in read_libsvm(str(data), n_features=2)])
    labels = np.loadtxt(out)
    assert labels.shape == (N_ROWS,)
    assert np.array_equal(labels, pred.predict(rows))
    acc = float(np.mean(labels == ys))
    ratio = benchmark.stats.stats.min / lib
    record(benchmark, floor_seconds(model, rows), library_ratio=ratio, library_s=lib,
           accuracy=acc)
    # the command reads, scores and writes: about 1.1-1.2 x the library's read and score
    # (1.7 before its labels were formatted once per distinct label)
    assert ratio <= 1.5, f"fastbudget predict / (read + score) = {ratio:.2f}"
