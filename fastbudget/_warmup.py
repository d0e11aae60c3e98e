"""``fastbudget.warmup()``: compile every compiled path once, on tiny inputs.

Numba compiles a function the first time it runs and caches the machine code on disk
(``cache=True``), so the first call in a fresh install pays the compile time and later
processes load it from the cache. Call ``warmup()`` once after installing (the ``fastbudget
warmup`` command does the same) to move that cost out of the first real fit. A wheel that
carries portable machine code (``fastbudget._portable``) needs no compile on first use, and
``warmup()`` there only loads it; ``warmup(native=True)`` (``fastbudget warmup --native``)
compiles for this machine's CPU instead, which can be faster than the portable code on
some CPUs (``docs/results/cold_start.md``).

The work is a list of tasks (one per learner, the engine's shared functions, and the
engine's and TVM's last resorts). Numba compiles in one thread, so ``jobs > 1`` runs the
tasks in that many fresh Python processes at once, sharing the on-disk cache: each process,
when free, takes the next task in order of urgency whose prerequisites (``_AFTER``) have
ended. A function that two tasks call is compiled by the one both wait for and loaded from
the cache by the others, never compiled twice by two tasks running at once (Numba writes a
function to the cache only when its compile ends). On 2 cores about 57 CPU seconds in each
process instead of 110-150 s of compiling in one (``docs/results/cold_start.md``).
"""
import os
import subprocess
import sys
import time
import warnings

import numpy as np

#: rough CPU seconds each task adds to the process that runs it, on an empty cache, with
#: the tasks it starts after (``_AFTER``) in the cache (``perf/cold_start.py --split 2``,
#: 2026-11-26, scaled down by a tenth from a loaded machine). Used only to order the tasks
#: (:func:`_order`)
_COST = {"core": 16.0, "learner:tvm": 21.5, "learner:span": 20.5, "learner:streamsvm": 19.5,
         "learner:svincremental": 8.5, "learner:random": 5.5, "learner:idsvm": 0.5,
         "learner:bsgd": 4.0, "learner:forgetron": 0.8, "learner:perceptron": 0.6,
         "learner:pegasos": 1.0, "engine": 12.0, "tvm_repair": 3.5, "io": 6.0}

#: the tasks each task starts after (in whichever process they ran): each compiles code the
#: task calls too, and writes it to the on-disk cache when it ends, from where the task
#: loads it instead of compiling it again. Two tasks that run at once and call a function
#: that neither finds in the cache both compile it (Numba writes a function to the cache
#: only when its compile ends), so no two tasks that would compile the same function run at
#: once: one starts after the other, or both after a task that compiles it. ``core``
#: compiles the engine's functions under every exact learner's stream; ``learner:span``
#: ``ops.engine_step`` (the engine's operations, which Random's engine and the engine task
#: run); ``learner:random`` the engine's ``add_batch`` (IncrementalSVC's fit);
#: ``learner:tvm`` TVM's stream (which ``tvm_repair`` fits)
_AFTER = {"learner:tvm": ("core",), "learner:span": ("core",),
          "learner:svincremental": ("core",), "learner:random": ("learner:span",),
          "learner:idsvm": ("learner:random",), "engine": ("learner:span",),
          "tvm_repair": ("learner:tvm",)}


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
            # the parameters that select compiled code (kernel, merge, lookahead, ...; no
            # budget: the perceptron's primal form)
            p = {k: v for k, v in est.get_params().items()
                 if (k in ("kernel", "merge", "lookahead", "n_balls", "policy", "method")
                     and v != cls().get_params()[k]) or (k == "budget" and v is None)}
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


def _warm_io():
    """The LIBSVM and CSV readers (``kernels.readers``; numbers the fast parser hands to the
    exact one included) and the calibration map's recency factors and chunk sums, its fit
    and its evaluation (``kernels.calibration``, which a learner's map calls on every chunk
    it scores and every ``predict_proba``), and the drift detector of ``forgetting='auto'``
    with its test of a younger model (``kernels.drift``)."""
    import tempfile

    from .calibration import CalibrationMap, update_stats
    from .datasets import collect, read_csv, read_libsvm
    from .kernels import drift as kd

    det = kd.alloc_drift(8)
    kd.drift_update(det.err, det.ist, det.fs, det.par, np.zeros(3, dtype=np.uint8))
    kd.challenge_due(det.err, det.ist, det.fs, 0)
    kd.challenge(det.err, det.ist, det.par, np.zeros(2, dtype=np.uint8))
    kd.restart(det.err, det.ist, det.fs)

    stats = update_stats(None, np.array([0.5, -1.0, 0.0]), np.array([1.0, -1.0, 1.0]),
                         np.array([1.0, 0.0, 2.0]))
    CalibrationMap(stats)(np.array([0.25, -3.0]))
    with tempfile.TemporaryDirectory(prefix="fastbudget-warmup-") as d:
        svm, csv = os.path.join(d, "a.svm"), os.path.join(d, "a.csv")
        with open(svm, "w") as f:
            f.write("+1 1:0.5 3:-2.25e-3 # a comment\n-1 qid:2 2:1.00000000000000000001 "
                    "3:7\n\n1 1:.5E+1\n")
        with open(csv, "w") as f:
            f.write("x1,x2,y\n0.5,-2.25e-3,1\n1.00000000000000000001,7,-1\n")
        collect(read_libsvm(svm))
        collect(read_csv(csv))


