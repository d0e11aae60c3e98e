"""fastbudget: kernel SVMs on endless streams inside a memory budget fixed up front.

Learners (scikit-learn style estimators, binary unless wrapped in OneVsRestClassifier):

- :class:`TVMClassifier`: the Twin Vector Machine (the main learner);
- :class:`IncrementalSVC`: the exact incremental/decremental SVM under everything;
- :class:`StreamSVMClassifier`: one-pass minimum-enclosing-ball SVMs;
- :class:`SpanBudgetClassifier` (S-span or LRU budget on the exact engine) and
  :class:`SVIncrementalClassifier` (Ruping's SV-incremental / SV-L-incremental);
- baselines: :class:`RandomBudgetClassifier`, :class:`ForgetronClassifier`,
  :class:`PerceptronClassifier`, :class:`PegasosClassifier`, :class:`BSGDClassifier`.

``fastbudget.load(path)`` reads a model written by ``model.save(path)`` (and
``fastbudget.load_scaler(path)`` the standardisation ``fastbudget train`` saved beside one);
``fastbudget.warmup()`` compiles every compiled path on tiny inputs;
``fastbudget.serving.load_predictor(path)`` scores a saved model with NumPy alone.

Names are imported on first use (PEP 562), so ``import fastbudget`` is cheap and does not
import Numba until a learner is used.
"""
import importlib

from . import _registry

# Every public name is imported on first use (PEP 562), so that ``import fastbudget`` and
# ``import fastbudget.serving`` stay cheap and never import Numba: name -> (module, attribute).
_LAZY = {
    "datasets": (".datasets", None),
    "exceptions": (".exceptions", None),
    "warmup": ("._warmup", "warmup"),
    "IncrementalEngine": (".engine", "IncrementalEngine"),
    "register_estimator": (".persist", "register_estimator"),
    "load": (".persist", "load_model"),
    "load_scaler": (".persist", "load_scaler"),
    # the learners and wrappers, from the one registry of learners
    **_registry.lazy_names(),
    # every exception and warning class
    **{name: (".exceptions", name) for name in (
        "CapacityError", "CollapseWarning", "ModelFormatError", "NotFittedError",
        "NumericalError", "NumericalWarning", "RejectionWarning")},
}


# submodules that ``import fastbudget`` made attributes before the imports were lazy
_SUBMODULES = ("base", "cli", "engine", "estimators", "kernels", "multiclass", "persist",
               "plotting", "reproduce", "river_adapter", "serving")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module("." + name, __name__)
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    mod = importlib.import_module(module, __name__)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value          # later look-ups do not come here again
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    "BSGDClassifier",
    "CapacityError",
    "ForgetronClassifier",
    "IncrementalEngine",
    "IncrementalSVC",
    "ModelFormatError",
    "NotFittedError",
    "NumericalError",
    "NumericalWarning",
    "RejectionWarning",
    "CollapseWarning",
    "OneVsRestClassifier",
    "PegasosClassifier",
    "PerceptronClassifier",
    "RandomBudgetClassifier",
    "RiverClassifier",
    "SVIncrementalClassifier",
    "SpanBudgetClassifier",
    "StreamSVMClassifier",
    "TVMClassifier",
    "datasets",
    "load",
    "load_scaler",
    "register_estimator",
    "warmup",
    "__version__",
]
