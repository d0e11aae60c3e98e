"""Where the time goes in TVMClassifier's N-Checkerboard stream (B = 100): a sampling profile.

Run from the repository root (Linux, ``perf`` installed and allowed to attach to the own
process; about 2-4 minutes, most of it compiling)::

    python perf/profile_tvm.py --n 1000000            # function-level shares
    python perf/profile_tvm.py --n 1000000 --lines    # also shares inside functions
    python perf/profile_tvm.py --analyze DIR          # re-analyse a saved run

The stream is the one of ``perf/run_tvm_stream.py`` (seed 0, chunks of 100,000, 15 % label
noise, standardised, RBF delta = 0.37, C = 100, B = 100), generated before the clock starts.

How:

1. Numba compiles everything into a fresh ``NUMBA_CACHE_DIR`` (a temporary directory,
   removed at the end), so that the compiled libraries -- ``tvm_partial_fit``'s, with every
   function it calls linked in, and every other dispatcher's -- are in memory with their
   object code. Function addresses come from ``library.get_pointer_to_function``; as a
   function linked into several libraries resolves by name to one loaded copy, the object
   file that describes the code at that address (sizes, line table) is the one whose bytes
   equal the memory's (printed: ~98 %, the rest relocated addresses). A
   ``/tmp/perf-PID.map`` file is also written, so that ``perf report -i DIR/perf.data``
   names the ``[JIT]`` code when used by hand.
2. ``perf record --call-graph dwarf`` attaches to this process for the stream only. A
   sample is charged to the compiled function it falls in; a sample in ``exp`` (libm) or
   another shared-library helper is charged to the compiled function that called it (the
   first compiled frame of the unwound stack). Numba's ``NRT_incref``/``NRT_decref`` are
   frameless leaves, so the unwinder cannot leave them; their caller is read from the
   return address on top of the recorded user stack (``perf script -D``), which gives the
   "incl. the refcounting it causes" column.
3. With ``--lines`` the code is compiled with ``NUMBA_DEBUGINFO=1`` (and
   ``NUMBA_BOUNDSCHECK=0``, which debug info would otherwise switch on), the object file's
   line table (``objdump -d -l``) maps every sampled instruction to a source line, and
   lines are grouped into the components of the report (kernel rows, R updates, the
   min-ratio search, ...) by the marker comments of the source. Inlined code (``transfer``,
   ``bounds_path``, ``place``, ``_sync``, ``kernel_expansion_at``) is only separable here.
   Numba's debug info gives inlined lines the *caller's* file name, so a line number is
   matched against the compiled function and the ``inline="always"`` functions it
   inlines (deepest first). The debug build's code differs a little from the plain one:
   compare its function-level shares with a plain run.
4. Python overhead per chunk = wall time of ``partial_fit`` minus wall time of the compiled
   ``tvm_partial_fit`` call (timed by wrapping the module attribute the estimator calls).
5. Counters per accepted example come from the state (``I_NSTEPS``: adiabatic steps,
   ``T_NNROWS``: nearest-neighbour rows recomputed in full, ``T_TRIES``: merge candidates,
   R rebuilds, ...), and the scoring floor (``twin_decision_batch`` on the whole stream
   with the final twins) is timed in the same process for a cross-check of the scoring
   share.

Shares are of sampled CPU cycles of this process, so other jobs on the machine inflate the
absolute times but not (much) the shares; cache contention can still shift them.
"""
import argparse
import bisect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

if __name__ == "__main__":
    _LINES = "--lines" in sys.argv
    _ANALYZE = "--analyze" in sys.argv
    if not _ANALYZE:
        # must precede the first import of numba
        _CACHE = tempfile.mkdtemp(prefix="fastbudget_prof_cache_")
        os.environ["NUMBA_CACHE_DIR"] = _CACHE
        if _LINES:
            os.environ["NUMBA_DEBUGINFO"] = "1"
            os.environ["NUMBA_BOUNDSCHECK"] = "0"

import numpy as np  # noqa: E402

