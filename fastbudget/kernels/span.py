"""Span of support vectors and the budgeted S-span / LRU stream (Agarwal et al. 2008, paper 002).

Everything here reads and drives the exact engine's state
(:class:`fastbudget.kernels.adiabatic.EngineState`, Cauwenberghs & Poggio, paper 003) and a
:class:`SpanWork` of buffers allocated once for the same capacity. Functions mutate state in
place and return an integer status (``adiabatic.OK`` or a failure code); none raises.

Span (Vapnik & Chapelle 2000, as used in paper 002 Sec. 2), computed from the engine:

- margin vector p (0 < alpha_p < C_p, position ``q`` in ``S_idx``): ``S_p^2 = 1 / R[q+1, q+1]``.
  The engine's ``R`` inverts ``J = [[0, y_S^T], [y_S, Q_SS]]`` with ``Q_ij = y_i y_j K_ij``;
  ``J = D Kb D`` with ``D = diag(1, y_S)`` and ``Kb = [[0, 1^T], [1, K_SS]]``, so ``J^-1`` and
  ``Kb^-1`` share their diagonal, and ``1 / (Kb^-1)_pp`` is the squared feature-space distance
  of ``phi(x_p)`` to the affine span of the other margin vectors;
- error vector c (alpha_c = C_c): the squared distance of ``phi(x_c)`` to the affine span of
  the margin set, ``gamma_c = Q_cc - [y_c, Q_cS] R [y_c; Q_Sc]`` (paper 003, eq. 12/21).

These are the spans of Vapnik & Chapelle's non-separable definition when the constraints
``0 <= alpha_i + y_i y_p alpha_p lambda_i <= C_i`` of the minimisation are not active (their
"the set of support vectors does not change" assumption); ``tests/reference/span_reference.py``
solves the constrained problem directly. An undefined span (the margin set minus p is empty)
is ``+inf``. The S-span is the largest span over the support vectors (paper 002, eq. 1).

Cost of one misclassified arrival under ``POLICY_SPAN`` with N stored support vectors, |S|
of them margin vectors: N candidate swaps, each one exact weight-transfer path
(O(events * N * |S|)), a restore (O(N + |S|^2)) and the spans (O(|S| + |E| |S|^2)), so
O(N^2 |S| (events + |E|/N |S|)) <= O(N^4) in the worst case, O(N^2 |S|) when few SVs are at
the bound. ``POLICY_LRU`` costs one exact unlearning and one exact learning, O(N |S|) per step.

``span_decide`` makes an arrival's decision without its exact updates and records it: the
estimator's last resort after a failed chunk relearns the decided set from an empty model.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .adiabatic import (ERROR, F_B, F_MU, FREE, I_HW, I_NS, MARGIN, NEEDS_REPAIR, OK,
                        RESERVE, STUCK, add_batch, check_drift, decision_point,
                        place, refresh, remove, repair, transfer)
from .ops import OP_ADD, OP_REMOVE, OP_REWEIGHT, engine_step

POLICY_SPAN = 0
POLICY_LRU = 1

# which support vectors the S-span is the maximum over
SPAN_ALL = 0  # margin vectors (1/R_pp) and error vectors (distance to the margin set's span)
SPAN_MARGIN = 1  # margin vectors only (Vapnik & Chapelle's non-separable case)

# indices into SpanWork.cnt
C_SEEN = 0  # examples seen (also the arrival clock of ``age``)
C_TRIG = 1  # arrivals that triggered an update (y f(x) <= margin, weight > 0)
C_ADDED = 2  # arrivals learned while the memory was not full
C_SWAP = 3  # replacements made (span accepted or LRU)
C_REJECT = 4  # span policy: arrivals turned away (no swap lowers the S-span)
C_PRUNED = 5  # stored examples with alpha = 0 dropped to make room
N_CNT = 8

# the decision of one arrival, recorded by ``span_decide``: indices into its ``dec`` ...
D_KIND = 0
D_EVICT = 1  # stored example with alpha = 0 dropped to make room (-1: none)
D_REMOVE = 2  # stored example x replaces (-1: none)
D_SLOT = 3  # slot x is learned in (-1: none)
N_DEC = 4
# ... and the kinds
D_NONE = 0  # x is not learned (weight 0, or y f(x) > margin)
D_ADD = 1  # x learned while the memory is not full
D_SWAP = 2  # x replaces a stored example (span accepted or LRU)
D_REJECT = 3  # the span policy turns x away
D_EVICT_FAILED = 4  # the exact unlearning of the evicted example failed (span policy)

SpanWork = namedtuple(
    "SpanWork",
    [
        "age", "cnt", "spans",
        # saved copy of the engine state for the candidate swaps
        "s_y", "s_wt", "s_cb", "s_alpha", "s_g", "s_status", "s_S_idx", "s_spos",
        "s_fs", "s_ist", "s_R", "s_m",
        # scratch
        "v", "src", "dst", "wdst",
    ],
)


def alloc_work(n, n_fs, n_ist):
    """Buffers for an engine of ``n`` slots (the only allocation); ``n_fs``/``n_ist`` are the
    lengths of the engine's scalar arrays."""
    return SpanWork(
        age=np.zeros(n, dtype=np.int64),
        cnt=np.zeros(N_CNT, dtype=np.int64),
        spans=np.full(n, -1.0),
        s_y=np.zeros(n), s_wt=np.zeros(n), s_cb=np.zeros(n), s_alpha=np.zeros(n),
        s_g=np.zeros(n), s_status=np.zeros(n, dtype=np.int64),
        s_S_idx=np.full(n, -1, dtype=np.int64), s_spos=np.full(n, -1, dtype=np.int64),
        s_fs=np.zeros(n_fs), s_ist=np.zeros(n_ist, dtype=np.int64),
        s_R=np.zeros((n + 1, n + 1)), s_m=np.zeros(1, dtype=np.int64),
        v=np.zeros(n + 1),
        src=np.zeros(1, dtype=np.int64), dst=np.zeros(1, dtype=np.int64), wdst=np.zeros(1),
    )


