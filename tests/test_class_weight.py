"""class_weight on every learner, as scikit-learn's SVC / SGDClassifier.

class_weight={c: k} is exactly sample_weight k on class c (same arithmetic, so bit-identical
models); 'balanced' in fit is the dict scikit-learn computes; 'balanced' in partial_fit /
learn_one and bad values raise before anything changes; the parameter survives get_params,
clone, save/load and pickle; IncrementalSVC with class weights matches sklearn.svm.SVC.
"""
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.svm import SVC
from sklearn.utils.class_weight import compute_class_weight

from _estimators import ESTIMATORS, is_binary
from _helpers import assert_same_state, model_state, stream
from fastbudget import IncrementalSVC, OneVsRestClassifier, TVMClassifier, load
from fastbudget.estimators.baselines import PerceptronClassifier
from fastbudget.river_adapter import RiverClassifier

# these tests load models the command line trained and check them in-process, on rows they
# standardise themselves; load's warning to do so is tested in test_load_scaler.py
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*trained by the command line on standardised rows:UserWarning")

WEIGHTED = [pytest.param(id_, f, id=id_) for id_, f in ESTIMATORS
            if "class_weight" in f()._get_param_names()]


def _unit_only(est):
    est = getattr(est, "estimator", est)
    return bool(getattr(est, "_unit_weights_only", False))


def _data(est, seed=0, n=160):
    X, y = stream(seed, n=n, n_classes=2 if is_binary(est) else 4)
    if is_binary(est):
        y = np.where(y == 1, 7, -3)         # labels that are not 0/1 or -1/+1
    return X, y


def _weights_for(est, y):
    """A class_weight dict (one class weighted, one absent) and the equivalent
    sample weights."""
    cls = np.unique(y)
    k = 1.0 if _unit_only(est) else 2.5
    cw = {cls[-1].item(): k} if is_binary(est) else {cls[0].item(): k, cls[2].item(): 0.5}
    sw = np.array([cw.get(v, 1.0) for v in y.tolist()])
    return cw, sw


def _same_model(a, b, X):
    """Bit-identical decision values and states."""
    assert np.array_equal(a.decision_function(X), b.decision_function(X))
    assert_same_state(model_state(a), model_state(b))


@pytest.mark.parametrize("id_,factory", WEIGHTED)
def test_dict_equals_sample_weight_in_fit_and_partial_fit(id_, factory):
    est = factory()
    X, y = _data(est)
    cw, sw = _weights_for(est, y)
    a = factory().set_params(class_weight=cw).fit(X, y)
    b = factory().fit(X, y, sample_weight=sw)
    _same_model(a, b, X)
    # partial_fit, with sample weights on top: the product
    extra = np.linspace(0.5, 1.5, len(y)) if not _unit_only(est) else np.ones(len(y))
    cls = np.unique(y)
    a = factory().set_params(class_weight=cw)
    b = factory()
    for s in (slice(0, 60), slice(60, None)):
        a.partial_fit(X[s], y[s], classes=cls, sample_weight=extra[s])
        b.partial_fit(X[s], y[s], classes=cls, sample_weight=extra[s] * sw[s])
    _same_model(a, b, X)


@pytest.mark.parametrize("id_,factory", WEIGHTED)
def test_class_weight_changes_the_model_or_is_refused(id_, factory):
    est = factory()
    X, y = _data(est)
    cls = np.unique(y)
    cw = {cls[0].item(): 8.0}
    if _unit_only(est):
        with pytest.raises(ValueError, match="weight"):
            factory().set_params(class_weight=cw).fit(X, y)
        return
    a = factory().set_params(class_weight=cw).fit(X, y)
    b = factory().fit(X, y)
    assert not np.array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("id_,factory", WEIGHTED)
def test_none_and_unit_dict_are_the_default(id_, factory):
    est = factory()
    X, y = _data(est)
    ref = factory().fit(X, y)
    _same_model(factory().set_params(class_weight=None).fit(X, y), ref, X)
    _same_model(factory().set_params(class_weight={y[0].item(): 1.0}).fit(X, y), ref, X)


