"""Consistency of a loaded model state: the invariants every learner keeps between calls.

``persist.load_model`` checks the layout of a file's arrays (shapes, dtypes, indices inside
the preallocated arrays: ``_check_state`` and ``engine.check_state_arrays``) and then calls
:func:`check_invariants`, which checks what a state that passed its checksum must also
satisfy to be one the learner could have reached: the slot sets of an exact-SVM engine are
disjoint and agree with their index lists, multipliers lie within their bounds, counters
agree with what they count, the margin target and the kernel parameters are positive. A
hand-edited file that breaks one would load and fail later (a ``ZeroDivisionError`` in
Span's step, ``IndexError: Slot 4 holds no example.``, a ``NumericalError``) or predict
nonsense; it is refused at ``load`` with a ``ValueError`` naming the broken invariant
(``load`` raises it as ``ModelFormatError``).

The checks cost O(size of the state), as reading it does.
"""
import numpy as np

from .kernels import adiabatic as ad
from .kernels.kernel import KERNEL_CODES

# relative round-off allowed where an invariant compares floats that the solver computed
# (a multiplier at its bound, the equality constraint)
_ROUND = 1e-6


def _bad(msg):
    raise ValueError(msg)


def engine_invariants(get, what="engine"):
    """Raise ``ValueError`` unless the exact-SVM engine arrays ``get(field)`` (laid out as
    ``engine.check_state_arrays`` checks) hold a state the engine can be in between two
    operations."""
    status, S_idx, spos, ist = get("status"), get("S_idx"), get("spos"), get("ist")
    n = status.shape[0]
    if ist is not None:
        hw, ns = int(ist[ad.I_HW]), int(ist[ad.I_NS])
        if (status[hw:] != ad.FREE).any():
            _bad(f"{what}: slot {hw + int(np.argmax(status[hw:] != ad.FREE))} is live but lies "
                 f"beyond the high-water mark ist[{ad.I_HW}] = {hw}")
        if int(ist[ad.I_CHECK_EVERY]) < 1:
            _bad(f"{what}: drift-check period ist[{ad.I_CHECK_EVERY}] = "
                 f"{int(ist[ad.I_CHECK_EVERY])} is not positive")
        if int(ist[ad.I_PAIRED]) not in (0, 1):
            _bad(f"{what}: ist[{ad.I_PAIRED}] (paired slots) is {int(ist[ad.I_PAIRED])}, not 0 "
                 "or 1")
        for i in (ad.I_NOPS, ad.I_NREBUILD, ad.I_NREFUSED, ad.I_NSTEPS):
            if int(ist[i]) < 0:
                _bad(f"{what}: counter ist[{i}] = {int(ist[i])} is negative")
    else:
        ns = int((status == ad.MARGIN).sum())
    if (status == ad.CAND).any():
        _bad(f"{what}: slot {int(np.argmax(status == ad.CAND))} is marked as the candidate of "
             "an unfinished operation")
    margin = np.flatnonzero(status == ad.MARGIN)
    if S_idx is not None:
        listed = S_idx[:ns]
        if np.unique(listed).shape[0] != ns:
            _bad(f"{what}: the margin set S_idx[:{ns}] lists a slot twice")
        if margin.shape[0] != ns or not np.array_equal(np.sort(listed), margin):
            _bad(f"{what}: the margin set S_idx[:{ns}] = {_few(listed)} is not the set of slots "
                 f"of margin status {_few(margin)}")
        if (S_idx[ns:] != -1).any():
            _bad(f"{what}: S_idx holds slot numbers beyond the margin set size {ns}")
        if spos is not None:
            want = np.full(n, -1, dtype=np.int64)
            want[listed] = np.arange(ns)
            if not np.array_equal(spos, want):
                i = int(np.argmax(spos != want))
                _bad(f"{what}: spos[{i}] = {int(spos[i])}, but slot {i} is at position "
                     f"{int(want[i])} of the margin set (-1: not in it)")
    live = status != ad.FREE
    y, wt, cb, alpha = get("y"), get("wt"), get("cb"), get("alpha")
    if y is not None and not np.isin(y[live], (-1.0, 1.0)).all():
        _bad(f"{what}: a live slot has a label other than -1 and +1")
    for name, a in (("wt", wt), ("cb", cb), ("alpha", alpha)):
        if a is not None and (a < 0).any():
            _bad(f"{what}: array {name!r} holds a negative value at slot "
                 f"{int(np.argmax(a < 0))}")
    if alpha is not None:
        if (alpha[~live] != 0).any():
            _bad(f"{what}: free slot {int(np.argmax((alpha != 0) & ~live))} holds a multiplier "
                 "(alpha != 0)")
        if cb is not None:
            tol = _ROUND * np.maximum(cb, 1.0)
            over = alpha > cb + tol
            if over.any():
                i = int(np.argmax(over))
                _bad(f"{what}: alpha[{i}] = {alpha[i]:.6g} exceeds its bound cb[{i}] = "
                     f"{cb[i]:.6g}")
            err = status == ad.ERROR
            if (np.abs(alpha[err] - cb[err]) > tol[err]).any():
                i = int(np.flatnonzero(err)[np.argmax(np.abs(alpha[err] - cb[err]) > tol[err])])
                _bad(f"{what}: error-set slot {i} has alpha {alpha[i]:.6g} below its bound "
                     f"{cb[i]:.6g}")
            zero = (status == ad.RESERVE) | (status == ad.ZERO)
            if (alpha[zero] != 0).any():
                i = int(np.flatnonzero(zero)[np.argmax(alpha[zero] != 0)])
                _bad(f"{what}: slot {i} is in the reserve set but holds alpha {alpha[i]:.6g}")
    fs = get("fs")
    if fs is not None:
        if not fs[ad.F_MU] > 0:
            _bad(f"{what}: the margin target fs[{ad.F_MU}] = {fs[ad.F_MU]!r} is not positive")
        if not fs[ad.F_C] > 0:
            _bad(f"{what}: C fs[{ad.F_C}] = {fs[ad.F_C]!r} is not positive")
    kpar = get("kpar")
    if kpar is not None and ist is not None:
        _kernel_params(int(ist[ad.I_KCODE]), kpar, what)
    tol = get("tol")
    if tol is not None and not (tol[:3] > 0).all():
        _bad(f"{what}: a tolerance tol[:3] = {tol[:3].tolist()} is not positive")


