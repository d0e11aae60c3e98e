"""Exact incremental / decremental SVM steps (Cauwenberghs & Poggio 2000, paper 003).

The state is a :class:`EngineState` named tuple of arrays allocated once for a capacity
``n`` of weighted examples ("slots"). Every function here mutates that state in place and
returns an integer status (``OK`` or one of the failure codes); none of them raises.

Dual problem with per-example bounds ``cb_i = C0 * w_i`` and a margin target mu::

    min_{0 <= alpha_i <= cb_i}  1/2 sum_ij alpha_i Q_ij alpha_j - mu sum_i alpha_i + b sum_i y_i alpha_i

KT conditions (eq. 2 of paper 003): ``g_i = y_i f(x_i) - mu`` is > 0 for alpha_i = 0 (set R),
= 0 for 0 < alpha_i < cb_i (margin set S), < 0 for alpha_i = cb_i (error set E).
A slot with ``cb_i = 0`` (status Z) carries no constraint.

The margin target is how C changes: substituting alpha = mu alpha_C shows that this problem
is the ordinary SVM (margin 1) with ``C = C0 / mu``, whose multipliers, bias and decision
function are the stored ones divided by mu. Changing C is therefore a path in mu alone
(no bound moves, no error vector is driven), which costs O(n |S|) per step.

Every operation is one *path* in which a set of driven multipliers moves linearly in a
parameter t while the margin set absorbs the change through R = J^-1 (eq. 9-12), split at
the bookkeeping events of Sec. 2.3:

- ADD: alpha_c grows from 0 until g_c = 0 (c joins S) or alpha_c = cb_c (c joins E).
- REMOVE: alpha_c shrinks to 0 (decremental unlearning, Sec. 3).
- BOUNDS: the bounds of a few listed slots move by ``dcb`` and mu moves by ``dmu``
  (t from 0 to 1); multipliers at their bound (E) follow it (regularization-parameter
  perturbation, Diehl & Cauwenberghs 2003). This is how reweighting, changing C and
  merging twin vectors work.

With an empty margin set the equality constraint pins the driven multipliers, so only b
moves until the first example reaches the margin (the "S empty" trap in DESIGN.md).

Reference counts: a compiled function that receives the state tuple increments and
decrements (atomically) the reference count of each member array it uses, and again for
each member it binds to a local name; an inlined helper does the same for its parameters.
LLVM removes such pairs only within short call-free stretches of code, so on the hot paths
they cost as much as the arithmetic. The helpers of those paths therefore take the arrays
they use (``decision_at_slot``, ``place_at``, ``_s_add``, ...), and ``run_path`` binds each
array once for the whole path.

Compile time. Numba builds one LLVM module per compiled function and signature, links into it
the code of every compiled function it calls, and optimises and emits the whole of it again;
so the code of ``run_path`` (the largest function) is processed once for each compiled
function above it. Hence: the thin wrappers around paths (``_activate``, ``_deactivate``,
``_add``, ``_finish``, ``_certify``, ``bounds_path``, ``transfer``) are inlined
(``inline="always"``) into the few operations that use them instead of each being a
compiled function of its own; ``run_path``, called from three places, is compiled once. Every
call passes int64 values, never a literal: Numba compiles a function again for each literal
argument (``run_path(st, ADD, c)`` was four functions), so constants are passed as
``np.int64(ADD)`` / ``np.bool_(True)`` and variables that start at a literal (``j = -1``) are
typed int64 from the start. The repair of a failed KT certificate (``_repair``), cold code,
is compiled once, apart, and only by a process that needs it: the operations return
NEEDS_REPAIR and their caller runs :func:`repair` (see ``_certify``).
"""
from collections import namedtuple

import numpy as np
from ._jit import njit

from .jacobian import (SINGULAR, jr_residual, jr_residual_into, r_first, r_grow, r_mul_neg,
                       r_rebuild, r_shrink_last, r_swap)
from .kernel import LINEAR, POLY, kernel_at, kernel_row_at, kernel_value

# slot status codes
FREE = 0
MARGIN = 1  # S
ERROR = 2  # E
RESERVE = 3  # R
ZERO = 4  # live, zero bound: no constraint
CAND = 5  # the candidate being added or removed, during a path

# status codes returned by the operations
OK = 0
NO_CONVERGENCE = 2
STUCK = 3
NOT_FINITE = 4
KT_VIOLATED = 5  # the operation ended with the KT conditions violated (see _certify)
# the operation ended in a consistent state whose KT certificate failed: the caller finishes
# it with ``repair`` (a compiled function of its own, see ``_certify``), which returns OK or
# KT_VIOLATED. Never returned by ``repair`` itself.
NEEDS_REPAIR = 6

# largest KT violation (margin units) an operation may leave, plus a round-off allowance of
# KT_ROUND_OFF times the scale of the decision values (see _certify)
KT_CERT = 1e-6
KT_ROUND_OFF = 1e-9
# examples relearned (unlearned and learned again) to repair a violated certificate
REPAIR_TRIES = 3

# growths of S whose relative pivot gamma_kk / scale is below this have the new column of R
# checked against J R = I (drift amplified by 1 / pivot), and R rebuilt when it drifted
PIVOT_CHECK = 1e-4
# ... and below this, the whole of R is checked at the end of the operation
PIVOT_FULL_CHECK = 1e-5

# path modes
ADD = 0
REMOVE = 1
BOUNDS = 2

# indices into the integer scalar array ``ist``
I_KCODE = 0
I_NS = 1  # size of the margin set
I_HW = 2  # high-water mark: slots [0, hw) may be live
I_NOPS = 3  # operations since the last drift check
I_NREBUILD = 4  # rebuilds of R from scratch (drift or singularity)
I_NREFUSED = 5  # singular growths refused
I_CHECK_EVERY = 6  # drift check period, in operations
I_NSTEPS = 7  # adiabatic steps taken in total
I_NSPARSE = 8  # slots listed in ``sparse`` for a BOUNDS path
I_PAIRED = 9  # 1: live slots 2t and 2t + 1 always hold the same point (twin vectors)
N_IST = 10

# indices into the float scalar array ``fs``
F_B = 0  # bias b (in mu units: the SVM's bias is b / mu)
F_C = 1  # C0: bounds are C0 * w_i; the SVM's C is C0 / mu
F_LAST_JR = 2  # last measured max|J R - I|
F_MU = 3  # margin target mu
F_DMU = 4  # change of mu over the current BOUNDS path
F_NLAZY = 5  # operations since the last exact ``refresh`` (a count; see ``_finish_lazy``)
N_FS = 6

# indices into the tolerance array ``tol``
T_RATE = 0  # sensitivities smaller than this are treated as zero
T_SINGULAR = 1  # relative threshold on gamma_kk below which growth is refused
T_DRIFT = 2  # rebuild R when max|J R - I| exceeds this
N_TOL = 4

EngineState = namedtuple(
    "EngineState",
    [
        "X", "y", "wt", "cb", "alpha", "g", "status", "S_idx", "spos", "R", "K",
        "kpar", "fs", "ist", "tol",
        # work buffers
        "beta", "v", "gam", "wv", "dcb", "skip", "sparse", "insp",
    ],
)


def alloc_state(n, d, kcode, kpar, C, tol_rate=1e-11, tol_singular=1e-8, tol_drift=1e-6,
                check_every=64):
    """Allocate an engine state for ``n`` slots of ``d`` features (the only allocation)."""
    st = EngineState(
        X=np.zeros((n, d)),
        y=np.zeros(n),
        wt=np.zeros(n),
        cb=np.zeros(n),
        alpha=np.zeros(n),
        g=np.zeros(n),
        status=np.zeros(n, dtype=np.int64),
        S_idx=np.full(n, -1, dtype=np.int64),
        spos=np.full(n, -1, dtype=np.int64),
        R=np.zeros((n + 1, n + 1)),
        K=np.zeros((n, n)),
        kpar=np.asarray(kpar, dtype=np.float64).copy(),
        fs=np.zeros(N_FS),
        ist=np.zeros(N_IST, dtype=np.int64),
        tol=np.zeros(N_TOL),
        beta=np.zeros(n + 1),
        v=np.zeros(n + 1),
        gam=np.zeros(n),
        wv=np.zeros(n),
        dcb=np.zeros(n),
        skip=np.zeros(n, dtype=np.int8),
        sparse=np.zeros(n, dtype=np.int64),
        insp=np.zeros(n, dtype=np.int8),
    )
    st.ist[I_KCODE] = kcode
    st.ist[I_CHECK_EVERY] = check_every
    st.fs[F_C] = C
    st.fs[F_MU] = 1.0
    st.tol[T_RATE] = tol_rate
    st.tol[T_SINGULAR] = tol_singular
    st.tol[T_DRIFT] = tol_drift
    return st


