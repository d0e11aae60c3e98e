"""Cold start: each learner's import and first fit in a fresh process on an empty Numba cache.

Every learner runs in its own subprocess with ``NUMBA_CACHE_DIR`` pointing at a new empty
temporary directory, so nothing is loaded from a cache (and the source tree's cache is never
read or written). The child times ``import fastbudget`` and the first ``fit`` (``partial_fit``
for TVM) on a tiny stream, wall and CPU seconds (CPU seconds are the figure to quote on a shared
machine), and reports its peak RSS and how many signatures it compiled (missed in the cache);
``warmup`` runs ``fastbudget.warmup()`` instead. ``--portable TREE`` runs each child on a
fresh copy of a package built with ``python -m fastbudget._portable build`` (as a wheel built
with ``FASTBUDGET_PORTABLE_BUILD=1`` installs it) instead of an empty cache.

``--profile`` also reports, per compiled function of ``fastbudget.kernels.*``, how many
signatures it was compiled for and the seconds spent compiling it (CPU seconds between
Numba's ``numba:compile`` events, minus the compiles of callees nested inside; this
includes the LLVM optimisation of its module, into which every callee's code is linked) and
the wall seconds under Numba's LLVM lock (``metadata['timers']['llvm_lock']``, callees
included); ``NUMBA_LLVM_PASS_TIMINGS=1`` in the environment
adds the LLVM pass breakdown of the top functions. ``--phases`` splits the compile time
by phase: Numba's front end (inlining, type inference, lowering) and LLVM's (function
passes, module passes over the module with its linked callees, machine code).

Usage::

    python perf/cold_start.py                       # every learner, markdown table
    python perf/cold_start.py --learners TVM BSGD --profile --top 15
    python perf/cold_start.py --learners TVM --phases   # front end vs LLVM
    python perf/cold_start.py --json out.json        # also the raw figures
    python perf/cold_start.py --split 2              # warmup(jobs=2): CPU s per process
    python perf/cold_start.py --portable TREE        # first fits from portable machine code

``--split JOBS`` runs ``fastbudget.warmup(jobs=JOBS)``'s processes on an empty cache, as
``warmup`` runs them, and reports each process's CPU seconds (on a quiet machine with at
least JOBS cores, the wall time of ``fastbudget warmup`` is about the largest of them), each
task's, and every compiled function of the library that was compiled in more than one
process (compiled twice: the tasks that need it should wait for one that compiles it,
``_AFTER`` in ``fastbudget/_warmup.py``).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

LEARNERS = {
    # name: (constructor expression, call) -- the call is "fit" or "partial_fit"
    "TVM": ("TVMClassifier(budget=100, random_state=0)", "partial_fit"),
    "IncrementalSVC": ("IncrementalSVC()", "fit"),
    "StreamSVM": ("StreamSVMClassifier()", "fit"),
    "Span": ("SpanBudgetClassifier()", "fit"),
    "SVIncremental": ("SVIncrementalClassifier()", "fit"),
    "Random": ("RandomBudgetClassifier(random_state=0)", "fit"),
    "Forgetron": ("ForgetronClassifier(random_state=0)", "fit"),
    "Perceptron": ("PerceptronClassifier(budget=50)", "fit"),
    "Pegasos": ("PegasosClassifier(random_state=0)", "fit"),
    "BSGD": ("BSGDClassifier(random_state=0)", "fit"),
    "warmup": (None, "warmup"),
}

CHILD = r'''
import json, resource, sys, time
t_wall, t_cpu = time.perf_counter(), time.process_time()
profile = {profile!r}
events = []
if profile:
    from numba.core import event as nev

    class _Listener(nev.Listener):
        def on_start(self, ev):
            events.append(("start", time.process_time(), ev.data))

        def on_end(self, ev):
            events.append(("end", time.process_time(), ev.data))

    nev.register("numba:compile", _Listener())
phase_s = {{}}
if {phases!r}:
    # exclusive CPU seconds of each compiler phase: a stack of the hooked calls below, each
    # charged its time minus that of the hooked calls nested in it (a callee's compile
    # runs inside its caller's type inference)
    import collections
    import numba.core.codegen as _cg
    import numba.core.compiler as _cc
    import numba.core.typed_passes as _tp
    import numba.core.untyped_passes as _up
    phase_s = collections.defaultdict(float)
    _stack = []

    def _hook(owner, meth, label):
        f = getattr(owner, meth)

        def timed(*a, **k):
            t0 = time.process_time()
            _stack.append([label, 0.0])
            try:
                return f(*a, **k)
            finally:
                lab, nested = _stack.pop()
                tot = time.process_time() - t0
                phase_s[lab] += tot - nested
                if _stack:
                    _stack[-1][1] += tot
        setattr(owner, meth, timed)

    for owner, meth, label in (
            (_cc.CompilerBase, "_compile_core", "numba: other passes"),
            (_up.InlineInlinables, "run_pass", "numba: inline='always' (copying IR)"),
            (_up.ReconstructSSA, "run_pass", "numba: SSA"),
            (_tp.NopythonTypeInference, "run_pass", "numba: type inference"),
            (_tp.NativeLowering, "run_pass", "numba: lowering to LLVM IR"),
            (_cg.CPUCodeLibrary, "add_ir_module", "LLVM: parse IR"),
            (_cg.CPUCodeLibrary, "_optimize_functions", "LLVM: function passes"),
            (_cg.CPUCodeLibrary, "_optimize_final_module", "LLVM: module passes (linked callees again)"),
            (_cg.CPUCodeLibrary, "_finalize_final_module", "LLVM: machine code")):
        _hook(owner, meth, label)
import numpy as np
import fastbudget
from fastbudget import *  # noqa: F401,F403
imp = (time.perf_counter() - t_wall, time.process_time() - t_cpu)
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 2))
y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
t_wall, t_cpu = time.perf_counter(), time.process_time()
call = {call!r}
if call == "warmup":
    fastbudget.warmup(jobs=1)   # one process: its CPU seconds are the compile
else:
    est = {ctor}
    if call == "partial_fit":
        est.partial_fit(X, y, classes=[-1, 1])
    else:
        est.fit(X, y)
    est.decision_function(X[:5])
fit = (time.perf_counter() - t_wall, time.process_time() - t_cpu)
out = {{"import_wall": imp[0], "import_cpu": imp[1], "fit_wall": fit[0], "fit_cpu": fit[1],
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}}
import importlib, pkgutil
import fastbudget.kernels
from numba.core.registry import CPUDispatcher
funcs = {{}}
for m in pkgutil.iter_modules(fastbudget.kernels.__path__):
    mod = importlib.import_module("fastbudget.kernels." + m.name)
    for name, obj in vars(mod).items():
        if isinstance(obj, CPUDispatcher) and obj.__module__ == mod.__name__:
            key = m.name + "." + name
            sigs = [str(s) for s in obj.signatures]
            llvm = 0.0
            passes = []
            for s in obj.signatures:
                md = obj.get_metadata(s) or {{}}   # (None when loaded from a cache)
                llvm += md.get("timers", {{}}).get("llvm_lock", 0.0)
                pt = md.get("llvm_pass_timings")
                if pt is not None:
                    for rec in pt:
                        passes.append((rec.name, rec.timings.get_total_time()))
            funcs[key] = {{"signatures": sigs, "llvm_s": llvm, "passes": passes,
                          "cache_misses": sum(obj.stats.cache_misses.values())}}
out["n_dispatchers_used"] = sum(1 for f in funcs.values() if f["signatures"])
out["n_signatures"] = sum(len(f["signatures"]) for f in funcs.values())
out["n_compiled"] = sum(f["cache_misses"] for f in funcs.values())
if profile:
    # self time of each compile: its CPU time minus the compiles nested inside it
    stack, self_t = [], {{}}
    for kind, t, data in events:
        d = data["dispatcher"]
        key = getattr(d, "__module__", "?").rsplit(".", 1)[-1] + "." + d.py_func.__name__
        if kind == "start":
            stack.append([key, t, 0.0])
        else:
            k, t0, nested = stack.pop()
            total = t - t0
            self_t[k] = self_t.get(k, 0.0) + total - nested
            if stack:
                stack[-1][2] += total
    for k, f in funcs.items():
        f["compile_cpu_s"] = self_t.get(k, 0.0)
    out["funcs"] = {{k: f for k, f in funcs.items() if f["signatures"]}}
out["phases"] = dict(phase_s)
print("@@RESULT@@" + json.dumps(out))
'''


def run_one(name, profile, phases=False, portable=None):
    """One learner's child process: on an empty cache, or (``portable``: a folder holding a
    ``fastbudget`` package built with ``python -m fastbudget._portable build``) on a fresh
    copy of that package, which loads the portable machine code it carries, as a wheel
    built so would."""
    ctor, call = LEARNERS[name]
    code = CHILD.format(profile=profile, phases=phases, call=call, ctor=ctor or "None")
    with tempfile.TemporaryDirectory(prefix="nbcache-") as cache:
        # (an empty cache: no portable code either, should the tree carry some)
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, FASTBUDGET_PORTABLE="0")
        if portable is not None:
            shutil.copytree(os.path.join(portable, "fastbudget"),
                            os.path.join(cache, "fastbudget"))
            del env["NUMBA_CACHE_DIR"]   # the package's own __pycache__ folders
            env["PYTHONPATH"] = cache
            env.pop("FASTBUDGET_PORTABLE", None)
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, cwd=cache)
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: child failed\n{proc.stderr[-3000:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")][-1]
    res = json.loads(line[len("@@RESULT@@"):])
    res["learner"] = name
    return res


SPLIT_CHILD = r'''
import json, time
from fastbudget import _warmup as W
t = time.perf_counter()
log = W._run_parallel(W._tasks(), {jobs}, record=True)
print("@@RESULT@@" + json.dumps({{"log": log, "wall": time.perf_counter() - t}}))
'''


def run_split(jobs):
    """``warmup(jobs=jobs)``'s processes on an empty cache: (log, wall seconds), the log a
    list of (process, task, report) as ``fastbudget._warmup._run_parallel`` returns it."""
    with tempfile.TemporaryDirectory(prefix="nbcache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, FASTBUDGET_PORTABLE="0")
        proc = subprocess.run([sys.executable, "-c", SPLIT_CHILD.format(jobs=int(jobs))],
                              env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"warm-up split: child failed\n{proc.stderr[-3000:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")][-1]
    res = json.loads(line[len("@@RESULT@@"):])
    return res["log"], res["wall"]


def print_split(log, wall):
    procs = sorted({k for k, _, _ in log})
    total = {k: max(r["process_cpu"] for j, _, r in log if j == k) for k in procs}
    print("| process | tasks (CPU s each, in order) | CPU s |")
    print("|---|---|---:|")
    for k in procs:
        tasks = ", ".join(f"{t} {r['cpu']:.1f}" for j, t, r in log if j == k)
        print(f"| {k} | {tasks} | {total[k]:.1f} |")
    print(f"\nwall {wall:.1f} s; CPU s per process: "
          + " / ".join(f"{total[k]:.1f}" for k in procs)
          + f" (total {sum(total.values()):.1f}, largest {max(total.values()):.1f})")
    where = {}
    for k, t, r in log:
        for f in r["compiled"]:
            where.setdefault(f, []).append(f"{t} (process {k})")
    twice = {f: w for f, w in where.items() if len(w) > 1 and f.startswith("fastbudget.")}
    print(f"compiled functions of the library: {sum(f.startswith('fastbudget.') for f in where)}; "
          f"compiled more than once: {twice or 'none'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learners", nargs="+", choices=list(LEARNERS), default=list(LEARNERS))
    ap.add_argument("--profile", action="store_true",
                    help="per compiled function: signatures, compile and LLVM seconds")
    ap.add_argument("--phases", action="store_true",
                    help="CPU seconds of each compiler phase (Numba's front end, LLVM)")
    ap.add_argument("--top", type=int, default=12, help="functions listed with --profile")
    ap.add_argument("--json", help="write the raw figures to this file")
    ap.add_argument("--portable", metavar="TREE",
                    help="a folder holding a fastbudget package built with python -m "
                         "fastbudget._portable build: each child runs a fresh copy of it "
                         "(its portable machine code) instead of an empty cache")
    ap.add_argument("--max-compiled", type=int, metavar="N",
                    help="exit with status 1 if a learner's first fit compiled more than N "
                         "signatures (with --portable 0: the portable code covers it)")
    ap.add_argument("--split", type=int, metavar="JOBS",
                    help="only warmup(jobs=JOBS)'s processes: CPU s per process and task")
    args = ap.parse_args(argv)
    load = os.getloadavg()
    if args.split:
        print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
        log, wall = run_split(args.split)
        print_split(log, wall)
        load = os.getloadavg()
        print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"log": log, "wall": wall}, fh, indent=1)
        return
    results = []
    print(f"load average at start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
    print("| learner | import wall s | import CPU s | first fit wall s | first fit CPU s "
          "| peak RSS MB | dispatchers | signatures | compiled |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|", flush=True)
    for name in args.learners:
        r = run_one(name, args.profile, args.phases, args.portable)
        r["load_after"] = os.getloadavg()
        results.append(r)
        print(f"| {name} | {r['import_wall']:.2f} | {r['import_cpu']:.2f} | {r['fit_wall']:.1f} "
              f"| {r['fit_cpu']:.1f} | {r['peak_rss_mb']:.0f} | {r['n_dispatchers_used']} "
              f"| {r['n_signatures']} | {r['n_compiled']} |", flush=True)
        if args.json:   # rewritten after each learner: a long run keeps what it measured
            with open(args.json, "w") as fh:
                json.dump({"load_start": load, "results": results}, fh, indent=1)
    load = os.getloadavg()
    print(f"\nload average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.max_compiled is not None:
        over = {r["learner"]: r["n_compiled"] for r in results
                if r["n_compiled"] > args.max_compiled}
        if over:
            print(f"compiled more than {args.max_compiled} signatures: {over}")
            sys.exit(1)
    if args.phases:
        names = sorted({k for r in results for k in r["phases"]})
        print("\nCPU seconds by compiler phase (each phase's own time, nested compiles "
              "excluded)\n")
        print("| phase | " + " | ".join(r["learner"] for r in results) + " |")
        print("|---|" + "---:|" * len(results))
        for k in names:
            print(f"| {k} | " + " | ".join(f"{r['phases'].get(k, 0.0):.1f}" for r in results)
                  + " |")
    if args.profile:
        for r in results:
            funcs = r["funcs"]
            print(f"\n{r['learner']}: top compiled functions (CPU seconds of its own compile, "
                  "callees' compiles excluded; LLVM wall seconds, callees' included)\n")
            print("| function | compile CPU s (self) | LLVM wall s (incl.) | signatures |")
            print("|---|---:|---:|---|")
            top = sorted(funcs.items(), key=lambda kv: -kv[1]["compile_cpu_s"])[:args.top]
            for k, f in top:
                sig = f"{len(f['signatures'])}" + (
                    f": {'; '.join(f['signatures'])}" if len(f["signatures"]) > 1 else "")
                print(f"| {k} | {f['compile_cpu_s']:.2f} | {f['llvm_s']:.2f} | {sig} |")
            multi = [k for k, f in funcs.items() if len(f["signatures"]) > 1]
            print(f"\nfunctions with more than one signature: {multi or 'none'}")


if __name__ == "__main__":
    main()