@pytest.mark.parametrize("id_,factory", WEIGHTED)
def test_balanced_in_fit_is_sklearns_dict(id_, factory):
    est = factory()
    X, y = _data(est)
    cls = np.unique(y)
    weights = compute_class_weight("balanced", classes=cls, y=y)
    assert not np.allclose(weights, 1.0)             # the data set is imbalanced
    cw = {c.item(): w for c, w in zip(cls, weights)}
    a = factory().set_params(class_weight="balanced")
    if _unit_only(est):
        with pytest.raises(ValueError, match="does not support example weights"):
            a.fit(X, y)
        assert not a.__sklearn_is_fitted__()
        return
    a.fit(X, y)
    _same_model(a, factory().set_params(class_weight=cw).fit(X, y), X)


@pytest.mark.parametrize("id_,factory", WEIGHTED)
def test_class_weight_attribute_as_svc(id_, factory, tmp_path):
    """class_weight_ (SVC's fitted attribute): one weight per class of classes_; 'balanced'
    keeps fit's weights through save/load and pickle."""
    est = factory()
    X, y = _data(est)
    cls = np.unique(y)
    assert not hasattr(est, "class_weight_")
    est.fit(X, y)
    assert np.array_equal(est.class_weight_, np.ones(len(cls)))
    cw, _ = _weights_for(est, y)
    est.set_params(class_weight=cw)
    assert np.array_equal(est.class_weight_, [cw.get(c, 1.0) for c in cls.tolist()])
    est.set_params(class_weight="balanced")
    assert not hasattr(est, "class_weight_")        # not computed by any fit yet
    if _unit_only(est):
        return
    est.fit(X, y)
    expected = compute_class_weight("balanced", classes=cls, y=y)
    assert np.allclose(est.class_weight_, expected, rtol=1e-15, atol=0)
    est.save(tmp_path / "m.npz")
    for other in (load(tmp_path / "m.npz"), pickle.loads(pickle.dumps(est))):
        assert np.array_equal(other.class_weight_, est.class_weight_)
    est.class_weight_[:] = 0.0                       # a copy: the model keeps its weights
    assert np.allclose(est.class_weight_, expected, rtol=1e-15, atol=0)


@pytest.mark.parametrize("id_,factory", WEIGHTED)
def test_balanced_refused_in_partial_fit_and_learn_one(id_, factory):
    est = factory()
    X, y = _data(est)
    msg = r"'balanced' is not supported.*compute_class_weight.*dict"
    # unfitted: stays unfitted
    fresh = factory().set_params(class_weight="balanced")
    with pytest.raises(ValueError, match=msg):
        fresh.partial_fit(X, y, classes=np.unique(y))
    assert not fresh.__sklearn_is_fitted__()
    # fitted with 'balanced': partial_fit and learn_one refuse it, model bit-identical
    est = factory()
    if not _unit_only(est):
        est.set_params(class_weight="balanced")
    est.fit(X[:100], y[:100]).set_params(class_weight="balanced")
    before = model_state(est)
    with pytest.raises(ValueError, match=msg):
        est.partial_fit(X[100:], y[100:])
    assert_same_state(model_state(est), before)
    if hasattr(est, "learn_one"):
        with pytest.raises(ValueError, match=msg):
            est.learn_one(X[100], y[100])
        assert_same_state(model_state(est), before)
    if is_binary(est):
        river = RiverClassifier(est)
        with pytest.raises(ValueError, match=msg):
            river.learn_one({f"x{j}": X[100, j] for j in range(X.shape[1])}, y[100].item())
        assert_same_state(model_state(est), before)