SD = 4 / np.sqrt(12)
GAMMA = 1 / (2 * 0.37)
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ------------------------------------------------------------------ compiled symbols
def _short(name):
    """fastbudget.kernels.adiabatic.run_path from a Numba-mangled name."""
    pre = ""
    if name.startswith("cfunc."):
        pre, name = "cfunc.", name[6:]
    if not name.startswith("_ZN"):
        return pre + name
    s = name[3:]
    if s.startswith("7cpython"):
        pre, s = pre + "cpython.", s[8:]
    parts = []
    while s[:1].isdigit():
        k = re.match(r"\d+", s).group(0)
        n = int(k)
        parts.append(s[len(k):len(k) + n])
        s = s[len(k) + n:]
    return pre + ".".join(parts)


def _obj_functions(objpath):
    """{mangled: (file offset, size)} of the functions in an object file."""
    secs = {}
    for line in subprocess.run(["objdump", "-h", objpath], capture_output=True,
                               text=True).stdout.splitlines():
        p = line.split()
        if len(p) >= 7 and p[0].isdigit():
            secs[p[1]] = int(p[5], 16)
    out = {}
    for line in subprocess.run(["objdump", "-t", objpath], capture_output=True,
                               text=True).stdout.splitlines():
        p = line.split()
        if len(p) >= 6 and "F" in p[2:4] and p[-3] in secs:
            out[p[-1]] = (secs[p[-3]] + int(p[0], 16), int(p[-2], 16))
    return out


def symbol_table(library, all_libraries, outdir):
    """((start, size, mangled, short, object file), ...) of every function linked into
    ``library``, and the fraction of their bytes equal to the object file's.

    Every dispatcher's library is loaded into the same JIT, and a function linked into
    several of them resolves by name to one loaded copy, not necessarily the copy in
    ``library``'s own object. So the object file describing the code at a function's
    address is found by comparing bytes: of all libraries' objects (the object code MCJIT
    loaded, kept because the functions are ``cache=True``) defining the name, the one whose
    bytes equal the memory's (up to relocated addresses)."""
    import ctypes
    objs = []
    for k, lib in enumerate(all_libraries):
        try:
            data = bytes(lib._get_compiled_object())
        except Exception:
            continue
        path = os.path.join(outdir, f"lib{k}.o")
        with open(path, "wb") as f:
            f.write(data)
        objs.append((path, data, _obj_functions(path)))
    syms = []
    eq_tot = n_tot = 0.0
    for f in library._final_module.functions:
        if f.is_declaration:
            continue
        addr = library.get_pointer_to_function(f.name)
        if not addr:
            continue
        best = (-1.0, None, 0)
        for path, data, funcs in objs:
            if f.name in funcs:
                off, size = funcs[f.name]
                mem = ctypes.string_at(addr, size)
                eq = sum(x == y for x, y in zip(data[off:off + size], mem)) / max(size, 1)
                if eq > best[0]:
                    best = (eq, path, size)
        syms.append((addr, best[2], f.name, _short(f.name), best[1]))
        eq_tot += max(best[0], 0.0) * best[2]
        n_tot += best[2]
    syms.sort()
    return syms, eq_tot / max(n_tot, 1.0)


def line_table(objpath):
    """{mangled: (offsets, [(file, line)])} from ``objdump -d -l``."""
    out = subprocess.run(["objdump", "-d", "-l", "--no-show-raw-insn", objpath],
                         capture_output=True, text=True, check=True).stdout
    table = {}
    cur = None
    start = 0
    loc = None
    hdr = re.compile(r"^([0-9a-f]+) <(.+)>:$")
    ins = re.compile(r"^\s+([0-9a-f]+):\s")
    src = re.compile(r"^(/.+|<.+>|\S+\.py):(\d+)")
    for line in out.splitlines():
        m = hdr.match(line)
        if m:
            cur = m.group(2)
            start = int(m.group(1), 16)
            table[cur] = ([], [])
            loc = None
            continue
        m = src.match(line)
        if m:
            loc = (m.group(1), int(m.group(2)))
            continue
        m = ins.match(line)
        if m and cur is not None and loc is not None:
            offs, locs = table[cur]
            offs.append(int(m.group(1), 16) - start)
            locs.append(loc)
    return table


