"""fastbudget.serving: a saved model scored with NumPy alone equals the compiled model.

Every learner of the registry (tests/_estimators.py) with every kernel it takes, binary and
one-vs-rest, is fitted on a small standardised problem, saved, served, and compared with the
loaded model's compiled ``decision_function`` on fresh rows (relative 1e-12 of the largest
decision value); labels must be identical. So is ``Predictor.compiled()``, the same
predictor scored by the library's compiled predict.
"""
import json
import os
import subprocess
import sys
import textwrap
import warnings
import zipfile

import numpy as np
import pytest

from _estimators import FACTORIES, IDS, is_binary
from fastbudget import _modelfile as mf
from fastbudget.multiclass import OneVsRestClassifier
from fastbudget.persist import ModelFormatError, load_model
from fastbudget.serving import load_predictor

SEED = int(os.environ.get("FASTBUDGET_TEST_SEED", "0"))
LEARNERS = [i for i in IDS if i not in ("dummy", "ovr_dummy") and not i.startswith("ovr_")]
KERNELS = ("rbf", "poly", "linear")


def _data(n_classes, n=150, d=3, seed=SEED):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = rng.normal(size=(n, d)) + 1.5 * np.eye(n_classes, d)[y]
    X = (X - X.mean(0)) / X.std(0)
    return X, y


def _configs():
    out = []
    for lid in LEARNERS:
        est = FACTORIES[lid]()
        kernels = KERNELS if "kernel" in est._get_param_names() else (None,)
        for k in kernels:
            out.append((lid, k))
    return out


def _make(lid, kernel):
    est = FACTORIES[lid]()
    if kernel is not None:
        params = {"kernel": kernel}
        if "degree" in est._get_param_names() and kernel == "poly":
            params["degree"] = 2
        if lid == "bsgd" and kernel != "rbf":
            params["maintenance"] = "removal"     # merging needs the RBF kernel
        est.set_params(**params)
    return est


def _assert_same(served, compiled):
    scale = max(1.0, float(np.abs(compiled).max()))
    np.testing.assert_allclose(served, compiled, rtol=1e-12, atol=1e-12 * scale)


def _fit_or_skip(est, X, y):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y)
    except ValueError as exc:        # a learner that refuses this kernel (said in its message)
        pytest.skip(f"{type(est).__name__} refuses this configuration: {exc}")
    return est


