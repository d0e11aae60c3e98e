"""Every compiled kernel is built for one signature, and input of another layout or dtype
never reaches one (so it never compiles anything once the cache is warm).

Numba compiles a function once per tuple of argument types, and an array's type includes its
dtype, layout (C, F or strided) and whether it is writable: a read-only array from
``np.load(mmap_mode='r')`` or a pandas frame, a strided view, float32 or integer input would
each compile every kernel it reaches again, seconds to a minute in a process whose cache is
warm. The object layer normalises input to C-contiguous, writable float64 / int64
(``fastbudget.base.as_kernel_array``); these tests warm each learner on ordinary input, then
fit, learn and predict with every other kind, and check that no dispatcher of
``fastbudget.kernels.*`` gained a signature.
"""
import importlib
import io
import pkgutil
import warnings

import numpy as np
import pandas as pd
import pytest
from numba.core.registry import CPUDispatcher

import fastbudget
import fastbudget.kernels
from fastbudget import (BSGDClassifier, ForgetronClassifier, IncrementalSVC,
                        PegasosClassifier, PerceptronClassifier, RandomBudgetClassifier,
                        SpanBudgetClassifier, StreamSVMClassifier, SVIncrementalClassifier,
                        TVMClassifier)
from fastbudget.datasets import read_csv, read_libsvm


def _dispatchers():
    """{'module.name': dispatcher} of every compiled function in ``fastbudget.kernels``."""
    out = {}
    for m in pkgutil.iter_modules(fastbudget.kernels.__path__):
        mod = importlib.import_module("fastbudget.kernels." + m.name)
        for name, obj in vars(mod).items():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == mod.__name__:
                out[f"{m.name}.{name}"] = obj
    return out


def _counts():
    return {k: len(d.signatures) for k, d in _dispatchers().items()}


LEARNERS = {
    "tvm": lambda: TVMClassifier(budget=8, gamma=1.0, random_state=0),
    "tvm_feature": lambda: TVMClassifier(budget=8, gamma=1.0, merge="feature", random_state=0),
    "idsvm": lambda: IncrementalSVC(gamma=1.0, capacity=128),
    "streamsvm": lambda: StreamSVMClassifier(),
    "streamsvm_rbf": lambda: StreamSVMClassifier(kernel="rbf", gamma=1.0, lookahead=4),
    "streamsvm_balls": lambda: StreamSVMClassifier(n_balls=3),
    "span": lambda: SpanBudgetClassifier(budget=8, gamma=1.0),
    "svincremental": lambda: SVIncrementalClassifier(gamma=1.0, L="auto", capacity=128),
    "random": lambda: RandomBudgetClassifier(budget=8, gamma=1.0, random_state=0),
    "forgetron": lambda: ForgetronClassifier(budget=8, gamma=1.0, random_state=0),
    "perceptron": lambda: PerceptronClassifier(budget=8, gamma=1.0),
    "pegasos": lambda: PegasosClassifier(random_state=0),
    "bsgd": lambda: BSGDClassifier(budget=8, gamma=1.0, random_state=0),
}


UNIT_WEIGHTS = {"forgetron"}


