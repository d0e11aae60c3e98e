"""OneVsRestClassifier: budget split, one-vs-rest semantics, persistence, real data vs SVC."""
import numpy as np
import pytest

from _dummy import DummyBudgetPerceptron
from _helpers import assert_same_state, model_state, stream
from fastbudget.multiclass import OneVsRestClassifier, _clone
from fastbudget.persist import load_model


def test_budget_split_never_exceeds_total():
    X, y = stream(0, n=150, n_classes=7)
    ovr = OneVsRestClassifier(DummyBudgetPerceptron(budget=999), total_budget=100).fit(X, y)
    assert len(ovr.estimators_) == 7
    assert ovr.budget_per_estimator_ == 14 and all(e.budget == 14 for e in ovr.estimators_)
    assert sum(e.budget for e in ovr.estimators_) <= 100
    assert ovr.estimator.budget == 999 and not ovr.estimator.__sklearn_is_fitted__()
    # None keeps the template's budget for each learner
    ovr2 = OneVsRestClassifier(DummyBudgetPerceptron(budget=12)).fit(X, y)
    assert ovr2.budget_per_estimator_ is None and all(e.budget == 12 for e in ovr2.estimators_)


def test_each_learner_is_its_class_against_the_rest():
    """Learner k equals the binary learner trained on (y == class k) relabelled +-1, and
    predict is the argmax of the decision columns."""
    X, y = stream(1, n=200, n_classes=4)
    labels = np.array(["a", "b", "c", "d"])[y]
    ovr = OneVsRestClassifier(DummyBudgetPerceptron(budget=20), total_budget=80)
    for lo in range(0, 200, 50):
        ovr.partial_fit(X[lo:lo + 50], labels[lo:lo + 50], classes=["a", "b", "c", "d"])
    F = np.empty((200, 4))
    for k, c in enumerate("abcd"):
        ref = DummyBudgetPerceptron(budget=20)
        for lo in range(0, 200, 50):
            ref.partial_fit(X[lo:lo + 50], np.where(labels[lo:lo + 50] == c, 1, -1),
                            classes=[-1, 1])
        assert_same_state(model_state(ovr.estimators_[k]), model_state(ref))
        F[:, k] = ref.decision_function(X)
    np.testing.assert_array_equal(ovr.decision_function(X), F)
    np.testing.assert_array_equal(ovr.predict(X), np.array(list("abcd"))[F.argmax(axis=1)])


def test_two_classes_use_a_single_learner_with_the_whole_budget():
    X, y = stream(2, n=120)
    ovr = OneVsRestClassifier(DummyBudgetPerceptron(), total_budget=33).fit(X, y)
    assert len(ovr.estimators_) == 1 and ovr.estimators_[0].budget == 33
    ref = DummyBudgetPerceptron(budget=33).fit(X, np.where(y == 1, 1, -1))
    np.testing.assert_array_equal(ovr.decision_function(X), ref.decision_function(X))
    assert ovr.decision_function(X).shape == (120,)


def test_first_chunk_with_few_classes_needs_classes(tmp_path):
    X, y = stream(3, n=90, n_classes=3)
    ovr = OneVsRestClassifier(DummyBudgetPerceptron(budget=10), total_budget=30)
    first = y < 2
    ovr.partial_fit(X[first][:20], y[first][:20], classes=[0, 1, 2])
    ovr.partial_fit(X, y)
    ovr.save(tmp_path / "ovr.npz")
    back = load_model(tmp_path / "ovr.npz")
    assert_same_state(model_state(back), model_state(ovr))
    back.partial_fit(X, y)
    ovr.partial_fit(X, y)
    assert back.decision_function(X).tobytes() == ovr.decision_function(X).tobytes()


