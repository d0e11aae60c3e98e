"""Twin-vector merging (Wang & Vucetic 2009, paper 000, Sec. 4.2).

Merge costs ("distortions") between twins i and j of total weights s_i, s_j:

- input space (Sec. 4.2.1): q_new = (s_i q_i + s_j q_j) / (s_i + s_j),
  d*_ij = s_i s_j ||q_i - q_j||^2 / (s_i + s_j);
- feature space (Sec. 4.2.2, eq. 4.2): q_new = q_i + t (q_j - q_i) with t in [0, 1]
  minimising ||Phi(q_new) - (s_i Phi(q_i) + s_j Phi(q_j)) / (s_i + s_j)||^2 (the pre-image
  lies on the segment for RBF and polynomial kernels, Nguyen & Ho 2005); the cost is
  s_i ||Phi(q_i) - Phi(q_new)||^2 + s_j ||Phi(q_j) - Phi(q_new)||^2.

The nearest-merge-neighbour cache keeps, for each twin i, its best partner ``nn_idx[i]``
and cost ``nn_d[i]`` (``-1`` / ``inf`` when it has none). After an update only the rows
touched by a changed twin are recomputed in full; the others compare against the changed
twins only: O(B) expected per update (Sec. 4.2.1).
"""
import numpy as np
from ._jit import NO_REFCOUNT, njit

from .kernel import LINEAR, kernel_value

INPUT = 0
FEATURE = 1

_GRID = 16
_GOLDEN_ITERS = 30

#: merge costs closer than this (relative) are a tie, broken by the twins' index. A cost
#: sums squares over the feature columns, so its last bits depend on the columns' order;
#: exact ties are common (duplicated points, integer-valued features), and without the
#: slack the order of the columns chose between them.
TIE_TOL = 1e-12


@njit(cache=True, inline="always")
def before(c, j, b, jb):
    """Whether cost ``c`` of index ``j`` ranks before cost ``b`` of index ``jb``: smaller by
    more than ``TIE_TOL`` (relative), or a tie and a smaller index (``jb < 0``, ``b``
    infinite: nothing yet). The slack scales with the smaller magnitude, so an infinite
    or NaN cost never ranks before a finite one."""
    if jb < 0:
        return True
    tol = TIE_TOL * min(abs(c), abs(b))
    if c < b - tol:
        return True
    return c <= b + tol and j < jb


#: relative margin of ``_beyond``: far above the rounding of its products (~1e-16) and
#: above TIE_TOL, so that a cost it rules out can never be a tie either
_BEYOND = 4e-12


@njit(cache=True, inline="always")
def _beyond(p, q, b1, b2):
    """Whether the input-space cost p / q (p = s_i s_j ||q_i - q_j||^2, q = s_i + s_j) is
    certainly ranked after both b1 and b2 by ``before`` (larger than either by more than
    TIE_TOL, whatever the rounding of the division): then the row's best two partners do
    not change and the division and the two comparisons are skipped. False when b1 or b2
    is infinite or NaN."""
    t = b1 if b1 > b2 else b2
    return p > t * q * (1.0 + _BEYOND)


@njit(cache=True, inline="always")
def _seg_point(qi, qj, t, out):
    for k in range(qi.shape[0]):
        out[k] = qi[k] + t * (qj[k] - qi[k])


@njit(cache=True, no_cpython_wrapper=True)
def _feature_cost(code, kpar, qi, qj, si, sj, kii, kjj, t, tmp):
    """s_i ||Phi_i - Phi(q_t)||^2 + s_j ||Phi_j - Phi(q_t)||^2 for q_t on the segment."""
    _seg_point(qi, qj, t, tmp)
    ktt = kernel_value(code, kpar, tmp, tmp)
    kit = kernel_value(code, kpar, qi, tmp)
    kjt = kernel_value(code, kpar, qj, tmp)
    return si * (kii - 2.0 * kit + ktt) + sj * (kjj - 2.0 * kjt + ktt)


