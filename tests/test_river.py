"""river-style adapter: the dict protocol (always), and river's own tools (when installed)."""
import time

import numpy as np
import pytest
from sklearn.base import clone

from _dummy import DummyBudgetPerceptron
from _estimators import ESTIMATORS, IDS, is_binary
from _helpers import assert_same_state, model_state, stream
from fastbudget.engine import resolve_gamma
from fastbudget.estimators.baselines import PerceptronClassifier
from fastbudget.multiclass import OneVsRestClassifier
from fastbudget.river_adapter import RiverClassifier


def _dicts(X):
    return [{f"f{j}": float(v) for j, v in enumerate(row)} for row in X]


@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_learn_one_equals_partial_fit_row_by_row(id_, factory):
    est = factory()
    X, y = stream(0, n=60, n_classes=2 if is_binary(est) else 3)
    classes = np.unique(y)
    ad = RiverClassifier(factory(), classes=classes, warm_up=15)
    for x, t in zip(_dicts(X), y):
        ad.learn_one(x, t)
    ref = factory()
    # a learner with gamma='scale' starts on the warm-up buffer, any other on one row
    start = ad.warm_up if est._gamma_from_data() else 1
    ref.partial_fit(X[:start], y[:start], classes=classes)
    for i in range(start, len(X)):
        ref.partial_fit(X[i:i + 1], y[i:i + 1], classes=classes)
    assert_same_state(model_state(ad.estimator), model_state(ref))
    preds = [ad.predict_one(x) for x in _dicts(X)]
    np.testing.assert_array_equal(preds, ref.predict(X))
    assert all(type(p) is int for p in preds)  # plain Python labels, as river expects


# (one-vs-rest takes partial_fit's path: tests/test_multiclass.py)
BINARY = [(i, f) for i, f in ESTIMATORS if is_binary(f())]


@pytest.mark.parametrize("id_,factory", BINARY, ids=[i for i, _ in BINARY])
def test_learn_one_on_arrays_is_partial_fit_with_weights(id_, factory, monkeypatch):
    """learn_one on a float64 row of a fitted binary model skips partial_fit's general
    validation (``_check_one``, then ``_partial_fit_checked`` in a transaction): the model
    is the one partial_fit gives row by row, bit for bit, with sample weights (zeros
    included) and a class_weight dict where the learner takes them."""
    from fastbudget.base import BudgetClassifier
    est = factory()
    X, y = stream(7, n=90)
    weighted = not getattr(est, "_unit_weights_only", False)
    w = (np.random.default_rng(2).choice([0.0, 0.5, 1.0, 2.0], size=len(y)) if weighted
         else np.ones(len(y)))
    kw = {"class_weight": {1: 1.5}} if weighted and "class_weight" in est.get_params() else {}
    a = factory().set_params(**kw).partial_fit(X[:10], y[:10], classes=[0, 1])
    b = factory().set_params(**kw).partial_fit(X[:10], y[:10], classes=[0, 1])
    checked = []
    inner = BudgetClassifier._partial_fit_checked
    monkeypatch.setattr(BudgetClassifier, "_partial_fit_checked",
                        lambda self, *args: checked.append(1) or inner(self, *args))
    for i in range(10, len(y)):
        a.learn_one(X[i], int(y[i]), float(w[i]))
        b.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=w[i:i + 1])
    assert_same_state(model_state(a), model_state(b))
    if type(a).learn_one is BudgetClassifier.learn_one:
        assert len(checked) == len(y) - 10          # every row took the cheap path


@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_predict_one_and_predict_proba_one_on_arrays_are_predict_and_predict_proba(id_,
                                                                                   factory):
    """predict_one / predict_proba_one on a float64 row (a binary model's cheap path, which
    skips the general validation) give what predict / predict_proba give on that row, bit
    for bit and of the same types; a bad row still raises as predict does."""
    est = factory()
    X, y = stream(8, n=120, n_classes=2 if is_binary(est) else 3)
    est.fit(X, y)
    for i in range(40):
        one = est.predict_one(X[i])
        ref = est.predict(X[i:i + 1])[0]
        assert one == ref and type(one) is type(ref)
        proba = est.predict_proba_one(X[i])
        assert list(proba) == est.classes_.tolist()
        np.testing.assert_array_equal(list(proba.values()), est.predict_proba(X[i:i + 1])[0])
    bad = X[0].copy()
    bad[1] = np.nan
    for call in (est.predict_one, est.predict_proba_one):
        with pytest.raises(ValueError, match="NaN"):
            call(bad)


