"""The Twin Vector Machine's per-example loop (Wang & Vucetic 2009, paper 000, Alg. 1-3).

Twin index t occupies engine slots 2t (its positive half, weight s_t+) and 2t+1 (its
negative half, weight s_t-), both at pivot q_t. There are B + 2 twin indices: at most B
are active; the others are *spares* that receive the new example and a merged twin. The engine keeps the KT conditions on every half at all times; this module
decides which twins change (Beneficial, UpdateTV) and drives the engine through the
changes (UpdateTVM), keeps C * sum_t (s_t+ + s_t-) constant (Sec. 4.3) and refreshes the
nearest-merge-neighbour cache.

Every accepted example is ONE exact *transfer* path of the engine: the weights of the
twins that leave (a merged pair, or a twin beyond m2) flow continuously to the spares
placed at q_new and at the new example, while C moves to C * B / sum(s) (Sec. 4.3) as a
change of the engine's margin target mu = sum(s) / B (bounds stay C * s).
Because q_new lies between q_i and q_j the model moves little, so the path is short;
unlearning i and j, learning q_new and the example, and then changing C as separate
paths took about five times as many bookkeeping steps.
"""
from collections import namedtuple

import numpy as np
from ._jit import NO_REFCOUNT, njit

from . import adiabatic as ad
from .kernel import RBF, decision_values, exp_neg, kernel_expansion_at
from .merge import before, merge_point, nn_update, sorted_pairs

# integer counters in ``TwinState.ist``
T_NTW = 0  # active twins
T_SEEN = 1
T_ACCEPTED = 2  # examples found Beneficial
T_MERGES = 3
T_REJECTED = 4  # overflow twins dropped because every merge candidate was rejected
T_REMOVED = 5  # twins removed beyond the buffer zone m2
T_SPARE = 6  # first spare twin index
T_SPARE2 = 7  # second spare twin index
T_TRIES = 8  # merge candidates tried
T_NNROWS = 9  # rows of the nearest-merge-neighbour cache recomputed in full
T_STUCK = 10  # 1: no merge passed rejection and the twins have not changed since
N_TIST = 11

# float parameters in ``TwinState.par``
P_M1 = 0
P_M2 = 1
P_ETA = 2  # < 0: rejection off
P_C = 3  # C of the estimator
P_CONTROL_C = 4  # 1.0: keep C_eff * sum(s) = C * B
P_MERGE = 5  # merge.INPUT or merge.FEATURE
P_ONE_SIDED = 6  # 0: Global merging, or one of the One-Sided codes below
P_SSUM = 7  # sum of all twin weights
P_TRIES = 8  # merge candidates tried before the new example is dropped
P_REMOVAL = 9  # REMOVAL_ABS (0.0; also every model saved before the option) or REMOVAL_OWN_SIDE
N_TPAR = 10

# ``TwinState.par[P_ONE_SIDED]``: the paper's One-Sided merging (twins merge only with
# twins on their side of the model, the sign of f(q)); the same keeping each side's number
# of twins at its label's share of the twins' weight (``_merge_side``); and both with a
# twin's side its majority label (s+ >= s-: positive) instead of the sign of f(q)
ONE_SIDED = 1.0
ONE_SIDED_BALANCED = 2.0
LABEL_SIDED = 3.0
LABEL_SIDED_BALANCED = 4.0
ONE_SIDED_CODES = (ONE_SIDED, ONE_SIDED_BALANCED, LABEL_SIDED, LABEL_SIDED_BALANCED)

# which twin the buffer-zone test of Alg. 3 looks at (``TwinState.par[P_REMOVAL]``)
REMOVAL_ABS = 0.0  # the largest |f(q_j)| (the paper's text)
REMOVAL_OWN_SIDE = 1.0  # the largest y_j f(q_j), y_j = sign(s_j+ - s_j-); |f| when s_j+ = s_j-

M2_TOL = 1e-9  # relative slack of the removal test |f(q)| > m2
M1_TOL = 1e-9  # relative slack of the Beneficial test |f(x)| > m1 (see tvm_partial_fit)

TwinState = namedtuple(
    "TwinState",
    ["Q", "s_pos", "s_neg", "s_tot", "coef", "fq", "side", "active", "nn_idx", "nn_d",
     "nn2_idx", "nn2_d", "nn2_ok", "dirty", "order", "qnew", "tmp", "src", "dst", "wdst", "ist", "par",
     "pk", "pi", "drow", "drow_t", "dl", "QT"],
)
# scratch fields: not part of a saved model (``scratch_fields`` reallocates them)
SCRATCH_FIELDS = ("pk", "pi", "drow", "drow_t", "dl", "QT")

# rows of ``TwinState.drow`` (scratch of one accepted example; ``drow_t`` says whose)
D_NEW = 0  # squared distances of the twin placed at the new example to every twin
D_MERGED = 1  # ... of the merged twin (written by the rejection test, or when placed)
D_MERGED_K = 2  # the merged pivot's kernel values (RBF; written by the rejection test)
D_NEW_K = 3  # the new example's kernel values (RBF; written by the Beneficial test where
# the twin's coefficient is not 0)
# ``drow_t[D_NEW]``, ``drow_t[D_MERGED]``: the twin index whose distances the row holds
# (-1: none); ``drow_t[D_MERGED_K]``: 1 when rows D_MERGED and D_MERGED_K hold those of
# ``qnew`` as the rejection test left it, 0 otherwise


