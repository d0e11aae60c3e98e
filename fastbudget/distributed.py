"""Train and score fastbudget models on a Dask cluster (optional extra ``fastbudget[dask]``).

Scoring (:func:`predict`, :func:`decision_function`) maps every block of a dask array or
partition of a dask DataFrame through the model, which is sent to each worker once
(``Client.scatter(..., broadcast=True)``) and referenced by every task, instead of being
pickled into each task.

Training (:func:`fit`) is *shard and merge*: each block (partition) of the data is one shard,
learned by its own copy of the learner within the budget; the K models are merged pairwise in
a tree (ceil(log2 K) rounds), each merge folding the union of two models' stored vectors back
to the budget by the learner's own merge rule; for TVM the weights of the final B twin
vectors are then solved exactly (the engine's weighted SVM on the twins, at the control-of-C
margin target of their total weight; of two folds, TVM's rule and the pairing of one model's
twins with the other's, the one that agrees more with the exact SVM on the union of the two
models on a sample of the shards' last rows is kept), so the result is a TVM model like
any other: it predicts, saves, loads and goes on learning with ``partial_fit``. BSGD merges its support
vectors by its own merging rule (the expansion of the K models averaged, then merged down
to the budget). By default (``tail=0.5, rounds=3``) the merge comes in four stages: every
shard holds back half of its chunks, learns them from the model merged from the rest in three
rounds (a quarter, an eighth, an eighth of the shard), and the K models are merged again
after each round (one merge leaves nothing to correct the merged twins; K models grown from
one merged model merge almost without loss, the less the fewer examples they learned since:
``docs/results/distributed.md``).
``passes > 1`` goes over every shard again, each shard starting from the merged model.

Dask does the scheduling, the transport and the fault handling: a task whose worker dies is
recomputed elsewhere (or the call fails with Dask's error once its retries are spent), so a
result is always the merge of every shard. ``client=None`` uses the current client
(``distributed.get_client``) or, without one, Dask's local scheduler.

:func:`simulate` runs the same shard-and-merge in this process, one shard after another,
to see what sharding costs in accuracy (``docs/results/distributed.md``).
"""
import copy

import numpy as np

from ._kernel_args import kernel_params, resolve_gamma
from .engine import relearn_state, snapshot_state
from .exceptions import NumericalError
from .kernels import adiabatic as ad
from .kernels import merge as kmerge
from .kernels import tvm as ktvm

__all__ = ["fit", "fit_files", "predict", "predict_proba", "predict_files", "decision_function",
           "simulate",
           "merge_twins", "pair_twins", "local_cluster", "QUIET_MONITORS"]

_EXTRA_MSG = ("fastbudget.distributed needs dask and distributed: pip install "
              "'fastbudget[dask]'")


def _dask():
    try:
        import dask
        import dask.array  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the extra is installed in CI
        raise ImportError(_EXTRA_MSG) from exc
    return dask


#: Dask settings that slow down the monitors feeding Dask's dashboard (the event loop's tick
#: watch, the system and memory monitors, the statistical profiler, the GIL monitor), for a
#: cluster that has no dashboard. Idle, they cost a 2-worker ``LocalCluster`` about 0.08 CPU
#: seconds per second at Dask's defaults, and about 0.02 with these; on a machine with as
#: many cores as workers that time is taken from the workers (``docs/distributed.md``).
#: :func:`local_cluster` applies them; ``dask.config.set(QUIET_MONITORS)`` before creating
#: a cluster (or the same keys in a Dask configuration file) applies them to any other.
QUIET_MONITORS = {
    "distributed.admin.tick.interval": "200ms",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.worker.profile.enabled": False,
    "distributed.worker.memory.monitor-interval": "500ms",
}


def local_cluster(n_workers=2, *, quiet=True, **kwargs):
    """A ``distributed.LocalCluster`` for fastbudget's jobs on this machine.

    ``n_workers`` worker processes of one thread each (fastbudget's tasks are single
    threaded: a process per core), no dashboard, and Dask's dashboard monitors slowed
    down (:data:`QUIET_MONITORS`), since nothing reads them. ``kwargs`` go to
    ``LocalCluster`` (for example ``memory_limit``) and override these choices
    (``dashboard_address=":8787"`` brings the dashboard back, with the monitors still
    slowed: pass ``quiet=False`` for Dask's defaults). ``fastbudget train/predict
    --workers N`` start their cluster with it. Use it as ``with local_cluster(2) as
    cluster, Client(cluster) as client: ...``.
    """
    try:
        import dask
        from distributed import LocalCluster
    except ImportError as exc:  # pragma: no cover - the extra is installed in CI
        raise ImportError(_EXTRA_MSG) from exc
    if isinstance(n_workers, bool) or not isinstance(n_workers, (int, np.integer)) \
            or n_workers < 1:
        raise ValueError(f"n_workers must be a positive integer; got {n_workers!r}.")
    options = {"threads_per_worker": 1, "processes": True, "dashboard_address": None}
    options.update(kwargs)
    # the settings are read when the scheduler, the nannies and the workers start (the
    # worker processes receive the configuration at their spawn), so they hold for the
    # cluster's life without staying set in this process
    with dask.config.set(QUIET_MONITORS if quiet else {}):
        return LocalCluster(n_workers=int(n_workers), **options)


def _client(client):
    """The client given, else the current one, else None (Dask's local scheduler)."""
    if client is not None:
        return client
    try:
        from distributed import get_client
        return get_client()
    except (ImportError, ValueError):
        return None


# --------------------------------------------------------------------------- data
def _pair(X, y):
    """A block of X and the block of y beside it, as one task's result."""
    return X, y


def _blocks(X, y=None):
    """Delayed (X_block, y_block) pairs of a dask array / DataFrame (one per partition), or
    one pair for in-memory input."""
    dask = _dask()
    import dask.array as da
    if not isinstance(X, da.Array) and hasattr(X, "map_partitions"):   # dask DataFrame
        xs = list(X.to_delayed())
        ys = None if y is None else (list(y.to_delayed()) if hasattr(y, "to_delayed")
                                     else None)
        if y is not None and ys is None:
            raise TypeError("y must be a dask Series or array partitioned like X.")
        if ys is not None and len(ys) != len(xs):
            raise ValueError(f"X has {len(xs)} partitions but y has {len(ys)}: partition "
                             "them alike (e.g. take both from one DataFrame).")
        return xs, ys
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D dask array for X, got {X.ndim} dimensions.")
        if len(X.chunks[1]) != 1:
            X = X.rechunk({1: -1})                     # a block holds whole rows
        if y is None:
            return list(X.to_delayed().ravel()), None
        if not isinstance(y, da.Array):
            y = da.from_array(np.asarray(y), chunks=(X.chunks[0],))
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]}.")
        y = y.rechunk((X.chunks[0],))
        # one task per block gives both: graphs of X and of y optimised apart each fuse a
        # task they share (a block read or generated once for both) into its own chain,
        # and every stage then ran that task twice
        pairs = da.blockwise(_pair, "i", X, "ij", y, "i", concatenate=True, dtype=object,
                             meta=np.empty((0,), dtype=object)).to_delayed().ravel()
        return [p[0] for p in pairs], [p[1] for p in pairs]
    Xd = dask.delayed(X)
    return [Xd], (None if y is None else [dask.delayed(y)])


