"""Offline oracles on TVM's own twins: where the Letter B = 20 and Global-merging losses lie.

Regenerates ``docs/results/tvm_table3_gaps.md`` (linked from ``tvm_table3.md`` and
``tvm_table5.md``).

Usage::

    python perf/table3_gaps.py [--data ../shared/data] [--orders 3] [--out docs/results]
    python perf/table3_gaps.py --section search [--orders 3]     # merge search depth
    python perf/table3_gaps.py --section placement [--orders 10] # Letter B = 20 placement
    python perf/table3_gaps.py --section cache [--orders 3]      # literal NN bookkeeping
    python perf/table3_gaps.py --section curve [--orders 3]      # along the stream
    python perf/table3_gaps.py --section robust [--orders 2]     # Global, nearby settings

``--section`` regenerates one marked section of ``tvm_table3_gaps.md`` (the sections
described under "Hypotheses" below) and leaves the rest of the file as it is.

For each case (data set, budget B, merging variant) and each stream order (seeds 1000 + o,
as ``fastbudget reproduce tvm-table3`` / ``tvm-table5``), the online TVM is trained with the
paper's defaults and then three models are built on its *final pivots* q_1..q_B:

- **online**: the online TVM itself (its twin weights s+/s- and C_eff).
- **refit**: ``SVC`` with ``sample_weight`` on the same twins, weights and C_eff (checks that
  the online model is the exact weighted SVM on its twins).
- **oracle Q(D)**: the offline TVM of Sec. 3 on these pivots: every training example is
  assigned to its nearest pivot (input space), s+/s- are the class counts, and the exact
  weighted SVM is solved at the C that control of C gives for those weights
  (C * B / N, N the training examples).
- **oracle margin**: as Q(D), but only the training examples inside the final model's margin
  (|f(x)| <= m1 = 1, the examples Beneficial would learn at the end) are counted, at
  C = 100 B / (their number): the offline analogue of what the online TVM keeps.
- **oracle labels**: the online weights s+ + s- of each twin kept, but split between the
  classes as in the oracle (the class shares of the examples nearest to that pivot), at the
  online C_eff.

If the Q(D) oracle is far above the online model, the pivots are good and the loss is in the
weights the merges attached to them; if it is not, the loss is in where the pivots sit.
"""
import argparse
import math
import pathlib
import time

import numpy as np

from fastbudget import TVMClassifier
from fastbudget.datasets import load_paper_dataset, make_checkerboard
from fastbudget.reproduce._common import stamp

ROOT = pathlib.Path(__file__).resolve().parents[1]
CB_GAMMA = 1.0 / (2 * 0.37)
SET_INDEX = {"Checkerboard": 3}      # position in paper 000's list of 12 (generator seeds)

# (data set, B, variant, paper figure) -- Table 3 (Default) and Table 5 (Global, B = 100)
CASES = (
    ("Letter", 20, "Default", 76.5),
    ("Letter", 100, "Default", 87.6),
    ("Letter", 100, "Global", 80.4),
    ("IJCNN", 100, "Default", 97.0),
    ("IJCNN", 100, "Global", 95.9),
    ("USPS", 100, "Default", 92.1),
    ("USPS", 100, "Global", 91.1),
    ("Checkerboard", 100, "Default", 98.1),
    ("Checkerboard", 100, "Global", 95.5),
)
VARIANTS = {"Default": {}, "Global": {"one_sided": False}}


def load(name, data):
    """Standardised (X_train, y_train, X_test, y_test) as the reproduction loads them."""
    if name == "Checkerboard":
        s = 100 * SET_INDEX[name]
        Xa, ya = make_checkerboard(100_000, noise=0.0, random_state=s)
        Xb, yb = make_checkerboard(5_000, noise=0.0, random_state=s + 1)
        S = 4.0 / math.sqrt(12.0)
        return (Xa - 2) / S, ya, (Xb - 2) / S, yb
    key = {"Letter": "letter", "IJCNN": "ijcnn", "USPS": "usps"}[name]
    return load_paper_dataset(key, data, standardize=True)


def gamma_of(name, d):
    return CB_GAMMA if name == "Checkerboard" else 1.0 / d


def nearest_pivot(X, Q, block=20000):
    out = np.empty(len(X), np.int64)
    q2 = (Q * Q).sum(1)
    for i in range(0, len(X), block):
        xb = X[i:i + block]
        d = q2[None, :] - 2.0 * xb @ Q.T
        out[i:i + block] = np.argmin(d, axis=1)
    return out


def weighted_svm(Q, sp, sn, C, gamma, Xb, yb):
    """Exact SVM on the twins (q, +1, s+), (q, -1, s-) with box C s; test accuracy (%)."""
    from sklearn.svm import SVC

    X = np.vstack([Q[sp > 0], Q[sn > 0]])
    y = np.r_[np.ones(int((sp > 0).sum())), -np.ones(int((sn > 0).sum()))]
    w = np.r_[sp[sp > 0], sn[sn > 0]]
    if len(np.unique(y)) < 2:
        return 100.0 * np.mean(yb == y[0]), 0.0
    m = SVC(C=C, kernel="rbf", gamma=gamma, tol=1e-6, cache_size=200).fit(X, y, sample_weight=w)
    return 100.0 * m.score(Xb, yb), float(np.mean(m.predict(Xb) > 0))


