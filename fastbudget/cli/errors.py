"""How the command line reports errors: :class:`CLIError`, one line ``fastbudget: error:
...`` and exit status 2 for every error (:func:`report`), the advice added to a bad row's
error (:func:`skip_hint`), and readers' messages reworded with the options' names
(:func:`cli_wording`)."""
import os
import sys

from ..exceptions import CLIError


def raise_row_error(line, exc):
    """``--on-bad-row error``: the readers' error for a row that ``skip`` would leave out."""
    raise row_error(exc)


def row_error(exc):
    """``exc``, marked as the error of one row that ``--on-bad-row skip`` would leave out,
    so that its message says so (:func:`skip_hint`)."""
    exc.fastbudget_row_error = True
    return exc


def row_error_like(new, old):
    """``new`` (an error rewording ``old``), marked as a row error when ``old`` is one."""
    return row_error(new) if getattr(old, "fastbudget_row_error", False) else new


def skip_hint(opts, exc):
    """The advice added to a row error of a command that has ``--on-bad-row``; when the
    second line of a CSV file has a field that is not a number and no label column was given
    (nor recorded with a model), also how to name it: UCI letter's ``T,2,8,...`` has its text
    labels in column 0, where the default (the last column) leaves them as a feature, so its
    first line reads as a header and the second fails, and skipping would leave out every
    row."""
    if opts is None or opts.on_bad_row != "error" or not getattr(exc, "fastbudget_row_error",
                                                                 False):
        return ""
    line, col, text = getattr(exc, "text_field", (None, None, None))   # (see read_csv)
    if line == 2 and opts.label_column is None and not opts.model:
        # (with the label last, the default, feature column k is the file's column k)
        return (f" If column {col} holds the labels ({text} is text), pass --label-column "
                f"{col}; to leave such rows out and go on, pass --on-bad-row skip.")
    return " To leave such rows out and go on, pass --on-bad-row skip."


def cli_wording(msg):
    """A reader's message with its arguments named as the command line options."""
    return (msg.replace("pass comments=None", "pass --comments none")
               .replace("fmt='libsvm' or fmt='csv'", "--format libsvm or --format csv")
               .replace("pass another comments= or the delimiter",
                        "pass another --comments or --delimiter")
               .replace("or None for no comment lines", "or none for no comment lines")
               .replace("comments must be", "--comments must be")
               .replace("header=True, but", "--header yes, but")
               .replace("pass header=False", "pass --header no")
               .replace("pass n_features explicitly",
                        "pass --n-features N (the number of features: the largest index, "
                        "plus 1 if indices start at 0)")
               .replace("pass a larger n_features", "pass a larger --n-features")
               .replace("n_features=", "--n-features ")
               .replace("zero_based=True or 'auto'", "--zero-based yes or auto")
               .replace("zero_based=False", "--zero-based no")
               .replace("zero_based=True", "--zero-based yes"))


def width_error(where, d):
    return f"{where}: the data has more features than the model, which was trained on {d}."


def no_rows(desc):
    return CLIError(f"{desc} holds no data rows (it is empty, or has only a header, blank or "
                    f"comment lines).")


def report(exc, hint=""):
    """Turn an exception into one line on stderr (ending with ``hint``) and an exit status."""
    from ..exceptions import CapacityError
    try:
        raise exc
    except CapacityError as exc:      # a full exact learner: expected, and the message says why
        msg = " ".join(str(exc).split()) + " On the command line: --param capacity=N (memory "
        if "batch" in msg:
            # (SV-incremental learns each chunk as one batch, with the support vectors kept)
            msg += "grows as N^2), or a smaller --chunk-size (each chunk is one batch)."
        else:
            msg += "grows as N^2)."
    except FileNotFoundError as exc:
        # keep a message written for the case (a data set's file not in --data-dir ...)
        own = exc.strerror and exc.strerror != os.strerror(2)
        if not own:
            msg = f"no such file: {exc.filename or exc}"
        else:
            msg = " ".join(exc.strerror.split())
            if exc.filename and os.fspath(exc.filename) not in msg:
                msg += f": {exc.filename}"
    except IsADirectoryError as exc:
        msg = f"{exc.filename or exc} is a directory, not a file."
    except BrokenPipeError:
        return 0
    except (ValueError, OSError, TypeError, MemoryError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
    except Exception as exc:  # noqa: BLE001 - last resort: still one line, and say it is a bug
        msg = (f"unexpected {type(exc).__name__}: {exc} (please report it; "
               f"set FASTBUDGET_DEBUG=1 for the traceback)")
    print(f"fastbudget: error: {msg}{hint}", file=sys.stderr)
    return 2
