"""Bad input, bad parameters, transactional updates and determinism, for every estimator.

Every failing call must raise the documented exception with a message that says what is wrong,
and leave the model bit-identical to what it was before the call.
"""
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from _dummy import DummyBudgetPerceptron
from _estimators import ESTIMATORS, FACTORIES, IDS, KNOWN_FAILURES, is_binary
from _helpers import Table, assert_same_state, live_arrays, model_state, stream
from fastbudget.base import NotFittedError
from fastbudget.multiclass import OneVsRestClassifier


def _params(ids_factories):
    """pytest params; known learner failures (reported to their owners) are strict xfails."""
    out = []
    for id_, factory in ids_factories:
        out.append(pytest.param(id_, factory, id=id_))
    return out


def _xfail_known(request, id_, check):
    reason = KNOWN_FAILURES.get((id_, check))
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))


def _data(est, seed=0, n=200):
    return stream(seed, n=n, n_classes=2 if is_binary(est) else 4)


def _fitted(factory, seed=0):
    est = factory()
    X, y = _data(est, seed)
    est.fit(X, y)
    return est, X, y


# ---------------------------------------------------------------------- bad input
BAD_X = {
    "nan": (lambda X: _set(X, 7, 1, np.nan), r"NaN or infinity.*row 7"),
    "inf": (lambda X: _set(X, 3, 0, np.inf), r"NaN or infinity.*row 3"),
    "one_d": (lambda X: X[:, 0], r"Expected a 2-D array.*Reshape"),
    "empty_rows": (lambda X: X[:0], r"0 sample\(s\)"),
    "no_features": (lambda X: X[:, :0], r"0 feature\(s\)"),
    "non_numeric": (lambda X: np.where(X > 0, "a", "b"), r"must be numeric"),
    "complex": (lambda X: X + 1j, r"Complex data not supported"),
    "three_d": (lambda X: X[:, :, None], r"2-D array for X, got 3 dimensions"),
}


def _set(X, i, j, v):
    X = X.copy()
    X[i, j] = v
    return X


@pytest.mark.parametrize("case", sorted(BAD_X))
@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_bad_X_in_fit_and_partial_fit(id_, factory, case):
    make_bad, msg = BAD_X[case]
    est = factory()
    X, y = _data(est)
    Xb = make_bad(X)
    yb = y[: Xb.shape[0]] if Xb.ndim >= 1 else y
    with pytest.raises(ValueError, match=msg):
        est.fit(Xb, yb)
    assert not est.__sklearn_is_fitted__()
    est.fit(X, y)
    before = model_state(est)
    with pytest.raises(ValueError, match=msg):
        est.partial_fit(Xb, yb)
    assert_same_state(model_state(est), before)
    with pytest.raises(ValueError, match=msg):
        est.fit(Xb, yb)  # a failed fit keeps the previous model
    assert_same_state(model_state(est), before)


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_wrong_number_of_features(id_, factory):
    est, X, y = _fitted(factory)
    before = model_state(est)
    Xw = np.c_[X, X[:, :1]]
    with pytest.raises(ValueError, match=r"X has 4 features, but \w+ is expecting 3 features"):
        est.partial_fit(Xw, y)
    for method in ("predict", "decision_function"):
        with pytest.raises(ValueError, match=r"X has 4 features, but \w+ is expecting 3"):
            getattr(est, method)(Xw)
    assert_same_state(model_state(est), before)


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_predict_before_fit(id_, factory):
    est = factory()
    X, _ = _data(est)
    for method in ("predict", "decision_function", "score"):
        args = (X, np.zeros(len(X))) if method == "score" else (X,)
        with pytest.raises(NotFittedError, match="not fitted yet. Call 'fit' or 'partial_fit'"):
            getattr(est, method)(*args)


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_one_class_on_first_fit(id_, factory):
    est = factory()
    X, _ = _data(est)
    with pytest.raises(ValueError, match=r"Only one class \(\[1\]\).*classes=\[neg, pos\]"):
        est.fit(X, np.ones(len(X), dtype=int))
    with pytest.raises(ValueError, match=r"Only one class"):
        est.partial_fit(X, np.ones(len(X), dtype=int))
    assert not est.__sklearn_is_fitted__()
    # with classes= a one-class first chunk is fine
    est.partial_fit(X, np.ones(len(X), dtype=int), classes=np.unique(_data(est)[1]))
    assert est.__sklearn_is_fitted__()


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_third_class_and_unseen_label(request, id_, factory):
    est = factory()
    X, y = _data(est)
    if is_binary(est):
        with pytest.raises(ValueError, match=r"Only binary classification is supported.*"
                                             r"got 3 classes \(0, 1, 2\)\. .*OneVsRest"):
            est.fit(X, np.arange(len(X)) % 3)
        with pytest.raises(ValueError, match=r"got 7 classes \(0, 1, 2, 3, 4, \.\.\.\)"):
            est.fit(X, np.arange(len(X)) % 7)
    est.fit(X, y)
    before = model_state(est)
    y_bad = y.copy()
    y_bad[11] = 77
    with pytest.raises(ValueError, match=r"label 77 \(row 11\) not among the classes"):
        est.partial_fit(X, y_bad)
    assert_same_state(model_state(est), before)
    with pytest.raises(ValueError, match="differs from the classes of the first call"):
        est.partial_fit(X, y, classes=[0, 1, 5, 6, 7])
    assert_same_state(model_state(est), before)


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_bad_labels(id_, factory):
    est = factory()
    X, y = _data(est)
    yf = y.astype(float)
    yf[4] = np.nan
    with pytest.raises(ValueError, match=r"Input y contains NaN or infinity \(first at row 4\)"):
        est.fit(X, yf)
    with pytest.raises(ValueError, match=r"Unknown label type: continuous"):
        est.fit(X, y + 0.5)
    with pytest.raises(ValueError, match=r"X has 200 rows but y has 199 labels"):
        est.fit(X, y[:-1])
    with pytest.raises(ValueError, match=r"requires y to be passed"):
        est.fit(X, None)
    with pytest.raises(ValueError, match=r"sample_weight must be finite and non-negative"):
        est.fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match=r"at least one non-zero"):
        est.fit(X, y, sample_weight=np.zeros(len(y)))
    assert not est.__sklearn_is_fitted__()