def scratch_fields(n, d):
    """The scratch arrays for n = budget + 2 twin indices of d features: all pairs' merge costs and
    indices, for the rejection fallback (``pk`` also holds one row of feature-space merge
    costs for the nearest-merge-neighbour cache); the distance and kernel rows of the
    twins placed by one update (``drow``, ``drow_t``: shared by the rejection test, the
    engine's kernel rows and the nearest-merge-neighbour cache) and the cache's list of
    changed twins (``dl``); the pivots transposed, ``QT[k, t] = Q[t, k]``, which
    ``tvm_partial_fit`` fills for the duration of a call (its scoring loop reads them;
    zero between calls)."""
    npairs = n * (n - 1) // 2
    return {"pk": np.zeros(npairs), "pi": np.zeros(npairs, dtype=np.int64),
            "drow": np.zeros((4, n)), "drow_t": np.full(3, -1, dtype=np.int64),
            "dl": np.zeros(2 * n, dtype=np.int64), "QT": np.zeros((d, n))}


def alloc_twins(budget, d):
    """Allocate the twin arrays for ``budget`` twins (+2 spares) of ``d`` features."""
    n = int(budget) + 2
    tw = TwinState(
        Q=np.zeros((n, d)), s_pos=np.zeros(n), s_neg=np.zeros(n), s_tot=np.zeros(n),
        coef=np.zeros(n), fq=np.zeros(n), side=np.zeros(n, dtype=np.int8),
        active=np.zeros(n, dtype=np.int8), nn_idx=np.full(n, -1, dtype=np.int64),
        nn_d=np.full(n, np.inf), nn2_idx=np.full(n, -1, dtype=np.int64),
        nn2_d=np.full(n, np.inf), nn2_ok=np.ones(n, dtype=np.int8), dirty=np.zeros(n, dtype=np.int8),
        order=np.zeros(n, dtype=np.int64), qnew=np.zeros(d),
        tmp=np.zeros(d), src=np.zeros(4, dtype=np.int64), dst=np.zeros(3, dtype=np.int64),
        wdst=np.zeros(3), ist=np.zeros(N_TIST, dtype=np.int64), par=np.zeros(N_TPAR),
        **scratch_fields(n, d),
    )
    tw.ist[T_SPARE] = n - 2
    tw.ist[T_SPARE2] = n - 1
    return tw


def twins_nbytes(B, d):
    """Closed form of the twin arrays' bytes for budget B: with n = B + 2,
    ``8 (n (n - 1) + 2 n d + 16 n + 2 d + 13 + N_TIST + N_TPAR) + 4 n``."""
    n = B + 2
    return (8 * (n * (n - 1) + 2 * n * d + 10 * n + 2 * d + 4 + 3 + 3 + N_TIST + N_TPAR)
            + 8 * (4 * n + 3 + 2 * n) + 4 * n)


@njit(cache=True, inline="always")
def twin_decision(code, kpar, fs, Q, coef, x):
    """f(x) = sum_t (alpha_t+ - alpha_t-) K(q_t, x) + b over the active twins (pivots ``Q``,
    coefficients ``coef``; kernel ``code``, ``kpar`` and ``fs`` of the engine).

    The engine stores the problem with margin target mu = sum(s) / B (control of C), so
    the stored coefficients and bias are divided by mu."""
    s = kernel_expansion_at(code, kpar, Q, coef, x.reshape(1, -1), 0, fs[ad.F_B])
    return s / fs[ad.F_MU]


@njit(cache=True)
def _place_twin(st, tw, j, q, sp, sn):
    """Put twin j's pivot at q with weights (sp, sn) recorded, both halves at weight 0
    (``_place_twin_at`` on the state's arrays; records no distance row)."""
    _place_twin_at(st.X, st.y, st.wt, st.cb, st.alpha, st.g, st.status, st.K, st.kpar, st.fs,
                   st.ist, tw.Q, tw.s_pos, tw.s_neg, tw.s_tot, tw.active, tw.dirty, tw.drow,
                   tw.drow_t, tw.coef, j, q, sp, sn, np.int64(-1), np.int64(-1), np.bool_(False))