def test_buffers_until_two_classes_then_starts():
    X, y = stream(1, n=50)
    y = np.r_[np.zeros(5, int), y[5:]]
    y[5] = 1
    ad = RiverClassifier(DummyBudgetPerceptron())
    assert ad.predict_one(_dicts(X[:1])[0]) is None      # nothing seen at all
    for i, x in enumerate(_dicts(X[:5])):
        ad.learn_one(x, int(y[i]))
        assert ad.predict_one(x) == 0     # one label seen: the most frequent one
        assert ad.predict_proba_one(x) == {0: 1.0}
    ad.learn_one(_dicts(X[5:6])[0], 1)
    ref = DummyBudgetPerceptron().partial_fit(X[:6], y[:6])
    assert_same_state(model_state(ad.estimator), model_state(ref))


def test_feature_order_is_fixed_by_first_dict_and_key_order_does_not_matter():
    X, y = stream(2, n=40)
    ad = RiverClassifier(DummyBudgetPerceptron(), classes=[0, 1])
    for x, t in zip(_dicts(X), y):
        ad.learn_one(dict(reversed(list(x.items()))) if t else x, t)
    assert ad.feature_names == ["f0", "f1", "f2"] or ad.feature_names == ["f2", "f1", "f0"]
    ref = DummyBudgetPerceptron().partial_fit(
        X if ad.feature_names[0] == "f0" else X[:, ::-1], y, classes=[0, 1])
    # row-by-row and chunk learning differ for no learner here (the dummy is per-example)
    assert_same_state(model_state(ad.estimator), model_state(ref))


@pytest.mark.parametrize("bad, msg", [
    ({"f0": 1.0, "f1": 2.0, "f2": 3.0, "f9": 0.0}, r"feature\(s\) \['f9'\] that the model does not know.*first example"),
    ({"f0": 1.0, "f1": 2.0}, r"lacks feature 'f2'.*missing_value"),
    ({"f0": 1.0, "f1": "x", "f2": 3.0}, r"'f1' has non-numeric value 'x'"),
    ({"f0": 1.0, "f1": float("nan"), "f2": 3.0}, r"'f1' is NaN or infinite"),
    ([1.0, 2.0, 3.0], r"x must be a dict"),
])
def test_bad_examples_rejected_model_unchanged(bad, msg):
    X, y = stream(3, n=30)
    ad = RiverClassifier(DummyBudgetPerceptron(), classes=[0, 1])
    for x, t in zip(_dicts(X), y):
        ad.learn_one(x, t)
    before = model_state(ad.estimator)
    with pytest.raises(ValueError, match=msg):
        ad.learn_one(bad, 1)
    with pytest.raises(ValueError, match=msg):
        ad.predict_one(bad)
    with pytest.raises(ValueError, match=r"label 7 \(row 0\) not among the classes"):
        ad.learn_one(_dicts(X[:1])[0], 7)
    assert_same_state(model_state(ad.estimator), before)


def test_missing_value_fills_absent_features():
    ad = RiverClassifier(DummyBudgetPerceptron(), classes=[0, 1], missing_value=0.0)
    ad.learn_one({"a": 1.0, "b": 2.0}, 1)
    ad.learn_one({"b": -1.0}, 0)
    ref = DummyBudgetPerceptron().partial_fit([[1.0, 2.0]], [1], classes=[0, 1])
    ref.partial_fit([[0.0, -1.0]], [0])
    assert_same_state(model_state(ad.estimator), model_state(ref))


def test_multiclass_decision_one():
    X, y = stream(4, n=90, n_classes=3)
    ad = RiverClassifier(OneVsRestClassifier(DummyBudgetPerceptron(budget=10), total_budget=30),
                         classes=[0, 1, 2])
    for x, t in zip(_dicts(X), y):
        ad.learn_one(x, int(t))
    x0 = _dicts(X[:1])[0]
    dec = ad.decision_one(x0)
    assert set(dec) == {0, 1, 2}
    assert ad.predict_one(x0) == max(dec, key=dec.get)