# ---------------------------------------------------------------------- bad parameters
BAD_PARAMS = [
    ("budget", 1, r"budget must be >= 2"),
    ("budget", 0, r"budget must be >= 2"),
    ("budget", 2.5, r"budget must be a whole number"),
    ("C", 0.0, r"C must be > 0"),
    ("C", -1.0, r"C must be > 0"),
    ("C", np.inf, r"C must be finite"),
    ("gamma", 0.0, r"gamma must be > 0"),
    ("gamma", -2.0, r"gamma must be > 0"),
    ("gamma", "wide", r"gamma must be a real number"),
    ("kernel", "sigmoid", r"Unknown kernel 'sigmoid'"),
]


def _param_cases():
    out = []
    for id_, factory in ESTIMATORS:
        names = factory()._get_param_names()
        for name, value, msg in BAD_PARAMS:
            if name in names:
                marks = ()
                reason = KNOWN_FAILURES.get((id_, f"param:{name}={value!r}"))
                if reason:
                    marks = (pytest.mark.xfail(reason=reason, strict=True),)
                out.append(pytest.param(id_, factory, name, value, msg, marks=marks,
                                        id=f"{id_}-{name}={value!r}"))
    return out


@pytest.mark.parametrize("id_,factory,name,value,msg", _param_cases())
def test_bad_parameter_rejected_at_fit(id_, factory, name, value, msg):
    est = factory()
    X, y = _data(est)
    est.set_params(**{name: value})  # __init__/set_params store only (scikit-learn rule)
    with pytest.raises(ValueError, match=msg):
        est.fit(X, y)
    assert not est.__sklearn_is_fitted__()
    est2 = factory().set_params(**{name: value})
    with pytest.raises(ValueError, match=msg):
        est2.partial_fit(X, y)
    assert not est2.__sklearn_is_fitted__()


def _inner(est):
    return getattr(est, "estimator", est)


_WITH_GAMMA = [(i, f) for i, f in ESTIMATORS if "gamma" in _inner(f())._get_param_names()]


def test_gamma_learners_are_listed():
    """The learners without gamma are the primal ones (a guard on the selection below)."""
    without = sorted(set(IDS) - {i for i, _ in _WITH_GAMMA})
    assert without and len(_WITH_GAMMA) > len(without)
    for i in without:
        assert "kernel" not in _inner(FACTORIES[i]())._get_param_names(), i


@pytest.mark.parametrize("id_,factory", _params(_WITH_GAMMA))
def test_bad_gamma_string_lists_the_strings_allowed(id_, factory):
    """gamma='Scale' (a typo) is refused with the strings gamma takes ('scale', 'auto'):
    the message said only 'gamma must be a real number', as if no string were allowed,
    while the docstrings and scikit-learn's SVC take both."""
    est = factory()
    inner = _inner(est)
    X, y = _data(est)
    inner.set_params(gamma="Scale")
    with pytest.raises(ValueError, match=r"gamma must be a real number or one of .*'scale'.*; "
                                         r"got 'Scale'") as info:
        est.fit(X, y)
    assert "'auto'" in str(info.value)


def test_ovr_budget_errors():
    X, y = stream(0, n_classes=4)
    with pytest.raises(ValueError, match=r"total_budget=6 is too small for 4.*total_budget >= 8"):
        OneVsRestClassifier(DummyBudgetPerceptron(), total_budget=6).fit(X, y)
    with pytest.raises(ValueError, match="estimator must be a fastbudget binary learner"):
        OneVsRestClassifier(None).fit(X, y)
    with pytest.raises(ValueError, match=r"total_budget must be >= 2"):
        OneVsRestClassifier(DummyBudgetPerceptron(), total_budget=1).fit(X, y)


# ---------------------------------------------------------------------- transactions
@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_chunk_with_one_bad_row_is_not_half_applied(id_, factory):
    est, X, y = _fitted(factory)
    X2, y2 = _data(est, seed=9)
    before = model_state(est)
    X2[57, 2] = np.nan
    with pytest.raises(ValueError, match=r"row 57, column 2"):
        est.partial_fit(X2, y2)
    assert_same_state(model_state(est), before)
    # the same chunk without the bad row is learned as usual afterwards
    ok = np.arange(len(X2)) != 57
    est.partial_fit(X2[ok], y2[ok])
    ref = factory().fit(X, y).partial_fit(X2[ok], y2[ok])
    assert_same_state(model_state(est), model_state(ref))


def test_numerical_failure_mid_chunk_rolls_back():
    X, y = stream(1)
    est = DummyBudgetPerceptron(budget=10).fit(X[:100], y[:100])
    before = model_state(est)
    est.set_params(fail_after=150)  # fails at row 49 of the next chunk, state half-updated
    with pytest.raises(FloatingPointError, match="simulated"):
        est.partial_fit(X[100:], y[100:])
    assert_same_state(model_state(est), before)
    est.set_params(fail_after=None)
    est.partial_fit(X[100:], y[100:])
    ref = DummyBudgetPerceptron(budget=10).fit(X[:100], y[:100]).partial_fit(X[100:], y[100:])
    assert_same_state(model_state(est), model_state(ref))