def write_perf_map(syms):
    path = f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as f:
        for addr, size, _, short, _ in syms:
            f.write(f"{addr:x} {max(size, 1):x} {short}\n")
    return path


# ------------------------------------------------------------------ the run
def real_stream(a):
    """IJCNN (d = 22, C = 100) or Adult (a9a, d = 123, C = 1), standardised on the training
    side, RBF delta = d / 2 (paper 000 protocol): ``a.n`` examples made of passes over the
    training rows, each pass in its own seeded order, cut into chunks of ``a.chunk``."""
    from fastbudget.datasets import load_paper_dataset
    name, C = {"ijcnn": ("ijcnn", 100.0), "adult": ("adult", 1.0)}[a.data]
    X, y, Xt, yt = load_paper_dataset(name, a.data_dir)
    mu, sd = X.mean(0), X.std(0)
    sd[sd == 0] = 1.0
    X, Xt = (X - mu) / sd, (Xt - mu) / sd
    rng = np.random.default_rng(a.seed)
    idx = np.concatenate([rng.permutation(len(y)) for _ in range(-(-a.n // len(y)))])[:a.n]
    Xs, ys = np.ascontiguousarray(X[idx]), y[idx]
    chunks = [(Xs[i:i + a.chunk], ys[i:i + a.chunk]) for i in range(0, a.n, a.chunk)]
    return chunks, Xt, yt, 1.0 / X.shape[1], C


def run(a):
    from fastbudget import TVMClassifier
    from fastbudget.datasets import make_checkerboard, stream_chunks
    from fastbudget.kernels import adiabatic as ad
    from fastbudget.kernels import tvm as ktvm

    outdir = a.out or tempfile.mkdtemp(prefix="fastbudget_prof_")
    os.makedirs(outdir, exist_ok=True)
    if a.data == "checkerboard":
        Xt, yt = make_checkerboard(5000, random_state=10_000 + a.seed)
        Xt = (Xt - 2) / SD
        gamma, C = GAMMA, 100.0
        chunks = None
    else:
        chunks, Xt, yt, gamma, C = real_stream(a)
    t0 = time.perf_counter()
    clf = TVMClassifier(budget=a.budget, gamma=gamma, C=C)
    clf.partial_fit(Xt[:2], np.array([-1, 1]), classes=[-1, 1])
    clf.score(Xt[:10], yt[:10])
    t_compile = time.perf_counter() - t0
    print(f"compiled in {t_compile:.0f} s (cache {os.environ.get('NUMBA_CACHE_DIR')})", flush=True)
    lib = next(iter(ktvm.tvm_partial_fit.overloads.values())).library
    from fastbudget.kernels import jacobian as jac
    from fastbudget.kernels import kernel as kk
    from fastbudget.kernels import merge as mg
    libs = [lib] + [ov.library for mod in (ktvm, ad, mg, kk, jac) for d in vars(mod).values()
                    if hasattr(d, "overloads") for ov in d.overloads.values()]
    syms, same = symbol_table(lib, libs, outdir)
    print(f"{len(syms)} compiled functions; {100 * same:.1f} % of their bytes equal to the "
          "object file found for them (the rest: relocated addresses)", flush=True)
    lines = {}
    if a.lines:
        tables = {}
        for s in syms:
            if s[4] is not None:
                if s[4] not in tables:
                    tables[s[4]] = line_table(s[4])
                if s[2] in tables[s[4]]:
                    lines[s[2]] = tables[s[4]][s[2]]
    mapfile = write_perf_map(syms)

    if chunks is None:
        chunks = [((X - 2) / SD, y) for X, y in
                  stream_chunks("checkerboard", a.n, a.chunk, random_state=a.seed, noise=0.15)]
    clf = TVMClassifier(budget=a.budget, gamma=gamma, C=C)

    inner = [0.0]
    orig = ktvm.tvm_partial_fit

    def timed(*args):
        t = time.perf_counter()
        r = orig(*args)
        inner[0] += time.perf_counter() - t
        return r

    perfdata = os.path.join(outdir, "perf.data")
    prec = subprocess.Popen(["perf", "record", "-q", "-F", str(a.freq), "--call-graph",
                             "dwarf,2048", "-p", str(os.getpid()), "-o", perfdata],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(3.0)  # let perf attach
    ktvm.tvm_partial_fit = timed
    wall = 0.0
    snaps = []
    try:
        for X, y in chunks:
            t = time.perf_counter()
            clf.partial_fit(X, y, classes=[-1, 1])
            wall += time.perf_counter() - t
            snaps.append((int(clf.engine_state_.ist[ad.I_NS]), int(clf.twins_.ist[ktvm.T_NTW])))
    finally:
        ktvm.tvm_partial_fit = orig
        prec.send_signal(signal.SIGINT)
        prec.wait()
    acc = clf.score(Xt, yt)
    st, tw = clf.engine_state_, clf.twins_
    out = np.empty(a.n)
    floor = np.inf
    allX = np.concatenate([c[0] for c in chunks])
    for _ in range(3):
        t = time.perf_counter()
        ktvm.twin_decision_batch(st, tw, allX, out)
        floor = min(floor, time.perf_counter() - t)
    counts = {
        "n": a.n, "seen": int(tw.ist[ktvm.T_SEEN]), "accepted": int(tw.ist[ktvm.T_ACCEPTED]),
        "merges": int(tw.ist[ktvm.T_MERGES]), "removed": int(tw.ist[ktvm.T_REMOVED]),
        "rejected": int(tw.ist[ktvm.T_REJECTED]), "tries": int(tw.ist[ktvm.T_TRIES]),
        "nn_rows": int(tw.ist[ktvm.T_NNROWS]), "steps": int(st.ist[ad.I_NSTEPS]),
        "rebuilds": int(st.ist[ad.I_NREBUILD]), "refused": int(st.ist[ad.I_NREFUSED]),
        "check_every": int(st.ist[ad.I_CHECK_EVERY]), "hw": int(st.ist[ad.I_HW]),
        "nS_at_chunk_ends": [s[0] for s in snaps], "chunks": len(chunks),
    }
    meta = {
        "wall_partial_fit": wall, "wall_compiled": inner[0], "floor": floor,
        "accuracy": float(acc), "compile_s": t_compile, "layout_equal": same,
        "lines": bool(a.lines), "perf_map": mapfile, "pid": os.getpid(),
        "syms": syms, "counts": counts, "freq": a.freq,
    }
    txt = subprocess.run(["perf", "script", "-i", perfdata, "-F", "ip,sym,dso",
                          "--no-demangle"], capture_output=True, text=True).stdout
    nrt = [(s[0], s[0] + max(s[1], 1)) for s in syms if s[3].startswith("NRT_")]
    meta["nrt_returns"] = nrt_callers(perfdata, nrt)
    with open(os.path.join(outdir, "samples.txt"), "w") as f:
        f.write(txt)
    with open(os.path.join(outdir, "meta.json"), "w") as f:
        json.dump(meta, f)
    with open(os.path.join(outdir, "lines.json"), "w") as f:
        json.dump(lines, f)
    print(f"raw data in {outdir} (perf report -i {perfdata} uses {mapfile})", flush=True)
    return outdir


def nrt_callers(perfdata, nrt_ranges):
    """Return addresses of the samples that fall in NRT_incref/NRT_decref. Both are
    frameless leaves (``test; lock inc/dec; ret``), so the return address is the first
    word of the user stack that ``--call-graph dwarf`` recorded; ``perf script -D`` dumps
    it (``ustack: size N, offset O``: the stack bytes start at O + 8 of the raw record)."""
    p = subprocess.Popen(["perf", "script", "-D", "-i", perfdata], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    hexl = []
    ip = None
    out = []
    samp = re.compile(r"PERF_RECORD_SAMPLE.*?: \d+/\d+: (0x[0-9a-f]+)")
    ust = re.compile(r"ustack: size (\d+), offset (0x[0-9a-f]+)")
    for line in p.stdout:
        if "raw event: size" in line:
            hexl = []
            ip = None
        elif line.startswith(".  "):
            hexl.append(line)
        elif "PERF_RECORD_SAMPLE" in line:
            m = samp.search(line)
            ip = int(m.group(1), 16) if m else None
        elif ip is not None and "ustack:" in line:
            m = ust.search(line)
            if m and any(a <= ip < b for a, b in nrt_ranges):
                raw = bytearray()
                for h in hexl:
                    raw += bytes.fromhex(h[9:57].replace(" ", ""))
                off = int(m.group(2), 16) + 8
                out.append(int.from_bytes(raw[off:off + 8], "little"))
            ip = None
    p.wait()
    return out


# ------------------------------------------------------------------ analysis
def _src_ranges():
    """(comp, resolve): ``comp[(function name, line)]`` is the component of a source line,
    ``resolve(compiled function, line)`` the Python function a line of that compiled
    function belongs to. Numba's debug info names the *caller's* file for code it inlined
    (``inline="always"``), so a line number is matched against the compiled function and
    the functions it inlines (the most deeply inlined first)."""
    import inspect

    from fastbudget.kernels import adiabatic as ad
    from fastbudget.kernels import kernel as kk
    from fastbudget.kernels import merge as mg
    from fastbudget.kernels import tvm as ktvm

    info = {}  # name -> (start, end, source, inline)
    for mod in (ad, kk, mg, ktvm):
        for name, f in vars(mod).items():
            pf = getattr(f, "py_func", None)
            if pf is not None and pf.__module__ == mod.__name__:
                s, start = inspect.getsourcelines(pf)
                info[name] = (start, start + len(s) - 1, "".join(s),
                              f.targetoptions.get("inline") == "always")

    def closure(name):
        out, frontier, depth = [(name, 0)], [name], 0
        seen = {name}
        while frontier:
            depth += 1
            nxt = []
            for fn in frontier:
                body = info[fn][2].split(":", 1)[1]  # skip the def line
                for cand, (_, _, _, inl) in info.items():
                    if inl and cand not in seen and re.search(rf"\b{cand}\(", body):
                        seen.add(cand)
                        out.append((cand, depth))
                        nxt.append(cand)
            frontier = nxt
        return sorted(out, key=lambda t: -t[1])

    closures = {}

    def resolve(fname, line):
        if fname not in info:
            return None
        if fname not in closures:
            closures[fname] = closure(fname)
        for cand, _ in closures[fname]:
            if info[cand][0] <= line <= info[cand][1]:
                return cand
        return None

    comp = {}

    def mark(fn, name, begin=None, end=None):
        """Lines of fn from the line containing ``begin`` up to (excluding) ``end``."""
        fname = fn.py_func.__name__
        start, _, body, _ = info[fname]
        src = body.splitlines()
        i0 = 0 if begin is None else next((i for i, s in enumerate(src) if begin in s), None)
        if i0 is None:   # the marker has left the code: its lines stay with the function
            print(f"(no line {begin!r} in {fname}: section {name!r} not split out)")
            return
        i1 = len(src) if end is None else next(
            (i for i, s in enumerate(src) if end in s and i > i0), len(src))
        for i in range(i0, i1):
            comp[(fname, start + i)] = name

    # run_path: the sections of one adiabatic step
    mark(ad.run_path, "path: setup / step control")
    mark(ad.run_path, "path: driven row wv = K[d,:] y_d r_d",
         "# -------- driven contributions", "nS = ist[I_NS]")
    mark(ad.run_path, "path: beta = -R v (O(|S|^2))", "nS = ist[I_NS]",
         "# -------- margin sensitivities")
    mark(ad.run_path, "path: gamma = K[S,:] beta (O(|S| n))", "# -------- margin sensitivities",
         "# -------- largest step")
    mark(ad.run_path, "path: min-ratio search", "# -------- largest step", "# -------- take the step")
    mark(ad.run_path, "path: take the step (alpha, g, cb)", "# -------- take the step",
         "# -------- bookkeeping")
    mark(ad.run_path, "path: event bookkeeping", "# -------- bookkeeping")
    # inlined into _learn_one
    mark(ktvm._place_twin_at, "place: both halves of a twin (_place_twin_at)")
    mark(ad.place_at, "place: store x, status")
    mark(ad.place_at, "place: list the live slots", "paired = ist[I_PAIRED]", "kernel_row_at(")
    mark(ad.place_at, "place: write K[c, :] and K[:, c]", "for k in range(n_rows):", "if paired:")
    mark(ad.place_at, "place: copy paired entries of K", "if paired:", "y[c] = yc")
    mark(ad.place_copy_at, "place_copy: copy K row and column")
    mark(ad.decision_at_slot, "g of a new slot (decision_at_slot, O(hw))")
    for fn in (ad.transfer, ad.bounds_path):
        mark(fn, "transfer/bounds_path setup and wrap-up")
    mark(ad._s_remove, "R shrink (S -> E/R)")
    for fn in (ktvm._sync,):
        mark(fn, "_sync: coef, f(q), sides")
    for fn in (ktvm._retire, ktvm._add_dst):
        mark(fn, "_learn_one: bookkeeping")
    mark(ktvm._learn_one, "_learn_one: candidate choice (cached pairs)")
    mark(ktvm._learn_one, "_learn_one: place twins + transfer call", "# ---- UpdateTVM",
         "# ---- bookkeeping of the twin indices")
    mark(ktvm._learn_one, "_learn_one: bookkeeping", "# ---- bookkeeping of the twin indices")
    mark(ktvm.tvm_partial_fit, "scoring loop")
    mark(kk.kernel_expansion_at, "kernel expansion f(x) over the twins")
    mark(kk.kernel_row_at, "kernel row")
    mark(ktvm.twin_decision, "rejection test f(q_new)")
    for fn in (mg.nn_row, mg.nn_row_input, mg._costs_from_d2, mg._costs_from_q, mg._best_two):
        mark(fn, "nn: full rows")
    mark(mg.nn_update, "nn: compare with changed twins / bookkeeping")
    return comp, resolve


# function -> component (function-level, with --lines refined inside)
GROUPS = [
    ("scoring (Beneficial)", ["tvm.tvm_partial_fit"]),
    ("candidate choice + rejection", ["tvm._learn_one@choice", "tvm._merge_ok", "merge.merge_point",
                                      "merge.sorted_pairs", "merge._sift", "merge.feature_merge",
                                      "merge._feature_cost"]),
    ("engine transfer path", ["tvm._learn_one@transfer", "tvm._place_twin", "tvm._place_twin_at",
                              "adiabatic.run_path", "adiabatic._s_add",
                              "jacobian.r_grow", "jacobian.r_swap", "jacobian.r_shrink_last",
                              "adiabatic._new_column_residual", "jacobian.r_rebuild",
                              "jacobian.build_J", "jacobian.invert_into", "kernel.kernel_row_at"]),
    ("_sync: g refresh, drift check, coef/f(q)", ["tvm._learn_one@sync", "adiabatic.refresh",
                                                  "adiabatic.check_drift", "jacobian.jr_residual",
                                                  "adiabatic._f_all", "adiabatic._coef_into"]),
    ("nn cache (nn_update, nn_row)", ["merge.nn_update", "merge.nn_row", "merge.nn_row_input"]),
    ("NRT_incref/decref", ["NRT_incref", "NRT_decref"]),
]


def _fkey(short):
    p = short.split(".")
    return ".".join(p[-2:]) if len(p) >= 2 else short


def analyze(outdir):
    meta = json.load(open(os.path.join(outdir, "meta.json")))
    lines = json.load(open(os.path.join(outdir, "lines.json")))
    syms = [tuple(s) for s in meta["syms"]]
    starts = [s[0] for s in syms]

    def find(ip):
        i = bisect.bisect_right(starts, ip) - 1
        if i >= 0:
            addr, size, name, short, _ = syms[i]
            if ip < addr + max(size, 1):
                return addr, name, short
        return None

    comp, resolve = _src_ranges() if meta["lines"] else ({}, None)
    on_insn = Counter()  # leaf samples on / off an instruction start of the line table

    def classify(addr, name, short, ip):
        key = _fkey(short)
        part = None
        if name in lines:
            offs, locs = lines[name]
            j = bisect.bisect_right(offs, ip - addr) - 1
            if j >= 0:
                fl, ln = locs[j]
                fn = resolve(short.split(".")[-1], ln)
                part = comp.get((fn, ln), f"{fn or os.path.basename(fl)}:{ln}")
        if key == "tvm._learn_one":
            if part is None:
                sub = "transfer"
            elif "candidate choice" in part:
                sub = "choice"
            elif part.startswith("_sync"):
                sub = "sync"
            else:
                sub = "transfer"
            key = f"tvm._learn_one@{sub}"
        return key, part
    fn_cnt = Counter()
    part_cnt = Counter()  # (function key, component)
    helper = Counter()  # leaf helpers charged to compiled callers
    n_total = n_jit = n_other = 0
    other = Counter()
    blocks = open(os.path.join(outdir, "samples.txt")).read().split("\n\n")
    ipre = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
    for b in blocks:
        frames = []
        for line in b.strip().splitlines():
            m = ipre.match(line)
            if m:
                frames.append((int(m.group(1), 16), m.group(2), m.group(3)))
        if not frames:
            continue
        n_total += 1
        hit = None
        leaf_helper = None
        for k, (ip, sym, dso) in enumerate(frames):
            f = find(ip)
            if f:
                # a return address points after the call: look one byte back
                hit = (f, ip if k == 0 else ip - 1)
                break
            if k == 0:
                leaf_helper = f"{sym.split('+')[0]} ({os.path.basename(dso)})"
        if hit is None:
            n_other += 1
            other[f"{frames[0][1].split('+')[0]} ({os.path.basename(frames[0][2])})"] += 1
            continue
        n_jit += 1
        (addr, name, short), ip = hit
        key, part = classify(addr, name, short, ip)
        if name in lines and not leaf_helper and lines[name][0]:
            offs = lines[name][0]
            j = bisect.bisect_left(offs, ip - addr)
            on_insn[j < len(offs) and offs[j] == ip - addr] += 1
        if leaf_helper:
            helper[(key, leaf_helper)] += 1
        fn_cnt[key] += 1
        part_cnt[(key, part)] += 1
    # refcount samples charged to the compiled function (and line) that called NRT_*
    nrt_by = Counter()
    nrt_part = Counter()
    for ret in meta.get("nrt_returns", []):
        f = find(ret - 1)
        if f is None:
            nrt_by["(unknown caller)"] += 1
            continue
        key, part = classify(f[0], f[1], f[2], ret - 1)
        nrt_by[key] += 1
        nrt_part[(key, part)] += 1

    c = meta["counts"]
    acc = c["accepted"]
    wall, comp_t = meta["wall_partial_fit"], meta["wall_compiled"]
    py = wall - comp_t
    out = []
    w = out.append
    w(f"samples: {n_total} ({n_jit} in compiled code incl. its helpers, {n_other} elsewhere)")
    w(f"partial_fit wall {wall:.2f} s, compiled call {comp_t:.2f} s, Python overhead "
      f"{py:.3f} s = {100 * py / wall:.2f} % ({1e3 * py / c['chunks']:.1f} ms per chunk of "
      f"{c['n'] // c['chunks']:,}); floor (twin_decision_batch, all {c['n']:,}) {meta['floor']:.3f} s "
      f"= {100 * meta['floor'] / wall:.1f} % of partial_fit; accuracy {100 * meta['accuracy']:.2f} %")
    w("")
    nrt_tot = fn_cnt["NRT_incref"] + fn_cnt["NRT_decref"]
    nrt_n = max(sum(nrt_by.values()), 1)

    def incl(keys):
        """own samples + the NRT samples of the keys' calls (scaled to all NRT samples)"""
        return sum(fn_cnt[k] for k in keys if not k.startswith("NRT_")) + \
            nrt_tot * sum(nrt_by[k] for k in keys) / nrt_n

    w("| component | own code % | incl. the refcounting it causes % |")
    w("|---|---|---|")
    scale = comp_t / wall / max(n_jit, 1)
    done = set()
    for gname, keys in GROUPS:
        s = sum(fn_cnt[k] for k in keys)
        done.update(keys)
        w(f"| {gname} | {100 * s * scale:.1f} | {100 * incl(keys) * scale:.1f} |")
        for k in keys:
            if fn_cnt[k] or nrt_by[k]:
                w(f"|   {k} | {100 * fn_cnt[k] * scale:.1f} | {100 * incl([k]) * scale:.1f} |")
    rest = {k: v for k, v in fn_cnt.items() if k not in done}
    for k, v in sorted(rest.items(), key=lambda kv: -kv[1]):
        w(f"| other compiled: {k} | {100 * v * scale:.1f} | {100 * incl([k]) * scale:.1f} |")
    w(f"| Python overhead per chunk (partial_fit - compiled call) | {100 * py / wall:.1f} | "
      f"{100 * py / wall:.1f} |")
    if nrt_by:
        w("")
        w(f"NRT_incref/decref samples by calling function ({sum(nrt_by.values())} with a "
          "return address), % of partial_fit:")
        for k, v in nrt_by.most_common(12):
            w(f"  {k:45s} {100 * nrt_tot * v / nrt_n * scale:.1f}")
        if meta["lines"]:
            w("  by calling line:")
            for (k, part), v in nrt_part.most_common(15):
                w(f"    {k} / {part}: {100 * nrt_tot * v / nrt_n * scale:.1f}")
    w("")
    w("helpers (leaf outside the compiled code) charged to their compiled caller, % of partial_fit:")
    for (k, h), v in helper.most_common(12):
        w(f"  {k:40s} {h:40s} {100 * v * scale:.1f}")
    if other:
        w("samples outside compiled code (Python, numpy, perf attach), top: " +
          ", ".join(f"{k} {v}" for k, v in other.most_common(6)))
    if meta["lines"]:
        w("")
        w(f"line table check: {100 * on_insn[True] / max(sum(on_insn.values()), 1):.1f} % of the "
          "sampled addresses are instruction starts of the object file (near 100 % when the "
          "object is the loaded code)")
        w("| inside (--lines) | share of partial_fit time % |")
        w("|---|---|")
        for (k, part), v in sorted(part_cnt.items(), key=lambda kv: -kv[1]):
            if 100 * v * scale >= 0.2:
                w(f"| {k} / {part} | {100 * v * scale:.1f} |")
    w("")
    nS = c["nS_at_chunk_ends"]
    w(f"counts: seen {c['seen']:,}, accepted {acc:,} ({100 * acc / c['seen']:.1f} %), merges "
      f"{c['merges']:,}, removed beyond m2 {c['removed']:,}, dropped (rejection) {c['rejected']:,}, "
      f"R rebuilds {c['rebuilds']}, refused growths {c['refused']}")
    w(f"per accepted example: adiabatic steps {c['steps'] / acc:.2f}, nn rows recomputed in full "
      f"{c['nn_rows'] / acc:.2f}, merge candidates tried {c['tries'] / acc:.2f}, exact g refresh "
      f"every {c['check_every']} updates; slots hw = {c['hw']}, |S| at chunk ends "
      f"{min(nS)}-{max(nS)} (mean {np.mean(nS):.0f})")
    txt = "\n".join(out)
    print(txt)
    with open(os.path.join(outdir, "breakdown.txt"), "w") as f:
        f.write(txt + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--budget", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--chunk", type=int, default=100_000)
    p.add_argument("--freq", type=int, default=2999, help="perf sampling frequency (Hz)")
    p.add_argument("--data", choices=["checkerboard", "ijcnn", "adult"], default="checkerboard",
                   help="the stream: N-Checkerboard (d = 2), or passes over IJCNN (d = 22) or "
                        "Adult (d = 123) training rows")
    p.add_argument("--data-dir", default="../shared/data", help="folder of the data sets")
    p.add_argument("--lines", action="store_true", help="debug-info build: shares inside functions")
    p.add_argument("--out", default=None, help="directory for perf.data and the raw samples")
    p.add_argument("--analyze", default=None, metavar="DIR", help="only analyse a saved run")
    a = p.parse_args(argv)
    if a.analyze:
        analyze(a.analyze)
        return
    if shutil.which("perf") is None:
        sys.exit("perf not found (apt-get install linux-perf)")
    try:
        outdir = run(a)
        analyze(outdir)
    finally:
        cache = os.environ.get("NUMBA_CACHE_DIR", "")
        if os.path.basename(cache).startswith("fastbudget_prof_cache_"):
            shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
