"""Experiments behind the reasons of StreamSVM's Table 1 (paper 001), cell by cell.

Regenerates ``docs/results/streamsvm_table1_gaps.md`` (the experiments) and prints the
figures that the *reason* column of ``docs/results/streamsvm_table1.md`` quotes (``REASONS``
in ``fastbudget.reproduce.streamsvm`` holds that column; ``reason(name, column)`` returns one cell's text).

Usage::

    python perf/table1_gaps.py [--data ../shared/data] [--orders 20] [--out docs/results]

For every Table 1 row that our reproduction does not match within 2 points it runs the test
of the most likely cause:

- **grid**: the paper gives neither C nor the preprocessing nor whether a bias is used
  (Sec. 3 treats "the unbiased case"; Algorithm 1 as printed has no bias). Every real data
  set is run over C in {0.01 ... 1000}, with and without the augmented bias feature
  (b0 = 1), on the reproduction's scaling and on unit-norm rows (k(x, x) constant, as
  Sec. 3 assumes), for Algorithm 1 (L = 1) and Algorithm 2 (L = 10), each over ``orders``
  random stream orders (the paper's 20).
- **lookahead**: Algorithm 2's L in {2, 5, 10, 20, 50} (the paper: "a small lookahead (~10)").
- **synthetic**: our generator with its separability set so that the batch linear SVM
  matches the paper's own libSVM cell (96.5 / 66.0 / 93.2 % instead of the stated 85 %),
  and the size of the paper's 200-point test set (binomial sd).
- **synthetic family** (B and C): the free parameters of a two-Gaussian generator that the
  paper does not give (spread of the directions without class information, offset of the
  clusters and its angle to the class direction, StreamSVM's C and bias), 612 settings per
  set at the separability of the paper's libSVM cell, each over ``orders`` stream orders on
  10,000 test points; the probability that the paper's one 200-point test set gives its
  three cells together (Monte Carlo); the nearest settings again on a fresh sample with 100
  orders, and with the separability raised by 1-2 points (the libSVM cell that pins it is
  itself a 200-point draw).
- **waveform task**: which binary task of the three-class Waveform gives the paper's
  libSVM 89.4 %.
- **centred**: rows centred on the training mean and scaled to unit norm, with the paper's
  unbiased algorithm and with the bias feature.
- **mnist size**: Algorithm 1 and 2 against the number of training digits (100 ... 800 of our
  1,000-digit pairs; the paper trains on 11,800-12,665).
- **w3a**: the fraction of test points predicted positive, against the majority rate.

Each StreamSVM figure is the mean (and sd) over ``orders`` random orders of the training
stream, seeds ``[7, k]``. ``main()`` returns the headline figures as a dict.

``fastbudget.reproduce.streamsvm.write_table1`` writes ``streamsvm_table1.md`` (paper, ours,
status and reason per cell) with the reasons of its ``REASONS``, which quote this script's
figures, so that ``fastbudget reproduce streamsvm`` regenerates the page.
"""
import argparse
import math
import os
import pathlib
import time

import numpy as np

from fastbudget.datasets import load_paper_dataset, make_streamsvm_synthetic
from fastbudget.estimators.streamsvm import StreamSVMClassifier
from fastbudget.reproduce._common import stamp
# Table 1 of paper 001 (PAPER: libSVM (batch), Algo-1, Algo-2) and its page writer
from fastbudget.reproduce.streamsvm import COLUMNS, PAPER, REASONS, unit_rows, write_table1  # noqa: F401

ROOT = pathlib.Path(__file__).resolve().parents[1]

CS = (0.01, 0.1, 1.0, 10.0, 100.0, 1000.0)
LS = (2, 5, 10, 20, 50)
SEED = 7


def standardise(Xa, Xb):
    mu = Xa.mean(axis=0)
    sd = Xa.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (Xa - mu) / sd, (Xb - mu) / sd


def orders_acc(Xa, ya, Xb, yb, n_orders, **params):
    """Test accuracy (%) over ``n_orders`` random stream orders."""
    acc = np.empty(n_orders)
    for k in range(n_orders):
        p = np.random.default_rng([SEED, k]).permutation(len(ya))
        clf = StreamSVMClassifier(**params).fit(Xa[p], ya[p])
        acc[k] = 100.0 * clf.score(Xb, yb)
    return acc


def batch_linear(Xa, ya, Xb, yb, C=1.0):
    """libSVM's linear L1-SVM (SVC) where n <= 5,000, else LinearSVC (hinge, intercept)."""
    from sklearn.svm import SVC, LinearSVC

    if len(ya) <= 5000:
        m = SVC(kernel="linear", C=C).fit(Xa, ya)
    else:
        m = LinearSVC(C=C, loss="hinge", dual=True, max_iter=50000, tol=1e-5).fit(Xa, ya)
    return 100.0 * m.score(Xb, yb)


def real_sets(data):
    """The real Table 1 rows as the reproduction loads them, with their scalings."""
    out = {}
    Xa, ya, Xb, yb = load_paper_dataset("waveform", data)
    A, B = standardise(Xa, Xb)
    out["Waveform"] = (ya, yb, {"standardised (repro)": (A, B), "file values": (Xa, Xb),
                                "unit rows": (unit_rows(A), unit_rows(B))})
    for name, key in (("MNIST (0vs1)", "mnist_0v1"), ("MNIST (8vs9)", "mnist_8v9")):
        Xa, ya, Xb, yb = load_paper_dataset(key, data)
        out[name] = (ya, yb, {"pixels / 255 (repro)": (Xa / 255.0, Xb / 255.0),
                              "unit rows": (unit_rows(Xa), unit_rows(Xb))})
    Xa, ya, Xb, yb = load_paper_dataset("ijcnn", data)
    Xa, ya = Xa[:35000], ya[:35000]
    out["IJCNN"] = (ya, yb, {"as shipped (repro)": (Xa, Xb),
                             "unit rows": (unit_rows(Xa), unit_rows(Xb))})
    Xa, ya, Xb, yb = load_paper_dataset("w8a", data)
    out["w3a"] = (ya, yb, {"binary as is (repro)": (Xa, Xb),
                           "unit rows": (unit_rows(Xa), unit_rows(Xb))})
    return out


def grid(ya, yb, scalings, n_orders):
    """{(scaling, bias, C, L): accuracies} over the C / bias / scaling grid, L = 1 and 10."""
    res = {}
    for sname, (A, B) in scalings.items():
        for bias in (True, False):
            for C in CS:
                for L in (1, 10):
                    res[sname, bias, C, L] = orders_acc(A, ya, B, yb, n_orders, C=C, lookahead=L,
                                                        fit_intercept=bias)
    return res


