"""Online-calibrated probabilities of TVM against scikit-learn's SVC(probability=True).

Run from the repository root::

    python perf/probability.py --data-dir ../shared/data [--before] \
        [--budgets N-Checkerboard=100 IJCNN1=100,1000] \
        [--svc-n N-Checkerboard=20000 IJCNN1=20000,0] [--split IJCNN1=20000] [--boot 1000] \
        [--tail-variants 3 10 30] [--svc-cache DIR] [--svc-cache-mb 200] \
        [--png docs/results/probability.png] [--orders 5] [--orders-only] \
        [--recency-variants 0 1 2 3] [--window-variants 5 10 20]

Two data sets, both scored on *noisy* test labels (the labels a user sees):

- N-Checkerboard: 100,000 training examples of the 4x4 board with 15 % of the labels flipped,
  20,000 test examples with 15 % flipped too (the true P(y | x) is 0.85 or 0.15 away from the
  cell edges, so the Bayes log-loss is the entropy of 0.15, 0.423); attributes standardised
  with the board's exact mean and sd; RBF delta = 0.37, C = 100.
- IJCNN1: 49,990 training, 91,701 test examples (9.7 % positive), standardised, RBF
  delta = d / 2, C = 100.

TVM (budgets ``--budgets``) streams the training set in chunks of ``--chunk`` examples in a
random order; its calibration map is fitted online, on each chunk's decision values before
the chunk is learned (``fastbudget.calibration``). ``SVC(C=100, probability=True)`` (same
kernel; Platt scaling by 5-fold cross-validation inside) is trained on the first ``--svc-n``
examples of the same order (0: all of them, the same data as TVM). With ``--split NAME=N``
every model is also trained on the first N training examples and scored on the rest of the
training file (the training distribution, which IJCNN1's test file does not follow); SVC
only when N is among its ``--svc-n``. ``--tail-variants K ...`` adds rows for TVM with
Platt's sigmoid in the tails of its map (the bins beyond which fewer than K positives, or
negatives, were seen), with their paired differences to the map as it is. ``--svc-cache
DIR`` keeps SVC's predictions between runs.

Printed per model: log-loss, expected calibration error (ECE) over 15 equal-width and over
15 equal-mass bins of the predicted P(y = +1), with 95 % percentile bootstrap intervals over
``--boot`` resamples of the scored examples (the same resamples for every model), the ECE
floor (what perfectly calibrated predictions would show on that many examples), Brier score,
accuracy, AUC, the best monotone log-loss (isotonic regression of the decision values fitted
on the scored labels themselves: a bound only a better ranking lowers) and the training CPU
seconds; then each model's paired difference to the last SVC. The row "Platt stage only"
scores TVM's decision values through the sigmoid stage of the same map (no isotonic stage);
with ``--before``, "plain sums (before)" through the map of statistics without the recency
weighting (commit aca1386), replayed from a second TVM streaming the same chunks. With
``--png`` a reliability diagram of both data sets is written.

``--orders N`` streams TVM, at every budget of the data set, in N random orders of the same
training set (orders ``seed, ..., seed + N - 1``; order ``seed`` is the one above) and
prints, per budget and order, its test figures and their paired differences to the last SVC
(which is trained once, on the order ``seed``: its SVM does not depend on the order, only
the folds of its internal Platt fit do), and with ``--split`` its figures on the rest of the
training file when trained on the first N examples of that order; then the model's
``memory_bytes()`` and SVC's number of support vectors. ``--orders-only`` skips the tables
of order ``seed`` alone (TVM is then trained only in the ``--orders`` runs). ``--recency-variants K ...`` replays, on the
prequential decision values recorded in those runs, the map with statistics in which the
s-th of t examples weighs about ``(s / t)^K`` (K = 1: ``fastbudget.calibration`` as it is;
K = 0: plain sums), and ``--window-variants N ...`` the map fitted on the prequential values
of the last N chunks only (the scores of the models near the end of the stream, each still
taken before the chunk was learned); both print the mean over the orders.
"""
import argparse
import math
import time
import warnings

import numpy as np
from scipy.special import expit

N_ECE_BINS = 15


def _ece_binned(b, p, pos, w, n_bins):
    sp = np.bincount(b, weights=w * p, minlength=n_bins)
    sy = np.bincount(b, weights=w * pos, minlength=n_bins)
    return float(np.sum(np.abs(sp - sy)) / w.sum())


