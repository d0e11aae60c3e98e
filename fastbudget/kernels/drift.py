"""Drift detection on the prequential 0/1 error of a stream learner (``forgetting='auto'``).

Two tests run on the errors the model makes on examples *before* it learns them:

- **DDM** (Gama, Medas, Castillo & Rodrigues, SBIA 2004): with ``p`` the error rate since
  the model started and ``s = sqrt(p (1 - p) / n)``, remember the ``(p_min, s_min)`` that
  minimise ``p + s`` (``s`` from the smoothed rate ``(k + 1/2) / (n + 1)``, so that a model
  without a mistake yet does not flag a drift at its first one); a *warning* starts when ``p + s > p_min + 2 s_min`` and a *drift* is
  flagged at ``p + s > p_min + 3 s_min``. The examples since the warning started are those
  the new model learns first. DDM catches a slow rise of the error (incremental drift)
  against the best level the model reached.
- **ADWIN's cut test** (Bifet & Gavalda, SDM 2007), one-sided, on the last ``W`` errors of
  the current model: for every split of that window into an older part of ``n0`` and a
  recent part of ``n1`` errors (at multiples of ``every``, each part at least
  ``min_side``), a drift is flagged when the recent mean exceeds the older one by more than
  ``eps = sqrt(ln(4 m / delta) / (2 h))``, ``h = 1 / (1/n0 + 1/n1)``, ``m = n0 + n1``. The
  smallest such recent part is the one the new model learns first. ADWIN catches an
  abrupt jump quickly even when the error was not yet at its minimum.

State (allocated once by ``alloc_drift``): ``err`` (W,) uint8, a circular buffer of the
last W errors; ``ist`` int64 counters; ``fs`` float64 (p_min, s_min); ``par`` float64
parameters. All functions mutate the state in place and allocate nothing.

A restarted model is checked once, ``W / 2`` errors after the restart (when the model it
replaced had seen at least ``W / 2`` examples): when its error rate
over those errors exceeds the replaced model's ``p_min`` by more than 3 sd (of a rate over
``W / 2`` errors), the restart came too early (in the middle of a gradual change, so the
new model learned both concepts, and a budget learner that defends what it learned may
not recover), and the check flags a drift again: one more restart, on those ``W / 2``
examples. It is done once per drift, so a new concept that is harder than the old one
costs at most one more restart.

**A younger model** (``challenge_due``, ``challenge``): neither test sees every incremental
drift. When the concept moves slowly, the error of an old model creeps up over thousands
of examples: too little on any window for ADWIN's bound, and DDM compares the rate since
the model started, which a long good past keeps low. So every ``W / 4`` errors of a model
that has made at least ``W`` (whose last ``W`` examples are in the caller's buffer), the
caller trains a new model of the same learner on the older half of the buffer and scores
the newer half with it. Of the newer half's examples, let ``b`` be those the current
model got wrong (prequentially) and the younger one right, and ``a`` the reverse; a drift
is flagged, and the model restarted on the whole buffer, when ``b - a > 3 sqrt(a + b)`` (a
paired sign test at DDM's drift level of 3 sd). On a stationary stream the younger model
has learned from fewer examples and is the worse one, so the test does not fire; and the
younger model is trained only when the current one's error over the newer half is above
its rate since it started by more than 1 sd, which a model that still improves seldom
shows.
"""
from collections import namedtuple

import numpy as np
from ._jit import njit

# ``ist``
D_N = 0        # errors fed so far (over all models)
D_SINCE = 1    # errors since the last ADWIN check
D_DN = 2       # DDM: errors fed to the current model
D_DK = 3       # DDM: mistakes among them
D_WARN = 4     # DDM: D_N when the warning level was reached (-1: not in warning)
D_START = 5    # D_N when the current model started
D_DRIFTS = 6   # drifts flagged
D_LAST = 7     # D_N at the last drift (-1: none)
D_PROBE = 8    # D_N at which the restarted model is checked (-1: no check pending)
D_KIND = 9     # what flagged the last drift: 1 the tests, 2 the check of a restarted model,
               # 3 a younger model that beat the current one (``challenge``)
N_DIST = 10