def state_nbytes(st):
    """Bytes held by the state arrays: a closed form of (n, d), see ``engine_nbytes``."""
    return int(sum(a.nbytes for a in st))


def engine_nbytes(n, d):
    """Closed form of the engine's memory in bytes for ``n`` slots of ``d`` features:
    ``8 * (n d + n^2 + (n + 1)^2 + 12 n + 2 (n + 1) + 21) + 2 n``."""
    return 8 * (
        n * d  # X
        + n * n  # K
        + (n + 1) * (n + 1)  # R
        + 5 * n  # y, wt, cb, alpha, g
        + 3 * n  # status, S_idx, spos (int64)
        + 3 * n  # gam, wv, dcb
        + 2 * (n + 1)  # beta, v
        + n  # sparse (int64)
        + 3 + N_FS + N_IST + N_TOL  # kpar, fs, ist, tol
    ) + 2 * n  # skip, insp (int8)


# ---------------------------------------------------------------------------- helpers
@njit(cache=True, inline="always")
def decision_at_slot(K, alpha, y, hw, b, i):
    """f(x_i) = sum_{j < hw} alpha_j y_j K_ij + b, from the cached kernel matrix (the
    state's arrays ``K``, ``alpha``, ``y``; bias ``b``)."""
    s = b
    for j in range(hw):
        a = alpha[j]
        if a != 0.0:
            s += a * y[j] * K[i, j]
    return s


@njit(cache=True, inline="always")
def decision_point(st, x):
    """f(x) for a new point ``x`` (1-D float64)."""
    _st_X = st.X
    _st_alpha = st.alpha
    _st_fs = st.fs
    _st_ist = st.ist
    _st_kpar = st.kpar
    _st_y = st.y
    hw = _st_ist[I_HW]
    code = _st_ist[I_KCODE]
    s = _st_fs[F_B]
    for j in range(hw):
        a = _st_alpha[j]
        if a != 0.0:
            s += a * _st_y[j] * kernel_value(code, _st_kpar, _st_X[j], x)
    return s


@njit(cache=True, inline="always")
def _s_remove(R, S_idx, spos, ist, j):
    """Take margin vector j out of S and shrink R (eq. 14). Modified in place."""
    nS = ist[I_NS]
    p = spos[j]
    last = nS - 1
    if p != last:
        r_swap(R, nS + 1, p + 1, last + 1)
        moved = S_idx[last]
        S_idx[p] = moved
        spos[moved] = p
    if nS > 1:
        r_shrink_last(R, nS + 1)
    S_idx[last] = -1
    spos[j] = -1
    ist[I_NS] = nS - 1


@njit(cache=True, inline="always")
def _new_column_residual(K, R, S_idx, y, k, nS, r):
    """r[i] = delta_im - (J R)[i, m] for the column m = nS + 1 that growing S by ``k`` just
    appended to R (the rest of the live block is not checked); returns max_i |r[i]|.
    ``r`` (>= nS + 2) is modified in place. O(nS^2)."""
    m = nS + 1
    worst = 0.0
    for i in range(m + 1):
        a = k if i == m else (S_idx[i - 1] if i > 0 else -1)
        if i == 0:
            s = 0.0
            for q in range(nS):
                s += y[S_idx[q]] * R[q + 1, m]
            s += y[k] * R[m, m]
        else:
            s = y[a] * R[0, m]
            for q in range(nS):
                c = S_idx[q]
                s += y[a] * y[c] * K[a, c] * R[q + 1, m]
            s += y[a] * y[k] * K[a, k] * R[m, m]
        if i == m:
            s -= 1.0
        r[i] = -s
        if abs(s) > worst:
            worst = abs(s)
    return worst


@njit(cache=True, inline="always")
def _max_margin_set(code, kpar, n, d):
    """The largest margin set whose bordered matrix [[0, y'], [y, Q]] can be nonsingular:
    one more than the dimension of the kernel's feature space (d for the linear kernel,
    the number of monomials of degree <= p for (gamma x.z + coef0)^p, unbounded for RBF).
    A larger S is singular in exact arithmetic, whatever its pivot looked like in floating
    point: nS + 1 vectors [1, phi(x_i)] in r + 1 dimensions are dependent, so
    [0; c] with c' 1 = 0 and c' Phi = 0 is a null vector. (Kernel ``code``, ``kpar``;
    ``n`` slots of ``d`` features.)"""
    if code == LINEAR:
        return d + 1
    if code == POLY:
        p = kpar[1]
        if p >= 1.0 and p == np.floor(p) and p <= 64.0:
            # monomials of degree exactly p in d variables (coef0 = 0), or of degree
            # <= p (= degree exactly p in d + 1 variables) when coef0 != 0
            nv = d + 1 if kpar[2] != 0.0 else d
            dim = 1.0
            for i in range(1, int(p) + 1):
                dim = dim * (nv - 1 + i) / i
            if dim < 1e15:
                return int(np.round(dim)) + 1
    return n + 1


@njit(cache=True, no_cpython_wrapper=True)
def _s_add(K, R, S_idx, spos, y, v, beta, ist, tol, max_s, k):
    """Try to add slot k to S and grow R (eq. 13). Returns False when k is linearly
    dependent on S (gamma_kk ~ 0), or when S already has ``max_s`` (``_max_margin_set``)
    members: R is then left untouched. (The state's arrays, not the state: see the module
    docstring.)"""
    nS = ist[I_NS]
    if nS >= max_s:
        # dependent in exact arithmetic; an ill-conditioned R can still show a pivot
        # above the round-off threshold (2-D linear kernel, 4th margin vector)
        ist[I_NREFUSED] += 1
        return False
    if nS == 0:
        r_first(R, y[k], K[k, k])
    else:
        yk = y[k]
        v[0] = yk
        for p in range(nS):
            j = S_idx[p]
            v[p + 1] = yk * y[j] * K[k, j]
        status, pivot = r_grow(R, nS, v, K[k, k], beta, tol[T_SINGULAR])
        if status == SINGULAR:
            ist[I_NREFUSED] += 1
            return False
        # The new column of R is [beta; 1] / gamma_kk, so its residual in J R = I is the old
        # drift (I - J_old R_old) v amplified by 1 / gamma_kk. A small pivot can turn
        # harmless drift into a wrong R (and then accept dependent vectors as independent):
        # check that column (O(nS^2)) and rebuild R from scratch when it has drifted.
        # Only a small relative pivot amplifies drift enough to matter (the periodic drift
        # check bounds it otherwise), so the O(nS^2) check runs only then. (Refining the
        # new column alone does not work: the rank-one update of the old block carries the
        # same amplified error.)
        if pivot < PIVOT_FULL_CHECK:
            # the whole of R got the amplified error too (rank-one update of the old
            # block): make the next drift check happen at the end of this operation
            ist[I_NOPS] = ist[I_CHECK_EVERY]
        if pivot < PIVOT_CHECK and _new_column_residual(K, R, S_idx, y, k, nS,
                                                    beta) > tol[T_DRIFT]:
            S_idx[nS] = k
            if r_rebuild(y, K, S_idx, nS + 1, R) != OK:
                r_shrink_last(R, nS + 2)
                S_idx[nS] = -1
                ist[I_NREFUSED] += 1
                return False
            ist[I_NREBUILD] += 1
            # decide singularity again with the accurate inverse: R[m, m] = 1 / gamma_kk
            m = nS + 1
            gkk = 1.0 / R[m, m] if R[m, m] != 0.0 else np.inf
            scale = abs(K[k, k])
            for p in range(nS):
                scale += abs(v[p + 1]) * abs(R[p + 1, m]) * abs(gkk)
            scale += abs(v[0] * R[0, m] * gkk)
            if not (gkk > tol[T_SINGULAR] * scale):
                r_shrink_last(R, nS + 2)
                S_idx[nS] = -1
                ist[I_NREFUSED] += 1
                return False
    S_idx[nS] = k
    spos[k] = nS
    ist[I_NS] = nS + 1
    return True