def ece(p, y, n_bins=N_ECE_BINS, w=None):
    """Expected calibration error of P(y = +1) = ``p`` for labels ``y`` in {-1, +1}: 15
    equal-width bins of ``p``, the (weighted) mean over examples of |mean prediction -
    positive rate| of their bin."""
    w = np.ones(len(p)) if w is None else w
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    return _ece_binned(b, p, (y > 0).astype(float), w, n_bins)


def ece_mass(p, y, n_bins=N_ECE_BINS, w=None, order=None):
    """ECE over ``n_bins`` equal-mass bins: the examples sorted by ``p`` (ties in a stable
    order) and cut into bins of equal (weighted) count. With 9.7 % positives most
    predictions are near 0, so 14 of the 15 equal-width bins hold a tenth of the data; the
    equal-mass bins weigh every part of the data alike."""
    w = np.ones(len(p)) if w is None else w
    o = np.argsort(p, kind="stable") if order is None else order
    cw = np.cumsum(w[o])
    b = np.minimum((n_bins * (cw - w[o]) / cw[-1]).astype(int), n_bins - 1)
    return _ece_binned(b, p[o], (y[o] > 0).astype(float), w[o], n_bins)


def log_loss(p, y, eps=1e-15, w=None):
    p = np.clip(p, eps, 1 - eps)
    ll = -np.where(y > 0, np.log(p), np.log1p(-p))
    return float(np.mean(ll) if w is None else np.dot(w, ll) / w.sum())


def auc(s, y):
    """Area under the ROC curve of the scores ``s`` (ties count one half)."""
    from sklearn.metrics import roc_auc_score
    return float(roc_auc_score(y > 0, s))


def best_monotone_log_loss(s, y):
    """The log-loss of the best non-decreasing map of the scores ``s``, fitted on the test
    labels themselves (isotonic regression): what a perfect calibration of this ranking
    would give, a lower bound that only a better ranking lowers."""
    from sklearn.isotonic import IsotonicRegression
    q = IsotonicRegression(out_of_bounds="clip").fit(s, (y > 0).astype(float)).predict(s)
    return log_loss(q, y)


def ece_floor(p, n_rep=200, seed=0):
    """The ECE (equal-width, equal-mass) that perfectly calibrated predictions ``p`` would
    show on a test set of this size: the mean over ``n_rep`` sets of labels drawn from
    ``p`` itself. ECE is biased upwards by the noise of the bins' positive rates; a measured
    ECE near this floor is as small as the test set can tell."""
    rng = np.random.default_rng(seed)
    o = np.argsort(p, kind="stable")
    e = [(ece(p, y), ece_mass(p, y, order=o))
         for y in (np.where(rng.random(len(p)) < p, 1, -1) for _ in range(n_rep))]
    return tuple(np.mean(e, axis=0))


def reliability(p, y, n_bins=N_ECE_BINS):
    """(mean prediction, positive rate, count) of the non-empty equal-width bins."""
    b = np.minimum((p * n_bins).astype(int), n_bins - 1)
    n = np.bincount(b, minlength=n_bins)
    sp = np.bincount(b, weights=p, minlength=n_bins)
    sy = np.bincount(b, weights=(y > 0).astype(float), minlength=n_bins)
    live = n > 0
    return sp[live] / n[live], sy[live] / n[live], n[live]


def metrics(p, y, s=None):
    """Scores of the probabilities ``p`` (and the ranking scores ``s``, default ``p``)."""
    s = p if s is None else s
    return {"log-loss": log_loss(p, y), "ECE": ece(p, y), "ECE-mass": ece_mass(p, y),
            "Brier": float(np.mean((p - (y > 0)) ** 2)),
            "accuracy": float(np.mean((p > 0.5) == (y > 0))),
            "AUC": auc(s, y), "best-LL": best_monotone_log_loss(s, y),
            "ECE-floor": ece_floor(p)}


BOOT_KEYS = ("log-loss", "ECE", "ECE-mass")


def bootstrap(preds, y, n_boot=1000, seed=0):
    """Percentile intervals (2.5 %, 97.5 %) over ``n_boot`` bootstrap resamples of the test
    examples (the same resamples for every model, so differences are paired).

    Parameters
    ----------
    preds : dict of name -> ndarray (n,) of P(y = +1)
    y : ndarray (n,) of labels in {-1, +1}

    Returns
    -------
    dict of name -> ndarray (n_boot, 3)
        log-loss, ECE, ECE-mass of each resample (a resample is a vector of multiplicities).
    """
    rng = np.random.default_rng(seed)
    n = len(y)
    orders = {k: np.argsort(p, kind="stable") for k, p in preds.items()}
    reps = {k: np.empty((n_boot, len(BOOT_KEYS))) for k in preds}
    for r in range(n_boot):
        w = np.bincount(rng.integers(n, size=n), minlength=n).astype(float)
        for k, p in preds.items():
            reps[k][r] = (log_loss(p, y, w=w), ece(p, y, w=w),
                          ece_mass(p, y, w=w, order=orders[k]))
    return reps


