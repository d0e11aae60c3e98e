"""``fastbudget update MODEL_FILE DATA``: continue a saved model on more data, read through
its scaler file, holding the model file's lock from loading it to the last save."""
import time

from ..._progress import progress
from ..bad_rows import saved_model_bad_rows
from ..data import Where, model_chunks
from ..errors import CLIError, no_rows
from ..files import check_not_input, check_output, load_model, model_locks, save_model
from ..stream import check_every, finish, learn_stream


def run(opts, args):
    """Run ``fastbudget update``; returns the exit status."""
    every = check_every(args.checkpoint_every)
    out = args.model if args.output is None else args.output
    check_output(out, "-o")
    check_not_input(out, "-o", [("input data", opts.data)])
    # (the file written is locked, from loading the model to the last rename; a model read
    # from elsewhere needs no lock: a save replaces it atomically, and its directory may be
    # read-only)
    with model_locks(opts, out):
        return _update_locked(opts, every, out)


def _update_locked(opts, every, out):
    model, scaler = load_model(opts.model)
    where = Where(opts)
    bad = saved_model_bad_rows(opts, model)
    chunks, desc, total = model_chunks(opts, model, scaler, bad, where.rows)
    n_before = getattr(model, "n_seen_", None)
    t0 = time.perf_counter()
    with progress(total, "update", quiet=opts.quiet) as bar:
        n, t_fit, stop, n_saves = learn_stream(model, chunks, None, bar, where,
                                               lambda: save_model(model, scaler, out), every)
    wall = time.perf_counter() - t0
    if n == 0 and stop is None:
        raise CLIError(f"{str(no_rows(desc))[:-1]}; the model is unchanged.")
    what = f"updated {type(model).__name__}"
    if n_before is not None:
        # (SV-incremental's n_seen_ is a total weight, a float)
        seen = (f"{int(n_before):,}" if float(n_before).is_integer() else f"{n_before:,.6g}")
        what += f" (seen before: {seen})"
    return finish(model, scaler, out, n, wall, what, model.n_features_in_, stop,
                  n_saves, bad)
