"""river-style adapter: the dict protocol (always), and river's own tools (when installed)."""
import time

import numpy as np
import pytest

from _dummy import DummyBudgetPerceptron
from _estimators import ESTIMATORS, IDS, is_binary
from _helpers import assert_same_state, model_state, stream
from fastbudget.multiclass import OneVsRestClassifier
from fastbudget.river_adapter import RiverClassifier


def _dicts(X):
    return [{f"f{j}": float(v) for j, v in enumerate(row)} for row in X]


@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_learn_one_equals_partial_fit_row_by_row(id_, factory):
    est = factory()
    X, y = stream(0, n=60, n_classes=2 if is_binary(est) else 3)
    classes = np.unique(y)
    ad = RiverClassifier(factory(), classes=classes)
    for x, t in zip(_dicts(X), y):
        ad.learn_one(x, t)
    ref = factory()
    for i in range(len(X)):
        ref.partial_fit(X[i:i + 1], y[i:i + 1], classes=classes)
    assert_same_state(model_state(ad.estimator), model_state(ref))
    preds = [ad.predict_one(x) for x in _dicts(X)]
    np.testing.assert_array_equal(preds, ref.predict(X))
    assert all(type(p) is int for p in preds)  # plain Python labels, as river expects


def test_buffers_until_two_classes_then_starts():
    X, y = stream(1, n=50)
    y = np.r_[np.zeros(5, int), y[5:]]
    y[5] = 1
    ad = RiverClassifier(DummyBudgetPerceptron())
    for i, x in enumerate(_dicts(X[:5])):
        ad.learn_one(x, int(y[i]))
        assert ad.predict_one(x) is None  # nothing learned yet: river's convention
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
    ({"f0": 1.0, "f1": 2.0, "f2": 3.0, "f9": 0.0}, r"feature\(s\) \['f9'\] not seen"),
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
