"""Benchmark of the exact incremental engine (paper 003) against scikit-learn's SVC.

Run from the repository root::

    python perf/bench_engine.py                 # n = 2000 and 5000 (a few minutes)
    python perf/bench_engine.py --sizes 1000    # quicker

Reports, measured in the same run (absolute times vary from machine to machine):

1. learning n 2-D RBF examples (C = 100, gamma = 0.5, i.e. delta = d/2 = 1 as in the
   paper-000 protocol; the Gauss data set of DESIGN.md, standardised) one at a time --
   the compiled loop ``IncrementalEngine.add_batch`` and, for the smaller size, a Python
   loop of ``add`` calls -- against ``sklearn.svm.SVC(C=100, gamma=0.5).fit`` on the same
   data (default tol 1e-3, and tol 1e-6), as ratios engine / SVC;
2. allocations per example after construction (Numba NRT counters and tracemalloc) for a
   batch of 10 and a batch of 1000 examples: equal counts mean zero per example;
3. first-call compile time of the engine in a fresh process, cold (empty Numba cache) and
   cached (second process on the same cache).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc

os.environ.setdefault("NUMBA_NRT_STATS", "1")  # must precede the first compiled call

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from fastbudget.engine import IncrementalEngine  # noqa: E402
from fastbudget.kernels import adiabatic as ad  # noqa: E402

GAMMA = 0.5
C = 100.0


def gauss_data(n, seed):
    """Gauss (DESIGN.md): N((0,0), I) vs N((2,0), 4I), equal priors, standardised."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, 2))
    neg = y < 0
    X[neg] = X[neg] * 2.0 + np.array([2.0, 0.0])
    X = (X - X.mean(0)) / X.std(0)
    return np.ascontiguousarray(X), y


def time_engine(X, y, python_loop=False):
    n = X.shape[0]
    eng = IncrementalEngine(n, 2, C=C, kernel="rbf", gamma=GAMMA)
    w = np.ones(n)
    t0 = time.perf_counter()
    if python_loop:
        for i in range(n):
            eng.add(X[i], y[i], 1.0)
    else:
        eng.add_batch(X, y, w)
    t = time.perf_counter() - t0
    return t, eng


def time_svc(X, y, tol):
    from sklearn.svm import SVC

    t0 = time.perf_counter()
    svc = SVC(C=C, kernel="rbf", gamma=GAMMA, tol=tol).fit(X, y)
    return time.perf_counter() - t0, svc


def allocations():
    from numba.core.runtime import rtsys

    X, y = gauss_data(1200, 1)
    eng = IncrementalEngine(1200, 2, C=C, kernel="rbf", gamma=GAMMA, check_every=10**9)
    w = np.ones(1200)
    eng.add_batch(X[:100], y[:100], w[:100])
    rows = []
    for lo, hi in ((100, 110), (110, 1110)):
        a0 = rtsys.get_allocation_stats()
        tracemalloc.start()
        eng.add_batch(X[lo:hi], y[lo:hi], w[lo:hi])
        cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        a1 = rtsys.get_allocation_stats()
        rows.append((hi - lo, a1.alloc - a0.alloc, a1.free - a0.free, peak))
    return rows, eng.n_rebuilds


_FIRST_CALL = """
import time, numpy as np
t0 = time.perf_counter()
from fastbudget.engine import IncrementalEngine
t1 = time.perf_counter()
eng = IncrementalEngine(4, 2, C=1.0, gamma=0.5)
eng.add_batch(np.array([[0., 0.], [1., 1.]]), np.array([1., -1.]), np.ones(2))
eng.remove(0); eng.reweight(1, 2.0); eng.set_C(3.0); eng.add([0.5, 0.5], 1.0)
eng.loo(1); eng.decision_function(np.zeros((1, 2)))
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def compile_times():
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = []
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", _FIRST_CALL], env=env, cwd=ROOT,
                               capture_output=True, text=True, check=True)
            out.append(tuple(map(float, r.stdout.split())))
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000])
    ap.add_argument("--python-loop-max", type=int, default=2000,
                    help="also time a Python loop of add() up to this size")
    args = ap.parse_args()

    # warm up every compiled path on a tiny problem (compile time is reported separately)
    X, y = gauss_data(50, 0)
    time_engine(X, y)
    time_engine(X, y, python_loop=True)

    print("## learning one at a time vs SVC.fit (2-D Gauss, RBF gamma=0.5, C=100)")
    print("| n | engine add_batch s | Python add loop s | SVC tol=1e-3 s | SVC tol=1e-6 s "
          "| ratio batch/SVC(1e-3) | ratio batch/SVC(1e-6) | |S| | #SV | rebuilds | max rel. diff vs SVC(1e-6) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        X, y = gauss_data(n, n)
        t_b, eng = time_engine(X, y)
        t_p = time_engine(X, y, python_loop=True)[0] if n <= args.python_loop_max else float("nan")
        t_s3, _ = time_svc(X, y, 1e-3)
        t_s6, svc = time_svc(X, y, 1e-6)
        Xt = gauss_data(2000, n + 1)[0]
        f_e = eng.decision_function(Xt)
        f_s = svc.decision_function(Xt)
        rel = np.max(np.abs(f_e - f_s)) / np.abs(f_s).max()
        n_sv = int(np.count_nonzero(eng.alpha > 0)) if hasattr(type(eng), "alpha") else \
            int(np.count_nonzero(eng.st.alpha > 0))
        print(f"| {n} | {t_b:.2f} | {t_p:.2f} | {t_s3:.2f} | {t_s6:.2f} | {t_b / t_s3:.1f} | "
              f"{t_b / t_s6:.1f} | {int(eng.st.ist[ad.I_NS])} | {n_sv} | {eng.n_rebuilds} | {rel:.1e} |")
        sys.stdout.flush()

    print("\n## allocations after construction (batches of 10 and of 1000 examples)")
    rows, nreb = allocations()
    print("| examples | NRT allocs | NRT frees | tracemalloc peak bytes |")
    print("|---|---|---|---|")
    for r in rows:
        print("| %d | %d | %d | %d |" % r)
    print(f"(R rebuilds during the measurement: {nreb}; equal rows = zero per example)")

    print("\n## first call in a fresh process (import, then every engine operation once)")
    (imp_c, call_c), (imp_w, call_w) = compile_times()
    print(f"cold cache: import {imp_c:.2f} s, first calls {call_c:.2f} s")
    print(f"warm cache: import {imp_w:.2f} s, first calls {call_w:.2f} s")


if __name__ == "__main__":
    main()
