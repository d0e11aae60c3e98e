"""Reproductions of the papers' tables and figures, as Markdown reports with PNG plots.

``fastbudget reproduce NAME`` runs one entry of :data:`REGISTRY` and writes
``<out>/<name>.md`` (and PNGs next to it). Every report shows our figure beside the paper's
and the difference, and states the machine, date, commit, the exact command and which data
differ from the paper's. One module per paper:

- :mod:`.tvm`: paper 000 (Wang & Vucetic, SDM 2009): ``tvm-table2`` ... ``tvm-table5``,
  ``tvm-figure2``, ``tvm-figure3``;
- :mod:`.streamsvm`: paper 001 (Rai et al., IJCAI 2009), Table 1 and Figure 3 (``streamsvm``);
- :mod:`.span`: paper 002, span-based removal against LRU (``span``);
- :mod:`.rueping`: paper 004 (Rüping), SV-incremental learning (``rueping``);
- :mod:`.baselines`: the baseline learners' columns of papers 000 and 001 and the
  speed/accuracy trade-off table (``baselines``).

The modules of papers 001, 002, 004 and the baselines also run on their own
(``python -m fastbudget.reproduce.span --help``), with more options than the command passes.
"""
import copy
import importlib
import os
import sys

from ._common import FAILURES, _failure_lines, _git_commit, _note
from .tvm import figure2, figure3, table2, table3, table4, table5

__all__ = ["REGISTRY", "OWN", "run_cli", "write_index"]


def _paper(module, extra):
    """A reproduction whose report the module ``module`` of this package writes: its
    ``main`` is called with the arguments ``extra(args)``."""
    def run(args):
        # the paths as the caller gave them, made absolute: the module's report names them
        args = copy.copy(args)
        args.out = os.path.abspath(args.out)
        if args.data_dir:
            args.data_dir = os.path.abspath(args.data_dir)
        argv = extra(args)
        _note(args, f"running: python -m fastbudget.reproduce.{module} {' '.join(argv)}")
        importlib.import_module(f"{__name__}.{module}").main(argv)
        return None
    return run


def _streamsvm_args(a):
    out = ["--orders", str(1 if a.quick else a.orders * 4)]
    if a.data_dir:
        out += ["--data", a.data_dir]
    if a.quick:
        out += ["--sweep-orders", "5"]
    out += ["--out", os.path.join(a.out, "streamsvm_quick.md" if a.quick else "streamsvm.md")]
    return out


def _script_args(count_flag):
    """Arguments of the span and rueping modules' ``main``: --quick, --data,
    --out, --quiet, and ``--orders K`` as the script's count of seeds/repetitions
    (``count_flag``) when it was given."""
    def make(a):
        out = ["--quick"] if a.quick else []
        if a.data_dir:
            out += ["--data", a.data_dir]
        if getattr(a, "orders_given", False):
            out += [count_flag, str(a.orders)]
        out += ["--out", a.out]
        if a.quiet:
            out += ["--quiet"]
        return out
    return make


def _data_only(a):
    return ["--data", a.data_dir] if a.data_dir else []


#: reproduction name -> (function of the parsed command line returning the report's lines,
#: or None when it wrote its report itself; one-line description)
REGISTRY = {
    "tvm-table2": (table2, "Paper 000 Table 2: training time and # SVs of TVM B = 100, "
                           "LIBSVM (SVC), IDSVM"),
    "tvm-table3": (table3, "Paper 000 Table 3: RBF accuracy, TVM B = 20..500 and Random"),
    "tvm-table4": (table4, "Paper 000 Table 4: polynomial and linear kernels, B = 100"),
    "tvm-table5": (table5, "Paper 000 Table 5: TVM heuristic variants, B = 100"),
    "tvm-figure2": (figure2, "Paper 000 Figure 2: 10^7 N-Checkerboard stream, boundaries"),
    "tvm-figure3": (figure3, "Paper 000 Figure 3: accuracy vs examples, B = 20, 100, 500"),
    "streamsvm": (_paper("streamsvm", _streamsvm_args),
                  "Paper 001 Table 1 and Figure 3 (fastbudget.reproduce.streamsvm; writes "
                  "<out>/streamsvm.md and streamsvm_table1.md; --orders x 4 orders)"),
    "span": (_paper("span", _script_args("--seeds")),
             "Paper 002: span vs LRU (fastbudget.reproduce.span; writes <out>/span.md; "
             "--orders = seeds)"),
    "rueping": (_paper("rueping", _script_args("--reps")),
                "Paper 004: Rüping's tables (fastbudget.reproduce.rueping; writes "
                "<out>/rueping.md; --orders = repetitions)"),
    "baselines": (_paper("baselines", lambda a: ["all"] + _data_only(a)),
                  "Baseline columns of paper 000 Tables 3/4 and paper 001 Table 1 "
                  "(fastbudget.reproduce.baselines)"),
}


