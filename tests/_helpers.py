"""Small helpers shared by the infrastructure tests."""
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def perf_script(name):
    """The script ``perf/NAME.py`` imported as a module (perf/ is not a package), for tests
    of the experiments' own helpers."""
    spec = importlib.util.spec_from_file_location(f"_perf_{name}", ROOT / "perf" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_with_nrt_stats(code, timeout=600):
    """Run the Python source ``code`` in a fresh interpreter from the repository's root
    with Numba's allocation counters on (``NUMBA_NRT_STATS=1``, read when Numba starts, so
    not settable in this process); asserts it succeeded and returns its stdout."""
    env = dict(os.environ, NUMBA_NRT_STATS="1")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return out.stdout


def stream(seed, n=240, d=3, n_classes=2):
    """A reproducible classification stream: (X float64 (n, d), y int (n,))."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if n_classes == 2:
        y = (X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0).astype(np.int64)
    else:
        centers = rng.normal(scale=3.0, size=(n_classes, d))
        y = rng.integers(n_classes, size=n)
        X = X + centers[y]
    return X, y


def model_state(est):
    """Complete observable state of a model: base attributes and ``_get_state()`` copies
    (None when unfitted)."""
    if not est.__sklearn_is_fitted__():
        return None
    st = {k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
          for k, v in est._get_state().items()}
    st["__classes_"] = np.array(est.classes_, copy=True)
    st["__n_features_in_"] = est.n_features_in_
    if "feature_names_in_" in est.__dict__:
        st["__feature_names_in_"] = np.array(est.feature_names_in_, copy=True)
    return st


class Table:
    """The least a table needs to carry column names: ``columns`` and ``__array__``.

    Stands in for a pandas DataFrame (fastbudget reads names by duck typing, so these tests
    of the name checks run without pandas)."""

    def __init__(self, X, columns):
        self._X = np.asarray(X)
        self.columns = list(columns)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self._X, dtype=dtype)


def assert_same_state(a, b):
    """Bit-identical states (as returned by ``model_state``)."""
    if a is None or b is None:
        assert a is None and b is None, "one model is fitted, the other is not"
        return
    assert a.keys() == b.keys(), sorted(set(a) ^ set(b))
    for k in a:
        va, vb = a[k], b[k]
        if isinstance(va, np.ndarray) or isinstance(vb, np.ndarray):
            va, vb = np.asarray(va), np.asarray(vb)
            assert va.dtype == vb.dtype and va.shape == vb.shape, k
            if va.dtype.kind == "f":
                assert np.array_equal(np.ascontiguousarray(va).view(np.uint8),
                                      np.ascontiguousarray(vb).view(np.uint8)), f"state {k!r} differs"
            else:
                assert np.array_equal(va, vb), f"state {k!r} differs"
        else:
            assert va == vb, f"state {k!r} differs: {va!r} vs {vb!r}"
            if isinstance(va, float) or isinstance(vb, float):
                assert np.float64(va).tobytes() == np.float64(vb).tobytes(), k


# attributes that are not model memory: label bookkeeping, the transaction's undo buffer and
# caches of the validation (the convention of every learner's ``memory_bytes()``)
_NOT_STATE = ("classes_", "_balanced_weights", "_undo", "_cw_cache", "_fitted_params")


def live_arrays(obj, _seen=None):
    """Every ndarray a fitted model holds, not copies: found through its attributes, the
    containers among them (tuples, lists, dicts) and the fastbudget objects they hold
    (engines, the learners of a wrapper); ``_NOT_STATE`` attributes are left out."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, dict):
        items = list(obj.values())
    elif isinstance(obj, (list, tuple)):
        items = list(obj)
    elif type(obj).__module__.startswith(("fastbudget.", "_dummy")) and hasattr(obj, "__dict__"):
        items = [v for k, v in vars(obj).items() if k not in _NOT_STATE]
    else:
        return []
    return [a for v in items for a in live_arrays(v, seen)]


def fitted_on_stream(factory, n=240):
    """``(est, X, y)``: a new ``factory()`` learned by ``partial_fit`` in chunks of 50 from the
    first ``n - 40`` rows of ``stream(0, n)`` (two classes for a binary learner, four for a
    multi-class one)."""
    est = factory()
    X, y = stream(0, n=n, n_classes=2 if getattr(est, "_binary_only", True) else 4)
    for lo in range(0, n - 40, 50):
        est.partial_fit(X[lo:lo + 50], y[lo:lo + 50], classes=np.unique(y))
    return est, X, y
