"""The Twin Vector Machine's per-example loop (Wang & Vucetic 2009, paper 000, Alg. 1-3).

Twin index t occupies engine slots 2t (its positive half, weight s_t+) and 2t+1 (its
negative half, weight s_t-), both at pivot q_t. There are B + 1 twin indices: at most B
are active, and when the budget is full the remaining one is the *spare* that receives a
merged twin. The engine keeps the KT conditions on every half at all times; this module
decides which twins change (Beneficial, UpdateTV) and drives the engine through the
changes (UpdateTVM), keeps C * sum_t (s_t+ + s_t-) constant (Sec. 4.3) and refreshes the
nearest-merge-neighbour cache.

A merge of twins i and j into q_new is one exact *transfer* path: the weights of i and j
flow continuously to the spare twin placed at q_new (the engine's bound path). Because
q_new lies between q_i and q_j the model moves little, so the path is short; unlearning
i and j and learning q_new separately would take several times as many bookkeeping steps.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from . import adiabatic as ad
from .kernel import kernel_value
from .merge import best_pairs, merge_point, nn_update

# integer counters in ``TwinState.ist``
T_NTW = 0  # active twins
T_SEEN = 1
T_ACCEPTED = 2  # examples found Beneficial
T_MERGES = 3
T_REJECTED = 4  # overflow twins dropped because every merge candidate was rejected
T_REMOVED = 5  # twins removed beyond the buffer zone m2
T_SPARE = 6  # the inactive twin index that receives the next merged twin
N_TIST = 8

# float parameters in ``TwinState.par``
P_M1 = 0
P_M2 = 1
P_ETA = 2  # < 0: rejection off
P_C = 3  # C of the estimator
P_CONTROL_C = 4  # 1.0: keep C_eff * sum(s) = C * B
P_MERGE = 5  # merge.INPUT or merge.FEATURE
P_ONE_SIDED = 6
P_SSUM = 7  # sum of all twin weights
N_TPAR = 8

TwinState = namedtuple(
    "TwinState",
    ["Q", "s_pos", "s_neg", "s_tot", "coef", "fq", "side", "active", "nn_idx", "nn_d",
     "dirty", "qnew", "tmp", "src", "dst", "wdst", "ist", "par"],
)


def alloc_twins(budget, d):
    """Allocate the twin arrays for ``budget`` twins (+1 spare) of ``d`` features."""
    n = int(budget) + 1
    tw = TwinState(
        Q=np.zeros((n, d)), s_pos=np.zeros(n), s_neg=np.zeros(n), s_tot=np.zeros(n),
        coef=np.zeros(n), fq=np.zeros(n), side=np.zeros(n, dtype=np.int8),
        active=np.zeros(n, dtype=np.int8), nn_idx=np.full(n, -1, dtype=np.int64),
        nn_d=np.full(n, np.inf), dirty=np.zeros(n, dtype=np.int8), qnew=np.zeros(d),
        tmp=np.zeros(d), src=np.zeros(4, dtype=np.int64), dst=np.zeros(2, dtype=np.int64),
        wdst=np.zeros(2), ist=np.zeros(N_TIST, dtype=np.int64), par=np.zeros(N_TPAR),
    )
    tw.ist[T_SPARE] = n - 1
    return tw


def twins_nbytes(B, d):
    """Closed form of the twin arrays' bytes for budget B: with n = B + 1,
    ``8 (n d + 7 n + 2 d + 8 + N_TIST + N_TPAR) + 3 n``."""
    n = B + 1
    return 8 * (n * d + 5 * n + n + 2 * d + 4 + 2 + 2 + N_TIST + N_TPAR) + 3 * n


@njit(cache=True, inline="always")
def twin_decision(st, tw, x):
    """f(x) = sum_t (alpha_t+ - alpha_t-) K(q_t, x) + b over the active twins."""
    code = st.ist[ad.I_KCODE]
    s = st.fs[ad.F_B]
    for j in range(tw.coef.shape[0]):
        c = tw.coef[j]
        if c != 0.0:
            s += c * kernel_value(code, st.kpar, tw.Q[j], x)
    return s


@njit(cache=True)
def _clear_twin(st, j):
    """Unlearn both halves of twin j (decremental paths); the slots stay live with weight 0."""
    s = ad._deactivate(st, 2 * j)
    if s != ad.OK:
        return s
    return ad._deactivate(st, 2 * j + 1)


@njit(cache=True)
def _place_twin(st, tw, j, q, sp, sn):
    """Put twin j's pivot at q with weights (sp, sn) recorded, both halves at weight 0."""
    for k in range(q.shape[0]):
        tw.Q[j, k] = q[k]
    ad.place(st, 2 * j, tw.Q[j], 1.0)
    ad.place_copy(st, 2 * j + 1, 2 * j, -1.0)
    tw.s_pos[j] = sp
    tw.s_neg[j] = sn
    tw.s_tot[j] = sp + sn
    tw.active[j] = 1
    tw.dirty[j] = 1


@njit(cache=True)
def _set_twin(st, tw, j, q, sp, sn):
    """Put twin j at pivot q with weights (sp, sn) and learn its halves (incremental paths)."""
    _place_twin(st, tw, j, q, sp, sn)
    s = ad.OK
    if sp > 0.0:
        s = ad._activate(st, 2 * j, sp)
        if s != ad.OK:
            return s
    if sn > 0.0:
        s = ad._activate(st, 2 * j + 1, sn)
    return s


