"""Console output of the commands and the reproductions: progress bars and status lines on
standard error.

A progress bar shows only when standard error is a terminal and ``quiet`` is false, so that
a command's output in a pipe or a log holds no bar; ``note`` lines are hidden by ``quiet``,
``warn`` lines are not (they say that a result may not be the one wanted).
"""
import sys


def want_progress(quiet):
    """Whether to show a progress bar.

    Parameters
    ----------
    quiet : bool
        ``--quiet``.

    Returns
    -------
    bool
        True when not ``quiet`` and standard error is a terminal.
    """
    return not quiet and sys.stderr.isatty()


def progress(total=None, desc="", unit="ex", quiet=False):
    """A tqdm progress bar on standard error.

    Parameters
    ----------
    total : int, optional
        The count the bar fills up to (None: a counter without an end).
    desc : str
        The bar's label.
    unit : str
        The unit counted (``'ex'``: examples).
    quiet : bool
        Disable the bar (it is disabled too when standard error is not a terminal).

    Returns
    -------
    tqdm.tqdm
        Use it as a context manager; ``update(k)`` adds ``k``.
    """
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, dynamic_ncols=True,
                disable=not want_progress(quiet), leave=False, file=sys.stderr)


def note(msg, quiet=False):
    """Print ``msg`` as a status line on standard error, unless ``quiet``.

    Parameters
    ----------
    msg : str
        The line.
    quiet : bool
        ``--quiet``: print nothing.
    """
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


def warn(msg):
    """Print ``fastbudget: warning: msg`` on standard error (also with ``--quiet``: the
    result may not be the one wanted).

    Parameters
    ----------
    msg : str
        The warning.
    """
    print(f"fastbudget: warning: {msg}", file=sys.stderr, flush=True)
