"""``fastbudget train MODEL DATA -o FILE``: learn a new model on a stream and save it (with
its scaler file), with checkpoints and a clean stop on SIGINT/SIGTERM; ``--workers`` or
``--scheduler`` train on a Dask cluster instead (:mod:`fastbudget.cli.cluster`)."""
import time

from ..._progress import progress
from .._learners import check_learner, new_model
from ..bad_rows import new_model_bad_rows
from ..data import Where, open_data, peek, standardized_stream
from ..files import check_not_input, check_output, model_locks, save_model
from ..options import LearnerOptions
from ..stream import check_every, check_features, finish, learn_stream


def run(opts, args):
    """Run ``fastbudget train``; returns the exit status."""
    check_learner(args.learner)
    lopts = LearnerOptions.from_args(args)
    if args.workers is not None or args.scheduler:
        from .. import cluster                  # (imports Dask only when asked for)
        return cluster.train(opts, lopts, args)
    every = check_every(args.checkpoint_every)
    out = args.output
    check_output(out, "-o")
    check_not_input(out, "-o", [("input data", opts.data)])
    indexing = {}
    where = Where(opts)
    bad = new_model_bad_rows(opts, lopts.classes)
    chunks, desc, total = open_data(opts, bad, indexing=indexing, row_lines=where.rows)
    chunks, scaler = standardized_stream(opts, chunks, desc, bad, where.rows)
    (X0, y0), chunks = peek(chunks, desc)
    check_features(X0, desc)
    scaler.zero_based = indexing.get("zero_based")   # decided by the reader by now
    scaler.csv = indexing.get("csv")
    model, classes = new_model(opts, lopts, desc, y0)
    with model_locks(opts, out):
        t0 = time.perf_counter()
        with progress(total, f"train {args.learner}", quiet=opts.quiet) as bar:
            n, t_fit, stop, n_saves = learn_stream(model, chunks, classes, bar, where,
                                                   lambda: save_model(model, scaler, out), every)
        wall = time.perf_counter() - t0
        return finish(model, scaler, out, n, wall,
                      f"trained {type(model).__name__} ({args.learner})", X0.shape[1], stop,
                      n_saves, bad)