def test_learn_one_overhead_is_bounded():
    """The per-example snapshot costs about one state copy: measure it against learning
    the same rows with partial_fit one row at a time without the adapter (same work)."""
    X, y = stream(5, n=300)
    ad = RiverClassifier(DummyBudgetPerceptron(budget=50), classes=[0, 1])
    dicts = _dicts(X)
    t0 = time.perf_counter()
    for x, t in zip(dicts, y):
        ad.learn_one(x, t)
    t_adapter = time.perf_counter() - t0
    ref = DummyBudgetPerceptron(budget=50)
    t0 = time.perf_counter()
    for i in range(len(X)):
        ref.partial_fit(X[i:i + 1], y[i:i + 1], classes=[0, 1])
    t_direct = time.perf_counter() - t0
    assert_same_state(model_state(ad.estimator), model_state(ref))
    assert t_adapter < 5 * t_direct + 0.05  # dict conversion adds little on top


def test_with_river_progressive_validation():
    river = pytest.importorskip("river")
    from river import evaluate, metrics

    from fastbudget.river_adapter import HAVE_RIVER

    assert HAVE_RIVER
    X, y = stream(6, n=200)
    data = list(zip(_dicts(X), (int(t) for t in y)))
    ad = RiverClassifier(DummyBudgetPerceptron(budget=40), classes=[0, 1])
    assert isinstance(ad, river.base.Classifier)
    metric = evaluate.progressive_val_score(data, ad, metrics.Accuracy())
    # the same test-then-train loop by hand
    manual = RiverClassifier(DummyBudgetPerceptron(budget=40), classes=[0, 1])
    hits = n = 0
    for x, t in data:
        p = manual.predict_one(x)
        if p is not None:
            hits += p == t
            n += 1
        manual.learn_one(x, t)
    assert metric.get() == pytest.approx(hits / n)
    assert_same_state(model_state(ad.estimator), model_state(manual.estimator))
    assert metric.get() > 0.6


# ------------------------------------------------------------------ gamma='scale'
def _with_scale(est):
    """``est`` set to gamma='scale' (its template's, for a wrapper)."""
    inner = est.estimator if isinstance(est, OneVsRestClassifier) else est
    inner.set_params(gamma="scale")
    return est


# the library's learners whose kernel uses gamma (the dummy takes a number only)
SCALED = [pytest.param(id_, f, id=id_) for id_, f in ESTIMATORS
          if "dummy" not in id_
          and "gamma" in getattr(f(), "estimator", f())._get_param_names()
          and getattr(f(), "estimator", f()).get_params().get("kernel") != "linear"]


@pytest.mark.parametrize("id_,factory", SCALED)
def test_scale_gamma_is_estimated_on_the_warm_up_window(id_, factory):
    """With gamma='scale' the adapter buffers warm_up examples and starts the model on
    them: the model is the one partial_fit learns from that window and then row by row,
    and gamma is the scale of the window, not of one example's feature values."""
    est = _with_scale(factory())
    X, y = stream(7, n=60, n_classes=2 if is_binary(est) else 3)
    X = X * np.array([1.0, 4.0, 0.25])           # a scale that one row does not show
    classes = np.unique(y)
    ad = RiverClassifier(est, classes=classes, warm_up=25)
    for i, x in enumerate(_dicts(X)):
        ad.learn_one(x, int(y[i]))
        assert ad.estimator.__sklearn_is_fitted__() == (i >= 24), i
        if i < 24:          # (no predictions later: RandomBudget's predict refits lazily)
            # before the scale is known: the most frequent label so far, never None
            seen = [int(t) for t in y[:i + 1]]
            assert ad.predict_one(x) == max(dict.fromkeys(seen), key=seen.count)
        if i == 10:   # a bad label while warming up: refused, not buffered
            with pytest.raises(ValueError, match=r"label 9 \(row 0\) not among the classes"):
                ad.learn_one(x, 9)
    ref = _with_scale(factory()).partial_fit(X[:25], y[:25], classes=classes)
    for i in range(25, len(X)):
        ref.partial_fit(X[i:i + 1], y[i:i + 1])
    assert_same_state(model_state(ad.estimator), model_state(ref))
    fitted = ad.estimator.estimators_[0] if not is_binary(est) else ad.estimator
    if hasattr(fitted, "gamma_"):
        assert fitted.gamma_ == resolve_gamma("scale", X[:25])
        assert fitted.gamma_ != resolve_gamma("scale", X[:1])