# ``fs``
D_PMIN = 0
D_SMIN = 1
D_PREV = 2     # p_min of the model replaced at the last drift flagged by the tests
N_DFS = 3
NONE = 2.0     # ``fs`` entry not set yet (a rate and its sd are at most 1.5; finite, so
               # that a saved model holds no inf)

# ``par``
DP_DELTA = 0      # ADWIN confidence
DP_EVERY = 1      # ADWIN: check every this many errors, and cut at multiples of it
DP_MIN_SIDE = 2   # ADWIN: smallest part on either side of a cut
DP_WARN = 3       # DDM warning level (in s_min)
DP_DRIFT = 4      # DDM drift level (in s_min)
DP_DDM_MIN = 5    # DDM: errors of the current model before its test starts
N_DPAR = 6

#: the younger rival is looked at this many times per window of W errors
LOOKS = 4

DriftState = namedtuple("DriftState", ["err", "ist", "fs", "par"])


def alloc_drift(window, delta=0.002, every=32, min_side=64, warn=2.0, drift=3.0,
                ddm_min=30):
    """Allocate the detector state for a window of ``window`` errors."""
    st = DriftState(err=np.zeros(int(window), dtype=np.uint8),
                    ist=np.zeros(N_DIST, dtype=np.int64), fs=np.full(N_DFS, NONE),
                    par=np.zeros(N_DPAR))
    st.ist[D_WARN] = -1
    st.ist[D_LAST] = -1
    st.ist[D_PROBE] = -1
    st.par[DP_DELTA] = delta
    st.par[DP_EVERY] = every
    st.par[DP_MIN_SIDE] = min_side
    st.par[DP_WARN] = warn
    st.par[DP_DRIFT] = drift
    st.par[DP_DDM_MIN] = ddm_min
    return st


@njit(cache=True)
def restart(err, ist, fs):
    """A new model starts now: forget the statistics of the old one (in place), and
    schedule its check unless the check itself flagged this drift."""
    if ist[D_KIND] >= 2 or ist[D_DN] < err.shape[0] // 2:
        # (a model replaced young gives no level to check its successor against; one that
        # lost to a younger model was checked by that comparison)
        ist[D_PROBE] = -1
    else:
        fs[D_PREV] = fs[D_PMIN]
        ist[D_PROBE] = ist[D_N] + err.shape[0] // 2
    ist[D_START] = ist[D_N]
    ist[D_SINCE] = 0
    ist[D_DN] = 0
    ist[D_DK] = 0
    ist[D_WARN] = -1
    fs[D_PMIN] = NONE
    fs[D_SMIN] = NONE


@njit(cache=True)
def _adwin_cut(err, ist, par):
    """The smallest recent part of the current model's last W errors whose mean exceeds
    the older part's by more than ADWIN's bound, or 0."""
    W = err.shape[0]
    n = ist[D_N]
    m = min(n - ist[D_START], W)
    every = int(par[DP_EVERY])
    lo = int(par[DP_MIN_SIDE])
    if m < 2 * lo:
        return 0
    tot = 0
    for i in range(n - m, n):
        tot += err[i % W]
    logterm = np.log(4.0 * m / par[DP_DELTA])
    # walk the split from the newest end: n1 recent errors hold k1 mistakes
    k1 = 0
    for n1 in range(1, m - lo + 1):
        k1 += err[(n - n1) % W]
        if n1 < lo or n1 % every != 0:
            continue
        n0 = m - n1
        mu1 = k1 / n1
        mu0 = (tot - k1) / n0
        h = 1.0 / (1.0 / n0 + 1.0 / n1)
        if mu1 - mu0 > np.sqrt(logterm / (2.0 * h)):
            return n1
    return 0


