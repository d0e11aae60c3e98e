"""The exact engine against scikit-learn's SVC as n grows: times, power laws, counters, profile.

Run from the repository root::

    python perf/engine_scaling.py                          # n = 1000, 2000, 5000 (a few minutes)
    python perf/engine_scaling.py --sizes 1000 2000        # quicker
    python perf/engine_scaling.py --profile 5000           # also a sampling profile (Linux perf)

Paper 000's Gauss protocol (``fastbudget.datasets.make_gauss``, standardised, RBF gamma = 0.5,
C = 100; about half the examples end as support vectors). For each n, in the same process:
``IncrementalSVC(C=100, gamma=0.5, capacity=n).fit`` (one example at a time, exact) and
``sklearn.svm.SVC(C=100, gamma=0.5).fit`` (tol 1e-3), best of ``--repeat`` runs each (CPU
seconds of this process, ``time.process_time``); the ratio engine / SVC; the engine's
counters (R rebuilds, refused growths, adiabatic steps, margin set size) and agreement with SVC
(same support vectors, largest decision-value difference over SVC's own tolerance scale).
The exponents are least-squares slopes of log time against log n.

With ``--profile N``, ``perf record`` samples one more engine fit of N examples and the
samples are charged to the compiled functions (the symbol table of ``perf/profile_tvm.py``).
"""
import argparse
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter

if __name__ == "__main__" and "--profile" in sys.argv:
    # a fresh cache, so that the compiled libraries are in memory with their object code
    _CACHE = tempfile.mkdtemp(prefix="fastbudget_prof_cache_")
    os.environ["NUMBA_CACHE_DIR"] = _CACHE

import numpy as np  # noqa: E402

GAMMA = 0.5
C = 100.0


def gauss(n, seed=0):
    """n Gauss examples (paper 000), standardised on themselves."""
    from fastbudget.datasets import make_gauss

    X, y = make_gauss(n, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    return np.ascontiguousarray(X), y


def fit_engine(X, y):
    from fastbudget import IncrementalSVC

    clf = IncrementalSVC(C=C, gamma=GAMMA, capacity=X.shape[0])
    t = time.process_time()
    clf.fit(X, y)
    return time.process_time() - t, clf


def fit_svc(X, y):
    from sklearn.svm import SVC

    t = time.process_time()
    svc = SVC(C=C, gamma=GAMMA).fit(X, y)
    return time.process_time() - t, svc


def counters(clf):
    from fastbudget.kernels import adiabatic as ad

    ist = clf.engine_.st.ist
    return {"rebuilds": int(ist[ad.I_NREBUILD]), "refused": int(ist[ad.I_NREFUSED]),
            "steps": int(ist[ad.I_NSTEPS]), "nS": int(ist[ad.I_NS])}


def slope(ns, ts):
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def scaling(sizes, repeat):
    fit_engine(*gauss(50, 1))  # compile outside the clock
    fit_svc(*gauss(50, 1))
    print("| n | engine CPU s | SVC CPU s | engine / SVC | SVs engine / SVC (same) | "
          "max abs f diff | R rebuilds | refused | steps / example | final S |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    te, ts = [], []
    for n in sizes:
        X, y = gauss(n)
        e = min((fit_engine(X, y) for _ in range(repeat)), key=lambda r: r[0])
        s = min((fit_svc(X, y) for _ in range(repeat)), key=lambda r: r[0])
        te.append(e[0])
        ts.append(s[0])
        clf, svc = e[1], s[1]
        same = set(np.asarray(clf.support_).tolist()) == set(svc.support_.tolist())
        diff = float(np.max(np.abs(clf.decision_function(X) - svc.decision_function(X))))
        c = counters(clf)
        print(f"| {n:,} | {e[0]:.2f} | {s[0]:.3f} | {e[0] / s[0]:.1f} | "
              f"{len(clf.support_)} / {len(svc.support_)} ({'yes' if same else 'no'}) | "
              f"{diff:.1e} | {c['rebuilds']} | {c['refused']} | {c['steps'] / n:.2f} | "
              f"{c['nS']} |", flush=True)
    if len(sizes) > 1:
        print(f"\npower laws: engine n^{slope(sizes, te):.2f}, SVC n^{slope(sizes, ts):.2f}")


def _profile_tools():
    """perf/profile_tvm.py as a module (its symbol table and perf map)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "profile_tvm.py")
    spec = importlib.util.spec_from_file_location("profile_tvm", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def profile(n, freq=999):
    from fastbudget.kernels import adiabatic as ad
    from fastbudget.kernels import jacobian as jac
    from fastbudget.kernels import kernel as kk

    pt = _profile_tools()
    fit_engine(*gauss(50, 1))
    outdir = tempfile.mkdtemp(prefix="fastbudget_prof_")
    libs = [ov.library for mod in (ad, kk, jac) for d in vars(mod).values()
            if hasattr(d, "overloads") for ov in d.overloads.values()]
    lib = next(iter(ad.add_batch.overloads.values())).library
    syms, _ = pt.symbol_table(lib, libs, outdir)
    pt.write_perf_map(syms)
    X, y = gauss(n)
    perfdata = os.path.join(outdir, "perf.data")
    prec = subprocess.Popen(["perf", "record", "-q", "-F", str(freq), "-g", "-p",
                             str(os.getpid()), "-o", perfdata],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(3.0)
    try:
        t, clf = fit_engine(X, y)
    finally:
        prec.send_signal(signal.SIGINT)
        prec.wait()
    txt = subprocess.run(["perf", "script", "-i", perfdata, "-F", "ip,sym", "--no-demangle"],
                         capture_output=True, text=True).stdout
    starts = [s[0] for s in syms]
    import bisect

    own, incl = Counter(), Counter()
    total = 0
    for block in txt.split("\n\n"):
        ips = [int(line.split()[0], 16) for line in block.strip().splitlines()
               if line.strip() and line.split()[0].isalnum()]
        names = []
        for k, ip in enumerate(ips):
            i = bisect.bisect_right(starts, ip if k == 0 else ip - 1) - 1
            if i >= 0 and ip < syms[i][0] + max(syms[i][1], 1) + 1:
                names.append(syms[i][3].split(".")[-1])
        if not names:
            continue
        total += 1
        own[names[0]] += 1
        for nm in set(names):
            incl[nm] += 1
    print(f"\nprofile of one engine fit of {n:,} examples ({t:.1f} CPU s, {total} samples in "
          f"compiled code; counters {counters(clf)})")
    print("| compiled function | own % | incl. callees % |")
    print("|---|---|---|")
    for nm, v in own.most_common(15):
        print(f"| {nm} | {100 * v / total:.1f} | {100 * incl[nm] / total:.1f} |")
    shutil.rmtree(outdir, ignore_errors=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000])
    p.add_argument("--repeat", type=int, default=1, help="best of this many fits per size")
    p.add_argument("--profile", type=int, default=None, metavar="N",
                   help="only profile one engine fit of N examples (needs Linux perf)")
    a = p.parse_args(argv)
    try:
        if a.profile:
            profile(a.profile)
        else:
            scaling(a.sizes, a.repeat)
    finally:
        cache = os.environ.get("NUMBA_CACHE_DIR", "")
        if os.path.basename(cache).startswith("fastbudget_prof_cache_"):
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
