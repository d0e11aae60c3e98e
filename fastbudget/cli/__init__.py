"""The ``fastbudget`` command line, in pip's layout.

- :mod:`.main`: the entry point :func:`main` (``fastbudget`` and ``python -m fastbudget``);
- :mod:`.parser`: the argparse parser; :mod:`.options`: the options the commands share, read
  once into a frozen :class:`~fastbudget.cli.options.Options`;
- :mod:`.commands`: one module per command (``demo``, ``train``, ``update``, ``predict``,
  ``export``, ``evaluate``, ``prequential``, ``reproduce``, ``warmup``);
- :mod:`.data` (the data a command reads), :mod:`.bad_rows` (``--on-bad-row``),
  :mod:`.scaler` (the scaler file beside a model), :mod:`.files` (model files, outputs,
  locks), :mod:`.stream` (learning a stream, signals), :mod:`._learners` (the learners'
  names and parameters), :mod:`.values` and :mod:`.errors`.

Console progress is :mod:`fastbudget._progress`; format sniffing is
:mod:`fastbudget.datasets.sniff`. The commands are documented in ``docs/cli.md``.
"""
from ._learners import LEARNERS
from .errors import CLIError
from .main import main

__all__ = ["main", "LEARNERS", "CLIError"]
