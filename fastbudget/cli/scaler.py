"""The scaler file the command line keeps beside a model, ``MODEL.scaler.json``.

``fastbudget train -o MODEL`` writes it with the model (:meth:`Scaler.save`: both files
change, or neither); the commands that read data with a saved model read it back
(:meth:`Scaler.load`, through :func:`fastbudget.persist.read_scaler_file`, which checks it)
and apply it to every row. Its fields (a JSON object):

- ``format`` (``"fastbudget-scaler"``) and ``version`` (1);
- ``mode``: ``warmup``, ``pass`` or ``none`` (``--standardize``); ``n_rows``: the rows the
  statistics came from; ``clip``: ``--clip`` in standard deviations, or null;
- ``mean`` and ``scale``: one number per feature (absent when the model was trained on the
  data as given): the model was fitted on ``(x - mean) / scale``, clipped to
  ``[-clip, clip]``;
- ``libsvm_zero_based``: the index base of a LIBSVM training file, or null;
- ``csv_label_column`` and ``csv_delimiter``: the label column and ``--delimiter`` of a CSV
  training file, or null.

``docs/format.md`` describes it beside the model file; in Python,
``fastbudget.load_scaler(MODEL)`` returns it as a frozen ``StreamingStandardizer``.
"""
import json
import os

import numpy as np

from ..exceptions import ModelFormatError
from ..persist import SCALER_SUFFIX, atomic_file, read_scaler_file
from .errors import CLIError

__all__ = ["Scaler", "SCALER_SUFFIX"]


class Scaler:
    """Frozen ``(X - mean) / scale`` (identity when ``mean`` is None)."""

    def __init__(self, mean=None, scale=None, mode="none", n_rows=0, clip=None, zero_based=None,
                 csv=None):
        self.zero_based = zero_based      # LIBSVM indexing of the training data (None: unknown)
        self.csv = csv                    # CSV label column and delimiter (None: not CSV)
        self.found = True                 # False: no sidecar file beside the model
        self.mean = None if mean is None else np.asarray(mean, dtype=np.float64)
        self.scale = None if scale is None else np.asarray(scale, dtype=np.float64)
        self.mode = mode
        self.n_rows = int(n_rows)
        self.clip = None if clip is None else float(clip)

    def __call__(self, X):
        """``X`` standardised (and clipped); ``X`` itself without standardisation."""
        if self.mean is None:
            return X
        Z = (X - self.mean) / self.scale
        if self.clip is not None:
            np.clip(Z, -self.clip, self.clip, out=Z)
        return Z

    def save(self, model_path, model=None):
        """Write the sidecar of ``model_path``; with ``model``, save the model too, so that
        a failure of either leaves both files as they were: the sidecar is written and
        flushed to disk under a temporary name first, then the model is saved (renamed over
        its file), then the sidecar is renamed over its file."""
        path = os.fspath(model_path) + SCALER_SUFFIX
        doc = {"format": "fastbudget-scaler", "version": 1, "mode": self.mode,
               "n_rows": self.n_rows, "clip": self.clip, "libsvm_zero_based": self.zero_based,
               "csv_label_column": None if self.csv is None else self.csv["label_column"],
               "csv_delimiter": None if self.csv is None else self.csv["delimiter"]}
        if self.mean is not None:
            doc.update(mean=self.mean.tolist(), scale=self.scale.tolist())
        with atomic_file(path, "w") as f:
            json.dump(doc, f)
            if model is not None:
                try:
                    f.flush()
                    os.fsync(f.fileno())
                except OSError as exc:
                    raise type(exc)(exc.errno, f"cannot write {path!r}: {exc.strerror}",
                                    path) from None
                model.save(model_path)
        return path

    @classmethod
    def load(cls, model_path):
        """The scaler file of ``model_path``; when there is none, an identity scaler whose
        ``found`` is False (the commands then say that the data is used as given)."""
        try:
            path, doc = read_scaler_file(model_path)
        except ModelFormatError as exc:
            raise CLIError(str(exc)) from None
        if doc is None:
            out = cls()
            out.found = False
            return out
        try:
            csv = _recorded_csv(doc)
        except ValueError as exc:
            raise CLIError(f"cannot read the scaler file {path}: {exc}") from None
        zb = doc.get("libsvm_zero_based")
        if doc.get("mean") is None:       # trained without standardisation
            return cls(mode=doc.get("mode", "none"), zero_based=zb, csv=csv)
        return cls(doc["mean"], doc["scale"], doc.get("mode", "?"), doc.get("n_rows", 0),
                   doc["clip"], zb, csv)


def _recorded_csv(doc):
    """The CSV reading options of a scaler file (None: trained on another format, or
    written before they were recorded)."""
    label, delim = doc.get("csv_label_column"), doc.get("csv_delimiter")
    if label is None and delim is None:
        return None
    if isinstance(label, bool) or not isinstance(label, (int, str, type(None))):
        raise ValueError("csv_label_column is not an integer, a name or null")
    if not isinstance(delim, (str, type(None))):
        raise ValueError("csv_delimiter is not a string or null")
    return {"label_column": -1 if label is None else label, "delimiter": delim}