def _kernel_agrees(est, state, ist, kpar, what):
    """The engine's kernel (``ist[I_KCODE]``, ``kpar = [gamma, degree, coef0]``) is the one
    the stored parameters name: the engine scores with its own, so a file whose parameters
    say another kernel would load, report one kernel and use the other."""
    kernel = getattr(est, "kernel", None)
    if kernel not in KERNEL_CODES or not isinstance(ist, np.ndarray) or \
            not isinstance(kpar, np.ndarray) or kpar.shape != (3,):
        return
    if int(ist[ad.I_KCODE]) != KERNEL_CODES[kernel]:
        _bad(f"{what}: the stored parameters name the {kernel!r} kernel, but the state's "
             f"kernel code ist[{ad.I_KCODE}] = {int(ist[ad.I_KCODE])} is "
             f"{_KERNEL_NAMES.get(int(ist[ad.I_KCODE]), 'unknown')!r}")
    _kpar_agrees(est, state.get("gamma_"), kpar, what)


def _kpar_agrees(est, gamma_, kpar, what):
    """``kpar = [gamma, degree, coef0]`` of a state is the stored parameters' (gamma: the
    parameter when it is a number, else the stored ``gamma_`` when there is one)."""
    gamma = getattr(est, "gamma", None)
    if isinstance(gamma, (int, float, np.number)) and not isinstance(gamma, bool):
        gamma_ = gamma
    expect = [kpar[0] if gamma_ is None else gamma_, est.degree, est.coef0]
    for i, (name, value) in enumerate(zip(("gamma", "degree", "coef0"), expect)):
        if float(kpar[i]) != float(value):
            _bad(f"{what}: the stored parameters give the kernel's {name} {float(value)!r}, "
                 f"but the state's kpar[{i}] is {float(kpar[i])!r}")


_KERNEL_NAMES = {v: k for k, v in KERNEL_CODES.items()}


def _kernel_params(code, kpar, what):
    if code != KERNEL_CODES["linear"] and not kpar[0] > 0:
        _bad(f"{what}: kernel gamma {kpar[0]!r} is not positive")
    if code == KERNEL_CODES["poly"] and not (kpar[1] >= 1 and float(kpar[1]).is_integer()):
        _bad(f"{what}: polynomial degree {kpar[1]!r} is not a positive integer")