@njit(cache=True, no_cpython_wrapper=True)
def feature_merge(code, kpar, qi, qj, si, sj, tmp):
    """Best point on the segment q_i..q_j for feature-space merging (eq. 4.2).

    A grid of ``_GRID + 1`` points brackets the minimum (the cost can be bimodal for far
    apart RBF twins), then golden-section search refines it. Returns (t, cost); ``tmp``
    (d,) is scratch. For the linear kernel the closed form of Sec. 4.2.1 is returned.
    """
    s = si + sj
    if code == LINEAR:
        t = sj / s
        d2 = 0.0
        for k in range(qi.shape[0]):
            e = qi[k] - qj[k]
            d2 += e * e
        return t, si * sj * d2 / s
    kii = kernel_value(code, kpar, qi, qi)
    kjj = kernel_value(code, kpar, qj, qj)
    best_t = 0.0
    best = np.inf
    for g in range(_GRID + 1):
        t = g / _GRID
        c = _feature_cost(code, kpar, qi, qj, si, sj, kii, kjj, t, tmp)
        if c < best:
            best = c
            best_t = t
    lo = max(0.0, best_t - 1.0 / _GRID)
    hi = min(1.0, best_t + 1.0 / _GRID)
    invphi = 0.6180339887498949
    a = hi - invphi * (hi - lo)
    b = lo + invphi * (hi - lo)
    fa = _feature_cost(code, kpar, qi, qj, si, sj, kii, kjj, a, tmp)
    fb = _feature_cost(code, kpar, qi, qj, si, sj, kii, kjj, b, tmp)
    for _ in range(_GOLDEN_ITERS):
        if fa < fb:
            hi = b
            b = a
            fb = fa
            a = hi - invphi * (hi - lo)
            fa = _feature_cost(code, kpar, qi, qj, si, sj, kii, kjj, a, tmp)
        else:
            lo = a
            a = b
            fa = fb
            b = lo + invphi * (hi - lo)
            fb = _feature_cost(code, kpar, qi, qj, si, sj, kii, kjj, b, tmp)
    if fa < best:
        best = fa
        best_t = a
    if fb < best:
        best = fb
        best_t = b
    if best < 0.0:
        best = 0.0
    return best_t, best


@njit(cache=True, inline="always")
def merge_cost(mode, code, kpar, Q, s, i, j, tmp):
    """Distortion of merging twins i and j (rows of Q, total weights s)."""
    if mode == INPUT:
        d2 = 0.0
        for k in range(Q.shape[1]):
            e = Q[i, k] - Q[j, k]
            d2 += e * e
        return s[i] * s[j] * d2 / (s[i] + s[j])
    t, c = feature_merge(code, kpar, Q[i], Q[j], s[i], s[j], tmp)
    return c


@njit(cache=True)
def merge_point(mode, code, kpar, Q, s, i, j, out, tmp):
    """Write the merged pivot q_new of twins i and j into ``out`` (modified in place)."""
    if mode == INPUT:
        si = s[i]
        sj = s[j]
        for k in range(Q.shape[1]):
            out[k] = (si * Q[i, k] + sj * Q[j, k]) / (si + sj)
        return
    t, c = feature_merge(code, kpar, Q[i], Q[j], s[i], s[j], tmp)
    _seg_point(Q[i], Q[j], t, out)


@njit(cache=True, inline="always")
def _allowed(side, one_sided, i, j):
    return (not one_sided) or side[i] == side[j]


@njit(cache=True, **NO_REFCOUNT)
def merge_costs(code, kpar, Q, s, side, one_sided, active, i, tmp, costs):
    """costs[j] = the feature-space merge cost of twins i and j, for every active j != i
    that may merge with i (the other entries are left alone). Modified in place."""
    for j in range(active.shape[0]):
        if j == i or not active[j] or (one_sided and side[i] != side[j]):
            continue
        costs[j] = merge_cost(FEATURE, code, kpar, Q, s, i, j, tmp)


@njit(cache=True, **NO_REFCOUNT)
def nn_row(side, one_sided, active, i, costs, nn_idx, nn_d, nn2_idx, nn2_d, nn2_ok):
    """Recompute twin i's best and second-best partners over the active twins (exact) from
    the feature-space costs in ``costs`` (``merge_costs``; input space: ``_costs_from_d2``
    / ``_costs_from_q`` and ``_best_two``). Modified in place. The loop calls nothing, so
    Numba needs no reference-count updates of the arrays (see ``kernels.adiabatic``)."""
    b1 = np.inf
    j1 = -1
    b2 = np.inf
    j2 = -1
    for j in range(active.shape[0]):
        if j == i or not active[j] or (one_sided and side[i] != side[j]):
            continue
        c = costs[j]
        if before(c, j, b1, j1):
            b2 = b1
            j2 = j1
            b1 = c
            j1 = j
        elif before(c, j, b2, j2):
            b2 = c
            j2 = j
    nn_idx[i] = j1
    nn_d[i] = b1
    nn2_idx[i] = j2
    nn2_d[i] = b2
    nn2_ok[i] = 1


