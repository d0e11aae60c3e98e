"""fastbudget: kernel SVMs on endless streams inside a memory budget fixed up front."""
from .base import NotFittedError
from .engine import CapacityError, IncrementalEngine, NumericalError
from .estimators.idsvm import IncrementalSVC

__version__ = "0.1.0"

__all__ = [
    "CapacityError",
    "IncrementalEngine",
    "IncrementalSVC",
    "NotFittedError",
    "NumericalError",
    "__version__",
]