@njit(cache=True, **NO_REFCOUNT)
def _place_twin_at(X, y, wt, cb, alpha, g, status, K, kpar, fs, ist, Q, s_pos, s_neg, s_tot,
                   active, dirty, drow, drow_t, coef, j, q, sp, sn, r, rk, part):
    """Put twin j's pivot at q with weights (sp, sn) recorded, both halves (engine slots
    2j, 2j + 1) live at weight 0. Modified in place.

    The engine's part is ``ad.place_at`` of slot 2j followed by ``ad.place_copy_at`` of
    slot 2j + 1, done in one pass over the twins, with the same results bit for bit (the
    same kernel values, the same f(q) summed in the same slot order): each twin's kernel
    value K(q_t, q) is computed once and written to the four entries of the two rows and
    columns, and g of both halves comes from that pass instead of a second sweep over K.

    ``r`` >= 0: also record the squared distances ||q_t - q||^2 of every live twin in
    ``drow[r]`` (and j in ``drow_t[r]``) for the nearest-merge-neighbour cache (input
    space). ``rk`` >= 0: rows ``drow[r]`` (distances) and ``drow[rk]`` (RBF kernel values)
    already hold those of q, computed by the rejection test (``_merge_ok``), and are read
    instead of computed; with ``part``, only for the twins whose ``coef`` is not 0 (those
    the Beneficial test scored the new example against in ``tvm_partial_fit``). Those rows are
    computed from the twins' pivots ``Q``, the engine's kernel values from its points
    ``X``: the same numbers, since the points of slots 2t and 2t + 1 are q_t (written
    together, here). Takes arrays, not the state tuples (reference counts: see
    ``kernels.adiabatic``). RBF kernel values are ``exp_neg``'s, as in TVM's scoring (within
    1 ulp of the engine's ``np.exp``). Mirrors ``ad.place_at`` / ``ad.place_copy_at``: a change
    there must be made here too (``tests/test_tvm.py`` checks the KT conditions after
    every update and the model against the exact SVM solved on the twins)."""
    d = q.shape[0]
    c0 = 2 * j
    c1 = c0 + 1
    for k in range(d):
        Q[j, k] = q[k]
    for k in range(d):
        X[c0, k] = Q[j, k]
        X[c1, k] = Q[j, k]
    # high-water mark as place_at (slot c0) and then place_copy_at (slot c1) set it
    hw0 = ist[ad.I_HW]
    if c0 + 1 > hw0:
        hw0 = c0 + 1
    hw1 = hw0 if hw0 > c1 else c1 + 1
    ist[ad.I_HW] = hw1
    code = ist[ad.I_KCODE]
    gk = kpar[0]
    alpha[c0] = 0.0
    alpha[c1] = 0.0
    f = fs[ad.F_B]
    for e in range(0, hw0, 2):
        if e == c0:
            continue
        o = e + 1
        live_o = o < hw0 and status[o] != ad.FREE
        if status[e] != ad.FREE:
            src = e
        elif live_o:
            src = o
        else:
            continue
        t = e // 2
        kv = 0.0
        if rk >= 0 and (not part or coef[t] != 0.0):
            d2 = drow[r, t]
            if code == RBF:
                kv = drow[rk, t]
        else:
            d2 = 0.0
            for m in range(d):
                u = X[src, m] - X[c0, m]
                d2 += u * u
            if code == RBF:
                kv = exp_neg(-gk * d2)
            if r >= 0:
                drow[r, t] = d2
        if code != RBF:
            dot = 0.0
            for m in range(d):
                dot += X[src, m] * X[c0, m]
            kv = dot if code == ad.LINEAR else (gk * dot + kpar[2]) ** kpar[1]
        if src == e:
            K[c0, e] = kv
            K[e, c0] = kv
            K[c1, e] = kv
            K[e, c1] = kv
            a = alpha[e]
            if a != 0.0:
                f += a * y[e] * kv
        if live_o:
            K[c0, o] = kv
            K[o, c0] = kv
            K[c1, o] = kv
            K[o, c1] = kv
            a = alpha[o]
            if a != 0.0:
                f += a * y[o] * kv
    # the twin's own entries: K(q, q), as place_at computes it
    d2 = 0.0
    for m in range(d):
        u = X[c0, m] - X[c0, m]
        d2 += u * u
    if code == RBF:
        kv = exp_neg(-gk * d2)
    else:
        dot = 0.0
        for m in range(d):
            dot += X[c0, m] * X[c0, m]
        kv = dot if code == ad.LINEAR else (gk * dot + kpar[2]) ** kpar[1]
    K[c0, c0] = kv
    K[c0, c1] = kv
    K[c1, c0] = kv
    K[c1, c1] = kv
    if r >= 0:
        drow[r, j] = 0.0
        drow_t[r] = j
    y[c0] = 1.0
    y[c1] = -1.0
    wt[c0] = 0.0
    wt[c1] = 0.0
    cb[c0] = 0.0
    cb[c1] = 0.0
    status[c0] = ad.ZERO
    status[c1] = ad.ZERO
    mu = fs[ad.F_MU]
    g[c0] = 1.0 * f - mu
    g[c1] = -1.0 * f - mu
    s_pos[j] = sp
    s_neg[j] = sn
    s_tot[j] = sp + sn
    active[j] = 1
    dirty[j] = 1


@njit(cache=True, inline="always")
def _merge_side(active, side, s_tot, s_pos):
    """The side (+1: f(q) >= 0, or with label sides s+ >= s-; -1 the other) whose twins the
    next merge is taken from under balanced One-Sided merging, or 0 for the cheapest pair
    of either side.

    One-Sided merging never moves a twin across the model, and the pair it merges is
    almost always the newest twin (weight 1) with its nearest neighbour: so each side keeps
    the number of twins the first ``budget`` examples gave it. A side with a few twins too
    few holds larger cells, whose pivots lie farther from the boundary, and the boundary
    moves into it; the examples of that side's class that it then misclassifies are learned
    into twins of the other side, and the error grows along the stream
    (``docs/results/tvm_profile.md``). Here the positive side's share of the twins is held
    at the positive label's share of the twins' weight (``s_pos`` over ``s_tot``; the label
    weights, not the weight each side holds, which counts the absorbed examples on the
    wrong side): a side holding more than its share by more than one twin gives up the
    merge. It must keep two twins, so that it has a pair."""
    n = 0
    npos = 0
    m = 0.0
    mpos = 0.0
    for j in range(active.shape[0]):
        if active[j]:
            n += 1
            m += s_tot[j]
            mpos += s_pos[j]
            if side[j] > 0:
                npos += 1
    if m <= 0.0:
        return 0
    tpos = n * (mpos / m)
    if npos > tpos + 1.0 and npos >= 2:
        return 1
    if n - npos > (n - tpos) + 1.0 and n - npos >= 2:
        return -1
    return 0


