"""fastbudget: kernel SVMs on endless streams inside a memory budget fixed up front."""
from .base import NotFittedError

__version__ = "0.1.0"

__all__ = ["NotFittedError", "__version__"]
