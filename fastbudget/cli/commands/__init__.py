"""The commands of ``fastbudget``, one module each; every module has ``run(opts, args)``
(``opts``: the shared :class:`~fastbudget.cli.options.Options`; ``args``: the parsed command
line, for the command's own options) returning the exit status.

A command's module is imported when the command runs, so that ``fastbudget predict`` does
not import what ``fastbudget demo`` needs.
"""
import importlib

#: command name -> module (in this package)
COMMANDS = {
    "demo": "demo",
    "train": "train",
    "update": "update",
    "predict": "predict",
    "export": "export",
    "evaluate": "evaluate",
    "prequential": "prequential",
    "reproduce": "reproduce",
    "warmup": "warmup",
}


def get_command(name):
    """The ``run`` function of command ``name`` (a key of :data:`COMMANDS`)."""
    return importlib.import_module(f"{__name__}.{COMMANDS[name]}").run
