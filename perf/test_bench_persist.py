"""save / load of a fitted model (npz + JSON, docs/format.md), TVM B = 100 and IncrementalSVC
with 1,000 examples.

Floor: ``numpy.savez`` / ``numpy.load`` of the same arrays (what any npz format costs);
``floor_ratio`` is fastbudget's time over it (validation, metadata, atomic write). The loaded
model must predict exactly as the saved one. Each round times 10 calls (a call takes a few
milliseconds).
"""
import numpy as np
import pytest

from _bench import CB_GAMMA, best_seconds, checkerboard, gauss, record
import fastbudget as fb


def _models():
    X, y, Xt, _ = checkerboard(30_000)
    tvm = fb.TVMClassifier(budget=100, gamma=CB_GAMMA).fit(X, y)
    Xg, yg, Xgt, _ = gauss(1000)
    svc = fb.IncrementalSVC(C=100.0, gamma=0.5, capacity=1000).fit(Xg, yg)
    return {"tvm": (tvm, Xt), "idsvm": (svc, Xgt)}


@pytest.fixture(scope="module")
def models():
    return _models()


def _arrays(path):
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize("name", ["tvm", "idsvm"])
def test_save(benchmark, models, tmp_path, name):
    clf, Xt = models[name]
    path = tmp_path / "m.npz"
    benchmark.pedantic(clf.save, args=(path,), rounds=5, iterations=10)
    arrays = _arrays(path)
    raw = tmp_path / "raw.npz"
    fl = best_seconds(lambda: np.savez(raw, **arrays), 5)
    back = fb.load(path)
    assert np.array_equal(back.decision_function(Xt), clf.decision_function(Xt))
    record(benchmark, fl, bytes=path.stat().st_size, accuracy=1.0)


@pytest.mark.quick
@pytest.mark.parametrize("name", ["tvm", "idsvm"])
def test_load(benchmark, models, tmp_path, name):
    clf, Xt = models[name]
    path = tmp_path / "m.npz"
    clf.save(path)
    back = benchmark.pedantic(fb.load, args=(path,), rounds=10, iterations=10)
    fl = best_seconds(lambda: _arrays(path), 10)
    assert np.array_equal(back.decision_function(Xt), clf.decision_function(Xt))
    record(benchmark, fl, bytes=path.stat().st_size, accuracy=1.0)