@njit(cache=True, inline="always")
def _retire(tw, t):
    """Twin t leaves (its halves are at weight 0 after the transfer)."""
    _tw_active = tw.active
    _tw_coef = tw.coef
    _tw_dirty = tw.dirty
    _tw_s_neg = tw.s_neg
    _tw_s_pos = tw.s_pos
    _tw_s_tot = tw.s_tot
    _tw_s_pos[t] = 0.0
    _tw_s_neg[t] = 0.0
    _tw_s_tot[t] = 0.0
    _tw_coef[t] = 0.0
    _tw_active[t] = 0
    _tw_dirty[t] = 1


@njit(cache=True, inline="always")
def _sync(st, tw, mode):
    """After an update: exact g, twin coefficients, f at the pivots, sides, and the
    nearest-merge-neighbour cache. Returns a status (drift check).

    When the periodic KT certificate fails it returns ``ad.NEEDS_REPAIR`` at once, before
    the twins are brought up to date: the engine's state is consistent, and the caller
    (the estimator, in Python) runs ``ops.tvm_repair``, which repairs the engine
    (``adiabatic.repair``, compiled only by a process that needs it) and then does the rest
    of this function, as if the repair had run here."""
    # exact g (and one Newton correction of alpha_S, b) every ``check_every`` updates, with
    # the drift check of R and the KT certificate; in between, the paths keep g up to date incrementally
    _tw_Q = tw.Q
    _tw_active = tw.active
    _tw_coef = tw.coef
    _tw_dirty = tw.dirty
    _tw_fq = tw.fq
    _tw_ist = tw.ist
    _tw_nn2_d = tw.nn2_d
    _tw_nn2_idx = tw.nn2_idx
    _tw_nn2_ok = tw.nn2_ok
    _tw_nn_d = tw.nn_d
    _tw_nn_idx = tw.nn_idx
    _tw_par = tw.par
    _tw_pk = tw.pk
    _tw_s_tot = tw.s_tot
    _tw_side = tw.side
    _tw_tmp = tw.tmp
    _st_alpha = st.alpha
    _st_fs = st.fs
    _st_g = st.g
    _st_ist = st.ist
    _st_kpar = st.kpar
    s = ad.OK
    _st_ist[ad.I_NOPS] += 1
    if _st_ist[ad.I_NOPS] >= _st_ist[ad.I_CHECK_EVERY]:
        ad.refresh(st)
        # and the KT certificate of the engine's operations, on the exact g (O(B))
        s = ad._certify(st, ad.check_drift(st, np.bool_(True)))
        if s == ad.NEEDS_REPAIR:
            return s
    one_sided = _tw_par[P_ONE_SIDED] > 0.0
    by_label = _tw_par[P_ONE_SIDED] >= LABEL_SIDED
    _tw_s_pos = tw.s_pos
    _tw_s_neg = tw.s_neg
    for j in range(_tw_active.shape[0]):
        if not _tw_active[j]:
            _tw_coef[j] = 0.0
            continue
        _tw_coef[j] = _st_alpha[2 * j] - _st_alpha[2 * j + 1]
        mu = _st_fs[ad.F_MU]
        f = (_st_g[2 * j] + mu) / mu
        _tw_fq[j] = f
        side = 1 if f >= 0.0 else -1
        if by_label:
            side = 1 if _tw_s_pos[j] >= _tw_s_neg[j] else -1
        if side != _tw_side[j]:
            _tw_side[j] = side
            if one_sided:
                _tw_dirty[j] = 1
    _tw_drow_t = tw.drow_t
    _tw_ist[T_NNROWS] += nn_update(mode, _st_ist[ad.I_KCODE], _st_kpar, _tw_Q, _tw_s_tot,
                                  _tw_side, one_sided, _tw_active, _tw_dirty, _tw_nn_idx,
                                  _tw_nn_d, _tw_nn2_idx, _tw_nn2_d, _tw_nn2_ok, _tw_tmp, tw.dl,
                                  _tw_pk, tw.drow, _tw_drow_t[:D_MERGED_K])
    for j in range(_tw_active.shape[0]):
        _tw_dirty[j] = 0
    for r in range(_tw_drow_t.shape[0]):
        _tw_drow_t[r] = -1
    _tw_dl = tw.dl
    for r in range(_tw_dl.shape[0]):
        _tw_dl[r] = 0
    return s


@njit(cache=True, inline="always")
def _add_dst(tw, m, slot, w):
    _tw_dst = tw.dst
    _tw_wdst = tw.wdst
    _tw_dst[m] = slot
    _tw_wdst[m] = w
    return m + 1


@njit(cache=True, inline="always")
def _sq_dist_row(QT, x, out):
    """out[t] = ||q_t - x||^2 for every twin index t, from the pivots transposed (``QT[k, t]``
    = ``Q[t, k]``), feature by feature: the loop over the twins vectorises, and each twin's
    sum is taken in increasing k from 0.0, as one twin at a time sums it (the same bits).
    Modified in place; inlined into the Beneficial test and the rejection test, which
    compile without reference counting, so the row views cost nothing."""
    for t in range(out.shape[0]):
        out[t] = 0.0
    for k in range(x.shape[0]):
        xk = x[k]
        for t in range(out.shape[0]):
            u = QT[k, t] - xk
            out[t] += u * u


