"""``fastbudget predict MODEL_FILE DATA``: one predicted label (or ``--scores``: decision
values; ``--proba``: the label and each class's probability, after a line of the classes)
per row, to standard output or to a file written whole or not at all; the model is
scored with NumPy alone (:mod:`fastbudget.serving`)."""
import contextlib
import sys

from ..._progress import progress
from ...persist import atomic_file
from ..data import model_chunks
from ..errors import no_rows
from ..files import check_not_input, check_output, load_predictor
from ..scaler import SCALER_SUFFIX
from ..values import proba_header, proba_text, rows_text


def run(opts, args):
    """Run ``fastbudget predict``; returns the exit status."""
    if args.workers is not None or args.scheduler:
        from .. import cluster                  # (imports Dask only when asked for)
        return cluster.predict(opts, args)
    to_file = args.output is not None and args.output != "-"    # '-': standard output
    if to_file:
        check_output(args.output, "-o")
        check_not_input(args.output, "-o", [
            ("input data", opts.data), ("model file", opts.model),
            ("model's scaler file", opts.model + SCALER_SUFFIX)])
    model, scaler = load_predictor(opts.model)
    chunks, desc, total = model_chunks(opts, model, scaler)
    # a file is written under a temporary name and renamed at the end: after an error
    # the previous file (if any) stays as it was
    with (atomic_file(args.output, "w") if to_file else contextlib.nullcontext(sys.stdout)) \
            as out, progress(total, "predict", quiet=opts.quiet) as bar:
        n = 0
        for X, _y in chunks:
            if args.proba:
                if n == 0:
                    out.write(proba_header(model.classes_) + "\n")
                out.write(proba_text(model.predict_proba(X), model.classes_) + "\n")
            else:
                res = model.decision_function(X) if args.scores else model.predict(X)
                out.write(rows_text(res, args.scores, model.classes_) + "\n")
            n += X.shape[0]
            bar.update(X.shape[0])
        if n == 0:          # (as evaluate and update refuse it; -o FILE is not written)
            raise no_rows(desc)
    return 0
