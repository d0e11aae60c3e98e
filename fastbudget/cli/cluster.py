"""``fastbudget train`` and ``fastbudget predict`` on a Dask cluster (``--workers N`` for a
local cluster of N worker processes, ``--scheduler ADDRESS`` for a running one), over a
glob of files: one task per file (``fastbudget.distributed``)."""
import contextlib
import glob
import logging
import os
import sys
import time

import numpy as np

from .. import distributed as fd
from .._progress import note
from ._learners import learner_params, make_learner
from .data import data_format
from .errors import CLIError
from .files import check_not_input, check_output, load_model
from .scaler import Scaler
from .stream import finish
from .values import parse_classes, proba_header, proba_text, rows_text

#: the learners the cluster path trains (shard and merge needs the learner's merge rule)
CLUSTER_LEARNERS = ("tvm",)


@contextlib.contextmanager
def _cluster(args):
    try:
        from distributed import Client
    except ImportError:
        raise CLIError("--workers/--scheduler need Dask: pip install 'fastbudget[dask]'") \
            from None
    if args.workers is not None and args.scheduler:
        raise CLIError("pass one of --workers (a local cluster) and --scheduler (a "
                           "running one).")
    if args.scheduler:
        try:
            client = Client(args.scheduler, timeout=30)
        except OSError as exc:
            raise CLIError(f"cannot reach the Dask scheduler at {args.scheduler}: "
                           f"{exc}") from None
        try:
            yield client
        finally:
            client.close()
        return
    if args.workers < 1:
        raise CLIError(f"--workers must be at least 1; got {args.workers}.")
    cluster = fd.local_cluster(args.workers, silence_logs=logging.ERROR)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _paths(pattern):
    if pattern == "-" or pattern.startswith("gen:"):
        raise CLIError("--workers/--scheduler read files (a path or a glob such as "
                           "'data/*.svm'), not standard input or gen: streams.")
    paths = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
    if not paths:
        raise CLIError(f"no file matches {pattern!r}.")
    for p in paths:
        if not os.path.isfile(p):
            raise CLIError(f"no such file: {p}")
    return paths


def _format(opts, paths):
    fmts = {data_format(p, opts.format, opts.comments)[0] for p in paths}
    if len(fmts) > 1:
        raise CLIError(f"the files mix formats ({', '.join(sorted(fmts))}): pass "
                       "files of one format, or --format.")
    return fmts.pop()


def _reader_options(opts, fmt, n_features=None, zero_based=None, csv=None):
    if fmt == "libsvm":
        zb = zero_based if zero_based is not None else {"yes": True, "no": False}.get(
            opts.zero_based, "auto")
        return {"n_features": n_features if n_features is not None else opts.n_features,
                "zero_based": zb}
    options = {"comments": opts.comments}
    rec = csv or {}
    label = opts.label_column if opts.label_column is not None else rec.get("label_column", -1)
    if isinstance(label, str):
        label = None if label == "none" else (int(label) if label.lstrip("-").isdigit()
                                              else label)
    options["label_column"] = label
    options["delimiter"] = opts.delimiter if opts.delimiter is not None else rec.get("delimiter")
    options["header"] = {"yes": True, "no": False}.get(opts.header, "auto")
    options["label_type"] = "auto"
    return options