def interval(r):
    lo, hi = np.percentile(r, [2.5, 97.5], axis=0)
    return lo, hi


def load(name, data_dir, seed):
    from fastbudget.datasets import load_paper_dataset, make_checkerboard
    if name == "N-Checkerboard":
        Xa, ya = make_checkerboard(100_000, noise=0.15, random_state=seed)
        Xb, yb = make_checkerboard(20_000, noise=0.15, random_state=seed + 1)
        S = 4.0 / math.sqrt(12.0)
        return (Xa - 2) / S, ya, (Xb - 2) / S, yb, {"kernel": "rbf", "gamma": 1 / (2 * 0.37)}
    Xa, ya, Xb, yb = load_paper_dataset("ijcnn", data_dir, standardize=True)
    return Xa, ya, Xb, yb, {"kernel": "rbf", "gamma": 1.0 / Xa.shape[1]}


def _stream_tvm(X, y, B, kp, chunk):
    from fastbudget import TVMClassifier

    clf = TVMClassifier(budget=B, C=100.0, **kp)
    t0 = time.process_time()
    for i in range(0, len(y), chunk):
        clf.partial_fit(X[i:i + chunk], y[i:i + chunk], classes=[-1, 1])
    return clf, time.process_time() - t0


def _prequential(X, y, B, kp, chunk):
    """The decision values each chunk had before TVM learned it (what the calibration
    statistics are built from), by a second TVM streaming the same chunks."""
    from fastbudget import TVMClassifier

    clf = TVMClassifier(budget=B, C=100.0, **kp)
    fs = []
    for i in range(0, len(y), chunk):
        if i:
            fs.append(clf.decision_function(X[i:i + chunk]))
        clf.partial_fit(X[i:i + chunk], y[i:i + chunk], classes=[-1, 1])
    return np.concatenate(fs), y[chunk:]


def _plain_sums_map(f, y):
    """The map of the statistics as they were before the recency weighting (commit
    aca1386): plain sums of every prequential decision value."""
    from fastbudget import calibration as cal

    stats = cal.new_stats()
    b, u = cal._bins(f)
    stats[0] = np.bincount(b, minlength=cal.N_BINS)
    stats[1] = np.bincount(b, weights=(y > 0).astype(float), minlength=cal.N_BINS)
    stats[2] = np.bincount(b, weights=u, minlength=cal.N_BINS)
    return cal.CalibrationMap(stats)


def _platt_tails_map(stats, k):
    """A variant of the map for the tails (``--tail-variants``): Platt's sigmoid, instead
    of the bins' own rates, in the bins below which fewer than ``k`` positives were seen
    (and above which fewer than ``k`` negatives), the rest as ``CalibrationMap``. Built by
    replacing those bins' positives by their weight times the sigmoid of the statistics'
    own Platt fit, so that their shrunk rates are the sigmoid."""
    from fastbudget import calibration as cal
    from fastbudget.kernels.calibration import fit_sigmoid

    n, pos, su = stats
    live = n > 0
    f = np.sinh(su[live] / n[live])
    A, B = fit_sigmoid(f, n[live], pos[live], f.shape[0], cal.RIDGE)
    lo = np.cumsum(pos[live]) < k
    hi = np.cumsum((n[live] - pos[live])[::-1])[::-1] < k
    new = stats.copy()
    new[1, live] = np.where(lo | hi, n[live] * expit(A * f + B), pos[live])
    return cal.CalibrationMap(new)


def _tail_rows(clf, f, y, prefix, rows, preds, a, t_tvm):
    """Rows of the tail variants (``--tail-variants``) of ``clf``'s map on scores ``f``."""
    for k in a.tail_variants:
        p = _platt_tails_map(clf.__dict__["_calibration_stats"], k)(f)
        label = f"{prefix}, Platt tails (< {k:g} positives)"
        rows.append((label, metrics(p, y, f), t_tvm))
        preds[label] = p


