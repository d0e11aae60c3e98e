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

``span_learn`` in decision mode makes an arrival's decision without its exact updates and
records it: the estimator's last resort after a failed chunk relearns the decided set from
an empty model. An exact operation whose KT certificate fails ends the call with
NEEDS_REPAIR and the point at which the arrival resumes; the caller runs the separately
compiled ``adiabatic.repair`` and calls again, so that the stream does not carry the repair.
"""
from collections import namedtuple

import numpy as np
from ._jit import njit

from .adiabatic import (ERROR, F_B, F_MU, FREE, I_HW, I_NS, MARGIN, NEEDS_REPAIR, OK,
                        RESERVE, STUCK, add_batch, check_drift, decision_point,
                        place, refresh, remove, transfer)
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

# ``span_learn``'s control array ``ctl`` (N_CTL,) int64: the decision of one arrival,
# recorded in decision mode ...
D_KIND = 0
D_EVICT = 1  # stored example with alpha = 0 dropped to make room (-1: none)
D_REMOVE = 2  # stored example x replaces (-1: none)
D_SLOT = 3  # slot x is learned in (-1: none)
K_DECIDE = 4  # 1: decision mode (the decision only, recorded above), 0: learning
K_PHASE = 5  # where the first row resumes after a repair (P_*)
K_SLOT = 6  # the slot the resumed row needs
N_CTL = 7
# ... and the kinds
D_NONE = 0  # x is not learned (weight 0, or y f(x) > margin)
D_ADD = 1  # x learned while the memory is not full
D_SWAP = 2  # x replaces a stored example (span accepted or LRU)
D_REJECT = 3  # the span policy turns x away
D_EVICT_FAILED = 4  # the exact unlearning of the evicted example failed (span policy)
# ... and the phases of an arrival at which it resumes after a repair
P_START = 0  # from the start
P_ADD = 1  # memory not full, the example with alpha = 0 unlearned: learn x
P_FULL = 2  # memory full, the example with alpha = 0 unlearned: LRU or the swap search
P_LRU_ADD = 3  # LRU, the oldest unlearned: learn x in slot ctl[K_SLOT]
P_SWAP_IN = 4  # span, the replaced example unlearned: x in slot ctl[K_SLOT] to weight w
P_DONE = 5  # the arrival's last operation was repaired: nothing is left

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


def alloc_ctl(decide=False):
    """``span_learn``'s control array: learning (or, with ``decide``, decision mode), from
    the start of the first row, with an empty decision record."""
    ctl = np.full(N_CTL, -1, dtype=np.int64)
    ctl[D_KIND] = D_NONE
    ctl[K_DECIDE] = 1 if decide else 0
    ctl[K_PHASE] = P_START
    return ctl


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
@njit(cache=True, no_cpython_wrapper=True)
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


@njit(cache=True, no_cpython_wrapper=True)
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
def _pause(ctl, s, phase, c):
    """Status ``s`` of an exact operation of the arrival; when it is NEEDS_REPAIR (a failed
    KT certificate, the state consistent) ``ctl`` records where the arrival resumes once
    the caller has run ``adiabatic.repair``: ``phase`` (P_*) and the slot ``c`` it needs."""
    if s == NEEDS_REPAIR:
        ctl[K_PHASE] = phase
        ctl[K_SLOT] = c
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
    """The decision record of 'x replaces the stored example p, learned in slot c'."""
    dec[D_KIND] = D_SWAP
    dec[D_REMOVE] = p
    dec[D_SLOT] = c
    return OK


@njit(cache=True)
def span_learn(st, wk, X, yv, w, budget, policy, margin, span_set, ctl, fout):
    """Learn the rows of ``X`` in stream order (one compiled call per chunk): each arrival
    as paper 002's steps 1-7. State, work buffers and ``ctl`` modified in place.

    The arrival's code is written in the loop, not in a function inlined into it: Numba
    copies an inlined body's IR at every call site, and this one holds the swap search
    with an exact transfer path inlined (about 2 CPU s of the first compile).

    Parameters
    ----------
    st : EngineState of capacity >= budget + 1
    wk : SpanWork
    X : ndarray (n, d) float64
    yv : ndarray (n,) float64, labels +1 or -1
    w : ndarray (n,) float64 >= 0, the examples' weights (bound C * w)
    budget : int, most support vectors held (N)
    policy : int, POLICY_SPAN or POLICY_LRU
    margin : float, an arrival updates the model when ``y f(x) <= margin`` (0: misclassified)
    span_set : int, SPAN_ALL or SPAN_MARGIN (see ``span_sq``)
    ctl : ndarray (N_CTL,) int64, control and record (``alloc_ctl``):

        - ``ctl[K_PHASE]``, ``ctl[K_SLOT]``: where the first row resumes (P_START: from
          its start). When an exact operation returns NEEDS_REPAIR (a failed KT
          certificate, the state consistent), ``span_learn`` returns it at that row with
          the phase and slot at which the row's work goes on; the caller runs
          ``adiabatic.repair`` and, when it returns OK, calls again from that row with
          ``ctl`` as it was left. The operations are those of a repair run in place, in
          the same order, so the model is the same bit for bit; the repair is not
          compiled into the stream (cold code: it runs only when a certificate fails).
        - ``ctl[K_DECIDE]`` = 1: decision mode. The arrival's decision is made without its
          exact updates and recorded in ``ctl[D_KIND]``, ``ctl[D_EVICT]``,
          ``ctl[D_REMOVE]``, ``ctl[D_SLOT]`` (the last resort of a failed chunk relearns
          the resulting set from an empty model instead): ``kind`` is D_NONE (x is not
          learned: weight 0 or ``y f(x) > margin``), D_ADD (x learned while the memory is
          not full), D_SWAP (x replaces the stored example ``removed``) or D_REJECT (the
          span policy turns x away); ``evicted`` is the stored example with alpha = 0
          dropped to make room (-1: none) and ``slot`` the slot x goes to (-1: none). The
          result set is the live slots minus ``evicted`` and ``removed``, plus x in
          ``slot`` with weight ``w``. The counters and ages are updated as learning
          updates them. The state is not changed, except under the span policy, whose
          swap search needs the example with alpha = 0 unlearned (exactly, by ``remove``)
          and x placed with weight 0 in the spare slot: when that unlearning fails, its
          status is returned with ``kind`` D_EVICT_FAILED (the caller relearns the model
          without ``evicted`` and decides again). Pass one row.

    fout : ndarray (n,) or (0,) float64: when of length n, ``fout[r]`` receives row r's
        decision value under the model of the rows before it (step 1's f, before the row
        is learned), for the online calibration; rows of weight 0 are not scored. Length
        0: nothing is written.

    Returns
    -------
    (status, i) : ``i`` rows processed (the failing row on error).
    """
    n = X.shape[0]
    keep = fout.shape[0] > 0
    for r in range(n):
        # one arrival (paper 002, steps 1-7), or its rest after a repair, or its decision
        x = X[r]
        yc = yv[r]
        wr = w[r]
        decide = ctl[K_DECIDE] != 0
        phase = ctl[K_PHASE]
        ctl[K_PHASE] = P_START
        e = np.int64(-1)
        if phase == P_START:
            wk.cnt[C_SEEN] += 1
            if decide:
                ctl[D_KIND] = D_NONE
                ctl[D_EVICT] = -1
                ctl[D_REMOVE] = -1
                ctl[D_SLOT] = -1
            if wr <= 0.0:
                continue
            mu = st.fs[F_MU]
            f = decision_point(st, x) / mu
            if keep:
                fout[r] = f
            if yc * f > margin:  # step 2: classified correctly
                continue
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
                phase = P_ADD
                if nlive >= budget:
                    e = _oldest_reserve(st, wk)
                    if e < 0:
                        return STUCK, r
                    wk.cnt[C_PRUNED] += 1
                    if decide:
                        ctl[D_EVICT] = e
                    else:
                        # unlearn it (exact and free: it does not shape the model)
                        s = engine_step(st, np.int64(OP_REMOVE), e, st.X[e], 0.0, 0.0)
                        if s != OK:
                            _pause(ctl, s, P_ADD, np.int64(-1))
                            return s, r
                        e = np.int64(-1)
            else:
                phase = P_FULL
                if nlive > budget:
                    # a slot holds an example with alpha = 0 besides the budget's support
                    # vectors: drop it so that the spare slot is free for the arrival
                    e = _oldest_reserve(st, wk)
                    if e < 0:
                        return STUCK, r
                    wk.cnt[C_PRUNED] += 1
                    if decide:
                        ctl[D_EVICT] = e
                    if not decide or policy != POLICY_LRU:
                        # (deciding under the span policy: the swap search runs on the model
                        # without it, so it is unlearned for real)
                        if decide:
                            ctl[D_KIND] = D_EVICT_FAILED
                        s = engine_step(st, np.int64(OP_REMOVE), e, st.X[e], 0.0, 0.0)
                        if s != OK:
                            _pause(ctl, s, P_FULL, np.int64(-1))
                            return s, r
                        if decide:
                            ctl[D_KIND] = D_NONE
                        e = np.int64(-1)
        elif phase == P_FULL and decide:
            ctl[D_KIND] = D_NONE    # the unlearning before the swap search is repaired
        t = wk.cnt[C_SEEN]
        c = ctl[K_SLOT]
        if phase == P_ADD:
            c = _first_free_but(st, e)
            if c < 0:
                return STUCK, r
            wk.age[c] = t
            wk.cnt[C_ADDED] += 1
            if decide:
                ctl[D_KIND] = D_ADD
                ctl[D_SLOT] = c
                continue
            s = engine_step(st, np.int64(OP_ADD), c, x, yc, wr)
            if s != OK:
                _pause(ctl, s, P_DONE, c)
                return s, r
            continue
        if phase == P_FULL:
            c = _first_free_but(st, e)
            if c < 0:
                return STUCK, r
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
                    _swap_decided(ctl, oldest, c)
                    continue
                s = engine_step(st, np.int64(OP_REMOVE), oldest, st.X[oldest], 0.0, 0.0)
                if s != OK:
                    _pause(ctl, s, P_LRU_ADD, c)
                    return s, r
                phase = P_LRU_ADD
            else:
                # ---- S-span policy: step 3, S_old
                s_old = span_sq(st, wk.v, wk.spans, span_set)
                place(st, c, x, yc)  # x is live with weight 0 (no constraint) in the spare slot
                _save(st, wk)
                hw = st.ist[I_HW]
                best = np.inf
                best_i = np.int64(-1)
                wk.dst[0] = c
                wk.wdst[0] = wr
                for i in range(hw):
                    # step 3-4: the exact SVM on X_old - x_i + x is one weight-transfer path
                    # from i to c
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
                        _swap_decided(ctl, best_i, c)
                        continue
                    s = engine_step(st, np.int64(OP_REMOVE), best_i, st.X[best_i], 0.0, 0.0)
                    if s != OK:
                        _pause(ctl, s, P_SWAP_IN, c)
                        return s, r
                    phase = P_SWAP_IN
                else:
                    wk.cnt[C_REJECT] += 1
                    if decide:
                        ctl[D_KIND] = D_REJECT
                        continue
                    # weight 0: only frees the slot
                    s = engine_step(st, np.int64(OP_REMOVE), c, st.X[c], 0.0, 0.0)
                    if s != OK:
                        _pause(ctl, s, P_DONE, c)
                        return s, r
                    continue
        if phase == P_LRU_ADD:
            s = engine_step(st, np.int64(OP_ADD), c, x, yc, wr)
            if s != OK:
                _pause(ctl, s, P_DONE, c)
                return s, r
            continue
        if phase == P_SWAP_IN:
            s = engine_step(st, np.int64(OP_REWEIGHT), c, st.X[c], 0.0, wr)
            if s != OK:
                _pause(ctl, s, P_DONE, c)
                return s, r
            continue
        # P_DONE: the arrival's last operation was repaired; nothing is left
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
    s, _ = add_batch(st, X, yv, w, slots, np.empty(0))
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
