"""Build portable machine code into the package, for a wheel that needs no compile on first use.

``python -m fastbudget._portable build`` runs :func:`fastbudget.warmup` once per portable
x86-64 level (:data:`LEVELS`) with Numba told to compile for that level
(``NUMBA_CPU_NAME`` / ``NUMBA_CPU_FEATURES``) and writes the manifest
``fastbudget/kernels/_portable.json``. Every compiled function then sits in the package's
``__pycache__`` folders under each level's key, and :class:`fastbudget.kernels._jit.
PortableCache` loads it in a fresh install instead of compiling. It writes into the
``fastbudget`` package that ``python`` imports: ``setup.py`` runs it on the build tree when
``FASTBUDGET_PORTABLE_BUILD=1`` (``docs/getting-started.md``).

``python -m fastbudget._portable show`` prints the manifest and which levels this machine
would load.
"""
import argparse
import json
import os
import subprocess
import sys
import time

_V1 = ["64bit", "cmov", "cx8", "fxsr", "mmx", "sse", "sse2"]
_V2 = _V1 + ["cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3", "crc32"]
_V3 = _V2 + ["avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave"]
_V4 = _V3 + ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"]

#: the portable levels a build compiles, best first: LLVM's CPU name and the features it
#: implies (the x86-64 psABI micro-architecture levels), which a CPU must have to load it
LEVELS = {"x86-64-v4": _V4, "x86-64-v3": _V3}

#: LLVM tuning flags added to a level's features (not CPU features: nothing to require).
#: ``x86-64-v4`` prefers 256-bit vectors by default; with 512-bit ones the compiled predict
#: matched code compiled for this machine's CPU (AMD Zen 4) and was 1.2x faster than with
#: 256-bit ones (``docs/results/cold_start.md``)
TUNING = {"x86-64-v4": ["-prefer-256-bit"]}


def _env(level):
    env = dict(os.environ)
    env["NUMBA_CPU_NAME"] = level
    env["NUMBA_CPU_FEATURES"] = ",".join(["+" + f for f in LEVELS[level]]
                                         + TUNING.get(level, []))
    env["FASTBUDGET_PORTABLE"] = "0"   # compile this level; never load another one
    return env


_MAGIC = ("import json; from numba.core.registry import cpu_target; "
          "print(json.dumps(cpu_target.target_context.codegen().magic_tuple()))")


def build(levels=tuple(LEVELS), jobs=None, verbose=False, code=None):
    """Compile every warm-up path (or what the Python source ``code`` runs) for each level
    into the imported package's caches, each level in fresh processes, and write the
    manifest. Returns the manifest (a dict)."""
    import numba

    from .kernels._jit import MANIFEST

    if code is None:
        code = f"from fastbudget._warmup import warmup; warmup(jobs={jobs!r}, native=True)"
    entries = []
    for level in levels:
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}; choose from {sorted(LEVELS)}.")
        env = _env(level)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        magic = json.loads(subprocess.run([sys.executable, "-c", _MAGIC], env=env, check=True,
                                          capture_output=True, text=True).stdout)
        entries.append({"name": level, "magic_tuple": magic, "requires": LEVELS[level]})
        if verbose:
            print(f"{level}: compiled in {time.perf_counter() - t:.1f} s", flush=True)
    manifest = {"numba": numba.__version__,
                "python": "%d.%d" % sys.version_info[:2], "levels": entries}
    with open(MANIFEST, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
    return manifest


def show():
    from .kernels._jit import MANIFEST, portable_levels

    try:
        with open(MANIFEST, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        print(f"no portable code: {MANIFEST} does not exist (a source install compiles "
              "on first use; fastbudget warmup does it at once).")
        return
    print(json.dumps(manifest, indent=1))
    print("this process loads:", [m[1] for m in portable_levels()] or "none")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m fastbudget._portable",
                                description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile portable machine code into the package")
    b.add_argument("--levels", default=",".join(LEVELS),
                   help="comma-separated levels, best first (default: %(default)s)")
    b.add_argument("--jobs", type=int, default=0, help="processes (0: every core)")
    sub.add_parser("show", help="print the manifest and the levels this machine loads")
    a = p.parse_args(argv)
    if a.cmd == "build":
        build(tuple(x for x in a.levels.split(",") if x), jobs=a.jobs or None, verbose=True)
    else:
        show()


if __name__ == "__main__":
    main()
