"""Entry point of the ``fastbudget`` command (:func:`main`): parse the command line, build
the shared options once, run the command's module, and turn every error into one line
``fastbudget: error: ...`` with exit status 2 (130 after Ctrl-C, 143 after SIGTERM).

The commands are documented in ``docs/cli.md``; ``fastbudget COMMAND --help`` lists a
command's options.
"""
import contextlib
import os
import signal
import sys
import threading
import warnings

from .commands import get_command
from .errors import CLIError, report, skip_hint
from .options import Options
from .parser import attach_label_values, build_parser

__all__ = ["main"]


def _warning_line(message, category, filename, lineno, line=None):
    """Warnings at the command line: one line, without the source line that raised them."""
    return f"fastbudget: warning: {' '.join(str(message).split())} ({category.__name__})\n"


def main(argv=None):
    """Run the ``fastbudget`` command line.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program's name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 on success, 2 after an error (one line on standard error),
        130 after Ctrl-C, 143 after SIGTERM.
    """
    fmt = warnings.formatwarning
    warnings.formatwarning = _warning_line      # for this call only (main may be imported)
    try:
        return _main(argv)
    finally:
        warnings.formatwarning = fmt


def _main(argv):
    ap = build_parser()
    debug = bool(os.environ.get("FASTBUDGET_DEBUG"))
    opts = None
    try:
        argv = attach_label_values(list(sys.argv[1:] if argv is None else argv))
        args = ap.parse_args(argv)
        if args.version:
            from .. import __version__
            print(f"fastbudget {__version__}")
            return 0
        if args.command is None:
            ap.print_help()
            return 2
        opts = Options.from_args(args)
        run = get_command(args.command)
        with warnings.catch_warnings(), _sigterm_raises():   # filters a command sets end with it
            return run(opts, args) or 0
    except _Terminated:
        print("fastbudget: stopped by SIGTERM", file=sys.stderr)
        return 143
    except CLIError as exc:
        msg = str(exc) + skip_hint(opts, exc)
    except Exception as exc:
        if debug:
            raise
        return report(exc, skip_hint(opts, exc))
    except KeyboardInterrupt:
        print("fastbudget: interrupted", file=sys.stderr)
        return 130
    print(f"fastbudget: error: {msg}", file=sys.stderr)
    return 2


class _Terminated(BaseException):
    """SIGTERM outside a stream's own handling (:func:`~fastbudget.cli.stream.stoppable`),
    e.g. while the first chunk is read: the command ends as after Ctrl-C, with its files'
    clean-up run."""


@contextlib.contextmanager
def _sigterm_raises():
    """SIGTERM raises :class:`_Terminated` (main thread only) instead of ending the process
    at once, so that an atomic write under way removes its temporary file and the command
    ends with one line and status 143, as SIGINT ends with 130."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise _Terminated()

    old = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


if __name__ == "__main__":
    sys.exit(main())
