"""ONNX export (fastbudget.onnx.to_onnx and ``fastbudget export``), run by ONNX Runtime.

Every learner of the shared registry, with each kernel it takes, binary and one-vs-rest, is
exported and run on 10^4 rows (inside the training range, beyond it, and copies of training
rows); the labels must equal ``predict`` and the scores lie within 1e-5 of
``decision_function``. The onnx extra is a test dependency: these tests are never skipped.
"""
import pickle
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from _estimators import FACTORIES
from fastbudget import ModelFormatError, NotFittedError, OneVsRestClassifier, load_scaler
from fastbudget.cli import main as cli_main
from fastbudget.estimators.baselines import PerceptronClassifier
from fastbudget.onnx import to_onnx

TOL = 1e-5          # the goal for scores (absolute)
N_ROWS = 10_000
D = 4


def _session(proto):
    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


def _run(proto, X):
    label, scores = _session(proto).run(["label", "scores"], {"X": X})
    return label, scores


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(24)
    X = rng.normal(size=(240, D))
    y = (X[:, 0] * X[:, 1] > 0).astype(np.int64)                  # XOR: binary
    y3 = np.digitize(X[:, 0] + 0.5 * X[:, 2], [-0.5, 0.5])        # three classes
    lo, hi = X.min(axis=0), X.max(axis=0)
    inside = rng.uniform(lo, hi, size=(N_ROWS // 2, D))
    beyond = rng.uniform(3 * lo, 3 * hi, size=(N_ROWS // 2 - X.shape[0], D))
    T = np.vstack([inside, beyond, X])          # copies of training rows: ||x - v|| = 0 exactly
    assert T.shape == (N_ROWS, D)
    return X, y, y3, T


def _kernels(factory):
    est = factory()
    return ["linear", "rbf", "poly"] if "kernel" in est.get_params() else ["linear"]


def _cases():
    """(learner id, kernel): every registry learner (the test-only dummies and the registry's
    own one-vs-rest entries aside) with every kernel it takes, plus the primal perceptron."""
    out, seen = [], set()
    for id_, factory in FACTORIES.items():
        if "dummy" in id_ or id_.startswith("ovr_"):
            continue
        for k in _kernels(factory):
            est = _configure(factory(), k)
            key = (type(est).__name__, repr(sorted(est.get_params().items())))
            if key not in seen:               # streamsvm_rbf with kernel=k is streamsvm's
                seen.add(key)
                out.append((id_, k))
    return out + [("perceptron_primal", "linear")]


def _configure(est, kernel):
    if "kernel" in est.get_params():
        est.set_params(kernel=kernel)
    if "maintenance" in est.get_params() and kernel != "rbf":
        est.set_params(maintenance="removal")       # merging needs the RBF kernel
    return est


def _make(id_, kernel):
    if id_ == "perceptron_primal":
        return PerceptronClassifier(budget=None, kernel="linear")
    return _configure(FACTORIES[id_](), kernel)


CASES = _cases()


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # rejection / collapse notes of small fits
        return est.fit(X, y)


TIE = 1e-9          # relative: a decision closer than this is a tie, decided by rounding


def _reference(learner, T):
    """Plain-NumPy decision values of one binary learner from its public fitted attributes
    (``coef_``; or support/twin vectors, ``dual_coef_``, ``intercept_``, ``gamma_``), and
    the magnitude ``|b| + sum_i |c_i K(v_i, x)|`` that bounds the rounding error of each."""
    b = float(learner.intercept_[0])
    try:
        w = learner.coef_[0]
    except AttributeError:
        w = None
    if w is not None:
        return T @ w + b, np.abs(T) @ np.abs(w) + abs(b)
    V = getattr(learner, "twin_vectors_", None)
    V = learner.support_vectors_ if V is None else V
    c = learner.dual_coef_[0]
    if learner.kernel == "linear":
        K = T @ V.T
    elif learner.kernel == "rbf":
        K = np.exp(-learner.gamma_ * ((T[:, None, :] - V[None, :, :]) ** 2).sum(axis=2))
    else:
        K = (learner.gamma_ * (T @ V.T) + learner.coef0) ** learner.degree
    return K @ c + b, np.abs(K) @ np.abs(c) + abs(b)


def _check_equal(est, proto, T):
    """Scores within TOL of ``decision_function``; labels equal to ``predict`` on every row
    whose decision is not a tie. A tie: binary, |f| <= TIE * (|b| + sum |c_i K_i|); one-vs-
    rest, the two largest scores that close (e.g. a training row on the margin of two
    learners: both scores -1). There the graph's label must be one of the tied classes."""
    label, scores = _run(proto, T)
    f = est.decision_function(T)
    assert scores.dtype == np.float64 and scores.shape == f.shape
    err = np.abs(scores - f).max()
    assert err <= TOL, f"scores differ by {err:.3g} (largest |f| {np.abs(f).max():.3g})"
    learners = getattr(est, "estimators_", [est])
    refs = [_reference(e, T) for e in learners]
    ref = np.column_stack([r[0] for r in refs]).reshape(f.shape)
    mag = np.column_stack([r[1] for r in refs]).reshape(f.shape)
    assert np.abs(ref - f).max() <= 1e-9 * max(1.0, np.abs(f).max())   # the attributes' layout
    classes = est.classes_
    if f.ndim == 1:
        near = np.column_stack([f <= TIE * mag, f >= -TIE * mag])    # (f > 0) picks classes_[1]
    else:
        order = np.argsort(-f, axis=1)
        rows = np.arange(len(f))
        top = f[rows, order[:, 0]][:, None]
        near = f >= top - TIE * (mag + mag[rows, order[:, 0]][:, None])
    tied = near.sum(axis=1) > 1
    np.testing.assert_array_equal(label[~tied], est.predict(T)[~tied])
    for i in np.flatnonzero(tied):
        assert label[i] in set(classes[near[i]].tolist())
    assert np.count_nonzero(tied) <= len(T) // 100       # ties are rare
    # probabilities: predict_proba's calibration map, within what the scores' error moves
    # it (its steepest piece, in f) plus rounding; rows sum to 1
    from fastbudget.onnx import _calibration_map
    (P,) = _session(proto).run(["probabilities"], {"X": T})
    cmap = _calibration_map(est, learners)
    du = np.diff(cmap.knots_u)
    steep = np.max(np.diff(cmap.knots_p)[du > 0] / du[du > 0], initial=0.0) + 1e-4
    want = est.predict_proba(T)
    assert P.dtype == np.float64 and P.shape == want.shape == (len(T), len(classes))
    assert np.abs(P - want).max() <= 1e-12 + 2 * steep * err, np.abs(P - want).max()
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # the most probable class is the label, where the probabilities can tell the classes
    # apart: far from the data (RBF scores of 1e-11 and below) every class's probability is
    # 1/2 to within the map's resolution near f = 0 (1e-12), in predict_proba as here
    top2 = np.sort(want, axis=1)[:, -2:]
    clear = ~tied & (top2[:, 1] - top2[:, 0] > 1e-9)
    np.testing.assert_array_equal(classes[np.argmax(P[clear], axis=1)], label[clear])
    return err


@pytest.mark.parametrize("id_,kernel", CASES, ids=[f"{i}-{k}" for i, k in CASES])
@pytest.mark.parametrize("multi", [False, True], ids=["binary", "ovr"])
def test_scores_and_labels_equal(data, id_, kernel, multi):
    X, y, y3, T = data
    est = _make(id_, kernel)
    if multi:
        est = OneVsRestClassifier(est)
    _fit(est, X, y3 if multi else y)
    before = pickle.dumps(est)
    proto = to_onnx(est)
    assert pickle.dumps(est) == before                    # export leaves the model as it was
    _check_equal(est, proto, T)
    # what the graph holds: standard operators only, in float64
    ops = {n.op_type for n in proto.graph.node}
    assert {n.domain for n in proto.graph.node} == {""}
    assert ops <= {"MatMul", "Add", "Sub", "Mul", "Max", "Exp", "Pow", "ReduceSum", "Squeeze",
                   "Greater", "Cast", "Concat", "ArgMax", "Gather",
                   # the calibration map (probabilities)
                   "Abs", "Log", "Sqrt", "Less", "Neg", "Where", "IsNaN", "Div", "Floor",
                   "Clip", "Unsqueeze", "LessOrEqual", "Min"}
    if kernel == "linear":
        assert "Exp" not in ops and "Pow" not in ops      # collapsed to w = sum_i c_i v_i


def test_primal_models_are_one_matmul(data):
    X, y, _, T = data
    for est in (PerceptronClassifier(budget=None, kernel="linear"), _make("pegasos", "linear"),
                _make("streamsvm", "linear")):
        _fit(est, X, y)
        proto = to_onnx(est)
        assert [n.op_type for n in proto.graph.node].count("MatMul") == 1
        _check_equal(est, proto, T)


@pytest.mark.parametrize("classes,ovr", [(["no", "yes"], False), (["no", "yes"], True),
                                         (["cat", "dog", "eel"], True), ([-3, 5, 7], True)],
                         ids=["text-binary", "text-ovr-two-classes", "text-ovr", "int-ovr"])
def test_labels_are_the_models_classes(data, classes, ovr):
    X, y, y3, T = data
    lab = np.array(classes)[y if len(classes) == 2 else y3]
    est = _fit(OneVsRestClassifier(_make("bsgd", "rbf")) if ovr else _make("bsgd", "rbf"),
               X, lab)
    proto = to_onnx(est)
    assert len(proto.graph.output[1].type.tensor_type.shape.dim) == (2 if len(classes) > 2
                                                                    else 1)
    label_type = proto.graph.output[0].type.tensor_type.elem_type
    assert label_type == (onnx.TensorProto.STRING if isinstance(classes[0], str)
                          else onnx.TensorProto.INT64)
    label, _ = _run(proto, T)
    assert label.tolist() == est.predict(T).tolist()
    assert set(label.tolist()) <= set(classes)


def test_float32_input_is_cast_to_float64(data):
    X, y, _, T = data
    est = _fit(_make("bsgd", "rbf"), X, y)
    proto = to_onnx(est, dtype=np.float32)
    assert proto.graph.input[0].type.tensor_type.elem_type == onnx.TensorProto.FLOAT
    T32 = T.astype(np.float32)
    label, scores = _run(proto, T32)
    f = est.decision_function(T32.astype(np.float64))
    assert np.abs(scores - f).max() <= TOL
    np.testing.assert_array_equal(label, est.predict(T32.astype(np.float64)))


@pytest.mark.parametrize("opset", [13, 17, 21])        # 21: the newest onnxruntime 1.19 runs
def test_opsets(data, opset):
    X, y, _, T = data
    est = _fit(_make("random", "poly"), X, y)
    proto = to_onnx(est, target_opset=opset)
    assert proto.opset_import[0].version == opset
    _check_equal(est, proto, T)


def test_saved_file_and_estimator_give_the_same_graph(data, tmp_path):
    X, _, y3, T = data
    est = _fit(OneVsRestClassifier(_make("tvm", "rbf")), X, y3)
    path = tmp_path / "m.npz"
    est.save(path)
    a, b = to_onnx(est), to_onnx(str(path))
    assert a.graph.SerializeToString() == b.graph.SerializeToString()
    _check_equal(est, b, T)


def test_nan_and_empty_rows_are_not_checked_by_onnxruntime(data):
    """Documented behaviour: ONNX Runtime does not refuse NaN rows (decision_function
    does); their scores are NaN and the other rows are unaffected. Zero rows give zero
    outputs."""
    X, y, y3, T = data
    for est in (_fit(_make("idsvm", "rbf"), X, y), _fit(OneVsRestClassifier(_make("idsvm", "rbf")),
                                                        X, y3)):
        proto = to_onnx(est)
        bad = T[:50].copy()
        bad[7, 2] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            est.decision_function(bad)
        label, scores = _run(proto, bad)
        assert np.isnan(scores[7]).all()
        ok = np.arange(50) != 7
        assert np.abs(scores[ok] - est.decision_function(bad[ok])).max() <= TOL
        (P,) = _session(proto).run(["probabilities"], {"X": bad})
        assert np.isnan(P[7]).all() and np.isfinite(P[ok]).all()
        label, scores = _run(proto, np.zeros((0, D)))
        assert label.shape == (0,) and scores.shape[0] == 0
        (P,) = _session(proto).run(["probabilities"], {"X": np.zeros((0, D))})
        assert P.shape == (0, len(est.classes_))


def test_onnxruntime_refuses_the_wrong_number_of_features(data):
    X, y, _, _ = data
    sess = _session(to_onnx(_fit(_make("perceptron", "rbf"), X, y)))
    with pytest.raises(Exception, match="(?i)dimension|shape"):
        sess.run(["label"], {"X": np.zeros((3, D + 1))})


# ------------------------------------------------------------------------ bad input
def test_unfitted_model_is_refused():
    for est in (PerceptronClassifier(budget=10), OneVsRestClassifier(PerceptronClassifier())):
        with pytest.raises(NotFittedError, match="not fitted"):
            to_onnx(est)


def test_foreign_objects_are_refused(data):
    X, y, _, _ = data
    with pytest.raises(TypeError, match="fastbudget classifier"):
        to_onnx(object())
    dummy = _fit(FACTORIES["dummy"](), X, y)          # a BudgetClassifier with no SV layout
    with pytest.raises(TypeError, match="support"):
        to_onnx(dummy)


def test_a_file_that_is_not_a_model_is_refused(tmp_path):
    bad = tmp_path / "notes.npz"
    bad.write_text("not a model\n")
    with pytest.raises(ModelFormatError):
        to_onnx(str(bad))
    with pytest.raises(FileNotFoundError):
        to_onnx(str(tmp_path / "missing.npz"))


@pytest.mark.parametrize("kw", [{"target_opset": 12}, {"target_opset": 10 ** 6},
                                {"target_opset": "17"}, {"dtype": np.int64},
                                {"dtype": "float16"}])
def test_bad_options_are_refused(data, kw):
    X, y, _, _ = data
    est = _fit(_make("perceptron", "rbf"), X, y)
    with pytest.raises(ValueError, match="target_opset|dtype"):
        to_onnx(est, **kw)


def test_a_scaler_of_another_width_is_refused(data):
    X, y, _, _ = data
    est = _fit(_make("perceptron", "rbf"), X, y)

    class Scaler:
        mean_, scale_, clip = np.zeros(D + 1), np.ones(D + 1), None
    with pytest.raises(ValueError, match="features"):
        to_onnx(est, scaler=Scaler())
    with pytest.raises(ValueError, match="scaler must be"):
        to_onnx(est, scaler="standardise")
    with pytest.raises(TypeError, match="mean_ and scale_"):
        to_onnx(est, scaler=np.ones(D))


# ------------------------------------------------------------------------ command line
def _write_csv(path, X, y):
    with open(path, "w") as f:
        for row, lab in zip(X, y):
            f.write(",".join(f"{v:.17g}" for v in row) + f",{lab}\n")


@pytest.mark.parametrize("clip", [None, 1.5], ids=["standardise", "clip"])
def test_cli_export_equals_cli_predict(data, tmp_path, capsys, clip):
    X, _, y3, T = data
    Xraw, Traw = 50.0 + 10.0 * X, 50.0 + 10.0 * T[:2000]      # far from standardised
    labels = np.array(["ant", "bee", "cow"])[y3]
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    _write_csv(train, Xraw, labels)
    _write_csv(test, Traw, np.array(["ant"] * len(Traw)))
    model, out = str(tmp_path / "m.npz"), str(tmp_path / "m.onnx")
    extra = [] if clip is None else ["--clip", str(clip)]
    assert cli_main(["train", "bsgd", str(train), "-o", model, "--budget", "20", "--quiet",
                     "--multiclass"] + extra) == 0
    assert cli_main(["export", model, "-o", out]) == 0
    assert "standardised inside the graph" in capsys.readouterr().out
    proto = onnx.load(out)
    assert proto.graph == to_onnx(model).graph         # the Python export of the path: the same
    assert "Div" in {n.op_type for n in proto.graph.node}
    clips = [n for n in proto.graph.node if n.op_type == "Clip" and n.input[1].startswith("clip_lo")]
    assert bool(clips) == (clip is not None)          # the scaler's clip (not the map's)
    label, scores = _run(proto, Traw)
    pred = tmp_path / "pred.txt"
    assert cli_main(["predict", model, str(test), "-o", str(pred), "--quiet"]) == 0
    assert label.tolist() == pred.read_text().split()
    assert cli_main(["predict", model, str(test), "-o", str(pred), "--scores", "--quiet"]) == 0
    printed = np.loadtxt(pred)                        # 6 significant digits
    np.testing.assert_allclose(scores, printed, rtol=1e-5, atol=1e-300)
    # the graph's probabilities are what `fastbudget predict --proba` prints
    assert cli_main(["predict", model, str(test), "-o", str(pred), "--proba", "--quiet"]) == 0
    lines = pred.read_text().splitlines()
    assert lines[0] == "labels ant bee cow"
    (P,) = _session(proto).run(["probabilities"], {"X": Traw})
    np.testing.assert_allclose(P, [[float(v) for v in ln.split()[1:]] for ln in lines[1:]],
                               rtol=1e-5, atol=1e-300)
    # and at full precision against the model on the standardised rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = __import__("fastbudget").load(model)
    Z = load_scaler(model).transform(Traw)
    assert np.abs(scores - est.decision_function(Z)).max() <= TOL
    # --no-probabilities: the same graph without the map
    out3 = str(tmp_path / "m3.onnx")
    assert cli_main(["export", model, "-o", out3, "--no-probabilities"]) == 0
    assert "outputs label, scores\n" in capsys.readouterr().out
    lean = onnx.load(out3)
    assert [o.name for o in lean.graph.output] == ["label", "scores"]
    assert len(lean.graph.node) < len(proto.graph.node)
    label3, scores3 = _run(lean, Traw)
    assert label3.tolist() == label.tolist() and np.array_equal(scores3, scores)
    # --no-scaler: the graph takes standardised rows
    out2 = str(tmp_path / "m2.onnx")
    assert cli_main(["export", model, "-o", out2, "--no-scaler"]) == 0
    label2, scores2 = _run(onnx.load(out2), Z)
    assert np.abs(scores2 - scores).max() <= TOL and label2.tolist() == label.tolist()


def test_cli_export_errors(tmp_path, capsys):
    bad = tmp_path / "bad.npz"
    bad.write_text("hello\n")
    assert cli_main(["export", str(bad), "-o", str(tmp_path / "o.onnx")]) == 2
    err = capsys.readouterr().err
    assert "is not a usable fastbudget model" in err
    assert not (tmp_path / "o.onnx").exists()
    assert cli_main(["export", str(tmp_path / "none.npz"), "-o", str(tmp_path / "o.onnx")]) == 2
    assert "no such model file" in capsys.readouterr().err
    assert cli_main(["export", str(bad)]) == 2                 # -o is required
    assert "-o/--output" in capsys.readouterr().err