@pytest.mark.parametrize("id_,factory", SCALED)
def test_scale_gamma_refuses_a_first_chunk_of_one_row(id_, factory):
    """The learner itself (learn_one, partial_fit) refuses to take the scale from one row,
    and stays unfitted; a first chunk of two rows is accepted."""
    est = _with_scale(factory())
    X, y = stream(8, n=40, n_classes=2 if is_binary(est) else 3)
    classes = np.unique(y)
    msg = r"gamma='scale'.*single row.*Pass a number for gamma"
    with pytest.raises(ValueError, match=msg):
        est.partial_fit(X[:1], y[:1], classes=classes)
    assert not est.__sklearn_is_fitted__()
    with pytest.raises(ValueError, match=msg):
        est.learn_one(X[0], y[0], classes=classes)
    assert not est.__sklearn_is_fitted__()
    est.partial_fit(X[:2], y[:2], classes=classes)
    assert est.__sklearn_is_fitted__()


def test_scale_gamma_with_a_linear_kernel_needs_no_warm_up():
    """gamma is unused by a linear kernel: no warm-up, the model starts on the first row."""
    ad = RiverClassifier(PerceptronClassifier(budget=20, kernel="linear", gamma="scale"),
                         classes=[0, 1])
    ad.learn_one({"a": 1.0, "b": 2.0}, 1)
    assert ad.predict_one({"a": 1.0, "b": 2.0}) == 1


@pytest.mark.parametrize("warm_up", [1, 0, 2.5, "10", None])
def test_bad_warm_up_is_refused_before_anything_is_buffered(warm_up):
    ad = RiverClassifier(PerceptronClassifier(budget=20, kernel="rbf", gamma="scale"),
                         classes=[0, 1], warm_up=warm_up)
    with pytest.raises(ValueError, match="warm_up must be"):
        ad.learn_one({"a": 1.0}, 1)
    assert ad._buffer_y == [] and not ad.estimator.__sklearn_is_fitted__()


# ------------------------------------------------------------------ cloning
@pytest.mark.parametrize("how", ["sklearn", "river"])
def test_clone_is_a_fresh_unfitted_model(how):
    X, y = stream(9, n=80)
    rows = _dicts(X)
    inner = OneVsRestClassifier(PerceptronClassifier(budget=20, kernel="rbf"), total_budget=40)
    ad = RiverClassifier(inner, classes=[0, 1], missing_value=0.0, warm_up=5)
    for x, t in zip(rows[:40], y[:40]):
        ad.learn_one(x, int(t))
    before = model_state(ad.estimator)
    c = clone(ad) if how == "sklearn" else ad.clone()
    assert type(c) is RiverClassifier and c is not ad
    assert c.estimator is not ad.estimator and c.estimator.estimator is not inner.estimator
    assert not c.estimator.__sklearn_is_fitted__()
    assert c.feature_names is None and c.predict_one(rows[0]) is None
    assert repr(c.estimator) == repr(ad.estimator)
    assert {k: v for k, v in c.get_params(deep=False).items() if k != "estimator"} == \
        {"classes": [0, 1], "missing_value": 0.0, "warm_up": 5, "unknown_features": "raise"}
    assert_same_state(model_state(ad.estimator), before)      # the original is untouched
    # the clone learns the stream from scratch: the model a fresh adapter learns
    fresh = RiverClassifier(OneVsRestClassifier(PerceptronClassifier(budget=20, kernel="rbf"),
                                                total_budget=40), classes=[0, 1])
    for x, t in zip(rows[40:], y[40:]):
        c.learn_one(x, int(t))
        fresh.learn_one(x, int(t))
    assert_same_state(model_state(c.estimator), model_state(fresh.estimator))