@njit(cache=True, no_cpython_wrapper=True, **NO_REFCOUNT)
def _merge_ok(mode, code, kpar, fs, Q, QT, coef, s_tot, fq, qnew, tmp, tw_ist, drow, drow_t, i,
              j, eta):
    """Write the merged pivot of twins i and j into ``qnew`` and apply the rejection test
    (Sec. 4.2.4): f(q_new) within (1 -+ eta) of the weighted mean of f(q_i), f(q_j).
    Always True when eta < 0 (rejection off). Takes the arrays it uses, the twins' (their
    counters ``tw_ist``) and the engine's ``kpar``, ``fs``, rather than the state tuples,
    whose every member would have its reference count updated on each call (see
    ``kernels.adiabatic``).

    RBF kernel: f(q_new) is summed as ``twin_decision`` sums it (the same value bit for
    bit), and the squared distance and kernel value of q_new to every twin index are
    kept in ``drow[D_MERGED]`` and ``drow[D_MERGED_K]`` (``drow_t[D_MERGED_K]`` = 1): the
    merged twin placed at q_new needs them for its kernel row and its merge costs.
    ``QT``: the pivots transposed (``QT[k, t] = Q[t, k]``, as ``tvm_partial_fit`` keeps them
    during a call), over which the distances are summed."""
    tw_ist[T_TRIES] += 1
    drow_t[D_MERGED_K] = 0
    merge_point(mode, code, kpar, Q, s_tot, i, j, qnew, tmp)
    if eta < 0.0:
        return True
    if code == RBF:
        gk = kpar[0]
        sf = fs[ad.F_B]
        nq = coef.shape[0]
        # the squared distances to every twin index, as the Beneficial test sums them (at
        # d = 123, eight twins per pass over qnew, scalar, cost about 1.6 times a scored row
        # per merge tried)
        _sq_dist_row(QT, qnew, drow[D_MERGED])
        # three loops, so that the kernel values' (exp_neg) vectorises
        for t in range(nq):
            drow[D_MERGED_K, t] = exp_neg(-gk * drow[D_MERGED, t])
        for t in range(nq):
            c = coef[t]
            if c != 0.0:
                sf += c * drow[D_MERGED_K, t]
        fnew = sf / fs[ad.F_MU]
        drow_t[D_MERGED_K] = 1
    else:
        fnew = twin_decision(code, kpar, fs, Q, coef, qnew)
    si = s_tot[i]
    sj = s_tot[j]
    fhat = (si * fq[i] + sj * fq[j]) / (si + sj)
    lo = (1.0 - eta) * fhat
    hi = (1.0 + eta) * fhat
    if lo > hi:
        lo, hi = hi, lo
    return lo < fnew < hi