def _few(a, k=6):
    a = np.asarray(a).tolist()
    return str(a[:k])[:-1] + (", ...]" if len(a) > k else "]")


def _engines(state):
    """The engine prefixes in ``state`` (as ``persist._check_engines`` finds them)."""
    out = []
    for key in state:
        prefix = key[:-len("status")]
        if key.endswith("status") and prefix + "S_idx" in state and prefix + "X" in state:
            out.append(prefix)
    return out


def check_invariants(est, state):
    """Raise ``ValueError`` unless ``state`` (the learner's ``_get_state()`` as read from a
    file, its layout already checked) is consistent: every engine in it
    (:func:`engine_invariants`), and what the learner's class adds
    (``_LEARNER_CHECKS``; a one-vs-rest model checks each of its learners' states)."""
    for prefix in _engines(state):
        what = f"engine {prefix[:-1] if prefix.endswith('_') else prefix!r}"
        engine_invariants(lambda f: state.get(prefix + f), what)
        if "." not in prefix:                   # (a one-vs-rest learner's: below)
            _kernel_agrees(est, state, state.get(prefix + "ist"), state.get(prefix + "kpar"),
                           what)
    if type(est).__name__ == "OneVsRestClassifier":
        import re
        subs = {}
        for key, v in state.items():
            m = re.match(r"^e(\d+)\.(.+)$", key)
            if m:
                subs.setdefault(int(m.group(1)), {})[m.group(2)] = v
        check = _LEARNER_CHECKS.get(type(est.estimator).__name__)
        for k, sub in sorted(subs.items()):
            learner = est._new_learner()             # (with its share of total_budget)
            learner.n_features_in_ = int(est.n_features_in_)
            for prefix in _engines(sub):
                _kernel_agrees(learner, sub, sub.get(prefix + "ist"), sub.get(prefix + "kpar"),
                               f"learner {k}'s engine")
            if check is not None:
                check(learner, sub)
        return
    check = _LEARNER_CHECKS.get(type(est).__name__)
    if check is not None:
        check(est, state)


_LEARNER_CHECKS = {}


def _learner(name):
    def deco(f):
        _LEARNER_CHECKS[name] = f
        return f
    return deco


def _kpar_of(est, kpar, what="kernel parameters _kpar"):
    """A baseline's ``_kpar = [gamma, degree, coef0]`` (gamma 0: not resolved yet), which
    its kernels read instead of the parameters."""
    if isinstance(kpar, np.ndarray) and kpar.shape == (3,) and kpar[0] != 0:
        _kernel_params(KERNEL_CODES.get(est.kernel, -1), kpar, what)
        _kpar_agrees(est, None, kpar, what)


def _sv_counts(state, what):
    """``_istate = [n_live, head, n_seen, n_mistakes]`` of the perceptron-style learners."""
    ist = state.get("_istate")
    if not isinstance(ist, np.ndarray) or ist.shape != (4,):
        return
    n_live, head, n_seen, n_m = (int(v) for v in ist)
    if n_m > n_seen:
        _bad(f"{what}: {n_m} mistakes counted among {n_seen} examples seen")
    if n_live > n_m:
        _bad(f"{what}: {n_live} support vectors stored but only {n_m} mistakes made")
    t = state.get("_sv_t")
    if isinstance(t, np.ndarray) and t.shape[0] >= n_live and n_live:
        live = t[:n_live]
        if (live < 0).any() or (live >= max(n_seen, 1)).any():
            _bad(f"{what}: an arrival time _sv_t[:{n_live}] lies outside [0, {n_seen})")


@_learner("PerceptronClassifier")
def _perceptron(est, state):
    _kpar_of(est, state.get("_kpar"))
    ist = state.get("_istate")
    if isinstance(ist, np.ndarray) and ist.shape == (2,) and ist[1] > ist[0]:
        _bad(f"Perceptron: {int(ist[1])} mistakes counted among {int(ist[0])} examples seen")
    _sv_counts(state, "Perceptron")


@_learner("ForgetronClassifier")
def _forgetron(est, state):
    _kpar_of(est, state.get("_kpar"))
    _sv_counts(state, "Forgetron")
    ist = state.get("_istate")
    if isinstance(ist, np.ndarray) and ist.shape == (4,):
        n_live, head = int(ist[0]), int(ist[1])
        if n_live and head >= n_live:
            _bad(f"Forgetron: the oldest support vector _istate[1] = {head} is not one of the "
                 f"{n_live} stored")
    # (the accumulated damage Q may be negative: a removal adds lam^2 + 2 lam - 2 lam phi mu',
    # below 0 when phi mu' > 1 + lam / 2, which the poly kernel reaches)