# --------------------------------------------------------------------------- scoring
def _score_block(X, model, what):
    if what == "decision":
        return model.decision_function(X)
    if what == "proba":
        return model.predict_proba(X)
    return model.predict(X)


def _as_predictor(estimator):
    """The object sent to the workers: the serving predictor of this model
    (:mod:`fastbudget.serving`, read back from the model saved to a temporary file: its
    arrays, no estimator) with its kernel expansions scored by the compiled predict
    (:meth:`~fastbudget.serving.Predictor.compiled`; on 10^7 rows it took 2.5 s with two
    workers where NumPy's blocks took 3.1-3.3, and two workers were 1.90-1.95 times as fast
    as one where NumPy's were 1.64-1.76: ``docs/results/distributed.md``), else, for a
    model that path cannot score, the estimator itself (its compiled
    ``decision_function``)."""
    import os
    import tempfile

    from .exceptions import ModelFormatError
    from .serving import load_predictor
    fd_, path = tempfile.mkstemp(suffix=".npz")
    os.close(fd_)
    try:
        estimator.save(path)
        return load_predictor(path).compiled()
    except (ModelFormatError, TypeError, ValueError, NotImplementedError):
        return estimator
    finally:
        os.unlink(path)


def _map_model(estimator, X, what, client):
    _dask()
    import dask.array as da
    estimator._check_fitted() if hasattr(estimator, "_check_fitted") else None
    model = _as_predictor(estimator)
    client = _client(client)
    ref = client.scatter(model, broadcast=True, hash=False) if client is not None else model
    if hasattr(X, "map_partitions") and hasattr(X, "npartitions"):   # dask DataFrame
        import pandas as pd
        if what == "proba":
            cols = [c.item() if isinstance(c, np.generic) else c for c in estimator.classes_]
            meta = pd.DataFrame(np.zeros((0, len(cols))), columns=cols)
            return X.map_partitions(
                lambda part, m: pd.DataFrame(_score_block(part, m, what), index=part.index,
                                             columns=cols), ref, meta=meta)
        dtype = np.float64 if what == "decision" else np.asarray(estimator.classes_).dtype
        meta = pd.Series(np.zeros(0, dtype=dtype))
        return X.map_partitions(lambda part, m: pd.Series(_score_block(part, m, what),
                                                          index=part.index),
                                ref, meta=meta)
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask array or dask DataFrame; got {type(X).__name__}. "
                        "For data in memory call the estimator's own method.")
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array for X, got {X.ndim} dimensions.")
    if len(X.chunks[1]) != 1:
        X = X.rechunk({1: -1})
    dtype = np.float64 if what in ("decision", "proba") else np.asarray(estimator.classes_).dtype
    k = len(estimator.classes_)
    if what == "proba" or (what == "decision" and k > 2):     # a column per class
        return X.map_blocks(_score_block, ref, what, chunks=(X.chunks[0], (k,)),
                            dtype=dtype, meta=np.zeros((0, 0), dtype=dtype))
    return X.map_blocks(_score_block, ref, what, drop_axis=1, dtype=dtype,
                        meta=np.zeros(0, dtype=dtype))


def decision_function(estimator, X, *, client=None):
    """``estimator.decision_function`` over a dask array or DataFrame: a lazy dask array of
    shape (n_samples,), or (n_samples, n_classes) for one-vs-rest over more than two
    classes (a Series for a DataFrame: binary models only)."""
    return _map_model(estimator, X, "decision", client)


def predict(estimator, X, *, client=None):
    """``estimator.predict`` over a dask array or DataFrame, block by block on the cluster:
    a lazy dask array (a Series for a DataFrame) of labels. The model travels to each
    worker once."""
    return _map_model(estimator, X, "predict", client)


def predict_proba(estimator, X, *, client=None):
    """``estimator.predict_proba`` over a dask array or DataFrame, block by block on the
    cluster: a lazy dask array of shape (n_samples, n_classes), columns in the order of
    ``classes_`` (a DataFrame with the classes as columns for a DataFrame). The workers fit
    the model's calibration map with NumPy (``fastbudget.serving.Predictor.predict_proba``,
    within 1e-12 of the estimator's)."""
    return _map_model(estimator, X, "proba", client)


# --------------------------------------------------------------------------- TVM shards
def _counters(est):
    ist = est.twins_.ist
    return np.array([ist[ktvm.T_SEEN], ist[ktvm.T_ACCEPTED], ist[ktvm.T_MERGES],
                     ist[ktvm.T_REJECTED], ist[ktvm.T_REMOVED]], dtype=np.int64)


def _twins_of(est, start=None, n_shards=1):
    """The twin vectors of a fitted TVM as plain arrays, with the counters (those of this
    shard only: less the counters of ``start``, the model the shard started from).

    A shard that started from the merged model ``start`` holds start's weight and its own
    (``n_shards`` shards each hold all of start's): its twins' weights are scaled by one
    factor so that they sum to ``1 / n_shards`` of start's weight plus the weight this
    shard added. The K shard models then sum to start's weight plus the weight of the new
    examples, as the single stream's twins sum to the weight it learned."""
    tw = est.twins_
    a = np.flatnonzero(tw.active)
    sp, sn = tw.s_pos[a].copy(), tw.s_neg[a].copy()
    if start is not None and n_shards > 1:
        total = float(sp.sum() + sn.sum())
        m0 = float(start.twins_.s_pos.sum() + start.twins_.s_neg.sum())
        target = m0 / n_shards + (total - m0)
        factor = target / total if target > 0.0 and total > 0.0 else 1.0 / n_shards
        sp *= factor
        sn *= factor
    return {
        "kind": "tvm",
        "Q": tw.Q[a].copy(), "s_pos": sp, "s_neg": sn,
        "fq": tw.fq[a].copy(),
        "counters": _counters(est) - (0 if start is None else _counters(start)),
    }