#: the paper 000 entries, run by ``fastbudget reproduce all``
OWN = ("tvm-table2", "tvm-table3", "tvm-table4", "tvm-table5", "tvm-figure2", "tvm-figure3")


def write_index(out):
    """``<out>/README.md``: one line per report found in ``out``."""
    lines = ["# Reproduction reports", "",
             "Regenerate the paper 000 reports with `fastbudget reproduce all --data-dir DIR` "
             "(add `--quick` for a small version of each; `--no-table2` skips tvm-table2, whose "
             "LIBSVM and IDSVM columns take the longest, and `--svc-n-max` / `--idsvm-seconds` "
             "bound them); each report names the exact command that produced it. The reports of "
             "papers 001, 002 and 004 (streamsvm, span, rueping) are written by their modules in "
             "`fastbudget.reproduce` (`fastbudget reproduce streamsvm`, `span`, `rueping` pass on "
             "`--data-dir`, `--out`, `--quiet` (span, rueping), and `--orders` as the scripts' "
             "seeds or repetitions (streamsvm: 4 x `--orders` stream orders)).", ""]
    for fn in sorted(os.listdir(out)):
        if fn.endswith(".md") and fn != "README.md":
            with open(os.path.join(out, fn)) as f:
                title = f.readline().lstrip("# ").strip()
            lines.append(f"- [{fn}]({fn}): {title}")
    path = os.path.join(out, "README.md")
    if os.path.exists(path):
        with open(path, errors="replace") as f:
            ours = f.readline().strip() == lines[0]
        if not ours:            # someone's own README in --out: leave it, say so
            print(f"fastbudget: note: {path} is not a fastbudget report index; left as it "
                  f"is (the reports are beside it).", file=sys.stderr)
            return
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def run_cli(args):
    """Run ``fastbudget reproduce NAME``: one entry of :data:`REGISTRY`, ``all`` or ``list``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line of ``fastbudget reproduce`` (``name``, ``out``,
        ``data_dir``, ``orders``, ``quick`` ...); ``argv`` (the arguments, for the report's
        header) is taken from ``sys.argv`` when absent.

    Returns
    -------
    int
        0; the report is ``<out>/<name>.md`` (``_quick`` before ``.md`` with ``--quick``),
        and ``<out>/README.md`` lists the reports.
    """
    if args.name == "list":
        for k, (_f, doc) in REGISTRY.items():
            print(f"{k:<12s} {doc}")
        print(f"{'all':<12s} every paper 000 entry ({', '.join(OWN)}) and an index README.md "
              f"(--no-table2 skips tvm-table2)")
        return 0
    if args.name == "all":
        argv = getattr(args, "argv", None) or sys.argv[1:]
        for name in OWN:
            if name == "tvm-table2" and getattr(args, "no_table2", False):
                continue
            args.name = name
            args.argv = [name if a == "all" else a for a in argv]
            run_cli(args)
        write_index(args.out)
        return 0
    if args.name not in REGISTRY:
        raise ValueError(f"unknown reproduction {args.name!r}; choose one of "
                         f"{', '.join(REGISTRY)} (or 'list').")
    args.orders_given = getattr(args, "orders_given", args.orders is not None)
    if args.orders is None:
        args.orders = 1 if args.quick else 5
    if args.orders < 1:
        raise ValueError("--orders must be at least 1.")
    args.argv = getattr(args, "argv", None) or sys.argv[1:]
    if args.data_dir and not os.path.isdir(args.data_dir):
        raise FileNotFoundError(2, "no such data directory", args.data_dir)
    os.makedirs(args.out, exist_ok=True)
    func = REGISTRY[args.name][0]
    args.commit = _git_commit()          # at the start: the code that runs, not the one at the end
    FAILURES.clear()
    lines = func(args)
    if lines is None:
        return 0
    lines += _failure_lines()
    suffix = "_quick" if args.quick else ""
    path = os.path.join(args.out, args.name.replace("-", "_") + suffix + ".md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"report written to {path}")
    write_index(args.out)
    return 0