def _fit_svc(X, y, kp, cache_mb=200.0):
    from sklearn.svm import SVC

    # cache_size (LIBSVM's kernel cache) changes the time, not the solution
    svc = SVC(C=100.0, probability=True, random_state=0, cache_size=cache_mb, **kp)
    t0 = time.process_time()
    w0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc.fit(X, y)
    return svc, time.process_time() - t0, time.perf_counter() - w0


def _svc_p(svc, X):
    return svc.predict_proba(X)[:, list(svc.classes_).index(1)]


def _svc_scores(name, Xa, ya, Xb, n_svc, kp, a):
    """``SVC(C=100, probability=True)`` trained on ``Xa[:n_svc]``: a dict with its
    P(y = +1) and decision values on the test set (``p``, ``f``) and on the rest of the
    training stream ``Xa[n_svc:]`` (``p_rest``, ``f_rest``), its CPU and wall seconds and
    its number of support vectors. With ``--svc-cache DIR`` the dict is saved to (and, when
    present, read from) ``DIR/<name>-n<n_svc>-seed<seed>.npz``: SVC on 100,000 board
    examples takes the better part of an hour of CPU, and its result does not depend on
    anything this script changes."""
    import os

    path = None
    if a.svc_cache:
        os.makedirs(a.svc_cache, exist_ok=True)
        path = os.path.join(a.svc_cache, f"{name}-n{n_svc}-seed{a.seed}.npz")
        if os.path.exists(path):
            with np.load(path) as z:
                return {k: z[k] if z[k].ndim else float(z[k]) for k in z.files}
    svc, t_svc, wall = _fit_svc(Xa[:n_svc], ya[:n_svc], kp, a.svc_cache_mb)
    rest = Xa[n_svc:]
    out = {"p": _svc_p(svc, Xb), "f": svc.decision_function(Xb),
           "p_rest": _svc_p(svc, rest) if len(rest) else np.empty(0),
           "f_rest": svc.decision_function(rest) if len(rest) else np.empty(0),
           "cpu": t_svc, "wall": wall, "n_sv": float(svc.n_support_.sum())}
    if path:
        np.savez(path, **out)
    return out


class _Recorded:
    """Mixin for a learner class that keeps, in order, every (decision value, label,
    weight) its calibration statistics receive (``--orders``)."""

    def _add_calibration(self, f, y_pm, raw_weight):
        self.__dict__.setdefault("_recorded", []).append(
            (np.array(f, dtype=float), np.array(y_pm, dtype=float),
             np.array(raw_weight, dtype=float)))
        return super()._add_calibration(f, y_pm, raw_weight)


def _recorded_tvm():
    from fastbudget import TVMClassifier

    return type("RecordedTVM", (_Recorded, TVMClassifier), {})


def _stream_recorded(X, y, B, kp, chunk):
    """TVM streamed as ``_stream_tvm``, with the prequential values its calibration
    statistics were built from: (model, CPU s, f, y_pm, weight)."""
    clf = _recorded_tvm()(budget=B, C=100.0, **kp)
    t0 = time.process_time()
    for i in range(0, len(y), chunk):
        clf.partial_fit(X[i:i + chunk], y[i:i + chunk], classes=[-1, 1])
    t = time.process_time() - t0
    rec = clf.__dict__.pop("_recorded")
    f, yy, w = (np.concatenate([r[j] for r in rec]) for j in range(3))
    return clf, t, f, yy, w


def recency_stats(f, y_pm, w, k):
    """The statistics of ``fastbudget.calibration`` with the recency exponent ``k``: before
    each example of weight ``w`` they are multiplied by ``(k + 1) W / ((k + 1) W + k w)``,
    so that with unit weights the s-th of t examples weighs about ``(s / t)^k`` (k = 1:
    ``update_stats`` as it is, ``2 W / (2 W + w)``; k = 0: plain sums)."""
    from fastbudget import calibration as cal

    rho = np.ones(len(f))
    total = 0.0
    for i, wi in enumerate(w.tolist()):
        if k > 0 and total > 0.0 and wi > 0.0:
            rho[i] = (k + 1) * total / ((k + 1) * total + k * wi)
        total = rho[i] * total + wi
    after = np.cumprod(np.r_[rho[1:], 1.0][::-1])[::-1]
    ww = w * after
    stats = cal.new_stats()
    b, u = cal._bins(f)
    stats[0] = np.bincount(b, weights=ww, minlength=cal.N_BINS)
    stats[1] = np.bincount(b, weights=ww * (y_pm > 0), minlength=cal.N_BINS)
    stats[2] = np.bincount(b, weights=ww * u, minlength=cal.N_BINS)
    return stats