def test_river_clone_with_attributes_copies_the_fitted_model():
    X, y = stream(10, n=40)
    ad = RiverClassifier(DummyBudgetPerceptron(), classes=[0, 1])
    for x, t in zip(_dicts(X), y):
        ad.learn_one(x, int(t))
    before = model_state(ad.estimator)
    c = ad.clone(include_attributes=True)
    assert c.estimator is not ad.estimator and c.feature_names == ad.feature_names
    assert_same_state(model_state(c.estimator), before)
    for x, t in zip(_dicts(X), y):                    # the copy learns on its own
        c.learn_one(x, 1 - int(t))
    assert_same_state(model_state(ad.estimator), before)


# ------------------------------------------------------------------ more than two classes
def test_new_label_after_the_start_without_classes_says_to_pass_classes():
    """Without classes a binary learner starts on the first two labels; a third one cannot
    be added: a clear error, the model unchanged, and learning goes on."""
    X, y = stream(11, n=60, n_classes=3)
    y = y.tolist()
    order = list(dict.fromkeys(y))                   # labels by first appearance
    j = y.index(order[2])                            # the first example of the third label
    ad = RiverClassifier(DummyBudgetPerceptron())
    rows = _dicts(X)
    for i in range(j):
        ad.learn_one(rows[i], y[i])
    before = model_state(ad.estimator)
    with pytest.raises(ValueError, match=rf"label {order[2]} is not one of the model's "
                       rf"classes \[{min(order[:2])}, {max(order[:2])}\].*cannot add a class"
                       r".*classes=\[\.\.\.\].*OneVsRestClassifier"):
        ad.learn_one(rows[j], y[j])
    assert_same_state(model_state(ad.estimator), before)
    ad.learn_one(rows[0], y[0])                      # a known label is still learned
    ref = DummyBudgetPerceptron().partial_fit(X[:y.index(order[1]) + 1],
                                              y[:y.index(order[1]) + 1])
    for i in list(range(y.index(order[1]) + 1, j)) + [0]:
        ref.partial_fit(X[i:i + 1], [y[i]])
    assert_same_state(model_state(ad.estimator), model_state(ref))


def test_multiclass_estimator_without_classes_is_refused_at_the_first_example():
    ad = RiverClassifier(OneVsRestClassifier(DummyBudgetPerceptron(budget=10), total_budget=30))
    with pytest.raises(ValueError, match=r"needs classes=\[\.\.\.\].*OneVsRestClassifier"):
        ad.learn_one({"a": 1.0}, 0)
    assert ad._buffer_y == [] and not ad.estimator.__sklearn_is_fitted__()
    assert ad.predict_one({"a": 1.0}) is None


def test_a_failed_start_leaves_the_buffer_as_before():
    """A label that makes the start fail (here a missing one) is not kept in the buffer,
    so the next good example starts the model on the examples before it."""
    X, y = stream(12, n=3)
    rows = _dicts(X)
    ad = RiverClassifier(DummyBudgetPerceptron())
    ad.learn_one(rows[0], 0)
    with pytest.raises(ValueError, match="NaN or infinity"):
        ad.learn_one(rows[1], float("nan"))
    ad.learn_one(rows[2], 1)
    ref = DummyBudgetPerceptron().partial_fit(X[[0, 2]], [0, 1])
    assert_same_state(model_state(ad.estimator), model_state(ref))


