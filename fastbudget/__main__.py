"""``python -m fastbudget ...``: the same as the ``fastbudget`` console script."""
import sys

from .cli import main

sys.exit(main())
