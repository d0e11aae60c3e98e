"""Permuting the feature columns (the same way for training and test) changes no prediction.

Kernel values sum over the columns, so their last bits depend on the columns' order; a
decision that compares two such values (a merge cost against another, |f| against the
margin) must treat a tie within rounding as a tie and break it by something else (an
index), or the column order decides. Tied data makes such ties common: integer-valued
features and duplicated points.
"""
import numpy as np
import pytest

from _estimators import ESTIMATORS, IDS, is_binary


def _tied(seed, n=300, d=4, n_classes=2):
    """Integer-valued features in {0, 1, 2}, a third of the rows duplicated."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, d)).astype(np.float64)
    dup = rng.choice(n, n // 3, replace=False)
    X[dup] = X[rng.choice(n, n // 3)]
    if n_classes == 2:
        y = (X[:, 0] + X[:, 1] - X[:, 2] + 0.5 * rng.normal(size=n) > 1.0).astype(np.int64)
    else:
        y = (X[:, 0] + X[:, 1] + rng.integers(0, 2, size=n)).astype(np.int64) % n_classes
    return X, y


def _train(factory, X, y, classes, chunk):
    est = factory()
    for i in range(0, len(y), chunk):
        est.partial_fit(X[i:i + chunk], y[i:i + chunk], classes=classes)
    return est


@pytest.mark.parametrize("chunk", [1, 40])
@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_column_permutation_changes_no_prediction(id_, factory, chunk):
    est = factory()
    X, y = _tied(0, n_classes=2 if is_binary(est) else 3)
    classes = np.unique(y)
    Xt, _ = _tied(1, n=200, n_classes=2)
    n0 = 2 if chunk == 1 else chunk              # (gamma='scale' needs a first chunk > 1)
    for perm in (np.array([3, 1, 0, 2]), np.array([1, 2, 3, 0])):
        a, b = factory(), factory()
        a.partial_fit(X[:n0], y[:n0], classes=classes)
        b.partial_fit(X[:n0, perm], y[:n0], classes=classes)
        for i in range(n0, len(y), chunk):
            a.partial_fit(X[i:i + chunk], y[i:i + chunk])
            b.partial_fit(X[i:i + chunk, perm], y[i:i + chunk])
        np.testing.assert_array_equal(a.predict(Xt), b.predict(Xt[:, perm]))
        np.testing.assert_array_equal(a.predict(X), b.predict(X[:, perm]))
        np.testing.assert_allclose(a.decision_function(Xt), b.decision_function(Xt[:, perm]),
                                   rtol=1e-7, atol=1e-7)


def test_tvm_on_rivers_phishing_at_budget_30():
    """The measurement of the issue: TVM (B = 30) learning river's Phishing data one
    example at a time, predicting each before learning it; the predictions with the
    columns permuted are the same."""
    datasets = pytest.importorskip("river.datasets")
    from fastbudget import TVMClassifier

    data = list(datasets.Phishing())
    keys = list(data[0][0])
    X = np.array([[x[k] for k in keys] for x, _ in data])
    y = np.array([int(t) for _, t in data])
    perm = np.random.default_rng(0).permutation(X.shape[1])
    preds = []
    for Z in (X, X[:, perm]):
        est = TVMClassifier(budget=30).partial_fit(Z[:100], y[:100], classes=[0, 1])
        p = []
        for i in range(100, len(y)):
            p.append(est.predict(Z[i:i + 1])[0])
            est.learn_one(Z[i], int(y[i]))
        preds.append(np.array(p))
    np.testing.assert_array_equal(preds[0], preds[1])