def test_nested_estimator_params_survive_save(tmp_path):
    X, y = stream(4, n=90, n_classes=3)
    ovr = OneVsRestClassifier(DummyBudgetPerceptron(budget=10, gamma=0.25, kernel="rbf"),
                              total_budget=31).fit(X, y)
    ovr.save(tmp_path / "o.npz")
    back = load_model(tmp_path / "o.npz")
    assert isinstance(back.estimator, DummyBudgetPerceptron)
    assert back.estimator.get_params() == ovr.estimator.get_params()
    assert back.total_budget == 31 and back.budget_per_estimator_ == 10


@pytest.mark.parametrize("n_classes", [2, 4])
def test_learn_one_and_predict_one_are_partial_fit_and_predict_on_one_row(n_classes):
    """learn_one is partial_fit on a chunk of one row (classes on the first call; a 1-D
    array or a dict of features; sample_weight), predict_one is predict on one row."""
    from fastbudget.estimators.baselines import PerceptronClassifier

    X, y = stream(5, n=120, n_classes=n_classes)
    labels = np.array(["a", "b", "c", "d"])[y]
    classes = sorted(set(labels))
    w = np.linspace(0.5, 2.0, 120)
    make = lambda: OneVsRestClassifier(PerceptronClassifier(budget=15, kernel="rbf"),
                                       total_budget=60, class_weight={"b": 3.0})
    one, rows = make(), make()
    names = [f"x{j}" for j in range(X.shape[1])]
    for i in range(120):
        x = dict(zip(names, X[i])) if i % 2 else list(X[i])
        one.learn_one(x, labels[i], sample_weight=w[i], classes=classes if i == 0 else None)
        rows.partial_fit(X[i:i + 1], labels[i:i + 1], classes=classes if i == 0 else None,
                         sample_weight=w[i:i + 1])
    assert_same_state(model_state(one), model_state(rows))
    pred = rows.predict(X)
    assert [one.predict_one(X[i]) for i in range(120)] == pred.tolist()
    assert one.predict_one(dict(zip(names, X[7]))) == pred[7]
    assert set(pred) <= set(classes)


def test_learn_one_errors_leave_the_model_unchanged():
    X, y = stream(6, n=60, n_classes=3)
    ovr = OneVsRestClassifier(DummyBudgetPerceptron(budget=10), total_budget=30)
    with pytest.raises(ValueError, match="Only one class"):
        ovr.learn_one(X[0], y[0])                   # the first call needs classes=
    assert not ovr.__sklearn_is_fitted__()
    ovr.learn_one(X[0], y[0], classes=[0, 1, 2])
    before = model_state(ovr)
    with pytest.raises(ValueError, match="1-D array-like or a dict"):
        ovr.learn_one(X[:2], y[0])
    with pytest.raises(ValueError, match="1-D array-like or a dict"):
        ovr.predict_one(X[:2])
    with pytest.raises(ValueError, match="not among the classes"):
        ovr.learn_one(X[1], 7)
    with pytest.raises(ValueError, match="expecting 3 features"):
        ovr.learn_one(X[1, :2], y[1])
    assert_same_state(model_state(ovr), before)


def test_memory_bytes_is_the_sum_over_the_learners():
    X, y = stream(7, n=90, n_classes=3)
    ovr = OneVsRestClassifier(DummyBudgetPerceptron(budget=99), total_budget=30).fit(X, y)
    assert ovr.memory_bytes() == sum(e.memory_bytes() for e in ovr.estimators_)
    one = DummyBudgetPerceptron(budget=10).fit(X, np.where(y == 0, 1, -1))
    assert ovr.memory_bytes() == 3 * one.memory_bytes()


def _pendigits(shared_data):
    a = np.loadtxt(shared_data / "pendigits" / "pendigits.tra", delimiter=",")
    b = np.loadtxt(shared_data / "pendigits" / "pendigits.tes", delimiter=",")
    Xtr, ytr, Xte, yte = a[:, :-1], a[:, -1].astype(int), b[:, :-1], b[:, -1].astype(int)
    mu, sd = Xtr.mean(0), Xtr.std(0)
    return (Xtr - mu) / sd, ytr, (Xte - mu) / sd, yte