def test_numerical_failure_in_fit_keeps_previous_model_and_first_call_leaves_unfitted():
    X, y = stream(2)
    est = DummyBudgetPerceptron().fit(X, y)
    before = model_state(est)
    est.set_params(fail_after=20)
    with pytest.raises(FloatingPointError):
        est.fit(X, y)
    assert_same_state(model_state(est), before)
    fresh = DummyBudgetPerceptron(fail_after=5)
    with pytest.raises(FloatingPointError):
        fresh.partial_fit(X, y)
    assert not fresh.__sklearn_is_fitted__()
    assert set(vars(fresh)) == set(fresh._get_param_names())


def test_ovr_failure_in_a_later_learner_rolls_back_all_learners():
    X, y = stream(3, n_classes=4)
    est = OneVsRestClassifier(DummyBudgetPerceptron(budget=10), total_budget=40).fit(X, y)
    before = model_state(est)
    # learner 2 fails on this chunk after learners 0 and 1 have learned it
    est.estimators_[2].set_params(fail_after=est.estimators_[2]._n_seen + 30)
    with pytest.raises(FloatingPointError):
        est.partial_fit(X, y)
    assert_same_state(model_state(est), before)


@pytest.mark.parametrize("id_,factory", _params([e for e in ESTIMATORS if is_binary(e[1]())]))
def test_an_interrupt_after_part_of_a_chunk_rolls_every_learner_back(id_, factory,
                                                                     monkeypatch):
    """A KeyboardInterrupt in every binary learner's transaction (the undo buffer of
    ``_state_arrays`` where the learner lists them, else a copy of ``_get_state()``; the
    dummy learner's test before this one covered only it): interrupted after learning part
    of a chunk, by partial_fit and by learn_one, the model is bit for bit as before, and it
    then learns the chunk as a model that was never interrupted. (IncrementalSVC's light
    snapshot restores the live slots and leaves free slots and scratch as the interrupted
    update wrote them, by design: tests/test_engine.py; for it the decision values are
    compared, bit for bit.)"""
    from fastbudget._transaction import TransactionMixin
    est, X, y = _fitted(factory)
    cls = type(est)
    light = cls._save_undo is not TransactionMixin._save_undo

    def state(m):
        return ({"f": np.r_[m.decision_function(X), m.decision_function(X2)]} if light
                else model_state(m))
    X2, y2 = _data(est, seed=9)
    before = state(est)
    orig = cls._partial_fit_encoded

    def interrupted(self, X, y_pm, w):
        orig(self, X[:20], y_pm[:20], w[:20])
        raise KeyboardInterrupt

    monkeypatch.setattr(cls, "_partial_fit_encoded", interrupted)
    with pytest.raises(KeyboardInterrupt):
        est.partial_fit(X2, y2)
    assert_same_state(state(est), before)
    n = 0
    if id_ != "idsvm":      # (IncrementalSVC.learn_one adds the row to its engine directly)
        with pytest.raises(KeyboardInterrupt):
            for n in range(len(y2)):        # (a learn_one that only counts its row passes)
                est.learn_one(X2[n], int(y2[n]))
    monkeypatch.setattr(cls, "_partial_fit_encoded", orig)
    est2, _, _ = _fitted(factory)
    for i in range(n):
        est2.learn_one(X2[i], int(y2[i]))
    assert_same_state(state(est), state(est2))
    est.partial_fit(X2, y2)
    est2.partial_fit(X2, y2)
    assert_same_state(state(est), state(est2))


# ---------------------------------------------------------------------- determinism, fit resets
@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_determinism_and_fit_resets(id_, factory):
    X, y = _data(factory(), seed=5)
    a = factory().fit(X, y)
    b = factory()
    for lo in range(0, len(X), 50):
        b.partial_fit(X[lo:lo + 50], y[lo:lo + 50], classes=np.unique(y))
    c = factory()
    for lo in range(0, len(X), 50):
        c.partial_fit(X[lo:lo + 50], y[lo:lo + 50], classes=np.unique(y))
    assert_same_state(model_state(b), model_state(c))  # same chunks, same seed: identical
    X2, y2 = _data(factory(), seed=6)
    a.fit(X2, y2)  # fit forgets the previous model
    assert_same_state(model_state(a), model_state(factory().fit(X2, y2)))


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_input_not_mutated(id_, factory):
    est = factory()
    X, y = _data(est)
    Xc, yc = X.copy(), y.copy()
    est.fit(X, y)
    est.partial_fit(X, y)
    est.predict(X)
    np.testing.assert_array_equal(X, Xc)
    np.testing.assert_array_equal(y, yc)


def test_transaction_cost_is_one_state_copy():
    """The snapshot copies the budget-sized state once per call (documented cost)."""
    est = DummyBudgetPerceptron(budget=500)
    X, y = stream(7, n=50, d=20)
    est.fit(X, y)
    snap = est._snapshot()
    nbytes = sum(v.nbytes for v in snap[1].values() if isinstance(v, np.ndarray))
    assert nbytes == est._SV.nbytes + est._alpha.nbytes


# ---------------------------------------------------------------------- fuzz
_DTYPES = st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.bool_, np.complex128,
                           np.dtype("U3"), np.dtype("O")])