def _warm_tvm_repair():
    """TVM's repair (``ops.tvm_repair``: the repair, then the twins brought up to date)."""
    from .kernels import ops

    tvm = _fitted("tvm")
    ops.tvm_repair(tvm.engine_state_, tvm.twins_)


def _warm_core():
    """The engine's functions under every exact learner's stream, compiled on their own
    (not run) for the one signature their callers type: the adiabatic path (``run_path``
    with the inverse-Jacobian updates it calls), the refreshes, the drift check and KT
    certificates, the repair and the rebuild of R. The tasks that run after this one
    (``_AFTER``) load them from the on-disk cache instead of compiling them again."""
    from numba import typeof, types

    from .engine import IncrementalEngine
    from .kernels import adiabatic as ad

    st = typeof(IncrementalEngine(4, 2, C=1.0, gamma=1.0).st)
    ad.run_path.compile((st, types.int64, types.int64))
    for fn in (ad.refresh, ad.refresh_margin, ad.kkt_residual, ad.kkt_exact,
               ad._kt_tolerance, ad.repair, ad.rebuild):
        fn.compile((st,))
    ad.check_drift.compile((st, types.boolean))


def _tasks():
    """Every warm-up task, in the order a single process runs them."""
    from ._registry import LEARNERS

    return (["core"] + [f"learner:{name}" for name in LEARNERS]
            + ["engine", "tvm_repair", "io"])


def _run_tasks(tasks, verbose=False):
    """Run warm-up tasks (names from :func:`_tasks`) in this process."""
    for task in tasks:
        if task.startswith("learner:"):
            _warm_learner(task.split(":", 1)[1], verbose)
        elif task == "core":
            _warm_core()
        elif task == "engine":
            _warm_engine()
        elif task == "tvm_repair":
            _warm_tvm_repair()
        elif task == "io":
            _warm_io()
        else:
            raise ValueError(f"unknown warm-up task {task!r}")


def _order(tasks):
    """The tasks, most urgent first: by the recorded seconds of the longest chain of tasks
    that starts with each (a task, then one that starts after it, ...), so that a task
    others wait for starts early (``core`` first)."""
    chain = {}

    def length(t):
        if t not in chain:
            chain[t] = _COST.get(t, 1.0) + max(
                (length(u) for u in tasks if t in _AFTER.get(u, ())), default=0.0)
        return chain[t]

    return sorted(tasks, key=lambda t: (-length(t), tasks.index(t)))


def _next(order, started, done):
    """The first task of ``order`` not started whose ``_AFTER`` tasks are done (or not
    warm-up tasks of this run); ``None`` if none can start now."""
    for t in order:
        if t not in started and all(a in done or a not in order for a in _AFTER.get(t, ())):
            return t
    return None


def _plan(tasks, jobs):
    """What :func:`warmup` does with ``jobs`` processes if every task takes its ``_COST``:
    a list of (process, task, start, end) in order of start. Each process, when free,
    takes the next task that can start (:func:`_next`), and waits while none can."""
    order = _order(tasks)
    free = [0.0] * max(1, min(int(jobs), len(tasks)))
    started, done, ends, plan = set(), set(), [], []
    while len(started) < len(tasks):
        k = free.index(min(free))
        now = free[k]
        done |= {t for t, e in ends if e <= now}
        t = _next(order, started, done)
        if t is None:   # wait for the next task to end
            free[k] = min(e for t2, e in ends if t2 not in done)
            continue
        started.add(t)
        ends.append((t, now + _COST.get(t, 1.0)))
        plan.append((k, t, now, ends[-1][1]))
        free[k] = ends[-1][1]
    return plan


#: the line a warm-up process writes when a task is done (then the task and a report)
_DONE = "@@fastbudget-warmup-done "