@njit(cache=True, inline="always")
def _axpy_rows(K, S_idx, y, beta, nS, hw, out):
    """out[i] += sum_p y_j beta[p + 1] K[j, i] over the margin vectors j = S_idx[p], for
    i < hw (modified in place): four rows of K per pass over ``out``, so that ``out`` is
    read and written a quarter as often (the sweep that dominates an adiabatic step)."""
    p = 0
    while p + 4 <= nS:
        j0 = S_idx[p]
        j1 = S_idx[p + 1]
        j2 = S_idx[p + 2]
        j3 = S_idx[p + 3]
        c0 = y[j0] * beta[p + 1]
        c1 = y[j1] * beta[p + 2]
        c2 = y[j2] * beta[p + 3]
        c3 = y[j3] * beta[p + 4]
        for i in range(hw):
            out[i] += (c0 * K[j0, i] + c1 * K[j1, i]) + (c2 * K[j2, i] + c3 * K[j3, i])
        p += 4
    while p < nS:
        j = S_idx[p]
        cj = y[j] * beta[p + 1]
        for i in range(hw):
            out[i] += cj * K[j, i]
        p += 1


@njit(cache=True, inline="always")
def _dot_rows(K, S_idx, a, nS, hw, out):
    """out[p + 1] = sum_{i < hw} a[i] K[j, i] for the margin vectors j = S_idx[p] (modified in
    place): four rows per pass, four independent sums (a single sum is a chain of dependent
    additions, which the compiler may not reorder)."""
    p = 0
    while p + 4 <= nS:
        j0 = S_idx[p]
        j1 = S_idx[p + 1]
        j2 = S_idx[p + 2]
        j3 = S_idx[p + 3]
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for i in range(hw):
            ai = a[i]
            s0 += ai * K[j0, i]
            s1 += ai * K[j1, i]
            s2 += ai * K[j2, i]
            s3 += ai * K[j3, i]
        out[p + 1] = s0
        out[p + 2] = s1
        out[p + 3] = s2
        out[p + 4] = s3
        p += 4
    while p < nS:
        j = S_idx[p]
        s = 0.0
        for i in range(hw):
            s += a[i] * K[j, i]
        out[p + 1] = s
        p += 1


# ---------------------------------------------------------------------------- the path
@njit(cache=True, inline="always")
def _leave_S(alpha, cb, g, status, skip, R, S_idx, spos, ist, j, upper, stalled, hw):
    """Margin vector j leaves S for its upper bound (E, alpha = its bound) or its lower
    bound (R, alpha = 0). Every vector refused as linearly dependent on the old S may be
    independent of the smaller one, so all compete again; except j itself when
    ``stalled``: it joined S at the previous event and leaves without any progress, so its
    pivot is numerically degenerate (in exact arithmetic a vector entering S cannot leave
    at once) and it keeps its bound for the rest of the path instead of cycling."""
    if upper:
        alpha[j] = cb[j]
        status[j] = ERROR
    else:
        alpha[j] = 0.0
        status[j] = RESERVE
    g[j] = 0.0
    _s_remove(R, S_idx, spos, ist, j)
    for i in range(hw):
        skip[i] = 0
    if stalled:
        skip[j] = 1
        ist[I_NREFUSED] += 1