def _stack_twins(a, b):
    """The twins of two models one after the other: Q (C-contiguous float64), s_pos,
    s_neg and fq."""
    return (np.ascontiguousarray(np.concatenate([a["Q"], b["Q"]]), dtype=np.float64),
            *(np.concatenate([a[k], b[k]]) for k in ("s_pos", "s_neg", "fq")))


def _fold(i, j, Q, s, sp, sn, fq, mode, kernel_code, kpar, qnew, tmp):
    """Twin j merged into twin i, in place: the pivot from ``kernels.merge.merge_point``,
    the weights summed, f weight-averaged (twin j is left for the caller to retire)."""
    kmerge.merge_point(mode, kernel_code, kpar, Q, s, i, j, qnew, tmp)
    fq[i] = (s[i] * fq[i] + s[j] * fq[j]) / (s[i] + s[j])
    Q[i] = qnew
    sp[i] += sp[j]
    sn[i] += sn[j]
    s[i] += s[j]


def merge_twins(a, b, *, budget, kernel_code, kpar, mode=kmerge.INPUT, one_sided=True,
                m2=None, labels=False):
    """Fold the twins of two models (dicts of :func:`_twins_of`) into at most ``budget``
    twins by TVM's rules for a full budget (Alg. 3): while over budget, a twin beyond the
    buffer zone (``|f(q)| > m2``, the largest first; skipped when ``m2`` is None) is
    removed, else the allowed pair of least merge
    cost (input space: ``s_i s_j ||q_i - q_j||^2 / (s_i + s_j)``, Sec. 4.2.1; feature space:
    the 1-D search of eq. 4.2), the merged pivot from ``kernels.merge.merge_point`` and the
    weights summed. With ``one_sided`` only twins on the same side of their model's
    decision boundary merge (Sec. 4.2.3; a merged twin's f is the weight-averaged f of its
    two, the linear estimate of the rejection test), unless no such pair is left; with
    ``labels`` (``sides='labels'``) a twin's side is its majority label instead. (The
    estimator's ``balance_sides`` is not applied to this fold.)"""
    Q, sp, sn, fq = _stack_twins(a, b)
    n = Q.shape[0]
    merges = removed = 0
    if n > budget:
        s = np.ascontiguousarray(sp + sn)
        active = np.ones(n, dtype=np.int8)
        def sides(k):
            """The side (+1 / -1) of the twins ``k`` (a slice or an index)."""
            return np.where((sp[k] >= sn[k]) if labels else (fq[k] >= 0.0), 1, -1)

        side = sides(slice(None)).astype(np.int8)
        tmp = np.zeros(Q.shape[1])
        qnew = np.zeros(Q.shape[1])
        row = np.zeros(n)

        def cost_row(i):
            """Merge cost of twin i with every live twin (inf for itself and the dead)."""
            if mode == kmerge.INPUT:
                d2 = ((Q - Q[i]) ** 2).sum(axis=1)
                r = s[i] * s * d2 / (s[i] + s)
            else:
                row[:] = np.inf
                kmerge.merge_costs(kernel_code, kpar, Q, s, side, False, active, i, tmp, row)
                r = row.copy()
            r[i] = np.inf
            r[active == 0] = np.inf
            return r

        cost = np.empty((n, n))
        for i in range(n):
            cost[i] = cost_row(i)
        same = side[:, None] == side[None, :]
        live = n
        far = np.abs(fq)
        while live > budget:
            if m2 is not None:
                k = int(np.argmax(np.where(active == 1, far, -np.inf)))
                if far[k] > m2 + 1e-9 * max(1.0, m2):
                    # beyond the buffer zone: the twin leaves, as in the stream (its
                    # examples are far from the boundary)
                    active[k] = 0
                    sp[k] = sn[k] = s[k] = 0.0
                    cost[k, :] = np.inf
                    cost[:, k] = np.inf
                    live -= 1
                    removed += 1
                    continue
            c = np.where(same, cost, np.inf) if one_sided else cost
            if not np.isfinite(c.min()):
                c = cost                       # no same-side pair left
            i, j = divmod(int(np.argmin(c)), n)
            _fold(i, j, Q, s, sp, sn, fq, mode, kernel_code, kpar, qnew, tmp)
            sp[j] = sn[j] = s[j] = 0.0
            active[j] = 0
            cost[j, :] = np.inf
            cost[:, j] = np.inf
            far[i] = abs(fq[i])
            far[j] = 0.0
            side[i] = sides(i)
            same[i, :] = side == side[i]
            same[:, i] = same[i, :]
            r = cost_row(i)
            cost[i, :] = r
            cost[:, i] = r
            live -= 1
            merges += 1
        keep = np.flatnonzero(active)
        Q, sp, sn, fq = Q[keep], sp[keep], sn[keep], fq[keep]
    counters = a["counters"] + b["counters"]
    counters[2] += merges
    counters[4] += removed
    return {"kind": "tvm", "Q": Q, "s_pos": sp, "s_neg": sn, "fq": fq, "counters": counters}


def _install_twins(est, twins):
    """Make the started TVM ``est`` the exact weighted SVM on ``twins`` (at most
    ``est.budget`` of them): the twins are placed, their halves learned from an empty model
    at the control-of-C margin target (``engine.relearn_state``, several orders before it
    gives up), and the twin bookkeeping (coefficients, f at the pivots, sides, the
    nearest-merge-neighbour cache) brought up to date as after any update."""
    B = int(est.budget)
    Q, sp, sn = twins["Q"], twins["s_pos"], twins["s_neg"]
    n = Q.shape[0]
    if n > B:
        raise ValueError(f"{n} twins do not fit a budget of {B}")
    keep_gamma = est.gamma
    try:
        est.gamma = float(est.gamma_)
        est._allocate(np.zeros((2, Q.shape[1])))
    finally:
        est.gamma = keep_gamma
    st, tw = est.engine_state_, est.twins_
    for j in range(n):
        ktvm._place_twin(st, tw, j, np.ascontiguousarray(Q[j]), float(sp[j]), float(sn[j]))
    ssum = float(sp.sum() + sn.sum())
    tw.par[ktvm.P_SSUM] = ssum
    tw.ist[ktvm.T_NTW] = n
    tw.ist[ktvm.T_SPARE] = n if n < B else B
    tw.ist[ktvm.T_SPARE2] = B + 1
    mu = ssum / B if est.control_C else float(st.fs[ad.F_MU])
    slots = np.arange(2 * n, dtype=np.int64)
    weights = np.empty(2 * n)
    weights[0::2] = sp
    weights[1::2] = sn
    snap = snapshot_state(st)
    if not relearn_state(st, snap, slots, weights, mu):
        raise NumericalError(
            "The exact SVM on the merged twin vectors could not be solved (every learning "
            "order failed numerically). Lower gamma or C, or standardise the features.")
    mode = int(tw.par[ktvm.P_MERGE])
    ktvm._sync(st, tw, mode)
    c = twins["counters"]
    for k, v in zip((ktvm.T_SEEN, ktvm.T_ACCEPTED, ktvm.T_MERGES, ktvm.T_REJECTED,
                     ktvm.T_REMOVED), c):
        tw.ist[k] = int(v)
    return est