def centred_unit(data, sets, n_orders):
    """Rows centred on the training mean, then unit-norm, with and without the bias feature,
    C = 1: Sec. 3's "normalized inputs" with the unbiased algorithm of Algorithm 1."""
    raw = {}
    Xa, ya, Xb, yb = load_paper_dataset("waveform", data)
    raw["Waveform"] = (Xa, Xb)
    for name, key in (("MNIST (0vs1)", "mnist_0v1"), ("MNIST (8vs9)", "mnist_8v9")):
        Xa, ya, Xb, yb = load_paper_dataset(key, data)
        raw[name] = (Xa / 255.0, Xb / 255.0)
    raw["IJCNN"] = sets["IJCNN"][2]["as shipped (repro)"]
    raw["w3a"] = sets["w3a"][2]["binary as is (repro)"]
    out = {}
    for name, (Xa, Xb) in raw.items():
        ya, yb = sets[name][0], sets[name][1]
        mu = Xa.mean(axis=0)
        A, B = unit_rows(Xa - mu), unit_rows(Xb - mu)
        for bias in (False, True):
            for Lc in (1, 10):
                out[name, bias, Lc] = orders_acc(A, ya, B, yb, n_orders, C=1.0, lookahead=Lc,
                                                 fit_intercept=bias)
    return out


def lookahead_sweep(ya, yb, A, B, n_orders, **params):
    return {L: orders_acc(A, ya, B, yb, n_orders, lookahead=L, **params) for L in LS}


def synthetic(n_orders):
    """Our generator at the stated 85 % and at the separability of the paper's libSVM cell."""
    out = {}
    for tag, dim in (("A", 2), ("B", 3), ("C", 5)):
        name = f"Synthetic {tag}"
        for sep in (0.85, PAPER[name][0] / 100.0):
            X, y = make_streamsvm_synthetic(tag, 22000, separability=sep, random_state=2009 + dim)
            Xa, ya, Xb, yb = X[:20000], y[:20000], X[20000:], y[20000:]
            row = {"batch": batch_linear(Xa, ya, Xb, yb)}
            for bias in (True, False):
                for L in (1, 10):
                    row[bias, L] = orders_acc(Xa, ya, Xb, yb, n_orders, C=1.0, lookahead=L,
                                              fit_intercept=bias)
            out[name, sep] = row
    return out


def synthetic_offset(n_orders):
    """Synthetic B and C at the paper's libSVM separability with both clusters moved by r
    along the class direction (the Bayes boundary then misses the origin by r)."""
    out = {}
    for tag, dim in (("B", 3), ("C", 5)):
        name = f"Synthetic {tag}"
        X, y = make_streamsvm_synthetic(tag, 22000, separability=PAPER[name][0] / 100.0,
                                        random_state=2009 + dim)
        u = np.full(dim, 1.0 / math.sqrt(dim))
        for r in (0.0, 0.5, 1.0, 3.0):
            Z = X + r * u
            Xa, ya, Xb, yb = Z[:20000], y[:20000], Z[20000:], y[20000:]
            row = {"batch": batch_linear(Xa, ya, Xb, yb)}
            for L in (1, 10):
                row[L] = orders_acc(Xa, ya, Xb, yb, n_orders, C=1.0, lookahead=L)
            out[name, r] = row
    return out


#: the generator family of :func:`synthetic_family`: spread of the directions orthogonal to
#: the class direction, offset of both clusters (length, angle to the class direction),
#: StreamSVM's C and bias
FAM_SPREAD = (0.1, 0.3, 1.0, 2.0, 3.0)
FAM_OFFSET = (0.0, 1.0, 2.0, 3.0)
FAM_ANGLE = (0, 45, 90)
FAM_C = (0.001, 0.01, 0.1, 1.0, 10.0)
#: the finer sweep around Synthetic C's nearest coarse setting (offset at 90 degrees)
FAM_FINE_SPREAD = (0.5, 1.0, 1.5, 2.0)
FAM_FINE_OFFSET = (2.0, 2.5, 3.0, 3.5, 4.0)
FAM_FINE_C = (0.0003, 0.001, 0.003)
#: the paper's Perceptron cells (Table 1), the only other hyper-parameter-free column
PAPER_PERCEPTRON = {"Synthetic B": 68.0, "Synthetic C": 77.0}
N_TEST_FAM = 10000
#: how many of the nearest settings are run again on a fresh sample
FAM_CONFIRM = 8
#: separability above the paper's libSVM cell (points; that cell is one 200-point draw)
FAM_SEP_SHIFT = (1.0, 1.5, 2.0)
N_TEST_PAPER = 200


def _family_data(tag, dim, sep, spread, r, angle, seed=2009):
    """Two unit-variance Gaussians at Bayes accuracy ``sep`` (our generator), then the
    directions orthogonal to the class direction u scaled by ``spread`` and both clusters
    moved by ``r`` at ``angle`` degrees from u. The Bayes rule stays linear with accuracy
    ``sep`` (the orthogonal directions carry no class information), so the batch SVM is
    unchanged while StreamSVM, which is not affine invariant, sees a different ball."""
    X, y = make_streamsvm_synthetic(tag, 20000 + N_TEST_FAM, separability=sep,
                                    random_state=seed + dim)
    u = np.full(dim, 1.0 / math.sqrt(dim))
    v = np.zeros(dim)
    v[0] = 1.0
    v -= (v @ u) * u
    v /= np.linalg.norm(v)
    along = np.outer(X @ u, u)
    a = math.radians(angle)
    Z = along + spread * (X - along) + r * (math.cos(a) * u + math.sin(a) * v)
    return Z[:20000], y[:20000], Z[20000:], y[20000:]


def _correct(Xa, ya, Xb, yb, n_orders, **params):
    """Per test point, the share of ``n_orders`` stream orders whose model classifies it
    correctly (its mean is the order-averaged accuracy; any subset's mean is the
    order-averaged accuracy on that subset)."""
    hit = np.zeros(len(yb))
    for k in range(n_orders):
        p = np.random.default_rng([SEED, k]).permutation(len(ya))
        hit += StreamSVMClassifier(**params).fit(Xa[p], ya[p]).predict(Xb) == yb
    return hit / n_orders