def test_a_model_fitted_on_a_named_table_reads_dicts_by_its_feature_names():
    """Wrapping a model fitted on a DataFrame: the adapter takes the column order from the
    model's feature_names_in_, not from the first dict's key order, and refuses a name the
    model does not know (adapter unchanged)."""
    import pandas as pd
    from fastbudget import TVMClassifier
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] + 0.3 * X[:, 2] > 0, 1, -1)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    est = TVMClassifier(budget=20, gamma=0.5).fit(df, y)
    ref = TVMClassifier(budget=20, gamma=0.5).fit(X, y)
    adapter = RiverClassifier(est)
    for i in range(5):
        x = {"c": X[i, 2], "a": X[i, 0], "b": X[i, 1]}        # another key order
        assert adapter.decision_one(x) == pytest.approx(ref.decision_function(X[i:i + 1])[0])
    assert adapter.feature_names == ["a", "b", "c"]
    fresh = RiverClassifier(TVMClassifier(budget=20, gamma=0.5).fit(df, y))
    with pytest.raises(ValueError, match=r"'z'.*does not know.*feature_names_in_"):
        fresh.predict_one({"a": 1.0, "b": 2.0, "z": 3.0})
    assert fresh.feature_names == ["a", "b", "c"] or fresh._features is None
    with pytest.raises(ValueError, match="x lacks feature 'c'"):
        fresh.learn_one({"a": 1.0, "b": 2.0}, 1)
    assert fresh._features is None


# ------------------------------------------------------------------ river's own checks
def _river_params():
    return list(RiverClassifier._unit_test_params())


@pytest.mark.parametrize("params", _river_params(),
                         ids=[repr(p["estimator"]) for p in _river_params()])
def test_river_check_estimator(params):
    """river's whole check suite (check_estimator: cloning, pickling, shuffled, emerging and
    disappearing features, predict_proba_one, bounded memory, ...), nothing skipped."""
    pytest.importorskip("river")
    from river import checks

    model = RiverClassifier(**params)
    assert model._unit_test_skips() == set()
    checks.check_estimator(model)


def test_predict_proba_one_is_the_learners_calibrated_probability():
    X, y = stream(11, n=120)
    ad = RiverClassifier(PerceptronClassifier(budget=20, kernel="rbf", gamma=0.5))
    before = ad.predict_proba_one(_dicts(X[:1])[0])
    assert before == {False: 0.5, True: 0.5}            # river's binary convention
    for x, t in zip(_dicts(X), y):
        ad.learn_one(x, int(t))
    x0 = _dicts(X[:1])[0]
    got = ad.predict_proba_one(x0)
    want = ad.estimator.predict_proba(X[:1])[0]
    assert got == {0: want[0], 1: want[1]}
    assert all(type(k) is int for k in got)
    assert ad.predict_one(x0) == max(got, key=got.get)


def test_a_fresh_model_orders_its_columns_by_name():
    """Two adapters fed the same examples with their keys in different orders learn the
    same model (the columns are sorted by name), so nothing depends on the key order."""
    X, y = stream(12, n=60)
    rng = np.random.default_rng(0)
    a = RiverClassifier(DummyBudgetPerceptron(), classes=[0, 1])
    b = RiverClassifier(DummyBudgetPerceptron(), classes=[0, 1])
    for x, t in zip(_dicts(X), y):
        keys = list(x)
        rng.shuffle(keys)
        a.learn_one(x, t)
        b.learn_one({k: x[k] for k in keys}, t)
    assert a.feature_names == b.feature_names == ["f0", "f1", "f2"]
    assert_same_state(model_state(a.estimator), model_state(b.estimator))


def test_unknown_features_can_be_ignored():
    ad = RiverClassifier(DummyBudgetPerceptron(), classes=[0, 1], unknown_features="ignore")
    ad.learn_one({"a": 1.0, "b": 2.0}, 1)
    ad.learn_one({"a": 1.0, "b": 2.0, "new": 5.0}, 0)
    ref = DummyBudgetPerceptron().partial_fit([[1.0, 2.0]], [1], classes=[0, 1])
    ref.partial_fit([[1.0, 2.0]], [0])
    assert_same_state(model_state(ad.estimator), model_state(ref))
    with pytest.raises(ValueError, match="unknown_features must be"):
        RiverClassifier(DummyBudgetPerceptron(), unknown_features="drop").learn_one({"a": 1.0}, 1)