# --------------------------------------------------------------------------- BSGD shards
def _bsgd_of(est, start=None):
    """The support vectors of a fitted BSGD (plain arrays), with its counters (of this
    shard only: less those of ``start``)."""
    n = int(est._istate[0])
    ist = est._istate.copy()
    if start is not None:
        ist[2:] -= start._istate[2:]
        ist[1] -= start._istate[1]
    return {"kind": "bsgd", "SV": est._SV[:n].copy(), "coef": est._coef[:n].copy(),
            "sv_t": est._sv_t[:n].copy(), "t": int(ist[1]), "n_seen": int(ist[2]),
            "n_maint": int(ist[3]), "kpar": est._kpar.copy(), "kernel": est.kernel}


def _is_bsgd(est):
    from .estimators.baselines import BSGDClassifier
    return isinstance(est, BSGDClassifier) or est is BSGDClassifier


#: rows of every shard kept as probes for the choice of fold (see :func:`_merge_pair`)
PROBE_ROWS = 1000


def _result_of(est, start, n_shards=1, probe=None):
    if not hasattr(est, "classes_"):
        return None                                     # an empty shard
    if _is_bsgd(est):
        out = _bsgd_of(est, start)
    else:
        out = _twins_of(est, start, n_shards)
        out["probe"] = (np.zeros((0, out["Q"].shape[1])) if probe is None
                        else np.ascontiguousarray(probe, dtype=np.float64))
    # the shard's own calibration statistics (:func:`_shard_learner`), summed in the merges
    out["calibration"] = est.__dict__.get("_calibration_stats")
    return out


def _probe_of(Xc):
    """The first ``PROBE_ROWS`` rows of a chunk as float64 (the probe rows of a shard are
    those of the last chunk it learned)."""
    rows = Xc[:PROBE_ROWS]
    if hasattr(rows, "to_numpy"):
        rows = rows.to_numpy(dtype=np.float64)
    return np.array(rows, dtype=np.float64)


#: fraction of every shard's chunks held back from the first merge (see :func:`fit`)
TAIL = 0.5
#: stages the held-back chunks are learned in, each from the model merged after the last
ROUNDS = 3


def _fractions(tail, rounds, n_shards):
    """The fraction of every shard's chunks that each stage learns: one stage (1.0,) for
    ``tail`` = 0 or one shard; else 1 - tail for the first, then the held-back ``tail``
    halved from round to round, the last two rounds equal: (0.5, 0.25, 0.125, 0.125) for
    tail=0.5, rounds=3; (0.8, 0.2) for tail=0.2, rounds=1."""
    if tail <= 0.0 or n_shards <= 1:
        return (1.0,)
    r = int(rounds)
    back = [tail / 2.0 ** k for k in range(1, r)] + [tail / 2.0 ** (r - 1)]
    return (1.0 - tail, *back)


def _chunk_stages(fracs):
    """The stage of chunk 0, 1, 2, ... of a shard (an endless generator), so that a reader
    need not know the shard's length in advance: chunk 0 in stage 0 (a shard of one chunk
    is learned at once), then chunk i in the stage furthest below its share,
    argmax_s((i + 1) f_s - n_s) with n_s the chunks given to s so far (the lowest stage on
    a tie). Every stage's chunks are spread evenly over the shard: with (0.8, 0.2) chunks
    2, 7, 12, ... are held back; with (0.5, 0.5) chunks 1, 3, 5, ...; any prefix of the
    shard holds each stage's share to within a chunk or two."""
    f = np.asarray(fracs, dtype=np.float64)
    got = np.zeros(f.shape[0])
    i = 0
    while True:
        s = 0 if i == 0 else int(np.argmax((i + 1) * f - got))
        got[s] += 1.0
        i += 1
        yield s


def _stage_chunks(n_chunks, fracs, stage):
    """Indices of the chunks of a shard of ``n_chunks`` chunks learned in ``stage``."""
    gen = _chunk_stages(fracs)
    return [i for i in range(n_chunks) if next(gen) == stage]


def merge_bsgd(a, b, *, budget, maintenance="merging"):
    """Merge two BSGD models (dicts of ``_bsgd_of``) into one of at most ``budget`` support
    vectors: the model of the two averaged, each weighted by its number of SGD steps (the
    parameter mixing of SGD models learned on disjoint shards), then BSGD's own budget
    maintenance ('merging': the SV of least |alpha| merged with its best same-sign
    partner; 'removal': it is dropped) until the budget holds."""
    from .kernels import bsgd as kb
    from .kernels.kernel import KERNEL_CODES
    ta, tb = a["t"], b["t"]
    wa = ta / (ta + tb) if ta + tb > 0 else 0.5
    SV = np.ascontiguousarray(np.concatenate([a["SV"], b["SV"]]))
    coef = np.concatenate([wa * a["coef"], (1.0 - wa) * b["coef"]])
    sv_t = np.concatenate([a["sv_t"], b["sv_t"] + ta])       # b's steps come after a's
    kpar = a["kpar"]
    code = KERNEL_CODES[a["kernel"]]
    n = SV.shape[0]
    Kc = np.empty((n, n))
    for i in range(n):
        for j in range(i, n):
            Kc[i, j] = Kc[j, i] = kb.kernel_value(code, kpar, SV[i], SV[j])
    z = np.zeros(SV.shape[1])
    n_live = n
    maint = 0
    while n_live > budget:
        if maintenance == "merging":
            n_live = kb._maintain_merge(code, kpar, SV, coef, Kc, sv_t, n_live, z, 1e-6)
        else:
            n_live = kb._delete_row(SV, coef, Kc, sv_t, n_live,
                                    kb._argmin_abs(coef, sv_t, n_live))
        maint += 1
    return {"kind": "bsgd", "SV": SV[:n_live].copy(), "coef": coef[:n_live].copy(),
            "sv_t": sv_t[:n_live].copy(), "t": ta + tb, "n_seen": a["n_seen"] + b["n_seen"],
            "n_maint": a["n_maint"] + b["n_maint"] + maint, "kpar": kpar,
            "kernel": a["kernel"]}


