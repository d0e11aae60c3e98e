"""The ``fastbudget`` command line (moved to :mod:`fastbudget.cli.main`; split into modules
in the next commit, which leaves this package's namespace to ``main``)."""
from . import main as _main_module

globals().update({k: v for k, v in vars(_main_module).items() if not k.startswith("__")})
__all__ = ["main", "LEARNERS"]