BAD = [
    ({99: 2.0}, r"label\(s\) \[99\] that are not among the classes"),
    ("KEY", r"must be a finite non-negative number; got -1"),
    ("NAN", r"must be a finite non-negative number; got nan"),
    ("INF", r"must be a finite non-negative number; got inf"),
    ("STR", r"must be a finite non-negative number; got '2'"),
    ("NONE", r"must be a finite non-negative number; got None"),
    ("balance", r"must be None, 'balanced' or a dict"),
    ([1.0, 2.0], r"must be None, 'balanced' or a dict.*type list"),
]


def _bad_value(code, c):
    return {"KEY": {c: -1.0}, "NAN": {c: float("nan")}, "INF": {c: np.inf}, "STR": {c: "2"},
            "NONE": {c: None}}.get(code, code) if isinstance(code, str) else code


@pytest.mark.parametrize("bad,msg", BAD, ids=[str(b) for b, _ in BAD])
@pytest.mark.parametrize("id_,factory", WEIGHTED)
def test_bad_class_weight_raises_before_any_change(id_, factory, bad, msg):
    est = factory()
    X, y = _data(est)
    value = _bad_value(bad, y[0].item())
    fresh = factory().set_params(class_weight=value)
    with pytest.raises(ValueError, match=msg):
        fresh.fit(X, y)
    assert not fresh.__sklearn_is_fitted__()
    with pytest.raises(ValueError, match=msg):
        fresh.partial_fit(X, y, classes=np.unique(y))
    assert not fresh.__sklearn_is_fitted__()
    est = factory().fit(X[:100], y[:100])
    before = model_state(est)
    est.set_params(class_weight=value)
    for call in (lambda: est.partial_fit(X[100:], y[100:]), lambda: est.fit(X, y)):
        with pytest.raises(ValueError, match=msg):
            call()
        assert_same_state(model_state(est), before)
    if hasattr(est, "learn_one"):
        with pytest.raises(ValueError, match=msg):
            est.learn_one(X[100], y[100])
        assert_same_state(model_state(est), before)


@pytest.mark.parametrize("id_,factory", WEIGHTED)
def test_round_trips(id_, factory, tmp_path):
    est = factory()
    X, y = _data(est)
    cw, _ = _weights_for(est, y)
    est.set_params(class_weight=cw)
    assert est.get_params()["class_weight"] == cw
    c = clone(est)
    assert c.get_params()["class_weight"] == cw
    est.fit(X[:100], y[:100])
    path = tmp_path / "m.npz"
    est.save(path)
    for other in (load(path), pickle.loads(pickle.dumps(est))):
        assert other.class_weight == cw
        assert [type(k) for k in other.class_weight] == [type(k) for k in cw]
        assert_same_state(model_state(other), model_state(est))
        other.partial_fit(X[100:], y[100:])
    est.partial_fit(X[100:], y[100:])
    assert_same_state(model_state(other), model_state(est))


@pytest.mark.parametrize("cw", [{0: 2.0, 1: 1.0}, {-1: 3, 1: 0.5}, {1.0: 2.0, 2.0: 1.0},
                                {"a": 2.0}, {"__a__": 2.0, "b": 1.0}, {True: 2.0}])
def test_persist_keeps_label_key_types(cw, tmp_path):
    keys = list(cw)
    y = np.array(keys + [k for k in ([0, 1] if isinstance(keys[0], bool) else keys)
                         for _ in range(20)][: 40 - len(keys)])
    if len(np.unique(y)) < 2:
        other = "z" if isinstance(keys[0], str) else (False if isinstance(keys[0], bool) else 99)
        y = np.r_[y[:30], np.array([other] * 10, dtype=y.dtype)]
    X = np.random.default_rng(0).normal(size=(len(y), 2))
    est = PerceptronClassifier(budget=10, kernel="rbf", class_weight=cw).fit(X, y)
    est.save(tmp_path / "m.npz")
    back = load(tmp_path / "m.npz")
    assert back.class_weight == cw
    assert [type(k) for k in back.class_weight] == [type(k) for k in cw]