@njit(cache=True, no_cpython_wrapper=True)
def run_path(st, mode, c):
    """Follow one adiabatic path (ADD or REMOVE of slot ``c``, or BOUNDS with ``st.dcb``).

    For BOUNDS, the slots in ``st.sparse[:ist[I_NSPARSE]]`` change bound by ``st.dcb`` and
    mu changes by ``st.fs[F_DMU]`` (see ``bounds_path``).
    For ADD and REMOVE, slot ``c`` must have status CAND; on return its status is final
    (S, E or R for ADD; the caller frees it for REMOVE). For BOUNDS, ``st.dcb`` holds the
    bound changes (new bound = ``cb + dcb``); ``st.cb`` is moved along. All state arrays are
    modified in place (paper 003, Sec. 2.2-2.5 and 3.1).

    Returns
    -------
    status : int, OK, NO_CONVERGENCE (too many steps: degenerate cycling) or STUCK (no
        event can absorb the equality constraint; cannot happen for valid state).

    Notes
    -----
    Degenerate vertices: several bookkeeping events can be due at once: e.g. after a run of
    one class every held vector sits at g = 0 with alpha = 0, and the first example of the
    other class makes them all candidates for S at the same t. Steps of length 0 then
    follow, and choosing among margin vectors at a bound by the ratio alpha_j / (-beta_j)
    (all 0 / x) cycles. At such a vertex the path's direction is the solution of a small
    convex QP in the rates (the tied multipliers' rates >= 0 at a lower bound, <= the bound's
    rate at an upper one; the gradients are the gamma_i), and the zero-length steps are an
    active-set method for it: a tied example whose gamma has the wrong sign joins S; when
    the new rates beta leave the box, the method moves from the last feasible rates d
    toward beta and drops the margin vector at a bound that blocks first, at the smallest
    ``s_j = d_j / (d_j - beta_j)`` (lowest slot on ties), not an arbitrary one of the ties
    (Wolfe's minor cycle, "Finding the nearest point in a polytope", 1976; upper bounds
    alike). The QP's objective strictly decreases from one feasible set of rates to the
    next, so none repeats and the vertex is left (in exact arithmetic; a numerically
    degenerate pivot keeps the skip guard of the S -> R/E event). Only the rates of margin vectors at a bound matter; they live in their
    ``g`` (0 by definition for a margin vector, and not read otherwise), which is set back
    to 0 when the path moves them off the bound and on return. Away from ties nothing
    changes: a margin vector is at a bound only right after it joined S, and its rate then
    points inwards.
    """
    # each array bound once for the whole path, and passed on to the helpers (reference
    # counts: see the module docstring)
    K = st.K
    R = st.R
    S_idx = st.S_idx
    alpha = st.alpha
    beta = st.beta
    cb = st.cb
    dcb = st.dcb
    fs = st.fs
    g = st.g
    gam = st.gam
    ist = st.ist
    skip = st.skip
    sparse = st.sparse
    spos = st.spos
    status = st.status
    tol = st.tol
    v = st.v
    wv = st.wv
    y = st.y
    max_s = _max_margin_set(ist[I_KCODE], st.kpar, st.X.shape[0], st.X.shape[1])
    hw = ist[I_HW]
    eps = tol[T_RATE]
    for i in range(hw):
        skip[i] = 0
    t = 0.0
    max_iter = 100 + 10 * hw
    it = 0
    entered = -1  # the slot that joined S at the previous event, if any
    while True:
        it += 1
        if it > max_iter:
            res = NO_CONVERGENCE
            break
        ist[I_NSTEPS] += 1
        if mode == ADD:
            rem = cb[c] - alpha[c]
            rate = 1.0
        elif mode == REMOVE:
            rem = alpha[c]
            rate = -1.0
        else:
            rem = 1.0 - t
            rate = 0.0
        if rem <= 0.0:
            if mode == ADD:
                alpha[c] = cb[c]
                status[c] = ERROR
            elif mode == REMOVE:
                alpha[c] = 0.0
            res = OK
            break
        # -------- driven contributions: u = sum_D y_d r_d, wv_j = sum_D K_jd y_d r_d
        u = 0.0
        for j in range(hw):
            wv[j] = 0.0
        dmu = 0.0
        if mode == BOUNDS:
            # E members of the listed slots follow their bounds (rate dcb_d); the margin
            # target moves at rate dmu, which acts on every g_i alike
            dmu = fs[F_DMU]
            nsp = ist[I_NSPARSE]
            for k in range(nsp):
                d = sparse[k]
                if status[d] != ERROR or dcb[d] == 0.0:
                    continue
                yr = y[d] * dcb[d]
                u += yr
                for j in range(hw):
                    wv[j] += K[d, j] * yr
        else:
            yr = y[c] * rate
            u = yr
            for j in range(hw):
                wv[j] = K[c, j] * yr
        nS = ist[I_NS]
        bonly = False
        sigma = 0.0
        if nS == 0:
            beta[0] = 0.0
            if abs(u) > eps:
                bonly = True
                sigma = 1.0 if u > 0.0 else -1.0
        else:
            v[0] = u
            for p in range(nS):
                j = S_idx[p]
                v[p + 1] = y[j] * wv[j] - dmu
            r_mul_neg(R, v, nS + 1, beta)
            # -------- degenerate vertex: a margin vector at a bound whose rate points out
            # of its box blocks at once. Drop the one that blocks first on the way from the
            # last feasible rates d (in g of the margin vectors) to beta (see Notes).
            s_min = np.inf
            j_min = -1
            upper_min = False
            for p in range(nS):
                j = S_idx[p]
                bj = beta[p + 1]
                dj = dcb[j] if mode == BOUNDS else 0.0
                if alpha[j] <= 0.0 and bj < -eps:
                    dr = g[j] if g[j] > 0.0 else 0.0
                    x = dr / (dr - bj)
                    upper = False
                elif alpha[j] >= cb[j] and bj - dj > eps:
                    dr = g[j] if g[j] < dj else dj
                    x = (dj - dr) / (bj - dr)
                    upper = True
                else:
                    continue
                if x < s_min or (x == s_min and j < j_min):
                    s_min = x
                    j_min = j
                    upper_min = upper
            if j_min >= 0:
                for p in range(nS):
                    j = S_idx[p]
                    if alpha[j] <= 0.0 or alpha[j] >= cb[j]:
                        g[j] += s_min * (beta[p + 1] - g[j])
                # it leaves for the bound that blocked it: a vector with both bounds at 0
                # (a zero weight that grows, dcb > 0) blocked by its upper bound follows
                # that bound in E; sent to R instead it would re-enter at once, forever.
                # (No progress when it joined S at the previous event: see _leave_S.)
                _leave_S(alpha, cb, g, status, skip, R, S_idx, spos, ist, j_min, upper_min,
                         j_min == entered and s_min <= 0.0, hw)
                entered = -1
                continue
            for p in range(nS):
                j = S_idx[p]
                if alpha[j] <= 0.0 or alpha[j] >= cb[j]:
                    g[j] = beta[p + 1]
        # -------- margin sensitivities gamma_i for every live slot outside S (eq. 12),
        # accumulated as axpys over the rows K[s, :] of the margin vectors (K is
        # symmetric): contiguous and vectorisable, unlike a gather K[i, S] per slot
        b0 = beta[0]
        if bonly:
            for i in range(hw):
                gam[i] = y[i] * sigma
        else:
            for i in range(hw):
                gam[i] = wv[i] + b0
            _axpy_rows(K, S_idx, y, beta, nS, hw, gam)
            for i in range(hw):
                gam[i] = y[i] * gam[i] - dmu
        # -------- largest step before the first bookkeeping event (Sec. 2.3)
        ev_kind = 0  # 0 none, 1 end of path, 2 S->R, 3 S->E, 4 E/R->S, 5 c->S
        ev_idx = np.int64(-1)
        if bonly:
            dt = np.inf
        else:
            dt = rem
            ev_kind = 1
            for p in range(nS):
                j = S_idx[p]
                bj = beta[p + 1]
                dj = dcb[j] if mode == BOUNDS else 0.0
                if bj < -eps:
                    x = alpha[j] / (-bj)
                    if x < dt:
                        dt = x
                        ev_kind = 2
                        ev_idx = j
                if bj - dj > eps:
                    x = (cb[j] - alpha[j]) / (bj - dj)
                    if x < dt:
                        dt = x
                        ev_kind = 3
                        ev_idx = j
        for i in range(hw):
            si = status[i]
            if si == FREE or si == MARGIN or si == ZERO or skip[i]:
                continue
            ga = gam[i]
            if si == CAND:
                if mode == ADD and ga > eps:
                    x = -g[i] / ga
                    if x < 0.0:
                        x = 0.0
                    if x < dt:
                        dt = x
                        ev_kind = 5
                        ev_idx = i
            elif si == ERROR:
                if ga > eps:
                    x = -g[i] / ga
                    if x < 0.0:
                        x = 0.0
                    if x < dt:
                        dt = x
                        ev_kind = 4
                        ev_idx = i
            elif si == RESERVE:
                if ga < -eps:
                    x = g[i] / (-ga)
                    if x < 0.0:
                        x = 0.0
                    if x < dt:
                        dt = x
                        ev_kind = 4
                        ev_idx = i
        if ev_kind == 0:
            # With S empty only b moves, and no event may exist when what is left of the
            # path is round-off (e.g. unlearning the last example of a class: the other
            # class's multipliers reach 0 together with alpha_c, a hair before it). Finish.
            scale = cb[c] if (mode == ADD or mode == REMOVE) else 1.0
            if bonly and rem <= eps * scale:
                dt = 0.0
                ev_kind = 1
            else:
                res = STUCK
                break
        # -------- take the step
        if bonly:
            fs[F_B] += sigma * dt
            for i in range(hw):
                si = status[i]
                if si != FREE and si != MARGIN:
                    g[i] += gam[i] * dt
        else:
            if dt > 0.0:
                # margin vectors at a bound hold their rates in g (degenerate-vertex rule);
                # the step moves them off it (or their rate is ~0): g back to 0
                for p in range(nS):
                    j = S_idx[p]
                    if alpha[j] <= 0.0 or alpha[j] >= cb[j]:
                        g[j] = 0.0
            if mode == BOUNDS:
                for i in range(hw):
                    if status[i] == ERROR and dcb[i] != 0.0:
                        alpha[i] += dcb[i] * dt
                for i in range(hw):
                    cb[i] += dcb[i] * dt
                fs[F_MU] += dmu * dt
                t += dt
            else:
                alpha[c] += rate * dt
            for p in range(nS):
                j = S_idx[p]
                alpha[j] += beta[p + 1] * dt
            fs[F_B] += b0 * dt
            for i in range(hw):
                si = status[i]
                if si != FREE and si != MARGIN:
                    g[i] += gam[i] * dt
        # -------- bookkeeping
        if ev_kind == 1:
            if mode == ADD:
                alpha[c] = cb[c]
                status[c] = ERROR
            elif mode == REMOVE:
                alpha[c] = 0.0
            res = OK
            break
        elif ev_kind == 2 or ev_kind == 3:
            _leave_S(alpha, cb, g, status, skip, R, S_idx, spos, ist, ev_idx, ev_kind == 3,
                     ev_idx == entered and dt <= 0.0, hw)
            entered = -1
        elif ev_kind == 4:
            g[ev_idx] = 0.0
            entered = -1
            # its rate so far: that of its bound (d for the degenerate-vertex rule)
            dr = dcb[ev_idx] if (mode == BOUNDS and status[ev_idx] == ERROR) else 0.0
            if _s_add(K, R, S_idx, spos, y, v, beta, ist, tol, max_s, ev_idx):
                status[ev_idx] = MARGIN
                g[ev_idx] = dr
                entered = ev_idx
            else:
                skip[ev_idx] = 1
        elif ev_kind == 5:
            g[c] = 0.0
            if alpha[c] <= 0.0:
                alpha[c] = 0.0
                status[c] = RESERVE
                res = OK
                break
            if _s_add(K, R, S_idx, spos, y, v, beta, ist, tol, max_s, c):
                status[c] = MARGIN
                res = OK
                break
            # c is linearly dependent on S: its margin cannot move, so its multiplier
            # runs to the bound instead (it ends in E with g_c = 0).
            skip[c] = 1
    # margin vectors at a bound may hold their rates in g during the path (see Notes)
    for p in range(ist[I_NS]):
        j = S_idx[p]
        if alpha[j] <= 0.0 or alpha[j] >= cb[j]:
            g[j] = 0.0
    return res


# ---------------------------------------------------------------------------- maintenance
@njit(cache=True, inline="always")
def _coef_into(st, a):
    """a[j] = alpha_j y_j for live slots, 0 elsewhere (first hw entries). Modified in place."""
    _st_alpha = st.alpha
    _st_ist = st.ist
    _st_status = st.status
    _st_y = st.y
    hw = _st_ist[I_HW]
    for j in range(hw):
        a[j] = _st_alpha[j] * _st_y[j] if _st_status[j] != FREE else 0.0