def work_nbytes(n, n_fs, n_ist):
    """Closed form of the bytes held by ``alloc_work(n, ...)``."""
    return (8 * (n + N_CNT + n  # age, cnt, spans
                 + 5 * n + 3 * n + n_fs + n_ist + (n + 1) ** 2 + 1  # saved state
                 + (n + 1) + 3))  # scratch


# ---------------------------------------------------------------------------- spans
@njit(cache=True, no_cpython_wrapper=True)
def affine_distance_sq(st, c, v):
    """Squared feature-space distance of slot ``c`` to the affine span of the margin set:
    ``gamma_c = Q_cc - [y_c, Q_cS] R [y_c; Q_Sc]`` (paper 003, eq. 12 with eq. 21).

    ``v`` (n+1,) float64 is scratch, modified in place. Returns ``+inf`` when S is empty,
    and clips round-off below 0 to 0. O(|S|^2).
    """
    nS = st.ist[I_NS]
    if nS == 0:
        return np.inf
    yc = st.y[c]
    v[0] = yc
    for p in range(nS):
        j = st.S_idx[p]
        v[p + 1] = yc * st.y[j] * st.K[c, j]
    m = nS + 1
    q = 0.0
    for i in range(m):
        s = 0.0
        for j in range(m):
            s += st.R[i, j] * v[j]
        q += v[i] * s
    d = st.K[c, c] - q
    return d if d > 0.0 else 0.0


@njit(cache=True)
def span_sq(st, v, out, span_set):
    """Squared spans of every support vector and the squared S-span (paper 002, eq. 1).

    Parameters
    ----------
    st : EngineState
    v : ndarray (n+1,) float64, scratch (modified in place)
    out : ndarray (n,) float64, modified in place: ``out[i] = S_i^2`` for slots with
        ``alpha_i > 0`` (margin and error vectors), -1 elsewhere (first ``hw`` entries).
        Error vectors' spans are always written.
    span_set : int, ``SPAN_ALL`` (the maximum runs over margin and error vectors) or
        ``SPAN_MARGIN`` (over margin vectors only: Vapnik & Chapelle's non-separable span,
        where error vectors count as leave-one-out errors and have no span).

    Returns
    -------
    float
        ``max S_i^2`` over the support vectors of ``span_set`` (``+inf`` when a span is
        undefined, 0 when there is none).
    """
    hw = st.ist[I_HW]
    nS = st.ist[I_NS]
    worst = 0.0
    for i in range(hw):
        out[i] = -1.0
    for p in range(nS):
        j = st.S_idx[p]
        r = st.R[p + 1, p + 1]
        s = 1.0 / r if r > 0.0 else np.inf
        out[j] = s
        if s > worst:
            worst = s
    for i in range(hw):
        if st.status[i] == ERROR and st.alpha[i] > 0.0:
            s = affine_distance_sq(st, i, v)
            out[i] = s
            if s > worst and span_set == SPAN_ALL:
                worst = s
    return worst