def run_case(name, B, variant, Xa, ya, Xb, yb, order):
    gamma = gamma_of(name, Xa.shape[1])
    perm = np.random.default_rng(1000 + order).permutation(len(ya))
    t = time.process_time()
    clf = TVMClassifier(budget=B, C=100.0, kernel="rbf", gamma=gamma, **VARIANTS[variant])
    for i in range(0, len(perm), 10_000):
        idx = perm[i:i + 10_000]
        clf.partial_fit(Xa[idx], ya[idx], classes=np.array([-1, 1]))
    cpu = time.process_time() - t
    online = 100.0 * clf.score(Xb, yb)
    Q = np.asarray(clf.twin_vectors_, dtype=np.float64)
    W = np.asarray(clf.twin_weights_, dtype=np.float64)
    sp, sn = W[:, 0].copy(), W[:, 1].copy()
    refit, _ = weighted_svm(Q, sp, sn, clf.C_eff_, gamma, Xb, yb)
    a = nearest_pivot(Xa, Q)
    op = np.bincount(a[ya > 0], minlength=len(Q)).astype(float)
    on = np.bincount(a[ya < 0], minlength=len(Q)).astype(float)
    oracle, _ = weighted_svm(Q, op, on, 100.0 * len(Q) / len(ya), gamma, Xb, yb)
    f = clf.decision_function(Xa)
    near = np.abs(f) <= 1.0
    mp = np.bincount(a[near & (ya > 0)], minlength=len(Q)).astype(float)
    mn = np.bincount(a[near & (ya < 0)], minlength=len(Q)).astype(float)
    margin = (weighted_svm(Q, mp, mn, 100.0 * len(Q) / max(int(near.sum()), 1), gamma, Xb, yb)[0]
              if near.sum() >= 2 else float("nan"))
    share = np.divide(op, op + on, out=np.full(len(Q), 0.5), where=(op + on) > 0)
    tot = sp + sn
    lab, _ = weighted_svm(Q, tot * share, tot * (1 - share), clf.C_eff_, gamma, Xb, yb)
    # how the online weights disagree with the data's labels around each pivot
    maj_online = np.sign(sp - sn)
    maj_oracle = np.sign(op - on)
    pos_mass_online = sp.sum()
    pos_in_pos_twins = sp[sp > sn].sum()
    return {
        "online": online, "refit": refit, "oracle": oracle, "labels": lab, "margin": margin,
        "margin_share": float(near.mean()), "cpu": cpu,
        "C_eff": float(clf.C_eff_), "sum_s": float(tot.sum()),
        "pos_twins_online": int((maj_online > 0).sum()),
        "pos_twins_oracle": int((maj_oracle > 0).sum()),
        "pos_share_in_pos_twins": float(pos_in_pos_twins / max(pos_mass_online, 1e-12)),
        "mixed_online": int(((sp > 0) & (sn > 0)).sum()),
        "n_merges": int(clf.n_merges_), "n_accepted": int(clf.n_accepted_),
    }


def rebalanced(Xa, ya, Xb, yb, pos_share, seed=0):
    """Subsample one class (train and test alike) so that positives make ``pos_share``."""
    rng = np.random.default_rng(seed)

    def cut(X, y):
        ip, ineg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        n_pos = min(len(ip), int(round(len(ineg) * pos_share / (1 - pos_share))))
        n_neg = min(len(ineg), int(round(n_pos * (1 - pos_share) / pos_share)))
        keep = np.sort(np.r_[rng.choice(ip, n_pos, replace=False),
                             rng.choice(ineg, n_neg, replace=False)])
        return X[keep], y[keep]

    return (*cut(Xa, ya), *cut(Xb, yb))


# (data set, share of positives after subsampling): IJCNN balanced, Letter made as
# imbalanced as IJCNN
BALANCE = (("IJCNN", 0.5), ("Letter", 0.097))


def balance_runs(cache, data, n_orders):
    out = []
    for name, share in BALANCE:
        if name not in cache:
            cache[name] = load(name, data)
        Xa, ya, Xb, yb = rebalanced(*cache[name], share)
        gamma = gamma_of(name, Xa.shape[1])
        r = {}
        for variant in ("Default", "Global"):
            acc = []
            for o in range(n_orders):
                perm = np.random.default_rng(1000 + o).permutation(len(ya))
                clf = TVMClassifier(budget=100, C=100.0, kernel="rbf", gamma=gamma,
                                    **VARIANTS[variant]).fit(Xa[perm], ya[perm])
                acc.append(100.0 * clf.score(Xb, yb))
            r[variant] = acc
        out.append((name, share, len(ya), len(yb), 100 * np.mean(yb < 0), r))
        print(f"{name} positives {share:.3f}: Default {_ms(r['Default'])}, "
              f"Global {_ms(r['Global'])}", flush=True)
    return out


def ijcnn_inputs(data, n_orders):
    """Default and Global on IJCNN under other input treatments: the LIBSVM scaling as
    shipped (not standardised), and without the 10 one-hot columns (features 1-10)."""
    Xr, ya, Xrb, yb = load_paper_dataset("ijcnn", data)
    Xs, _, Xsb, _ = load_paper_dataset("ijcnn", data, standardize=True)
    inputs = (("standardised (the reproduction)", Xs, Xsb),
              ("as shipped (LIBSVM's [-1, 1] scaling)", Xr, Xrb),
              ("standardised, one-hot columns dropped", Xs[:, 10:], Xsb[:, 10:]),
              ("as shipped, one-hot columns dropped", Xr[:, 10:], Xrb[:, 10:]))
    out = []
    for label, A, B in inputs:
        r = {}
        for variant in ("Default", "Global"):
            acc = []
            for o in range(n_orders):
                perm = np.random.default_rng(1000 + o).permutation(len(ya))
                clf = TVMClassifier(budget=100, C=100.0, kernel="rbf", gamma=1.0 / A.shape[1],
                                    **VARIANTS[variant]).fit(A[perm], ya[perm])
                acc.append(100.0 * clf.score(B, yb))
            r[variant] = acc
        out.append((label, r))
        print(f"IJCNN {label}: Default {_ms(r['Default'])}, Global {_ms(r['Global'])}",
              flush=True)
    return out


def _ms(v):
    v = np.asarray(v, dtype=float)
    return f"{v.mean():.1f} ± {v.std():.1f}"


# ------------------------------------------------------------------ hypothesis sections
# Each section is regenerated alone (``--section KEY``) between two markers in
# tvm_table3_gaps.md; the full run keeps them.
_SEC = ("<!-- section:{} -->", "<!-- /section:{} -->")


def _sections(text):
    """The marked sections of ``text``, in order, as whole strings."""
    out = []
    i = 0
    while True:
        b = text.find("<!-- section:", i)
        if b < 0:
            return out
        key = text[b + len("<!-- section:"):text.index(" -->", b)]
        e = text.index(_SEC[1].format(key), b) + len(_SEC[1].format(key))
        out.append(text[b:e])
        i = e


