"""The learners the command line makes: their names (:data:`LEARNERS`), the parameters of the
learner flags (:func:`learner_params`) and the model of ``train``/``prequential``
(:func:`new_model`)."""
import numpy as np

import fastbudget

from .._registry import cli_learners
from .._progress import note
from .errors import CLIError
from .values import labels_fmt, parse_class_weight, parse_classes, parse_kv, parse_value

# The command line's learners: the package's registry (fastbudget/_registry.py), by name.
LEARNERS = cli_learners()


def check_learner(name):
    """Refuse an unknown learner before any data is read."""
    if name not in LEARNERS:
        raise CLIError(f"unknown learner {name!r}; choose one of {', '.join(LEARNERS)}.")


def make_learner(name, params, multiclass=False, total_budget=None):
    """The learner ``name`` with ``params``; with ``multiclass`` wrapped in
    ``OneVsRestClassifier``, which then takes ``class_weight`` (keyed by the original labels)
    and ``total_budget``."""
    check_learner(name)
    cls = getattr(fastbudget, LEARNERS[name])
    valid = cls._get_param_names()
    for k in params:
        if k not in valid:
            raise CLIError(f"learner {name!r} has no parameter {k!r}; valid ones are "
                           f"{', '.join(valid)}.")
    params = dict(params)
    class_weight = params.pop("class_weight", None)
    est = cls(**params)
    if multiclass:
        model = fastbudget.OneVsRestClassifier(est, total_budget=total_budget,
                                               class_weight=class_weight)
        try:
            model._validate_params()
        except ValueError as exc:
            raise CLIError(str(exc).replace("leave total_budget=None", "drop --total-budget")
                           .replace("total_budget", "--total-budget")) from None
        return model
    return est.set_params(class_weight=class_weight)


def new_model(opts, lopts, desc, y0):
    """The learner of ``train``/``prequential`` (``lopts``, a
    :class:`~fastbudget.cli.options.LearnerOptions`) for a stream whose first chunk has
    labels ``y0``: (model, the classes to pass to the first partial_fit: ``--classes`` or
    those of the first chunk)."""
    classes = parse_classes(lopts.classes)
    if classes is not None:
        classes = np.unique(classes)          # '--classes 1,-1,1' lists two classes
    labels = classes if classes is not None else np.unique(y0)
    if classes is None and len(labels) < 2:
        if len(y0) < opts.chunk_size:     # a short chunk is the last one: all the data
            raise CLIError(f"all {len(y0):,} rows of {desc} have the label "
                           f"{labels_fmt(labels[0])}; a classifier needs rows of two "
                           f"classes. Is the label in another column (--label-column)?")
        raise CLIError(f"the first chunk of {desc} holds only the label "
                       f"{labels_fmt(labels[0])}; pass --classes (e.g. --classes -1,1).")
    if classes is None and len(labels) > 2 and labels.dtype.kind == "f":
        frac = labels[labels != np.round(labels)]
        if len(frac):
            raise CLIError(f"the label column of {desc} holds {len(labels):,} different values, "
                           f"some not whole numbers (e.g. {labels_fmt(frac[0])}): it looks like "
                           f"a feature, not class labels. Pass the label's column with "
                           f"--label-column (or list the classes with --classes).")
    multiclass = lopts.multiclass or len(labels) > 2
    params = learner_params(lopts, opts.seed)
    total = lopts.total_budget
    if total is not None and "budget" in params:
        raise CLIError("pass one of --budget (each learner's) and --total-budget (the sum).")
    if total is not None and not multiclass:
        params["budget"] = total            # one learner (make_learner checks it has a budget)
        total = None
    k = len(labels)
    n_learners = 1 if k == 2 else k           # two classes: one binary learner
    if multiclass and total is not None and total // n_learners < 2:
        raise CLIError(f"--total-budget {total} is too small for {n_learners} one-vs-rest "
                       f"learners: each needs a budget of at least 2, so pass at least "
                       f"{2 * n_learners}.")
    model = make_learner(lopts.learner, params, multiclass, total)
    if len(y0) < 2 and model._gamma_from_data():
        raise CLIError(f"the first chunk of {desc} has one row, but gamma 'scale' (the default) "
                       f"is 1 / (n_features * variance) of the first chunk, which one row cannot "
                       f"tell: pass --gamma NUMBER (about 1 / n_features on standardised data) "
                       f"or a --chunk-size of at least 2.")
    if multiclass:
        share = model.estimator.get_params().get("budget")
        if total is not None:
            share = total // n_learners
        if share is not None and n_learners == 1:
            note(f"one-vs-rest over 2 classes: 1 learner with a budget of {share:,} (two "
                 f"classes need one binary learner); later chunks may not add classes "
                 f"(--classes lists them all).", opts.quiet)
        elif share is not None:
            note(f"one-vs-rest over {k} classes: {k} learners with a budget of {share:,} each "
                 f"({k * share:,} in all{'' if total is not None else '; --total-budget N shares N'}"
                 f"); later chunks may not add classes (--classes lists them all).", opts.quiet)
    return model, labels


def learner_params(lopts, seed=None):
    """The learner's parameters from the learner flags, ``--param`` and ``--class-weight``
    (``lopts``, a :class:`~fastbudget.cli.options.LearnerOptions`), with ``random_state``
    ``seed`` (``--seed``) for a learner that takes one and was not given it."""
    params = {}
    for flag, v in lopts.flags:
        params[flag] = parse_value(v) if isinstance(v, str) else v
    params.update(parse_kv(lopts.param))
    cw = lopts.class_weight
    if isinstance(params.get("class_weight"), str):     # --param class_weight=...
        if cw is not None:
            raise CLIError("pass --class-weight once (not also --param class_weight=...).")
        cw = params.pop("class_weight")
    if cw is not None:
        params["class_weight"] = parse_class_weight(cw)
    if "random_state" not in params and seed is not None:
        cls = getattr(fastbudget, LEARNERS.get(lopts.learner, "TVMClassifier"), None)
        if cls is not None and "random_state" in cls._get_param_names():
            params["random_state"] = seed
    return params


def memory_text(model):
    """The model's memory as ``'12.3 KiB'`` (a one-vs-rest model's: its learners'), or
    ``'n/a'``."""
    try:
        b = model.memory_bytes()
    except (AttributeError, NotImplementedError):
        try:
            b = sum(e.memory_bytes() for e in model.estimators_)
        except Exception:  # noqa: BLE001 - report what we know
            return "n/a"
    return f"{b / 1024:,.1f} KiB"