@njit(cache=True, inline="always")
def _f_all(st, a, f):
    """f[i] = sum_j a_j K_ij for i < hw, as axpys over the rows of the support vectors."""
    _st_K = st.K
    _st_ist = st.ist
    hw = _st_ist[I_HW]
    for i in range(hw):
        f[i] = 0.0
    for j in range(hw):
        aj = a[j]
        if aj != 0.0:
            for i in range(hw):
                f[i] += aj * _st_K[j, i]


@njit(cache=True)
def refresh(st):
    """Recompute g exactly, after one Newton correction of (b, alpha_S) through R.

    The correction solves J [db; dalpha_S] = -[sum_i y_i alpha_i; g_S] with the current R,
    removing round-off accumulated along the path. A margin vector that the correction
    would carry out of its box [0, C_i] sits at that bound up to round-off (a degenerate
    end of path: several margin vectors at a bound, where the exact solution for this S is
    infeasible by ~1e-11): it leaves S for that bound, and the correction is solved again
    on the smaller S. Modified in place (``st.wv`` and ``st.gam`` are scratch).
    """
    _st_R = st.R
    _st_S_idx = st.S_idx
    _st_alpha = st.alpha
    _st_beta = st.beta
    _st_cb = st.cb
    _st_fs = st.fs
    _st_g = st.g
    _st_gam = st.gam
    _st_ist = st.ist
    _st_spos = st.spos
    _st_status = st.status
    _st_v = st.v
    _st_wv = st.wv
    _st_y = st.y
    hw = _st_ist[I_HW]
    y = _st_y
    a = _st_wv
    f = _st_gam
    mu = _st_fs[F_MU]
    while _st_ist[I_NS] > 0:
        nS = _st_ist[I_NS]
        _coef_into(st, a)
        _f_all(st, a, f)
        v = _st_v
        r0 = 0.0
        for i in range(hw):
            r0 += a[i]
        v[0] = r0
        b = _st_fs[F_B]
        for p in range(nS):
            j = _st_S_idx[p]
            v[p + 1] = y[j] * (f[j] + b) - mu
        r_mul_neg(_st_R, v, nS + 1, _st_beta)
        worst = 0.0
        j_out = -1
        for p in range(nS):
            j = _st_S_idx[p]
            nj = _st_alpha[j] + _st_beta[p + 1]
            over = -nj if nj < 0.0 else nj - _st_cb[j]
            if over > worst:
                worst = over
                j_out = j
        if j_out < 0:
            _st_fs[F_B] += _st_beta[0]
            for p in range(nS):
                _st_alpha[_st_S_idx[p]] += _st_beta[p + 1]
            break
        if _st_alpha[j_out] + _st_beta[_st_spos[j_out] + 1] < 0.0:
            _st_alpha[j_out] = 0.0
            _st_status[j_out] = RESERVE
        else:
            _st_alpha[j_out] = _st_cb[j_out]
            _st_status[j_out] = ERROR
        _s_remove(_st_R, _st_S_idx, _st_spos, _st_ist, j_out)
    _coef_into(st, a)
    _f_all(st, a, f)
    b = _st_fs[F_B]
    for i in range(hw):
        if _st_status[i] != FREE:
            _st_g[i] = y[i] * (f[i] + b) - mu
    _st_fs[F_NLAZY] = 0.0


@njit(cache=True)
def refresh_margin(st):
    """The Newton correction of ``refresh`` at O(|S| n) instead of O(n_SV n): exact f on
    the margin vectors only, (b, alpha_S) corrected through R, and the g of every other live
    slot moved by the correction's change of f instead of recomputed.

    Between two full refreshes the path keeps g exact up to round-off for the slots outside
    S (each step adds the sensitivities gamma_i of the multipliers it actually moved, whatever
    the accuracy of R), so what drifts is g on S and the equality sum_i y_i alpha_i (through
    the error of R); this removes it after every operation of a batch. A margin vector that
    the correction would carry out of its box leaves S for that bound, as in ``refresh``.
    Modified in place (``st.wv``, ``st.gam``, ``st.v``, ``st.beta`` are scratch).
    """
    K = st.K
    R = st.R
    S_idx = st.S_idx
    alpha = st.alpha
    beta = st.beta
    cb = st.cb
    fs = st.fs
    g = st.g
    gam = st.gam
    ist = st.ist
    spos = st.spos
    status = st.status
    v = st.v
    a = st.wv
    y = st.y
    hw = ist[I_HW]
    mu = fs[F_MU]
    r0 = 0.0
    for i in range(hw):
        ai = alpha[i] * y[i] if status[i] != FREE else 0.0
        a[i] = ai
        r0 += ai
    while ist[I_NS] > 0:
        nS = ist[I_NS]
        b = fs[F_B]
        v[0] = r0
        _dot_rows(K, S_idx, a, nS, hw, v)
        for p in range(nS):
            j = S_idx[p]
            v[p + 1] = y[j] * (v[p + 1] + b) - mu
        r_mul_neg(R, v, nS + 1, beta)
        worst = 0.0
        j_out = np.int64(-1)
        p_out = np.int64(-1)
        for p in range(nS):
            j = S_idx[p]
            nj = alpha[j] + beta[p + 1]
            over = -nj if nj < 0.0 else nj - cb[j]
            if over > worst:
                worst = over
                j_out = j
                p_out = p
        if j_out >= 0:
            # it sits at that bound up to round-off: move it there, and every g with it
            new = 0.0 if alpha[j_out] + beta[p_out + 1] < 0.0 else cb[j_out]
            status[j_out] = RESERVE if new == 0.0 else ERROR
            g[j_out] = v[p_out + 1]
            _s_remove(R, S_idx, spos, ist, j_out)
            da = (new - alpha[j_out]) * y[j_out]
            alpha[j_out] = new
            a[j_out] += da
            r0 += da
            if da != 0.0:
                for i in range(hw):
                    si = status[i]
                    if si != FREE and si != MARGIN:
                        g[i] += y[i] * da * K[j_out, i]
            continue
        b0 = beta[0]
        fs[F_B] += b0
        for i in range(hw):
            gam[i] = b0
        _axpy_rows(K, S_idx, y, beta, nS, hw, gam)
        for p in range(nS):
            alpha[S_idx[p]] += beta[p + 1]
        for i in range(hw):
            si = status[i]
            if si != FREE and si != MARGIN:
                g[i] += y[i] * gam[i]
        for p in range(nS):
            j = S_idx[p]
            g[j] = v[p + 1] + y[j] * gam[j]
        break


@njit(cache=True)
def check_drift(st, force):
    """Every ``check_every`` operations (or when ``force``), measure max|J R - I| and
    rebuild R from scratch when it exceeds the drift tolerance. Returns OK or SINGULAR.
    (``st.beta`` is the check's scratch row: modified in place when the check runs.)"""
    _st_K = st.K
    _st_R = st.R
    _st_beta = st.beta
    _st_S_idx = st.S_idx
    _st_fs = st.fs
    _st_ist = st.ist
    _st_tol = st.tol
    _st_y = st.y
    _st_ist[I_NOPS] += 1
    if not force and _st_ist[I_NOPS] < _st_ist[I_CHECK_EVERY]:
        return OK
    _st_ist[I_NOPS] = 0
    nS = _st_ist[I_NS]
    res = jr_residual_into(_st_y, _st_K, _st_S_idx, nS, _st_R, _st_beta)
    _st_fs[F_LAST_JR] = res
    if res > _st_tol[T_DRIFT] or not np.isfinite(res):
        if r_rebuild(_st_y, _st_K, _st_S_idx, nS, _st_R) != OK:
            return SINGULAR
        _st_ist[I_NREBUILD] += 1
        _st_fs[F_LAST_JR] = jr_residual_into(_st_y, _st_K, _st_S_idx, nS, _st_R, _st_beta)
    return OK


