"""Registry of every fastbudget estimator for the shared checks, with small fast parameters.

Each learner module is imported if it exists in the tree (a learner that has not landed yet is
simply not listed; an import *error* in an existing module is not hidden). Tests parametrize
over ``ESTIMATORS``: ``(id, factory)`` where ``factory()`` returns a fresh instance.

``SKLEARN_EXPECTED_FAILURES[id]`` maps scikit-learn check names to the reason they cannot pass
for that learner; ``parametrize_with_checks`` runs them as strict xfails (an unexpected pass
fails the suite, so the list cannot go stale silently).
"""
import importlib

from _dummy import DummyBudgetPerceptron
from fastbudget.multiclass import OneVsRestClassifier

ESTIMATORS = []
SKLEARN_EXPECTED_FAILURES = {}
# (id, check) -> reason: shared checks a learner is known to fail (reported to its owner);
# run as strict xfails so that a fix makes the suite ask for this entry to be removed.
KNOWN_FAILURES = {}

_ORDER_DEPENDENT = (
    "a budgeted online learner depends on the order of the stream, so weight k is not the "
    "same as k repeated rows placed elsewhere in the stream"
)


def _add(id_, factory, xfail=None):
    ESTIMATORS.append((id_, factory))
    SKLEARN_EXPECTED_FAILURES[id_] = dict(xfail or {})


def _make(cls, **kw):
    """Instance of ``cls`` with those of ``kw`` that are parameters of ``cls``."""
    names = set(cls._get_param_names())
    return cls(**{k: v for k, v in kw.items() if k in names})


def _module(name):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None
        raise


# scikit-learn's check_class_weight_classifiers fits noisy blobs (cluster_std=20) with
# class_weight={0: 1000, 1: 1e-4} and asks for > 87 % predictions of class 0. A weight scales
# the update of a one-pass learner, not which examples it learns (mistake or margin test) or
# where a local RBF kernel reaches, so these fall short (fractions of class 0 measured
# without -> with the weights on that data): the exact SVMs (idsvm, tvm, span_lru,
# svl_incremental) pass it. tests/test_class_weight.py checks on every learner that
# class_weight is exactly sample_weight on that class.
_CW = "check_class_weight_classifiers"
_CW_REASON = ("class weights scale the one-pass updates; on scikit-learn's noisy blobs the "
              "predictions of class 0 go {} (the check asks > 0.87)")
_CW_UNIT = ("{} refuses weights other than 1 (also from class_weight); the check passes "
            "class_weight={{0: 1000, 1: 1e-4}}")

_SW = {
    "check_sample_weight_equivalence_on_dense_data": _ORDER_DEPENDENT,
    "check_sample_weight_equivalence_on_sparse_data": _ORDER_DEPENDENT,
}

_add("dummy", lambda: DummyBudgetPerceptron(budget=30, gamma=0.5), _SW)

_bl = _module("fastbudget.estimators.baselines")
if _bl is not None:
    if hasattr(_bl, "PerceptronClassifier"):
        _add("perceptron", lambda: _bl.PerceptronClassifier(budget=30, kernel="rbf"),
             dict(_SW, **{_CW: _CW_REASON.format(
                 "0.44 -> 0.44 (the weight scales the coefficient, not the mistake test)")}))
    if hasattr(_bl, "ForgetronClassifier"):
        _add("forgetron", lambda: _bl.ForgetronClassifier(budget=30), dict(_SW, **{
            c: "ForgetronClassifier refuses non-unit sample weights (its shrinking schedule "
               "assumes unit perceptron steps); this check passes non-unit weights"
            for c in ("check_sample_weights_list", "check_sample_weights_not_overwritten",
                      "check_classifiers_one_label_sample_weights")},
            **{_CW: _CW_UNIT.format("ForgetronClassifier")}))
    if hasattr(_bl, "PegasosClassifier"):
        _add("pegasos", lambda: _bl.PegasosClassifier(random_state=0),
             dict(_SW, **{_CW: _CW_REASON.format("0.42 -> 0.54")}))
    if hasattr(_bl, "BSGDClassifier"):
        _add("bsgd", lambda: _make(_bl.BSGDClassifier, budget=30, random_state=0),
             dict(_SW, **{_CW: _CW_REASON.format("0.36 -> 0.78")}))
    if hasattr(_bl, "RandomBudgetClassifier"):
        _add("random", lambda: _make(_bl.RandomBudgetClassifier, budget=30, C=1.0, gamma=0.5,
                                     random_state=0))