@njit(cache=True)
def _merge(st, tw, i, j):
    """Merge twins i and j into the spare twin at ``tw.qnew`` along one transfer path; i
    becomes the spare, j is left empty (weight 0) for the new example."""
    k = tw.ist[T_SPARE]
    msp = tw.s_pos[i] + tw.s_pos[j]
    msn = tw.s_neg[i] + tw.s_neg[j]
    _place_twin(st, tw, k, tw.qnew, msp, msn)
    tw.src[0] = 2 * i
    tw.src[1] = 2 * i + 1
    tw.src[2] = 2 * j
    tw.src[3] = 2 * j + 1
    tw.dst[0] = 2 * k
    tw.dst[1] = 2 * k + 1
    tw.wdst[0] = msp
    tw.wdst[1] = msn
    s = ad.transfer(st, 4, tw.src, tw.dst, tw.wdst)
    for t in (i, j):
        tw.s_pos[t] = 0.0
        tw.s_neg[t] = 0.0
        tw.s_tot[t] = 0.0
        tw.coef[t] = 0.0
        tw.active[t] = 0
        tw.dirty[t] = 1
    tw.ist[T_SPARE] = i
    return s


@njit(cache=True)
def _sync(st, tw, mode):
    """After an update: exact g, twin coefficients, f at the pivots, sides, and the
    nearest-merge-neighbour cache. Returns a status (drift check)."""
    ad.refresh(st)
    s = ad.check_drift(st, False)
    one_sided = tw.par[P_ONE_SIDED] > 0.0
    for j in range(tw.active.shape[0]):
        if not tw.active[j]:
            tw.coef[j] = 0.0
            continue
        tw.coef[j] = st.alpha[2 * j] - st.alpha[2 * j + 1]
        f = st.g[2 * j] + 1.0
        tw.fq[j] = f
        side = 1 if f >= 0.0 else -1
        if side != tw.side[j]:
            tw.side[j] = side
            if one_sided:
                tw.dirty[j] = 1
    nn_update(mode, st.ist[ad.I_KCODE], st.kpar, tw.Q, tw.s_tot, tw.side, one_sided,
              tw.active, tw.dirty, tw.nn_idx, tw.nn_d, tw.tmp)
    for j in range(tw.active.shape[0]):
        tw.dirty[j] = 0
    return s


@njit(cache=True)
def _learn_one(st, tw, x, yi, B):
    """Algorithm 1 for one example: Beneficial, UpdateTV, UpdateTVM, control of C.

    Returns (status, accepted)."""
    tw.ist[T_SEEN] += 1
    n = tw.ist[T_NTW]
    if n >= B:
        f = twin_decision(st, tw, x)
        if abs(f) > tw.par[P_M1]:
            return ad.OK, False
    tw.ist[T_ACCEPTED] += 1
    mode = int(tw.par[P_MERGE])
    sp = 1.0 if yi > 0 else 0.0
    sn = 1.0 - sp
    s = ad.OK
    if n < B:
        tw.ist[T_NTW] = n + 1
        s = _set_twin(st, tw, n, x, sp, sn)
        tw.par[P_SSUM] += 1.0
    else:
        k = -1
        worst = -1.0
        for j in range(tw.active.shape[0]):
            if tw.active[j]:
                a = abs(tw.fq[j])
                if a > worst:
                    worst = a
                    k = j
        if worst > tw.par[P_M2]:
            tw.ist[T_REMOVED] += 1
            tw.par[P_SSUM] += 1.0 - tw.s_tot[k]
            s = _clear_twin(st, k)
            if s == ad.OK:
                s = _set_twin(st, tw, k, x, sp, sn)
        else:
            i1, j1, i2, j2 = best_pairs(tw.active.shape[0], tw.nn_idx, tw.nn_d)
            code = st.ist[ad.I_KCODE]
            eta = tw.par[P_ETA]
            mi = -1
            mj = -1
            for attempt in range(2):
                i = i1 if attempt == 0 else i2
                j = j1 if attempt == 0 else j2
                if i < 0 or j < 0:
                    continue
                merge_point(mode, code, st.kpar, tw.Q, tw.s_tot, i, j, tw.qnew, tw.tmp)
                if eta >= 0.0:
                    fnew = twin_decision(st, tw, tw.qnew)
                    si = tw.s_tot[i]
                    sj = tw.s_tot[j]
                    fhat = (si * tw.fq[i] + sj * tw.fq[j]) / (si + sj)
                    lo = (1.0 - eta) * fhat
                    hi = (1.0 + eta) * fhat
                    if lo > hi:
                        lo, hi = hi, lo
                    if not (lo < fnew < hi):
                        continue
                mi = i
                mj = j
                break
            if mi < 0:
                tw.ist[T_REJECTED] += 1
                return ad.OK, True
            tw.ist[T_MERGES] += 1
            s = _merge(st, tw, mi, mj)
            if s == ad.OK:
                s = _set_twin(st, tw, mj, x, sp, sn)
            tw.par[P_SSUM] += 1.0
    if s != ad.OK:
        return s, True
    if tw.par[P_CONTROL_C] > 0.0:
        s = ad.change_C(st, tw.par[P_C] * B / tw.par[P_SSUM])
        if s != ad.OK:
            return s, True
    s = _sync(st, tw, mode)
    return s, True


@njit(cache=True)
def tvm_partial_fit(st, tw, X, y, B):
    """Learn the rows of X (labels y in {-1, +1}) in order: one compiled call per chunk.

    ``st`` (engine) and ``tw`` (twins) are modified in place. Returns (status, row): the
    number of rows learned, or the failing row when status != OK.
    """
    for t in range(X.shape[0]):
        s, acc = _learn_one(st, tw, X[t], y[t], B)
        if s != ad.OK:
            return s, t
    return ad.OK, X.shape[0]


@njit(cache=True)
def twin_decision_batch(st, tw, X, out):
    """out[t] = f(X[t]) (modified in place): the scoring floor used by the benchmarks."""
    for t in range(X.shape[0]):
        out[t] = twin_decision(st, tw, X[t])