@njit(cache=True, inline="always")
def _kkt_max(status, alpha, cb, y, g, hw, mu):
    """The KT violation of ``kkt_residual`` for the margins ``g`` (read on live slots)."""
    worst = 0.0
    s_eq = 0.0
    s_a = 0.0
    for i in range(hw):
        si = status[i]
        if si == FREE:
            continue
        gi = g[i]
        a = alpha[i]
        s_eq += y[i] * a
        s_a += a
        if si == MARGIN:
            v = abs(gi)
        elif si == ERROR:
            v = gi if gi > 0.0 else 0.0
        elif si == RESERVE:
            v = -gi if gi < 0.0 else 0.0
        else:
            v = 0.0
        if a < 0.0:
            v = max(v, -a)
        if a > cb[i]:
            v = max(v, a - cb[i])
        if v > worst:
            worst = v
    eq = abs(s_eq) / max(mu, s_a)
    return max(worst / mu, eq)


@njit(cache=True)
def kkt_residual(st):
    """Largest violation of the KT conditions over live slots, in margin units of the SVM
    (stored values divided by mu).

    max over i of: |g_i| on S, max(0, g_i) on E, max(0, -g_i) on R, bound violations of
    alpha, and |sum_i y_i alpha_i| / max(mu, sum_i alpha_i). Reads the stored g (call
    ``refresh`` first for exact values).
    """
    return _kkt_max(st.status, st.alpha, st.cb, st.y, st.g, st.ist[I_HW], st.fs[F_MU])


@njit(cache=True)
def kkt_exact(st):
    """``kkt_residual`` on g recomputed exactly from the coefficients and the bias
    (O(n_SV n)), without changing the state (``st.wv`` and ``st.gam`` are scratch)."""
    a = st.wv
    f = st.gam
    _coef_into(st, a)
    _f_all(st, a, f)
    hw = st.ist[I_HW]
    b = st.fs[F_B]
    mu = st.fs[F_MU]
    y = st.y
    for i in range(hw):
        f[i] = y[i] * (f[i] + b) - mu
    return _kkt_max(st.status, st.alpha, st.cb, y, f, hw, mu)


@njit(cache=True)
def _kt_tolerance(st):
    """The tolerance of the KT certificate of ``_certify`` (see there)."""
    _st_K = st.K
    _st_alpha = st.alpha
    _st_status = st.status
    s_a = 0.0
    kmax = 0.0
    for i in range(st.ist[I_HW]):
        if _st_status[i] != FREE:
            s_a += _st_alpha[i]
            kii = abs(_st_K[i, i])
            if kii > kmax:
                kmax = kii
    return KT_CERT + KT_ROUND_OFF * (1.0 + s_a * kmax / st.fs[F_MU])


@njit(cache=True, inline="always")
def _finish(st, status):
    """End of a single operation (``add``, ``remove``, ``reweight``, ``set_C``): exact g
    (``refresh``) and the drift check of R. (``add_batch`` and ``relearn``: ``_finish_lazy``.)"""
    if status != OK:
        return status
    refresh(st)
    return check_drift(st, np.bool_(False))


@njit(cache=True, inline="always")
def _finish_lazy(st, status):
    """End of an insertion (``add``, each row of ``add_batch`` and ``relearn``): the O(|S| n)
    correction of ``refresh_margin`` instead of the exact O(n_SV n) ``refresh``, which runs
    only every ``check_every`` insertions (counted in the state, ``fs[F_NLAZY]``, so that
    learning a stream in one batch, in chunks or one row per batch gives the same state bit
    for bit), and the drift check of R. The KT certificate (``_certify_exact``) is then
    checked on g recomputed exactly."""
    if status != OK:
        return status
    refresh_margin(st)
    fs = st.fs
    fs[F_NLAZY] += 1.0
    if fs[F_NLAZY] >= st.ist[I_CHECK_EVERY]:
        refresh(st)
    return check_drift(st, np.bool_(False))


@njit(cache=True, inline="always")
def _certify(st, status):
    """The KT certificate that ends every public operation (O(n), on the exact g that
    ``_finish`` left): ``status``, OK, or NEEDS_REPAIR when the certificate fails.

    An ill-conditioned path (a wide kernel, near-duplicates with opposite labels, a large
    C) can end with the KT conditions violated and no event to show it. The operation then
    returns NEEDS_REPAIR with its state consistent, and the caller finishes it with
    :func:`repair` (relearning the worst violators, ``_repair``), which returns OK or
    KT_VIOLATED: the same result as a repair run here, bit for bit. Then the caller
    retries on a rebuilt R or refuses the update, rather than keep a model that is not the
    SVM. The tolerance is KT_CERT in margin units plus the round-off allowance
    KT_ROUND_OFF times the scale of the decision values, 1 + sum_i alpha_i max_i K_ii / mu
    (an upper bound of max_i sum_j alpha_j |K_ij| / mu).

    The repair is not run here because it is cold code: it runs only on a failed
    certificate, yet inlined here (``_repair`` with two paths, ``_deactivate`` and
    ``_activate``, inlined in it) it made up much of the compile time of every operation
    that ends with a certificate, three times over in ``ops.engine_step``. As a function
    of its own it is compiled once, and only by a process that needs it: callers in Python
    call it after a NEEDS_REPAIR (``engine.finish_repair``); compiled callers that must
    carry on (Span's stream, ``relearn``) call it as a compiled function."""
    if status != OK:
        return status
    if kkt_residual(st) > _kt_tolerance(st):
        return NEEDS_REPAIR
    return OK


@njit(cache=True)
def repair(st):
    """Finish an operation that returned NEEDS_REPAIR: relearn, one at a time, the
    examples that violate the KT conditions most (``_repair``) until the certificate of
    ``_certify`` passes. Returns OK, or KT_VIOLATED when it still fails (the caller then
    restores its snapshot, as for any failure). OK at once when the certificate passes.
    Modified in place."""
    tol = _kt_tolerance(st)
    if kkt_residual(st) <= tol or _repair(st, tol):
        return OK
    return KT_VIOLATED


@njit(cache=True, inline="always")
def _repaired(st, status):
    """``status``, with a NEEDS_REPAIR finished by the compiled :func:`repair`: for the
    compiled callers that cannot hand it back to Python."""
    if status == NEEDS_REPAIR:
        return repair(st)
    return status


@njit(cache=True, inline="always")
def _certify_exact(st, status):
    """``_certify`` for a state whose stored g is exact only up to the round-off of the
    path's updates (``_finish_lazy``): the KT conditions are checked on g recomputed exactly
    from (alpha, b) in scratch (``kkt_exact``), and the state is left as it is when they
    hold; otherwise it is refreshed and ``_certify`` decides (repair or KT_VIOLATED)."""
    if status != OK:
        return status
    if kkt_exact(st) <= _kt_tolerance(st):
        return OK
    refresh(st)
    return _certify(st, status)


@njit(cache=True, inline="always")
def _repair(st, tol):
    """Relearn, one at a time, the examples outside S that violate the KT conditions most
    (an error vector with g > 0, a reserve vector with g < 0): unlearn it exactly, then
    learn it again with its weight, both by the ordinary paths from the current state.
    True when the certificate passes after at most REPAIR_TRIES of them."""
    _st_g = st.g
    _st_status = st.status
    _st_wt = st.wt
    mu = st.fs[F_MU]
    for _ in range(REPAIR_TRIES):
        j = np.int64(-1)   # (a literal -1 would type the calls below for it too, once)
        worst = tol
        for i in range(st.ist[I_HW]):
            si = _st_status[i]
            if si == ERROR:
                v = _st_g[i] / mu
            elif si == RESERVE:
                v = -_st_g[i] / mu
            else:
                continue
            if v > worst:
                worst = v
                j = i
        if j < 0:
            return False          # the violation is in S or in the equality: not this
        w = _st_wt[j]
        if _deactivate(st, j) != OK:
            return False
        refresh(st)
        if _activate(st, j, w) != OK:
            return False
        refresh(st)
        if kkt_residual(st) <= tol:
            return True
    return False


# ---------------------------------------------------------------------------- operations
@njit(cache=True, inline="always")
def place(st, c, x, yc):
    """Store point ``x`` with label ``yc`` in free slot ``c`` with weight 0 (status Z).

    Computes the kernel row of ``c`` against every live slot. Modified in place
    (``st.sparse`` and ``st.gam`` are scratch). Returns f(x) under the model before x, as
    ``place_at``.
    """
    return place_at(st.X, st.y, st.wt, st.cb, st.alpha, st.g, st.status, st.K, st.kpar, st.fs, st.ist,
             st.sparse, st.gam, c, x, yc)


