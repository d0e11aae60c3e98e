"""``fastbudget.warmup()``: compile every compiled path once, on tiny inputs.

Numba compiles a function the first time it runs and caches the machine code on disk
(``cache=True``), so the first call in a fresh install pays the compile time and later
processes load it from the cache. Call ``warmup()`` once after installing (the ``fastbudget
warmup`` command does the same) to move that cost out of the first real fit.

The work is a list of tasks (one per learner, and the engine's and TVM's last
resorts). Numba compiles in one thread, so ``jobs > 1`` runs the tasks in that many fresh
Python processes at once, sharing the on-disk cache, the longest tasks first: on 2 cores
about 65 s instead of 110-150 s of compiling (``docs/results/cold_start.md``).
"""
import os
import subprocess
import sys
import time
import warnings

import numpy as np

#: rough CPU seconds of each task's compile on an empty cache, in the process it is dealt to
#: (a task that follows another there compiles less: the engine's functions once per
#: process), from ``perf/cold_start.py`` and warm-up tasks timed alone and in their
#: groups, 2026-11-26 (alone: TVM 32, Span 34, the engine 32, IncrementalSVC 19, Random 18,
#: SV-incremental 18, StreamSVM's five variants 17.5, BSGD 4). Used only to share the
#: tasks out among the processes of ``warmup(jobs=...)``
_COST = {"learner:tvm": 32.0, "learner:span": 30.0, "learner:streamsvm": 17.5,
         "learner:svincremental": 8.0, "learner:random": 6.0, "learner:idsvm": 3.0,
         "learner:bsgd": 4.0, "learner:forgetron": 1.5, "learner:perceptron": 1.5,
         "learner:pegasos": 1.5, "engine": 12.0, "tvm_repair": 3.5}

#: tasks that run another task's compiled code, dealt to the process of that task, which
#: has compiled it already, instead of compiling it again: ``tvm_repair`` fits a TVM; the
#: engine's single operations are Span's ``ops.engine_step``
_WITH = {"tvm_repair": "learner:tvm", "engine": "learner:span"}


def _data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    return X, np.where(X[:, 0] * X[:, 1] > 0, 1, -1)


def _warm_learner(name, verbose):
    """Every compiled variant of one learner of the registry (``_warmup_params``: the
    parameter sets that select compiled code, on tiny budgets)."""
    from ._registry import learner_class
    from .estimators.tvm import TVMClassifier

    X, y = _data()
    cls = learner_class(name)
    for params in cls._warmup_params():
        est = cls(**params)
        t = time.perf_counter()
        with warnings.catch_warnings():
            # tiny budgets on 40 points (a TVM that stops learning by rejection, ...): what
            # these fits say is not about the caller's models
            warnings.simplefilter("ignore")
            est.fit(X, y)
            est.decision_function(X)
            if isinstance(est, TVMClassifier):
                est.learn_one(X[0], y[0])   # its one-row test (kernels.tvm.tvm_count_one)
        if verbose:
            # the parameters that select compiled code (kernel, merge, lookahead, ...)
            p = {k: v for k, v in est.get_params().items()
                 if k in ("kernel", "merge", "lookahead", "n_balls", "policy", "method")
                 and v != cls().get_params()[k]}
            what = f"{cls.__name__}({', '.join(f'{k}={v!r}' for k, v in p.items())})"
            print(f"{what:<48s} {time.perf_counter() - t:7.2f} s", flush=True)


