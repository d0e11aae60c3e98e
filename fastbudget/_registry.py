"""The one list of fastbudget's learners: name -> (module, class, summary).

Everything that needs to know which learners exist reads it: the package's lazy
``__init__`` (``fastbudget.TVMClassifier``), persistence (the modules ``fastbudget.load``
may import to find a class), ``fastbudget.warmup()`` and the test suite, and the command
line (:func:`cli_learners`). A learner module is imported only when one of its names is
used, so this module imports nothing.

Each learner class carries its own small parameter sets (in river's ``_unit_test_params``
style): ``_unit_test_params()`` for the shared checks of the test suite and
``_warmup_params()`` for ``fastbudget.warmup()``; :func:`learner_class` gives the class.
"""
import importlib
from collections import namedtuple

#: A registered class: its module, its class name and a one-line summary.
Entry = namedtuple("Entry", "module cls summary")

#: The learners, by the name the command line uses (``fastbudget train --learner NAME``), in
#: the order they are listed and warmed up.
LEARNERS = {
    "tvm": Entry("fastbudget.estimators.tvm", "TVMClassifier",
                 "Twin Vector Machine: an exact SVM on at most budget weighted twin vectors"),
    "idsvm": Entry("fastbudget.estimators.idsvm", "IncrementalSVC",
                   "the exact incremental / decremental SVM (Cauwenberghs & Poggio)"),
    "streamsvm": Entry("fastbudget.estimators.streamsvm", "StreamSVMClassifier",
                       "one-pass minimum-enclosing-ball SVMs (StreamSVM)"),
    "random": Entry("fastbudget.estimators.baselines", "RandomBudgetClassifier",
                    "an exact SVM on a uniform random sample of budget examples"),
    "forgetron": Entry("fastbudget.estimators.baselines", "ForgetronClassifier",
                       "the self-tuned Forgetron: a kernel perceptron on a budget of B vectors"),
    "perceptron": Entry("fastbudget.estimators.baselines", "PerceptronClassifier",
                        "the perceptron, linear or kernel, with an optional budget"),
    "pegasos": Entry("fastbudget.estimators.baselines", "PegasosClassifier",
                     "Pegasos: a linear SVM in one pass of sub-gradient steps"),
    "bsgd": Entry("fastbudget.estimators.baselines", "BSGDClassifier",
                  "budgeted stochastic gradient descent (kernel Pegasos on a budget)"),
    "span": Entry("fastbudget.estimators.span", "SpanBudgetClassifier",
                  "an exact SVM on a budget of support vectors, replaced by the S-span"),
    "svincremental": Entry("fastbudget.estimators.rueping", "SVIncrementalClassifier",
                           "batch-incremental SVM on each batch and the previous support vectors"),
}

#: Classes that wrap a learner (not built by name at the command line).
WRAPPERS = {
    "ovr": Entry("fastbudget.multiclass", "OneVsRestClassifier",
                 "one-vs-rest: a binary learner made multi-class"),
    "river": Entry("fastbudget.river_adapter", "RiverClassifier",
                   "a fastbudget classifier with river's learn_one / predict_one"),
}


def learner_class(name):
    """The class registered as ``name`` (a key of ``LEARNERS`` or ``WRAPPERS``), imported.

    Parameters
    ----------
    name : str

    Returns
    -------
    type

    Raises
    ------
    KeyError
        For a name that is not registered.
    """
    entry = LEARNERS[name] if name in LEARNERS else WRAPPERS[name]
    return getattr(importlib.import_module(entry.module), entry.cls)


def cli_learners():
    """The learners the command line builds by name.

    Returns
    -------
    dict
        Name -> class name in ``fastbudget`` (``{'tvm': 'TVMClassifier', ...}``), in the
        order of ``LEARNERS``: the mapping ``fastbudget.cli.LEARNERS`` held.
    """
    return {name: entry.cls for name, entry in LEARNERS.items()}


def lazy_names():
    """The classes the package ``fastbudget`` exports, for its lazy ``__init__``.

    Returns
    -------
    dict
        Class name -> (module relative to ``fastbudget``, class name).
    """
    return {e.cls: (e.module[len("fastbudget"):], e.cls)
            for e in (*LEARNERS.values(), *WRAPPERS.values())}


def estimator_modules():
    """The modules that define fastbudget's saveable estimators, for ``fastbudget.load``.

    Returns
    -------
    tuple of str
        Each module of ``LEARNERS`` once, in order, then the multi-class wrapper's.
    """
    mods = [e.module for e in LEARNERS.values()] + [WRAPPERS["ovr"].module]
    return tuple(dict.fromkeys(mods))