def _install_bsgd(est, m):
    """Make the started BSGD ``est`` hold the merged model ``m``."""
    B = int(est.budget)
    n = m["SV"].shape[0]
    est._SV[:] = 0.0
    est._coef[:] = 0.0
    est._sv_t[:] = -1
    est._SV[:n] = m["SV"]
    est._coef[:n] = m["coef"]
    est._sv_t[:n] = m["sv_t"]
    est._kpar[:] = m["kpar"]
    from .kernels import bsgd as kb
    from .kernels.kernel import KERNEL_CODES
    code = KERNEL_CODES[est.kernel]
    est._Kc[:] = 0.0
    for i in range(n):
        for j in range(i, n):
            est._Kc[i, j] = est._Kc[j, i] = kb.kernel_value(code, est._kpar, est._SV[i],
                                                            est._SV[j])
    est._istate[:] = (n, m["t"], m["n_seen"], m["n_maint"])
    assert n <= B
    return est


# --------------------------------------------------------------------------- shards
def _params_for_shard(estimator, gamma_):
    params = estimator.get_params(deep=False)
    if "gamma" in params and gamma_ is not None:
        params["gamma"] = gamma_
    return params


def _shard_learner(cls, params, start):
    """A new learner, or a copy of the merged model ``start`` whose calibration statistics
    are emptied: the shard collects the scores of its own examples only, and the driver
    adds them to the merged model's (:func:`_carry_calibration`)."""
    if start is None:
        return cls(**params)
    est = copy.deepcopy(start)
    est.__dict__["_calibration_stats"] = None
    return est


def _add_stats(a, b):
    """The sum of two calibration statistics arrays (None: empty)."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _carry_calibration(old, new):
    """The merged model's calibration statistics after a stage: those it had (``old``,
    total weight W) decayed as a single stream's decay over the stage's examples (by
    W / (W + W_new), ``W_new`` the total of ``new``: an example's weight falls as
    1 / its age, ``fastbudget.calibration``), plus the stage's shards' own (``new``,
    summed over the shards in the merges). Each shard scored its examples before learning
    them, under its own model: out-of-sample scores, as a single stream's."""
    if new is None:
        return old
    if old is None:
        return np.array(new, dtype=np.float64, copy=True)
    w_old, w_new = float(old[0].sum()), float(new[0].sum())
    if w_old + w_new <= 0.0:
        return old + new
    return old * (w_old / (w_old + w_new)) + new


def _fit_shard(cls, params, X, y, classes, chunk_size, start, stage=0, fracs=(1.0,),
               n_shards=1):
    """Learn one shard (on a worker): a new learner, or the merged model ``start`` (a later
    stage, or a later pass), fed the chunks of ``chunk_size`` rows of the shard that
    ``stage`` learns (:func:`_chunk_stages` of the stage fractions ``fracs``). Returns its
    stored vectors."""
    # a later pass starts from the merged model, which the tasks of one worker share
    est = _shard_learner(cls, params, start)
    n = X.shape[0]
    # a merged model that knows the feature names (from a DataFrame) checks them on
    # every chunk of a DataFrame shard; a new learner takes plain arrays (the merged
    # model gets the names from the first rows of the data)
    named = start is not None and hasattr(start, "feature_names_in_")
    if hasattr(X, "to_numpy") and not (named and hasattr(X, "iloc")):
        X = X.to_numpy(dtype=np.float64)
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    probe = None
    for lo, s in zip(range(0, n, chunk_size), _chunk_stages(fracs)):
        if s == stage:
            hi = min(n, lo + chunk_size)
            Xc = X.iloc[lo:hi] if hasattr(X, "iloc") else X[lo:hi]
            est.partial_fit(Xc, y[lo:hi], classes=classes)
            probe = _probe_of(Xc)
    return _result_of(est, start, n_shards, probe)


def _merge_pair(a, b, cls, params, classes, gamma_):
    """Merge the twins of two shard models to the budget. The exact SVM on the union of
    their twins gives every twin its f (so one-sided merging uses the sides of the model
    they now form, not of the two they came from). Two folds of the union down to the
    budget are then made: TVM's merge rule (:func:`merge_twins`) and the pairing of the
    twins of one model with those of the other of least total merge cost
    (:func:`pair_twins`); the one whose exact SVM agrees in sign with the union's on more
    of the probe rows (the last rows the shards learned, ``PROBE_ROWS`` of each) is kept,
    TVM's rule on a tie. Both are deterministic, so the result is too. The two models'
    calibration statistics are summed."""
    if a is None:
        return b
    if b is None:
        return a
    out = _merge_models(a, b, cls, params, classes, gamma_)
    out["calibration"] = _add_stats(a.get("calibration"), b.get("calibration"))
    return out


def _merge_models(a, b, cls, params, classes, gamma_):
    """:func:`_merge_pair`'s fold of two shard results (neither None)."""
    B = int(params["budget"])
    if a["kind"] == "bsgd":
        return merge_bsgd(a, b, budget=B, maintenance=params["maintenance"])
    probe = _probe_rows(a, b)
    code, kpar = _kernel_of(params, gamma_)
    mode = kmerge.FEATURE if params["merge"] == "feature" else kmerge.INPUT
    # TVM's rule, as the estimator's parameters set it
    rule = dict(budget=B, kernel_code=code, kpar=kpar, mode=mode,
                one_sided=bool(params["one_sided"]), m2=float(params["m2"]),
                labels=params.get("sides", "model") == "labels")
    if a["Q"].shape[0] + b["Q"].shape[0] <= B:
        out = merge_twins(a, b, **rule)
        out["probe"] = probe
        return out
    union = {k: np.concatenate([a[k], b[k]]) for k in ("Q", "s_pos", "s_neg", "fq")}
    union["counters"] = np.zeros(5, dtype=np.int64)
    union["kind"] = "tvm"
    wide = dict(params, budget=union["Q"].shape[0])
    est = _start_model(cls, wide, None, classes, gamma_, union)
    fq = est.twins_.fq[:union["Q"].shape[0]]
    half = a["Q"].shape[0]
    a = dict(a, fq=fq[:half].copy())
    b = dict(b, fq=fq[half:].copy())
    folds = [merge_twins(a, b, **rule)]
    if probe.shape[0] and max(a["Q"].shape[0], b["Q"].shape[0]) <= B:
        folds.append(pair_twins(a, b, kernel_code=code, kpar=kpar, mode=mode))
    best = folds[0]
    if len(folds) > 1:
        target = est.decision_function(probe) >= 0.0
        agree = [np.count_nonzero((_start_model(cls, params, None, classes, gamma_, f)
                                   .decision_function(probe) >= 0.0) == target)
                 for f in folds]
        best = folds[int(np.argmax(agree))]             # the first (TVM's rule) on a tie
    best["probe"] = probe
    return best