# ---------------------------------------------------------------------------- save / load
@njit(cache=True)
def _save(st, wk):
    hw = st.ist[I_HW]
    for i in range(hw):
        wk.s_y[i] = st.y[i]
        wk.s_wt[i] = st.wt[i]
        wk.s_cb[i] = st.cb[i]
        wk.s_alpha[i] = st.alpha[i]
        wk.s_g[i] = st.g[i]
        wk.s_status[i] = st.status[i]
        wk.s_spos[i] = st.spos[i]
    n = st.status.shape[0]
    for i in range(n):
        wk.s_S_idx[i] = st.S_idx[i]
    wk.s_fs[:] = st.fs
    wk.s_ist[:] = st.ist
    m = st.ist[I_NS] + 1
    wk.s_m[0] = m
    for i in range(m):
        for j in range(m):
            wk.s_R[i, j] = st.R[i, j]


@njit(cache=True)
def _load(st, wk):
    """Undo everything a path did since ``_save`` (the kernel matrix and points are never
    written by a path). Modified in place."""
    hw = wk.s_ist[I_HW]
    for i in range(hw):
        st.y[i] = wk.s_y[i]
        st.wt[i] = wk.s_wt[i]
        st.cb[i] = wk.s_cb[i]
        st.alpha[i] = wk.s_alpha[i]
        st.g[i] = wk.s_g[i]
        st.status[i] = wk.s_status[i]
        st.spos[i] = wk.s_spos[i]
        st.dcb[i] = 0.0
    n = st.status.shape[0]
    for i in range(n):
        st.S_idx[i] = wk.s_S_idx[i]
    st.fs[:] = wk.s_fs
    st.ist[:] = wk.s_ist
    m = wk.s_m[0]
    for i in range(m):
        for j in range(m):
            st.R[i, j] = wk.s_R[i, j]


# ---------------------------------------------------------------------------- the stream
@njit(cache=True, inline="always")
def _op(st, op, c, x, yc, w):
    """``ops.engine_step``, with a failed KT certificate repaired at once by the compiled
    ``adiabatic.repair`` (the stream goes on within the arrival, so it cannot hand
    NEEDS_REPAIR back to Python)."""
    s = engine_step(st, op, c, x, yc, w)
    if s == NEEDS_REPAIR:
        s = repair(st)
    return s


@njit(cache=True, no_cpython_wrapper=True)
def _oldest_reserve(st, wk):
    """The oldest stored example whose multiplier is 0 (not a support vector: a reserve
    vector, or a margin vector sitting at alpha = 0, or at -1e-16 after round-off: the same
    test ``alpha > 0`` that counts support vectors), or -1 when there is none."""
    # (int64, not a literal -1: Numba would type the call below for Literal[int](-1) while
    # it infers the loop, and compile ``remove`` and the whole engine under it twice)
    j_old = np.int64(-1)
    best_age = wk.cnt[C_SEEN] + 1
    for j in range(st.ist[I_HW]):
        if st.status[j] != FREE and st.alpha[j] <= 0.0 and wk.age[j] < best_age:
            best_age = wk.age[j]
            j_old = j
    return j_old


@njit(cache=True, inline="always")
def _evict_reserve(st, wk):
    """Unlearn the oldest stored example whose multiplier is 0 (``_oldest_reserve``). Exact
    and free: it does not shape the model. Returns STUCK when there is none (the caller's
    count was wrong)."""
    j_old = _oldest_reserve(st, wk)
    if j_old < 0:
        return STUCK
    wk.cnt[C_PRUNED] += 1
    return _op(st, np.int64(OP_REMOVE), j_old, st.X[j_old], 0.0, 0.0)


@njit(cache=True, no_cpython_wrapper=True)
def _first_free(st):
    for j in range(st.status.shape[0]):
        if st.status[j] == FREE:
            return j
    return -1