@st.composite
def _malformed(draw, d):
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim)))
    if ndim == 2 and draw(st.booleans()):
        shape = (shape[0], d)  # right width, maybe bad values
    dtype = np.dtype(draw(_DTYPES))
    if dtype.kind in "fc":
        X = draw(hnp.arrays(dtype, shape, elements=st.floats(allow_nan=True, allow_infinity=True,
                                                             width=32 if dtype == np.float32 else 64)
                            if dtype.kind == "f" else st.complex_numbers(allow_nan=True)))
    elif dtype.kind == "O":
        X = np.empty(shape, dtype=object)
        vals = draw(st.lists(st.one_of(st.floats(), st.text(max_size=2), st.none(), st.integers()),
                             min_size=X.size, max_size=X.size))
        for i, v in enumerate(vals):
            X.flat[i] = v
    else:
        X = draw(hnp.arrays(dtype, shape))
    n = shape[0] if shape else 1
    y = draw(st.one_of(
        hnp.arrays(np.int64, (draw(st.integers(0, 7)),), elements=st.integers(-1, 3)),
        hnp.arrays(np.float64, (n,)),
        st.just(np.zeros(n, dtype=int)),
        st.just(np.arange(n) % 2),
    ))
    return X, y


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_fuzz_partial_fit_malformed_arrays(id_, factory):
    est, X0, y0 = _fitted(factory)
    d = X0.shape[1]
    classes = est.classes_

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_malformed(d))
    def run(case):
        X, y = case
        if np.asarray(y).dtype.kind == "i" and len(classes) > 2:
            y = np.asarray(y) % len(classes)
        before = model_state(est)
        try:
            est.partial_fit(X, y)
        except ValueError:  # documented: ValueError (NonNumericError is also a TypeError)
            assert_same_state(model_state(est), before)
            return
        # accepted: it really was a valid chunk
        Xa = np.asarray(X)
        assert Xa.ndim == 2 and Xa.shape[1] == d and Xa.shape[0] >= 1

    run()
    est.predict(X0)  # still usable


# ---------------------------------------------------------------------- parameters after fit
def _changed_value(est):
    """(name, value): a fixed hyper-parameter of ``est`` and a different valid value."""
    fixed = set(est._get_param_names()) - set(est._per_chunk_params)
    for name in ("budget", "capacity", "k", "total_budget", "degree"):
        if name in fixed:
            v = getattr(est, name)
            return name, (1000 if v is None else v + 1)
    raise AssertionError(f"no fixed integer parameter in {sorted(fixed)}")


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_changed_parameter_after_fit_is_refused(id_, factory, tmp_path):
    est, X, y = _fitted(factory)
    X2, y2 = _data(est, seed=9)
    name, value = _changed_value(est)
    old = getattr(est, name)
    before = model_state(est)
    est.set_params(**{name: value})
    with pytest.raises(ValueError, match=rf"{name} was changed from .* call fit"):
        est.partial_fit(X2, y2)
    if hasattr(est, "learn_one") and is_binary(est):   # incl. TVM's one-example fast path
        with pytest.raises(ValueError, match=rf"{name} was changed"):
            est.learn_one(np.ascontiguousarray(X2[0]), y2[0].item())
    assert_same_state(model_state(est), before)
    # set back, the stream goes on as if nothing happened
    est.set_params(**{name: old})
    est.partial_fit(X2, y2)
    assert_same_state(model_state(est), model_state(factory().fit(X, y).partial_fit(X2, y2)))
    # a loaded model keeps the rule; fit starts a new model with the new value
    est.save(tmp_path / "m.npz")
    loaded = type(est).load(tmp_path / "m.npz")
    loaded.set_params(**{name: value})
    with pytest.raises(ValueError, match=rf"{name} was changed"):
        loaded.partial_fit(X2, y2)
    loaded.fit(X, y).partial_fit(X2, y2)
    assert getattr(loaded, name) == value


def test_per_chunk_parameters_are_checked_again():
    from fastbudget import SpanBudgetClassifier
    X, y = stream(0, n=200)
    est = SpanBudgetClassifier(budget=10, gamma=0.5).fit(X, y)
    before = model_state(est)
    est.set_params(policy="newest")
    with pytest.raises(ValueError, match="policy must be 'span' or 'lru'"):
        est.partial_fit(X, y)
    assert_same_state(model_state(est), before)
    est.set_params(policy="lru", C=3.0).partial_fit(X, y)   # these two are read per chunk
    assert est.C_ == pytest.approx(3.0)


def test_set_C_adopts_only_C():
    from fastbudget import IncrementalSVC
    X, y = stream(0, n=100)
    est = IncrementalSVC(C=1.0, gamma=0.5, capacity=200).fit(X, y)
    est.set_C(2.0)
    est.partial_fit(X[:10], y[:10])            # C changed through the exact path: accepted
    est.capacity = 300
    est.set_C(3.0)                              # does not adopt the changed capacity
    with pytest.raises(ValueError, match="capacity was changed from 200 to 300"):
        est.partial_fit(X[:10], y[:10])



# ---------------------------------------------------------------------- prediction reads only
def _trained_ways(factory):
    """The same learner after fit, and after two partial_fit chunks (which may leave
    buffered or pending work in the state)."""
    est, X, y = _fitted(factory)
    yield est, X, y
    est = factory()
    est.partial_fit(X[:90], y[:90], classes=np.unique(y))
    est.partial_fit(X[90:], y[90:])
    yield est, X, y


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_prediction_leaves_state_as_is_and_works_on_read_only_state(id_, factory):
    """decision_function, predict, score and the fitted attributes only read the model: its
    state stays bit-identical, and they work when every state array is read-only (a model
    unpickled onto a read-only memmap)."""
    for est, X, y in _trained_ways(factory):
        ref = pickle.loads(pickle.dumps(est))         # writable twin, for the values
        arrays = live_arrays(est)
        raw = [a.tobytes() for a in arrays]
        before = model_state(est)
        for a in arrays:
            a.flags.writeable = False
        f = est.decision_function(X)
        pred = est.predict(X)
        acc = est.score(X, y)
        for name in ("support_vectors_", "dual_coef_", "n_support_", "intercept_", "coef_",
                     "support_", "gamma_", "twin_vectors_", "support_index_"):
            getattr(est, name, None)
        assert [a.tobytes() for a in arrays] == raw
        assert_same_state(model_state(est), before)
        assert np.array_equal(f, ref.decision_function(X))
        assert np.array_equal(pred, ref.predict(X)) and acc == ref.score(X, y)


