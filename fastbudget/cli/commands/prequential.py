"""``fastbudget prequential MODEL DATA``: test-then-train evaluation of a stream (each chunk
is tested, then learned), with the running and windowed accuracy written as a CSV curve as
it grows, a plot, and ``--save`` for the final model."""
import contextlib
import os
import signal
import time

from ..._progress import note, progress
from ...evaluate import prequential
from .._learners import check_learner, new_model
from ..bad_rows import check_labels, new_model_bad_rows, saved_model_bad_rows
from ..data import Where, model_chunks, open_data, peek, standardized_stream
from ..errors import CLIError
from ..files import (check_not_input, check_out_dir, check_output, load_model, model_locks,
                     save_model)
from ..options import LearnerOptions
from ..stream import _Stop, check_features, stoppable, until_stopped


def run(opts, args):
    """Run ``fastbudget prequential``; returns the exit status."""
    check_learner(args.learner)
    if args.window < 1:
        raise CLIError(f"--window must be a positive number of examples; got {args.window}.")
    check_out_dir(args.out)
    if args.save is not None:
        check_output(args.save, "--save")
        check_not_input(args.save, "--save", [("input data", opts.data)])
    if args.save is None:
        return _prequential(opts, args)
    with model_locks(opts, args.save):         # (--model M --save M updates M)
        return _prequential(opts, args)


def _prequential(opts, args):
    where = Where(opts)
    if opts.model:
        model, scaler = load_model(opts.model)
        bad = saved_model_bad_rows(opts, model)
        chunks, desc, total = model_chunks(opts, model, scaler, bad, where.rows)
        classes = None
    else:
        indexing = {}
        lopts = LearnerOptions.from_args(args)
        bad = new_model_bad_rows(opts, lopts.classes)
        chunks, desc, total = open_data(opts, bad, indexing=indexing, row_lines=where.rows)
        chunks, scaler = standardized_stream(opts, chunks, desc, bad, where.rows)
        (X0, y0), chunks = peek(chunks, desc)
        check_features(X0, desc)
        scaler.zero_based = indexing.get("zero_based")
        scaler.csv = indexing.get("csv")
        model, classes = new_model(opts, lopts, desc, y0)
    last = None                       # the last step of the evaluation
    curve = _Curve()
    csv_path = os.path.join(args.out, "prequential.csv")
    os.makedirs(args.out, exist_ok=True)
    t0 = time.perf_counter()
    # the curve goes to the CSV as it grows (an endless stream is the point), and SIGINT or
    # SIGTERM ends the stream with everything below done as at its end
    with progress(total, f"prequential {args.learner}", quiet=opts.quiet) as bar, \
            open(csv_path, "w") as f, stoppable() as state:

        def checked(chunks):
            """The labelled chunks, each refused when a label is not one of the classes."""
            n_read = 0                # rows of the stream read so far
            for X, y in until_stopped(chunks, state, "prequential evaluation needs labels"):
                check_labels(y, classes if n_read == 0 and classes is not None
                             else model.classes_, n_read, where, saved=bool(opts.model))
                where.forget_before(n_read)
                n_read += len(y)
                yield X, y

        @contextlib.contextmanager
        def busy():
            state["busy"] = True      # a signal now only stops the stream after this chunk
            yield
            state["busy"] = False

        f.write("n_tested,cumulative_accuracy,window_accuracy\n")
        try:
            for step in prequential(model, checked(chunks), classes=classes,
                                    window=args.window, step=busy):
                f.write(f"{step.n_tested},{step.accuracy:.6f},{step.window_accuracy:.6f}\n")
                f.flush()
                curve.add((step.n_tested, step.accuracy, step.window_accuracy))
                bar.update(step.n_learned - (0 if last is None else last.n_learned))
                last = step
        except _Stop:
            pass
    wall = time.perf_counter() - t0
    stop = state["signal"]
    n = 0 if last is None else last.n_tested
    if stop is not None:
        note(f"stopped by {signal.Signals(stop).name} after {n:,} tested examples.")
    if n == 0:
        if stop is not None:
            return 130 if stop == signal.SIGINT else 143
        raise CLIError("the stream is too short for prequential evaluation (one chunk).")
    print(f"prequential accuracy {last.accuracy:.4f} over {n:,} tested examples "
          f"(last {last.window_tested:,}: {last.window_accuracy:.4f}); "
          f"{n / max(wall, 1e-9):,.0f} examples/s; "
          + ("" if bad is None else f"{bad.summary()}; ") + f"curve in {csv_path}")
    if not args.no_plot:
        from ... import plotting
        png = os.path.join(args.out, "prequential.png")
        if plotting.plot_prequential(curve.rows, png, title=f"{args.learner} on {desc}",
                                     window=args.window, quiet=opts.quiet):
            print(f"plot in {png}")
    if args.save is not None:
        save_model(model, scaler, args.save)
    return 0


class _Curve:
    """At most ``2 * cap`` points of a curve of any length, evenly thinned (every
    ``stride``-th point, the stride doubling when the list fills) plus the last point."""

    def __init__(self, cap=2000):
        self.cap = cap
        self.stride = 1
        self.k = 0
        self.kept = []
        self.last = None

    def add(self, row):
        if self.k % self.stride == 0:
            self.kept.append(row)
            if len(self.kept) >= 2 * self.cap:
                self.kept = self.kept[::2]
                self.stride *= 2
        self.k += 1
        self.last = row

    @property
    def rows(self):
        if self.kept and self.kept[-1] is not self.last:
            return self.kept + [self.last]
        return list(self.kept)