def _probe_rows(a, b):
    """The probe rows of a merge: those of both, every other row once more than
    ``4 * PROBE_ROWS`` (up the tree)."""
    pa = a.get("probe", np.zeros((0, a["Q"].shape[1])))
    pb = b.get("probe", np.zeros((0, b["Q"].shape[1])))
    p = np.concatenate([pa, pb])
    while p.shape[0] > 4 * PROBE_ROWS:
        p = p[::2]
    return np.ascontiguousarray(p)


def pair_twins(a, b, *, kernel_code, kpar, mode=kmerge.INPUT):
    """Fold two models' twins (dicts of :func:`_twins_of`) by pairing each twin of the
    smaller with one of the other, the pairs of least total merge cost
    ``s_i s_j ||q_i - q_j||^2 / (s_i + s_j)`` (an assignment problem,
    ``scipy.optimize.linear_sum_assignment``); each pair is merged (pivot by
    ``kernels.merge.merge_point``, weights summed, f weight-averaged) and the unpaired
    twins of the larger kept. Suited to two models grown from one merged model, whose
    twins correspond; at most max(n_a, n_b) twins result."""
    from scipy.optimize import linear_sum_assignment
    Q, sp, sn, fq = _stack_twins(a, b)
    s = np.ascontiguousarray(sp + sn)
    na = a["Q"].shape[0]
    sa, sb = s[:na], s[na:]
    d2 = ((a["Q"][:, None, :] - b["Q"][None, :, :]) ** 2).sum(axis=2)
    cost = sa[:, None] * sb[None, :] * d2 / (sa[:, None] + sb[None, :])
    rows, cols = linear_sum_assignment(cost)
    keep = np.ones(Q.shape[0], dtype=bool)
    qnew = np.zeros(Q.shape[1])
    tmp = np.zeros(Q.shape[1])
    for i, j in zip(rows, cols + na):
        _fold(i, j, Q, s, sp, sn, fq, mode, kernel_code, kpar, qnew, tmp)
        keep[j] = False
    counters = a["counters"] + b["counters"]
    counters[2] += rows.shape[0]
    return {"kind": "tvm", "Q": Q[keep], "s_pos": sp[keep], "s_neg": sn[keep],
            "fq": fq[keep], "counters": counters}


def _kernel_of(params, gamma_):
    return kernel_params(params["kernel"], 1.0 if gamma_ is None else gamma_,
                         params["degree"], params["coef0"])


def _check_learner(estimator, passes=1):
    from .estimators.tvm import TVMClassifier
    if _is_bsgd(estimator):
        if estimator.maintenance == "projection":
            raise TypeError("fastbudget.distributed.fit merges BSGD models by maintenance "
                            "'merging' or 'removal'; 'projection' is not supported (use "
                            "dask_ml.wrappers.Incremental for it).")
        if int(passes) != 1:
            raise ValueError("BSGD is trained in one pass (passes=1).")
    elif not isinstance(estimator, TVMClassifier):
        raise TypeError(
            f"fastbudget.distributed.fit trains TVMClassifier and BSGDClassifier by shard "
            f"and merge; got "
            f"{type(estimator).__name__}. For other learners use "
            "dask_ml.wrappers.Incremental(estimator) (sequential partial_fit over the "
            "blocks) and ParallelPostFit for scoring.")
    if estimator.class_weight == "balanced":
        raise ValueError("class_weight='balanced' needs the class counts of the whole "
                         "stream; pass a dict.")


def _head(X, n):
    """The first ``n`` rows of a block or partition."""
    return X.iloc[:n] if hasattr(X, "iloc") else X[:n]


def _gamma_from_first_block(estimator, first_X, chunk_size):
    g = estimator.get_params().get("gamma")
    if not isinstance(g, str):
        return None if g is None else float(g)
    X0 = first_X[:chunk_size]
    if hasattr(X0, "to_numpy"):
        X0 = X0.to_numpy(dtype=np.float64)
    return float(resolve_gamma(g, np.asarray(X0, dtype=np.float64)))