# ---------------------------------------------------------------------- memory
@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_memory_bytes_is_the_size_of_the_state_arrays(id_, factory):
    """Every learner has memory_bytes(), the bytes of the arrays it holds (not classes_ or
    the rollback buffer), after fit and as the stream goes on; the command line prints it."""
    from fastbudget.cli._learners import memory_text as _memory

    est, X, y = _fitted(factory)
    assert est.memory_bytes() == sum(a.nbytes for a in live_arrays(est))
    est.partial_fit(*_data(est, seed=3, n=100))
    assert est.memory_bytes() == sum(a.nbytes for a in live_arrays(est))
    assert _memory(est) == f"{est.memory_bytes() / 1024:,.1f} KiB"


# ---------------------------------------------------------------------- feature names
NAMES = ["f0", "f1", "f2"]   # the three columns of stream()
# names that differ from NAMES (a DataFrame with other columns), the data that goes with
# them, and what the error must say
BAD_NAMES = {
    "reordered": (NAMES[::-1], lambda X: X[:, ::-1],
                  r"same order as they were in fit\.\n.*X\[model\.feature_names_in_\]"),
    "renamed": (["f0", "g1", "f2"], lambda X: X,
                r"unseen at fit time:\n- g1\n"
                r"Feature names seen at fit time, yet now missing:\n- f1\n"),
    "missing": (NAMES[:2], lambda X: X[:, :2], r"yet now missing:\n- f2\n"),
}


@pytest.mark.parametrize("case", sorted(BAD_NAMES))
@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_feature_names_recorded_and_checked(id_, factory, case):
    est = factory()
    X, y = _data(est)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # matching names: no warning anywhere
        est.fit(Table(X[:150], NAMES), y[:150])
        est.partial_fit(Table(X[150:], NAMES), y[150:])
        f = est.decision_function(Table(X, NAMES))
        pred = est.predict(Table(X, NAMES))
        est.score(Table(X, NAMES), y)
    assert isinstance(est.feature_names_in_, np.ndarray)
    assert est.feature_names_in_.dtype == object and est.feature_names_in_.tolist() == NAMES
    for sub in getattr(est, "estimators_", ()):   # one-vs-rest: its learners see arrays
        assert "feature_names_in_" not in sub.__dict__
    names, data, msg = BAD_NAMES[case]
    bad = Table(data(X), names)
    before = model_state(est)
    for method in (est.predict, est.decision_function, lambda Z: est.score(Z, y)):
        with pytest.raises(ValueError, match=msg):
            method(bad)
    with pytest.raises(ValueError, match=msg):
        est.partial_fit(bad, y)
    assert_same_state(model_state(est), before)
    assert np.array_equal(est.predict(Table(X, NAMES)), pred)
    assert est.decision_function(Table(X, NAMES)).tobytes() == f.tobytes()


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_feature_names_on_one_side_only_warn(id_, factory):
    est = factory()
    X, y = _data(est)
    est.fit(Table(X[:150], NAMES), y[:150])
    f = est.decision_function(Table(X, NAMES))
    with pytest.warns(UserWarning, match="This X has no column names, but "
                      f"{type(est).__name__} was trained on named columns"):
        assert est.decision_function(X).tobytes() == f.tobytes()
    with pytest.warns(UserWarning, match="This X has no column names"):
        est.partial_fit(X[150:], y[150:])          # learned, by position
    assert est.feature_names_in_.tolist() == NAMES
    est.fit(X, y)                                   # a new model on an array forgets them
    assert not hasattr(est, "feature_names_in_")
    with pytest.warns(UserWarning, match=f"This X has column names, but {type(est).__name__} "
                      "was trained on data without them"):
        assert np.array_equal(est.predict(Table(X, NAMES)), est.predict(X))
    with pytest.warns(UserWarning, match="This X has column names"):
        est.partial_fit(Table(X, NAMES), y)
    assert not hasattr(est, "feature_names_in_")


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_feature_names_only_when_all_are_strings(id_, factory):
    est = factory()
    X, y = _data(est)
    cls = np.unique(y)
    est.partial_fit(Table(X[:100], NAMES), y[:100], classes=cls)   # the first call records
    assert est.feature_names_in_.tolist() == NAMES
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(Table(X, [0, 1, 2]), y)            # numbers as names: no feature names
    assert not hasattr(est, "feature_names_in_")
    est.fit(Table(X, NAMES), y)
    before = model_state(est)
    for call in (lambda: est.fit(Table(X, ["f0", 1, "f2"]), y),
                 lambda: est.partial_fit(Table(X, ["f0", 1, "f2"]), y),
                 lambda: est.predict(Table(X, ["f0", 1, "f2"]))):
        with pytest.raises(TypeError,
                           match=r"mix strings with other types \(int, str\).*astype\(str\)"):
            call()
        assert_same_state(model_state(est), before)
    fresh = factory()
    with pytest.raises(TypeError, match="mix strings"):
        fresh.partial_fit(Table(X, ["f0", 1, "f2"]), y, classes=cls)
    assert not fresh.__sklearn_is_fitted__() and not hasattr(fresh, "feature_names_in_")


_ONE = [(i, f) for i, f in ESTIMATORS if hasattr(f(), "learn_one")]