def write_section(out, key, lines):
    path = pathlib.Path(out) / "tvm_table3_gaps.md"
    text = path.read_text() if path.exists() else ""
    b, e = (s.format(key) for s in _SEC)
    block = b + "\n" + "\n".join(lines) + "\n" + e
    if b in text:
        i = text.index(b)
        j = text.index(e, i) + len(e)
        text = text[:i] + block + text[j:]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
    print(f"wrote section {key} of {path}")


# -- H1: the depth of the merge search after a rejection ---------------------------------
# The paper (Sec. 4.2.4): "If the selected pair of twin vectors fails the test, Rejection
# considers the next best merging candidates. If they pass the test, the merging is
# executed. Otherwise, UpdateTV concludes that merging cannot be successfully performed and
# the overflow twin is simply ignored." Ours tries every twin's cached best pair (B
# candidates) and then *every other allowed pair* in increasing cost before it drops the
# example. The experiment runs a throw-away copy of the package whose compiled UpdateTV
# (1) counts the merges across the boundary (the twins' f of opposite signs), the merges
# found only by the exhaustive fallback and those on a later candidate than the first, and
# (2) can cap the search at the first k cached candidates with no fallback (par[10] = k).
# The library itself is not changed.
_SEARCH_PATCH = (
    ("N_TIST = 11\n", "N_TIST = 14\n"),
    ("N_TPAR = 10\n", "N_TPAR = 12\n"),
    ("            n_tries = int(_tw_par[P_TRIES])\n",
     "            n_tries = int(_tw_par[P_TRIES]) if _tw_par[10] <= 0.0 else int(_tw_par[10])\n"),
    ("            if mi < 0 and eta >= 0.0:\n",
     "            if mi < 0 and eta >= 0.0 and _tw_par[10] <= 0.0:\n"),
    ("                        mi = i\n                        mj = j\n",
     "                        mi = i\n                        mj = j\n"
     "                        _tw_ist[12] += 1\n                        tried = -1\n"),
    ("            _tw_ist[T_MERGES] += 1\n            leave1 = mi\n",
     "            _tw_ist[T_MERGES] += 1\n"
     "            if tw.side[mi] != tw.side[mj]:\n                _tw_ist[11] += 1\n"
     "            if tried > 1:\n                _tw_ist[13] += 1\n"
     "            leave1 = mi\n"),
    # H6: par[11] > 0 replaces the exact nearest-merge-neighbour cache by the bookkeeping
    # of Sec. 4.2.1 read literally (see ``_LAZY_DOC``)
    ("from .merge import before, merge_point, nn_update, sorted_pairs\n",
     "from .merge import before, merge_cost, merge_point, nn_update, sorted_pairs\n"),
    ('@njit(cache=True, inline="always")\ndef _add_dst(',
     """@njit(cache=True)
def _nn_lazy(mode, code, kpar, Q, s, side, one_sided, active, dirty, nn_idx, nn_d, tmp,
             stale):
    n = active.shape[0]
    rows = 0
    for i in range(n):
        if not active[i]:
            nn_idx[i] = -1
            nn_d[i] = np.inf
            continue
        k = nn_idx[i]
        if dirty[i] or k < 0 or not active[k] or (one_sided and side[k] != side[i]):
            rows += 1
            bj = -1
            bd = np.inf
            for j in range(n):
                if j == i or not active[j] or (one_sided and side[i] != side[j]):
                    continue
                c = merge_cost(mode, code, kpar, Q, s, i, j, tmp)
                if before(c, j, bd, bj):
                    bd = c
                    bj = j
            nn_idx[i] = bj
            nn_d[i] = bd
            continue
        if dirty[k] and not stale:
            nn_d[i] = merge_cost(mode, code, kpar, Q, s, i, k, tmp)
        for j in range(n):
            if j == i or j == k or not dirty[j] or not active[j] or (
                    one_sided and side[i] != side[j]):
                continue
            c = merge_cost(mode, code, kpar, Q, s, i, j, tmp)
            if before(c, j, nn_d[i], nn_idx[i]):
                nn_d[i] = c
                nn_idx[i] = j
    return rows


@njit(cache=True)
def _nn_remap(nn_idx, active, dirty, leave1, leave2, s1, s2):
    for r in range(nn_idx.shape[0]):
        if not active[r] or dirty[r]:
            continue
        if nn_idx[r] == leave1:
            nn_idx[r] = s2 if leave2 >= 0 else s1
        elif leave2 >= 0 and nn_idx[r] == leave2:
            nn_idx[r] = s1


@njit(cache=True, inline="always")
def _add_dst("""),
    # the paper's slots: the merged twin takes TV_i's, the overflow twin TV_j's (Alg. 3), so
    # a memorised partner index now names the new occupant; ours places them in spare
    # slots, so the memorised indices are moved there
    ("    s = _sync(st, tw, mode)\n    return s, True\n",
     "    if _tw_par[11] > 0.0 and leave1 >= 0:\n"
     "        _nn_remap(tw.nn_idx, tw.active, tw.dirty, leave1, leave2, s1, s2)\n"
     "    s = _sync(st, tw, mode)\n    return s, True\n"),
    ("    _tw_ist[T_NNROWS] += nn_update(mode, _st_ist[ad.I_KCODE], _st_kpar, _tw_Q, _tw_s_tot,\n",
     "    if _tw_par[11] > 0.0:\n"
     "        _tw_ist[T_NNROWS] += _nn_lazy(mode, _st_ist[ad.I_KCODE], _st_kpar, _tw_Q, "
     "_tw_s_tot, _tw_side, one_sided, _tw_active, _tw_dirty, _tw_nn_idx, _tw_nn_d, _tw_tmp, "
     "_tw_par[11] > 1.0)\n"
     "    else:\n"
     "        _tw_ist[T_NNROWS] += nn_update(mode, _st_ist[ad.I_KCODE], _st_kpar, _tw_Q, "
     "_tw_s_tot,\n"),
)
_LAZY_DOC = """\
Sec. 4.2.1: "for each twin vector TV_i, we memorize index k of its best merging neighbor
[...] together with distortion d*_ik. After UpdateTV, we calculate distortions between the
newly created twin vectors and the unchanged twin vectors and use that to modify the
memorized indices and distortions." Read literally, a row whose memorised partner was
replaced (merged away, its slot reused) is never rescanned against the unchanged twins:
*literal* keeps the slot as its partner at the new occupant's distortion and compares only
with the new twins; *stale* also keeps the old, smaller distortion (the memorised value is
not refreshed either). Rows of new twins, and rows whose partner left the set, are
recomputed in full in both."""
SEARCH_CASES = (
    ("Letter", 20, "Default", 76.5), ("Letter", 100, "Default", 87.6),
    ("Letter", 100, "Global", 80.4), ("IJCNN", 100, "Default", 97.0),
    ("IJCNN", 100, "Global", 95.9), ("USPS", 100, "Default", 92.1),
    ("USPS", 100, "Global", 91.1), ("Checkerboard", 100, "Default", 98.1),
    ("Checkerboard", 100, "Global", 95.5),
)
# search caps: 0 ours (cached candidates, then every allowed pair); k > 0: the first k
# cached candidates (in increasing cost), then the example is dropped
SEARCH_MODES = (("ours", 0), ("best pair only", 1), ("cached pairs only", -1))


