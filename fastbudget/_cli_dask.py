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

from . import cli
from . import distributed as fd

#: the learners the cluster path trains (shard and merge needs the learner's merge rule)
CLUSTER_LEARNERS = ("tvm",)


def wants_cluster(args):
    return getattr(args, "workers", None) is not None or getattr(args, "scheduler", None)


@contextlib.contextmanager
def _cluster(args):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise cli.CLIError("--workers/--scheduler need Dask: pip install 'fastbudget[dask]'") \
            from None
    if args.workers is not None and args.scheduler:
        raise cli.CLIError("pass one of --workers (a local cluster) and --scheduler (a "
                           "running one).")
    if args.scheduler:
        try:
            client = Client(args.scheduler, timeout=30)
        except OSError as exc:
            raise cli.CLIError(f"cannot reach the Dask scheduler at {args.scheduler}: "
                               f"{exc}") from None
        try:
            yield client
        finally:
            client.close()
        return
    if args.workers < 1:
        raise cli.CLIError(f"--workers must be at least 1; got {args.workers}.")
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def _paths(pattern):
    if pattern == "-" or pattern.startswith("gen:"):
        raise cli.CLIError("--workers/--scheduler read files (a path or a glob such as "
                           "'data/*.svm'), not standard input or gen: streams.")
    paths = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
    if not paths:
        raise cli.CLIError(f"no file matches {pattern!r}.")
    for p in paths:
        if not os.path.isfile(p):
            raise cli.CLIError(f"no such file: {p}")
    return paths


def _format(args, paths):
    fmts = {cli.detect_format(p, args.format, args.comments)[0] for p in paths}
    if len(fmts) > 1:
        raise cli.CLIError(f"the files mix formats ({', '.join(sorted(fmts))}): pass "
                           "files of one format, or --format.")
    return fmts.pop()


def _reader_options(args, fmt, n_features=None, zero_based=None, csv=None):
    if fmt == "libsvm":
        zb = zero_based if zero_based is not None else {"yes": True, "no": False}.get(
            args.zero_based, "auto")
        return {"n_features": n_features if n_features is not None else args.n_features,
                "zero_based": zb}
    opts = {"comments": args.comments}
    rec = csv or {}
    label = args.label_column if args.label_column is not None else rec.get("label_column", -1)
    if isinstance(label, str):
        label = None if label == "none" else (int(label) if label.lstrip("-").isdigit()
                                              else label)
    opts["label_column"] = label
    opts["delimiter"] = args.delimiter if args.delimiter is not None else rec.get("delimiter")
    opts["header"] = {"yes": True, "no": False}.get(args.header, "auto")
    opts["label_type"] = "auto"
    return opts


def train(args):
    """``fastbudget train tvm 'data/*.svm' --workers 2 -o model.npz``."""
    if args.learner not in CLUSTER_LEARNERS:
        raise cli.CLIError(f"--workers/--scheduler train {', '.join(CLUSTER_LEARNERS)} by "
                           f"shard and merge; {args.learner!r} has no merge rule for it "
                           "(train it on one machine).")
    if args.standardize == "pass":
        raise cli.CLIError("--standardize pass needs a pass over all files before training; "
                           "with --workers/--scheduler use --standardize warmup (from the "
                           "first file) or none.")
    if getattr(args, "checkpoint_every", None) is not None:
        raise cli.CLIError("--checkpoint-every saves a single stream; a cluster run saves "
                           "the merged model at the end.")
    out = args.output
    cli._check_output(out, "-o")
    paths = _paths(args.data)
    cli._check_not_input(out, "-o", [("input data", p) for p in paths])
    fmt = _format(args, paths)
    options = _reader_options(args, fmt)
    if fmt == "libsvm" and options["zero_based"] == "auto":
        options["zero_based"] = _libsvm_base(paths)
    first = next(iter(fd._read_file(paths[0], fmt, options, args.chunk_size)), None)
    if first is None:
        raise cli.CLIError(f"{paths[0]} holds no rows.")
    scaler = _warmup_scaler(args, paths[0], fmt, options)
    scaler.zero_based = options.get("zero_based") if fmt == "libsvm" else None
    if fmt == "csv":
        scaler.csv = {"label_column": options["label_column"],
                      "delimiter": options["delimiter"]}
    classes = cli.parse_classes(args.classes)
    params = cli.learner_params(args)
    est = cli.make_learner(args.learner, params)
    t0 = time.perf_counter()
    with _cluster(args) as client:
        cli.note(f"training on {len(client.scheduler_info()['workers'])} worker(s), one "
                 f"shard per file ({len(paths)} file(s))", args.quiet)
        fd.fit_files(est, paths, fmt=fmt, client=client, classes=classes,
                     chunk_size=args.chunk_size, transform=scaler if scaler.found and
                     scaler.mean is not None else None, **options)
    wall = time.perf_counter() - t0
    return cli._finish(est, scaler, out, int(est.n_seen_), wall,
                       f"trained {type(est).__name__} ({args.learner}) by shard and merge",
                       est.n_features_in_, None, 0)


def _libsvm_base(paths):
    """One index base for all LIBSVM files: zero-based when the first chunk of the first
    file uses index 0 (as standard input's base is taken from its first chunk; pass
    --zero-based yes/no to fix it)."""
    from .datasets import read_libsvm
    for X, _y in read_libsvm(paths[0], chunk_size=10_000, zero_based=True):
        return bool(np.any(X[:, 0] != 0))
    return False


def _warmup_scaler(args, path, fmt, options):
    if args.standardize == "none":
        if getattr(args, "clip", None) is not None:
            raise cli.CLIError("--clip applies to standardised values: use it with "
                               "--standardize warmup.")
        return cli.Scaler()
    from .datasets import StreamingStandardizer
    clip = getattr(args, "clip", None)
    st = StreamingStandardizer(n_warmup=args.warmup_rows, clip=clip)
    n = 0
    for X, _y in fd._read_file(path, fmt, options, args.chunk_size):
        st.partial_fit(X)
        n += X.shape[0]
        if n >= args.warmup_rows:
            break
    return cli.Scaler(st.mean_, st.scale_, "warmup", st.n_samples_seen_, clip)


def predict(args):
    """``fastbudget predict MODEL 'data/*.svm' --workers 2``: labels (or ``--scores``) of
    every file in order, one line per row."""
    paths = _paths(args.data)
    to_file = args.output is not None and args.output != "-"
    if to_file:
        cli._check_output(args.output, "-o")
    model, scaler = cli.load_model(args.model)
    fmt = _format(args, paths)
    d = model.n_features_in_
    options = _reader_options(args, fmt, n_features=d if fmt == "libsvm" else None,
                              zero_based=scaler.zero_based, csv=scaler.csv)
    if fmt == "csv":
        text = np.asarray(model.classes_).dtype.kind in "OUS"
        options["label_type"] = "str" if text else "numeric"
    transform = scaler if scaler.mean is not None else None
    from .persist import atomic_file
    with _cluster(args) as client, \
            (atomic_file(args.output, "w") if to_file else
             contextlib.nullcontext(sys.stdout)) as out:
        for p, res in zip(paths, fd.predict_files(model, paths, fmt=fmt, client=client,
                                                  chunk_size=args.chunk_size,
                                                  transform=transform, scores=args.scores,
                                                  **options)):
            if args.scores:
                rows = (" ".join(f"{v:.6g}" for v in np.atleast_1d(r)) for r in res)
            else:
                rows = (cli._labels_fmt(v) for v in res)
            text = "\n".join(rows)
            if text:
                out.write(text + "\n")
    return 0