@njit(cache=True, no_cpython_wrapper=True)
def _first_free_but(st, e):
    """The first free slot once slot ``e`` (-1: none) is freed too."""
    c = _first_free(st)
    if e >= 0 and (c < 0 or e < c):
        return e
    return c


@njit(cache=True, inline="always")
def _swap_decided(dec, p, c):
    """``span_decide``'s record of 'x replaces the stored example p, learned in slot c'."""
    dec[D_KIND] = D_SWAP
    dec[D_REMOVE] = p
    dec[D_SLOT] = c
    return OK


@njit(cache=True, inline="always")
def _step(st, wk, x, yc, w, budget, policy, margin, span_set, decide, dec):
    """``span_step``; with ``decide`` it stops once the arrival's decision is made and
    records it in ``dec`` (see ``span_decide``) instead of making the exact updates.
    Inlined into both, so that the compiled chunk loop keeps its speed."""
    wk.cnt[C_SEEN] += 1
    t = wk.cnt[C_SEEN]
    if decide:
        dec[D_KIND] = D_NONE
        dec[D_EVICT] = -1
        dec[D_REMOVE] = -1
        dec[D_SLOT] = -1
    if w <= 0.0:
        return OK
    mu = st.fs[F_MU]
    f = decision_point(st, x) / mu
    if yc * f > margin:  # step 2: classified correctly
        return OK
    wk.cnt[C_TRIG] += 1
    cap = st.status.shape[0]
    nlive = 0
    nsv = 0
    for j in range(cap):
        if st.status[j] != FREE:
            nlive += 1
            if st.alpha[j] > 0.0:
                nsv += 1
    if nsv < budget:
        # the memory is not full of support vectors: learn x (making room by dropping a
        # stored example with alpha = 0 when every slot but the spare is taken)
        e = np.int64(-1)
        if nlive >= budget:
            if decide:
                e = _oldest_reserve(st, wk)
                if e < 0:
                    return STUCK
                wk.cnt[C_PRUNED] += 1
                dec[D_EVICT] = e
            else:
                s = _evict_reserve(st, wk)
                if s != OK:
                    return s
        c = _first_free_but(st, e)
        if c < 0:
            return STUCK
        wk.age[c] = t
        wk.cnt[C_ADDED] += 1
        if decide:
            dec[D_KIND] = D_ADD
            dec[D_SLOT] = c
            return OK
        return _op(st, np.int64(OP_ADD), c, x, yc, w)
    e = np.int64(-1)
    if nlive > budget:
        # a slot holds an example with alpha = 0 besides the budget's support vectors: drop
        # it so that the spare slot is free for the arrival
        if decide:
            e = _oldest_reserve(st, wk)
            if e < 0:
                return STUCK
            dec[D_EVICT] = e
            if policy != POLICY_LRU:
                # the swap search runs on the model without it: unlearn it for real
                dec[D_KIND] = D_EVICT_FAILED
                wk.cnt[C_PRUNED] += 1
                s = _op(st, np.int64(OP_REMOVE), e, st.X[e], 0.0, 0.0)
                if s != OK:
                    return s
                dec[D_KIND] = D_NONE
                e = np.int64(-1)
            else:
                wk.cnt[C_PRUNED] += 1
        else:
            s = _evict_reserve(st, wk)
            if s != OK:
                return s
    c = _first_free_but(st, e)
    if c < 0:
        return STUCK
    if policy == POLICY_LRU:
        oldest = np.int64(-1)
        best_age = t + 1
        for j in range(st.ist[I_HW]):
            if st.status[j] != FREE and j != e and wk.age[j] < best_age:
                best_age = wk.age[j]
                oldest = j
        wk.age[c] = t
        wk.cnt[C_SWAP] += 1
        if decide:
            return _swap_decided(dec, oldest, c)
        s = _op(st, np.int64(OP_REMOVE), oldest, st.X[oldest], 0.0, 0.0)
        if s != OK:
            return s
        return _op(st, np.int64(OP_ADD), c, x, yc, w)
    # ---- S-span policy: step 3, S_old
    s_old = span_sq(st, wk.v, wk.spans, span_set)
    place(st, c, x, yc)  # x is live with weight 0 (no constraint) in the spare slot
    _save(st, wk)
    hw = st.ist[I_HW]
    best = np.inf
    best_i = np.int64(-1)
    wk.dst[0] = c
    wk.wdst[0] = w
    for i in range(hw):
        # step 3-4: the exact SVM on X_old - x_i + x is one weight-transfer path from i to c
        if i == c or st.status[i] == FREE:
            continue
        wk.src[0] = i
        s = transfer(st, 1, wk.src, wk.dst, wk.wdst, st.fs[F_MU])
        if s == OK:
            sp = span_sq(st, wk.v, wk.spans, span_set)
            if sp < best:
                best = sp
                best_i = i
        _load(st, wk)
    if best_i >= 0 and best < s_old:
        # step 5: decremental unlearning of x_p; step 6: incremental learning of x
        wk.age[c] = t
        wk.cnt[C_SWAP] += 1
        if decide:
            return _swap_decided(dec, best_i, c)
        s = _op(st, np.int64(OP_REMOVE), best_i, st.X[best_i], 0.0, 0.0)
        if s != OK:
            return s
        return _op(st, np.int64(OP_REWEIGHT), c, st.X[c], 0.0, w)
    wk.cnt[C_REJECT] += 1
    if decide:
        dec[D_KIND] = D_REJECT
        return OK
    # weight 0: only frees the slot
    return _op(st, np.int64(OP_REMOVE), c, st.X[c], 0.0, 0.0)