def train(opts, lopts, args):
    """``fastbudget train tvm 'data/*.svm' --workers 2 -o model.npz`` (``opts``: the shared
    options; ``lopts``: the learner's; ``args``: the parsed command line)."""
    if args.learner not in CLUSTER_LEARNERS:
        raise CLIError(f"--workers/--scheduler train {', '.join(CLUSTER_LEARNERS)} by "
                       f"shard and merge; {args.learner!r} has no merge rule for it "
                       "(train it on one machine).")
    if opts.standardize == "pass":
        raise CLIError("--standardize pass needs a pass over all files before training; "
                       "with --workers/--scheduler use --standardize warmup (from the "
                       "first file) or none.")
    if args.checkpoint_every is not None:
        raise CLIError("--checkpoint-every saves a single stream; a cluster run saves "
                       "the merged model at the end.")
    out = args.output
    check_output(out, "-o")
    paths = _paths(opts.data)
    check_not_input(out, "-o", [("input data", p) for p in paths])
    fmt = _format(opts, paths)
    options = _reader_options(opts, fmt)
    if fmt == "libsvm" and options["zero_based"] == "auto":
        options["zero_based"] = _libsvm_base(paths)
    first = next(iter(fd._read_file(paths[0], fmt, options, opts.chunk_size)), None)
    if first is None:
        raise CLIError(f"{paths[0]} holds no rows.")
    scaler = _warmup_scaler(opts, paths[0], fmt, options)
    scaler.zero_based = options.get("zero_based") if fmt == "libsvm" else None
    if fmt == "csv":
        scaler.csv = {"label_column": options["label_column"],
                      "delimiter": options["delimiter"]}
    classes = parse_classes(lopts.classes)
    params = learner_params(lopts, opts.seed)
    est = make_learner(args.learner, params)
    t0 = time.perf_counter()
    with _cluster(args) as client:
        note(f"training on {len(client.scheduler_info()['workers'])} worker(s), one "
             f"shard per file ({len(paths)} file(s))", opts.quiet)
        fd.fit_files(est, paths, fmt=fmt, client=client, classes=classes,
                     chunk_size=opts.chunk_size, transform=scaler if scaler.found and
                     scaler.mean is not None else None, **options)
    wall = time.perf_counter() - t0
    return finish(est, scaler, out, int(est.n_seen_), wall,
                  f"trained {type(est).__name__} ({args.learner}) by shard and merge",
                  est.n_features_in_, None, 0)


def _libsvm_base(paths):
    """One index base for all LIBSVM files: zero-based when the first chunk of the first
    file uses index 0 (as standard input's base is taken from its first chunk; pass
    --zero-based yes/no to fix it)."""
    from ..datasets import read_libsvm
    for X, _y in read_libsvm(paths[0], chunk_size=10_000, zero_based=True):
        return bool(np.any(X[:, 0] != 0))
    return False


def _warmup_scaler(opts, path, fmt, options):
    if opts.standardize == "none":
        if opts.clip is not None:
            raise CLIError("--clip applies to standardised values: use it with "
                           "--standardize warmup.")
        return Scaler()
    from ..datasets import StreamingStandardizer
    clip = opts.clip
    st = StreamingStandardizer(n_warmup=opts.warmup_rows, clip=clip)
    n = 0
    for X, _y in fd._read_file(path, fmt, options, opts.chunk_size):
        st.partial_fit(X)
        n += X.shape[0]
        if n >= opts.warmup_rows:
            break
    return Scaler(st.mean_, st.scale_, "warmup", st.n_samples_seen_, clip)


def predict(opts, args):
    """``fastbudget predict MODEL 'data/*.svm' --workers 2``: labels (or ``--scores``, or
    ``--proba``) of every file in order, one line per row."""
    paths = _paths(opts.data)
    to_file = args.output is not None and args.output != "-"
    if to_file:
        check_output(args.output, "-o")
    model, scaler = load_model(opts.model)
    fmt = _format(opts, paths)
    d = model.n_features_in_
    options = _reader_options(opts, fmt, n_features=d if fmt == "libsvm" else None,
                              zero_based=scaler.zero_based, csv=scaler.csv)
    if fmt == "csv":
        text = np.asarray(model.classes_).dtype.kind in "OUS"
        options["label_type"] = "str" if text else "numeric"
    transform = scaler if scaler.mean is not None else None
    from ..persist import atomic_file
    with _cluster(args) as client, \
            (atomic_file(args.output, "w") if to_file else
             contextlib.nullcontext(sys.stdout)) as out:
        what = "proba" if args.proba else "decision" if args.scores else "predict"
        if args.proba:
            out.write(proba_header(model.classes_) + "\n")
        for p, res in zip(paths, fd.predict_files(model, paths, fmt=fmt, client=client,
                                                  chunk_size=opts.chunk_size,
                                                  transform=transform, what=what,
                                                  **options)):
            text = (proba_text(res, model.classes_) if args.proba
                    else rows_text(res, args.scores, model.classes_))
            if text:
                out.write(text + "\n")
    return 0