def _perceptron_correct(Xa, ya, Xb, yb, n_orders, fit_intercept):
    """Rosenblatt's perceptron, one pass (scikit-learn's ``Perceptron``, eta 1, w0 = 0, final
    weights), per-point share of correct orders as :func:`_correct`."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Perceptron

    hit = np.zeros(len(yb))
    for k in range(n_orders):
        p = np.random.default_rng([SEED, k]).permutation(len(ya))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            m = Perceptron(max_iter=1, tol=None, shuffle=False,
                           fit_intercept=fit_intercept).fit(Xa[p], ya[p])
        hit += m.predict(Xb) == yb
    return hit / n_orders


def _batch_correct(Xa, ya, Xb, yb):
    from sklearn.svm import LinearSVC

    # the l2-SVM (squared hinge) in the primal: converges on the overlapping sets where
    # liblinear's hinge dual does not; its bias is a feature of value 10, so barely
    # regularised, and the Bayes rule of every geometry is the same linear rule
    m = LinearSVC(C=1.0, loss="squared_hinge", dual=False, tol=1e-6,
                  intercept_scaling=10.0).fit(Xa, ya)
    return (m.predict(Xb) == yb).astype(float)


_DRAWS = {}


def _paper_test_sets(cols, paper, n_draw=20000, seed=2009):
    """Monte Carlo over the paper's one 200-point test set shared by every column.

    ``cols`` are per-point correct shares (batch, Algo-1, Algo-2) on the 10,000 test points
    of one setting; ``paper`` the paper's three cells. Draws ``n_draw`` test sets of 200
    points and returns the probability that all three cells fall within 2 points of the
    paper together, each alone, and that Algo-2 exceeds the batch cell by the paper's margin
    or more."""
    key = (len(cols[0]), n_draw, seed)
    if key not in _DRAWS:
        _DRAWS.clear()
        _DRAWS[key] = np.random.default_rng(seed).integers(0, key[0], (n_draw, N_TEST_PAPER))
    idx = _DRAWS[key]
    acc = [100.0 * c[idx].mean(axis=1) for c in cols]
    ok = [np.abs(a - p) <= 2.0 for a, p in zip(acc, paper)]
    gap = acc[2] - acc[0] >= paper[2] - paper[0]
    return {"all": float(np.mean(ok[0] & ok[1] & ok[2])),
            "each": [float(np.mean(o)) for o in ok],
            "algo2_gap": float(np.mean(gap)),
            "sd": [float(a.std()) for a in acc]}


def _family_settings():
    """The coarse sweep, then a finer one around Synthetic C's nearest coarse setting (both
    sets get both, so they are treated alike)."""
    coarse = [(spread, r, angle, C, bias)
              for spread in FAM_SPREAD for r in FAM_OFFSET
              for angle in (FAM_ANGLE if r > 0 else (0,))
              for C in FAM_C for bias in (True, False)]
    fine = [(spread, r, 90, C, bias)
            for spread in FAM_FINE_SPREAD for r in FAM_FINE_OFFSET
            for C in FAM_FINE_C for bias in (True, False)]
    return coarse + [k for k in fine if k not in set(coarse)]


def synthetic_family(n_orders):
    """Synthetic B and C: sweep the free parameters of a two-Gaussian generator that the
    paper does not state, at the separability of its libSVM cell.

    For each geometry (spread of the orthogonal directions, offset and its angle) the batch
    linear SVM, the one-pass perceptron (with and without bias) and, for each C with and
    without the bias feature, Algo-1 and Algo-2 (L = 10) over ``n_orders`` stream orders,
    each on 10,000 test points (its expected accuracy), and the Monte Carlo of the paper's
    200-point test set (:func:`_paper_test_sets`, the same draws for every setting). Returns
    ``{set: {"rows": [...], "best": ..., "repro": ..., "likeliest": ...}}``; every row is
    ``(spread, r, angle, C, bias, batch, algo1, algo2, perc_bias, perc_nobias, mc)``;
    ``best`` is the setting whose three expected cells are nearest the paper's (smallest
    largest distance), ``repro`` the reproduction's (spread 1, no offset, C = 1, b0 = 1),
    ``likeliest`` the setting whose 200-point test sets most often give all three cells
    within 2 points.
    """
    out = {}
    settings = _family_settings()
    for tag, dim in (("B", 3), ("C", 5)):
        name = f"Synthetic {tag}"
        paper = PAPER[name]
        rows, geo = [], {}
        for key in settings:
            spread, r, angle, C, bias = key
            g = (spread, r, angle)
            if g not in geo:
                Xa, ya, Xb, yb = _family_data(tag, dim, paper[0] / 100.0, spread, r, angle)
                geo.clear()
                geo[g] = (Xa, ya, Xb, yb, _batch_correct(Xa, ya, Xb, yb),
                          [100.0 * _perceptron_correct(Xa, ya, Xb, yb, n_orders, fi).mean()
                           for fi in (True, False)])
            Xa, ya, Xb, yb, batch, pc = geo[g]
            a1 = _correct(Xa, ya, Xb, yb, n_orders, C=C, lookahead=1, fit_intercept=bias)
            a2 = _correct(Xa, ya, Xb, yb, n_orders, C=C, lookahead=10, fit_intercept=bias)
            rows.append(key + (100 * batch.mean(), 100 * a1.mean(), 100 * a2.mean(), pc[0],
                               pc[1], _paper_test_sets((batch, a1, a2), paper)))
        best = min(rows, key=lambda w: max(abs(w[5 + i] - paper[i]) for i in range(3)))
        repro = next(w for w in rows if w[:5] == (1.0, 0.0, 0, 1.0, True))
        likeliest = max(rows, key=lambda w: w[10]["all"])
        near = sorted(rows, key=lambda w: max(abs(w[5 + i] - paper[i]) for i in range(3)))
        out[name] = {"rows": rows, "best": (best, best[10]), "repro": (repro, repro[10]),
                     "likeliest": (likeliest, likeliest[10]),
                     "confirm": [(w[:5], _family_confirm(tag, dim, paper, w[:5]))
                                 for w in near[:FAM_CONFIRM]],
                     "separability": [(w[:5], dsep, _family_confirm(tag, dim, paper, w[:5],
                                                                   sep_shift=dsep))
                                      for w in near[:FAM_CONFIRM] for dsep in FAM_SEP_SHIFT]}
    return out


def _family_confirm(tag, dim, paper, key, n_orders=100, sep_shift=0.0):
    """A selected setting again on a fresh sample (another seed of the generator) and
    ``n_orders`` fresh stream orders, against the selection's optimism: batch, and Algo-1 and
    Algo-2 accuracies over the orders (%)."""
    spread, r, angle, C, bias = key
    Xa, ya, Xb, yb = _family_data(tag, dim, (paper[0] + sep_shift) / 100.0, spread, r, angle,
                                  seed=3009)
    out = [100.0 * _batch_correct(Xa, ya, Xb, yb).mean()]
    for Lc in (1, 10):
        acc = np.empty(n_orders)
        for k in range(n_orders):
            p = np.random.default_rng([SEED + 2, k]).permutation(len(ya))
            m = StreamSVMClassifier(C=C, lookahead=Lc, fit_intercept=bias).fit(Xa[p], ya[p])
            acc[k] = 100.0 * m.score(Xb, yb)
        out.append(acc)
    return out


def _fam_key(w):
    spread, r, angle, C, bias = w[:5]
    off = "no offset" if r == 0 else f"offset {r:g} at {angle}°"
    return (f"spread {spread:g}, {off}, C = {C:g}, {'b0 = 1' if bias else 'no bias'}")


def _fam_counts(rows, name):
    """How many settings of the sweep put each of the paper's cells within 2 points, and
    the combinations."""
    p, pp = PAPER[name], PAPER_PERCEPTRON[name]
    near = [[abs(w[5 + i] - p[i]) <= 2.0 for i in range(3)] for w in rows]
    perc = [min(abs(w[8] - pp), abs(w[9] - pp)) <= 2.0 for w in rows]
    return {"settings": len(rows),
            "batch": sum(n[0] for n in near), "algo1": sum(n[1] for n in near),
            "algo2": sum(n[2] for n in near), "algo1 and algo2": sum(n[1] and n[2] for n in near),
            "all three": sum(all(n) for n in near),
            "all three and perceptron": sum(all(n) and q for n, q in zip(near, perc)),
            "perceptron": sum(perc)}


def family_section(fam, n_orders):
    """Markdown of :func:`synthetic_family`."""
    n_set = len(next(iter(fam.values()))["rows"])
    L = ["## Synthetic B and C: the generator's free parameters", "",
         "The paper gives the dimensions (3 and 5), the sizes (20,000 / 200), \"normally "
         "distributed clusters\" and \"about 85 % separability\", nothing else. A two-Gaussian "
         "generator at the separability of the paper's libSVM cell (0.66 / 0.932) still has "
         "parameters that the batch SVM does not see but StreamSVM does (its ball is not "
         "affine invariant): the spread of the directions that carry no class information, "
         "where the clusters sit relative to the origin, and StreamSVM's C and bias. Sweep: "
         f"spread of the orthogonal directions {' / '.join(f'{s:g}' for s in FAM_SPREAD)} "
         "(class direction: unit variance), both clusters moved by "
         f"{' / '.join(f'{r:g}' for r in FAM_OFFSET[1:])} at {' / '.join(str(a) for a in FAM_ANGLE)}"
         "° from the class direction (or not moved), C "
         f"{' / '.join(f'{c:g}' for c in FAM_C)}, with and without the bias feature; then, "
         "around Synthetic C's nearest coarse setting, spread "
         f"{' / '.join(f'{x:g}' for x in FAM_FINE_SPREAD)}, offset "
         f"{' / '.join(f'{x:g}' for x in FAM_FINE_OFFSET)} at 90°, C "
         f"{' / '.join(f'{x:g}' for x in FAM_FINE_C)}, with and without bias (both sets): "
         f"{n_set} settings per set. Every setting: {n_orders} stream orders, scored on "
         f"{N_TEST_FAM:,} test points (the expected accuracy, not a 200-point draw); batch: "
         "the l2-SVM (LinearSVC, squared hinge, primal, bias feature 10); perceptron: "
         "scikit-learn's `Perceptron`, one pass, with and without bias (the paper's "
         "Perceptron column is the only other one without a hyper-parameter; Pegasos' "
         "lambda is not given and LASVM is not in fastbudget).", "",
         "How many settings put the paper's cells within 2 points:", "",
         "| set | settings | libSVM | Algo-1 | Algo-2 | Algo-1 and Algo-2 | all three "
         "| all three and Perceptron | Perceptron (bias or not) |",
         "|---|---|---|---|---|---|---|---|---|"]
    for name, d in fam.items():
        c = _fam_counts(d["rows"], name)
        L.append(f"| {name} | {c['settings']} | {c['batch']} | {c['algo1']} | {c['algo2']} | "
                 f"{c['algo1 and algo2']} | {c['all three']} | {c['all three and perceptron']} "
                 f"| {c['perceptron']} |")
    L += ["", "Ranges over the sweep (expected accuracy, %), against the paper's cells:", "",
          "| set | Algo-1 | Algo-2 | Algo-2 - Algo-1 | Algo-2 - batch | perceptron - batch "
          "| paper: Algo-1 / Algo-2 / Algo-2 - Algo-1 / Algo-2 - libSVM / Perceptron - libSVM |",
          "|---|---|---|---|---|---|---|"]
    for name, d in fam.items():
        rows, p, pp = d["rows"], PAPER[name], PAPER_PERCEPTRON[name]

        def rng(f):
            v = [f(w) for w in rows]
            return f"{min(v):.1f} to {max(v):+.1f}" if min(v) < 0 else f"{min(v):.1f} to {max(v):.1f}"
        L.append(f"| {name} | {rng(lambda w: w[6])} | {rng(lambda w: w[7])} | "
                 f"{rng(lambda w: w[7] - w[6])} | {rng(lambda w: w[7] - w[5])} | "
                 f"{rng(lambda w: max(w[8], w[9]) - w[5])} | {p[1]} / {p[2]} / "
                 f"{p[2] - p[1]:+.1f} / {p[2] - p[0]:+.1f} / {pp - p[0]:+.1f} |")
    L += ["", "The eight settings nearest the paper (largest distance of the three cells), "
          "per set:", "",
          "| set | setting | batch | Algo-1 | Algo-2 | largest distance | perceptron bias / "
          "no bias | paper libSVM / Algo-1 / Algo-2 / Perceptron |",
          "|---|---|---|---|---|---|---|---|"]
    for name, d in fam.items():
        p, pp = PAPER[name], PAPER_PERCEPTRON[name]
        for w in sorted(d["rows"], key=lambda w: max(abs(w[5 + i] - p[i]) for i in range(3)))[:8]:
            L.append(f"| {name} | {_fam_key(w)} | {w[5]:.1f} | {w[6]:.1f} | {w[7]:.1f} | "
                     f"{max(abs(w[5 + i] - p[i]) for i in range(3)):.1f} | {w[8]:.1f} / "
                     f"{w[9]:.1f} | {p[0]} / {p[1]} / {p[2]} / {pp} |")
    lab_name = {"best": "nearest", "likeliest": "likeliest", "repro": "reproduction"}
    L += ["", "The paper scored every column on one 200-point test set. For every setting: "
          "20,000 "
          "test sets of 200 points drawn from the 10,000, each column's order-averaged "
          "accuracy on each; the probability that the paper's libSVM, Algo-1 and Algo-2 cells "
          "all fall within 2 points of what such a test set gives, each alone, and that "
          "Algo-2 beats the batch SVM by the paper's margin or more; and the sd of each cell "
          "over test sets. Shown: the nearest setting, the *likeliest* (the largest probability "
          "of all three within 2 over the sweep) and the reproduction's (spread 1, no offset, "
          "C = 1, b0 = 1).", "",
          "| set | setting | expected batch / Algo-1 / Algo-2 | P(all three within 2) "
          "| P(each within 2) | P(Algo-2 - batch >= paper's) | sd over 200-point test sets |",
          "|---|---|---|---|---|---|---|"]
    for name, d in fam.items():
        p = PAPER[name]
        for lab in ("best", "likeliest", "repro"):
            w, mc = d[lab]
            L.append(f"| {name} | {lab_name[lab]}: "
                     f"{_fam_key(w)} | {w[5]:.1f} / {w[6]:.1f} / {w[7]:.1f} | "
                     f"{_pct(mc['all'])} | {' / '.join(_pct(e) for e in mc['each'])} | "
                     f"{_pct(mc['algo2_gap'])} ({p[2] - p[0]:+.1f}) | "
                     f"{' / '.join(f'{s:.1f}' for s in mc['sd'])} |")
    L += ["", f"The {FAM_CONFIRM} nearest settings again on a fresh sample (generator seed "
          f"3009 + dim, 20,000 / {N_TEST_FAM:,}) and 100 fresh stream orders (seeds [9, k]), "
          "against the optimism of picking the nearest of many settings each measured over "
          "20 orders: mean ± sd over the 100 orders, the 5th-95th percentile of a mean of 20 "
          "of them (2,000 draws) and the share of such means within 2 points of the paper.", "",
          "| set | setting | batch | Algo-1 | Algo-1: 20-order mean, share within 2 | Algo-2 "
          "| Algo-2: 20-order mean, share within 2 | paper libSVM / Algo-1 / Algo-2 |",
          "|---|---|---|---|---|---|---|---|"]
    for name, d in fam.items():
        p = PAPER[name]
        for key, (b, a1, a2) in d["confirm"]:
            m1, m2 = _means20(a1, p[1]), _means20(a2, p[2])
            L.append(f"| {name} | {_fam_key(key)} | {b:.2f} | {_ms(a1)} | "
                     f"{m1[0]:.1f} - {m1[1]:.1f}, {100 * m1[2]:.0f} % | {_ms(a2)} | "
                     f"{m2[0]:.1f} - {m2[1]:.1f}, {100 * m2[2]:.0f} % | "
                     f"{p[0]} / {p[1]} / {p[2]} |")
    L += ["", "The paper's libSVM cell is itself one 200-point draw (sd 3.3 points on B, 1.8 on "
          "C), so the separability it pins is uncertain too. The same "
          f"{FAM_CONFIRM} settings on the fresh sample with the separability raised by "
          f"{' / '.join(f'{x:g}' for x in FAM_SEP_SHIFT)} points (100 orders); *all three "
          "within 2* compares the expected batch, Algo-1 and Algo-2 with the paper's libSVM, "
          "Algo-1 and Algo-2 cells.", "",
          "| set | setting | separability | batch | Algo-1 | Algo-2 | all three within 2 |",
          "|---|---|---|---|---|---|---|"]
    for name, d in fam.items():
        p = PAPER[name]
        for key, dsep, (b, a1, a2) in d["separability"]:
            ok = (abs(b - p[0]) <= 2 and abs(a1.mean() - p[1]) <= 2
                  and abs(a2.mean() - p[2]) <= 2)
            L.append(f"| {name} | {_fam_key(key)} | {(p[0] + dsep) / 100:.3f} | {b:.2f} | "
                     f"{_ms(a1)} | {_ms(a2)} | {'yes' if ok else 'no'} |")
    L += ["", "In short:", ""]
    for name, d in fam.items():
        p, pp = PAPER[name], PAPER_PERCEPTRON[name]
        c = _fam_counts(d["rows"], name)

        def three(b, a1, a2):
            return (abs(b - p[0]) <= 2 and abs(a1.mean() - p[1]) <= 2
                    and abs(a2.mean() - p[2]) <= 2)
        k1 = sum(three(*r) for _, r in d["confirm"])
        k2 = sum(three(*r) for _, _, r in d["separability"])
        perc = [v for w in d["rows"] for v in (w[8], w[9])]
        ok = [w for w in d["rows"] if all(abs(w[5 + i] - p[i]) <= 2 for i in range(3))]
        near_p = [w for w in d["rows"] if min(abs(w[8] - pp), abs(w[9] - pp)) <= 5]
        extra = ""
        if ok:
            extra += (f"; at the {len(ok)} settings with the three cells within 2 it is "
                      f"{min(min(w[8], w[9]) for w in ok):.1f}-"
                      f"{max(max(w[8], w[9]) for w in ok):.1f}")
        if near_p:
            extra += (f"; where it comes within 5 ({len({w[:3] for w in near_p})} geometries) "
                      f"Algo-2 is at most {max(w[7] for w in near_p):.1f} (paper {p[2]})")
        L.append(f"- **{name}**: at the libSVM cell's separability {c['all three']} of "
                 f"{c['settings']} settings put the three cells within 2 together ({n_orders} "
                 f"orders); on the fresh sample (100 orders) {k1} of {len(d['confirm'])} of the "
                 f"nearest do, and {k2} of {len(d['separability'])} with the separability "
                 f"raised. The paper's Perceptron cell ({pp}) is within 2 at "
                 f"{c['perceptron']} settings (ours {min(perc):.1f}-{max(perc):.1f}{extra}).")
    L += [""]
    return L


def _means20(acc, paper, n_draw=20, n_boot=2000):
    """5th and 95th percentile of the mean of ``n_draw`` orders drawn from ``acc``, and the
    share of such means within 2 points of ``paper``."""
    rng = np.random.default_rng(2009)
    means = acc[rng.integers(0, len(acc), (n_boot, n_draw))].mean(axis=1)
    lo, hi = np.percentile(means, [5, 95])
    return float(lo), float(hi), float(np.mean(np.abs(means - paper) <= 2.0))


def _pct(x):
    """A probability as a percentage; below 1/20,000 draws as '< 0.005 %'."""
    return "< 0.005 %" if x == 0 else f"{100 * x:.2f} %"


def order_means(sets, n_big=100, n_draw=20, n_boot=2000):
    """Spread of a mean over ``n_draw`` stream orders: ``n_big`` orders, then the 5th-95th
    percentile of the means of ``n_draw`` orders drawn from them (bootstrap)."""
    cases = (("Waveform", "standardised (repro)", 1, True, 1.0, 74.3),
             ("MNIST (0vs1)", "unit rows", 1, False, 1000.0, 99.34),
             ("MNIST (8vs9)", "unit rows", 1, False, 1000.0, 84.75),
             ("MNIST (8vs9)", "unit rows", 10, False, 100.0, 94.7),
             ("IJCNN", "as shipped (repro)", 1, True, 1.0, 85.32),
             ("IJCNN", "as shipped (repro)", 10, True, 1.0, 87.81))
    out = {}
    rng = np.random.default_rng(2009)
    for name, s, Lc, bias, C, paper in cases:
        ya, yb, scalings = sets[name]
        A, B = scalings[s]
        acc = np.empty(n_big)
        for k in range(n_big):
            p = np.random.default_rng([SEED + 1, k]).permutation(len(ya))
            clf = StreamSVMClassifier(C=C, lookahead=Lc, fit_intercept=bias).fit(A[p], ya[p])
            acc[k] = 100.0 * clf.score(B, yb)
        means = acc[rng.integers(0, n_big, (n_boot, n_draw))].mean(axis=1)
        cfg = f"{s}, {'b0 = 1' if bias else 'no bias'}, C = {C:g}"
        out[name, Lc] = (cfg, paper, acc, np.percentile(means, [5, 95]),
                         float(np.mean(np.abs(means - paper) <= 2.0)))
    return out


def waveform_tasks(data):
    """Batch linear SVM (C = 1, standardised) on each binary task of the first 4,000 / last
    1,000 rows of the Waveform file."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(data) / "waveform" / "waveform-21.tsv.gz", sep="\t")
    X = df.drop(columns="target").to_numpy(np.float64)
    lab = df["target"].to_numpy()
    Xa, la, Xb, lb = X[:4000], lab[:4000], X[4000:], lab[4000:]
    out = {}
    tasks = [(f"{c} vs rest", (c,), None) for c in (0, 1, 2)]
    tasks += [(f"{a} vs {b}", (a,), (b,)) for a, b in ((0, 1), (0, 2), (1, 2))]
    for label, pos, neg in tasks:
        ka = np.ones(len(la), bool) if neg is None else np.isin(la, pos + neg)
        kb = np.ones(len(lb), bool) if neg is None else np.isin(lb, pos + neg)
        A, B = standardise(Xa[ka], Xb[kb])
        ya = np.where(np.isin(la[ka], pos), 1, -1)
        yb = np.where(np.isin(lb[kb], pos), 1, -1)
        out[label] = (batch_linear(A, ya, B, yb), int(ka.sum()), int(kb.sum()), (A, ya, B, yb))
    return out


