"""Every fastbudget estimator works inside dask-ml's wrappers: ``Incremental`` (sequential
``partial_fit`` over the blocks of a dask array) and ``ParallelPostFit`` (block-wise
``predict`` / ``decision_function``)."""
import dask.array as da
import numpy as np
import pytest
from dask_ml.wrappers import Incremental, ParallelPostFit
from sklearn.base import clone

from _estimators import ESTIMATORS
from fastbudget import distributed as fd


def _data(seed=0, n=360, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1, -1)
    if classes == 3:
        y = np.where(X[:, 2] > 0.8, 2, y)
    return X, y


def test_one_vs_rest_scores_have_a_column_per_class():
    from fastbudget import OneVsRestClassifier, TVMClassifier
    X, y = _data(3, classes=3)
    est = OneVsRestClassifier(TVMClassifier(budget=20)).fit(X, y)
    Xd = da.from_array(X, chunks=(100, 3))
    f = fd.decision_function(est, Xd).compute()
    assert f.shape == (X.shape[0], 3)
    np.testing.assert_allclose(f, est.decision_function(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ParallelPostFit(est).predict(Xd).compute(), est.predict(X))


@pytest.mark.parametrize("name,make", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_incremental_is_partial_fit_over_the_blocks(name, make):
    X, y = _data()
    Xd = da.from_array(X, chunks=(90, 3))
    yd = da.from_array(y, chunks=90)
    inc = Incremental(make(), scoring="accuracy", shuffle_blocks=False)
    inc.fit(Xd, yd, classes=[-1, 1])
    ref = make()
    for lo in range(0, X.shape[0], 90):
        ref.partial_fit(X[lo:lo + 90], y[lo:lo + 90], classes=[-1, 1])
    np.testing.assert_array_equal(inc.estimator_.predict(X), ref.predict(X))
    np.testing.assert_array_equal(inc.predict(Xd).compute(), ref.predict(X))
    assert 0.0 <= inc.score(Xd, yd) <= 1.0


@pytest.mark.parametrize("name,make", ESTIMATORS, ids=[e[0] for e in ESTIMATORS])
def test_parallel_post_fit_scores_block_by_block(name, make):
    X, y = _data(1)
    est = make().fit(X, y)
    ppf = ParallelPostFit(est)
    Xt, _ = _data(2, 900)
    Xd = da.from_array(Xt, chunks=(200, 3))
    np.testing.assert_array_equal(ppf.predict(Xd).compute(), est.predict(Xt))
    assert ppf.score(Xd, da.from_array(np.where(Xt[:, 0] > 0, 1, -1), chunks=200)) == \
        est.score(Xt, np.where(Xt[:, 0] > 0, 1, -1))
    # (ParallelPostFit has no decision_function: fastbudget.distributed's maps it)
    np.testing.assert_allclose(fd.decision_function(est, Xd).compute(),
                               est.decision_function(Xt), rtol=1e-12, atol=1e-12)
    # a clone is unfitted and refits alike
    c = clone(ppf).fit(X, y)
    np.testing.assert_array_equal(c.predict(Xd).compute(), est.predict(Xt))