@pytest.mark.parametrize("cw", [{0: 1.0, 1: 6.0}, {1: 0.3}, "balanced"])
def test_incremental_svc_matches_sklearn_svc(cw):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3))
    y = (X[:, 0] + 0.7 * rng.normal(size=90) > 1.0).astype(int)     # about 15 % positive
    assert 0.08 < y.mean() < 0.3
    kw = dict(C=2.0, gamma=0.4)
    ours = IncrementalSVC(capacity=100, class_weight=cw, **kw).fit(X, y)
    ref = SVC(class_weight=cw, tol=1e-10, **kw).fit(X, y)
    f, g = ours.decision_function(X), ref.decision_function(X)
    assert np.max(np.abs(f - g)) <= 1e-5 * np.max(np.abs(g))
    # and the weights matter: not the unweighted SVM
    plain = SVC(tol=1e-10, **kw).fit(X, y).decision_function(X)
    assert np.max(np.abs(plain - g)) > 1e-2 * np.max(np.abs(g))


def test_incremental_svc_learn_one_and_reweight_apply_the_dict():
    X, y = stream(5, n=80)
    cw = {1: 4.0}
    a = IncrementalSVC(gamma=0.5, capacity=100, class_weight=cw).fit(X[:40], y[:40])
    b = IncrementalSVC(gamma=0.5, capacity=100).fit(X[:40], y[:40],
                                                   sample_weight=np.where(y[:40] == 1, 4.0, 1.0))
    slots = [a.learn_one(X[i], y[i], sample_weight=0.5) for i in range(40, 50)]
    for i in range(40, 50):
        b.learn_one(X[i], y[i], sample_weight=0.5 * (4.0 if y[i] == 1 else 1.0))
    _same_model(a, b, X)
    j = next(s for s, i in zip(slots, range(40, 50)) if y[i] == 1)
    a.reweight(j, 2.0)
    b.reweight(j, 8.0)
    _same_model(a, b, X)
    a.set_params(class_weight="balanced")
    before = model_state(a)
    with pytest.raises(ValueError, match="'balanced' is not supported"):
        a.reweight(j, 1.0)
    assert_same_state(model_state(a), before)


def test_tvm_learn_one_fast_path_applies_the_dict():
    X, y = stream(2, n=400)
    cw = {0: 0.5, 1: 3.0}
    a = TVMClassifier(budget=15, C=1.0, gamma=0.5, class_weight=cw).fit(X[:100], y[:100])
    b = TVMClassifier(budget=15, C=1.0, gamma=0.5).fit(
        X[:100], y[:100], sample_weight=np.where(y[:100] == 1, 3.0, 0.5))
    assert a._check_one(X[100], y[100].item(), 1.0) is not None      # the fast path is taken
    for i in range(100, 400):
        a.learn_one(X[i], y[i].item(), sample_weight=2.0)
        b.learn_one(X[i], y[i].item(), sample_weight=2.0 * cw[y[i].item()])
    _same_model(a, b, X)
    # the dict changed in place: the new weights apply (no stale cache), also after pickling
    a.class_weight[1] = 0.25
    a = pickle.loads(pickle.dumps(a))
    assert "_cw_cache" not in a.__dict__
    for i in range(100, 200):
        a.learn_one(X[i], y[i].item())
        b.learn_one(X[i], y[i].item(), sample_weight={0: 0.5, 1: 0.25}[y[i].item()])
    _same_model(a, b, X)
    a.class_weight[1] = -1.0
    before = model_state(a)
    with pytest.raises(ValueError, match="non-negative"):
        a.learn_one(X[0], 1)
    assert_same_state(model_state(a), before)
    a.class_weight[1] = 3.0
    b.set_params(class_weight=None)
    # through the river adapter (fitted estimator: its learn_one)
    r = RiverClassifier(a)
    r.learn_one({"a": 0.1, "b": 0.2, "c": 0.3}, 1)
    b.learn_one(np.array([0.1, 0.2, 0.3]), 1, sample_weight=3.0)
    _same_model(a, b, X)