@njit(cache=True, inline="always")
def place_at(X, y, wt, cb, alpha, g, status, K, kpar, fs, ist, rows, vals, c, x, yc):
    """``place`` on the state's arrays (``rows`` = ``st.sparse``, ``vals`` = ``st.gam``).
    Returns f(x) (without the label: g_c = yc f(x) - mu)."""
    code = ist[I_KCODE]
    d = x.shape[0]
    for k in range(d):
        X[c, k] = x[k]
    hw = ist[I_HW]
    if c + 1 > hw:
        hw = c + 1
        ist[I_HW] = hw
    # the slots whose kernel value must be computed (slots 2t and 2t + 1 of paired twins
    # hold the same point: the odd one copies), gathered so that one compiled call fills
    # the row
    paired = ist[I_PAIRED] != 0
    n_rows = np.int64(0)
    for j in range(hw):
        if status[j] != FREE or j == c:
            if not (paired and (j & 1) == 1 and j - 1 != c and status[j - 1] != FREE):
                rows[n_rows] = j
                n_rows += 1
    kernel_row_at(code, kpar, X, rows, n_rows, x, vals)
    for k in range(n_rows):
        j = rows[k]
        K[c, j] = vals[k]
        K[j, c] = vals[k]
    if paired:
        for j in range(1, hw, 2):
            if status[j] != FREE and j - 1 != c and status[j - 1] != FREE:
                K[c, j] = K[c, j - 1]
                K[j, c] = K[c, j - 1]
    y[c] = yc
    wt[c] = 0.0
    cb[c] = 0.0
    alpha[c] = 0.0
    status[c] = ZERO
    f = decision_at_slot(K, alpha, y, hw, fs[F_B], c)
    g[c] = yc * f - fs[F_MU]
    return f


@njit(cache=True, inline="always")
def place_copy_at(X, y, wt, cb, alpha, g, status, K, fs, ist, c, src, yc, f):
    """Like ``place`` for a point equal to slot ``src``'s (a twin's other half): copies the
    point and its kernel row instead of recomputing them. Modified in place.

    ``f`` is f(x_src) as ``place_at`` returned it when it placed ``src`` (with ``c`` free or
    at weight 0, as now): f(x_c) is then the same sum term by term, since the two kernel
    rows agree and the terms that may differ (columns src and c, slots beyond the old
    high-water mark) have alpha = 0; so it is not summed again."""
    d = X.shape[1]
    for k in range(d):
        X[c, k] = X[src, k]
    hw = ist[I_HW]
    if c + 1 > hw:
        hw = c + 1
        ist[I_HW] = hw
    for j in range(hw):
        if status[j] != FREE or j == c:
            kv = K[src, j] if j != c else K[src, src]
            K[c, j] = kv
            K[j, c] = kv
    y[c] = yc
    wt[c] = 0.0
    cb[c] = 0.0
    alpha[c] = 0.0
    status[c] = ZERO
    g[c] = yc * f - fs[F_MU]


@njit(cache=True, inline="always")
def _activate(st, c, w):
    """Weight 0 -> w > 0: incremental learning of slot c (paper 003, Algorithm 1)."""
    _st_alpha = st.alpha
    _st_cb = st.cb
    _st_fs = st.fs
    _st_g = st.g
    _st_status = st.status
    _st_wt = st.wt
    _st_y = st.y
    _st_wt[c] = w
    _st_cb[c] = _st_fs[F_C] * w
    _st_alpha[c] = 0.0
    if _st_cb[c] <= 0.0:
        _st_status[c] = ZERO
        return OK
    f = decision_at_slot(st.K, _st_alpha, _st_y, st.ist[I_HW], _st_fs[F_B], c)
    gc = _st_y[c] * f - _st_fs[F_MU]
    _st_g[c] = gc
    if gc >= 0.0:
        _st_status[c] = RESERVE
        return OK
    _st_status[c] = CAND
    return run_path(st, np.int64(ADD), c)


@njit(cache=True, inline="always")
def _deactivate(st, c):
    """Drive alpha_c to 0 (decremental unlearning, paper 003 Algorithm 2) and leave the
    slot live with weight 0 (status Z)."""
    _st_alpha = st.alpha
    _st_cb = st.cb
    _st_status = st.status
    _st_wt = st.wt
    s = OK
    if _st_status[c] == MARGIN:
        _s_remove(st.R, st.S_idx, st.spos, st.ist, c)
    if _st_alpha[c] > 0.0:
        _st_status[c] = CAND
        s = run_path(st, np.int64(REMOVE), c)
    _st_alpha[c] = 0.0
    _st_wt[c] = 0.0
    _st_cb[c] = 0.0
    _st_status[c] = ZERO
    return s


@njit(cache=True, inline="always")
def add(st, c, x, yc, w):
    """Learn example (x, yc) with weight w in free slot c. Returns a status.

    One operation on its own, like ``remove`` and ``reweight``: it ends with the exact
    ``refresh`` and the KT certificate. (``add_batch``, used to learn streams, refreshes
    exactly only every ``check_every`` rows: see ``_finish_lazy``.)"""
    return _certify(st, _finish(st, _add_path(st, c, x, yc, w)))


@njit(cache=True, inline="always")
def _add_path(st, c, x, yc, w):
    """Place (x, yc) in slot c and run its path, without refresh or certificate."""
    place(st, c, x, yc)
    s = OK
    if w > 0.0:
        s = _activate(st, c, w)
    return s


@njit(cache=True, inline="always")
def _add(st, c, x, yc, w):
    """``add`` without the KT certificate (``add_batch`` and ``relearn`` certify once, at
    their end)."""
    return _finish_lazy(st, _add_path(st, c, x, yc, w))


@njit(cache=True, inline="always")
def remove(st, c):
    """Unlearn slot c exactly and free it. Returns a status."""
    _st_g = st.g
    _st_ist = st.ist
    _st_status = st.status
    s = _deactivate(st, c)
    _st_status[c] = FREE
    _st_g[c] = 0.0
    hw = _st_ist[I_HW]
    while hw > 0 and _st_status[hw - 1] == FREE:
        hw -= 1
    _st_ist[I_HW] = hw
    return _certify(st, _finish(st, s))


@njit(cache=True, inline="always")
def bounds_path(st, mu_new, nsp):
    """One exact path moving the weights of the ``nsp`` slots listed in ``st.sparse`` to
    the values already written in ``st.wt`` (their old weights are in ``st.dcb`` on entry)
    while the margin target moves to ``mu_new``. Bounds end at ``C0 * wt``.

    A weight-0 slot whose bound grows starts in E (g < 0) or R; a slot whose bound reaches
    0 ends with status Z. Merging twins is therefore one path ("move weight from some slots
    to others"), and so is reweighting or changing C (Diehl & Cauwenberghs 2003). Without
    the final refresh; modified in place; returns a status.
    """
    _st_alpha = st.alpha
    _st_cb = st.cb
    _st_dcb = st.dcb
    _st_fs = st.fs
    _st_g = st.g
    _st_insp = st.insp
    _st_ist = st.ist
    _st_sparse = st.sparse
    _st_status = st.status
    _st_wt = st.wt
    hw = _st_ist[I_HW]
    C0 = _st_fs[F_C]
    for i in range(hw):
        _st_insp[i] = 0
    for k in range(nsp):
        _st_insp[_st_sparse[k]] = 1
    for i in range(hw):
        if _st_insp[i] and _st_status[i] != FREE:
            _st_dcb[i] = C0 * (_st_wt[i] - _st_dcb[i])
        else:
            _st_dcb[i] = 0.0
    for k in range(nsp):
        _st_insp[_st_sparse[k]] = 0
    _st_ist[I_NSPARSE] = nsp
    _st_fs[F_DMU] = mu_new - _st_fs[F_MU]
    for k in range(nsp):
        i = _st_sparse[k]
        if _st_status[i] == ZERO and _st_dcb[i] > 0.0:
            _st_alpha[i] = 0.0
            _st_status[i] = ERROR if _st_g[i] < 0.0 else RESERVE
    s = run_path(st, np.int64(BOUNDS), np.int64(-1))
    _st_ist[I_NSPARSE] = 0
    _st_fs[F_DMU] = 0.0
    _st_fs[F_MU] = mu_new
    for k in range(nsp):
        i = _st_sparse[k]
        si = _st_status[i]
        _st_cb[i] = C0 * _st_wt[i]
        if _st_cb[i] <= 0.0:
            if si == MARGIN:
                _s_remove(st.R, st.S_idx, st.spos, _st_ist, i)
            _st_alpha[i] = 0.0
            _st_cb[i] = 0.0
            _st_status[i] = ZERO
        elif si == ERROR:
            _st_alpha[i] = _st_cb[i]
        _st_dcb[i] = 0.0
    return s