def _data(d=2, n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where((X[:, 0] * X[:, -1] if d > 1 else X[:, 0]) > 0, 1, -1)
    return X, y


def _use(est, X, y, w=None):
    """What a caller does with a learner: fit, partial_fit, learn_one, predict."""
    rows = X.iloc if hasattr(X, "iloc") else X     # (a frame's rows by position)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # tiny budgets: rejection / collapse warnings
        est.fit(X, y, sample_weight=w)
        est.partial_fit(rows[:7], y[:7], sample_weight=None if w is None else w[:7])
        est.learn_one(rows[3], y[3])
        est.decision_function(X)
        est.predict(rows[:1])
        est.predict_one(rows[5])


def _readonly(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


def _strided(a):
    a = np.asarray(a)
    big = np.zeros((a.shape[0], 2 * a.shape[1]) if a.ndim == 2 else 2 * a.shape[0],
                   dtype=a.dtype)
    if a.ndim == 2:
        big[:, ::2] = a
        return big[:, ::2]
    big[::2] = a
    return big[::2]


@pytest.fixture(scope="module")
def warm():
    """Every learner used once on ordinary input (float64, C order, writable)."""
    X, y = _data()
    for make in LEARNERS.values():
        _use(make(), X, y)
        _use(make(), X, y, np.ones(len(y)))
    X1, y1 = _data(d=1, seed=1)
    _use(TVMClassifier(budget=8, gamma=1.0), X1, y1)
    return True


@pytest.mark.parametrize("name", sorted(LEARNERS))
def test_other_layouts_and_dtypes_add_no_signature(warm, name, tmp_path):
    X, y = _data(seed=2)
    path = tmp_path / "X.npy"
    np.save(path, X)
    # (unit weights for the learners that refuse others: the Forgetron's schedule)
    w = np.ones(len(y)) if name in UNIT_WEIGHTS else np.linspace(0.5, 1.5, len(y))
    variants = {
        "read-only": (_readonly(X), _readonly(y), _readonly(w)),
        "mmap": (np.load(path, mmap_mode="r"), y, w),
        "strided": (_strided(X), _strided(y), _strided(w)),
        "float32": (X.astype(np.float32), y.astype(np.int32), w.astype(np.float32)),
        "int": (np.round(3 * X).astype(np.int64), y, np.ones(len(y), dtype=np.int64)),
        "int32": (np.round(3 * X).astype(np.int32), y.astype(np.int8), None),
        "fortran": (np.asfortranarray(X), y, w),
        "pandas": (pd.DataFrame(X, columns=["a", "b"]), pd.Series(y), pd.Series(w)),
    }
    for kind, (Xv, yv, wv) in variants.items():
        before = _counts()
        _use(LEARNERS[name](), Xv, yv, wv)
        after = _counts()
        # a function that already had its signature gained none ...
        grown = {k: (before[k], after[k]) for k in after if before[k] and after[k] != before[k]}
        assert not grown, f"{name} on {kind} input compiled new signatures: {grown}"
        # ... and one compiled for the first time (a path these data reach first) was
        # compiled for the kernels' own layout, not the caller's
        for k in after:
            if after[k] != before[k]:
                assert after[k] == 1, (k, after[k])
                _assert_plain(k, _dispatchers()[k].signatures[0])


def _assert_plain(name, sig):
    """Every array in ``sig`` is C-contiguous, aligned, writable and of a dtype the object
    layer produces."""
    text = str(sig)
    for bad in ("readonly", "unaligned", "d, A)", "d, F)", "float32", "int32", "float16"):
        assert bad not in text, f"{name} compiled for {bad!r}: {text}"


def test_one_column_frame_and_single_rows_add_no_signature(warm):
    X1, y1 = _data(d=1, seed=3)
    before = _counts()
    est = TVMClassifier(budget=8, gamma=1.0)
    frame = pd.DataFrame({"a": X1[:, 0]})
    _use(est, frame, pd.Series(y1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.learn_one(_readonly(X1[4]), y1[4])
        est.learn_one(X1[5].astype(np.float32), y1[5])
        est.learn_one(_strided(X1[6]), y1[6])
        est.predict_one(_readonly(X1[7]))
    assert _counts() == before


def test_readers_add_no_signature(warm, tmp_path):
    rows = "\n".join(f"{1 if i % 2 else -1} 1:{i / 7:.3f} 2:{-i / 5:.3f}" for i in range(40))
    p = tmp_path / "a.libsvm"
    p.write_text(rows + "\n")
    c = tmp_path / "a.csv"
    c.write_text("\n".join(f"{i / 7:.3f},{-i / 5:.3f},{i % 2}" for i in range(40)) + "\n")
    # ordinary use first: a path
    list(read_libsvm(p, chunk_size=16))
    list(read_csv(c, chunk_size=16, header=False))
    before = _counts()
    list(read_libsvm(io.BytesIO(p.read_bytes()), chunk_size=16))
    list(read_libsvm(str(p), chunk_size=7))
    list(read_csv(io.BytesIO(c.read_bytes()), chunk_size=16, header=False))
    list(read_csv(io.StringIO(c.read_text()), chunk_size=5, header=False))
    after = _counts()
    assert after == before, {k: (before[k], after[k]) for k in after if after[k] != before[k]}


# Dispatchers allowed more than one signature after a warmup, with the reason.
MULTI_SIGNATURE = {}


_WARMUP_CHECK = """
import json
import fastbudget
from test_compiled_signatures import MULTI_SIGNATURE, _counts, _dispatchers
fastbudget.warmup()
counts = _counts()
multi = {k: [str(s) for s in _dispatchers()[k].signatures] for k, n in counts.items()
         if n > 1 and k not in MULTI_SIGNATURE}
print(json.dumps({"multi": multi, "used": sorted(k for k, n in counts.items() if n)}))
"""


def test_warmup_compiles_one_signature_per_function():
    """After ``fastbudget.warmup()`` every compiled function that ran has exactly one
    signature (none is specialised on a literal argument, a dtype or a layout). Checked in
    a fresh process: the dispatchers of this one hold whatever the tests run before in it
    (with pytest-xdist, tests of other files) compiled."""
    import json
    import os
    import pathlib
    import subprocess
    import sys

    here = str(pathlib.Path(__file__).parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [here] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    # a first warmup fills the on-disk cache (if the tests before have not), so that the
    # check sees the warm-cache state, where only functions called from Python hold
    # signatures; on an empty cache every callee does (one each too: perf/cold_start.py
    # --profile lists any with more than one)
    subprocess.run([sys.executable, "-c", "import fastbudget; fastbudget.warmup()"],
                   check=True, capture_output=True, env=env, timeout=900)
    r = subprocess.run([sys.executable, "-c", _WARMUP_CHECK], capture_output=True, text=True,
                       env=env, timeout=900)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert not got["multi"], got["multi"]
    # and warmup reaches the compiled paths: every learner's entry points ran, and the last
    # resorts of a failed update. (Functions loaded from a warm cache carry the code of
    # their callees, so only those called from Python get a signature here; on an empty
    # cache every one does: ``perf/cold_start.py --profile`` lists any with more than one.)
    used = set(got["used"])
    for entry in ("tvm.tvm_partial_fit", "tvm.tvm_count_one", "adiabatic.add_batch",
                  "adiabatic.relearn", "adiabatic.rebuild", "adiabatic.repair",
                  "ops.tvm_repair", "span.span_learn",
                  "meb.stream_linear", "bsgd.bsgd_fit"):
        assert entry in used, f"warmup did not compile {entry}"


def test_functions_without_python_wrapper_are_only_called_from_compiled_code():
    """Compiled functions reached only from other compiled functions are built without
    Numba's CPython wrapper (``no_cpython_wrapper=True``: the code that unboxes each
    argument, the ~45 arrays of the engine's state tuples included, which every compiled
    function otherwise carries in its own LLVM module; perf/cold_start.py). Such a function
    cannot be called from Python: the call jumps to a null entry point and kills the
    process. So none may be named in a call outside ``fastbudget/kernels`` (the object
    layer, the tests, the perf scripts)."""
    import io
    import pathlib
    import re
    import tokenize

    root = pathlib.Path(__file__).resolve().parent.parent
    internal = {k.split(".")[1] for k, d in _dispatchers().items()
                if d.targetoptions.get("no_cpython_wrapper")}
    assert "run_path" in internal     # (the check looks at the right attribute)
    sources = [p for d in ("fastbudget", "tests", "perf") for p in (root / d).rglob("*.py")
               if "kernels" not in p.relative_to(root).parts]
    calls = []
    for p in sources:
        text = p.read_text()
        own = set(re.findall(r"^def (\w+)\(", text, re.M))   # a file's own namesakes
        # names followed by "(" in the code itself: strings (compiled source that a perf
        # script patches into a copy of the kernels) and comments are not calls
        toks = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                  tokenize.INDENT, tokenize.DEDENT)]
        for prev, tok, nxt in zip([None] + toks, toks, toks[1:] + [None]):
            if (tok.type == tokenize.NAME and tok.string in internal
                    and tok.string not in own and nxt is not None and nxt.string == "("
                    and not (prev is not None and prev.string == "def")):
                calls.append(f"{p.relative_to(root)}:{tok.start[0]}: {tok.line.strip()}")
    assert not calls, "\n".join(calls)