def test_river_unfitted_and_buffered_apply_the_dict():
    X, y = stream(4, n=60)
    cw = {1: 2.0}
    rows = [{f"f{j}": X[i, j] for j in range(3)} for i in range(60)]
    r = RiverClassifier(PerceptronClassifier(budget=20, kernel="rbf", class_weight=cw))
    for i in range(60):
        r.learn_one(rows[i], y[i].item())
    ref = PerceptronClassifier(budget=20, kernel="rbf")
    k = next(i for i in range(60) if y[i] != y[0]) + 1          # the buffered start
    sw = np.where(y == 1, 2.0, 1.0)
    ref.partial_fit(X[:k], y[:k], sample_weight=sw[:k])
    for i in range(k, 60):
        ref.partial_fit(X[i:i + 1], y[i:i + 1], sample_weight=sw[i:i + 1])
    _same_model(r.estimator, ref, X)


def test_ovr_class_weight_per_original_class_and_template_refused():
    X, y = stream(1, n=200, n_classes=4)
    cw = {0: 3.0, 3: 0.25}
    ovr = OneVsRestClassifier(PerceptronClassifier(budget=20, kernel="rbf"), total_budget=80,
                              class_weight=cw).fit(X, y)
    sw = np.array([cw.get(v, 1.0) for v in y.tolist()])
    for k, est in enumerate(ovr.estimators_):
        ref = PerceptronClassifier(budget=20, kernel="rbf").fit(X, np.where(y == k, 1, -1),
                                                                sample_weight=sw)
        _same_model(est, ref, X)
    bad = OneVsRestClassifier(PerceptronClassifier(class_weight={1: 2.0}))
    with pytest.raises(ValueError, match="Set class_weight on the OneVsRestClassifier"):
        bad.fit(X, y)
    assert not bad.__sklearn_is_fitted__()


def test_all_zero_after_class_weight_is_refused():
    X, y = stream(0, n=50)
    est = PerceptronClassifier(class_weight={0: 0.0, 1: 0.0})
    with pytest.raises(ValueError, match="all weights are zero once multiplied by class_weight"):
        est.fit(X, y)


def test_gridsearch_over_class_weight():
    from sklearn.model_selection import GridSearchCV

    X, y = stream(0, n=120)
    gs = GridSearchCV(TVMClassifier(budget=10, C=1.0, gamma=0.5),
                      {"class_weight": [None, "balanced", {1: 2.0}]}, cv=2).fit(X, y)
    assert gs.best_params_["class_weight"] in (None, "balanced", {1: 2.0})


def test_cli_class_weight(tmp_path):
    from fastbudget.cli import main

    X, y = stream(0, n=300)
    data = tmp_path / "d.csv"
    np.savetxt(data, np.c_[X, np.where(y == 1, 1, -1)], delimiter=",", fmt="%.6f")
    out = tmp_path / "m.npz"
    assert main(["train", "tvm", str(data), "--budget", "10", "--class-weight", "1:5,-1:0.5",
                 "-q", "-o", str(out)]) == 0
    assert load(out).class_weight == {1: 5.0, -1: 0.5}
    assert main(["train", "tvm", str(data), "--budget", "10", "--class-weight",
                 '{"1": 2}', "-q", "-o", str(out)]) == 0
    assert load(out).class_weight == {1: 2.0}
    # a negative label first, as a separate argument (argparse alone reads it as an option)
    assert main(["train", "tvm", str(data), "--budget", "10", "--class-weight", "-1:3,1:1",
                 "--classes", "-1,1", "-q", "-o", str(out)]) == 0
    assert load(out).class_weight == {-1: 3.0, 1: 1.0}
    assert main(["train", "tvm", str(data), "--class-weight", "balanced", "-q", "-o",
                 str(tmp_path / "x.npz")]) == 2
    assert main(["train", "tvm", str(data), "--class-weight", "3:2", "-q", "-o",
                 str(tmp_path / "x.npz")]) == 2
    assert not (tmp_path / "x.npz").exists()