def _fitted(name):
    """The first warm-up variant of a learner, fitted on the tiny data."""
    from ._registry import learner_class

    X, y = _data()
    cls = learner_class(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(**cls._warmup_params()[0]).fit(X, y)


def _warm_engine():
    """The engine's single operations, and the last resorts of a failed update, which
    would otherwise compile in the middle of the stream that needs them: the repair of a
    failed KT certificate (``repair``; it returns at once here, where the certificate
    holds), R rebuilt from scratch, the examples relearned from an empty model."""
    from .engine import IncrementalEngine, relearn_state
    from .kernels import adiabatic as ad

    X, y = _data()
    eng = IncrementalEngine(16, 2, C=1.0, gamma=1.0)
    slots = [eng.add(X[i], 1.0 if y[i] > 0 else -1.0) for i in range(12)]
    eng.reweight(slots[0], 2.0)
    eng.set_C(2.0)
    eng.loo(slots[1])
    eng.remove(slots[2])
    eng.kkt_residual()
    ad.repair(eng.st)
    ad.rebuild(eng.st)
    live = np.flatnonzero(eng.st.status != ad.FREE)
    relearn_state(eng.st, eng.snapshot(), live, eng.st.wt[live], eng.st.fs[ad.F_MU])


def _warm_tvm_repair():
    """TVM's repair (``ops.tvm_repair``: the repair, then the twins brought up to date)."""
    from .kernels import ops

    tvm = _fitted("tvm")
    ops.tvm_repair(tvm.engine_state_, tvm.twins_)


def _tasks():
    """Every warm-up task, in the order a single process runs them."""
    from ._registry import LEARNERS

    return [f"learner:{name}" for name in LEARNERS] + ["engine", "tvm_repair"]


def _run_tasks(tasks, verbose=False):
    """Run warm-up tasks (names from :func:`_tasks`) in this process."""
    for task in tasks:
        if task.startswith("learner:"):
            _warm_learner(task.split(":", 1)[1], verbose)
        elif task == "engine":
            _warm_engine()
        elif task == "tvm_repair":
            _warm_tvm_repair()
        else:
            raise ValueError(f"unknown warm-up task {task!r}")


def _share(tasks, jobs):
    """The tasks dealt to ``jobs`` processes, the longest first, each to the process with
    the least work so far, or to the process of the task it reuses (``_WITH``; dealt
    before it, being longer), so that it compiles nothing again (every task in exactly
    one group; no empty group)."""
    free = [t for t in tasks if _WITH.get(t) not in tasks]   # the tasks that lead a group
    groups = [[] for _ in range(max(1, min(int(jobs), len(free))))]
    load = [0.0] * len(groups)
    for task in sorted(tasks, key=lambda t: -_COST.get(t, 1.0)):
        k = load.index(min(load))
        for j, g in enumerate(groups):
            if _WITH.get(task) in g:
                k = j
        groups[k].append(task)
        load[k] += _COST.get(task, 1.0)
    return groups


def warmup(verbose=False, jobs=1):
    """Run every learner on a tiny problem so that all compiled functions are built.

    Parameters
    ----------
    verbose : bool, default=False
        Print each compiled variant and its seconds.
    jobs : int, default=1
        Processes compiling at once (Numba compiles in one thread): ``jobs > 1`` starts that
        many fresh Python processes, which fill the same on-disk cache; ``None`` or 0 uses
        every core.

    Returns
    -------
    float
        The seconds it took (large on the first call in a fresh install, small once the
        on-disk cache is filled).

    Raises
    ------
    RuntimeError
        A warm-up process failed (its error output is in the message).
    """
    t0 = time.perf_counter()
    jobs = (os.cpu_count() or 1) if not jobs else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1 (or None for every core); got {jobs}.")
    tasks = _tasks()
    if jobs == 1:
        _run_tasks(tasks, verbose)
        return time.perf_counter() - t0
    procs = []
    for group in _share(tasks, jobs):
        code = (f"from fastbudget._warmup import _run_tasks; "
                f"_run_tasks({group!r}, verbose={bool(verbose)!r})")
        procs.append(subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    failed = []
    for p in procs:
        out, err = p.communicate()
        if verbose and out:
            print(out, end="", flush=True)
        if p.returncode != 0:
            failed.append(f"exit status {p.returncode}:\n{err.strip()[-2000:]}")
    if failed:
        raise RuntimeError("a warm-up process failed (the cache keeps what it compiled; "
                           "run fastbudget.warmup(jobs=1) to see the error in this process):\n"
                           + "\n".join(failed))
    return time.perf_counter() - t0
