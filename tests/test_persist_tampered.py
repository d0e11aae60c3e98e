"""load refuses a model file edited by hand or by a buggy writer and re-signed (its checksum
recomputed, as anyone can): bad hyper-parameters, state arrays of the wrong shape, indices and
counters that point outside the arrays. Each is a ``ModelFormatError`` saying what is wrong,
never a model that would make the compiled code read or write outside its arrays."""
import json
import math

import numpy as np
import pytest

import fastbudget.persist as persist
from _estimators import ESTIMATORS
from _helpers import fitted_on_stream as _fitted, stream
from fastbudget.persist import ModelFormatError, load_model


def _resign(path, mutate_meta=None, arrays_update=None):
    """Rewrite a saved file with edited metadata / arrays, manifest and checksum made to
    match (what someone editing a file by hand, or a buggy writer, produces)."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays.pop(persist.METADATA_KEY).tobytes())
    for k, a in (arrays_update or {}).items():
        arrays[k] = a
        meta["arrays"][k] = {"shape": list(a.shape), "dtype": a.dtype.str}
    if mutate_meta:
        mutate_meta(meta)
    body = {k: v for k, v in meta.items() if k != "sha256"}
    meta["sha256"] = persist._digest(body, arrays)
    blob = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **{persist.METADATA_KEY: blob}, **arrays)


# ---------------------------------------------------------------------- hyper-parameters
_BAD_PARAMS = {"kernel": "x", "budget": -3, "C": -1.0, "gamma": -1.0, "lambda_": math.nan,
               "capacity": -3, "total_budget": 1, "maintenance": "x"}


def _bad_param_cases():
    for id_, factory in ESTIMATORS:
        params = factory().get_params(deep=False)
        for name, bad in _BAD_PARAMS.items():
            if name in params:
                yield pytest.param(factory, (name,), bad, id=f"{id_}-{name}")
        inner = params.get("estimator")
        if inner is not None:
            for name, bad in _BAD_PARAMS.items():
                if name in inner.get_params(deep=False) and name != "budget":
                    yield pytest.param(factory, ("estimator", name), bad,
                                       id=f"{id_}-estimator.{name}")


def _encode(v):
    return {"__float__": "nan"} if isinstance(v, float) and math.isnan(v) else v


@pytest.mark.parametrize("factory, where, bad", list(_bad_param_cases()))
def test_invalid_stored_hyper_parameter_refused_at_load(factory, where, bad, tmp_path):
    """A file whose hyper-parameters fit would refuse (kernel 'x', budget -3, lambda_ NaN,
    also those of a one-vs-rest template) is refused by load with a ModelFormatError, not
    loaded into a model that fails later with a KeyError in predict, an IndexError in
    partial_fit or non-finite decision values."""
    est, X, y = _fitted(factory)
    path = tmp_path / "m.npz"
    est.save(path)

    def edit(meta):
        params = meta["params"]
        for key in where[:-1]:
            params = params[key]["params"]
        params[where[-1]] = _encode(bad)

    _resign(path, mutate_meta=edit)
    with pytest.raises(ModelFormatError, match=f"Cannot load .*{where[-1]}"):
        load_model(path)


# ---------------------------------------------------------------------- state layout
def _is_baseline(est):
    from fastbudget.estimators.baselines import _StreamingMixin
    return isinstance(est, _StreamingMixin)


def _state_array_cases(kinds):
    """(factory, state array name) for every learner whose saved state holds that array."""
    for id_, factory in ESTIMATORS:
        est, _, _ = _fitted(factory)
        if not _is_baseline(est):
            continue
        for name, v in est._get_state().items():
            if isinstance(v, np.ndarray) and v.ndim >= 1 and v.shape[0] > 1 and v.dtype.kind in kinds:
                yield pytest.param(factory, name, id=f"{id_}-{name}")


@pytest.mark.parametrize("factory, name", list(_state_array_cases("fiub")))
def test_baseline_state_array_of_wrong_shape_refused(factory, name, tmp_path):
    """A state array one row short of what the parameters give (a file edited, or written
    for other parameters) is refused at load, not loaded into a model whose predict fails
    with a matmul error or whose compiled update reads past the array."""
    est, X, y = _fitted(factory)
    path = tmp_path / "m.npz"
    est.save(path)
    a = est._get_state()[name]
    _resign(path, arrays_update={"state." + name: np.ascontiguousarray(a[:-1])})
    with pytest.raises(ModelFormatError, match=f"Cannot load .*{name}"):
        load_model(path)


@pytest.mark.parametrize("factory", [pytest.param(f, id=i) for i, f in ESTIMATORS
                                     if _is_baseline(f())])
@pytest.mark.parametrize("pos, value", [(0, 10**6), (0, -1)], ids=["big", "negative"])
def test_baseline_counter_outside_the_arrays_refused(factory, pos, value, tmp_path):
    """``_istate[0]`` counts the live rows of the preallocated arrays; the compiled updates
    index them without bounds checks, so a file with a count beyond them crashed the
    interpreter (segmentation fault) at the first predict, and a negative one wrote at
    negative indices. load refuses both."""
    est, X, y = _fitted(factory)
    path = tmp_path / "m.npz"
    est.save(path)
    ist = est._get_state()["_istate"].copy()
    ist[pos] = value
    _resign(path, arrays_update={"state._istate": ist})
    with pytest.raises(ModelFormatError, match="Cannot load .*_istate"):
        load_model(path)


def test_unbounded_perceptron_that_grew_still_loads(tmp_path):
    """The layout check allows the store of a budget=None kernel perceptron to have grown."""
    from fastbudget.estimators.baselines import PerceptronClassifier
    X, y = stream(3, n=600)
    est = PerceptronClassifier(budget=None, kernel="rbf").fit(X, y)
    assert est._SV.shape[0] > 64
    est.save(tmp_path / "m.npz")
    back = load_model(tmp_path / "m.npz")
    assert back.decision_function(X).tobytes() == est.decision_function(X).tobytes()


def _engine_cases():
    for id_, factory in ESTIMATORS:
        est, _, _ = _fitted(factory)
        keys = [k[:-len("S_idx")] for k in est._get_state() if k.endswith("S_idx")]
        if keys:
            yield pytest.param(factory, keys[0], id=id_)


@pytest.mark.parametrize("factory, prefix", list(_engine_cases()))
@pytest.mark.parametrize("field, index, value", [
    ("S_idx", 0, 10**6), ("spos", 0, 10**6), ("spos", 0, -7), ("ist", 1, 10**6),
    ("ist", 2, -1), ("status", 0, 99)], ids=lambda v: str(v))
def test_engine_index_outside_the_arrays_refused(factory, prefix, field, index, value,
                                                 tmp_path):
    """The exact-SVM engine's index arrays (margin set S_idx, positions spos, the margin
    set size and high-water mark in ist, slot status) drive compiled loops without bounds
    checks: a file holding an index beyond the arrays crashed the interpreter (segmentation
    fault) at the first partial_fit. load refuses it."""
    est, X, y = _fitted(factory)
    path = tmp_path / "m.npz"
    est.save(path)
    a = est._get_state()[prefix + field].copy()
    a[index] = value
    _resign(path, arrays_update={"state." + prefix + field: a})
    with pytest.raises(ModelFormatError, match="Cannot load .*engine"):
        load_model(path)


@pytest.mark.parametrize("factory, prefix", list(_engine_cases()))
def test_engine_array_of_wrong_shape_refused(factory, prefix, tmp_path):
    est, X, y = _fitted(factory)
    path = tmp_path / "m.npz"
    est.save(path)
    K = est._get_state()[prefix + "K"]
    _resign(path, arrays_update={"state." + prefix + "K": np.ascontiguousarray(K[:-1])})
    with pytest.raises(ModelFormatError, match="Cannot load"):
        load_model(path)


_TVM = dict(ESTIMATORS)["tvm"]


@pytest.mark.parametrize("field, index, value", [
    ("nn_idx", 0, 10**6), ("nn2_idx", 3, -5), ("ist", 0, 10**6), ("ist", 6, 10**6),
    ("ist", 7, -1), ("active", 2, 7)], ids=lambda v: str(v))
def test_tvm_twin_index_outside_the_arrays_refused(field, index, value, tmp_path):
    """TVM's twin arrays (nearest-merge-neighbour indices, the twin count, the spare twin
    indices, the active flags) drive compiled loops without bounds checks: a file holding
    twin_nn_idx = 10**6 crashed the interpreter at the first partial_fit. load refuses it."""
    est, X, y = _fitted(_TVM)
    path = tmp_path / "m.npz"
    est.save(path)
    a = est._get_state()["twin_" + field].copy()
    a[index] = value
    _resign(path, arrays_update={"state.twin_" + field: a})
    with pytest.raises(ModelFormatError, match="Cannot load .*twin"):
        load_model(path)


def test_tvm_twin_array_of_wrong_shape_refused(tmp_path):
    est, X, y = _fitted(_TVM)
    path = tmp_path / "m.npz"
    est.save(path)
    Q = est._get_state()["twin_Q"]
    _resign(path, arrays_update={"state.twin_Q": np.ascontiguousarray(Q[:-1])})
    with pytest.raises(ModelFormatError, match="Cannot load .*twin array 'Q'"):
        load_model(path)
    est.save(path)                                  # the untouched file loads and agrees
    assert np.array_equal(load_model(path).decision_function(X), est.decision_function(X))


_STREAMSVM_VARIANTS = [
    dict(), dict(lookahead=5), dict(n_balls=3), dict(kernel="rbf", capacity=300),
    dict(kernel="rbf", capacity=300, lookahead=4, gamma="scale"),
    dict(kernel="poly", capacity=300, fit_intercept=False),
    dict(kernel="rbf", capacity=300, method="ball"),
    dict(kernel="rbf", capacity=300, n_balls=3, lookahead=4)]


@pytest.mark.parametrize("kw", _STREAMSVM_VARIANTS, ids=lambda kw: str(kw) or "linear")
def test_streamsvm_state_checked_at_load(kw, tmp_path):
    """StreamSVM's stored configuration must be the one its parameters give, and its arrays
    and counters must fit it: a tampered array shape loaded and then failed with a raw
    matmul error, a core-vector count beyond the capacity reached compiled code. Every
    variant's untouched file still loads and agrees."""
    from fastbudget.estimators.streamsvm import StreamSVMClassifier

    X, y = stream(1, n=240)
    est = StreamSVMClassifier(**kw).fit(X, y)
    path = tmp_path / "m.npz"
    est.save(path)
    assert np.array_equal(load_model(path).decision_function(X), est.decision_function(X))
    state = est._get_state()
    big = next(k for k in ("st_SV", "st_w", "st_Wb") if k in state)
    cases = [{"state." + big: np.ascontiguousarray(state[big][..., :-1])}]
    ist = state["st_ist"].copy()
    ist[0 if "st_SV" in state else 4] = 10**6 if "st_SV" in state else -1
    cases.append({"state.st_ist": ist})
    for update in cases:
        est.save(path)
        _resign(path, arrays_update=update)
        with pytest.raises(ModelFormatError, match="Cannot load"):
            load_model(path)
    est.save(path)
    _resign(path, mutate_meta=lambda m: m["scalars"].__setitem__(
        "state.cfg_capacity", m["scalars"]["state.cfg_capacity"] * 10))
    with pytest.raises(ModelFormatError, match="Cannot load .*capacity"):
        load_model(path)