@pytest.mark.parametrize("id_,factory", _params(_ONE))
def test_learn_one_reads_a_dict_by_feature_name(id_, factory):
    X, y = stream(3)
    a = factory().fit(Table(X[:100], NAMES), y[:100])
    b = factory().fit(Table(X[:100], NAMES), y[:100])
    for i in range(100, 110):
        x = dict(zip(NAMES[::-1], X[i, ::-1].tolist()))   # another key order, same example
        a.learn_one(x, y[i].item())
        with pytest.warns(UserWarning, match="This X has no column names"):
            b.learn_one(np.ascontiguousarray(X[i]), y[i].item())    # by position
    assert_same_state(model_state(a), model_state(b))
    before = model_state(a)
    for keys in (["f0", "f1", "g"], NAMES[:2], NAMES + ["f3"]):
        with pytest.raises(ValueError, match="The feature names should match"):
            a.learn_one(dict(zip(keys, X[110].tolist() + [0.0])), y[110].item())
    assert_same_state(model_state(a), before)
    if hasattr(a, "predict_one"):
        x = dict(zip(NAMES[::-1], X[110, ::-1].tolist()))
        assert a.predict_one(x) == a.predict(Table(X[110:111], NAMES))[0]
        with pytest.raises(ValueError, match="yet now missing"):
            a.predict_one({"f0": 1.0, "f1": 2.0})
    c = _numeric_gamma(factory())       # learn_one may start a model
    c.learn_one({"b": 1.0, "a": 0.0, "c": 2.0}, y[0].item(), classes=np.unique(y))
    assert c.feature_names_in_.tolist() == ["b", "a", "c"]   # the first dict's order
    d = factory().fit(X[:100], y[:100])
    with pytest.warns(UserWarning, match="This X has column names"):
        d.learn_one(dict(zip(NAMES, X[100].tolist())), y[100].item())
    assert not hasattr(d, "feature_names_in_")


def _uses_gamma(est):
    inner = getattr(est, "estimator", None)
    if inner is not None:
        return _uses_gamma(inner)
    return "gamma" in est.get_params() and est.get_params().get("kernel", "rbf") != "linear"


@pytest.mark.parametrize("id_,factory", _params(
    [(i, f) for i, f in ESTIMATORS
     if _uses_gamma(f()) and not isinstance(getattr(f(), "estimator", f()), DummyBudgetPerceptron)]))
def test_gamma_scale_on_a_first_chunk_without_variance_is_one(id_, factory):
    """gamma='scale' on a first chunk whose features have no variance is 1.0, as in
    scikit-learn's SVC (and in every learner alike: some took 1 / n_features)."""
    est = factory()
    X, y = _data(est, seed=3)
    X0 = np.full((4, X.shape[1]), 0.5)
    y0 = np.array([y[0], y[1], y[0], y[1]]) if y[0] != y[1] else y[:4]
    classes = np.unique(y)
    models = []
    for gamma in ("scale", 1.0):
        m = factory()
        inner = m.estimator if hasattr(m, "estimator") else m
        inner.set_params(gamma=gamma)
        if inner is not m:
            m.set_params(estimator=inner)
        m.partial_fit(X0, y0, classes=classes)
        m.partial_fit(X, y)
        models.append(m)
    np.testing.assert_array_equal(models[0].decision_function(X), models[1].decision_function(X))


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_learn_one_reads_a_pandas_row_by_its_index(id_, factory):
    """A pandas Series (a DataFrame row) is read like the dict of its index: by name, in
    the model's column order, whatever the row's order."""
    import pandas as pd
    X, y = stream(4)
    names = NAMES
    a = factory().fit(pd.DataFrame(X[:100], columns=names), y[:100])
    b = factory().fit(pd.DataFrame(X[:100], columns=names), y[:100])
    rows = pd.DataFrame(X, columns=names)[names[::-1]]      # the columns reversed
    for i in range(100, 110):
        a.learn_one(rows.iloc[i], y[i].item())
        b.learn_one(dict(zip(names, X[i].tolist())), y[i].item())
    assert_same_state(model_state(a), model_state(b))
    if hasattr(a, "predict_one"):
        assert a.predict_one(rows.iloc[110]) == a.predict(pd.DataFrame(X[110:111], columns=names))[0]


@pytest.mark.parametrize("id_,factory", _params(
    [(i, f) for i, f in ESTIMATORS if hasattr(f(), "kkt_residual")]))
def test_kkt_residual_leaves_the_model_as_it_was(id_, factory):
    """kkt_residual() measures on exact g (a refresh, which may also correct alpha and b by
    round-off) but on the side: the model's arrays are bit-identical afterwards."""
    est, X, y = _fitted(factory)
    raw = [a.tobytes() for a in live_arrays(est)]
    assert est.kkt_residual() <= 1e-8
    assert [a.tobytes() for a in live_arrays(est)] == raw


# ---------------------------------------------------------------------- score, learn_one
@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_score_takes_y_as_accuracy_score_does(id_, factory):
    """A column-vector y is raveled with a warning (as in fit), a y of another length is
    refused, and weights weigh each row: score used to compare an (n, 1) y with the (n,)
    predictions by broadcasting, an (n, n) table, and gave a wrong accuracy silently."""
    est, X, y = _fitted(factory)
    pred = est.predict(X)
    acc = float(np.mean(pred == y))
    assert est.score(X, y) == acc
    with pytest.warns(UserWarning, match="column-vector y"):
        assert est.score(X, y.reshape(-1, 1)) == acc
    with pytest.raises(ValueError, match="X has 200 rows but y has 1 labels"):
        est.score(X, y[:1])
    w = np.linspace(0.0, 1.0, X.shape[0])
    assert est.score(X, y, sample_weight=w) == pytest.approx(np.sum(w * (pred == y)) / w.sum())
    with pytest.raises(ValueError, match="sample_weight"):
        est.score(X, y, sample_weight=w[:5])


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_score_refuses_text_labels_for_a_numeric_model_as_accuracy_score_does(id_, factory):
    """Labels of another kind than the model's (text for a model fitted on numbers, such as
    a CSV column read as strings, or numbers for a text model) raise ValueError, as
    scikit-learn's accuracy_score does ('Mix of label input types'): score returned 0.0
    silently, every label counting as a miss. A number label that is not a class still
    counts as a miss, and bool labels for a 0/1 model are numbers (as for scikit-learn)."""
    est, X, y = _fitted(factory)
    with pytest.raises(ValueError, match=r"Mix of label input types \(string and number\)"):
        est.score(X, y.astype(str))
    with pytest.raises(ValueError, match=r"Mix of label input types"):
        est.score(X, y.astype(str).astype(object))
    assert est.score(X, y + 100) == 0.0
    names = np.array(["c%d" % v for v in y])
    text = factory().fit(X, names)
    assert text.score(X, names) == float(np.mean(text.predict(X) == names))
    with pytest.raises(ValueError, match=r"y has number labels .* classes_ .* text"):
        text.score(X, y)