@njit(cache=True, inline="always")
def _costs_from_d2(s, side, one_sided, active, i, d2row, out):
    """``out[j]`` = the input-space merge cost of twins i and j from their squared distance
    ``d2row[j]``, computed as the cache always computed it (the same bits), for every j that
    may merge with i (active, j != i, on i's side when ``one_sided``); NaN for the others.
    The test is a select, not a branch, so the loop vectorises and the twins' sides, which
    alternate at random, cost no mispredicted branches."""
    si = s[i]
    sdi = side[i]
    every_side = not one_sided
    for j in range(active.shape[0]):
        c = si * s[j] * d2row[j] / (si + s[j])
        ok = (active[j] != 0) & (j != i) & (every_side | (side[j] == sdi))
        out[j] = c if ok else np.nan


@njit(cache=True, inline="always")
def _costs_from_q(Q, s, side, one_sided, active, i, out):
    """``_costs_from_d2`` with the squared distances summed over the features, in the order
    the cache always summed them (the same bits)."""
    si = s[i]
    sdi = side[i]
    every_side = not one_sided
    d = Q.shape[1]
    for j in range(active.shape[0]):
        d2 = 0.0
        for k in range(d):
            e = Q[i, k] - Q[j, k]
            d2 += e * e
        c = si * s[j] * d2 / (si + s[j])
        ok = (active[j] != 0) & (j != i) & (every_side | (side[j] == sdi))
        out[j] = c if ok else np.nan


@njit(cache=True, inline="always")
def _best_two(costs, off, n, i, nn_idx, nn_d, nn2_idx, nn2_d, nn2_ok):
    """Twin i's best and second-best partners from ``costs[off:off + n]`` (NaN: not a
    partner), scanned in index order and ranked by ``before`` as ``nn_row`` ranks them:
    the same result. A cost above the larger of the two kept by more than ``_BEYOND``
    (relative) ranks after both and is passed over with one comparison, the test of
    ``_beyond`` on the quotient (a NaN fails it too)."""
    b1 = np.inf
    j1 = -1
    b2 = np.inf
    j2 = -1
    lim = np.inf
    for j in range(n):
        c = costs[off + j]
        if not c <= lim:
            continue
        if before(c, j, b1, j1):
            b2 = b1
            j2 = j1
            b1 = c
            j1 = j
        elif before(c, j, b2, j2):
            b2 = c
            j2 = j
        else:
            continue
        t = b1 if b1 > b2 else b2
        lim = t * (1.0 + _BEYOND)
    nn_idx[i] = j1
    nn_d[i] = b1
    nn2_idx[i] = j2
    nn2_d[i] = b2
    nn2_ok[i] = 1


@njit(cache=True, **NO_REFCOUNT)
def nn_row_input(Q, s, side, one_sided, active, i, costs, nn_idx, nn_d, nn2_idx, nn2_d,
                 nn2_ok):
    """Recompute twin i's best and second-best partners in input space (exact), the costs
    from the pivots (into ``costs[:len(active)]``, scratch). Modified in place. The same
    two helpers as ``nn_update``'s full rows, which inline them (a call here measured 1-2 %
    slower in the stream); the perf suite times the cache's rows through this one."""
    _costs_from_q(Q, s, side, one_sided, active, i, costs)
    _best_two(costs, 0, active.shape[0], i, nn_idx, nn_d, nn2_idx, nn2_d, nn2_ok)