# ------------------------------------------------------------------ mini-batches
@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_learn_many_is_learn_one_row_by_row(id_, factory):
    """``learn_many`` over uneven batches (columns in another order each time, a NaN cell
    filled by ``missing_value``, the warm-up of ``gamma='scale'`` ending inside a batch)
    learns the model ``learn_one`` learns over the same rows; ``predict_many`` and
    ``predict_proba_many`` are ``predict_one`` and ``predict_proba_one`` per row, indexed as
    the batch, before the model starts and after."""
    pd = pytest.importorskip("pandas")
    est = factory()
    X, y = stream(5, n=90, n_classes=2 if is_binary(est) else 3)
    X[40, 1] = 0.0                                   # the value missing_value stands for
    classes = np.unique(y)
    one = RiverClassifier(factory(), classes=classes, warm_up=15, missing_value=0.0)
    many = RiverClassifier(factory(), classes=classes, warm_up=15, missing_value=0.0)
    rows = _dicts(X)
    for x, t in zip(rows, y):
        one.learn_one(x, t)
    frame = pd.DataFrame(rows, index=np.arange(100, 190))
    frame.iloc[40, 1] = np.nan                       # an absent feature
    for k, (lo, hi) in enumerate([(0, 7), (7, 8), (8, 33), (33, 90)]):
        part = frame.iloc[lo:hi]
        part = part[list(part.columns)[::-1]] if k % 2 else part
        many.learn_many(part, pd.Series(y[lo:hi]))
        if k == 0 and est._gamma_from_data():        # still warming up: per-row answers
            assert not many.estimator.__sklearn_is_fitted__()
            assert many.predict_many(part).tolist() == [many.predict_one(x) for x in rows[:7]]
    _same_model(many.estimator, one.estimator)
    got = many.predict_many(frame)
    assert list(got.index) == list(frame.index)
    assert got.tolist() == [one.predict_one(x) for x in rows]
    P = many.predict_proba_many(frame)
    assert list(P.columns) == classes.tolist() and list(P.index) == list(frame.index)
    for i, x in enumerate(rows):
        want = one.predict_proba_one(x)
        assert P.iloc[i].to_dict() == pytest.approx(want, abs=1e-12)


def _same_model(a, b):
    """The same state, bit for bit but the calibration statistics, which a chunk sums in
    another order than its rows one at a time (1e-12)."""
    sa, sb = model_state(a), model_state(b)
    stats = [k for k in sa if "calibration" in k]
    for k in stats:
        np.testing.assert_allclose(sa.pop(k), sb.pop(k), rtol=1e-12, atol=1e-12)
    assert_same_state(sa, sb)


@pytest.mark.parametrize("learner", ["perceptron", "random"])     # a chunk, row by row
def test_learn_many_refuses_bad_batches_and_keeps_the_model(learner):
    from fastbudget import RandomBudgetClassifier

    pd = pytest.importorskip("pandas")
    X, y = stream(6, n=60)

    def make():
        return (PerceptronClassifier(budget=20, kernel="rbf", gamma=0.5) if learner ==
                "perceptron" else RandomBudgetClassifier(budget=20, gamma=0.5, random_state=0))

    ad = RiverClassifier(make())
    frame = pd.DataFrame(_dicts(X))
    ad.learn_many(frame.iloc[:30], pd.Series(y[:30]))
    before = model_state(ad.estimator)
    bad = frame.iloc[30:].copy()
    bad["new"] = 1.0
    with pytest.raises(ValueError, match="does not know"):
        ad.learn_many(bad, pd.Series(y[30:]))
    bad = frame.iloc[30:].copy()
    bad.iloc[3, 0] = np.nan
    with pytest.raises(ValueError, match="lacks feature 'f0'.*missing_value"):
        ad.learn_many(bad, pd.Series(y[30:]))
    with pytest.raises(ValueError, match="label 7 is not one of the model's classes"):
        ad.learn_many(frame.iloc[30:], pd.Series(np.where(y[30:] == 1, 7, 0)))
    with pytest.raises(ValueError, match="30 rows but y has 29"):
        ad.learn_many(frame.iloc[30:], pd.Series(y[31:]))
    assert_same_state(model_state(ad.estimator), before)
    ad.unknown_features = "ignore"
    extra = frame.iloc[30:].assign(new=1.0)
    ad.learn_many(extra, pd.Series(y[30:]))
    ref = RiverClassifier(make())
    for x, t in zip(_dicts(X), y):
        ref.learn_one(x, t)
    _same_model(ad.estimator, ref.estimator)