@_learner("PegasosClassifier")
def _pegasos(est, state):
    ist = state.get("_istate")
    if isinstance(ist, np.ndarray) and ist.shape == (3,):
        n_buf, t, n_seen = (int(v) for v in ist)
        if n_buf > n_seen:
            _bad(f"Pegasos: {n_buf} examples buffered but {n_seen} seen")
        yb = state.get("_yb")
        if isinstance(yb, np.ndarray) and not np.isin(yb[:n_buf], (-1.0, 1.0)).all():
            _bad("Pegasos: a buffered label is not -1 or +1")
        sb = state.get("_sb")
        if isinstance(sb, np.ndarray) and (sb[:n_buf] < 0).any():
            _bad("Pegasos: a buffered sample weight is negative")


@_learner("BSGDClassifier")
def _bsgd(est, state):
    _kpar_of(est, state.get("_kpar"))
    ist = state.get("_istate")
    if isinstance(ist, np.ndarray) and ist.shape == (4,):
        n_live, t, n_seen, n_maint = (int(v) for v in ist)
        if n_live > n_seen:
            _bad(f"BSGD: {n_live} support vectors stored but {n_seen} examples seen")
        if n_maint > t:
            _bad(f"BSGD: {n_maint} budget maintenance steps counted in {t} steps")
        stamps = state.get("_sv_t")
        if isinstance(stamps, np.ndarray) and stamps.shape[0] >= n_live and n_live:
            live = stamps[:n_live]
            if (live < 0).any() or (live > t).any():
                _bad(f"BSGD: a time stamp _sv_t[:{n_live}] lies outside [0, {t}]")


@_learner("RandomBudgetClassifier")
def _random(est, state):
    _kpar_of(est, state.get("_kpar"))
    ist, eslot, ry, rw = (state.get(k) for k in ("_istate", "_eslot", "_Ry", "_Rw"))
    status = state.get("_eng_status")
    if not (isinstance(ist, np.ndarray) and ist.shape == (2,)):
        return
    n_res, n_seen = int(ist[0]), int(ist[1])
    if n_res > n_seen:
        _bad(f"Random: {n_res} examples in the reservoir but {n_seen} seen")
    if isinstance(ry, np.ndarray) and not np.isin(ry[:n_res], (-1.0, 1.0)).all():
        _bad("Random: a reservoir label is not -1 or +1")
    if isinstance(rw, np.ndarray) and (rw[:n_res] < 0).any():
        _bad("Random: a reservoir weight is negative")
    if isinstance(eslot, np.ndarray) and isinstance(status, np.ndarray):
        used = eslot[:n_res][eslot[:n_res] >= 0]
        if used.size and (used.max() >= status.shape[0]):
            _bad("Random: _eslot points outside the engine")
        if np.unique(used).size != used.size:
            _bad("Random: two reservoir examples share one engine slot (_eslot)")
        if used.size and (status[used] == ad.FREE).any():
            _bad("Random: _eslot points to a free engine slot")