def patched_copy(tmp, patches, what):
    """A copy of the package in ``tmp/fastbudget`` whose ``kernels/tvm.py`` has each
    ``(old, new)`` of ``patches`` applied (``old`` must occur exactly once; ``what`` names
    the patch in the error). Returns ``tmp``."""
    import shutil

    dst = pathlib.Path(tmp) / "fastbudget"
    shutil.copytree(ROOT / "fastbudget", dst,
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    p = dst / "kernels" / "tvm.py"
    text = p.read_text()
    for old, new in patches:
        if text.count(old) != 1:
            raise RuntimeError(f"the {what} patch no longer applies to kernels/tvm.py: "
                               f"{old!r} occurs {text.count(old)} times")
        text = text.replace(old, new)
    p.write_text(text)
    return tmp


def run_patched(patches, what, script, args, extra=()):
    """Run ``script --section <args.section>-inner`` in a fresh process whose ``fastbudget``
    is a copy patched by ``patches`` (:func:`patched_copy`, first on ``PYTHONPATH``), with
    the run's orders, data, sets and ``extra`` arguments; returns the rows it wrote."""
    import json
    import os
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        patched_copy(tmp, patches, what)
        res = pathlib.Path(tmp) / "res.json"
        env = dict(os.environ, PYTHONPATH=tmp)
        cmd = [sys.executable, str(script), "--section", args.section + "-inner",
               "--orders", str(args.orders), "--data", args.data, "--json", str(res),
               *extra]
        if args.sets:
            cmd += ["--sets", args.sets]
        subprocess.run(cmd, env=env, check=True)
        return json.loads(res.read_text())


# H6 modes (par[11]): the library's exact cache, and Sec. 4.2.1 read literally (_LAZY_DOC)
CACHE_MODES = (("exact (ours)", 0), ("literal", 1), ("stale", 2))


def search_section(args):
    rows = run_patched(_SEARCH_PATCH, "search", __file__, args)
    if args.section == "cache":
        return _cache_lines(args, rows)
    L = ["## H1: the depth of the merge search after a rejection", "",
         f"Generated by `python perf/table3_gaps.py --section search --orders {args.orders}` "
         f"({stamp()}; {time.perf_counter() - T0:.0f} s, shared 2-core machine, load "
         f"{_load()}).", "",
         "*Hypothesis.* Sec. 4.2.4 tries \"the next best merging candidates\" after a "
         "rejected pair and otherwise drops the example; ours tries every twin's cached best "
         "pair and then every other allowed pair. If the paper's search stops early, its "
         "TVM drops the examples whose only acceptable merges are poor ones (far, or across "
         "the boundary in Global), and ours makes those merges.", "",
         "*Experiment.* A throw-away copy of the package whose UpdateTV counts, per run, "
         "the merges across the boundary (twins with f of opposite signs; only Global can "
         "make them), the merges found on a later cached candidate than the first, and "
         "those found only by the exhaustive fallback; and which can cap the search: *best "
         "pair only* (the cheapest allowed pair, else drop), *cached pairs only* (each "
         "twin's best partner in increasing cost, the O(B) bookkeeping of Sec. 4.2.1, then "
         "drop). Same orders as above (1000 + o); mean ± sd over "
         f"{args.orders} orders; counts are means per run, except *by the fallback*: the "
         "total over the runs.", "",
         "| data set | B | variant | paper | search | accuracy | merges | across the "
         "boundary | on a later candidate | by the fallback (total) | dropped (rejected) "
         "| Beneficial |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {r['name']} | {r['B']} | {r['variant']} | {r['paper']} | {r['mode']} | "
                 f"{_ms(r['acc'])} | {np.mean(r['merges']):.0f} | {np.mean(r['cross']):.0f} | "
                 f"{np.mean(r['later']):.0f} | {sum(r['fallback'])} | "
                 f"{np.mean(r['dropped']):.0f} | {np.mean(r['accepted']):.0f} |")
    L += ["", "*Verdict.* See the summary at the end of this file."]
    write_section(args.out, "search", L)


def _cache_lines(args, rows):
    L = ["## H6: the nearest-merge-neighbour bookkeeping read literally", "",
         f"Generated by `python perf/table3_gaps.py --section cache --orders {args.orders}` "
         f"({stamp()}; {time.perf_counter() - T0:.0f} s, shared 2-core machine, load "
         f"{_load()}).", "",
         "*Hypothesis.* The paper's merge order differs from ours because its bookkeeping "
         "of each twin's best merging neighbour is not exact. " + " ".join(
             _LAZY_DOC.split()) + " Ours keeps the exact cheapest pair at every step; if the "
         "paper's implementation followed its text, it merged other pairs, most of all in "
         "Global, where a new twin of weight 1 is the cheapest partner of many rows.", "",
         "*Experiment.* The same patched copy as H1, with the cache refreshed in one of the "
         f"three ways; orders 1000-{999 + args.orders}; counts are means per run.", "",
         "| data set | B | variant | paper | bookkeeping | accuracy | merges | across the "
         "boundary | on a later candidate | dropped (rejected) | Beneficial |",
         "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {r['name']} | {r['B']} | {r['variant']} | {r['paper']} | {r['mode']} | "
                 f"{_ms(r['acc'])} | {np.mean(r['merges']):.0f} | {np.mean(r['cross']):.0f} | "
                 f"{np.mean(r['later']):.0f} | {np.mean(r['dropped']):.0f} | "
                 f"{np.mean(r['accepted']):.0f} |")
    L += ["", "*Verdict.* See the summary at the end of this file."]
    write_section(args.out, "cache", L)


def search_inner(args):
    import json

    import fastbudget
    from fastbudget.kernels import tvm as ktvm

    assert ktvm.N_TIST == 14, "run through --section search (the patched copy)"
    print("patched copy:", fastbudget.__file__, flush=True)

    cache_runs = args.section == "cache-inner"
    modes = CACHE_MODES if cache_runs else SEARCH_MODES

    def capped(cap):
        class Capped(TVMClassifier):
            def _allocate(self, X):
                super()._allocate(X)
                if cache_runs:
                    self.twins_.par[11] = float(cap)
                else:
                    self.twins_.par[10] = (float(self.budget) if cap < 0 else float(cap))
        return Capped

    want = None if args.sets is None else set(args.sets.split(","))
    cache = {}
    rows = []
    for name, B, variant, paper in SEARCH_CASES:
        if want is not None and name not in want:
            continue
        if name not in cache:
            cache[name] = load(name, args.data)
        Xa, ya, Xb, yb = cache[name]
        gamma = gamma_of(name, Xa.shape[1])
        for label, cap in modes:
            r = {k: [] for k in ("acc", "merges", "cross", "later", "fallback", "dropped",
                                 "accepted")}
            for o in range(args.orders):
                perm = np.random.default_rng(1000 + o).permutation(len(ya))
                clf = capped(cap)(budget=B, C=100.0, kernel="rbf", gamma=gamma,
                                  **VARIANTS[variant])
                for i in range(0, len(perm), 10_000):
                    idx = perm[i:i + 10_000]
                    clf.partial_fit(Xa[idx], ya[idx], classes=np.array([-1, 1]))
                ist = clf.twins_.ist
                r["acc"].append(100.0 * clf.score(Xb, yb))
                r["merges"].append(int(ist[ktvm.T_MERGES]))
                r["cross"].append(int(ist[11]))
                r["fallback"].append(int(ist[12]))
                r["later"].append(int(ist[13]))
                r["dropped"].append(int(ist[ktvm.T_REJECTED]))
                r["accepted"].append(int(ist[ktvm.T_ACCEPTED]))
            rows.append(dict(name=name, B=B, variant=variant, paper=paper, mode=label, **r))
            print(f"{name:12s} B={B:3d} {variant:8s} {label:18s} acc {_ms(r['acc'])} merges "
                  f"{np.mean(r['merges']):.0f} cross {np.mean(r['cross']):.0f} later "
                  f"{np.mean(r['later']):.0f} fallback {np.mean(r['fallback']):.0f} dropped "
                  f"{np.mean(r['dropped']):.0f}", flush=True)
    pathlib.Path(args.json).write_text(json.dumps(rows))


# -- H2 and H3 (Letter, B = 20): stream orders and input scaling; offline placement ------
def _tvm_orders(Xa, ya, Xb, yb, B, gamma, orders, **kw):
    acc = []
    for o in orders:
        perm = np.random.default_rng(1000 + o).permutation(len(ya))
        clf = TVMClassifier(budget=B, C=100.0, kernel="rbf", gamma=gamma, **kw)
        for i in range(0, len(perm), 10_000):
            idx = perm[i:i + 10_000]
            clf.partial_fit(Xa[idx], ya[idx], classes=np.array([-1, 1]))
        acc.append(100.0 * clf.score(Xb, yb))
    return np.array(acc)


def _kmeans(X, k, seed):
    from sklearn.cluster import KMeans

    k = min(k, len(X))
    return KMeans(n_clusters=k, n_init=1, random_state=seed).fit(X).cluster_centers_


def placement_section(args):
    """Letter: TVM at B = 20 over more orders and on LIBSVM's [-1, 1] scaling; pivots an
    offline clustering would give (an upper reference for placement)."""
    from itertools import combinations

    from sklearn.svm import SVC

    Xa, ya, Xb, yb = load("Letter", args.data)
    Xr, _, Xrb, _ = load_paper_dataset("letter", args.data)
    lo, hi = Xr.min(0), Xr.max(0)
    span = np.where(hi > lo, hi - lo, 1.0)
    Xs, Xsb = 2 * (Xr - lo) / span - 1, 2 * (Xrb - lo) / span - 1
    gamma = 1.0 / Xa.shape[1]
    n = args.orders
    print(f"Letter B = 20, {n} orders ...", flush=True)
    std = _tvm_orders(Xa, ya, Xb, yb, 20, gamma, range(n))
    scl = _tvm_orders(Xs, ya, Xsb, yb, 20, gamma, range(n))
    subs = [np.mean(c) for c in combinations(std, 5)] if n >= 5 else [std.mean()]
    print(f"standardised {_ms(std)}; [-1, 1] {_ms(scl)}; best 5-order mean "
          f"{max(subs):.1f}", flush=True)
    # the exact SVM on the whole training set: its margin is where TVM means to put its twins
    t = time.process_time()
    svm = SVC(C=100.0, kernel="rbf", gamma=gamma, cache_size=500).fit(Xa, ya)
    f = svm.decision_function(Xa)
    svm_acc = 100.0 * svm.score(Xb, yb)
    near = np.abs(f) <= 1.0
    print(f"exact SVM {svm_acc:.1f} % ({svm.n_support_.sum()} SVs, "
          f"{100 * near.mean():.0f} % of the examples within its margin; "
          f"{time.process_time() - t:.0f} s CPU)", flush=True)
    N = len(ya)
    seeds = range(3)
    rows = []
    for B in (20, 50, 100):
        res = {}
        for key, pool, split in (("all examples, k-means per class", np.ones(N, bool), True),
                                 ("SVM margin examples, k-means per class", near, True),
                                 ("SVM margin examples, k-means of both classes", near, False)):
            qd, mg = [], []
            for s in seeds:
                if split:
                    Q = np.vstack([_kmeans(Xa[pool & (ya > 0)], B // 2, s),
                                   _kmeans(Xa[pool & (ya < 0)], B - B // 2, s)])
                else:
                    Q = _kmeans(Xa[pool], B, s)
                a = nearest_pivot(Xa, Q)
                op = np.bincount(a[ya > 0], minlength=len(Q)).astype(float)
                on = np.bincount(a[ya < 0], minlength=len(Q)).astype(float)
                qd.append(weighted_svm(Q, op, on, 100.0 * len(Q) / N, gamma, Xb, yb)[0])
                mp = np.bincount(a[near & (ya > 0)], minlength=len(Q)).astype(float)
                mn = np.bincount(a[near & (ya < 0)], minlength=len(Q)).astype(float)
                mg.append(weighted_svm(Q, mp, mn, 100.0 * len(Q) / near.sum(), gamma,
                                       Xb, yb)[0])
            res[key] = (qd, mg)
            print(f"B = {B}: {key}: Q(D) {_ms(qd)}, margin counts {_ms(mg)}", flush=True)
        rows.append((B, res))
    # an optimistic reference at B = 20: per-class k-means with every split of the budget
    # between the classes, 6 seeds, C at 1, 10 and 100 times what control of C gives;
    # the best *test* accuracy of these 90 placements (selected on the test set)
    best = []
    for bp in (6, 8, 10, 12, 14):
        for s in range(6):
            Q = np.vstack([_kmeans(Xa[ya > 0], bp, s), _kmeans(Xa[ya < 0], 20 - bp, s)])
            a = nearest_pivot(Xa, Q)
            op = np.bincount(a[ya > 0], minlength=20).astype(float)
            on = np.bincount(a[ya < 0], minlength=20).astype(float)
            for cm in (1, 10, 100):
                best.append((weighted_svm(Q, op, on, cm * 100.0 * 20 / N, gamma, Xb, yb)[0],
                             bp, s, cm))
    best.sort()
    print(f"B = 20, 90 placements: median {np.median([b[0] for b in best]):.1f}, best "
          f"{best[-1]}", flush=True)
    paper = {20: 76.5, 50: 82.5, 100: 87.6}
    L = ["## H2 and H3: Letter at B = 20 (stream orders, input scaling, offline placement)",
         "",
         f"Generated by `python perf/table3_gaps.py --section placement --orders {n}` "
         f"({stamp()}; {time.perf_counter() - T0:.0f} s, shared 2-core machine, load "
         f"{_load()}).", "",
         "*Hypotheses.* H2: the paper's 76.5 is an order-to-order draw within our spread, or "
         "comes from LIBSVM's [-1, 1] scaling of Letter (its `letter.scale`) instead of "
         "standardised attributes, at the same gamma = 1/16. H3: twins placed where an "
         "offline clustering puts them (near the exact SVM's boundary) reach the paper's "
         "figure, i.e. the loss is TVM's online placement and better placement exists.", "",
         f"*Experiment.* TVM (defaults, B = 20) over orders 1000-{999 + n} on both scalings. "
         "Then B pivots from k-means (3 seeds): of all training examples per class (B/2 "
         "each), of the examples within the margin of the exact SVM on all 16,000 "
         "(C = 100, gamma = 1/16) per class, or of those examples with both classes "
         "together; each pivot's twin weights are the class counts of its nearest examples "
         "(all examples: the offline TVM of Sec. 3 at C = 100 B / N; or only the margin "
         "examples, at C = 100 B / their number), and the exact weighted SVM is solved on "
         "them.", "",
         f"- TVM B = 20, standardised (ours): {_ms(std)} (min {std.min():.1f}, max "
         f"{std.max():.1f}); the best mean of 5 of these {n} orders (all "
         f"{len(subs)} subsets): {max(subs):.1f}; paper 76.5.",
         f"- TVM B = 20, [-1, 1] scaling (LIBSVM's), gamma = 1/16: {_ms(scl)} (min "
         f"{scl.min():.1f}, max {scl.max():.1f}).",
         f"- Exact SVM on all 16,000: {svm_acc:.1f} % with {svm.n_support_.sum()} SVs; "
         f"{100 * near.mean():.0f} % of the training examples lie within its margin.", "",
         "| B | paper TVM | pivots | weights: all examples (Q(D)) | weights: margin "
         "examples |", "|---|---|---|---|---|"]
    for B, res in rows:
        for key, (qd, mg) in res.items():
            L.append(f"| {B} | {paper[B]} | {key} | {_ms(qd)} | {_ms(mg)} |")
    b0 = best[-1]
    L += ["", f"Optimistic reference at B = 20 (selected on the test set): per-class k-means "
          "with B+ = 6, 8, 10, 12 or 14 positive pivots, 6 seeds, C at 1, 10 or 100 times "
          f"the controlled C (90 placements, Q(D) weights): median "
          f"{np.median([b[0] for b in best]):.1f}, best {b0[0]:.1f} (B+ = {b0[1]}, seed "
          f"{b0[2]}, {b0[3]} x C).", "",
          "*Verdict.* See the summary at the end of this file."]
    write_section(args.out, "placement", L)


# -- H4: Global along the stream ---------------------------------------------------------
CURVE_CASES = (("IJCNN", 95.9), ("USPS", 91.1), ("Letter", 80.4), ("Checkerboard", 95.5))
CURVE_DEFAULT = {"IJCNN": 97.0, "USPS": 92.1, "Letter": 87.6, "Checkerboard": 98.1}


def curve_section(args):
    """Default and Global (B = 100) scored along the stream: whether Global falls behind
    from the start or collapses at some point, and whether it passes the paper's figure."""
    want = None if args.sets is None else set(args.sets.split(","))
    rows = []
    for name, paper in CURVE_CASES:
        if want is not None and name not in want:
            continue
        Xa, ya, Xb, yb = load(name, args.data)
        rng = np.random.default_rng(0)
        sub = rng.choice(len(yb), min(len(yb), 10_000), replace=False)
        gamma = gamma_of(name, Xa.shape[1])
        N = len(ya)
        marks = [m for m in (500, 1000, 2000, 4000, 8000, 16000, 32000, 64000) if m < N] + [N]
        for variant in ("Default", "Global"):
            acc = np.zeros((args.orders, len(marks)))
            pos_share = np.zeros((args.orders, len(marks)))
            for o in range(args.orders):
                perm = np.random.default_rng(1000 + o).permutation(N)
                clf = TVMClassifier(budget=100, C=100.0, kernel="rbf", gamma=gamma,
                                    **VARIANTS[variant])
                start = 0
                for k, m in enumerate(marks):
                    for i in range(start, m, 10_000):
                        idx = perm[i:min(i + 10_000, m)]
                        clf.partial_fit(Xa[idx], ya[idx], classes=np.array([-1, 1]))
                    start = m
                    Xt, yt = (Xb, yb) if m == N else (Xb[sub], yb[sub])
                    acc[o, k] = 100.0 * clf.score(Xt, yt)
                    W = np.asarray(clf.twin_weights_, dtype=float)
                    sp, sn = W[:, 0], W[:, 1]
                    pos_share[o, k] = sp[sp > sn].sum() / max(sp.sum(), 1e-12)
            rows.append((name, variant, paper if variant == "Global" else CURVE_DEFAULT[name],
                         marks, acc, pos_share))
            print(f"{name} {variant}: " + " ".join(
                f"{m}:{a:.1f}" for m, a in zip(marks, acc.mean(0))), flush=True)
    L = ["## H4: Default and Global along the stream", "",
         f"Generated by `python perf/table3_gaps.py --section curve --orders {args.orders}` "
         f"({stamp()}; {time.perf_counter() - T0:.0f} s, shared 2-core machine, load "
         f"{_load()}).", "",
         "*Hypothesis.* Global's loss is a late collapse (the mixed twins build up), so a "
         "shorter or earlier-stopped run, as the paper's IDSVM runs were, would score the "
         "paper's Global figure; or it falls behind from the start (then stream length is "
         "not the cause).", "",
         "*Experiment.* B = 100, the paper's defaults with one-sided (Default) or global "
         "merging, scored after m examples (on 10,000 test rows drawn once, the whole test "
         f"set at the end), mean over {args.orders} orders; in brackets the share of the "
         "twins' positive weight held by positive-majority twins.", "",
         "| data set | variant | paper (end) | " + " | ".join(
             f"m = {m:,}" for m in (500, 1000, 2000, 4000, 8000, 16000, 32000, 64000))
         + " | end |",
         "|---|---|---|" + "---|" * 9]
    for name, variant, paper, marks, acc, ps in rows:
        cells = {m: f"{a:.1f} ({100 * p:.0f} %)" for m, a, p in
                 zip(marks, acc.mean(0), ps.mean(0))}
        inner = [cells.get(m, "") for m in (500, 1000, 2000, 4000, 8000, 16000, 32000, 64000)]
        L.append(f"| {name} | {variant} | {paper} | " + " | ".join(inner)
                 + f" | {cells[marks[-1]]} (m = {marks[-1]:,}) |")
    L += ["", "*Verdict.* See the summary at the end of this file."]
    write_section(args.out, "curve", L)


# -- H5: how robust Global's loss is to the other settings --------------------------------
ROBUST_SETTINGS = (("paper's settings", {}), ("eta = 0.05", {"rejection": 0.05}),
                   ("eta = 0.1", {"rejection": 0.1}), ("eta = 0.4", {"rejection": 0.4}),
                   ("no rejection", {"rejection": None}), ("m2 = 3", {"m2": 3.0}),
                   ("feature-space merging", {"merge": "feature"}))


def robust_section(args):
    """Global (B = 100) on IJCNN and USPS under nearby settings: if no setting brings it
    near the paper's figure, the loss is not a parameter of the merge."""
    rows = []
    for name, paper in (("IJCNN", 95.9), ("USPS", 91.1)):
        Xa, ya, Xb, yb = load(name, args.data)
        gamma = gamma_of(name, Xa.shape[1])
        for label, kw in ROBUST_SETTINGS:
            acc, mixed, share = [], [], []
            for o in range(args.orders):
                perm = np.random.default_rng(1000 + o).permutation(len(ya))
                clf = TVMClassifier(budget=100, C=100.0, kernel="rbf", gamma=gamma,
                                    one_sided=False, **kw).fit(Xa[perm], ya[perm])
                W = np.asarray(clf.twin_weights_, dtype=float)
                sp, sn = W[:, 0], W[:, 1]
                acc.append(100.0 * clf.score(Xb, yb))
                mixed.append(int(((sp > 0) & (sn > 0)).sum()))
                share.append(sp[sp > sn].sum() / max(sp.sum(), 1e-12))
            rows.append((name, paper, label, acc, mixed, share))
            print(f"{name} Global {label}: {_ms(acc)} mixed {np.mean(mixed):.0f} pos share "
                  f"{np.mean(share):.2f}", flush=True)
    L = ["## H5: Global under nearby settings (IJCNN, USPS)", "",
         f"Generated by `python perf/table3_gaps.py --section robust --orders {args.orders}` "
         f"({stamp()}; {time.perf_counter() - T0:.0f} s, shared 2-core machine, load "
         f"{_load()}).", "",
         "*Hypothesis.* Our Global falls short because one of the merge's settings sits "
         "where a small change tips it into collapse; then some nearby setting would reach "
         "the paper's figure.", "",
         "*Experiment.* Global merging at B = 100, one setting changed at a time, orders "
         f"1000-{999 + args.orders}; *mixed*: twins with both s+ > 0 and s- > 0 at the end; "
         "*pos. share*: the share of the positive weight held by positive-majority twins.",
         "", "| data set | paper Global | setting | accuracy | mixed twins | pos. share |",
         "|---|---|---|---|---|---|"]
    for name, paper, label, acc, mixed, share in rows:
        L.append(f"| {name} | {paper} | {label} | {_ms(acc)} | {np.mean(mixed):.0f} | "
                 f"{100 * np.mean(share):.0f} % |")
    L += ["", "*Verdict.* See the summary at the end of this file."]
    write_section(args.out, "robust", L)


def _load():
    import os

    return "{:.1f} / {:.1f} / {:.1f}".format(*os.getloadavg())


T0 = time.perf_counter()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--orders", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "docs" / "results"))
    ap.add_argument("--sets", default=None, help="comma-separated subset of the case data sets")
    ap.add_argument("--section", default=None,
                    choices=("search", "search-inner", "cache", "cache-inner", "placement", "curve",
                             "robust"),
                    help="regenerate one hypothesis section only")
    ap.add_argument("--json", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.section == "search":
        return search_section(args)
    if args.section == "cache":
        return search_section(args)
    if args.section in ("search-inner", "cache-inner"):
        return search_inner(args)
    if args.section == "placement":
        return placement_section(args)
    if args.section == "curve":
        return curve_section(args)
    if args.section == "robust":
        return robust_section(args)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    want = None if args.sets is None else set(args.sets.split(","))
    t0 = time.perf_counter()
    cache = {}
    rows = []
    for name, B, variant, paper in CASES:
        if want is not None and name not in want:
            continue
        if name not in cache:
            cache[name] = load(name, args.data)
        Xa, ya, Xb, yb = cache[name]
        rs = [run_case(name, B, variant, Xa, ya, Xb, yb, o) for o in range(args.orders)]
        rows.append((name, B, variant, paper, rs))
        print(f"{name:12s} B={B:3d} {variant:8s} paper {paper}: " + ", ".join(
            f"{k} {_ms([r[k] for r in rs])}"
            for k in ("online", "refit", "oracle", "labels", "margin"))
              + f"  (cpu {np.mean([r['cpu'] for r in rs]):.1f} s/order)", flush=True)
    bal = balance_runs(cache, args.data, args.orders) if want is None else []
    ij = ijcnn_inputs(args.data, args.orders) if want is None else []
    L = ["# TVM Table 3 / Table 5 gaps: offline oracles on TVM's own twins", "",
         f"Generated by `python perf/table3_gaps.py --orders {args.orders}` ({stamp()}; "
         f"{time.perf_counter() - t0:.0f} s on a shared, loaded 2-core machine). RBF kernel, "
         "C = 100 with control of C, m1 = 1, m2 = 2, eta = 0.2, input-space merging; stream "
         "orders 1000 + o as in `fastbudget reproduce tvm-table3` / `tvm-table5`. Each cell: "
         f"mean ± sd over {args.orders} orders.", "",
         "Columns: *online* the TVM; *refit* `SVC` on its final twins, weights and C_eff; "
         "*oracle Q(D)* the offline TVM of Sec. 3 on the same final pivots (every training "
         "example assigned to its nearest pivot, class counts as weights, C = 100 B / N); "
         "*oracle margin* the same with only the examples inside the final model's margin "
         "(|f| <= 1), C = 100 B / their number; "
         "*oracle labels* the online twins' total weights split between the classes as the "
         "examples nearest to each pivot are, at the online C_eff. Positive twins: twins whose "
         "s+ > s- (online) or whose nearest examples are mostly positive (oracle); *pos. mass "
         "in pos. twins*: the share of the online positive weight held by positive-majority "
         "twins.", "",
         "| data set | B | variant | paper | online | refit | oracle Q(D) "
         "| oracle margin (share of "
         "examples) | oracle labels "
         "| positive twins online / oracle | pos. mass in pos. twins | mixed twins | merges |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, B, variant, paper, rs in rows:
        g = lambda k: [r[k] for r in rs]  # noqa: E731
        L.append(f"| {name} | {B} | {variant} | {paper} | {_ms(g('online'))} | {_ms(g('refit'))} "
                 f"| {_ms(g('oracle'))} | {_ms(g('margin'))} "
                 f"({100 * np.mean(g('margin_share')):.0f} %) "
                 f"| {_ms(g('labels'))} | "
                 f"{np.mean(g('pos_twins_online')):.0f} / {np.mean(g('pos_twins_oracle')):.0f} | "
                 f"{100 * np.mean(g('pos_share_in_pos_twins')):.0f} % | "
                 f"{np.mean(g('mixed_online')):.0f} | {np.mean(g('n_merges')):.0f} |")
    if bal:
        base = {(n, v): [r["online"] for r in rs] for n, B, v, p, rs in rows if B == 100}
        L += ["", "## Global merging and class imbalance", "",
              "Global minus Default at B = 100 (same orders), on the sets as given and with one "
              "class subsampled in training and test alike (seed 0): IJCNN balanced to 50 % "
              "positives, Letter cut to IJCNN's 9.7 % positives. *majority* is the test share "
              "of the larger class.", "",
              "| data set | positives | train / test | majority | Default | Global "
              "| Global - Default |", "|---|---|---|---|---|---|---|"]
        for name, *_ in BALANCE:
            d, g = base.get((name, "Default")), base.get((name, "Global"))
            if d is not None and g is not None:
                _, ya0, _, yb0 = cache[name]
                L.append(f"| {name} | as given ({100 * np.mean(ya0 > 0):.1f} %) | "
                         f"{len(ya0):,} / {len(yb0):,} | "
                         f"{100 * max(np.mean(yb0 > 0), np.mean(yb0 < 0)):.1f} | {_ms(d)} | "
                         f"{_ms(g)} | {np.mean(g) - np.mean(d):+.1f} |")
        for name, share, na, nb, maj, r in bal:
            L.append(f"| {name} | {100 * share:.1f} % | {na:,} / {nb:,} | "
                     f"{max(maj, 100 - maj):.1f} "
                     f"| {_ms(r['Default'])} | {_ms(r['Global'])} | "
                     f"{np.mean(r['Global']) - np.mean(r['Default']):+.1f} |")
    if ij:
        L += ["", "## IJCNN: input treatment", "",
              "Default and Global at B = 100, gamma = 1 / (number of attributes), same orders.",
              "", "| inputs | Default | Global | Global - Default |", "|---|---|---|---|"]
        for label, r in ij:
            L.append(f"| {label} | {_ms(r['Default'])} | {_ms(r['Global'])} | "
                     f"{np.mean(r['Global']) - np.mean(r['Default']):+.1f} |")
    path = out / "tvm_table3_gaps.md"
    keep = _sections(path.read_text()) if path.exists() else []
    path.write_text("\n".join(L) + "\n" + "".join("\n" + s + "\n" for s in keep))
    print(f"wrote {out / 'tvm_table3_gaps.md'}")


if __name__ == "__main__":
    main()
