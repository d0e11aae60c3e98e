"""The Examples sections of the docstrings run as written (STYLE.md 8: estimators carry a
runnable Examples section).

``python -m pytest`` collects ``tests/`` only, so the examples would not run otherwise; two of
them had gone stale unnoticed (``IncrementalSVC``'s printed the estimator returned by
``unlearn``; ``SpanBudgetClassifier``'s settings scored 0.58, not > 0.7).
"""
import doctest
import importlib
import pkgutil

import pytest

import fastbudget


def _modules():
    names = []
    for info in pkgutil.walk_packages(fastbudget.__path__, "fastbudget."):
        if info.name.rsplit(".", 1)[-1] == "__main__":  # runs the command line on import
            continue
        names.append(info.name)
    return sorted(names)


def _with_examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    out = []
    for name in _modules():
        module = importlib.import_module(name)
        for test in finder.find(module, name):
            if test.examples and test.name.startswith(name):
                out.append(test.name)
    return out


MODULES = set(_modules())
EXAMPLES = _with_examples()


def test_examples_are_found():
    # the estimators' Examples sections at least (a rename must not silently drop them)
    for cls in ("TVMClassifier", "IncrementalSVC", "SpanBudgetClassifier",
                "SVIncrementalClassifier", "StreamSVMClassifier", "OneVsRestClassifier"):
        assert any(name.endswith("." + cls) for name in EXAMPLES), cls


@pytest.mark.parametrize("name", EXAMPLES)
def test_docstring_example(name):
    module_name = name
    while module_name not in MODULES:
        module_name = module_name.rsplit(".", 1)[0]
    module = importlib.import_module(module_name)
    tests = [t for t in doctest.DocTestFinder().find(module, module_name) if t.name == name]
    assert len(tests) == 1
    report = []
    result = doctest.DocTestRunner().run(tests[0], out=report.append)
    assert result.failed == 0, "".join(report)
