"""One registry of learners (``fastbudget._registry``) is what the package, persistence,
warm-up and the test suite read: every public learner class is in it, and each of those
readers sees the same list."""
import importlib
import inspect
import pkgutil

import pytest

import fastbudget
import fastbudget.estimators
from _estimators import IDS
from fastbudget import _registry, persist
from fastbudget.base import BudgetClassifier


def _public_learner_classes():
    """Every public BudgetClassifier subclass defined in a module of fastbudget.estimators."""
    out = set()
    for info in pkgutil.iter_modules(fastbudget.estimators.__path__):
        mod = importlib.import_module(f"fastbudget.estimators.{info.name}")
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, BudgetClassifier)
                    and obj.__module__ == mod.__name__ and not name.startswith("_")):
                out.add((mod.__name__, name))
    return out


def test_every_public_learner_class_is_registered_under_its_module():
    registered = {(e.module, e.cls) for e in _registry.LEARNERS.values()}
    assert registered == _public_learner_classes()


@pytest.mark.parametrize("name", [*_registry.LEARNERS, *_registry.WRAPPERS])
def test_the_package_exports_each_registered_class(name):
    cls = _registry.learner_class(name)
    assert getattr(fastbudget, cls.__name__) is cls
    assert cls.__name__ in fastbudget.__all__
    entry = _registry.LEARNERS.get(name) or _registry.WRAPPERS[name]
    assert entry.summary and entry.summary == entry.summary.strip()


def test_persistence_imports_the_module_of_every_learner():
    for entry in _registry.LEARNERS.values():
        assert entry.module in persist._ESTIMATOR_MODULES
    assert _registry.WRAPPERS["ovr"].module in persist._ESTIMATOR_MODULES


def test_cli_learners_map_each_name_to_its_class_name():
    assert _registry.cli_learners() == {n: e.cls for n, e in _registry.LEARNERS.items()}
    for name, cls_name in _registry.cli_learners().items():
        assert getattr(fastbudget, cls_name) is _registry.learner_class(name)
    with pytest.raises(KeyError):
        _registry.learner_class("no_such_learner")


@pytest.mark.parametrize("name", list(_registry.LEARNERS))
def test_each_learner_carries_valid_test_and_warmup_parameters(name):
    cls = _registry.learner_class(name)
    unit = cls._unit_test_params()
    warm = cls._warmup_params()
    assert unit and warm
    valid = set(cls._get_param_names())
    for params in [*unit.values(), *warm]:
        assert set(params) <= valid, (name, set(params) - valid)
        est = cls(**params)                     # a set the learner accepts
        est._validate_common_params()
        est._validate_params()
    # the shared checks run every unit-test set of every learner, under its id
    assert set(unit) <= set(IDS)