def mnist_size(data, n_orders):
    """Algo-1 and Algo-2 (unit rows, bias, C = 1) on the first n of each order."""
    out = {}
    for name, key in (("MNIST (0vs1)", "mnist_0v1"), ("MNIST (8vs9)", "mnist_8v9")):
        Xa, ya, Xb, yb = load_paper_dataset(key, data)
        A, B = unit_rows(Xa), unit_rows(Xb)
        for n in (100, 200, 400, 800):
            for L in (1, 10):
                acc = np.empty(n_orders)
                for k in range(n_orders):
                    p = np.random.default_rng([SEED, k]).permutation(len(ya))[:n]
                    clf = StreamSVMClassifier(C=1.0, lookahead=L).fit(A[p], ya[p])
                    acc[k] = 100.0 * clf.score(B, yb)
                out[name, n, L] = acc
    return out


def _ms(a):
    return f"{a.mean():.2f} ± {a.std():.2f}"


def _best(res, col_L, paper):
    """The grid point whose mean is closest to the paper's cell, and the best mean."""
    keys = [k for k in res if k[3] == col_L]
    close = min(keys, key=lambda k: abs(res[k].mean() - paper))
    top = max(keys, key=lambda k: res[k].mean())
    within = [k for k in keys if abs(res[k].mean() - paper) <= 2.0]
    return close, top, within