def _reduce_tree(merge, parts, cls, params, classes, gamma_):
    """Merge ``parts`` two at a time, ceil(log2 K) rounds: with ``merge`` the delayed
    ``_merge_pair`` on a cluster, or ``_merge_pair`` itself in this process."""
    while len(parts) > 1:
        nxt = [merge(parts[i], parts[i + 1], cls, params, classes, gamma_)
               for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


def _compute(dask, obj, client):
    if not dask.is_dask_collection(obj):
        return obj
    if client is not None:
        return client.compute(obj).result()
    return dask.compute(obj)[0]


def fit(estimator, X, y, *, client=None, classes=None, chunk_size=10_000, passes=1,
        tail=TAIL, rounds=ROUNDS):
    """Train ``estimator`` (a :class:`~fastbudget.TVMClassifier`) on a dask array or dask
    DataFrame by shard and merge; returns ``estimator``, fitted.

    Parameters
    ----------
    estimator : TVMClassifier
        Its parameters are used; any model it holds is replaced (as ``fit`` does).
    X : dask.array.Array of shape (n_samples, n_features) or dask.dataframe.DataFrame
        One shard per block (row chunk) or partition.
    y : dask.array.Array or dask.dataframe.Series
        Labels, chunked (partitioned) as X.
    client : distributed.Client, optional
        Default: the current client, else Dask's local scheduler.
    classes : array-like, optional
        The two labels; computed from ``y`` (one pass over it) when not given.
    chunk_size : int, default=10_000
        Rows per ``partial_fit`` call inside a shard; with ``gamma='scale'`` the scale is
        estimated on the first ``chunk_size`` rows of the first shard, as a single stream
        estimates it on its first chunk, and every shard uses that value.
    passes : int, default=1
        More than 1: every shard is learned again starting from the merged model, and the
        results merged again.
    tail : float in [0, 1), default=0.5
        The fraction of every shard's chunks (every other chunk for 0.5) held back from
        the first merge: the rest of the shards is learned and merged, then the held-back
        chunks are learned in ``rounds`` further stages, every shard starting each from
        the model merged after the stage before, and the K models merged (and solved
        exactly) again after each. Each example is still learned once. The held-back
        examples correct the merged model as later examples correct the single stream;
        K models grown from one merged model merge nearly without loss, the less the
        fewer examples they learned since (``docs/results/distributed.md``). 0 merges
        once; with one shard there is nothing to merge and the shard is learned in one go.
    rounds : int, default=3
        Stages the held-back chunks are learned in, halving: with ``tail=0.5``, 3 rounds
        learn a quarter, an eighth and an eighth of every shard (stages of 1/2, 1/4, 1/8,
        1/8: four stages, four merges). 1 learns them in one stage.

    Returns
    -------
    estimator
    """
    dask = _dask()
    if int(passes) < 1:
        raise ValueError(f"passes must be at least 1; got {passes!r}.")
    tail = _check_tail(tail)
    rounds = _check_rounds(rounds)
    _check_learner(estimator, passes)
    if int(chunk_size) < 1:
        raise ValueError(f"chunk_size must be at least 1; got {chunk_size!r}.")
    chunk_size = int(chunk_size)
    client = _client(client)
    xs, ys = _blocks(X, y)
    if ys is None:
        raise ValueError("fit needs labels y.")
    if classes is None:
        import dask.array as da
        yy = y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else y
        classes = _compute(dask, da.unique(da.asarray(yy)), client)
    classes = np.asarray(classes)
    if classes.shape[0] != 2:
        raise ValueError(f"fastbudget.distributed.fit trains a binary model; got "
                         f"{classes.shape[0]} classes. Wrap one-vs-rest yourself or use "
                         "dask_ml.wrappers.Incremental(OneVsRestClassifier(...)).")
    # the first chunk of the first shard only (gamma='scale', feature names): computing the
    # whole block sent it to this process (80 MB for a 5,000,000-row shard of 2 features)
    first = _compute(dask, dask.delayed(_head)(xs[0], chunk_size), client)
    shard = dask.delayed(_fit_shard, pure=False)
    k = len(xs)
    fracs = _fractions(tail, rounds, k)
    run = _cluster_stage(lambda cls, params, start, stage: [
        shard(cls, params, xb, yb, classes, chunk_size, start, stage, fracs, k)
        for xb, yb in zip(xs, ys)], classes, client)
    return _adopt(estimator, _fit_passes(estimator, run, first, classes, chunk_size, passes,
                                         len(fracs)))


def _fit_passes(estimator, run_stage, first, classes, chunk_size, passes, n_stages):
    """The passes of shard and merge. Each pass is ``n_stages`` stages (one: all of every
    shard; with ``tail`` > 0 and more than one shard, the first stage learns most of every
    shard's chunks, and every later stage the chunks held back for it, starting from the
    model merged after the stage before: :func:`_fractions`). ``run_stage(cls, params,
    gamma_, start, stage)`` learns every shard's chunks of ``stage`` starting from ``start``
    (None: a new learner) and returns the tree merge of the results; its twins, solved
    exactly, start the next stage."""
    gamma_ = _gamma_from_first_block(estimator, first, chunk_size)
    params = _params_for_shard(estimator, gamma_)
    cls = type(estimator)
    start = None
    stats = None
    for _ in range(int(passes)):
        for stage in range(int(n_stages)):
            twins = run_stage(cls, params, gamma_, start, stage)
            if twins is None:
                raise ValueError("The data hold no rows: nothing to learn.")
            stats = _carry_calibration(stats, twins.pop("calibration", None))
            if start is not None:               # the counters of the stages before
                if twins["kind"] == "bsgd":
                    twins["t"] += int(start._istate[1])
                    twins["n_seen"] += int(start._istate[2])
                    twins["n_maint"] += int(start._istate[3])
                else:
                    twins["counters"] = twins["counters"] + _counters(start)
            start = _start_model(cls, params, first, classes, gamma_, twins)
            if stats is not None:
                start.__dict__["_calibration_stats"] = stats
    return start



def _cluster_stage(shards, classes, client):
    """``run_stage`` of :func:`_fit_passes` on a cluster: ``shards(cls, params, start,
    stage)`` gives the delayed shard results; their delayed tree of merges is computed."""
    dask = _dask()

    def run_stage(cls, params, gamma_, start, stage):
        # the merged model the stage starts from is a key of the stage's graph (a literal
        # that every shard task depends on: sent once, fetched once per worker), not data
        # scattered beforehand: Dask recomputes a graph's keys on a worker that replaces
        # one that died, while a scattered key has nothing to recompute it from (a worker
        # killed during the scatter, or holding a replica at the wrong moment, failed the
        # whole fit with CommClosedError or FutureCancelledError "already forgotten")
        start_ref = start
        if start is not None and client is not None:
            import uuid
            start_ref = dask.delayed(start, name=f"fastbudget-start-{uuid.uuid4().hex}")
        parts = shards(cls, params, start_ref, stage)
        merge = dask.delayed(_merge_pair, pure=True)
        return _compute(dask, _reduce_tree(merge, parts, cls, params, classes, gamma_),
                        client)
    return run_stage


def _check_tail(tail):
    tail = float(tail)
    if not 0.0 <= tail < 1.0:
        raise ValueError(f"tail must be in [0, 1); got {tail!r}.")
    return tail


def _check_rounds(rounds):
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be an integer of at least 1; got {rounds!r}.")
    return int(rounds)


# --------------------------------------------------------------------------- files
def _read_file(path, fmt, options, chunk_size):
    from .datasets import read_csv, read_libsvm
    if fmt == "libsvm":
        return read_libsvm(path, chunk_size=chunk_size, **options)
    if fmt == "csv":
        return read_csv(path, chunk_size=chunk_size, **options)
    raise ValueError(f"unknown format {fmt!r}: use 'libsvm' or 'csv'.")


def _scan_file(path, fmt, options):
    """(number of features, sorted labels) of one file: a pass over it."""
    width, labels = 0, set()
    for X, y in _read_file(path, fmt, options, 100_000):
        width = max(width, X.shape[1])
        labels.update(np.unique(y).tolist())
    return width, labels


def _fit_file_shard(cls, params, path, fmt, options, classes, chunk_size, transform, start,
                    stage=0, fracs=(1.0,), n_shards=1):
    """Learn one file (on a worker), read in chunks, those of ``stage``
    (:func:`_chunk_stages`; the others are read and skipped); ``transform`` (e.g. a scaler)
    is applied to each chunk."""
    est = _shard_learner(cls, params, start)
    probe = None
    for (X, y), s in zip(_read_file(path, fmt, options, chunk_size), _chunk_stages(fracs)):
        if s != stage:
            continue
        if transform is not None:
            X = transform(X)
        est.partial_fit(X, y, classes=classes)
        probe = _probe_of(X)
    return _result_of(est, start, n_shards, probe)


def _score_file(model, path, fmt, options, chunk_size, transform, what):
    out = []
    for X, _y in _read_file(path, fmt, options, chunk_size):
        if transform is not None:
            X = transform(X)
        out.append(_score_block(X, model, what))
    if not out:
        return np.zeros((0, len(model.classes_))) if what == "proba" else np.zeros(0)
    return np.concatenate(out)


def fit_files(estimator, paths, *, fmt="libsvm", client=None, classes=None,
              chunk_size=10_000, passes=1, transform=None, tail=TAIL, rounds=ROUNDS,
              **options):
    """:func:`fit` over files: one shard per file, read on the workers in chunks (so the
    files must be on storage every worker sees, e.g. a shared file system).

    ``fmt`` is 'libsvm' or 'csv'; ``options`` go to ``read_libsvm`` / ``read_csv``
    (``n_features`` and ``zero_based``; ``label_column``, ``delimiter``, ``header``,
    ``comments``). Without ``classes`` (or, for LIBSVM, ``n_features``) every file is read
    once more on the cluster to find them. ``transform`` (a picklable callable, such as a
    frozen ``StreamingStandardizer``'s ``transform``) is applied to every chunk. A bad row
    raises the reader's error, naming the file and line. ``tail``, ``rounds``: as for
    :func:`fit` (every stage reads the whole file and learns its own chunks)."""
    dask = _dask()
    paths = [str(p) for p in paths]
    if not paths:
        raise ValueError("No input files.")
    if int(passes) < 1:
        raise ValueError(f"passes must be at least 1; got {passes!r}.")
    tail = _check_tail(tail)
    rounds = _check_rounds(rounds)
    _check_learner(estimator, passes)
    chunk_size = int(chunk_size)
    client = _client(client)
    options = dict(options)
    if classes is None or (fmt == "libsvm" and options.get("n_features") is None):
        scan = dask.delayed(_scan_file, pure=True)
        found = _compute(dask, dask.delayed(list)([scan(p, fmt, options) for p in paths]),
                         client)
        if fmt == "libsvm" and options.get("n_features") is None:
            options["n_features"] = max(w for w, _ in found)
        if classes is None:
            classes = sorted(set().union(*(lab for _, lab in found)))
    classes = np.asarray(classes)
    if classes.shape[0] != 2:
        raise ValueError(f"fastbudget.distributed.fit trains a binary model; the files hold "
                         f"{classes.shape[0]} classes.")
    X0, _ = next(iter(_read_file(paths[0], fmt, options, chunk_size)), (None, None))
    if X0 is None:
        raise ValueError(f"{paths[0]} holds no rows.")
    first = X0 if transform is None else transform(X0)
    shard = dask.delayed(_fit_file_shard, pure=False)
    k = len(paths)
    fracs = _fractions(tail, rounds, k)
    run = _cluster_stage(lambda cls, params, start, stage: [
        shard(cls, params, p, fmt, options, classes, chunk_size, transform, start, stage,
              fracs, k) for p in paths], classes, client)
    return _adopt(estimator, _fit_passes(estimator, run, first, classes, chunk_size, passes,
                                         len(fracs)))


def predict_files(estimator, paths, *, fmt="libsvm", client=None, chunk_size=10_000,
                  transform=None, scores=False, what=None, **options):
    """Score files on the cluster, one task per file (the model sent to each worker
    once); yields one array per file, in the order of ``paths``, as each is ready: the
    labels, or with ``scores`` (``what='decision'``) the decision values, or with
    ``what='proba'`` the probabilities (rows x classes)."""
    _dask()
    client = _client(client)
    model = _as_predictor(estimator)
    if what is None:
        what = "decision" if scores else "predict"
    if what not in ("predict", "decision", "proba"):
        raise ValueError(f"what must be 'predict', 'decision' or 'proba'; got {what!r}.")
    if client is None:
        for p in paths:
            yield _score_file(model, str(p), fmt, options, chunk_size, transform, what)
        return
    ref = client.scatter(model, broadcast=True, hash=False)
    futures = [client.submit(_score_file, ref, str(p), fmt, options, chunk_size, transform,
                             what, pure=False) for p in paths]
    for f in futures:
        yield f.result()


def _start_model(cls, params, first, classes, gamma_, twins):
    """A started TVM (classes, width, and the feature names of ``first``, the first rows of
    the data, when they have names) holding ``twins``."""
    est = cls(**params)
    d = twins["SV" if twins["kind"] == "bsgd" else "Q"].shape[1]
    X0 = np.zeros((2, d)) if first is None or not hasattr(first, "columns") else first[:2]
    y0 = np.asarray(classes[:2])[:X0.shape[0]]
    est.partial_fit(X0, y0, classes=classes, sample_weight=np.zeros(X0.shape[0]))
    if twins["kind"] == "bsgd":
        return _install_bsgd(est, twins)
    if gamma_ is not None:
        est.gamma_ = float(gamma_)
    return _install_twins(est, twins)


def _adopt(estimator, fitted):
    """Move the fitted model of ``fitted`` into ``estimator`` (keeping its own
    parameters, such as ``gamma='scale'``)."""
    own = estimator.get_params(deep=False)
    estimator._reset_fitted()
    for k, v in fitted.__dict__.items():
        if k not in own:
            estimator.__dict__[k] = v
    if hasattr(estimator, "_snapshot_params"):
        estimator._snapshot_params()
    return estimator


# --------------------------------------------------------------------------- simulation
def simulate(estimator, X, y, n_shards, *, classes=None, chunk_size=10_000, passes=1,
             tail=TAIL, rounds=ROUNDS):
    """Shard and merge in this process, without a cluster: split (X, y) (NumPy) into
    ``n_shards`` consecutive shards, learn each, merge them in a tree and solve the merged
    twins exactly, exactly as :func:`fit` does on a cluster (``passes``, ``tail``,
    ``rounds``: as there). Returns a fitted copy."""
    if int(passes) < 1:
        raise ValueError(f"passes must be at least 1; got {passes!r}.")
    tail = _check_tail(tail)
    rounds = _check_rounds(rounds)
    _check_learner(estimator, passes)
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    classes = np.unique(y) if classes is None else np.asarray(classes)
    k = int(n_shards)
    bounds = np.linspace(0, X.shape[0], k + 1).astype(int)

    fracs = _fractions(tail, rounds, k)

    def run_stage(cls, params, gamma_, start, stage):
        parts = [_fit_shard(cls, params, X[lo:hi], y[lo:hi], classes, chunk_size, start,
                            stage, fracs, k) for lo, hi in zip(bounds[:-1], bounds[1:])]
        return _reduce_tree(_merge_pair, parts, cls, params, classes, gamma_)
    est = _fit_passes(estimator, run_stage, X, classes, chunk_size, passes, len(fracs))
    return _adopt(type(estimator)(**estimator.get_params(deep=False)), est)
