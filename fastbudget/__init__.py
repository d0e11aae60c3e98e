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
``fastbudget.warmup()`` compiles every compiled path on tiny inputs.
"""
from . import datasets
from ._warmup import warmup
from .base import NotFittedError
from .engine import CapacityError, IncrementalEngine, NumericalError, NumericalWarning
from .estimators.baselines import (BSGDClassifier, ForgetronClassifier, PegasosClassifier,
                                   PerceptronClassifier, RandomBudgetClassifier)
from .estimators.idsvm import IncrementalSVC
from .estimators.rueping import SVIncrementalClassifier
from .estimators.span import SpanBudgetClassifier
from .estimators.streamsvm import StreamSVMClassifier
from .estimators.tvm import CollapseWarning, RejectionWarning, TVMClassifier
from .multiclass import OneVsRestClassifier
from .persist import ModelFormatError, register_estimator
from .persist import load_model as load
from .persist import load_scaler
from .river_adapter import RiverClassifier

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