@njit(cache=True)
def drift_update(err, ist, fs, par, e):
    """Feed the errors ``e`` (uint8 0/1, in stream order) of the current model.

    ``err``, ``ist`` and ``fs`` are modified in place. Returns the number of the most
    recent errors (ending with the last of ``e``) that belong to the new concept when a
    drift is flagged (>= 1, at most W), else 0. After a drift the caller starts a new
    model and calls ``restart``.
    """
    W = err.shape[0]
    wpos = -1      # DDM: where the warning of a flagged drift started
    for t in range(e.shape[0]):
        n = ist[D_N]
        err[n % W] = e[t]
        ist[D_N] = n + 1
        ist[D_SINCE] += 1
        dn = ist[D_DN] + 1
        dk = ist[D_DK] + e[t]
        ist[D_DN] = dn
        ist[D_DK] = dk
        if dn >= par[DP_DDM_MIN]:
            p = dk / dn
            # (the sd of a smoothed rate, (k + 1/2) / (n + 1): with no mistake yet, p = 0
            # and the plain sd 0 would flag a drift at the first mistake)
            q = (dk + 0.5) / (dn + 1.0)
            s = np.sqrt(q * (1.0 - q) / dn)
            if p + s < fs[D_PMIN] + fs[D_SMIN]:
                fs[D_PMIN] = p
                fs[D_SMIN] = s
            if p + s > fs[D_PMIN] + par[DP_WARN] * fs[D_SMIN]:
                if ist[D_WARN] < 0:
                    ist[D_WARN] = n
                if wpos < 0 and p + s > fs[D_PMIN] + par[DP_DRIFT] * fs[D_SMIN]:
                    wpos = ist[D_WARN]
            else:
                ist[D_WARN] = -1
    n = ist[D_N]
    cut = 0
    if wpos >= 0:
        # the new concept started where the warning did
        cut = n - wpos
    elif ist[D_SINCE] >= par[DP_EVERY]:
        ist[D_SINCE] = 0
        cut = _adwin_cut(err, ist, par)
    ist[D_KIND] = 1
    if cut == 0 and 0 <= ist[D_PROBE] <= n:
        # the check of a restarted model (see the module notes)
        ist[D_PROBE] = -1
        m = W // 2
        k = 0
        for i in range(n - m, n):
            k += err[i % W]
        p = k / m
        if fs[D_PREV] < NONE and p > fs[D_PREV] + 3.0 * np.sqrt(p * (1.0 - p) / m):
            cut = m
            ist[D_KIND] = 2
    if cut > 0:
        cut = min(cut, W)
        ist[D_DRIFTS] += 1
        ist[D_LAST] = n
    return cut


@njit(cache=True)
def challenge_due(err, ist, fs, n_before):
    """Whether a younger model is to be tried (module notes) after the errors fed since
    the count was ``n_before``: the current model has made at least ``W`` errors, the
    count of them passed a multiple of ``W // 4``, and its error rate over the last
    ``W // 2`` is above its rate since it started by more than 1 sd of a rate over
    ``W // 2``: a model that is still improving, as on a stationary stream, seldom meets
    a rival. (DDM's ``p_min`` as the reference instead fired at nearly every look after a
    restart, where it is the minimum of a young model's noisy rate.)"""
    W = err.shape[0]
    q = W // LOOKS
    a0 = n_before - ist[D_START]
    a1 = ist[D_N] - ist[D_START]
    if not (q > 0 and a1 >= W and a0 >= 0 and a1 // q > a0 // q) or ist[D_DN] <= 0:
        return False      # (D_DN = a1 > 0 in a state this module wrote; not in a crafted one)
    # the rate since the model started
    p = ist[D_DK] / ist[D_DN]
    n = ist[D_N]
    h = W // 2
    k = 0
    for i in range(n - h, n):
        k += err[i % W]
    return k / h > p + 1.0 * np.sqrt(max(p * (1.0 - p), 0.25 / h) / h)


@njit(cache=True)
def challenge(err, ist, par, ech):
    """The paired test of a younger model (module notes): ``ech`` (uint8 0/1) are its
    errors on the last ``len(ech)`` examples fed, scored by a model that learned the
    examples before them. Returns ``W`` (restart on the whole buffer), recording the drift
    in ``ist``, when the younger model wins by more than ``par[DP_DRIFT]`` sd, else 0 (the
    state unchanged)."""
    W = err.shape[0]
    n = ist[D_N]
    m = ech.shape[0]
    if m > n - ist[D_START] or m > W:
        return 0
    b = 0
    a = 0
    for i in range(m):
        e = err[(n - m + i) % W]
        if e != 0 and ech[i] == 0:
            b += 1
        elif e == 0 and ech[i] != 0:
            a += 1
    if b - a > par[DP_DRIFT] * np.sqrt(max(a + b, 1)):
        ist[D_DRIFTS] += 1
        ist[D_LAST] = n
        ist[D_KIND] = 3
        return W
    return 0
