"""The options the commands share, read once from the parsed command line.

:func:`Options.from_args` turns argparse's namespace into a frozen :class:`Options` (the data
source and how to read it, the bad-row policy, standardisation, seed, ``--quiet``), and
:func:`LearnerOptions.from_args` the learner's options of ``train`` and ``prequential``. The
helpers of the package take these objects, not the namespace: what a command has not got
(``predict`` has no ``--on-bad-row``, ``train`` no model file) is a default here, in one
place, instead of a ``getattr`` fallback in each helper.
"""
from dataclasses import dataclass
from typing import Optional, Tuple, Union

#: the learner flags every learner takes (``--budget`` ... ``--coef0``)
COMMON_FLAGS = ("budget", "C", "kernel", "gamma", "degree", "coef0")


@dataclass(frozen=True)
class Options:
    """Shared options of one command.

    Attributes
    ----------
    command : str
        The command's name (``'train'``, ``'predict'`` ...).
    data : str or None
        The ``DATA`` argument: a path, ``'-'`` (standard input) or ``'gen:NAME'``.
    format : str
        ``--format``: ``'auto'``, ``'libsvm'`` or ``'csv'``.
    label_column, delimiter : str or None
        ``--label-column`` and ``--delimiter`` as given (None: not given).
    n_features : int or None
        ``--n-features``.
    zero_based : str or None
        ``--zero-based`` (``'auto'``, ``'yes'``, ``'no'``; None: not given).
    header : str
        ``--header``: ``'auto'``, ``'yes'`` or ``'no'``.
    comments : str or None
        ``--comments``: the comment character, None for none.
    chunk_size, n : int or None
        ``--chunk-size`` and ``--n`` (rows of a ``gen:`` stream).
    gen_param : tuple of str
        ``--gen-param K=V`` items.
    seed : int or None
        ``--seed``.
    quiet : bool
        ``--quiet``.
    on_bad_row : str or None
        ``--on-bad-row`` (``'error'`` or ``'skip'``); None for a command without it
        (``predict``: a bad row stops it with the reader's own error).
    model : str or None
        The saved model file the command reads (``MODEL_FILE``, ``prequential --model``).
    standardize : str
        ``--standardize``: ``'warmup'``, ``'pass'`` or ``'none'``.
    warmup_rows : int or None
        ``--warmup-rows``.
    clip : float or None
        ``--clip``.
    no_wait : bool
        ``--no-wait``.
    """

    command: Optional[str] = None
    data: Optional[str] = None
    format: str = "auto"
    label_column: Optional[str] = None
    delimiter: Optional[str] = None
    n_features: Optional[int] = None
    zero_based: Optional[str] = None
    header: str = "auto"
    comments: Optional[str] = "#"
    chunk_size: Optional[int] = None
    n: Optional[int] = None
    gen_param: Tuple[str, ...] = ()
    seed: Optional[int] = None
    quiet: bool = False
    on_bad_row: Optional[str] = None
    model: Optional[str] = None
    standardize: str = "none"
    warmup_rows: Optional[int] = None
    clip: Optional[float] = None
    no_wait: bool = False

    @classmethod
    def from_args(cls, args):
        """The options of argparse's namespace ``args``; a default for each one the
        command has not got.

        Parameters
        ----------
        args : argparse.Namespace
            The parsed command line.

        Returns
        -------
        Options
        """
        given = vars(args)
        values = {}
        for name, field in cls.__dataclass_fields__.items():
            if given.get(name) is not None:
                values[name] = given[name]
            elif name in given and name in ("comments", "label_column"):
                values[name] = None       # an explicit 'none'
        values["gen_param"] = tuple(given.get("gen_param") or ())
        return cls(**values)


@dataclass(frozen=True)
class LearnerOptions:
    """The learner options of ``train`` and ``prequential``, as given (parsed when the
    learner is made, after the data's first chunk is read, so that the order of the errors
    a command reports does not depend on this object).

    Attributes
    ----------
    learner : str
        The ``MODEL`` argument (``'tvm'``, ``'idsvm'`` ...).
    flags : tuple of (str, object)
        The :data:`COMMON_FLAGS` given (``--budget 50`` is ``('budget', 50)``).
    param : tuple of str
        ``--param K=V`` items.
    class_weight, classes : str or None
        ``--class-weight`` and ``--classes`` as given.
    multiclass : bool
        ``--multiclass``.
    total_budget : int or None
        ``--total-budget``.
    """

    learner: str
    flags: Tuple[Tuple[str, Union[int, float, str]], ...] = ()
    param: Tuple[str, ...] = ()
    class_weight: Optional[str] = None
    classes: Optional[str] = None
    multiclass: bool = False
    total_budget: Optional[int] = None

    @classmethod
    def from_args(cls, args):
        """The learner options of argparse's namespace ``args``.

        Parameters
        ----------
        args : argparse.Namespace
            The parsed command line of ``train`` or ``prequential``.

        Returns
        -------
        LearnerOptions
        """
        flags = tuple((f, getattr(args, f)) for f in COMMON_FLAGS
                      if getattr(args, f, None) is not None)
        return cls(learner=args.learner, flags=flags, param=tuple(args.param or ()),
                   class_weight=args.class_weight, classes=args.classes,
                   multiclass=bool(args.multiclass), total_budget=args.total_budget)
