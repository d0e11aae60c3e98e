"""Export a fitted fastbudget model to ONNX (needs the ``onnx`` extra: ``pip install
fastbudget[onnx]``).

:func:`to_onnx` turns a fitted classifier, or a model file written by ``save`` /
``fastbudget train``, into an ONNX ``ModelProto`` built from standard operators (default
domain, opset 13 or later) that computes in float64:

- input ``X``: ``(n, n_features)``, float64 (or float32 with ``dtype=numpy.float32``: cast
  to float64 as the graph's first node);
- optionally the standardisation ``fastbudget train`` applied (``(X - mean) / scale``, then
  clipped when the scaler clips), so that the graph takes raw rows as ``fastbudget predict``;
- output ``scores``: the model's ``decision_function``, ``(n,)`` for a binary model,
  ``(n, n_classes)`` for a one-vs-rest model of three or more classes;
- output ``label``: ``predict``, an element of ``classes_`` (int64, float64, bool or string
  tensor, as the model's labels);
- output ``probabilities``: ``predict_proba``, ``(n, n_classes)``, columns in the order of
  ``classes_``: the model's online calibration map (``fastbudget.calibration``) as it is at
  export, a piecewise-linear function of ``asinh(f)`` whose segment is found from the map's
  fixed grid of bins (a lookup per value, not a comparison with every knot), so the memory
  stays linear in the rows.

Each binary learner is a kernel expansion ``f(x) = sum_i c_i K(v_i, x) + b`` (support or twin
vectors ``v_i``, signed coefficients ``c_i``) or a primal linear model ``f(x) = <w, x> + b``,
read from the fitted attributes every learner lays out as scikit-learn's (``support_vectors_``
or ``twin_vectors_``, ``dual_coef_``, ``intercept_``, ``gamma_``; ``coef_`` and ``intercept_``
for primal models). A kernel expansion with the linear kernel is collapsed to its primal form
``w = sum_i c_i v_i``.

Why standard operators and not ``ai.onnx.ml.SVMClassifier``/``SVMRegressor``: those hold the
support vectors and coefficients in float32 attributes and ONNX Runtime evaluates them in
float32, so their scores drift from the float64 ``decision_function`` by far more than 1e-5
on budgeted models (measured in docs/onnx.md); a float64 graph of ``MatMul``/``Exp``/``Pow``
agrees to about 1e-13.

ONNX Runtime checks the rank, the number of columns and the element type of ``X``; it does
not check values: a row holding NaN or infinity gives NaN (or infinite) scores and an
arbitrary label instead of the ``ValueError`` that ``decision_function`` raises. Check the
rows before running the graph when they may hold such values.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .exceptions import NotFittedError

__all__ = ["to_onnx", "DEFAULT_OPSET", "MIN_OPSET"]

MIN_OPSET = 13            # ReduceSum and Squeeze take their axes as an input from opset 13
DEFAULT_OPSET = 17        # well within what the extra's oldest onnxruntime (1.19) runs


class _Graph:
    """Nodes and initializers under construction, with unique names."""

    def __init__(self):
        self.nodes = []
        self.inits = []
        self._n = 0

    def name(self, stem):
        self._n += 1
        return f"{stem}_{self._n}"

    def const(self, stem, value, dtype=np.float64):
        arr = np.asarray(value, dtype=dtype)
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def op(self, op_type, inputs, stem=None, outputs=None, **attrs):
        out = outputs or [self.name(stem or op_type.lower())]
        self.nodes.append(helper.make_node(op_type, list(inputs), out, name=self.name(op_type),
                                           **attrs))
        return out[0] if len(out) == 1 else out


def _binary_parts(est):
    """``est``'s decision function as ``("linear", w, b)`` or
    ``("kernel", kernel, (gamma, degree, coef0), V, c, b)``, from its public fitted
    attributes; rows with a zero coefficient are dropped (the compiled scoring skips them)."""
    if not _has(est, "intercept_"):
        raise TypeError(
            f"{type(est).__name__} has no intercept_ (nor support vectors and dual_coef_): "
            "to_onnx exports fastbudget's own learners and OneVsRestClassifier models of them.")
    b = float(np.asarray(est.intercept_, dtype=np.float64).reshape(-1)[0])
    if _has(est, "coef_"):
        w = np.asarray(est.coef_, dtype=np.float64).reshape(-1)
        return ("linear", w, b)
    V = None
    for name in ("twin_vectors_", "support_vectors_"):
        if _has(est, name):
            V = np.asarray(getattr(est, name), dtype=np.float64)
            break
    if V is None or not _has(est, "dual_coef_"):
        raise TypeError(
            f"{type(est).__name__} has neither coef_ nor support (or twin) vectors with "
            "dual_coef_: to_onnx exports fastbudget's own learners and OneVsRestClassifier "
            "models of them.")
    c = np.asarray(est.dual_coef_, dtype=np.float64).reshape(-1)
    if V.shape[0] != c.shape[0]:
        raise ValueError(f"{type(est).__name__}: {V.shape[0]} vectors but {c.shape[0]} "
                         "coefficients; the model is inconsistent.")
    keep = c != 0.0
    V, c = V[keep], c[keep]
    kernel = est.kernel
    if kernel == "linear":
        return ("linear", V.T @ c if V.shape[0] else np.zeros(V.shape[1]), b)
    if kernel not in ("rbf", "poly"):
        raise ValueError(f"{type(est).__name__} has kernel {kernel!r}; to_onnx knows "
                         "'linear', 'rbf' and 'poly'.")
    gamma = float(est.gamma_) if V.shape[0] else 0.0
    return ("kernel", kernel, (gamma, float(est.degree), float(est.coef0)), V, c, b)


def _has(est, name):
    """Whether ``est`` has the fitted attribute ``name`` (a property that raises
    ``AttributeError`` for this kind of model counts as absent)."""
    try:
        getattr(est, name)
    except AttributeError:
        return False
    return True


def _expansion(g, X, sq_norms, parts):
    """Nodes computing one learner's decision values, shape (n, 1); ``sq_norms()`` gives the
    name of ``sum(X**2, axis=1, keepdims=True)`` (built once, on first use)."""
    if parts[0] == "linear":
        _, w, b = parts
        f = g.op("MatMul", [X, g.const("w", w.reshape(-1, 1))])
        return g.op("Add", [f, g.const("b", b)])
    _, kernel, (gamma, degree, coef0), V, c, b = parts
    if V.shape[0] == 0:           # no support vector left: f = b (shape (n, 1))
        f = g.op("MatMul", [X, g.const("zeros", np.zeros((V.shape[1], 1)))])
        return g.op("Add", [f, g.const("b", b)])
    XV = g.op("MatMul", [X, g.const("VT", V.T.copy())])                    # (n, m)
    if kernel == "rbf":
        # ||x - v||^2 = ||x||^2 + ||v||^2 - 2 <x, v>, clipped at 0 against rounding
        vv = g.const("vv", np.einsum("ij,ij->i", V, V).reshape(1, -1))
        q = g.op("Add", [sq_norms(), vv])
        q = g.op("Sub", [q, g.op("Mul", [XV, g.const("two", 2.0)])])
        q = g.op("Max", [q, g.const("zero", 0.0)])
        K = g.op("Exp", [g.op("Mul", [q, g.const("neg_gamma", -gamma)])])
    else:
        base = g.op("Add", [g.op("Mul", [XV, g.const("gamma", gamma)]), g.const("coef0", coef0)])
        K = g.op("Pow", [base, g.const("degree", degree)])
    f = g.op("MatMul", [K, g.const("c", c.reshape(-1, 1))])
    return g.op("Add", [f, g.const("b", b)])


def _label_tensor(classes):
    """``classes_`` as an ONNX constant: (numpy array, TensorProto element type)."""
    classes = np.asarray(classes)
    kind = classes.dtype.kind
    if kind in "iu":
        return classes.astype(np.int64), TensorProto.INT64
    if kind == "f":
        return classes.astype(np.float64), TensorProto.DOUBLE
    if kind == "b":
        return classes.astype(bool), TensorProto.BOOL
    if kind in "UO" and all(isinstance(v, str) for v in classes.tolist()):
        return np.array(classes.tolist(), dtype=object), TensorProto.STRING
    raise TypeError(f"classes_ of dtype {classes.dtype} cannot be an ONNX tensor; to_onnx "
                    "exports integer, float, bool and text labels.")


def _scaler_arrays(scaler, d):
    """``(mean, scale, clip)`` of a scaler (``StreamingStandardizer`` as
    ``fastbudget.load_scaler`` returns, or anything with ``mean_``/``scale_``/``clip``)."""
    if not (hasattr(scaler, "mean_") and hasattr(scaler, "scale_")):
        raise TypeError(f"scaler must be 'auto', None or a fitted standardiser with mean_ and "
                        f"scale_ (fastbudget.load_scaler(path)); got {scaler!r}.")
    mean = np.asarray(scaler.mean_, dtype=np.float64).reshape(-1)
    scale = np.asarray(scaler.scale_, dtype=np.float64).reshape(-1)
    if mean.shape != (d,) or scale.shape != (d,):
        raise ValueError(f"the scaler has {mean.shape[0]} features but the model {d}; give "
                         "the scaler saved with this model.")
    if not (np.isfinite(mean).all() and np.isfinite(scale).all() and (scale > 0).all()):
        raise ValueError("the scaler's mean_ and scale_ must be finite, with scale_ > 0.")
    clip = getattr(scaler, "clip", None)
    return mean, scale, None if clip is None else float(clip)


def _resolve(model, scaler):
    """The fitted estimator and the scaler (or None) to bake in."""
    if isinstance(scaler, str) and scaler != "auto":
        raise ValueError(f"scaler must be 'auto', None or a fitted standardiser; got "
                         f"{scaler!r}.")
    if isinstance(model, (str, bytes, os.PathLike)):
        from .persist import load_model, load_scaler
        path = os.fsdecode(model)
        est = load_model(path, _warn_scaler=False)   # raises FileNotFoundError/ModelFormatError
        if isinstance(scaler, str) and scaler == "auto":
            try:
                scaler = load_scaler(path)
            except FileNotFoundError:
                scaler = None
        return est, scaler
    if isinstance(scaler, str) and scaler == "auto":
        scaler = None
    return model, scaler


def to_onnx(model, *, scaler="auto", target_opset=None, dtype=np.float64,
            probabilities=True):
    """ONNX graph of a fitted model's ``decision_function``, ``predict`` and
    ``predict_proba``.

    Parameters
    ----------
    model : BudgetClassifier, OneVsRestClassifier, str or os.PathLike
        A fitted fastbudget classifier (any learner, binary or one-vs-rest), or the path of a
        model file (read with ``fastbudget.load``).
    scaler : "auto", None or StreamingStandardizer, default="auto"
        Standardisation baked in front of the model (``Sub``, ``Div`` and, when the scaler
        clips, ``Clip``), so that the graph takes the rows the model's user has, as
        ``fastbudget predict`` does. ``"auto"``: for a path, the scaler ``fastbudget train``
        saved beside the model (``fastbudget.load_scaler``), none if there is no such file or
        the model was trained without standardisation; for an estimator, none. None: no
        standardisation.
    target_opset : int, optional
        Opset of the default ONNX domain, at least 13 (``MIN_OPSET``); default 17.
    dtype : numpy.float64 or numpy.float32, default=numpy.float64
        Element type of the input ``X``. The graph computes in float64 either way (a float32
        input is cast first).
    probabilities : bool, default=True
        Include the output ``probabilities`` (``predict_proba``). ONNX Runtime computes
        every output of a graph whichever are fetched, and the map costs about a tenth of
        the scoring (TVM B = 100, d = 4, 10^5 rows: 86-91 ms against 77-80 without it, one
        thread): False leaves it out.

    Returns
    -------
    onnx.ModelProto
        Input ``X`` (n, n_features); outputs ``label`` (n,), ``scores`` ((n,) binary,
        (n, n_classes) one-vs-rest) and, with ``probabilities``, ``probabilities`` (n,
        n_classes). Checked with ``onnx.checker.check_model``.

    Raises
    ------
    NotFittedError
        ``model`` is not fitted.
    TypeError
        ``model`` is not a fastbudget classifier, or its labels cannot be an ONNX tensor.
    ValueError
        A bad ``target_opset``, ``dtype`` or scaler (another number of features, a scale
        that is not positive and finite); a ``TypeError`` for a scaler without ``mean_`` and
        ``scale_``.
    FileNotFoundError, fastbudget.ModelFormatError
        ``model`` is a path that does not exist or is not a fastbudget model file.

    Notes
    -----
    ONNX Runtime does not check values: rows holding NaN or infinity give NaN (or infinite)
    scores and an arbitrary label, where ``decision_function`` raises ``ValueError``.

    Examples
    --------
    >>> import numpy as np, onnxruntime as ort
    >>> from fastbudget import PerceptronClassifier
    >>> from fastbudget.onnx import to_onnx
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = PerceptronClassifier(budget=50, kernel="rbf", gamma=1.0).fit(X, y)
    >>> sess = ort.InferenceSession(to_onnx(clf).SerializeToString(),
    ...                             providers=["CPUExecutionProvider"])
    >>> label, scores = sess.run(["label", "scores"], {"X": X})
    >>> bool((label == clf.predict(X)).all()), bool(np.allclose(scores, clf.decision_function(X)))
    (True, True)
    """
    from .base import BudgetClassifier

    opset = DEFAULT_OPSET if target_opset is None else target_opset
    if isinstance(opset, bool) or not isinstance(opset, (int, np.integer)) or not (
            MIN_OPSET <= int(opset) <= onnx.defs.onnx_opset_version()):
        raise ValueError(f"target_opset must be an integer in [{MIN_OPSET}, "
                         f"{onnx.defs.onnx_opset_version()}] (the installed onnx's newest); "
                         f"got {target_opset!r}.")
    opset = int(opset)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.float64), np.dtype(np.float32)):
        raise ValueError(f"dtype must be numpy.float64 or numpy.float32; got {dtype!r}.")
    est, scaler = _resolve(model, scaler)
    if not isinstance(est, BudgetClassifier):
        raise TypeError(f"to_onnx expects a fitted fastbudget classifier or a model file; got "
                        f"{type(est).__name__}.")
    if not est.__sklearn_is_fitted__():
        raise NotFittedError(f"This {type(est).__name__} is not fitted yet: fit it (or give a "
                             "saved model file) before exporting it to ONNX.")
    d = int(est.n_features_in_)
    learners = list(getattr(est, "estimators_", [est]))
    parts = [_binary_parts(e) for e in learners]
    classes, label_type = _label_tensor(est.classes_)

    g = _Graph()
    X = "X"
    if dt == np.float32:
        X = g.op("Cast", [X], "X_double", to=TensorProto.DOUBLE)
    baked = "none"
    if scaler is not None:
        mean, scale, clip = _scaler_arrays(scaler, d)
        X = g.op("Div", [g.op("Sub", [X, g.const("mean", mean)]), g.const("scale", scale)])
        baked = "standardise"
        if clip is not None:
            X = g.op("Clip", [X, g.const("clip_lo", -clip), g.const("clip_hi", clip)])
            baked = f"standardise, clip {clip!r}"

    cache = []

    def sq_norms():
        if not cache:
            axes = g.const("axis1", [1], np.int64)
            cache.append(g.op("ReduceSum", [g.op("Mul", [X, X]), axes], keepdims=1))
        return cache[0]

    cols = [_expansion(g, X, sq_norms, p) for p in parts]
    if len(cols) == 1:
        g.op("Squeeze", [cols[0], g.const("axis1", [1], np.int64)], outputs=["scores"])
        idx = g.op("Cast", [g.op("Greater", ["scores", g.const("zero", 0.0)])],
                   to=TensorProto.INT64)
        out_shape = ["N"]
    else:
        g.op("Concat", cols, outputs=["scores"], axis=1)
        idx = g.op("ArgMax", ["scores"], axis=1, keepdims=0, select_last_index=0)
        out_shape = ["N", len(cols)]
    g.op("Gather", [_add_classes(g, classes), idx], outputs=["label"], axis=0)
    outputs = [helper.make_tensor_value_info("label", label_type, ["N"]),
               helper.make_tensor_value_info("scores", TensorProto.DOUBLE, out_shape)]
    if probabilities:
        _probabilities(g, "scores", _calibration_map(est, learners), len(cols))
        outputs.append(helper.make_tensor_value_info("probabilities", TensorProto.DOUBLE,
                                                     ["N", len(est.classes_)]))

    graph = helper.make_graph(
        g.nodes, f"fastbudget_{type(est).__name__}",
        [helper.make_tensor_value_info("X", TensorProto.DOUBLE if dt == np.float64
                                       else TensorProto.FLOAT, ["N", d])],
        outputs,
        g.inits)
    from . import __version__
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="fastbudget", producer_version=__version__,
                          doc_string=f"fastbudget {type(est).__name__}: decision_function as "
                                     "'scores', predict as 'label'"
                                     + (", predict_proba as 'probabilities'."
                                        if probabilities else "."))
    kind = (f"one-vs-rest over {len(learners)} {type(learners[0]).__name__}"
            if len(learners) > 1 else type(learners[0]).__name__)
    helper.set_model_props(m, {"fastbudget.model": kind, "fastbudget.n_features": str(d),
                               "fastbudget.input_transform": baked})
    onnx.checker.check_model(m, full_check=True)
    return m


def _calibration_map(est, learners):
    """The calibration map ``predict_proba`` applies: the binary learner's own, or for
    three or more one-vs-rest learners the one fitted on the sum of their statistics."""
    from .calibration import pooled_map

    if len(learners) == 1:
        return learners[0]._calibration()
    return pooled_map([e.__dict__.get("_calibration_stats") for e in learners])


def _map_tables(cmap):
    """Lookup tables of a calibration map for the graph. The map is linear in ``u =
    asinh(f)`` between consecutive knots and flat beyond the outer ones; with ``c(u)`` the
    number of knots at or below ``u``, it is ``A[c] + B[c] u``. ``c`` comes from the grid of
    bins the knots were made on: every knot lies in one bin, so ``c(u)`` is the number of
    knots in bins before ``u``'s (``before``) plus those of its own bin at or below ``u``
    (``inbin``: at most three per bin, padded with +inf)."""
    from .calibration import N_BINS, U_MAX

    ku = np.asarray(cmap.knots_u, dtype=np.float64)
    kp = np.asarray(cmap.knots_p, dtype=np.float64)
    M = ku.shape[0]
    A = np.empty(M + 1)
    B = np.zeros(M + 1)
    A[0], A[M] = kp[0], kp[M - 1]
    for c in range(1, M):
        j = c - 1
        du = ku[j + 1] - ku[j]
        slope = (kp[j + 1] - kp[j]) / du if du > 0.0 else 0.0
        A[c] = kp[j] - slope * ku[j]
        B[c] = slope
    h = 2.0 * U_MAX / N_BINS
    kb = np.clip(np.floor(ku / h) + N_BINS // 2, 0, N_BINS - 1).astype(np.int64)
    before = np.searchsorted(kb, np.arange(N_BINS), side="left").astype(np.int64)
    width = max(1, int(np.bincount(kb, minlength=N_BINS).max()))
    inbin = np.full((N_BINS, width), np.inf)
    for b in range(N_BINS):
        own = ku[kb == b]
        inbin[b, :own.shape[0]] = own
    return A, B, before, inbin, h


def _probabilities(g, scores, cmap, n_learners):
    """Nodes giving ``predict_proba`` from the ``scores`` tensor ((N,) or (N, K)): the map
    of :func:`_map_tables` on each score, then ``[1 - p, p]`` (binary) or each row divided by
    its sum (one-vs-rest), as ``fastbudget.calibration.CalibrationMap.__call__`` and
    ``OneVsRestClassifier.predict_proba``."""
    from .calibration import N_BINS, P_MIN, TIE_BREAK

    A, B, before, inbin, h = _map_tables(cmap)
    zero, one = g.const("zero", 0.0), g.const("one", 1.0)
    axis1 = g.const("axis1", [1], np.int64)
    # u = asinh(f) = sign(f) log(|f| + sqrt(f^2 + 1)) (ONNX Runtime has no float64 Asinh;
    # the absolute error, about 1e-16, is what the map's linear pieces see)
    a = g.op("Abs", [scores])
    v = g.op("Log", [g.op("Add", [a, g.op("Sqrt", [g.op("Add", [g.op("Mul", [a, a]),
                                                                one])])])])
    u = g.op("Where", [g.op("Less", [scores, zero]), g.op("Neg", [v]), v])
    # the bin of u (a NaN score looks up bin 0, and its probability is NaN below)
    u0 = g.op("Where", [g.op("IsNaN", [u]), zero, u])
    b = g.op("Clip", [g.op("Add", [g.op("Floor", [g.op("Div", [u0, g.const("h", h)])]),
                                   g.const("half", float(N_BINS // 2))]),
                      g.const("b_lo", 0.0), g.const("b_hi", float(N_BINS - 1))])
    b = g.op("Cast", [b], to=TensorProto.INT64)
    last = g.const("axis_last", [-1], np.int64)
    own = g.op("Gather", [g.const("inbin", inbin), b], axis=0)            # (..., width)
    at_or_below = g.op("LessOrEqual", [own, g.op("Unsqueeze", [u0, last])])
    c = g.op("Add", [g.op("Gather", [g.const("before", before, np.int64), b], axis=0),
                     g.op("ReduceSum", [g.op("Cast", [at_or_below], to=TensorProto.INT64),
                                        last], keepdims=0)])
    m = g.op("Add", [g.op("Gather", [g.const("map_a", A), c], axis=0),
                     g.op("Mul", [g.op("Gather", [g.const("map_b", B), c], axis=0), u])])
    tie = g.op("Mul", [g.const("tie", TIE_BREAK),
                       g.op("Add", [one,
                                    g.op("Div", [u, g.op("Add", [one,
                                                                 g.op("Abs", [u])])])])])
    p = g.op("Add", [g.op("Mul", [g.const("keep", 1.0 - 2.0 * TIE_BREAK), m]), tie])
    p = g.op("Clip", [p, g.const("p_lo", P_MIN), g.const("p_hi", 1.0 - P_MIN)])
    # the sign of f decides, as predict: p > 1/2 exactly when f > 0
    p = g.op("Where", [g.op("Greater", [scores, zero]),
                       g.op("Max", [p, g.const("above_half", 0.5 + 1e-12)]),
                       g.op("Min", [p, g.const("half_p", 0.5)])])
    if n_learners == 1:
        col = g.op("Unsqueeze", [p, axis1])
        return g.op("Concat", [g.op("Sub", [one, col]), col],
                    outputs=["probabilities"], axis=1)
    total = g.op("ReduceSum", [p, axis1], keepdims=1)
    return g.op("Div", [p, total], outputs=["probabilities"])


def _add_classes(g, classes):
    name = g.name("classes")
    if classes.dtype == object:
        t = helper.make_tensor(name, TensorProto.STRING, classes.shape,
                               [s.encode("utf-8") for s in classes.tolist()])
    else:
        t = numpy_helper.from_array(classes, name)
    g.inits.append(t)
    return name