def _key(k):
    s, bias, C, L = k
    return f"{s}, {'b0 = 1' if bias else 'no bias'}, C = {C:g}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--orders", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "docs" / "results"))
    args = ap.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    c0 = time.process_time()
    n = args.orders
    summary = {}
    L = []
    L += ["# StreamSVM Table 1: the experiments behind each short cell", "",
          f"Generated by `python perf/table1_gaps.py --orders {n}` ({stamp()}); linear "
          f"StreamSVM, each figure the mean ± sd of test accuracy (%) over {n} random stream "
          "orders (the paper averages 20). The cell-by-cell table that quotes these figures is "
          "`streamsvm_table1.md`. Algo-1 is L = 1, Algo-2 L = 10 unless a column says "
          "otherwise. *b0 = 1* is the bias as an augmented constant feature (the "
          "reproduction's default), *no bias* the paper's unbiased Algorithm 1 as printed.", ""]

    # ---------------------------------------------------------------- synthetic
    syn = synthetic(n)
    L += ["## Synthetic A, B, C: separability of the generator", "",
          "The paper says the sets are \"of about 85 % separability\", but its own libSVM cells "
          "are 96.5 / 66.0 / 93.2 %. Our generator (two unit-variance Gaussians, the Bayes "
          "rule linear, C = 1) at the stated 85 % and at the separability equal to the "
          "paper's libSVM cell; 20,000 training / 2,000 test points.", "",
          "| set | separability | batch linear SVM | Algo-1 b0 = 1 | Algo-2 b0 = 1 "
          "| Algo-1 no bias "
          "| Algo-2 no bias | paper libSVM / Algo-1 / Algo-2 | 200-point test set: binomial sd "
          "at the paper's cells |",
          "|---|---|---|---|---|---|---|---|---|"]
    for (name, sep), row in syn.items():
        p = PAPER[name]
        sds = " / ".join(f"{100 * math.sqrt(a / 100 * (1 - a / 100) / 200):.1f}" for a in p)
        L.append(f"| {name} | {sep:.3f} | {row['batch']:.2f} | {_ms(row[True, 1])} | "
                 f"{_ms(row[True, 10])} | {_ms(row[False, 1])} | {_ms(row[False, 10])} | "
                 f"{p[0]} / {p[1]} / {p[2]} | {sds} |")
        summary[f"{name} sep {sep:.3f}"] = {
            "batch": row["batch"], **{f"{'b0' if b else 'nobias'} L{l}": float(row[b, l].mean())
                                      for b in (True, False) for l in (1, 10)}}
    L += [""]

    off = synthetic_offset(max(5, n // 2))
    L += ["Both clusters moved by r along the class direction (b0 = 1, C = 1, "
          f"{max(5, n // 2)} orders), at the paper's libSVM separability:", "",
          "| set | r | batch linear SVM | Algo-1 | Algo-2 | paper libSVM / Algo-1 / Algo-2 |",
          "|---|---|---|---|---|---|"]
    for (name, r), row in off.items():
        p = PAPER[name]
        L.append(f"| {name} | {r:g} | {row['batch']:.2f} | {_ms(row[1])} | {_ms(row[10])} | "
                 f"{p[0]} / {p[1]} / {p[2]} |")
        summary[f"{name} offset {r:g}"] = {"batch": row["batch"], "L1": float(row[1].mean()),
                                           "L10": float(row[10].mean())}
    L += [""]

    fam = synthetic_family(n)
    L += family_section(fam, n)
    for name, d in fam.items():
        for lab in ("best", "likeliest", "repro"):
            w, mc = d[lab]
            summary[f"{name} family {lab}"] = {
                "setting": _fam_key(w), "batch": w[5], "algo1": w[6], "algo2": w[7],
                "perceptron": (float(w[8]), float(w[9])), "p_all_within_2": mc["all"],
                "p_each_within_2": mc["each"], "p_algo2_gap": mc["algo2_gap"]}
        summary[f"{name} family counts"] = _fam_counts(d["rows"], name)
        summary[f"{name} family confirmed"] = [
            {"setting": _fam_key(key), "batch": b, "algo1": float(a1.mean()),
             "algo2": float(a2.mean())} for key, (b, a1, a2) in d["confirm"]]

    # ---------------------------------------------------------------- waveform tasks
    wt = waveform_tasks(args.data)
    L += ["## Waveform: which binary task", "",
          "Batch linear SVM (`SVC(kernel='linear', C=1)`, standardised on the training part) "
          "on each binary task of the UCI file, first 4,000 rows for training and last 1,000 "
          "for testing (pairs keep only their two classes); the paper's libSVM cell is 89.4 %. "
          "Algo-1 / Algo-2 with b0 = 1, C = 1 on unit rows and on standardised rows.", "",
          "| task | train / test | batch linear SVM | Algo-1 std | Algo-2 std | Algo-1 unit "
          "| Algo-2 unit |", "|---|---|---|---|---|---|---|"]
    for label, (acc, na, nb, (A, ya, B, yb)) in wt.items():
        r = [orders_acc(A, ya, B, yb, n, lookahead=l) for l in (1, 10)]
        r += [orders_acc(unit_rows(A), ya, unit_rows(B), yb, n, lookahead=l) for l in (1, 10)]
        L.append(f"| {label} | {na:,} / {nb:,} | {acc:.2f} | " + " | ".join(_ms(a) for a in r)
                 + " |")
        summary[f"Waveform task {label}"] = {"batch": acc,
                                             "algo1 std": float(r[0].mean()),
                                             "algo2 std": float(r[1].mean()),
                                             "algo1 unit": float(r[2].mean()),
                                             "algo2 unit": float(r[3].mean())}
    L += [""]

    # ---------------------------------------------------------------- real-set grids
    L += ["## Real sets: C, bias and scaling", "",
          f"C in {{{', '.join(f'{c:g}' for c in CS)}}}, with and without the bias feature, "
          "on the reproduction's scaling and on unit-norm rows. For each cell: the grid point "
          "closest to the paper, the best grid point, and how many of the 24 grid points are "
          "within 2 points of the paper.", ""]
    sets = real_sets(args.data)
    grids = {}
    for name, (ya, yb, scalings) in sets.items():
        g = grid(ya, yb, scalings, n)
        grids[name] = g
        L += [f"### {name}", "", "| scaling | bias | C | Algo-1 | Algo-2 |",
              "|---|---|---|---|---|"]
        for s in scalings:
            for bias in (True, False):
                for C in CS:
                    L.append(f"| {s} | {'b0 = 1' if bias else 'none'} | {C:g} | "
                             f"{_ms(g[s, bias, C, 1])} | {_ms(g[s, bias, C, 10])} |")
        L += [""]
        for col, Lc, pv in (("Algo-1", 1, PAPER[name][1]), ("Algo-2", 10, PAPER[name][2])):
            close, top, within = _best(g, Lc, pv)
            L.append(f"- **{col}** (paper {pv}): closest {g[close].mean():.2f} ± "
                     f"{g[close].std():.2f} ({_key(close)}); best {g[top].mean():.2f} "
                     f"({_key(top)}); {len(within)} of {len(g) // 2} grid points within 2.")
            summary[f"{name} {col}"] = {"closest": float(g[close].mean()),
                                        "closest_at": _key(close),
                                        "best": float(g[top].mean()), "best_at": _key(top),
                                        "n_within": len(within)}
        L += [""]

    # ---------------------------------------------------------------- centred, unit, no bias
    cu = centred_unit(args.data, sets, n)
    L += ["## Centred, unit-norm rows and the unbiased algorithm", "",
          "Each row minus the training mean, then divided by its norm (Sec. 3's \"normalized "
          "inputs\", so k(x, x) is constant), C = 1; *no bias* is Algorithm 1 as printed (Sec. 3: "
          "\"we consider the unbiased case\"). Waveform starts from the file's values, MNIST "
          "from pixels / 255.", "",
          "| set | Algo-1 no bias | Algo-2 no bias | Algo-1 b0 = 1 | Algo-2 b0 = 1 "
          "| paper Algo-1 / Algo-2 |", "|---|---|---|---|---|---|"]
    for name in ("Waveform", "MNIST (0vs1)", "MNIST (8vs9)", "IJCNN", "w3a"):
        L.append(f"| {name} | {_ms(cu[name, False, 1])} | {_ms(cu[name, False, 10])} | "
                 f"{_ms(cu[name, True, 1])} | {_ms(cu[name, True, 10])} | "
                 f"{PAPER[name][1]} / {PAPER[name][2]} |")
        summary[f"{name} centred unit"] = {f"{'b0' if b else 'nobias'} L{l}":
                                           float(cu[name, b, l].mean())
                                           for b in (False, True) for l in (1, 10)}
    L += [""]

    # ---------------------------------------------------------------- lookahead
    L += ["## Algorithm 2: the lookahead L", "",
          "The paper's Algo-2 used \"a small lookahead (~10)\". Unit rows, b0 = 1, C = 1 (and, "
          "for IJCNN, also as shipped).", "",
          "| set | scaling | " + " | ".join(f"L = {l}" for l in LS) + " | paper Algo-2 |",
          "|---|---|" + "---|" * len(LS) + "---|"]
    for name in ("Waveform", "MNIST (8vs9)", "IJCNN"):
        ya, yb, scalings = sets[name]
        todo = ["unit rows"] + (["as shipped (repro)"] if name == "IJCNN" else [])
        for s in todo:
            A, B = scalings[s]
            sw = lookahead_sweep(ya, yb, A, B, n)
            L.append(f"| {name} | {s} | " + " | ".join(_ms(sw[l]) for l in LS)
                     + f" | {PAPER[name][2]} |")
            summary[f"{name} {s} lookahead"] = {str(l): float(sw[l].mean()) for l in LS}
    L += [""]

    # ---------------------------------------------------------------- IJCNN by order
    ya, yb, scalings = sets["IJCNN"]
    L += ["## IJCNN: the spread over stream orders", "",
          "Per-order accuracies (as shipped, b0 = 1, C = 1), sorted, and the share of test "
          "points predicted positive (test positives: "
          f"{100 * np.mean(yb > 0):.1f} %).", ""]
    A, B = scalings["as shipped (repro)"]
    for Lc in (1, 10):
        accs, pos = [], []
        for k in range(n):
            p = np.random.default_rng([SEED, k]).permutation(len(ya))
            clf = StreamSVMClassifier(C=1.0, lookahead=Lc).fit(A[p], ya[p])
            pr = clf.predict(B)
            accs.append(100 * np.mean(pr == yb))
            pos.append(100 * np.mean(pr > 0))
        o = np.argsort(accs)
        L.append(f"- L = {Lc}: " + ", ".join(f"{accs[i]:.1f} ({pos[i]:.0f} % +)" for i in o)
                 + f"; median {np.median(accs):.2f}, mean {np.mean(accs):.2f}, mean of the best "
                 f"half {np.mean(np.sort(accs)[n // 2:]):.2f}.")
        summary[f"IJCNN orders L{Lc}"] = {"median": float(np.median(accs)),
                                          "mean": float(np.mean(accs)),
                                          "best half": float(np.mean(np.sort(accs)[n // 2:]))}
    L += [""]

    # ---------------------------------------------------------------- mean of 20 orders
    om = order_means(sets)
    L += ["## How much a mean over 20 orders moves", "",
          "The paper's cells are means over 20 random orders, so are ours. The reproduction's "
          "configuration (MNIST: the grid point closest to the paper), 100 orders "
          "(seeds [8, k]); the 5th-95th percentile of the mean of 20 "
          "orders drawn from them (2,000 draws), and the share of such means within 2 points "
          "of the paper.", "",
          "| set | L | configuration | mean of 100 | sd | median | 5th-95th pct of a 20-order mean "
          "| paper | share within 2 |", "|---|---|---|---|---|---|---|---|---|"]
    for (name, Lc), (s, paper, acc, (lo, hi), share) in om.items():
        L.append(f"| {name} | {Lc} | {s} | {acc.mean():.2f} | {acc.std():.2f} | "
                 f"{np.median(acc):.2f} | {lo:.2f} - {hi:.2f} | {paper} | {100 * share:.0f} % |")
        summary[f"{name} L{Lc} order means"] = {"mean": float(acc.mean()), "sd": float(acc.std()),
                                               "p5": float(lo), "p95": float(hi),
                                               "share_within_2": share}
    L += [""]

    # ---------------------------------------------------------------- MNIST size
    ms = mnist_size(args.data, n)
    L += ["## MNIST: number of training digits", "",
          "Unit rows, b0 = 1, C = 1, the first n digits of each random order (test: the same "
          "200 digits).", "", "| pair | L | " + " | ".join(f"n = {m}" for m in (100, 200, 400, 800))
          + " | paper (n = 11,800-12,665) |", "|---|---|---|---|---|---|---|"]
    for name in ("MNIST (0vs1)", "MNIST (8vs9)"):
        for Lc, pv in ((1, PAPER[name][1]), (10, PAPER[name][2])):
            L.append(f"| {name} | {Lc} | " + " | ".join(_ms(ms[name, m, Lc])
                                                      for m in (100, 200, 400, 800)) + f" | {pv} |")
            summary[f"{name} size L{Lc}"] = {str(m): float(ms[name, m, Lc].mean())
                                             for m in (100, 200, 400, 800)}
    L += [""]

    # ---------------------------------------------------------------- w3a
    ya, yb, scalings = sets["w3a"]
    L += ["## w3a stand-in: what the models predict", "",
          f"w8a.t split 11,961 / 2,990; test majority rate {100 * np.mean(yb < 0):.2f} %. "
          "Share of test points predicted positive and accuracy, first order, by C "
          "(binary as is).", "", "| bias | C | L | accuracy | predicted positive |",
          "|---|---|---|---|---|"]
    A, B = scalings["binary as is (repro)"]
    p = np.random.default_rng([SEED, 0]).permutation(len(ya))
    for bias in (True, False):
        for C in CS:
            for Lc in (1, 10):
                clf = StreamSVMClassifier(C=C, lookahead=Lc, fit_intercept=bias).fit(A[p], ya[p])
                pr = clf.predict(B)
                L.append(f"| {'b0 = 1' if bias else 'none'} | {C:g} | {Lc} | "
                         f"{100 * np.mean(pr == yb):.2f} | {100 * np.mean(pr > 0):.2f} % |")
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    L += ["", f"Total {time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} CPU s "
          f"(shared 2-core machine; load average at the end {load[0]:.1f} / {load[1]:.1f} / "
          f"{load[2]:.1f} over 1 / 5 / 15 minutes)."]
    (out / "streamsvm_table1_gaps.md").write_text("\n".join(L) + "\n")
    print(f"wrote {out / 'streamsvm_table1_gaps.md'}")
    return summary


if __name__ == "__main__":
    main()