_ss = _module("fastbudget.estimators.streamsvm")
if _ss is not None and hasattr(_ss, "StreamSVMClassifier"):
    _add("streamsvm", lambda: _ss.StreamSVMClassifier(capacity=300),
         dict(_SW, **{_CW: _CW_REASON.format(
             "0.54 -> 0.56; the MEB of paper 001 is the weighted l2-SVM only when k(x, x) is "
             "the same for every x, and on these raw blobs ||x||^2 dominates (an exact solve, "
             "lookahead=60, also gives 0.56)")}))
    _add("streamsvm_rbf", lambda: _ss.StreamSVMClassifier(kernel="rbf", capacity=300), _SW)
    _add("streamsvm_rbf_ball", lambda: _ss.StreamSVMClassifier(kernel="rbf", capacity=300,
                                                              method="ball"), dict(_SW, **{
        _CW: _CW_REASON.format("0.00 -> 0.00"),
        "check_classifiers_train": "paper 001's kernelized Algorithm 1 (method='ball') with "
        "default C/gamma scores below scikit-learn's 0.83 floor on its easy blobs (0.47 on a "
        "linear problem); the default method='coreset' passes"}))

_id = _module("fastbudget.estimators.idsvm")
if _id is not None and hasattr(_id, "IncrementalSVC"):
    _add("idsvm", lambda: _make(_id.IncrementalSVC, C=1.0, kernel="rbf", gamma=0.5,
                                             capacity=400))

_tv = _module("fastbudget.estimators.tvm")
if _tv is not None and hasattr(_tv, "TVMClassifier"):
    _add("tvm", lambda: _make(_tv.TVMClassifier, budget=20, C=1.0, kernel="rbf",
                                             random_state=0), _SW)

_sp = _module("fastbudget.estimators.span")
if _sp is not None and hasattr(_sp, "SpanBudgetClassifier"):
    _add("span", lambda: _make(_sp.SpanBudgetClassifier, budget=20, C=1.0, gamma=0.5),
         dict(_SW, **{_CW: _CW_REASON.format("0.00 -> 0.00")}))
    _add("span_lru", lambda: _make(_sp.SpanBudgetClassifier, budget=20, C=1.0, gamma=0.5,
                                   policy="lru"), _SW)

_ru = _module("fastbudget.estimators.rueping")
if _ru is not None and hasattr(_ru, "SVIncrementalClassifier"):
    _add("svl_incremental", lambda: _make(_ru.SVIncrementalClassifier, C=1.0, gamma=0.5,
                                          L="auto", capacity=600))

_add("ovr_dummy", lambda: OneVsRestClassifier(DummyBudgetPerceptron(budget=30), total_budget=90),
     _SW)
if _bl is not None and hasattr(_bl, "PerceptronClassifier"):
    _add("ovr_perceptron",
         lambda: OneVsRestClassifier(_bl.PerceptronClassifier(budget=30, kernel="rbf"),
                                     total_budget=90),
         dict(_SW, **{_CW: _CW_REASON.format("0.44 -> 0.44 (the perceptron's)")}))

IDS = [i for i, _ in ESTIMATORS]
FACTORIES = dict(ESTIMATORS)


def is_binary(est):
    return getattr(est, "_binary_only", True)