def _replay_stats(f, y_pm, w, k, chunk):
    """Statistics replayed from recorded prequential values: ``recency_stats`` with exponent
    ``k``, or for ``k = ("last", n)`` the library's rule (exponent 1) on the values of the
    last ``n`` chunks of ``chunk`` examples only (a map refreshed to the scores of the
    models near the end of the stream, each still scored before it learned them)."""
    if isinstance(k, tuple):
        m = int(k[1] * chunk)
        return recency_stats(f[-m:], y_pm[-m:], w[-m:], 1.0)
    return recency_stats(f, y_pm, w, k)


def orders(name, a, B, split, sv):
    """``--orders``: TVM B on ``a.orders`` stream orders of data set ``name``, against
    the SVC ``sv`` (a dict of ``_svc_scores``; trained once). Prints a table per order,
    the model's memory against SVC's support vectors, and the recency variants' means;
    returns nothing."""
    from fastbudget import calibration as cal

    svc = sv["p"]
    Xa0, ya0, Xb, yb, kp = load(name, a.data_dir, a.seed)
    ks = list(a.recency_variants or [1.0]) + [("last", n) for n in a.window_variants]
    res = {k: [] for k in ks}          # k -> rows of (test LL, ECE, mass, split ECE, mass, split LL)
    lines = []
    o0 = a.seed if a.orders_from is None else a.orders_from
    for o in range(o0, o0 + a.orders):
        perm = np.random.default_rng(o).permutation(len(ya0))
        Xa, ya = Xa0[perm], ya0[perm]
        clf, t, f, yy, w = _stream_recorded(Xa, ya, B, kp, a.chunk)
        ft = clf.decision_function(Xb)
        p = clf.predict_proba(Xb)[:, 1]
        reps = bootstrap({"tvm": p, "svc": svc}, yb, a.boot, a.seed)
        d = reps["tvm"] - reps["svc"]
        pts = [log_loss(p, yb) - log_loss(svc, yb), ece(p, yb) - ece(svc, yb),
               ece_mass(p, yb) - ece_mass(svc, yb)]
        first = p < 1.0 / N_ECE_BINS
        cells = [f"{log_loss(p, yb):.4f}", f"{ece(p, yb):.4f}", f"{ece_mass(p, yb):.4f}",
                 f"{auc(ft, yb):.4f}"] + [_ci(pts[j], d, j, "+.4f") for j in range(3)] + [
                 f"{first.sum():,}: {p[first].mean():.4f} / {np.mean(yb[first] > 0):.4f}"
                 if first.any() else "0"]
        recs = {}
        if split:
            c2, _, f2, y2, w2 = _stream_recorded(Xa[:split], ya[:split], B, kp, a.chunk)
            g2 = c2.decision_function(Xa[split:])
            p2 = c2.predict_proba(Xa[split:])[:, 1]
            cells.append(f"{ece(p2, ya[split:]):.4f} / {ece_mass(p2, ya[split:]):.4f}")
            recs["split"] = (f2, y2, w2, g2, ya[split:])
        lines.append(f"| {o} | " + " | ".join(cells) + f" | {t:.1f} |")
        mem = clf.memory_bytes()
        for k in ks:
            stats = _replay_stats(f, yy, w, k, a.chunk)
            pk = cal.CalibrationMap(stats)(ft)
            row = [log_loss(pk, yb), ece(pk, yb), ece_mass(pk, yb)]
            if split:
                f2, y2, w2, g2, yr = recs["split"]
                q = cal.CalibrationMap(_replay_stats(f2, y2, w2, k, a.chunk))(g2)
                row += [ece(q, yr), ece_mass(q, yr), log_loss(q, yr)]
            res[k].append(row)
        print(f"<!-- {name}, B={B}, order {o} done: {t:.1f} CPU s -->", flush=True)
    print(f"\n{name}, TVM B={B} streamed in {a.orders} orders, test set ({len(yb):,} examples; "
          f"differences to SVC on {a.svc_label}, trained once; 95 % paired bootstrap "
          f"intervals over {a.boot} resamples)\n")
    head = ("| order | log-loss | ECE (15 equal-width) | ECE (15 equal-mass) | AUC | "
            "log-loss - SVC | ECE - SVC | ECE-mass - SVC | first equal-width bin: n: "
            "predicted / positive")
    print(head + (f" | trained on {split:,}, rest of the training file: ECE / ECE-mass"
                  if split else "") + " | train CPU s |")
    print("|---" * (10 + bool(split)) + "|")
    for line in lines:
        print(line)
    print(f"\n<!-- {name}, TVM B={B}: memory_bytes() {mem:,} ({mem / 2**20:.1f} MiB); SVC on "
          f"{a.svc_label}: {int(sv['n_sv']):,} support vectors, {sv['cpu']:.1f} CPU s -->",
          flush=True)
    if a.recency_variants or a.window_variants:
        print(f"\n{name}, TVM B={B}: the recency exponent K replayed on the same prequential "
              f"values (mean [min, max] over the {a.orders} orders; K = 1 is the map as it "
              "is, K = 0 plain sums; 'last N chunks': the map as it is, fitted on the "
              "prequential values of the last N chunks only)\n")
        cols = ["test log-loss", "test ECE", "test ECE-mass"] + (
            [f"rest ECE (on {split:,})", "rest ECE-mass", "rest log-loss"] if split else [])
        print("| K | " + " | ".join(cols) + " |")
        print("|---" * (1 + len(cols)) + "|")
        for k in ks:
            r = np.array(res[k])
            lab = f"last {k[1]:g} chunks" if isinstance(k, tuple) else f"{k:g}"
            print(f"| {lab} | " + " | ".join(
                f"{r[:, j].mean():.4f} [{r[:, j].min():.4f}, {r[:, j].max():.4f}]"
                for j in range(r.shape[1])) + " |", flush=True)


