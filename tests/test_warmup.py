"""``fastbudget.warmup``: its tasks, shared out among processes (``jobs``)."""
import pytest

from fastbudget import _warmup as W
from fastbudget._registry import LEARNERS


def test_every_task_is_run_by_exactly_one_process():
    tasks = W._tasks()
    assert {f"learner:{n}" for n in LEARNERS} <= set(tasks)
    assert {"engine", "tvm_repair"} <= set(tasks)
    for jobs in (1, 2, 3, 7, len(tasks), len(tasks) + 5):
        groups = W._share(tasks, jobs)
        # (a task that reuses another's code goes with it: no group of its own)
        assert len(groups) == min(jobs, len(tasks) - len(W._WITH))
        assert all(groups)
        assert sorted(t for g in groups for t in g) == sorted(tasks)


def test_a_task_that_reuses_another_runs_in_its_process(monkeypatch):
    """``tvm_repair`` fits a TVM, the engine task runs Span's ``engine_step``: each goes
    where the task whose code it reuses went, whatever the costs (elsewhere it would
    compile that code a second time)."""
    assert W._WITH == {"tvm_repair": "learner:tvm", "engine": "learner:span"}
    for task, lead in W._WITH.items():
        for cost in (0.5, 5.0, 100.0):
            monkeypatch.setitem(W._COST, task, min(cost, W._COST[lead]))
            for jobs in (2, 3, 5):
                groups = W._share(W._tasks(), jobs)
                assert [g for g in groups if task in g] == [g for g in groups if lead in g]


def test_two_processes_share_the_work_evenly_by_the_recorded_costs():
    groups = W._share(W._tasks(), 2)
    loads = sorted(sum(W._COST[t] for t in g) for g in groups)
    assert loads[1] - loads[0] <= max(W._COST.values()) / 2


def test_bad_jobs_are_refused():
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        W.warmup(jobs=-2)


def test_parallel_warmup_lists_every_variant_and_a_failed_process_raises(capsys, monkeypatch):
    # the cache is warm here (the suite has compiled every learner, or this fills it)
    W.warmup(jobs=2, verbose=True)
    out = capsys.readouterr().out
    assert "TVMClassifier(kernel='poly', merge='feature')" in out
    assert "SVIncrementalClassifier()" in out and "SpanBudgetClassifier(" in out
    monkeypatch.setattr(W, "_tasks", lambda: ["learner:bsgd", "no-such-task"])
    with pytest.raises(RuntimeError, match="unknown warm-up task 'no-such-task'"):
        W.warmup(jobs=2)