@njit(cache=True, inline="always")
def span_step(st, wk, x, yc, w, budget, policy, margin, span_set):
    """Process one arrival (paper 002, steps 1-7). State and work modified in place.

    Parameters
    ----------
    st : EngineState of capacity >= budget + 1
    wk : SpanWork
    x : ndarray (d,) float64
    yc : float, +1 or -1
    w : float >= 0, the example's weight (bound C * w)
    budget : int, most support vectors held (N)
    policy : int, POLICY_SPAN or POLICY_LRU
    margin : float, the arrival updates the model when ``y f(x) <= margin`` (0: misclassified)
    span_set : int, SPAN_ALL or SPAN_MARGIN (see ``span_sq``)

    Returns
    -------
    int status
    """
    # (``_step`` writes its decision buffer only when deciding: ``wk.src`` stands in.
    # Inlined into ``span_learn``, its one caller: a compiled function of its own would be
    # one more module into which Numba links, optimises and emits the whole exact engine.)
    return _step(st, wk, x, yc, w, budget, policy, margin, span_set, False, wk.src)


@njit(cache=True)
def span_decide(st, wk, x, yc, w, budget, policy, margin, span_set, dec):
    """The decision ``span_step`` makes for one arrival, without its exact updates (the
    last resort of a failed chunk relearns the resulting set from an empty model instead).

    The arguments are ``span_step``'s, plus ``dec`` (N_DEC,) int64, which receives
    ``[kind, evicted, removed, slot]``: ``kind`` is D_NONE (x is not learned: weight 0 or
    ``y f(x) > margin``), D_ADD (x learned while the memory is not full), D_SWAP (x replaces
    the stored example ``removed``) or D_REJECT (the span policy turns x away); ``evicted``
    is the stored example with alpha = 0 dropped to make room (-1: none) and ``slot`` the
    slot x goes to (-1: none). The result set is the live slots minus ``evicted`` and
    ``removed``, plus x in ``slot`` with weight ``w``.

    The counters and ages are updated as ``span_step`` updates them. The state is not
    changed, except under the span policy, whose swap search needs the example with
    alpha = 0 unlearned (exactly, by ``remove``) and x placed with weight 0 in the spare
    slot: when that unlearning fails, its status is returned with ``kind`` D_EVICT_FAILED
    (the caller relearns the model without ``evicted`` and decides again). Returns a status.
    """
    return _step(st, wk, x, yc, w, budget, policy, margin, span_set, True, dec)


@njit(cache=True)
def span_learn(st, wk, X, yv, w, budget, policy, margin, span_set):
    """Learn the rows of ``X`` in stream order (one compiled call per chunk).

    Returns (status, i): ``i`` rows processed (the failing row on error). State and work
    buffers modified in place.
    """
    n = X.shape[0]
    for i in range(n):
        s = span_step(st, wk, X[i], yv[i], w[i], budget, policy, margin, span_set)
        if s != OK:
            return s, i
    return OK, n


