"""scikit-learn fit: the estimator checks, Pipeline, GridSearchCV, clone; sklearn optional."""
import functools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import estimator_checks_generator

from _estimators import ESTIMATORS, IDS, KNOWN_FAILURES, SKLEARN_EXPECTED_FAILURES, is_binary
from _helpers import stream

# Checks that cannot run here at all (they raise SkipTest inside scikit-learn); they are left
# out of the parametrization instead of showing up as skips.
NOT_APPLICABLE = {"check_array_api_input"}  # only runs with SCIPY_ARRAY_API=1; no array API claim


def _check_name(check):
    while isinstance(check, functools.partial):
        check = check.func
    return check.__name__


def _all_checks():
    out = []
    for id_, factory in ESTIMATORS:
        est = factory()
        for item in estimator_checks_generator(
            est, legacy=True, expected_failed_checks=SKLEARN_EXPECTED_FAILURES[id_],
            mark="xfail", xfail_strict=True,
        ):
            if hasattr(item, "marks"):  # pytest.param wrapping an expected failure
                name = _check_name(item.values[1])
                if name in NOT_APPLICABLE:
                    continue
                out.append(pytest.param(*item.values, marks=item.marks,
                                        id=f"{id_}-{name}-{len(out)}"))
                continue
            estimator, check = item
            name = _check_name(check)
            if name in NOT_APPLICABLE:
                continue
            marks = ()
            if isinstance(check, functools.partial) and check.keywords.get("readonly_memmap"):
                reason = KNOWN_FAILURES.get((id_, f"sklearn:{name}[readonly_memmap]"))
                if reason:
                    marks = (pytest.mark.xfail(reason=reason, strict=True),)
            out.append(pytest.param(estimator, check, marks=marks, id=f"{id_}-{name}-{len(out)}"))
    return out


@pytest.mark.parametrize("estimator, check", _all_checks())
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------- ecosystem
@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_pipeline_gridsearch_clone(id_, factory):
    est = factory()
    X, y = stream(0, n=160, n_classes=2 if is_binary(est) else 3)
    X = X * 10 + 3
    assert is_classifier(est)
    c = clone(est)
    assert type(c) is type(est) and c.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert not c.__sklearn_is_fitted__()
    pipe = make_pipeline(StandardScaler(), est).fit(X, y)
    assert pipe.score(X, y) == pipe[-1].score(pipe[0].transform(X), y)
    grid_key, values = _grid(est)
    gs = GridSearchCV(make_pipeline(StandardScaler(), est),
                      {f"{type(est).__name__.lower()}__{grid_key}": values}, cv=3)
    gs.fit(X, y)
    assert set(gs.cv_results_["params"][0]) == {f"{type(est).__name__.lower()}__{grid_key}"}
    assert gs.best_estimator_[-1].__sklearn_is_fitted__()
    scores = cross_val_score(clone(est), X, y, cv=3)
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))


@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_calibrated_probabilities(id_, factory):
    """No learner has predict_proba (SVC's comes from Platt scaling with internal
    cross-validation, which a one-pass learner cannot do); scikit-learn's
    CalibratedClassifierCV gives it from decision_function, and beats the class prior."""
    from sklearn.calibration import CalibratedClassifierCV

    est = factory()
    n_classes = 2 if is_binary(est) else 3
    X, y = stream(3, n=600, n_classes=n_classes)
    cal = CalibratedClassifierCV(est, cv=3).fit(X[:400], y[:400])
    p = cal.predict_proba(X[400:])
    assert p.shape == (200, n_classes)
    assert np.all((p >= 0) & (p <= 1)) and np.allclose(p.sum(axis=1), 1)
    onehot = (y[400:, None] == cal.classes_[None, :]).astype(float)
    prior = onehot.mean(axis=0)
    brier = ((p - onehot) ** 2).sum(axis=1).mean()
    brier_prior = ((prior - onehot) ** 2).sum(axis=1).mean()
    assert brier < brier_prior, (brier, brier_prior)


def _grid(est):
    names = est.get_params(deep=True)
    for key, values in (("C", [0.5, 2.0]), ("gamma", [0.1, 1.0]), ("budget", [10, 20]),
                        ("estimator__budget", [10, 20]), ("lambda_", [1e-3, 1e-2])):
        if key in names:
            return key, values
    raise AssertionError(f"no grid parameter for {est!r}")


def test_ovr_nested_params_route_through_set_params():
    from _dummy import DummyBudgetPerceptron
    from fastbudget.multiclass import OneVsRestClassifier

    ovr = OneVsRestClassifier(DummyBudgetPerceptron(budget=7))
    assert ovr.get_params()["estimator__budget"] == 7
    ovr.set_params(estimator__budget=9, total_budget=40)
    assert ovr.estimator.budget == 9 and ovr.total_budget == 40
    with pytest.raises(ValueError, match="Invalid parameter 'bogus'"):
        ovr.set_params(bogus=1)


def test_sklearn_is_optional_at_run_time(tmp_path):
    """With scikit-learn made unimportable, every estimator fits, predicts, saves, loads."""
    code = textwrap.dedent(f"""
        import sys
        sys.modules["sklearn"] = None  # any 'import sklearn' now raises ImportError
        import numpy as np
        import fastbudget, fastbudget.persist as persist
        from _estimators import ESTIMATORS, is_binary
        from _helpers import stream
        from fastbudget.exceptions import NotFittedError
        for id_, factory in ESTIMATORS:
            est = factory()
            try:
                est.predict(np.zeros((1, 3)))
            except NotFittedError:
                pass
            X, y = stream(0, n=120, n_classes=2 if is_binary(est) else 3)
            est.fit(X, y)
            p = {str(tmp_path)!r} + "/" + id_ + ".npz"
            est.save(p)
            assert (persist.load_model(p).predict(X) == est.predict(X)).all()
        assert "sklearn" not in [m.split(".")[0] for m in sys.modules if sys.modules[m] is not None]
        print("ok", len(ESTIMATORS))
    """)
    # run in the tests directory: `python -c` finds the test helpers (_estimators, _helpers)
    # there, and fastbudget is the installed package
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == f"ok {len(ESTIMATORS)}"


# ---------------------------------------------------------------------- feature names
@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_dataframe_column_names_as_scikit_learn(id_, factory):
    """scikit-learn's own check of feature_names_in_ (fit, then every predicting method and
    partial_fit on reordered, renamed and missing columns), which its generator does not
    run for estimators outside scikit-learn; with pandas, a test dependency."""
    import pandas  # noqa: F401
    from sklearn.utils.estimator_checks import check_dataframe_column_names_consistency

    check_dataframe_column_names_consistency(id_, factory())


@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_clone_and_get_params_leave_feature_names_behind(id_, factory):
    import pandas as pd

    est = factory()
    X, y = stream(0, n=120, n_classes=2 if is_binary(est) else 3)
    est.fit(pd.DataFrame(X, columns=["a", "b", "c"]), y)
    assert est.feature_names_in_.tolist() == ["a", "b", "c"]
    assert "feature_names_in_" not in est.get_params(deep=True)
    assert not hasattr(clone(est), "feature_names_in_")
