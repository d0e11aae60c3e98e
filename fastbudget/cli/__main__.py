"""``python -m fastbudget.cli ...``: the same as the ``fastbudget`` console script."""
import sys

from .main import main

sys.exit(main())