@njit(cache=True, inline="always")
def transfer(st, n_src, src, dst, w_dst, mu_new):
    """Move weight along one exact path: the slots ``src[:n_src]`` go to weight 0 while
    each slot ``dst[k]`` goes to weight ``w_dst[k]`` (it must be live, e.g. freshly
    ``place``d), and the margin target goes to ``mu_new``. Without the final refresh;
    returns a status."""
    _st_dcb = st.dcb
    _st_sparse = st.sparse
    _st_wt = st.wt
    nsp = 0
    for k in range(n_src):
        i = src[k]
        _st_sparse[nsp] = i
        _st_dcb[i] = _st_wt[i]
        _st_wt[i] = 0.0
        nsp += 1
    for k in range(dst.shape[0]):
        i = dst[k]
        _st_sparse[nsp] = i
        _st_dcb[i] = _st_wt[i]
        _st_wt[i] = w_dst[k]
        nsp += 1
    return bounds_path(st, mu_new, nsp)


@njit(cache=True, inline="always")
def reweight(st, c, w):
    """Change the weight of live slot c to w >= 0 along the exact path. Returns a status."""
    _st_dcb = st.dcb
    _st_fs = st.fs
    _st_sparse = st.sparse
    _st_status = st.status
    _st_wt = st.wt
    old = _st_wt[c]
    if w == old:
        return OK
    s = OK
    if _st_status[c] == ZERO or old == 0.0:
        s = _activate(st, c, w)
    elif w == 0.0:
        s = _deactivate(st, c)
    else:
        _st_sparse[0] = c
        _st_dcb[c] = old
        _st_wt[c] = w
        s = bounds_path(st, _st_fs[F_MU], 1)
    return _certify(st, _finish(st, s))


@njit(cache=True, no_cpython_wrapper=True)
def change_C(st, C):
    """Move the SVM's C (= C0 / mu) to ``C`` along the exact path in mu, without the final
    refresh (regularisation-parameter perturbation, Diehl & Cauwenberghs 2003)."""
    _st_fs = st.fs
    mu_new = _st_fs[F_C] / C
    if mu_new == _st_fs[F_MU]:
        return OK
    return bounds_path(st, mu_new, 0)


@njit(cache=True)
def set_C(st, C):
    """Change C (all bounds C * w_i) along the exact path. Returns a status."""
    return _certify(st, _finish(st, change_C(st, C)))


@njit(cache=True)
def loo_margin(st, c):
    """Exact leave-one-out margin y_c f_{\\c}(x_c) of slot c (paper 003, Algorithm 2).

    **Destroys the state** (c is unlearned); callers snapshot and restore around it.
    Returns (status, margin).
    """
    _st_alpha = st.alpha
    _st_fs = st.fs
    _st_g = st.g
    _st_status = st.status
    if _st_status[c] == RESERVE or _st_status[c] == ZERO or _st_alpha[c] == 0.0:
        return OK, (_st_g[c] + _st_fs[F_MU]) / _st_fs[F_MU]
    s = _deactivate(st, c)
    if s != OK:
        return s, np.nan
    refresh(st)
    return OK, (_st_g[c] + _st_fs[F_MU]) / _st_fs[F_MU]


@njit(cache=True)
def rebuild(st):
    """Rebuild R from scratch and refresh g. Returns OK or SINGULAR."""
    _st_K = st.K
    _st_R = st.R
    _st_S_idx = st.S_idx
    _st_ist = st.ist
    _st_y = st.y
    nS = _st_ist[I_NS]
    if nS > 0:
        if r_rebuild(_st_y, _st_K, _st_S_idx, nS, _st_R) != OK:
            return SINGULAR
    _st_ist[I_NREBUILD] += 1
    refresh(st)
    return OK


@njit(cache=True)
def relearn(st, order, w, mu):
    """Learn the examples stored in slots ``order`` again from an empty model, one at a time
    in that order, with weights ``w``, at margin target ``mu`` (the SVM's C becomes
    C0 / mu); every other slot becomes free. Returns a status (certified at the end).

    The engine's last resort when an update ends KT-violated (or fails) even on a rebuilt
    R: the paths from an empty model in another order reach the same SVM through other
    margin sets, and on ill-conditioned data (a very wide kernel, near-duplicates with
    opposite labels, a large C) they usually stay clear of the dependent set that the
    failing path ran into. Each slot keeps its point and label (``place`` rewrites the same
    point and recomputes the same kernel values). Cost: one ``add`` per example, O(n) of
    them. Modified in place; the caller restores a snapshot on failure.
    """
    n = order.shape[0]
    d = st.X.shape[1]
    xs = np.empty((n, d))
    ys = np.empty(n)
    for k in range(n):
        xs[k] = st.X[order[k]]
        ys[k] = st.y[order[k]]
    _st_status = st.status
    for i in range(_st_status.shape[0]):
        _st_status[i] = FREE
        st.alpha[i] = 0.0
        st.g[i] = 0.0
        st.cb[i] = 0.0
        st.wt[i] = 0.0
        st.S_idx[i] = -1
        st.spos[i] = -1
    st.ist[I_NS] = 0
    st.ist[I_HW] = 0
    st.fs[F_B] = 0.0
    st.fs[F_MU] = mu
    st.fs[F_DMU] = 0.0
    st.fs[F_NLAZY] = 0.0
    for k in range(n):
        s = _add(st, order[k], xs[k], ys[k], w[k])
        if s != OK:
            return s
    # (a last resort itself, compiled only when needed: it repairs here rather than
    # hand NEEDS_REPAIR back)
    return _repaired(st, _certify_exact(st, np.int64(OK)))


@njit(cache=True, inline="always")
def add_batch(st, X, yv, w, slots, fout):
    """Learn the rows of ``X`` one at a time (labels ``yv`` in {-1, +1}, weights ``w``).

    ``slots[i]`` receives the slot of row i. The caller guarantees enough free slots.
    When ``fout`` has one entry per row, ``fout[i]`` receives row i's decision value under
    the SVM of every row before it (``place``'s f over mu, before the row is learned), for
    the online calibration; a ``fout`` of length 0 receives nothing.
    Returns (status, i): ``i`` is the number of rows learned (the failing row on error).
    The KT certificate is checked once, at the end (the states in between are not seen by
    anyone; an ill-conditioned path can pass through a violated state that the next rows
    repair): when it fails, the status is NEEDS_REPAIR with ``i = n - 1`` (every row
    learned; the caller runs ``repair``, and if that fails too the last row counts as the
    failing one). Each row ends with
    ``_finish_lazy`` (g recomputed exactly only every ``check_every`` insertions, counted
    in the state): the same rows give the same state bit for bit whether learned in one
    call or in several. State modified in place.
    """
    _st_status = st.status
    n = X.shape[0]
    cap = _st_status.shape[0]
    c = 0
    keep = fout.shape[0] > 0
    for i in range(n):
        while c < cap and _st_status[c] != FREE:
            c += 1
        # _add(st, c, X[i], yv[i], w[i]), keeping the decision value that place computes
        f = place(st, c, X[i], yv[i])
        if keep:
            fout[i] = f / st.fs[F_MU]
        s = OK
        if w[i] > 0.0:
            s = _activate(st, c, w[i])
        s = _finish_lazy(st, s)
        slots[i] = c
        if s != OK:
            return s, i
    if n > 0 and _certify_exact(st, np.int64(OK)) != OK:
        return NEEDS_REPAIR, n - 1
    return OK, n