def _check_file(path, X):
    model = load_model(path, _warn_scaler=False)
    pred = load_predictor(path)
    _assert_same(pred.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(pred.predict(X), model.predict(X))
    np.testing.assert_array_equal(pred.classes_, model.classes_)
    assert pred.n_features_in_ == model.n_features_in_
    # the same predictor scored by the compiled predict (what fastbudget.distributed sends)
    comp = pred.compiled()
    _assert_same(comp.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(comp.predict(X), model.predict(X))
    # probabilities: the calibration map saved with the model, fitted with NumPy
    P = model.predict_proba(X)
    for served in (pred, comp):
        np.testing.assert_allclose(served.predict_proba(X), P, rtol=0, atol=1e-12)
    return model, pred


@pytest.mark.parametrize("lid,kernel", _configs())
def test_binary_equals_compiled(lid, kernel, tmp_path):
    X, y = _data(2)
    est = _fit_or_skip(_make(lid, kernel), X, y)
    est.save(tmp_path / "m.npz")
    Xt, _ = _data(2, n=400, seed=SEED + 1)
    _check_file(tmp_path / "m.npz", Xt)


@pytest.mark.parametrize("lid,kernel", _configs())
def test_one_vs_rest_equals_compiled(lid, kernel, tmp_path):
    X, y = _data(3)
    inner = _make(lid, kernel)
    total = 3 * inner.budget if getattr(inner, "budget", None) is not None else None
    est = _fit_or_skip(OneVsRestClassifier(inner, total_budget=total), X, y)
    try:
        est.save(tmp_path / "m.npz")
    except ValueError as exc:
        if lid.startswith("span") and "work_spans" in str(exc):
            pytest.xfail("REPORTED: a one-vs-rest SpanBudgetClassifier holds inf in "
                         "work_spans, which save refuses (not a serving issue)")
        raise
    Xt, _ = _data(3, n=400, seed=SEED + 1)
    _, pred = _check_file(tmp_path / "m.npz", Xt)
    assert pred.decision_function(Xt).shape == (400, 3)


@pytest.mark.parametrize("params", [
    dict(kernel="linear", lookahead=7),             # pending buffer, linear
    dict(kernel="rbf", lookahead=7),                # pending buffer, kernel
    dict(kernel="poly", degree=2, lookahead=7),
    dict(kernel="linear", n_balls=3),               # several balls merged
    dict(kernel="linear", sample_weight=True, lookahead=5),
])
def test_streamsvm_final_ball(params, tmp_path):
    """A StreamSVM saved with points in its lookahead buffer (or several balls) is scored
    by the final ball, which serving computes with its own transcription of the solver."""
    from fastbudget.estimators.streamsvm import StreamSVMClassifier

    params = dict(params)
    weighted = params.pop("sample_weight", False)
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + 0.7 * rng.normal(size=400) > 0).astype(int)      # overlapping classes
    sw = rng.uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y))
    est = StreamSVMClassifier(capacity=400, **params)
    Xt, _ = _data(2, n=300, seed=SEED + 1)
    checked = 0
    for i in range(0, 400, 10):
        est.partial_fit(X[i:i + 10], y[i:i + 10], classes=[0, 1], sample_weight=sw[i:i + 10])
        if est._st["ist"][1] > 0 or params.get("n_balls", 1) > 1:
            est.save(tmp_path / "m.npz")
            _check_file(tmp_path / "m.npz", Xt)
            checked += 1
    assert checked >= 5


def test_perceptron_primal_and_text_labels_and_feature_names(tmp_path):
    pd = pytest.importorskip("pandas")
    from fastbudget.estimators.baselines import PerceptronClassifier

    X, y = _data(3)
    labels = np.array(["cat", "dog", "emu"], dtype=object)[y]
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    est = OneVsRestClassifier(PerceptronClassifier(budget=None, kernel="linear")).fit(df, labels)
    est.save(tmp_path / "m.npz")
    model, pred = _check_file(tmp_path / "m.npz", X[:50] + 0.1)
    assert list(pred.feature_names_in_) == ["a", "b", "c"]
    assert pred.classes_.dtype == object
    np.testing.assert_array_equal(pred.predict(df), model.predict(df))
    with pytest.raises(ValueError, match="Feature names must be in the same order"):
        pred.predict(df[["b", "a", "c"]])
    with pytest.warns(UserWarning, match="has no column names"):
        pred.predict(X[:3])


def test_ovr_ties_go_to_the_first_class(tmp_path):
    """Equal decision values of two learners: both paths pick the first class (argmax)."""
    from fastbudget.estimators.baselines import PegasosClassifier

    X, y = _data(3)
    est = OneVsRestClassifier(PegasosClassifier(random_state=0)).fit(X, y)
    est.save(tmp_path / "m.npz")
    # rows at which learners 0 and 1 agree exactly: zeros give each learner its bias;
    # force equal biases by editing a copy of the model and re-saving it
    for e in est.estimators_[1:]:
        e._w[:] = est.estimators_[0]._w
    est.save(tmp_path / "tie.npz")
    Xt = np.zeros((5, 3))
    model = load_model(tmp_path / "tie.npz")
    pred = load_predictor(tmp_path / "tie.npz")
    f = pred.decision_function(Xt)
    assert (f[:, 0] == f[:, 1]).all() and (f[:, 1] == f[:, 2]).all()
    np.testing.assert_array_equal(pred.predict(Xt), model.predict(Xt))
    assert (pred.predict(Xt) == model.classes_[0]).all()