@pytest.mark.parametrize("id_, key, value", [
    ("span", "work_s_m", np.array([10**6])), ("span", "work_v", np.zeros(3)),
    ("span_lru", "work_age", np.zeros(3, dtype=np.int64)),
    ("svl_incremental", "capacity", 10**6)], ids=lambda v: str(v)[:20])
def test_span_and_sv_incremental_buffers_checked_at_load(id_, key, value, tmp_path):
    """Span's buffers (a saved margin-set size, slot indices, one array per slot) and
    SV-incremental's capacity drive compiled code without bounds checks; a file whose values
    do not fit the engine is refused, and the untouched file loads and agrees."""
    est, X, y = _fitted(dict(ESTIMATORS)[id_])
    path = tmp_path / "m.npz"
    est.save(path)
    assert np.array_equal(load_model(path).decision_function(X), est.decision_function(X))
    if key == "capacity":
        _resign(path, mutate_meta=lambda m: m["scalars"].__setitem__("state.capacity", value))
    else:
        _resign(path, arrays_update={"state." + key: value})
    with pytest.raises(ModelFormatError, match="Cannot load"):
        load_model(path)


def test_span_snapshot_counters_checked_as_the_engine_s(tmp_path):
    """Span's snapshot buffer is copied back into the engine, so its counters are checked
    as the engine's own (a margin-set size beyond the engine would reach compiled code)."""
    est, X, y = _fitted(dict(ESTIMATORS)["span"])
    path = tmp_path / "m.npz"
    est.save(path)
    ist = est._get_state()["work_s_ist"].copy()
    ist[1] = 10**6
    _resign(path, arrays_update={"state.work_s_ist": ist})
    with pytest.raises(ModelFormatError, match="Cannot load .*margin set size"):
        load_model(path)