def _serve(record=False):
    """A warm-up process (``jobs > 1``): runs the tasks named on its standard input, one a
    line, and after each writes ``_DONE``, the task and a JSON report (its CPU seconds;
    with ``record``, the compiled functions that Numba compiled for it rather than loaded
    from the cache) on its standard output. Ends at the end of its input."""
    import json
    import resource

    compiled = []
    if record:
        from numba.core import event

        class _Compiled(event.Listener):
            def on_start(self, ev):
                d = ev.data["dispatcher"]
                compiled.append(f"{d.py_func.__module__}.{d.py_func.__qualname__}")

            def on_end(self, ev):
                pass

        event.register("numba:compile", _Compiled())
    for line in sys.stdin:
        task, verbose = line.split()
        del compiled[:]
        t = time.process_time()
        _run_tasks([task], verbose == "1")
        ru = resource.getrusage(resource.RUSAGE_SELF)
        report = {"cpu": time.process_time() - t, "process_cpu": ru.ru_utime + ru.ru_stime,
                  "compiled": sorted(compiled)}
        print(_DONE + task + " " + json.dumps(report), flush=True)


def _run_parallel(tasks, jobs, verbose=False, record=False):
    """Run ``tasks`` in ``jobs`` fresh processes (:func:`_serve`), each taking the next
    task that can start (:func:`_next`) when it is free. Returns a list of (process, task,
    report) in order of ending."""
    import json
    import tempfile
    import threading

    order = _order(tasks)
    started, done, log, failed = set(), set(), [], []
    cond = threading.Condition()
    n = max(1, min(int(jobs), len(tasks)))
    errs = [tempfile.TemporaryFile(mode="w+") for _ in range(n)]
    code = f"from fastbudget._warmup import _serve; _serve(record={bool(record)!r})"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=errs[k], text=True, bufsize=1)
             for k in range(n)]

    def drive(k, p):
        while True:
            with cond:
                while True:
                    t = None if failed else _next(order, started, done)
                    if t is not None or failed or len(started) == len(tasks):
                        break
                    cond.wait()
                if t is None:
                    break
                started.add(t)
            report = None
            try:
                p.stdin.write(f"{t} {int(bool(verbose))}\n")
                p.stdin.flush()
                for line in p.stdout:
                    if line.startswith(_DONE):
                        report = json.loads(line[len(_DONE):].split(" ", 1)[1])
                        break
                    if verbose:
                        print(line, end="", flush=True)
            except OSError:   # (its input closed: the process died)
                pass
            with cond:
                if report is None:   # the process ended (its error is in its error output)
                    failed.append(k)
                else:
                    done.add(t)
                    log.append((k, t, report))
                cond.notify_all()
            if report is None:
                return

    threads = [threading.Thread(target=drive, args=(k, p), daemon=True)
               for k, p in enumerate(procs)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    messages = []
    for p, err in zip(procs, errs):
        try:
            p.stdin.close()
        except OSError:   # (the process died)
            pass
        p.stdout.read()
        p.wait()
        err.seek(0)
        if p.returncode != 0:
            messages.append(f"exit status {p.returncode}:\n{err.read().strip()[-2000:]}")
        err.close()
    if messages or failed:
        raise RuntimeError("a warm-up process failed (the cache keeps what it compiled; "
                           "run fastbudget.warmup(jobs=1) to see the error in this process):\n"
                           + "\n".join(messages))
    return log


def warmup(verbose=False, jobs=1, native=False):
    """Run every learner on a tiny problem so that all compiled functions are built.

    Parameters
    ----------
    verbose : bool, default=False
        Print each compiled variant and its seconds.
    jobs : int, default=1
        Processes compiling at once (Numba compiles in one thread): ``jobs > 1`` starts that
        many fresh Python processes, which fill the same on-disk cache; ``None`` or 0 uses
        every core.
    native : bool, default=False
        Compile for this machine's CPU even where the package carries portable machine code
        (a wheel built with ``FASTBUDGET_PORTABLE_BUILD=1``), which is then not loaded: that
        code is found first from then on. Without it, what the package carries is loaded
        (seconds) and only the rest is compiled.

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
    # native: compile for this CPU; code shipped for a portable x86-64 level
    # (kernels/_jit.py) is not loaded meanwhile, here or in the processes started here
    before = os.environ.get("FASTBUDGET_PORTABLE")
    if native:
        os.environ["FASTBUDGET_PORTABLE"] = "0"
    try:
        if jobs == 1:
            _run_tasks(tasks, verbose)
        else:
            _run_parallel(tasks, jobs, verbose)
    finally:
        if before is None:
            os.environ.pop("FASTBUDGET_PORTABLE", None)
        else:
            os.environ["FASTBUDGET_PORTABLE"] = before
    return time.perf_counter() - t0