@njit(cache=True, inline="always")
def _learn_one(st, tw, x, yi, wi, B):
    """Algorithm 1 for one Beneficial example of weight ``wi`` > 0 (1 in the paper; a
    weight counts in the twin's s+ or s- like that many copies): UpdateTV, UpdateTVM,
    control of C. (The Beneficial test itself runs in the caller's loop.)

    Returns (status, accepted)."""
    _tw_Q = tw.Q
    _tw_active = tw.active
    _tw_coef = tw.coef
    _tw_dst = tw.dst
    _tw_fq = tw.fq
    _tw_ist = tw.ist
    _tw_nn_d = tw.nn_d
    _tw_nn_idx = tw.nn_idx
    _tw_order = tw.order
    _tw_par = tw.par
    _tw_qnew = tw.qnew
    _tw_s_neg = tw.s_neg
    _tw_s_pos = tw.s_pos
    _tw_s_tot = tw.s_tot
    _tw_src = tw.src
    _tw_tmp = tw.tmp
    _tw_wdst = tw.wdst
    _st_fs = st.fs
    _st_ist = st.ist
    _st_kpar = st.kpar
    _tw_drow = tw.drow
    _tw_drow_t = tw.drow_t
    _tw_QT = tw.QT
    for r in range(_tw_drow_t.shape[0]):
        _tw_drow_t[r] = -1
    n = _tw_ist[T_NTW]
    _tw_ist[T_ACCEPTED] += 1
    mode = int(_tw_par[P_MERGE])
    half = 0 if yi > 0 else 1
    sp = wi if yi > 0 else 0.0
    sn = wi - sp
    s1 = _tw_ist[T_SPARE]
    s2 = _tw_ist[T_SPARE2]
    n_src = 0
    leave1 = -1
    leave2 = -1
    if n < B:
        # UpdateTV, room left: the example becomes a twin (it takes the spare s1 and the
        # next unused index becomes the spare)
        pass
    else:
        k = -1
        worst = -np.inf
        _st_status = st.status
        own_side = _tw_par[P_REMOVAL] == REMOVAL_OWN_SIDE
        # one pass over the twins finds the twin farthest out (buffer-zone test) and lists
        # the twins with a cached partner in ``order``, in increasing index, with the first
        # cheapest of them (``bi0``: what the candidate loop below would find first by
        # scanning ``order`` in that order; only used when no twin is beyond m2)
        m0 = 0
        bi0 = 0
        # balanced One-Sided merging: the pair comes from the side with twins to spare
        only = (_merge_side(_tw_active, tw.side, _tw_s_tot, _tw_s_pos)
                if (_tw_par[P_ONE_SIDED] == ONE_SIDED_BALANCED
                    or _tw_par[P_ONE_SIDED] == LABEL_SIDED_BALANCED) else 0)
        for j in range(_tw_active.shape[0]):
            if _tw_active[j]:
                if _tw_nn_idx[j] >= 0 and (only == 0 or tw.side[j] == only):
                    _tw_order[m0] = j
                    if m0 > 0 and before(_tw_nn_d[j], j, _tw_nn_d[_tw_order[bi0]],
                                         _tw_order[bi0]):
                        bi0 = m0
                    m0 += 1
                if _st_status[2 * j] == ad.MARGIN or _st_status[2 * j + 1] == ad.MARGIN:
                    # a half in the margin set S has y f(q) = 1 exactly (KT); its g holds
                    # only the rounding of the paths, which can reach |f| - 1 ~ 1e-8 and
                    # must not make a margin twin removable when m2 = 1
                    a = 1.0
                elif own_side and _tw_s_pos[j] != _tw_s_neg[j]:
                    # own-side reading: only beyond m2 on the side of the twin's dominant
                    # label (a misclassified twin has y f < 0 and never leaves this way)
                    a = _tw_fq[j] if _tw_s_pos[j] > _tw_s_neg[j] else -_tw_fq[j]
                else:
                    # (a tie s+ = s-: both sides are its own, so |f|)
                    a = abs(_tw_fq[j])
                # (a tie, within M2_TOL, keeps the lower index: f carries rounding that
                # depends on the order of the feature columns)
                if k < 0 or a > worst + M2_TOL * max(1.0, abs(worst)):
                    worst = a
                    k = j
        m2 = _tw_par[P_M2]
        if worst > m2 + M2_TOL * max(1.0, m2):
            # a twin beyond the buffer zone leaves to make room (beyond it by more than
            # rounding: margin twins sit at |f| = 1 up to ~1e-13, and with m2 = m1 = 1, the
            # paper's '[-1 1]' variant, they would otherwise leave at random)
            _tw_ist[T_REMOVED] += 1
            leave1 = k
        elif _tw_ist[T_STUCK]:
            _tw_ist[T_REJECTED] += 1
            return ad.OK, True
        else:
            code = _st_ist[ad.I_KCODE]
            eta = _tw_par[P_ETA]
            n_tries = int(_tw_par[P_TRIES])
            mi = -1
            mj = -1
            # candidate pairs in increasing merge cost: each twin with its cached best
            # partner (Sec. 4.2.4: when a pair fails the rejection test, the next best
            # candidates are considered)
            nt = _tw_active.shape[0]
            m = m0
            tried = 0
            last_i = -1
            last_j = -1
            first = True
            while tried < n_tries and m > 0:
                if first:
                    # (the scan below, done in the pass above)
                    bi = bi0
                    first = False
                else:
                    bi = 0
                    for p in range(1, m):
                        # (ties within merge.TIE_TOL by twin index, not by column order)
                        if before(_tw_nn_d[_tw_order[p]], _tw_order[p],
                                  _tw_nn_d[_tw_order[bi]], _tw_order[bi]):
                            bi = p
                i = _tw_order[bi]
                _tw_order[bi] = _tw_order[m - 1]
                m -= 1
                j = _tw_nn_idx[i]
                if i == last_j and j == last_i:
                    continue  # the same pair seen from its other twin
                last_i = i
                last_j = j
                tried += 1
                if _merge_ok(mode, code, _st_kpar, _st_fs, _tw_Q, _tw_QT, _tw_coef, _tw_s_tot,
                             _tw_fq, _tw_qnew, _tw_tmp, _tw_ist, _tw_drow, _tw_drow_t, i, j,
                             eta):
                    mi = i
                    mj = j
                    break
            if mi < 0 and eta >= 0.0:
                # every cached pair failed: all other allowed pairs, in increasing cost
                # (a pair that is some twin's cached best was tried above, unless balanced
                # sides kept it to the other side)
                _tw_pi = tw.pi
                npairs = sorted_pairs(mode, code, _st_kpar, _tw_Q, _tw_s_tot, tw.side,
                                      _tw_par[P_ONE_SIDED] > 0.0, _tw_active, tw.pk, _tw_pi,
                                      _tw_tmp)
                for p in range(npairs):
                    i = _tw_pi[p] // nt
                    j = _tw_pi[p] - i * nt
                    if ((_tw_nn_idx[i] == j or _tw_nn_idx[j] == i)
                            and (only == 0 or tw.side[i] == only)):
                        continue
                    if _merge_ok(mode, code, _st_kpar, _st_fs, _tw_Q, _tw_QT, _tw_coef, _tw_s_tot,
                                 _tw_fq, _tw_qnew, _tw_tmp, _tw_ist, _tw_drow, _tw_drow_t, i, j,
                                 eta):
                        mi = i
                        mj = j
                        break
            if mi < 0:
                # no merge passes: the overflow twin is dropped. The search depends on the
                # twins only, so until they change every new example is dropped at once
                _tw_ist[T_REJECTED] += 1
                _tw_ist[T_STUCK] = 1
                return ad.OK, True
            _tw_ist[T_MERGES] += 1
            leave1 = mi
            leave2 = mj
    # ---- UpdateTVM: place the new twins on the spares, then one transfer path
    # the Beneficial test scored the example against every twin of nonzero coefficient
    # (in ``tvm_partial_fit``) when the budget was full: its distances and kernel values are kept
    rkx = (np.int64(D_NEW_K) if n >= B and _st_ist[ad.I_KCODE] == RBF else np.int64(-1))
    # (the engine's arrays and the twins' bound once for both placements: see
    # ``kernels.adiabatic`` on reference counts)
    _st_X = st.X
    _st_y = st.y
    _st_wt = st.wt
    _st_cb = st.cb
    _st_alpha = st.alpha
    _st_g = st.g
    _st_status2 = st.status
    _st_K = st.K
    _tw_active2 = tw.active
    _tw_dirty = tw.dirty
    m = 0
    if leave2 >= 0:
        msp = _tw_s_pos[leave1] + _tw_s_pos[leave2]
        msn = _tw_s_neg[leave1] + _tw_s_neg[leave2]
        rk = np.int64(D_MERGED_K) if _tw_drow_t[D_MERGED_K] == 1 else np.int64(-1)
        _place_twin_at(_st_X, _st_y, _st_wt, _st_cb, _st_alpha, _st_g, _st_status2, _st_K,
                       _st_kpar, _st_fs, _st_ist, _tw_Q, _tw_s_pos, _tw_s_neg, _tw_s_tot,
                       _tw_active2, _tw_dirty, _tw_drow, _tw_drow_t, _tw_coef, s2, _tw_qnew,
                       msp, msn, np.int64(D_MERGED), rk, np.bool_(False))
        if msp > 0.0:
            m = _add_dst(tw, m, 2 * s2, msp)
        if msn > 0.0:
            m = _add_dst(tw, m, 2 * s2 + 1, msn)
    _place_twin_at(_st_X, _st_y, _st_wt, _st_cb, _st_alpha, _st_g, _st_status2, _st_K, _st_kpar,
                   _st_fs, _st_ist, _tw_Q, _tw_s_pos, _tw_s_neg, _tw_s_tot, _tw_active2,
                   _tw_dirty, _tw_drow, _tw_drow_t, _tw_coef, s1, x, sp, sn, np.int64(D_NEW),
                   rkx, np.bool_(True))
    if leave2 >= 0:
        # the merged twin's row was computed before the new example moved twin s1
        _tw_drow[D_MERGED, s1] = _tw_drow[D_NEW, s2]
    m = _add_dst(tw, m, 2 * s1 + half, wi)
    ssum = _tw_par[P_SSUM] + wi
    if leave1 >= 0:
        _tw_src[n_src] = 2 * leave1
        _tw_src[n_src + 1] = 2 * leave1 + 1
        n_src += 2
        if leave2 < 0:
            ssum -= _tw_s_tot[leave1]
    if leave2 >= 0:
        _tw_src[n_src] = 2 * leave2
        _tw_src[n_src + 1] = 2 * leave2 + 1
        n_src += 2
    _tw_par[P_SSUM] = ssum
    # control of C (Sec. 4.3): C_eff = C B / sum(s), i.e. margin target mu = sum(s) / B
    mu_new = ssum / B if _tw_par[P_CONTROL_C] > 0.0 else _st_fs[ad.F_MU]
    s = ad.transfer(st, n_src, _tw_src, _tw_dst[:m], _tw_wdst[:m], mu_new)
    _tw_ist[T_STUCK] = 0
    # ---- bookkeeping of the twin indices
    if leave1 >= 0:
        _retire(tw, leave1)
    if leave2 >= 0:
        _retire(tw, leave2)
    if n < B:
        _tw_ist[T_NTW] = n + 1
        # spares: s2 stays; the new spare s1 is the lowest never-used index
        nxt = -1
        for t in range(_tw_active.shape[0]):
            if not _tw_active[t] and t != s2 and _tw_s_tot[t] == 0.0 and t != s1:
                nxt = t
                break
        _tw_ist[T_SPARE] = nxt
    elif leave2 >= 0:
        _tw_ist[T_SPARE] = leave1
        _tw_ist[T_SPARE2] = leave2
    else:
        _tw_ist[T_SPARE] = leave1
    if s != ad.OK:
        return s, True
    s = _sync(st, tw, mode)
    return s, True