# ---------------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    from fastbudget.estimators.tvm import TVMClassifier

    X, y = _data(2)
    path = tmp_path_factory.mktemp("serve") / "tvm.npz"
    TVMClassifier(budget=10, C=1.0, random_state=0).fit(X, y).save(path)
    return path


@pytest.mark.parametrize("X,match", [
    (np.zeros((4, 2)), "X has 2 features, but .* is expecting 3 features"),
    (np.array([[0.0, np.nan, 1.0]]), r"NaN or infinity \(first at row 0, column 1\)"),
    (np.array([[0.0, 1.0, 1.0], [0.0, np.inf, 1.0]]), r"first at row 1, column 1"),
    (np.zeros((0, 3)), "X is empty"),
    (np.zeros(3), "Expected a 2-D array for X, got a 1-D array"),
    (np.array([[1e200, 0.0, 0.0]]), "too large for a kernel"),
])
def test_bad_input_same_message_as_compiled(saved, X, match):
    model = load_model(saved)
    pred = load_predictor(saved)
    with pytest.raises(ValueError, match=match) as served:
        pred.predict(X)
    with pytest.raises(ValueError, match=match) as compiled:
        model.predict(X)
    # same words, except the class name the compiled path gives itself
    assert str(served.value).replace("TVMClassifier", "M") == \
        str(compiled.value).replace("TVMClassifier", "M")


def test_text_input_refused(saved):
    with pytest.raises(ValueError, match="must be numeric"):
        load_predictor(saved).predict([["a", "b", "c"]])


def test_large_input_in_blocks_matches(saved):
    """Many blocks (a tiny block size), also read-only, strided and float32 input."""
    model = load_model(saved)
    pred = load_predictor(saved)
    pred._block_bytes = 1024
    X, _ = _data(2, n=3001, seed=SEED + 2)
    want = model.decision_function(X)
    _assert_same(pred.decision_function(X), want)
    Xs = np.asfortranarray(X)
    Xs.setflags(write=False)
    _assert_same(pred.decision_function(Xs), want)
    X32 = X.astype(np.float32)
    _assert_same(pred.decision_function(X32), model.decision_function(X32))


def test_rows_far_from_the_support_vectors(saved):
    """Rows far out (where the expanded squared distance loses digits, so serving
    recomputes them from differences) still agree with the compiled path."""
    model = load_model(saved)
    pred = load_predictor(saved)
    sc = pred._scorers[0]
    X, _ = _data(2, n=200, seed=SEED + 3)
    X = X * np.array([[1.0], [10.0], [30.0], [0.01]]).repeat(50, axis=0)
    xn = np.einsum("ij,ij->i", X - sc.centre, X - sc.centre)
    assert (sc.gamma * (xn + sc.sn_max) * 8 * np.finfo(float).eps * 2 > 1e-13).any()
    _assert_same(pred.decision_function(X), model.decision_function(X))