def run(name, a, budgets, svc_n, split):
    """Train and score every model on one data set.

    Returns
    -------
    evals : list of (title, rows, preds, y)
        ``rows`` a list of (label, metrics, train CPU s), ``preds`` label -> P(y = +1) of
        the models with bootstrap intervals, ``y`` the labels they are scored on: the test
        set, and with ``split`` the training examples after the first ``split`` for models
        trained on those first ``split``.
    curves : dict label -> reliability curve on the test set
    notes : list of comment lines
    """
    from fastbudget.kernels.calibration import sigmoid as _sigmoid

    Xa, ya, Xb, yb, kp = load(name, a.data_dir, a.seed)
    perm = np.random.default_rng(a.seed).permutation(len(ya))
    Xa, ya = Xa[perm], ya[perm]
    rows, preds, curves, notes = [], {}, {}, []
    for B in ([] if a.orders_only else budgets):
        clf, t_tvm = _stream_tvm(Xa, ya, B, kp, a.chunk)
        # the cost of the calibration's extra scoring: one decision_function per example
        t0 = time.process_time()
        f_train = clf.decision_function(Xa)
        frac = (time.process_time() - t0) / max(t_tvm, 1e-9)
        notes.append(f"{name}, B={B}: one decision_function over the training set costs "
                     f"{100 * frac:.1f} % of TVM's training CPU time")
        f = clf.decision_function(Xb)
        notes.append(f"{name}, B={B}: AUC of the final model on its own training set "
                     f"{auc(f_train, ya):.4f}, on the test set {auc(f, yb):.4f}")
        p = clf.predict_proba(Xb)[:, 1]
        cmap = clf._calibration()
        p_platt = _sigmoid(cmap.A * f + cmap.B)
        label = f"TVM B={B}, online calibration"
        rows.append((label, metrics(p, yb, f), t_tvm))
        preds[label] = p
        rows.append((f"TVM B={B}, Platt stage only", metrics(p_platt, yb, f), t_tvm))
        _tail_rows(clf, f, yb, f"TVM B={B}", rows, preds, a, t_tvm)
        if a.before:
            fp, yp = _prequential(Xa, ya, B, kp, a.chunk)
            p_old = _plain_sums_map(fp, yp)(f)
            label = f"TVM B={B}, plain sums (before)"
            rows.append((label, metrics(p_old, yb, f), t_tvm))
            preds[label] = p_old
        if B == budgets[-1]:
            curves[f"TVM B={B} online"] = reliability(p, yb)
            curves[f"TVM B={B} Platt only"] = reliability(p_platt, yb)
    svcs = {}
    for n_svc in svc_n:
        n_svc = len(ya) if n_svc <= 0 else min(n_svc, len(ya))
        sv = _svc_scores(name, Xa, ya, Xb, n_svc, kp, a)
        svcs[n_svc] = sv
        notes.append(f"{name}, SVC on {n_svc:,}: {sv['cpu']:.1f} CPU s, {sv['wall']:.1f} s "
                     f"wall, {int(sv['n_sv'])} SVs")
        label = f"SVC(probability=True) on {n_svc:,}"
        rows.append((label, metrics(sv["p"], yb, sv["f"]), sv["cpu"]))
        preds[label] = sv["p"]
        curves[f"SVC on {n_svc:,}"] = reliability(sv["p"], yb)
    evals = [(f"{name}, test set", rows, preds, yb)]
    if split and not a.orders_only:
        # the same distribution as the training stream: train on the first `split`
        # examples, score on the rest of the training file
        X1, y1, X2, y2 = Xa[:split], ya[:split], Xa[split:], ya[split:]
        rows2, preds2 = [], {}
        for B in budgets:
            clf, t_tvm = _stream_tvm(X1, y1, B, kp, a.chunk)
            p = clf.predict_proba(X2)[:, 1]
            label = f"TVM B={B} on {split:,}, online calibration"
            f2 = clf.decision_function(X2)
            rows2.append((label, metrics(p, y2, f2), t_tvm))
            preds2[label] = p
            _tail_rows(clf, f2, y2, f"TVM B={B} on {split:,}", rows2, preds2, a, t_tvm)
            if a.before:
                fp, yp = _prequential(X1, y1, B, kp, a.chunk)
                label = f"TVM B={B} on {split:,}, plain sums (before)"
                p_old = _plain_sums_map(fp, yp)(f2)
                rows2.append((label, metrics(p_old, y2, f2), t_tvm))
                preds2[label] = p_old
        sv = svcs.get(split)          # (SVC on the split only when it is among --svc-n)
        if sv is not None:
            label = f"SVC(probability=True) on {split:,}"
            rows2.append((label, metrics(sv["p_rest"], y2, sv["f_rest"]), sv["cpu"]))
            preds2[label] = sv["p_rest"]
        evals.append((f"{name}, training examples {split + 1:,}-{len(ya):,} (models trained "
                      f"on the first {split:,})", rows2, preds2, y2))
    if a.orders and svcs:
        n_last = list(svcs)[-1]
        a.svc_label = f"{n_last:,}"
        for B in budgets:
            orders(name, a, B, split, svcs[n_last])
    return evals, curves, notes