@njit(cache=True, nogil=True, **NO_REFCOUNT)
def tvm_partial_fit(st, tw, X, y, w, B, fout):
    """Learn the rows of X (labels y in {-1, +1}, weights w) in order: one compiled call per
    chunk. Releases the GIL: models learning in threads of one process run at once (two
    threads must not update one model: the estimators hold a lock per model,
    ``fastbudget._transaction``).

    ``st`` (engine) and ``tw`` (twins) are modified in place. Returns (status, row): the
    number of rows learned, or the failing row when status != OK.

    ``fout``: float64 of shape (n_rows,) or (0,). When it has a row per row of X, the
    decision value f(X[t]) of each row under the model as it stands before that row is
    learned (the value of the Beneficial test; computed also where the test is not run:
    weight 0, budget not full) is written to ``fout[t]`` (modified in place): the
    prequential scores of the calibration, without a second scoring pass. Rows from the
    failing row on are not written when status != OK.
    """
    _tw_Q = tw.Q
    _tw_coef = tw.coef
    _tw_ist = tw.ist
    _tw_par = tw.par
    _tw_drow = tw.drow
    _st_fs = st.fs
    _st_ist = st.ist
    _st_kpar = st.kpar
    m1 = _tw_par[P_M1]
    code = _st_ist[ad.I_KCODE]
    status = ad.OK
    row = X.shape[0]
    scores = fout.shape[0] == X.shape[0] and X.shape[0] > 0
    gk = _st_kpar[0]
    d = X.shape[1]
    nq = _tw_coef.shape[0]
    # the pivots transposed, for the scoring loop (kept up to date below as twins are placed)
    _tw_QT = tw.QT
    for i in range(nq):
        for k in range(d):
            _tw_QT[k, i] = _tw_Q[i, k]
    for t in range(X.shape[0]):
        _tw_ist[T_SEEN] += 1
        # Beneficial (Alg. 2), written out in the loop: most examples stop here. (Written
        # out when helpers cost reference-count updates of the arrays they bind; the kernel
        # is now compiled without them, ``NO_REFCOUNT``, and the loop stays as the
        # vectorised form of the scoring.) The row is only counted
        # when its weight is 0, or the budget is full and |f(x)| > m1. For an RBF kernel
        # the squared distance and the kernel value of the row to every twin of nonzero
        # coefficient are kept in drow[D_NEW] and drow[D_NEW_K] (the sum is
        # ``kernel_expansion_at``'s, bit for bit): when the row is learned, its twin's
        # kernel row and merge costs start from them. f is computed for every row when
        # ``fout`` takes the scores.
        wt = w[t]
        counted = wt <= 0.0
        full = _tw_ist[T_NTW] >= B
        f = 0.0
        if scores or (not counted and full):
            if code == RBF:
                f = _st_fs[ad.F_B]
                # squared distances to every twin index, feature by feature over the
                # transposed pivots: the loop over the twins vectorises, and each twin's
                # sum is taken in increasing k from 0.0, as the row-by-row loop of
                # ``kernel_expansion_at`` takes it (the same bits). (Twins of coefficient 0
                # get their distance too; ``_place_twin_at`` recomputes those it needs.)
                _sq_dist_row(_tw_QT, X[t], _tw_drow[D_NEW])
                # the kernel values in a loop of their own, which vectorises
                for i in range(nq):
                    if _tw_coef[i] != 0.0:
                        _tw_drow[D_NEW_K, i] = exp_neg(-gk * _tw_drow[D_NEW, i])
                for i in range(nq):
                    c = _tw_coef[i]
                    if c != 0.0:
                        f += c * _tw_drow[D_NEW_K, i]
            else:
                f = kernel_expansion_at(code, _st_kpar, _tw_Q, _tw_coef, X, t, _st_fs[ad.F_B])
            if not counted and full:
                # an example on the margin (|f| = m1 up to rounding, e.g. a copy of a
                # margin twin) is Beneficial: without the slack, the last bits of f, which
                # depend on the order of the feature columns in the kernel sums, decided it
                counted = abs(f) > m1 * _st_fs[ad.F_MU] * (1.0 + M1_TOL)
        if scores:
            fout[t] = f / _st_fs[ad.F_MU]
        if counted:
            continue
        # the twins an update places: the two spares (the new example's, and the merged
        # pivot's when it merges)
        p1 = _tw_ist[T_SPARE]
        p2 = _tw_ist[T_SPARE2]
        s, acc = _learn_one(st, tw, X[t], y[t], w[t], B)
        for p in (p1, p2):
            if p >= 0:
                for k in range(d):
                    _tw_QT[k, p] = _tw_Q[p, k]
        if s != ad.OK:
            status = s
            row = t
            break
    # the rows of one update and the transposed pivots are scratch: cleared, so that a
    # model equals its saved and loaded copy in every array (O(B d) per call)
    _tw_drow[:, :] = 0.0
    tw.drow_t[:] = -1
    _tw_QT[:, :] = 0.0
    return status, row


