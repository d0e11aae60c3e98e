"""Values given on the command line: numbers, labels, ``K=V`` items, class weights, and the
``--comments``/``--delimiter``/yes-no-auto spellings."""
import json

import numpy as np

from .errors import CLIError


def parse_value(text):
    """``'100'`` -> 100, ``'0.5'`` -> 0.5, ``'none'`` -> None, ``'true'`` -> True, else the string."""
    low = text.strip().lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_label(text):
    """A label of ``--classes``/``--class-weight``: a number, else the text as it is (never
    a boolean or None: 'yes'/'no' are labels like any other word)."""
    t = text.strip()
    for conv in (int, float):
        try:
            return conv(t)
        except ValueError:
            pass
    return t


def parse_kv(items, what="--param"):
    """``["k=v", ...]`` -> ``{"k": parse_value("v"), ...}``; a ``CLIError`` naming ``what``
    for an item without ``=`` or a key."""
    out = {}
    for item in items or ():
        if "=" not in item:
            raise CLIError(f"{what} expects KEY=VALUE, got {item!r}.")
        k, v = item.split("=", 1)
        if not k.strip():
            raise CLIError(f"{what} expects KEY=VALUE, got {item!r}.")
        out[k.strip()] = parse_value(v)
    return out


def parse_class_weight(text):
    """``--class-weight``: ``'1:5,-1:1'`` or a JSON object ``'{"1": 5, "-1": 1}'`` ->
    ``{1: 5.0, -1: 1.0}`` (labels parsed as ``--classes`` labels: numbers or strings)."""
    if text is None:
        return None
    t = text.strip()
    if t.lower() == "balanced":
        raise CLIError(
            "--class-weight balanced is not available: the command line learns the stream "
            "chunk by chunk (partial_fit), before the class counts are known. Count the labels "
            "and pass LABEL:WEIGHT pairs, e.g. --class-weight 1:5,-1:1 ('balanced' would be "
            "n / (n_classes * n_label) for each label).")
    if t.startswith("{"):
        try:
            d = json.loads(t)
        except ValueError as exc:
            raise CLIError(f"--class-weight is not valid JSON ({exc}).") from None
        if not isinstance(d, dict) or not d:
            raise CLIError("--class-weight as JSON must be an object {\"label\": weight, ...}.")
        items = list(d.items())
    else:
        items = []
        for item in t.split(","):
            k, sep, v = item.strip().rpartition(":")
            if not sep or not k.strip() or not v.strip():
                raise CLIError(
                    f"--class-weight expects LABEL:WEIGHT pairs separated by commas (e.g. "
                    f"1:5,-1:1) or a JSON object; got {text!r}.")
            items.append((k, v))
    out = {}
    for k, v in items:
        if isinstance(v, str):
            try:
                v = float(v)
            except ValueError:
                raise CLIError(f"--class-weight: weight {v!r} of label {k!r} is not a number.") from None
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise CLIError(f"--class-weight: weight {v!r} of label {k!r} is not a number.")
        out[parse_label(str(k))] = float(v)
    return out


def parse_classes(text):
    """``--classes``: ``"-1,1"`` -> ``array([-1., 1.])`` (numbers) or an array of strings;
    None for None."""
    if text is None:
        return None
    vals = [parse_label(t) for t in text.split(",") if t.strip()]
    if len(vals) < 2:
        raise CLIError(f"--classes needs at least two comma-separated labels, got {text!r}.")
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return np.array(vals, dtype=np.float64)
    return np.array([str(v) for v in vals])


def labels_fmt(v):
    """A label as the commands print it: ``1.0`` -> ``"1"``, ``"T"`` -> ``"T"``."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def proba_header(classes):
    """The first line ``fastbudget predict --proba`` prints: ``labels`` and the classes, in
    the order of the probability columns (as LIBSVM's ``svm-predict -b 1``)."""
    return " ".join(["labels"] + [labels_fmt(c) for c in np.asarray(classes).tolist()])


def proba_text(P, classes):
    """The lines ``fastbudget predict --proba`` prints for a block of probabilities ``P``
    (rows x classes): the most probable class and each class's probability as ``%.6g``.
    The most probable class is ``predict``'s label (the calibration map ranks as the
    decision values do) except where a one-vs-rest row's probabilities tie to within the
    map's resolution near f = 0, 1e-12 (``OneVsRestClassifier.predict_proba``)."""
    P = np.asarray(P)
    if P.shape[0] == 0:
        return ""
    labels = rows_text(np.asarray(classes)[np.argmax(P, axis=1)], False, classes).split("\n")
    probs = [" ".join(r) for r in np.char.mod("%.6g", P).tolist()]
    return "\n".join(f"{a} {b}" for a, b in zip(labels, probs))


def rows_text(values, scores=False, classes=None):
    """The lines ``fastbudget predict`` prints for a block of predictions, joined by newlines
    (no final one): labels as :func:`labels_fmt` prints them, or with ``scores`` decision
    values as ``%.6g`` (one row per line, one-vs-rest columns separated by spaces).

    Each distinct label is formatted once and the block's lines are taken from those (found
    in ``classes``, the model's sorted ``classes_``, when given): a label at a time in Python
    took 0.5 us per row, which made the command's one process the bottleneck of
    ``--workers`` (10^7 rows: 7.6 s with one worker and 7.7 s with two)."""
    v = np.asarray(values)
    if v.shape[0] == 0:
        return ""
    if scores:
        text = np.char.mod("%.6g", v).tolist()
        if v.ndim > 1:
            text = [" ".join(r) for r in text]
        return "\n".join(text)
    v = v.reshape(-1)
    uniq = None
    if classes is not None and len(classes) and np.asarray(classes).dtype.kind == v.dtype.kind:
        uniq = np.asarray(classes)
        inv = np.minimum(np.searchsorted(uniq, v), uniq.shape[0] - 1)
        if not np.array_equal(uniq[inv], v):    # (a label that is not one of the classes)
            uniq = None
    if uniq is None:
        uniq, inv = np.unique(v, return_inverse=True)
    words = np.array([labels_fmt(u) for u in uniq], dtype=object)
    return "\n".join(words[inv.reshape(-1)].tolist())


YES_NO_AUTO = {"auto": "auto", "yes": True, "no": False}   # --header, --zero-based


def comments_option(text):
    """``--comments``: the character, or None for 'none' (read_csv checks the rest)."""
    return None if text.lower() == "none" else text


def delimiter_option(text):
    """``--delimiter``: ``tab``/``\\t`` -> a tab, ``space`` -> ``whitespace``, else as given."""
    return {"tab": "\t", "\\t": "\t", "space": "whitespace"}.get(text, text)
