"""What every reproduction report shares: the header (command, date, commit, machine), cells
"ours [paper; ours - paper]", failed runs recorded as missing values, progress lines, and the
holdout run of one learner on one random stream order (:func:`run_stream`)."""
import argparse
import contextlib
import datetime
import os
import pathlib
import platform
import shlex
import subprocess
import sys

import numpy as np

from .. import __version__
from .._progress import progress
from ..exceptions import CapacityError, NumericalError
from ..evaluate import holdout, ordered_chunks


#: the source tree (when run from one: the default report directory is its docs/results)
SOURCE_TREE = pathlib.Path(__file__).resolve().parents[2]
#: the default data directory of the paper modules: $FASTBUDGET_DATA_DIR, else ../shared/data
#: beside the source tree
DEFAULT_DATA = pathlib.Path(os.environ.get("FASTBUDGET_DATA_DIR")
                            or os.environ.get("FASTBUDGET_DATA")
                            or SOURCE_TREE.parent / "shared" / "data")
DEFAULT_OUT = SOURCE_TREE / "docs" / "results"


def paper_main(argv, count_flag, count_help, report):
    """The ``main`` of the span and rueping modules: parse ``--quick``, ``--data``, ``--out``,
    the module's count of seeds or repetitions (``count_flag``) and ``--quiet``, and call
    ``report(args)`` (``args.data`` and ``args.out`` as paths, defaults filled in), with
    standard output sent to nowhere for the call under ``--quiet``."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--data",
                    help="data directory (default $FASTBUDGET_DATA_DIR or ../shared/data)")
    ap.add_argument("--out", help="report directory (default docs/results)")
    ap.add_argument(count_flag, type=int, help=count_help)
    ap.add_argument("--quiet", action="store_true", help="no progress lines on stdout")
    args = ap.parse_args(argv)
    args.data = pathlib.Path(args.data) if args.data else DEFAULT_DATA
    args.out = pathlib.Path(args.out) if args.out else DEFAULT_OUT
    with open(os.devnull, "w") as devnull, \
            contextlib.redirect_stdout(devnull if args.quiet else sys.stdout):
        report(args)


#: the failures of the current report's runs (cleared by ``run_cli`` before each report)
FAILURES = []


def safe_run(args, label, make, Xa, ya, Xb, yb, order_seed, **kw):
    """:func:`run_stream`, but a learner failure is recorded (and shown in the report) as NaN."""
    try:
        return run_stream(make, Xa, ya, Xb, yb, order_seed, **kw)
    except (NumericalError, CapacityError, ValueError, ArithmeticError) as exc:
        msg = f"{label}, order seed {order_seed}: {type(exc).__name__}: {' '.join(str(exc).split())}"
        FAILURES.append(msg)
        _note(args, "failed: " + msg)
        return float("nan"), [], None


def run_stream(make, Xa, ya, Xb, yb, order_seed, chunk=10_000, checkpoints=None):
    """Train ``make()`` on a random order of the training set; final test accuracy (%) and,
    with ``checkpoints`` (sorted example counts), the accuracy curve ``[(n, acc), ...]``."""
    perm = np.random.default_rng(order_seed).permutation(len(ya))
    clf = make()
    cps = list(checkpoints or [])
    res = holdout(clf, ordered_chunks(Xa, ya, perm, chunk, cuts=cps), Xb, yb,
                  classes=np.array([-1, 1]), checkpoints=cps)
    acc = 100 * res.accuracy
    curve = [(n, 100 * a) for n, a in res.curve]
    return acc, curve, clf


def _failure_lines():
    if not FAILURES:
        return []
    return ["", "## Failed runs (shown as missing values; reported to the learner's owner)", ""] + [
        f"- {m}" for m in FAILURES]


def _git_commit():
    root = pathlib.Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        if out.returncode == 0:
            return out.stdout.strip() + (" (working tree modified)" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return f"fastbudget {__version__} (no git checkout)"


def stamp():
    """'commit abc1234, 2026-11-25' for the headers of the generated pages."""
    return f"commit {_git_commit()}, {datetime.date.today().isoformat()}"


def _machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{platform.system()} {platform.release()}, {cpu}, {os.cpu_count()} logical CPUs "
            f"(shared with other jobs), Python {platform.python_version()}, "
            f"NumPy {np.__version__}")


def header(title, args, seconds, extra=()):
    cmd = "fastbudget " + " ".join(shlex.quote(a) for a in args.argv)
    lines = [f"# {title}", "",
             f"- Command: `{cmd}`",
             f"- Date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}; commit: "
             f"{getattr(args, 'commit', None) or _git_commit()}",
             f"- Machine: {_machine()}",
             f"- Wall time of this run: {seconds:.0f} s",
             f"- Stream orders per cell: {args.orders}" + (" (quick run)" if args.quick else "")]
    lines += [f"- {e}" for e in extra]
    return lines


def _nanmean(v):
    v = np.asarray(v, dtype=float)
    return float(np.mean(v[~np.isnan(v)])) if np.any(~np.isnan(v)) else float("nan")


def _cell(vals, paper):
    v = np.asarray(vals, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return f"— [{paper}]"
    m = float(np.mean(v))
    sd = f" ± {np.std(v):.1f}" if v.size > 1 else ""
    miss = f" ({v.size} of {len(vals)} runs)" if v.size < len(vals) else ""
    return f"{m:.1f}{sd} [{paper}; {m - paper:+.1f}]{miss}"


def _progress(args, total, desc):
    return progress(total, desc, unit="run", quiet=args.quiet)


def _note(args, msg):
    if not args.quiet:
        print(msg, file=sys.stderr, flush=True)


def _skipped_line(skipped):
    if not skipped:
        return []
    return ["", f"Not run (data files not found; pass `--data-dir`): {', '.join(skipped)}."]