@njit(cache=True)
def tvm_count_one(Q, coef, tw_ist, par, kpar, fs, st_ist, X, wt, B, fout):
    """The test that ``tvm_partial_fit`` applies first to a chunk of one row (``X`` of shape
    (1, d), weight ``wt``), taking the few arrays it reads rather than the state tuples,
    whose unboxing costs a Python caller more than the test.

    Writes the row's decision value under the model as it is into ``fout[0]`` (float64
    (1,), modified in place; ``twin_decision``'s value bit for bit, for the calibration).
    When the row would only be counted (weight 0, or the budget full and the row not
    Beneficial), counts it as seen (``tw_ist``, modified in place) and returns True: that
    is all ``tvm_partial_fit`` would do. Otherwise changes nothing else and returns False:
    learn the row with ``tvm_partial_fit``.
    """
    f = kernel_expansion_at(st_ist[ad.I_KCODE], kpar, Q, coef, X, 0, fs[ad.F_B])
    fout[0] = f / fs[ad.F_MU]
    counted = wt <= 0.0
    if not counted and tw_ist[T_NTW] >= B:
        # (the slack of tvm_partial_fit)
        counted = abs(f) > par[P_M1] * fs[ad.F_MU] * (1.0 + M1_TOL)
    if counted:
        tw_ist[T_SEEN] += 1
    return counted


@njit(cache=True)
def twin_decision_batch(st, tw, X, out):
    """out[t] = f(X[t]) (modified in place): TVM's predict, by ``decision_values`` (the
    twins with a coefficient transposed once per call), whose values are those of the
    learning loop's one-row scoring (``kernel_expansion_at``) bit for bit."""
    decision_values(st.ist[ad.I_KCODE], st.kpar, tw.Q, tw.coef, tw.coef.shape[0],
                    st.fs[ad.F_B], X, out)
    mu = st.fs[ad.F_MU]
    for t in range(X.shape[0]):
        out[t] = out[t] / mu