def _numeric_gamma(est):
    inner = getattr(est, "estimator", est)
    if "gamma" in inner._get_param_names():
        inner.set_params(gamma=0.5)
    return est


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_learn_one_with_classes_starts_a_model(id_, factory):
    """Every learner's learn_one takes classes= on its first call (TVM's and IncrementalSVC's
    did not: a model could not be started one example at a time) and then equals
    partial_fit on that row."""
    est = _numeric_gamma(factory())
    X, y = _data(est)
    classes = np.unique(y)
    a, b = est, _numeric_gamma(factory())
    for i in range(6):
        a.learn_one(X[i], y[i].item(), classes=classes if i < 2 else None)
        b.partial_fit(X[i:i + 1], y[i:i + 1], classes=classes)
    assert a.classes_.tolist() == classes.tolist()
    assert_same_state(model_state(a), model_state(b))
    assert a.decision_function(X).tobytes() == b.decision_function(X).tobytes()
    with pytest.raises(ValueError):
        _numeric_gamma(factory()).learn_one(X[0], y[0].item(), classes=classes[:1])


def test_tvm_boolean_parameters_must_be_booleans():
    from fastbudget import TVMClassifier

    X, y = stream(0, n=60)
    for name in ("control_C", "one_sided", "balance_sides"):
        for bad in ("False", None, 0):
            est = TVMClassifier(budget=10, gamma=0.5, **{name: bad})
            with pytest.raises(ValueError, match=f"{name} must be True or False"):
                est.fit(X, y)
            assert not est.__sklearn_is_fitted__()


def test_tvm_sides_must_be_model_or_labels():
    from fastbudget import TVMClassifier

    X, y = stream(0, n=60)
    for bad in ("label", None, True):
        est = TVMClassifier(budget=10, gamma=0.5, sides=bad)
        with pytest.raises(ValueError, match="sides must be 'model'"):
            est.fit(X, y)
        assert not est.__sklearn_is_fitted__()


def test_streamsvm_polynomial_degree_must_be_whole():
    from fastbudget.estimators.streamsvm import StreamSVMClassifier

    X, y = stream(0, n=60)
    with pytest.raises(ValueError, match="degree must be a whole number"):
        StreamSVMClassifier(kernel="poly", degree=2.5, gamma=1.0, coef0=1.0).fit(X, y)
    f = StreamSVMClassifier(kernel="poly", degree=2, gamma=1.0, coef0=1.0).fit(X, y)
    assert np.isfinite(f.decision_function(X)).all()


def test_incremental_svc_slots_and_unfitted_views():
    from fastbudget.estimators.idsvm import IncrementalSVC

    est = IncrementalSVC(gamma=0.5)
    for name in ("support_", "support_vectors_", "dual_coef_", "intercept_", "n_support_"):
        with pytest.raises(NotFittedError):
            getattr(est, name)
    X, y = stream(0, n=40)
    est.fit(X, y)
    before = model_state(est)
    for bad in (2.5, True, "3", np.float64(1.0)):
        with pytest.raises(TypeError, match="index must be a slot number"):
            est.unlearn(bad)
        with pytest.raises(TypeError, match="index must be a slot number"):
            est.reweight(bad, 2.0)
    assert_same_state(model_state(est), before)
    est.unlearn(np.int64(int(est.support_[0])))      # a numpy integer is a slot number


@pytest.mark.parametrize("id_,factory", _params(ESTIMATORS))
def test_values_whose_squares_overflow_are_refused(id_, factory):
    """Finite values beyond ~1e154 overflow every kernel (x.x is infinite): a row of them
    used to be learned and left NaN or inf in the model (save() then refused the state).
    Learning and prediction refuse them, and the model is unchanged; the error is all the
    caller sees (learn_one's quick test used to add numpy's RuntimeWarning "overflow
    encountered in dot")."""
    est, X, y = _fitted(factory)
    before = model_state(est)
    big = X[:3].copy()
    big[1, 0] = 1e200
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match="row 1: its squared norm overflows"):
            est.partial_fit(big, y[:3])
        with pytest.raises(ValueError, match="too large for a kernel"):
            est.learn_one(big[1], y[1].item())
        with pytest.raises(ValueError, match="too large for a kernel"):
            est.decision_function(big) if hasattr(est, "decision_function") else est.predict(big)
    assert_same_state(model_state(est), before)


def _kernel_params(kernel):
    return {"kernel": kernel, **({"gamma": 1.0, "degree": 3, "coef0": 1.0}
                                 if kernel == "poly" else {})}


def _with_kernel(factory, kernel):
    """``factory`` with ``kernel`` set (on a wrapper's inner learner), or None when the
    learner has no kernel parameter or refuses that kernel (StreamSVM's several balls,
    BSGD's merging: RBF only)."""
    est = factory()
    inner = est.estimator if isinstance(est, OneVsRestClassifier) else est
    if "kernel" not in inner._get_param_names():
        return None
    try:
        inner.set_params(**_kernel_params(kernel))
        inner._validate_params()
    except ValueError:
        return None
    return est


_KERNEL_CASES = [pytest.param(id_, factory, kernel, id=f"{id_}-{kernel}")
                 for id_, factory in ESTIMATORS for kernel in ("rbf", "linear", "poly")
                 if _with_kernel(factory, kernel) is not None]


