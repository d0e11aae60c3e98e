"""The argparse parser of the ``fastbudget`` command: the options each command takes
(:func:`build_parser`), grouped as the data options, the learner options, checkpoints and
the Dask cluster, and the one argument rewriting argparse needs (:func:`attach_label_values`).
What a command does with them is in its module, ``fastbudget.cli.commands.<name>``."""
import argparse
import os

from ._learners import LEARNERS
from .errors import CLIError
from .values import comments_option

#: the parser's description (``fastbudget --help``)
DESCRIPTION = ("The fastbudget command line: demo, train, update, predict, evaluate, "
               "prequential, reproduce,\nwarmup.")


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are :class:`CLIError` (one line, exit status 2)."""

    def error(self, message):
        raise CLIError(f"{message} (see '{self.prog} --help')")


def _int_at_least(low):
    """An argparse ``type``: a whole number >= ``low`` (counts of rows, examples ...)."""
    def convert(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {v}")
        return v
    convert.__name__ = "int"          # argparse names the type in some messages
    return convert


_count = _int_at_least(1)


def _data_options(p, formats=True, bad_rows=True):
    p.add_argument("data", metavar="DATA",
                   help="file (LIBSVM or CSV, optionally .gz/.bz2/.xz), '-' for stdin, or gen:NAME")
    if formats:
        p.add_argument("--format", default="auto", help="libsvm, csv or auto (default)")
        p.add_argument("--label-column",
                       help="CSV label column: index (negative from the end) or header name "
                            "(default: the last; with a saved model, the one it was trained "
                            "with); 'none' for rows without a label")
        p.add_argument("--delimiter", metavar="CHAR",
                       help="CSV field separator: one character, 'tab' or 'whitespace' "
                            "(default: with a saved model, the one given when it was trained, "
                            "else from the first line: tab, ';', ',' or whitespace)")
        p.add_argument("--n-features", type=_count, metavar="N",
                       help="LIBSVM: number of features (default: the largest index of a "
                            "file; of standard input, of its first chunk, so a later larger "
                            "index needs this; with a saved model, the model's)")
        p.add_argument("--zero-based", choices=("auto", "yes", "no"),
                       help="LIBSVM: whether feature indices start at 0 (default auto: when "
                            "an index 0 is seen in the file, or the first chunk of standard "
                            "input; with a saved model, as its training file)")
        p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                       help="whether the first line of a CSV file is a header (default auto: "
                            "when a field but the label is not a number, or the label field "
                            "is not a number while the labels below it are; 'yes' for numeric "
                            "column names above text labels)")
        p.add_argument("--comments", metavar="CHAR", default="#", type=comments_option,
                       help="CSV: lines whose first non-blank character is CHAR are skipped "
                            "(default '#'; only whole lines); 'none' for no comment lines")
    p.add_argument("--chunk-size", type=_count, default=10000,
                   help="rows per chunk (default %(default)s)")
    p.add_argument("--n", type=_count, default=100_000, help="rows of a gen:NAME stream")
    p.add_argument("--gen-param", action="append", metavar="K=V",
                   help="generator keyword, e.g. noise=0.15 (repeatable)")
    p.add_argument("--seed", type=_int_at_least(0), default=0,
                   help="seed of gen: streams and learners (a whole number >= 0)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar or notes")
    if bad_rows:
        p.add_argument("--on-bad-row", choices=("error", "skip"), default="error",
                       help="a malformed row (a field that is not a finite number, a wrong "
                            "number of fields, a bad LIBSVM index or one beyond a saved "
                            "model's features, a quoted field; for "
                            "learning, a label that is not one of the model's classes): "
                            "'error' (default) stops with an error naming its line; 'skip' "
                            "leaves it out with a warning naming its line (the first 10), "
                            "and the last line counts them")


def _learner_options(p):
    p.add_argument("learner", metavar="MODEL", help="learner: " + ", ".join(LEARNERS))
    # (the defaults are the learners' own, which differ: tests/test_cli_errors.py checks
    # these texts against their signatures)
    p.add_argument("--budget", type=int,
                   help="vectors the model keeps (default: the learner's, 100; span 50; "
                        "perceptron: unbounded; idsvm, svincremental, streamsvm and pegasos "
                        "take none: "
                        "the memory of idsvm and svincremental is --param capacity=N)")
    p.add_argument("--C", type=float,
                   help="box constraint (default: the learner's: 100 for tvm and random, 1 "
                        "for idsvm, span, svincremental and streamsvm)")
    p.add_argument("--kernel", choices=("rbf", "poly", "linear"),
                   help="(default: the learner's: rbf; linear for streamsvm and perceptron)")
    p.add_argument("--gamma", help="float, 'scale' or 'auto' (default: the learner's: 'scale' "
                                   "for tvm, idsvm, span and svincremental, 'auto' "
                                   "(1 / n_features) for the others)")
    p.add_argument("--degree", type=int, help="poly kernel degree (default 3)")
    p.add_argument("--coef0", type=float,
                   help="poly kernel term (default: the learner's: 1; 0 for idsvm, span, "
                        "svincremental and streamsvm)")
    p.add_argument("--param", action="append", metavar="K=V",
                   help="any other learner parameter, e.g. m1=1 (repeatable)")
    p.add_argument("--standardize", default="warmup", help="warmup (default), pass or none")
    p.add_argument("--warmup-rows", type=_count, default=10000,
                   help="rows whose statistics standardise the stream (default 10000)")
    p.add_argument("--clip", type=float, metavar="SD",
                   help="clip standardised values to [-SD, SD] (heavy-tailed attributes; "
                        "saved with the scaler)")
    p.add_argument("--classes", help="comma-separated labels, when the first chunk lacks one")
    p.add_argument("--class-weight", metavar="LABEL:W,...",
                   help="weight of each class, e.g. 1:5,-1:1 or a JSON object (labels not "
                        "given weigh 1; 'balanced' is not available on a stream: count the "
                        "labels and pass n / (n_classes * n_label))")
    p.add_argument("--multiclass", action="store_true",
                   help="one-vs-rest even if the first chunk shows two labels")
    p.add_argument("--total-budget", type=int, metavar="N",
                   help="with more than two classes, one-vs-rest trains one learner per class: "
                        "share N among them (N // classes each); without it each has --budget, "
                        "and memory grows with the number of classes")


def _checkpoint_option(p):
    p.add_argument("--checkpoint-every", type=int, metavar="ROWS",
                   help="also save the model (atomically) after every ROWS rows, at the end "
                        "of the chunk that reaches a multiple of ROWS; on SIGINT or SIGTERM the model of the last complete "
                        "chunk is saved in any case")
    p.add_argument("--no-wait", action="store_true",
                   help="refuse (exit status 2) instead of waiting when another fastbudget "
                        "process is writing the model file (it holds MODEL.lock)")


def _cluster_options(p):
    g = p.add_argument_group("on a Dask cluster (pip install 'fastbudget[dask]'; DATA may "
                             "then be a glob such as 'data/*.svm', one task per file)")
    g.add_argument("--workers", type=int, metavar="N",
                   help="start a local cluster of N worker processes")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="use a running cluster, e.g. tcp://scheduler:8786")


def build_parser():
    """The parser of the ``fastbudget`` command; ``args.command`` names the command."""
    ap = _Parser(prog="fastbudget", description=DESCRIPTION,
                 epilog="Run 'fastbudget COMMAND --help' for a command's options.")
    ap.add_argument("--version", action="store_true", help="print the version and exit")
    sub = ap.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    p = sub.add_parser("demo", help="TVM (B = 100) on a 10^6-example noisy checkerboard stream")
    p.add_argument("--n", type=_count, default=1_000_000, help="stream length (default 10^6)")
    p.add_argument("--budget", type=_int_at_least(2), default=100,
                   help="TVM's budget (default 100)")
    p.add_argument("--seed", type=_int_at_least(0), default=0)
    p.add_argument("--chunk-size", type=_count, default=50_000,
                   help="rows per chunk (default 50000)")
    p.add_argument("--exact-n", type=_count, default=None,
                   help="examples for the exact SVM (default 10000 with scikit-learn, else 2000)")
    p.add_argument("--quiet", "-q", action="store_true")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--out", default="fastbudget-demo", help="directory of the PNG")

    p = sub.add_parser("train", help="train a learner on a stream and save it")
    _learner_options(p)
    _data_options(p)
    p.add_argument("-o", "--output", default="model.npz", help="model file (default model.npz)")
    _checkpoint_option(p)
    _cluster_options(p)

    p = sub.add_parser("update", help="continue training a saved model on more data")
    p.add_argument("model", metavar="MODEL_FILE")
    _data_options(p)
    p.add_argument("-o", "--output", help="where to save the model (default: MODEL_FILE, "
                                          "replaced atomically)")
    _checkpoint_option(p)

    p = sub.add_parser("predict", help="print one predicted label per row")
    p.add_argument("model", metavar="MODEL_FILE")
    _data_options(p, bad_rows=False)      # its lines follow the rows: a bad row stops it
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write to this file instead of stdout (written in full or not at "
                        "all: it replaces FILE at the end); '-' for stdout")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--scores", action="store_true", help="decision values instead of labels")
    out.add_argument("--proba", action="store_true",
                     help="the label and the probability of each class (the model's "
                          "calibrated predict_proba), after a first line 'labels' and the "
                          "classes, as LIBSVM's svm-predict -b 1 prints them")
    _cluster_options(p)

    p = sub.add_parser("export", help="write a saved model as an ONNX graph (needs the onnx "
                                      "extra)")
    p.add_argument("model", metavar="MODEL_FILE")
    p.add_argument("-o", "--output", required=True, metavar="OUT.onnx", help="the ONNX file")
    p.add_argument("--no-scaler", action="store_true",
                   help="leave out the standardisation saved beside the model (the graph then "
                        "takes standardised rows)")
    p.add_argument("--opset", type=_int_at_least(13), default=None,
                   help="ONNX opset of the graph (default 17)")
    p.add_argument("--float32", action="store_true",
                   help="float32 input X (the graph still computes in float64)")
    p.add_argument("--no-probabilities", action="store_true",
                   help="leave out the output 'probabilities' (predict_proba), which ONNX "
                        "Runtime computes whichever outputs are fetched (about a tenth of "
                        "the scoring)")

    p = sub.add_parser("evaluate", help="accuracy and confusion matrix of a saved model")
    p.add_argument("model", metavar="MODEL_FILE")
    _data_options(p)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("prequential", help="test-then-train evaluation of a stream")
    _learner_options(p)
    _data_options(p)
    p.add_argument("--model", help="continue from a saved model instead of a new learner")
    p.add_argument("--window", type=int, default=10_000,
                   help="examples of the running accuracy (default 10000; chunks are 1000 rows "
                        "here unless --chunk-size)")
    p.add_argument("--out", default="fastbudget-prequential", help="directory for CSV/PNG")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--save", help="save the final model here")
    p.add_argument("--no-wait", action="store_true",
                   help="with --save: refuse (exit status 2) instead of waiting when another "
                        "fastbudget process is writing that model file")
    p.set_defaults(chunk_size=1000)

    p = sub.add_parser("reproduce", help="reproduce a paper table as a Markdown report")
    p.add_argument("name", metavar="NAME", help="a reproduction name, or 'list'")
    p.add_argument("--data-dir", default=os.environ.get("FASTBUDGET_DATA_DIR"),
                   help="directory of the real data sets (default $FASTBUDGET_DATA_DIR)")
    p.add_argument("--orders", type=int, default=None,
                   help="random stream orders (default 5, --quick 1); span, rueping: seeds or "
                        "repetitions when given (else the script's default); streamsvm: 4 x "
                        "orders")
    p.add_argument("--quick", action="store_true", help="a small version (about a minute)")
    p.add_argument("--n-max", type=int, default=None,
                   help="cap on training examples per data set (tests, quick looks)")
    p.add_argument("--budgets", default=None, help="comma-separated budgets (tvm-table3)")
    p.add_argument("--sets", default=None, help="comma-separated data set names")
    p.add_argument("--idsvm-seconds", type=float, default=None,
                   help="tvm-table2: stop IDSVM after this much training (default 120, "
                        "--quick 2; the paper used 3000)")
    p.add_argument("--idsvm-capacity", type=int, default=10_000,
                   help="tvm-table2: most examples IDSVM holds (memory ~16*capacity^2 bytes; "
                        "default 10000)")
    p.add_argument("--svc-n-max", default=None, metavar="N|SET=N,...",
                   help="tvm-table2: fit LIBSVM (SVC) on at most N training examples (of every "
                        "set, or of the sets named)")
    p.add_argument("--svc-cache-mb", type=float, default=1000.0,
                   help="tvm-table2: SVC kernel cache in MB (default 1000)")
    p.add_argument("--no-table2", action="store_true",
                   help="'reproduce all': skip tvm-table2 (its LIBSVM and IDSVM columns are slow)")
    p.add_argument("--out", default=os.path.join("docs", "results"), help="report directory")
    p.add_argument("--quiet", "-q", action="store_true")

    p = sub.add_parser("warmup", help="compile every learner now (fills the on-disk cache)")
    p.add_argument("--jobs", "-j", type=int, default=0,
                   help="processes compiling at once (default 0: one per core)")
    p.add_argument("--native", action="store_true",
                   help="compile for this CPU even where the package carries portable "
                        "machine code (a wheel built with FASTBUDGET_PORTABLE_BUILD=1)")
    p.add_argument("--quiet", "-q", action="store_true")
    return ap


# options whose value is a list of labels, which may begin with a negative one ("-1,1")
LABEL_OPTIONS = ("--classes", "--class-weight")


def attach_label_values(argv):
    """``--classes -1,1`` as ``--classes=-1,1``: argparse takes a value that starts with '-'
    and is not a plain number for an option, and would report the option's value missing."""
    out = []
    i = 0
    while i < len(argv):
        a = argv[i]
        nxt = str(argv[i + 1]) if i + 1 < len(argv) else ""
        if a in LABEL_OPTIONS and nxt[:1] == "-" and nxt[1:2].isdigit():
            out.append(f"{a}={nxt}")
            i += 2
        else:
            out.append(a)
            i += 1
    return out