@njit(cache=True, no_cpython_wrapper=True, **NO_REFCOUNT)
def nn_update(mode, code, kpar, Q, s, side, one_sided, active, dirty, nn_idx, nn_d, nn2_idx,
              nn2_d, nn2_ok, tmp, dlist, costs, drow, drow_t):
    """Refresh the cache after the twins flagged in ``dirty`` (int8) changed position,
    weight, side or activity (``active``, int8). Modified in place; returns the number of
    rows recomputed in full.

    Each row keeps its best partner (``nn_idx``, ``nn_d``: always exact) and its second best
    (``nn2_*``; ``nn2_ok`` says whether it is known exactly). For a row whose own twin did
    not change, the best partner among the *unchanged* twins is known without a scan: the
    old best if it did not change, else the old second best if that was exact. Comparing it
    with the changed twins gives the new best. Only when neither is known is the row
    recomputed in full (O(B d)). This matters because a newly added twin of weight 1 is the
    cheapest merge partner of most twins and is merged again soon after: recomputing every
    row that pointed to it cost ~30 full rows per accepted example, the second best
    brings it to a few. Cost O(B n_dirty) plus O(B d) per recomputed row. ``dlist`` (int64)
    is scratch of 2 ``len(active)`` entries; ``costs`` (float64, the twins' ``pk``) of
    n (n - 1) / 2 for n = ``len(active)``: its first n entries hold the costs of a row
    recomputed in full, and in input space each following block of n the costs of every
    row against one changed twin (as many changed twins as there are blocks; the others
    are compared one row at a time).

    In input space, row r of ``drow`` may hold the squared distances of twin ``drow_t[r]``
    (-1: none) to every twin, computed when it was placed (``kernels.tvm``): that twin's
    own row and every other row's comparison with it then read them instead of summing
    over the d features again (the same costs, bit for bit: O(B) instead of O(B d)).
    ``dlist`` holds, after the changed twins, the row of ``drow`` of each (scratch of
    2 ``len(active)`` entries)."""
    n = active.shape[0]
    nd = 0
    for j in range(n):
        if dirty[j] and active[j]:
            dlist[nd] = j
            nd += 1
    # the row of drow of each changed twin (-1: none)
    for k in range(nd):
        rk = -1
        if mode == INPUT:
            for r in range(drow_t.shape[0]):
                if drow_t[r] == dlist[k]:
                    rk = r
        dlist[n + k] = rk
    # input space: every row's cost against each changed twin, one block of n entries of
    # the scratch per changed twin after its first n: the full row's computation from the
    # changed twin's side (NaN where the pair may not merge, and for inactive rows, which
    # are not read), the same bits as the loop below computes one row at a time (a product
    # or sum of two factors, and the square of a difference, do not depend on the order);
    # changed twins beyond the scratch's blocks are compared one row at a time
    kr = 0
    used = 0    # entries of the scratch written, zeroed again before returning
    if mode == INPUT:
        kr = max(0, min(nd, costs.shape[0] // n - 1))
        used = (kr + 1) * n if kr > 0 else 0
        for k in range(kr):
            j = dlist[k]
            rj = dlist[n + k]
            out = costs[(k + 1) * n:(k + 2) * n]
            if rj >= 0:
                _costs_from_d2(s, side, one_sided, active, j, drow[rj], out)
            else:
                _costs_from_q(Q, s, side, one_sided, active, j, out)
    rows = 0
    for i in range(n):
        if not active[i]:
            nn_idx[i] = -1
            nn_d[i] = np.inf
            nn2_idx[i] = -1
            nn2_d[i] = np.inf
            nn2_ok[i] = 1
            continue
        full = dirty[i] != 0
        if not full:
            b = nn_idx[i]
            s2 = nn2_idx[i]
            # best (u1) and second best (u2) among the unchanged twins; u2 may be unknown
            u2_known = False
            if b < 0:
                u1 = -1
                u1d = np.inf
                u2 = -1
                u2d = np.inf
                u2_known = True
            elif not dirty[b]:
                u1 = b
                u1d = nn_d[i]
                u2 = -1
                u2d = np.inf
                if nn2_ok[i] and (s2 < 0 or not dirty[s2]):
                    u2 = s2
                    u2d = nn2_d[i]
                    u2_known = True
            elif nn2_ok[i] and (s2 < 0 or not dirty[s2]):
                u1 = s2
                u1d = nn2_d[i] if s2 >= 0 else np.inf
                u2 = -1
                u2d = np.inf
                u2_known = s2 < 0
            else:
                full = True
        if full:
            ri = -1
            if mode == INPUT and dirty[i]:
                for k in range(nd):
                    if dlist[k] == i:
                        ri = dlist[n + k]
            if mode == INPUT:
                # (into the first n entries of the scratch: the rows of the changed
                # twins' costs start after them)
                if ri >= 0:
                    _costs_from_d2(s, side, one_sided, active, i, drow[ri], costs)
                else:
                    _costs_from_q(Q, s, side, one_sided, active, i, costs)
                _best_two(costs, 0, n, i, nn_idx, nn_d, nn2_idx, nn2_d, nn2_ok)
            else:
                merge_costs(code, kpar, Q, s, side, one_sided, active, i, tmp, costs)
                nn_row(side, one_sided, active, i, costs, nn_idx, nn_d, nn2_idx, nn2_d,
                       nn2_ok)
            used = max(used, n)
            rows += 1
            continue
        # merge with the changed twins
        b1 = u1d
        j1 = u1
        b2 = u2d
        j2 = u2
        for k in range(nd):
            j = dlist[k]
            if k < kr:
                c = costs[(k + 1) * n + i]
                t = b1 if b1 > b2 else b2
                # (NaN: the pair may not merge; above t by more than _BEYOND: ranked
                # after both, as _beyond tests on the quotient's parts)
                if not c <= t * (1.0 + _BEYOND):
                    continue
            elif j == i or (one_sided and side[i] != side[j]):
                continue
            elif mode == INPUT:
                rj = dlist[n + k]
                if rj >= 0:
                    d2 = drow[rj, i]
                else:
                    d2 = 0.0
                    for m in range(Q.shape[1]):
                        e = Q[i, m] - Q[j, m]
                        d2 += e * e
                p = s[i] * s[j] * d2
                q = s[i] + s[j]
                if _beyond(p, q, b1, b2):
                    continue
                c = p / q
            else:
                c = merge_cost(mode, code, kpar, Q, s, i, j, tmp)
            if before(c, j, b1, j1):
                b2 = b1
                j2 = j1
                b1 = c
                j1 = j
            elif before(c, j, b2, j2):
                b2 = c
                j2 = j
        nn_idx[i] = j1
        nn_d[i] = b1
        nn2_idx[i] = j2
        nn2_d[i] = b2
        # the second best is exact unless the unchanged best stayed first while the
        # unchanged second best is unknown
        nn2_ok[i] = 1 if (u2_known or j1 != u1 or u1 < 0) else 0
    # the scratch holds nothing between updates (a model loaded from a file starts with
    # it zeroed, and the fitted ``twins_`` of both then compare equal)
    for r in range(used):
        costs[r] = 0.0
    return rows


@njit(cache=True)
def sorted_pairs(mode, code, kpar, Q, s, side, one_sided, active, keys, idx, tmp):
    """Every allowed pair i < j of active twins in increasing merge cost: ``keys[:m]`` the
    costs, ``idx[:m]`` the pairs as ``i * n + j`` (buffers of n (n - 1) / 2 entries,
    modified in place; n = ``active.shape[0]``). Returns m. O(B^2 (d + log B)), no
    allocation (in-place heapsort). Used only when every cached candidate pair failed the
    rejection test."""
    n = active.shape[0]
    m = np.int64(0)
    for i in range(n):
        if not active[i]:
            continue
        for j in range(i + 1, n):
            if active[j] and _allowed(side, one_sided, i, j):
                keys[m] = merge_cost(mode, code, kpar, Q, s, i, j, tmp)
                idx[m] = i * n + j
                m += 1
    # heapsort of keys[:m] (ties, within TIE_TOL, by pair index: the order is deterministic
    # and does not depend on the order of the feature columns)
    for start in range(m // 2 - 1, -1, -1):
        _sift(keys, idx, start, m)
    for end in range(m - 1, 0, -1):
        keys[0], keys[end] = keys[end], keys[0]
        idx[0], idx[end] = idx[end], idx[0]
        _sift(keys, idx, np.int64(0), end)
    return m


@njit(cache=True, inline="always")
def _after(keys, idx, a, b):
    return before(keys[b], idx[b], keys[a], idx[a])


@njit(cache=True, no_cpython_wrapper=True)
def _sift(keys, idx, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and _after(keys, idx, child + 1, child):
            child += 1
        if _after(keys, idx, child, root):
            keys[root], keys[child] = keys[child], keys[root]
            idx[root], idx[child] = idx[child], idx[root]
            root = child
        else:
            return


@njit(cache=True, no_cpython_wrapper=True)
def best_pairs(n, nn_idx, nn_d):
    """The best cached pair (i1, j1) and the next best cached pair (i2, j2) that is a
    different pair (it may share one twin). -1 where none. Returns (i1, j1, i2, j2)."""
    i1 = -1
    best = np.inf
    for i in range(n):
        if nn_idx[i] >= 0 and before(nn_d[i], i, best, i1):
            best = nn_d[i]
            i1 = i
    if i1 < 0:
        return -1, -1, -1, -1
    j1 = nn_idx[i1]
    i2 = -1
    best = np.inf
    for i in range(n):
        j = nn_idx[i]
        if j < 0 or i == i1 or (i == j1 and j == i1):
            continue
        if before(nn_d[i], i, best, i2):
            best = nn_d[i]
            i2 = i
    j2 = nn_idx[i2] if i2 >= 0 else -1
    return i1, j1, i2, j2