def test_far_rows_in_pieces_agree_with_the_compiled_path(saved, monkeypatch):
    """The squared distances from differences are taken in pieces of rows (scratch arrays
    of ``_CACHE_BYTES``): pieces of 7 rows, the last one shorter, give the compiled values,
    and every row is recomputed from differences."""
    from fastbudget import serving
    model = load_model(saved)
    pred = load_predictor(saved)
    sc = pred._scorers[0]
    monkeypatch.setattr(serving, "_CACHE_BYTES", 8 * sc.n_vectors * 7)
    X, _ = _data(2, n=200, seed=SEED + 4)
    X = 30.0 * X + 50.0
    Xb = np.ascontiguousarray(X, dtype=np.float64)
    d2 = ((Xb[:, None, :] - sc.SV[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(sc._sq_distances(Xb), d2, rtol=1e-13, atol=0.0)
    _assert_same(pred.decision_function(X), model.decision_function(X))


# ---------------------------------------------------------------------- damaged files
def _rewrite(path, out, edit):
    """Copy the model at ``path`` to ``out`` with ``edit(meta, arrays)`` applied and the
    checksum recomputed (an attack that passes the checksum)."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays.pop(mf.METADATA_KEY).tobytes())
    edit(meta, arrays)
    meta["arrays"] = {k: {"shape": list(a.shape), "dtype": a.dtype.str} for k, a in arrays.items()}
    body = {k: v for k, v in meta.items() if k != "sha256"}
    meta["sha256"] = mf.digest(body, arrays)
    blob = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with open(out, "wb") as fh:
        np.savez(fh, **{mf.METADATA_KEY: blob}, **arrays)


def _both_refuse(path, match):
    with pytest.raises(ModelFormatError, match=match):
        load_model(path)
    with pytest.raises(ModelFormatError, match=match):
        load_predictor(path)


def test_damaged_files_refused_like_load(saved, tmp_path):
    raw = bytearray(saved.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (tmp_path / "flip.npz").write_bytes(bytes(raw))
    with pytest.raises(ModelFormatError) as a:
        load_model(tmp_path / "flip.npz")
    with pytest.raises(ModelFormatError) as b:
        load_predictor(tmp_path / "flip.npz")
    assert str(a.value) == str(b.value)
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all")
    _both_refuse(tmp_path / "junk.npz", "not a valid .npz archive")

    def nan_q(meta, arrays):
        arrays["state.twin_Q"] = arrays["state.twin_Q"].copy()
        arrays["state.twin_Q"][0, 0] = np.nan

    _rewrite(saved, tmp_path / "nan.npz", nan_q)
    _both_refuse(tmp_path / "nan.npz", "holds NaN or infinity")

    def unsorted(meta, arrays):
        arrays["base.classes_"] = arrays["base.classes_"][::-1].copy()

    _rewrite(saved, tmp_path / "cls.npz", unsorted)
    _both_refuse(tmp_path / "cls.npz", "not sorted and unique")

    def foreign(meta, arrays):
        meta["class"] = "os.system"

    _rewrite(saved, tmp_path / "cls2.npz", foreign)
    _both_refuse(tmp_path / "cls2.npz", "'os.system'")

    def negative_counts(meta, arrays):      # the calibration map's statistics
        stats = np.array(arrays["base.calibration_stats"])
        stats[0, 3] = -1.0
        arrays["base.calibration_stats"] = stats

    _rewrite(saved, tmp_path / "calib.npz", negative_counts)
    _both_refuse(tmp_path / "calib.npz", "calibration statistics")
    with pytest.raises(FileNotFoundError):
        load_predictor(tmp_path / "absent.npz")


# ---------------------------------------------------------------------- no numba
def test_serving_never_imports_numba(saved):
    code = textwrap.dedent(f"""
        import sys
        import numpy as np
        import fastbudget
        assert 'numba' not in sys.modules, 'import fastbudget'
        from fastbudget.serving import load_predictor
        p = load_predictor({str(saved)!r})
        print(p.predict(np.zeros((1, 3)))[0])
        P = p.predict_proba(np.zeros((4, 3)))
        assert P.shape == (4, len(p.classes_)) and np.allclose(P.sum(1), 1.0)
        assert 'numba' not in sys.modules, sorted(m for m in sys.modules if 'numba' in m)[:5]
        assert 'fastbudget.base' not in sys.modules
        print('ok')
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "ok"


def test_lazy_package_names():
    code = textwrap.dedent("""
        import sys
        import fastbudget
        assert 'numba' not in sys.modules
        names = dir(fastbudget)
        assert set(fastbudget.__all__) <= set(names), set(fastbudget.__all__) - set(names)
        from fastbudget import TVMClassifier, ModelFormatError, load
        assert 'numba' in sys.modules
        from fastbudget.persist import ModelFormatError as M2
        assert ModelFormatError is M2
        for n in fastbudget.__all__:
            getattr(fastbudget, n)
        try:
            fastbudget.no_such_name
        except AttributeError:
            print('ok')
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "ok"