def _ci(point, reps, k, fmt):
    lo, hi = interval(reps[:, k])
    return f"{point:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def _print_eval(title, rows, preds, yb, a):
    reps = bootstrap(preds, yb, a.boot, a.seed)
    print(f"\n{title} ({len(yb):,} examples; 95 % bootstrap intervals over {a.boot} "
          "resamples of them)\n")
    print("| model | log-loss | ECE (15 equal-width) | ECE (15 equal-mass) | Brier | "
          "ECE floor (width / mass) | accuracy | AUC | best monotone log-loss | train CPU s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, m, t in rows:
        if label in reps:
            r = reps[label]
            cells = [_ci(m["log-loss"], r, 0, ".4f"), _ci(m["ECE"], r, 1, ".4f"),
                     _ci(m["ECE-mass"], r, 2, ".4f")]
        else:
            cells = [f"{m['log-loss']:.4f}", f"{m['ECE']:.4f}", f"{m['ECE-mass']:.4f}"]
        fl = m["ECE-floor"]
        print(f"| {label} | " + " | ".join(cells) + f" | {m['Brier']:.4f} | "
              f"{fl[0]:.4f} / {fl[1]:.4f} | "
              f"{m['accuracy']:.4f} | {m['AUC']:.4f} | {m['best-LL']:.4f} | {t:.1f} |",
              flush=True)
    variants = [k for k in preds if ", Platt tails" in k]
    if variants:
        print("\nPaired differences, tail variant - the same TVM's online calibration "
              "(negative: the variant is better; 95 % bootstrap intervals)\n")
        print("| model | log-loss | ECE (equal-width) | ECE (equal-mass) |")
        print("|---|---:|---:|---:|")
        for label in variants:
            ref = label.split(", Platt tails")[0] + ", online calibration"
            _print_diff(label, ref, preds, reps, yb)
    svcs = [k for k in preds if k.startswith("SVC")]
    if svcs:
        ref = svcs[-1]
        print(f"\nPaired differences, model - {ref} (negative: the model is better; "
              "95 % bootstrap intervals)\n")
        print("| model | log-loss | ECE (equal-width) | ECE (equal-mass) |")
        print("|---|---:|---:|---:|")
        for label in preds:
            if label != ref and ", Platt tails" not in label:
                _print_diff(label, ref, preds, reps, yb)


def _print_diff(label, ref, preds, reps, yb):
    d = reps[label] - reps[ref]
    pts = [log_loss(preds[label], yb) - log_loss(preds[ref], yb),
           ece(preds[label], yb) - ece(preds[ref], yb),
           ece_mass(preds[label], yb) - ece_mass(preds[ref], yb)]
    print(f"| {label} | " + " | ".join(
        _ci(pts[k], d, k, "+.4f") for k in range(3)) + " |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir", default="../shared/data")
    ap.add_argument("--sets", default="N-Checkerboard,IJCNN1")
    ap.add_argument("--budgets", nargs="*", default=["N-Checkerboard=100", "IJCNN1=100,1000"],
                    help="NAME=B1,B2,... budgets of TVM per data set")
    ap.add_argument("--chunk", type=int, default=1000)
    ap.add_argument("--svc-n", nargs="*", default=["N-Checkerboard=20000", "IJCNN1=20000,0"],
                    help="NAME=N1,N2,... training set sizes of SVC per data set (0: the whole "
                         "training set, as TVM)")
    ap.add_argument("--split", nargs="*", default=["IJCNN1=20000"],
                    help="NAME=N: also train on the first N training examples and score on "
                         "the rest of the training file (the training distribution)")
    ap.add_argument("--before", action="store_true",
                    help="also score TVM with the map of plain sums (no recency weighting)")
    ap.add_argument("--boot", type=int, default=1000,
                    help="bootstrap resamples of the test set for the intervals")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--png", default=None)
    ap.add_argument("--tail-variants", nargs="*", type=float, default=[],
                    help="also score TVM with Platt's sigmoid in the tails of its map: one "
                         "row per K, the bins beyond which fewer than K positives "
                         "(negatives) were seen")
    ap.add_argument("--svc-cache-mb", type=float, default=200.0,
                    help="LIBSVM kernel cache of SVC in MB (scikit-learn's default 200; "
                         "more is faster on large sets and gives the same model)")
    ap.add_argument("--svc-cache", default=None,
                    help="directory where SVC's predictions are saved and, when present, "
                         "read back instead of training SVC again")
    ap.add_argument("--orders", type=int, default=0,
                    help="also stream TVM (every budget of each data set) in this many "
                         "random orders and compare each with the last SVC")
    ap.add_argument("--window-variants", nargs="*", type=float, default=[],
                    help="with --orders: replay the map fitted on the prequential values of "
                         "the last N chunks only")
    ap.add_argument("--orders-from", type=int, default=None,
                    help="with --orders: the first order (default --seed), to share the "
                         "orders between processes")
    ap.add_argument("--orders-only", action="store_true",
                    help="with --orders: skip the tables of stream order --seed alone (TVM "
                         "is trained only in the --orders runs)")
    ap.add_argument("--recency-variants", nargs="*", type=float, default=[],
                    help="with --orders: replay the map with recency exponent K (1: as it "
                         "is, 0: plain sums) on the recorded prequential values")
    a = ap.parse_args(argv)
    allcurves = {}
    budgets = {k: [int(b) for b in v.split(",")] for k, v in (x.split("=") for x in a.budgets)}
    svc_n = {k: [int(b) for b in v.split(",")] for k, v in (x.split("=") for x in a.svc_n)}
    split = {k: int(v) for k, v in (x.split("=") for x in a.split)}
    for name in a.sets.split(","):
        evals, curves, notes = run(name, a, budgets.get(name, [100]), svc_n.get(name, [0]),
                                   split.get(name, 0))
        allcurves[name] = curves
        for title, rows, preds, yb in evals:
            _print_eval(title, rows, preds, yb, a)
        print()
        for line in notes:
            print(f"<!-- {line} -->", flush=True)
    if a.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(allcurves), figsize=(5 * len(allcurves), 4.6))
        for ax, (name, curves) in zip(np.atleast_1d(axes), allcurves.items()):
            ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="perfect")
            for (label, (mp, rate, n)), mk in zip(curves.items(), "osv^D"):
                ax.plot(mp, rate, marker=mk, ms=4, label=label)
            ax.set_title(f"{name} (noisy test labels)")
            ax.set_xlabel("mean predicted P(y = +1) in bin")
            ax.set_ylabel("fraction positive in bin")
            ax.legend(loc="upper left", fontsize=8)
        fig.tight_layout()
        fig.savefig(a.png, dpi=110)
        print(f"wrote {a.png}")


if __name__ == "__main__":
    main()
