"""``fastbudget.warmup``: its tasks, shared out among processes (``jobs``)."""
import json
import os
import subprocess
import sys

import pytest

from fastbudget import _warmup as W
from fastbudget._registry import LEARNERS


def test_every_task_is_run_by_exactly_one_process_after_the_tasks_it_waits_for():
    tasks = W._tasks()
    assert {f"learner:{n}" for n in LEARNERS} <= set(tasks)
    assert {"core", "engine", "tvm_repair"} <= set(tasks)
    for jobs in (1, 2, 3, 7, len(tasks), len(tasks) + 5):
        plan = W._plan(tasks, jobs)
        assert sorted(t for _, t, _, _ in plan) == sorted(tasks)
        assert {k for k, _, _, _ in plan} <= set(range(min(jobs, len(tasks))))
        end = {t: e for _, t, _, e in plan}
        for k, t, start, _ in plan:
            # (a task shared with another starts when that one has written it to the cache)
            assert all(end[a] <= start for a in W._AFTER.get(t, ())), (t, plan)
        for k in range(min(jobs, len(tasks))):   # one task at a time in each process
            mine = sorted((s, e) for j, _, s, e in plan if j == k)
            assert all(e <= s2 for (_, e), (s2, _) in zip(mine, mine[1:]))


def test_the_waits_name_warmup_tasks_and_the_core_comes_first():
    tasks = W._tasks()
    for t, after in W._AFTER.items():
        assert t in tasks and set(after) <= set(tasks)
    assert W._order(tasks)[0] == "core"
    # a task that waits for no other task of the run may start at once
    assert W._next(["learner:tvm", "learner:bsgd"], set(), set()) == "learner:tvm"
    assert W._next(["core", "learner:tvm"], {"core"}, set()) is None
    assert W._next(["core", "learner:tvm"], {"core"}, {"core"}) == "learner:tvm"


def test_two_processes_share_the_work_evenly_by_the_recorded_costs():
    tasks = W._tasks()
    plan = W._plan(tasks, 2)
    busy = [sum(e - s for k, _, s, e in plan if k == j) for j in (0, 1)]
    makespan = max(e for _, _, _, e in plan)
    # no process idles long waiting for a task it needs, nor finishes long after the other
    assert makespan <= 1.05 * sum(W._COST[t] for t in tasks) / 2
    assert abs(busy[0] - busy[1]) <= max(W._COST.values()) / 2


def test_bad_jobs_are_refused():
    with pytest.raises(ValueError, match="jobs must be at least 1"):
        W.warmup(jobs=-2)


def test_parallel_warmup_lists_every_variant_and_a_failed_process_raises(capsys, monkeypatch):
    # the cache is warm here (the suite has compiled every learner, or this fills it)
    W.warmup(jobs=2, verbose=True)
    out = capsys.readouterr().out
    assert "TVMClassifier(kernel='poly', merge='feature')" in out
    assert "SVIncrementalClassifier()" in out and "SpanBudgetClassifier(" in out
    assert W._DONE not in out
    monkeypatch.setattr(W, "_tasks", lambda: ["learner:bsgd", "no-such-task"])
    with pytest.raises(RuntimeError, match="unknown warm-up task 'no-such-task'"):
        W.warmup(jobs=2)


_FIRST_USE = """
import json, warnings
import numpy as np
from numba.core import event
compiled = []

class L(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass

event.register("numba:compile", L())
from fastbudget import _warmup as W
from fastbudget._registry import LEARNERS, learner_class
rng = np.random.default_rng(1)
X = rng.normal(size=(200, 3))
y = np.where(X[:, 0] + X[:, 1] ** 2 > 0.5, 1, -1)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name in LEARNERS:   # each learner's defaults, on other data than the warm-up's
        est = learner_class(name)()
        if name == "tvm":
            est.set_params(budget=20)
        est.fit(X, y).decision_function(X)
    W._run_tasks(W._tasks())   # and every variant the warm-up compiled
print(json.dumps(compiled))
"""


@pytest.mark.slow
def test_parallel_warmup_on_an_empty_cache_compiles_each_function_once(tmp_path):
    """Two processes fill an empty cache; no compiled function of the library is compiled
    in both (the tasks that share one wait for the task that compiles it), and then a fresh
    process fits every learner without compiling anything."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    code = ("import json; from fastbudget import _warmup as W; "
            "print(json.dumps(W._run_parallel(W._tasks(), 2, record=True)))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    log = json.loads(r.stdout.strip().splitlines()[-1])
    assert sorted(t for _, t, _ in log) == sorted(W._tasks())
    where = {}
    for k, t, rep in log:
        for f in rep["compiled"]:
            if f.startswith("fastbudget."):
                where.setdefault(f, []).append((k, t))
    assert len(where) > 40
    assert {f: w for f, w in where.items() if len(w) > 1} == {}
    r = subprocess.run([sys.executable, "-c", _FIRST_USE], capture_output=True, text=True,
                       env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("native", [False, True])
def test_native_turns_the_portable_code_off_while_it_runs(monkeypatch, native):
    """``native=True`` compiles for this CPU: the portable lookup is off in this process
    (and in the processes it starts, which inherit the environment) while the tasks run,
    and the caller's setting is back afterwards."""
    seen = []
    monkeypatch.setattr(W, "_run_tasks", lambda tasks, verbose=False: seen.append(
        os.environ.get("FASTBUDGET_PORTABLE")))
    monkeypatch.setenv("FASTBUDGET_PORTABLE", "1")
    W.warmup(jobs=1, native=native)
    assert seen == (["0"] if native else ["1"])
    assert os.environ["FASTBUDGET_PORTABLE"] == "1"
    monkeypatch.delenv("FASTBUDGET_PORTABLE")
    W.warmup(jobs=1, native=native)
    assert seen[-1] == ("0" if native else None)
    assert "FASTBUDGET_PORTABLE" not in os.environ
