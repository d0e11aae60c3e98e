"""Fitted attributes laid out as scikit-learn's: every learner's public model reproduces its
decision function, with the shapes and the support-vector order of ``sklearn.svm.SVC``
(kernel models) or of scikit-learn's linear classifiers (``coef_``)."""
import numpy as np
import pytest
from sklearn.linear_model import SGDClassifier
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.svm import SVC

from _estimators import ESTIMATORS
from _helpers import stream

# learners with a single binary model (the wrappers and the test dummy are not learners)
BINARY = [(i, f) for i, f in ESTIMATORS if not i.startswith(("ovr", "dummy"))]


def _data(seed=0):
    X, y = stream(seed, n=200)
    return X, np.where(y == 1, 7, 3)          # labels other than 0/1 and -1/+1


def _variants(factory):
    est = factory()
    params = est.get_params()
    out = [est]
    if "kernel" in params:
        for k in ("rbf", "poly", "linear"):
            if k != params["kernel"]:
                e = factory().set_params(kernel=k)
                if "gamma" in params and params["gamma"] in (None, "scale", "auto") and k == "poly":
                    e.set_params(gamma=0.3)
                if params.get("maintenance") == "merging":    # BSGD merges RBF only
                    e.set_params(maintenance="removal")
                out.append(e)
    return out


@pytest.fixture(scope="module")
def svc_reference():
    X, y = _data()
    return SVC(C=1.0, gamma=0.5).fit(X, y), SGDClassifier(random_state=0).fit(X, y)


@pytest.mark.parametrize("id_,factory", BINARY, ids=[i for i, _ in BINARY])
def test_public_model_reproduces_decision_function(id_, factory, svc_reference):
    svc, sgd = svc_reference
    X, y = _data()
    for est in _variants(factory):
        est.fit(X, y)
        assert list(est.classes_) == [3, 7]
        f = est.decision_function(X)
        scale = max(1.0, np.abs(f).max())
        assert est.intercept_.shape == svc.intercept_.shape == (1,)
        if hasattr(est, "coef_"):                      # a primal linear model
            assert est.coef_.shape == sgd.coef_.shape == (1, X.shape[1])
            g = X @ est.coef_[0] + est.intercept_[0]
        else:
            V = est.twin_vectors_ if hasattr(est, "twin_vectors_") else est.support_vectors_
            assert est.dual_coef_.ndim == svc.dual_coef_.ndim == 2
            assert est.dual_coef_.shape == (1, V.shape[0]) and V.shape[0] > 0
            p = est.get_params()
            K = pairwise_kernels(X, V, metric=p["kernel"], filter_params=True,
                                 gamma=est.gamma_, degree=p.get("degree", 3),
                                 coef0=p.get("coef0", 1.0))
            g = K @ est.dual_coef_[0] + est.intercept_[0]
        assert np.abs(f - g).max() <= 1e-9 * scale, (id_, est.get_params().get("kernel"))


# learners without per-class support counts, and why
NO_SUPPORT_COUNTS = {
    "tvm": "a twin vector carries weight of both classes (s+, s-)",
    "streamsvm": "the linear ball keeps coef_ (no support vectors)",
    "streamsvm_rbf": "core vectors of an enclosing ball, reported by n_core_",
    "streamsvm_rbf_ball": "core vectors of an enclosing ball, reported by n_core_",
    "pegasos": "primal linear model (coef_)",
}
COUNTED = [(i, f) for i, f in BINARY if i not in NO_SUPPORT_COUNTS]


def test_no_support_counts_list_is_current():
    X, y = _data()
    for id_, factory in BINARY:
        assert hasattr(factory().fit(X, y), "n_support_") == (id_ not in NO_SUPPORT_COUNTS), id_


@pytest.mark.parametrize("id_,factory", COUNTED, ids=[i for i, _ in COUNTED])
def test_support_vectors_grouped_by_class_as_svc(id_, factory, svc_reference):
    svc, _ = svc_reference
    X, y = _data()
    est = factory().fit(X, y)
    n = est.n_support_
    assert n.shape == svc.n_support_.shape == (2,) and n.dtype == svc.n_support_.dtype
    coef = est.dual_coef_[0]
    assert n.sum() == coef.size == est.support_vectors_.shape[0] and n.min() > 0
    # SVC's layout: classes_[0] (negative coefficients) first, then classes_[1]
    assert np.all(coef[: n[0]] < 0) and np.all(coef[n[0]:] >= 0)
    assert np.all(svc.dual_coef_[0, : svc.n_support_[0]] < 0)
    assert np.all(svc.dual_coef_[0, svc.n_support_[0]:] > 0)
    if hasattr(est, "support_"):
        assert est.support_.shape == (n.sum(),)
        for part in (est.support_[: n[0]], est.support_[n[0]:]):   # slot order in each class
            assert np.all(np.diff(part) > 0)