# ---------------------------------------------------------------------------- paper 004
@njit(cache=True)
def sv_incremental_batch(st, X, yv, w, reweight_sv, sv_weight, buf_i, buf_w, slots):
    """One step of batch-incremental learning (Rueping 2001, paper 004; Syed et al. 1999).

    1. Unlearn every held example whose multiplier is 0 (exact: it does not shape the
       model), so that only the support vectors of the previous step remain;
    2. if ``reweight_sv``: move every remaining support vector to weight ``sv_weight``
       (bound ``C * sv_weight``, the L of SV-L-incremental) along one exact bounds path
       (Diehl & Cauwenberghs 2003);
    3. learn the rows of ``X`` with weights ``w`` exactly, one at a time.

    The result is the exact SVM on {old SVs (weighted)} + {new batch}. ``buf_i`` (n,) int64
    and ``buf_w`` (n,) float64 are scratch; ``slots`` (len(X),) receives the new rows'
    slots. The caller guarantees ``#SV + len(X) <= capacity``. All state modified in place.

    Returns
    -------
    (status, stage) : stage 1-3 where a failure happened (0 when OK). NEEDS_REPAIR (a
        failed KT certificate, state consistent) at stage 1 or 3: the caller runs
        ``adiabatic.repair``, then, after stage 1, calls again with the same arguments to
        finish the step (step 1 goes on with the examples whose multiplier is 0 then).
    """
    hw = st.ist[I_HW]
    for j in range(hw):
        if st.status[j] != FREE and st.alpha[j] == 0.0:
            s = remove(st, j)
            if s != OK:
                return s, 1
    if reweight_sv:
        n = 0
        for j in range(st.ist[I_HW]):
            if st.status[j] != FREE:
                buf_i[n] = j
                buf_w[n] = sv_weight
                n += 1
        if n > 0:
            s = transfer(st, 0, buf_i, buf_i[:n], buf_w[:n], st.fs[F_MU])
            if s == OK:
                refresh(st)
                s = check_drift(st, np.bool_(True))
            if s != OK:
                return s, 2
    s, _ = add_batch(st, X, yv, w, slots)
    if s != OK:
        return s, 3
    return OK, 0


@njit(cache=True)
def kt_intercept(st, rtol):
    """The bias LIBSVM would report for the solution held in ``st`` (stored units).

    When some multiplier is strictly inside its box (``rtol * cb < alpha < (1 - rtol) * cb``)
    the KT conditions fix b and the engine's ``fs[F_B]`` is returned. Otherwise every
    multiplier sits at a bound, b is any point of the interval ``[lo, hi]`` allowed by the
    KT conditions (y_i f(x_i) >= mu at alpha_i = 0, <= mu at alpha_i = cb_i), and the
    engine's b is one end of it; like LIBSVM (``Solver::calculate_rho``) this returns the
    midpoint. Every b of the interval is optimal for the same multipliers, so the model stays
    the exact SVM. Slots of zero bound carry no constraint. Reads ``st`` only (it may be a
    read-only loaded model); allocates one (hw,) array, once per call (a prediction, not a
    per-example loop). Returns the engine's b as well when one side of the interval is empty.
    """
    hw = st.ist[I_HW]
    mu = st.fs[F_MU]
    for i in range(hw):
        if st.status[i] == MARGIN:
            a = st.alpha[i]
            cb = st.cb[i]
            if a > rtol * cb and a < (1.0 - rtol) * cb:
                return st.fs[F_B]
    # f0 = sum_j alpha_j y_j K_ij without b
    f0 = np.zeros(hw)
    for j in range(hw):
        if st.status[j] != FREE and st.alpha[j] != 0.0:
            aj = st.alpha[j] * st.y[j]
            for i in range(hw):
                f0[i] += aj * st.K[j, i]
    lo = -np.inf
    hi = np.inf
    for i in range(hw):
        si = st.status[i]
        if si != MARGIN and si != ERROR and si != RESERVE:
            continue
        cb = st.cb[i]
        if cb <= 0.0:
            continue
        at_upper = st.alpha[i] >= (1.0 - rtol) * cb
        edge = st.y[i] * mu - f0[i]  # the b at which y_i f(x_i) = mu
        # y_i = +1: b >= edge at alpha = 0, b <= edge at alpha = cb; y_i = -1 the reverse
        if (st.y[i] > 0.0) != at_upper:
            if edge > lo:
                lo = edge
        else:
            if edge < hi:
                hi = edge
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        return st.fs[F_B]
    return 0.5 * (lo + hi)