@_learner("TVMClassifier")
def _tvm(est, state):
    if not state.get("allocated", False):
        return
    par = state.get("twin_par")
    if isinstance(par, np.ndarray) and par.ndim == 1:
        # the slots the hyper-parameters fix (a file from before an option holds that
        # option's default there; a shorter par predates the slot)
        for slot, value in est._par_slots().items():
            if slot < par.shape[0] and par[slot] != value:
                _bad(f"TVM: the stored parameters give twin_par[{slot}] = {value!r}, but the "
                     f"state holds {float(par[slot])!r}: the parameters are not the ones "
                     "the model was trained with")
    active, ist = state.get("twin_active"), state.get("twin_ist")
    status = state.get("engine_status")
    if not all(isinstance(a, np.ndarray) for a in (active, ist, status)):
        return
    n = active.shape[0]
    pairs = status.reshape(-1, 2) if status.shape[0] == 2 * n else None
    if pairs is not None:
        on = active.astype(bool)
        # (an inactive twin's slots are free, or hold a point with a zero bound: a spare)
        off = (pairs[~on] != ad.FREE) & (pairs[~on] != ad.ZERO)
        if off.any():
            t = int(np.flatnonzero(~on)[np.argmax(off.any(axis=1))])
            _bad(f"TVM: twin {t} is inactive but its engine slots {2 * t}, {2 * t + 1} hold "
                 "multipliers")
        if (pairs[on] == ad.FREE).any():
            t = int(np.flatnonzero(on)[np.argmax((pairs[on] == ad.FREE).any(axis=1))])
            _bad(f"TVM: twin {t} is active but an engine slot of it is free")
    for f in ("s_pos", "s_neg", "s_tot"):
        a = state.get("twin_" + f)
        if isinstance(a, np.ndarray) and a.shape == (n,) and (a[active == 1] < 0).any():
            _bad(f"TVM: an active twin has a negative weight {f}")
    on = np.flatnonzero(active == 1)
    for f in ("nn_idx", "nn2_idx"):
        a = state.get("twin_" + f)
        if isinstance(a, np.ndarray) and a.shape == (n,) and on.size:
            part = a[on]
            bad = (part == on) | ((part >= 0) & (active[np.clip(part, 0, n - 1)] != 1))
            if bad.any():
                t = int(on[np.argmax(bad)])
                _bad(f"TVM: the merge neighbour {f}[{t}] = {int(a[t])} of active twin {t} is "
                     "itself or not an active twin")
    for t in (int(ist[6]), int(ist[7])):         # the spare twins are inactive
        if 0 <= t < n and active[t] == 1:
            _bad(f"TVM: spare twin {t} is marked active")


@_learner("SpanBudgetClassifier")
def _span(est, state):
    if not state.get("allocated", False):
        return
    from .kernels import span as ks
    cnt = state.get("work_cnt")
    status = state.get("engine_status")
    if isinstance(cnt, np.ndarray) and cnt.shape == (ks.N_CNT,):
        if (cnt < 0).any():
            _bad(f"Span: a counter work_cnt = {cnt.tolist()} is negative")
        seen = int(cnt[ks.C_SEEN])
        for i, name in ((ks.C_TRIG, "triggered"), (ks.C_ADDED, "added"),
                        (ks.C_SWAP, "swapped"), (ks.C_REJECT, "rejected")):
            if int(cnt[i]) > seen:
                _bad(f"Span: {int(cnt[i])} arrivals {name} but {seen} seen")
        age = state.get("work_age")
        if isinstance(age, np.ndarray) and isinstance(status, np.ndarray) \
                and age.shape == status.shape:
            live = status != ad.FREE
            if (age[live] < 0).any() or (age[live] > seen).any():
                _bad(f"Span: the arrival time of a stored example lies outside [0, {seen}]")


@_learner("SVIncrementalClassifier")
def _svincremental(est, state):
    for k in ("n_batches_", "n_seen_", "n_retries_"):
        v = state.get(k)
        if v is not None and not (isinstance(v, (int, float)) and v >= 0):
            _bad(f"SV-incremental: {k} = {v!r} is not a non-negative number")
    L = state.get("L_")
    if L is not None and not (isinstance(L, (int, float)) and L >= 0):
        _bad(f"SV-incremental: L_ = {L!r} is not None or a non-negative number")


@_learner("StreamSVMClassifier")
def _streamsvm(est, state):
    from .kernels import meb
    ist = state.get("st_ist")
    if not (isinstance(ist, np.ndarray) and ist.shape == (meb.IST_SIZE,)):
        return
    m, nbuf, seen = int(ist[meb._IST_M]), int(ist[meb._IST_NBUF]), int(ist[meb._IST_NSEEN])
    for i, what in ((meb._IST_M, "core vectors"), (meb._IST_NBUF, "buffered points"),
                    (meb._IST_NSKIPPED, "skipped examples")):
        if int(ist[i]) > seen:
            _bad(f"StreamSVM: {int(ist[i])} {what} but {seen} examples seen")
    for key, n in (("st_sv_s", m), ("st_bufs", nbuf), ("st_Rb", None),
                   ("st_xib", None)):
        a = state.get(key)
        if isinstance(a, np.ndarray):
            part = a if n is None else a[:n]
            if (part < 0).any():
                _bad(f"StreamSVM: {key[3:]!r} holds a negative value")
    y = state.get("st_bufy")
    if isinstance(y, np.ndarray) and not np.isin(y[:nbuf], (-1.0, 1.0)).all():
        _bad("StreamSVM: a buffered label is not -1 or +1")