def test_the_overflow_cases_cover_every_learner_with_a_kernel():
    ids = {p.values[0] for p in _KERNEL_CASES}
    for id_, factory in ESTIMATORS:
        est = factory()
        inner = est.estimator if isinstance(est, OneVsRestClassifier) else est
        if "kernel" in inner._get_param_names():
            assert id_ in ids, id_


@pytest.mark.parametrize("id_,factory,kernel", _KERNEL_CASES)
def test_rows_whose_kernel_overflows_are_refused(id_, factory, kernel):
    """A row whose kernel values overflow float64 is refused as a NaN row is (issue 30):
    with a polynomial kernel and gamma=1 a row [1e60, 1e60] has K(x, x) = (2e120)^3 = inf
    (IncrementalSVC used to learn it and then hold inf in its kernel cache, so save refused
    the model); with any kernel a row of squared norm beyond 1e150 makes products of kernel
    values overflow. partial_fit, learn_one and prediction refuse them naming the row, and
    the model is unchanged. A row just inside the limit is learned."""
    est, X, y = _fitted(lambda: _with_kernel(factory, kernel))
    before = model_state(est)
    big = X[:3].copy()
    big[1, :] = 0.0
    big[1, :2] = 1e60 if kernel == "poly" else 1e80
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ValueError, match=r"too large for a kernel \(row 1: .*Rescale"):
            est.partial_fit(big, y[:3])
        with pytest.raises(ValueError, match="too large for a kernel"):
            est.learn_one(big[1], y[1].item())
        with pytest.raises(ValueError, match="too large for a kernel"):
            est.predict(big)
    assert_same_state(model_state(est), before)
    # (gamma |x|^2 + coef0)^3 = 1e120 < 1e150 with a poly kernel; |x|^2 = 1e140 otherwise
    ok = X[:3].copy()
    ok[1, :] = 0.0
    ok[1, 0] = 1e20 if kernel == "poly" else 1e70
    est.partial_fit(ok, y[:3])


def test_pandas_missing_values_are_named_as_missing():
    """pd.NA in a nullable column (Int64, Float64) is a missing value, named by row and
    column like NaN; it used to be reported as non-numeric data to encode."""
    import pandas as pd
    from fastbudget import TVMClassifier

    X, y = stream(0, n=40)
    df = pd.DataFrame({"a": pd.array(np.round(X[:, 0] * 10).astype(int), dtype="Int64"),
                       "b": pd.array(X[:, 1], dtype="Float64")})
    ok = TVMClassifier(budget=10, gamma=0.5).fit(df, y)
    assert ok.score(df, y) == TVMClassifier(budget=10, gamma=0.5).fit(
        df.to_numpy(dtype=float), y).score(df.to_numpy(dtype=float), y)
    df.loc[5, "b"] = pd.NA
    with pytest.raises(ValueError, match=r"NaN or infinity \(first at row 5, column 1\)"):
        TVMClassifier(budget=10, gamma=0.5).fit(df, y)


@pytest.mark.parametrize("kind", ["object_str", "pandas_str", "str", "int"])
def test_unseen_label_of_any_dtype_is_the_same_value_error(kind):
    """partial_fit with an object-dtype label array (a pandas Series of strings) holding an
    unseen label raised AttributeError: 'str' object has no attribute 'tolist' (issue 30);
    it is the ValueError every other label type gives, naming the label and its row, and
    the model is unchanged."""
    import pandas as pd
    from fastbudget.estimators.baselines import PerceptronClassifier

    X, y01 = stream(0, n=60)
    names = np.array(["neg", "pos"])
    if kind == "int":
        y, new = y01, 7
    else:
        y, new = names[y01], "other"
    est = PerceptronClassifier(budget=20).fit(X, y)
    before = model_state(est)
    y2 = list(y[:5])
    y2[3] = new
    if kind == "object_str":
        y2 = np.array(y2, dtype=object)
    elif kind == "pandas_str":
        y2 = pd.Series(y2, dtype=object)
    else:
        y2 = np.array(y2)
    with pytest.raises(ValueError, match=rf"y contains label {new!r} \(row 3\) not among the "
                                         r"classes"):
        est.partial_fit(X[:5], y2)
    assert_same_state(model_state(est), before)


def test_all_finite_agrees_with_the_elementwise_check():
    """``_validation.all_finite`` (a sum first, the element-wise check only when the sum is
    not finite) answers as ``np.isfinite(X).all()`` does: on finite arrays whose sum
    overflows, on +inf and -inf together (their sum is NaN), on NaN, on one bad entry
    among many, and on empty arrays; ``check_array`` accepts the finite overflowing array
    and names the first bad entry."""
    from fastbudget._validation import all_finite, check_array
    rng = np.random.default_rng(0)
    cases = [np.full((3, 2), 1e308), np.array([[np.inf, -np.inf]]), np.array([[1.0, np.nan]]),
             np.zeros((0, 3)), rng.normal(size=(50, 4)) * 1e300]
    for _ in range(200):
        X = rng.normal(size=(rng.integers(1, 30), rng.integers(1, 5)))
        if rng.random() < 0.7:
            X[rng.integers(X.shape[0]), rng.integers(X.shape[1])] = rng.choice(
                [np.nan, np.inf, -np.inf, 1e308])
        cases.append(X)
    for X in cases:
        assert all_finite(X) == bool(np.isfinite(X).all()), X
    big = np.full((3, 2), 1e308)
    assert check_array(big) is not None and np.isinf(np.sum(big))
    bad = np.full((4, 3), 1e308)
    bad[2, 1] = -np.inf
    with pytest.raises(ValueError, match=r"NaN or infinity \(first at row 2, column 1\)"):
        check_array(bad)