def test_pendigits_ten_classes_close_to_svc(shared_data):
    """10-class Pendigits, total budget 1000 support vectors (100 per one-vs-rest learner; a
    binary one-vs-rest learner alone would need more): within 3 points of scikit-learn's SVC
    (one-vs-one, unbudgeted) on the same standardised features and RBF width."""
    from sklearn.svm import SVC

    from fastbudget.estimators.baselines import PerceptronClassifier

    Xtr, ytr, Xte, yte = _pendigits(shared_data)
    rng = np.random.default_rng(1)
    p = rng.permutation(len(Xtr))
    Xtr, ytr = Xtr[p], ytr[p]
    g = 1.0 / Xtr.shape[1]
    ovr = OneVsRestClassifier(PerceptronClassifier(budget=100, kernel="rbf", gamma=g),
                              total_budget=1000)
    for lo in range(0, len(Xtr), 1000):
        ovr.partial_fit(Xtr[lo:lo + 1000], ytr[lo:lo + 1000], classes=np.arange(10))
    acc = np.mean(ovr.predict(Xte) == yte)
    svc = SVC(C=100, gamma=g).fit(Xtr, ytr)
    acc_svc = np.mean(svc.predict(Xte) == yte)
    n_sv = [e.n_support_.sum() for e in ovr.estimators_]
    assert max(n_sv) == 100 and sum(n_sv) <= 1000  # budgets bind and are respected
    assert acc >= acc_svc - 0.03, (acc, acc_svc)


def _binary_learners():
    from _estimators import ESTIMATORS, is_binary
    out = []
    for id_, factory in ESTIMATORS:
        est = factory()
        if (is_binary(est) and not isinstance(est, (DummyBudgetPerceptron, OneVsRestClassifier))
                and not getattr(est, "_unit_weights_only", False)):
            out.append(pytest.param(factory, id=id_))
    return out


@pytest.mark.parametrize("factory", _binary_learners())
def test_ovr_of_each_learner_equals_its_learners_trained_alone(factory):
    """For every binary learner that takes weights, with sample weights and the wrapper's
    class weights: after each chunk (and after learn_one) learner k of OneVsRestClassifier
    is bit for bit the learner trained alone on (y == class k) with the same effective
    weights; a chunk with a bad label leaves every learner as it was."""
    X, y = stream(6, n=240, n_classes=3)
    cw = {0: 1.0, 1: 2.0, 2: 0.5}
    sw = np.random.default_rng(6).uniform(0.5, 2.0, len(y))
    w = sw * np.array([cw[c] for c in y.tolist()])
    template = factory()
    ovr = OneVsRestClassifier(template, class_weight=cw)
    refs = [_clone(template) for _ in range(3)]
    for lo in range(0, 200, 50):
        ovr.partial_fit(X[lo:lo + 50], y[lo:lo + 50], classes=[0, 1, 2],
                        sample_weight=sw[lo:lo + 50])
        for k, ref in enumerate(refs):
            ref.partial_fit(X[lo:lo + 50], np.where(y[lo:lo + 50] == k, 1, -1),
                            classes=[-1, 1], sample_weight=w[lo:lo + 50])
    for k, ref in enumerate(refs):
        assert_same_state(model_state(ovr.estimators_[k]), model_state(ref))
    for i in range(200, 210):
        ovr.learn_one(X[i], y[i])
        for k, ref in enumerate(refs):
            ref.partial_fit(X[i:i + 1], [1 if y[i] == k else -1], sample_weight=[cw[int(y[i])]])
    for k, ref in enumerate(refs):
        assert_same_state(model_state(ovr.estimators_[k]), model_state(ref))
    before = model_state(ovr)
    with pytest.raises(ValueError):
        ovr.partial_fit(X[210:240], np.where(y[210:240] == 2, 7, y[210:240]))   # unknown label
    assert_same_state(model_state(ovr), before)
