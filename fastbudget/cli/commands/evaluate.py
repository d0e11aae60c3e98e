"""``fastbudget evaluate MODEL_FILE DATA``: accuracy, confusion matrix and log-loss of a saved
model on labelled data (``--json`` for a machine-readable line)."""
import json

import numpy as np

from ..._progress import note, progress
from ..bad_rows import saved_model_bad_rows
from ..data import model_chunks
from ..errors import CLIError, no_rows
from ..files import load_model
from ..values import labels_fmt


def run(opts, args):
    """Run ``fastbudget evaluate``; returns the exit status."""
    model, scaler = load_model(opts.model)
    bad = saved_model_bad_rows(opts, model, labels=False)  # unknown labels count as errors
    chunks, desc, total = model_chunks(opts, model, scaler, bad)
    classes = list(model.classes_)
    cls_arr = np.asarray(model.classes_)
    conf = np.zeros((len(classes), len(classes)), dtype=np.int64)
    n = correct = 0
    loss = 0.0          # the summed -log of each known-label row's predicted probability
    unknown = {}
    with progress(total, "evaluate", quiet=opts.quiet) as bar:
        for X, y in chunks:
            if y is None:
                raise CLIError("the data has no label column; evaluate needs labels.")
            p = model.predict(X)
            correct += int(np.sum(p == y))
            n += len(y)
            ti = np.searchsorted(cls_arr, y)
            known = (ti < len(cls_arr)) & (cls_arr[np.minimum(ti, len(cls_arr) - 1)] == y)
            np.add.at(conf, (ti[known], np.searchsorted(cls_arr, p)[known]), 1)
            P = model.predict_proba(X)
            loss -= float(np.sum(np.log(P[np.flatnonzero(known), ti[known]])))
            if not known.all():
                for lab, c in zip(*np.unique(y[~known], return_counts=True)):
                    unknown[labels_fmt(lab)] = unknown.get(labels_fmt(lab), 0) + int(c)
            bar.update(len(y))
    if n == 0:
        raise no_rows(desc)
    if unknown:
        note(f"note: {sum(unknown.values()):,} rows have labels the model was not trained on "
             f"({', '.join(f'{k}: {v:,}' for k, v in list(unknown.items())[:10])}); they count "
             f"as errors and are not in the confusion matrix (the model's labels: "
             f"{', '.join(labels_fmt(c) for c in classes)}).")
    n_known = int(conf.sum())
    log_loss = loss / n_known if n_known else None
    if args.json:
        doc = {"accuracy": correct / n, "n": n, "classes": [labels_fmt(c) for c in classes],
               "confusion": conf.tolist(), "unknown_labels": unknown, "log_loss": log_loss}
        if bad is not None:
            doc["skipped_rows"] = bad.count
        print(json.dumps(doc))
    else:
        print(f"accuracy {correct / n:.4f} ({correct:,} / {n:,}) on {desc}"
              + ("" if bad is None else f"; {bad.summary()}"))
        if log_loss is not None:
            print(f"log-loss {log_loss:.4f} (the calibrated predict_proba"
                  + (f"; over the {n_known:,} rows with a label of the model)" if unknown
                     else ")"))
        print("confusion (rows: true, columns: predicted): "
              + "; ".join(f"{labels_fmt(c)}: " + " ".join(str(v) for v in conf[i])
                          for i, c in enumerate(classes)))
    return 0
