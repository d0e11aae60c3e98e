"""predict_proba: the online calibration map (fastbudget.calibration) on every learner."""
import numpy as np
import pytest

from _estimators import ESTIMATORS, IDS, is_binary
from _helpers import stream
from scipy.special import expit

from fastbudget import calibration as cal
from fastbudget import serving
from fastbudget.kernels import calibration as kcal
from fastbudget import TVMClassifier
from fastbudget.base import NotFittedError
from fastbudget.persist import load_model


def _chunks(est, seed=0, n=300, size=30):
    X, y = stream(seed, n=n, n_classes=2 if is_binary(est) else 3)
    classes = np.unique(y)
    for i in range(0, n, size):
        est.partial_fit(X[i:i + size], y[i:i + size], classes=classes)
    return X, y


# ---------------------------------------------------------------------- the map itself
def _noisy(n, seed=0):
    """Decision values and labels whose true P(y = +1 | f) levels off at 0.15 / 0.85, as
    on a board with 15 % of the labels flipped."""
    rng = np.random.default_rng(seed)
    f = rng.normal(0.0, 2.0, n)
    p = 0.15 + 0.7 / (1.0 + np.exp(-3.0 * f))
    return f, np.where(rng.random(n) < p, 1.0, -1.0), p


def test_map_follows_a_probability_that_saturates_below_one():
    f, y, _ = _noisy(50_000)
    m = cal.CalibrationMap(cal.update_stats(None, f, y, np.ones_like(f)))
    grid = np.linspace(-5, 5, 41)
    truth = 0.15 + 0.7 / (1.0 + np.exp(-3.0 * grid))
    assert np.abs(m(grid) - truth).max() < 0.04
    # the plain sigmoid fitted to the same statistics cannot level off at 0.85
    platt = expit(m.A * grid + m.B)
    assert np.abs(platt - truth).max() > 0.08


def test_map_is_strictly_increasing_and_agrees_with_the_sign_of_f():
    f, y, _ = _noisy(5_000, seed=1)
    for stats in (None, cal.update_stats(None, f, y, np.ones_like(f)),
                  cal.update_stats(None, f + 3.0, y, np.ones_like(f))):     # a biased model
        m = cal.CalibrationMap(stats)
        g = np.sort(np.r_[np.linspace(-2000, 2000, 4001), np.linspace(-1, 1, 2001), 0.0, 1e-300])
        p = m(g)
        assert (np.diff(p) > 0).all() or (np.diff(p)[np.diff(g) > 0] > 0).all()
        assert ((p > 0.5) == (g > 0)).all()
        assert ((p >= cal.P_MIN) & (p <= 1 - cal.P_MIN)).all()


def test_the_tails_follow_the_outermost_bins_and_are_not_pulled_towards_one_half():
    """At the far ends the map gives the outermost bins' own rates: thousands of
    examples and no positive map near 0, beyond the last value seen the map is at most
    the lowest bin's rate (shrunk towards the sigmoid by PRIOR_WEIGHT pseudo-examples) and
    at least the highest bin's, and where the far bins' rate stays away from 0 / 1 (noisy
    labels) the map keeps it instead of following the sigmoid towards 0 / 1 (the tails
    were measured in docs/results/probability.md: Platt's sigmoid in them did not help)."""
    rng = np.random.default_rng(11)
    # clean tails: 3,000 examples with f in [-30, -10], none positive; 3,000 in [10, 30],
    # all positive; a noisy middle
    f_mid, y_mid, _ = _noisy(20_000, seed=11)
    f_mid = np.clip(f_mid, -5, 5)
    f = np.r_[rng.uniform(-30, -10, 3000), f_mid, rng.uniform(10, 30, 3000)]
    y = np.r_[-np.ones(3000), y_mid, np.ones(3000)]
    stats = cal.update_stats(None, f, y, np.ones_like(f))
    m = cal.CalibrationMap(stats)
    far = np.array([-1e6, -1e3, -30.0, 30.0, 1e3, 1e6])
    p = m(far)
    assert (p[:3] < 1e-3).all() and (p[3:] > 1.0 - 1e-3).all()
    assert (np.diff(p) >= 0).all()
    # beyond the last value seen: at most the lowest bin's rate shrunk towards the sigmoid
    # (at least the highest bin's), whatever the size of that bin
    for b, end, sign in ((np.flatnonzero(stats[0])[0], -1e6, -1),
                         (np.flatnonzero(stats[0])[-1], 1e6, 1)):
        n, pos, su = stats[:, b]
        shrunk = (pos + cal.PRIOR_WEIGHT * expit(m.A * np.sinh(su / n) + m.B)) / (
            n + cal.PRIOR_WEIGHT)
        assert sign * (m(np.array([end]))[0] - shrunk) >= -2 * cal.TIE_BREAK
    # noisy tails: the true rate levels off at 0.15 / 0.85 out to f = +-40
    f = rng.uniform(-40, 40, 40_000)
    truth = np.where(f > 0, 0.85, 0.15)
    y = np.where(rng.random(f.size) < truth, 1.0, -1.0)
    m = cal.CalibrationMap(cal.update_stats(None, f, y, np.ones_like(f)))
    p = m(np.array([-1e4, -40.0, -20.0, 20.0, 40.0, 1e4]))
    assert np.abs(p - [0.15, 0.15, 0.15, 0.85, 0.85, 0.85]).max() < 0.04
    assert abs(p[0] - p[1]) < 2 * cal.TIE_BREAK and abs(p[-1] - p[-2]) < 2 * cal.TIE_BREAK
    # the sigmoid of the same statistics heads to 0 / 1 out there
    platt = expit(m.A * np.array([-1e4, 1e4]) + m.B)
    assert platt[0] < 0.01 and platt[1] > 0.99


def test_one_example_update_equals_the_chunk_update():
    f, y, _ = _noisy(500, seed=2)
    w = np.random.default_rng(2).random(500)
    f[:5] = [0.0, -0.0, 1e6, -1e6, 3.0]
    one = None
    for i in range(500):
        one = cal.update_one(one, float(f[i]), float(y[i]), float(w[i]))
    np.testing.assert_allclose(one, cal.update_stats(None, f, y, w), rtol=1e-12, atol=1e-12)


def test_compiled_recency_equals_the_python_recurrence_bit_for_bit():
    """The compiled recency loop repeats the Python recurrence exactly: same factors and
    total to the last bit, on unit, random, zero and tiny/huge weights and from an empty
    or a heavy start."""
    rng = np.random.default_rng(11)
    weights = [np.ones(1000), rng.exponential(size=1000),
               np.where(rng.random(500) < 0.3, 0.0, rng.random(500)),
               10.0 ** rng.uniform(-12, 12, size=300), np.zeros(5), np.ones(1)]
    for total in (0.0, 1.0, 3.7e5, 1e-9):
        for w in weights:
            rho, t = cal._recency(total, w)
            rho_py, t_py = cal._recency_python(total, w)
            np.testing.assert_array_equal(rho, rho_py)
            assert t == t_py


def test_recent_examples_weigh_in_proportion_to_their_arrival():
    """Before each example the statistics shrink by 2 W / (2 W + w): with unit weights the
    s-th of t examples weighs about s / t, so the first half of a stream holds a quarter of
    the weight, and the total grows as t / 2 (plus ln(t) / 2); chunks of any size give the same statistics."""
    n = 4000
    f = np.full(n, 0.7)                         # one bin
    y = np.r_[np.ones(n // 2), -np.ones(n // 2)]   # positive first, negative after
    stats = None
    for i in range(0, n, 250):
        stats = cal.update_stats(stats, f[i:i + 250], y[i:i + 250], np.ones(250))
    b = np.flatnonzero(stats[0])
    assert b.size == 1
    assert abs(stats[1, b[0]] / stats[0, b[0]] - 0.25) < 0.002
    # W' = 2 W^2 / (2 W + 1) + 1 = W + 1/2 + 1 / (4 W) + ...: W = t / 2 + ln(t) / 2 + O(1)
    assert abs(stats[0].sum() - n / 2 - 0.5 * np.log(n)) < 0.5
    one = cal.update_stats(None, f, y, np.ones(n))
    np.testing.assert_allclose(one, stats, rtol=1e-12)
    # a weight-w example counts as w unit examples arriving together (to first order), and
    # zero weights leave the statistics as they were
    np.testing.assert_array_equal(cal.update_stats(stats, f[:3], y[:3], np.zeros(3)), stats)
    a = cal.update_one(stats, 0.7, 1.0, 2.0)
    c = cal.update_one(cal.update_one(stats, 0.7, 1.0, 1.0), 0.7, 1.0, 1.0)
    np.testing.assert_allclose(a, c, rtol=1e-6)


def test_recency_follows_a_model_that_grows_more_confident():
    """Decision values whose meaning changes along the stream (a young model's f = 1 is
    right 73 % of the time, the grown model's 95 %): the map, evaluated at the end, is
    closer to the grown model's rate than the pooled rate of the whole stream."""
    rng = np.random.default_rng(8)
    n = 40_000
    f = rng.normal(0.0, 1.5, n)
    slope = np.r_[np.full(n // 2, 1.0), np.full(n // 2, 3.0)]
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-slope * f)), 1.0, -1.0)
    stats = None
    for i in range(0, n, 1000):
        stats = cal.update_stats(stats, f[i:i + 1000], y[i:i + 1000], np.ones(1000))
    m = cal.CalibrationMap(stats)
    grown, pooled = 1.0 / (1.0 + np.exp(-3.0)), 0.5 * (1.0 / (1.0 + np.exp(-1.0))
                                                        + 1.0 / (1.0 + np.exp(-3.0)))
    p1 = m(np.array([1.0]))[0]
    assert abs(p1 - grown) < abs(p1 - pooled)
    assert abs(p1 - (0.25 * 1.0 / (1.0 + np.exp(-1.0)) + 0.75 * grown)) < 0.03


def test_the_statistics_keep_their_size_however_long_the_stream():
    """Constant memory: 3 x N_BINS float64 after 10 or after 100,000 examples, whatever
    their decision values (values beyond the grid count in its end bins)."""
    rng = np.random.default_rng(12)
    short = cal.update_stats(None, rng.normal(size=10), np.ones(10), np.ones(10))
    f = np.r_[rng.normal(0.0, 1e4, 50_000), rng.normal(size=50_000)]
    long = None
    for i in range(0, f.size, 10_000):
        long = cal.update_stats(long, f[i:i + 10_000], np.sign(f[i:i + 10_000]) + 0.5,
                                np.ones(10_000))
    assert short.shape == long.shape == (3, cal.N_BINS) and long.dtype == np.float64
    assert short.nbytes == long.nbytes == 3 * cal.N_BINS * 8
    cal.check_stats(long)


def test_the_recency_replay_of_perf_probability_is_the_librarys_rule():
    """perf/probability.py replays the map with weights (s / t)^K on recorded decision
    values (``--recency-variants``): K = 1 must be ``update_stats`` itself and K = 0 plain
    sums, or the figures docs/results/probability.md gives for them mean nothing."""
    from _helpers import perf_script

    perf = perf_script("probability")
    f, y, _ = _noisy(3_000, seed=13)
    w = np.random.default_rng(13).random(3_000) + 0.2
    lib = None
    for i in range(0, 3_000, 700):               # chunks of any size: the same statistics
        lib = cal.update_stats(lib, f[i:i + 700], y[i:i + 700], w[i:i + 700])
    np.testing.assert_allclose(perf.recency_stats(f, y, w, 1.0), lib, rtol=1e-10, atol=1e-12)
    b, u = cal._bins(f)
    np.testing.assert_allclose(perf.recency_stats(f, y, w, 0.0)[0],
                               np.bincount(b, weights=w, minlength=cal.N_BINS), rtol=1e-12)
    # K = 2: the first half of a unit-weight stream holds about an eighth of the weight
    s2 = perf.recency_stats(np.full(4000, 0.7), np.r_[np.ones(2000), -np.ones(2000)],
                            np.ones(4000), 2.0)
    b = np.flatnonzero(s2[0])
    assert b.size == 1 and abs(s2[1, b[0]] / s2[0, b[0]] - 0.125) < 0.003


def test_pav_equals_scikit_learns_isotonic_regression():
    from sklearn.isotonic import IsotonicRegression

    rng = np.random.default_rng(3)
    for _ in range(20):
        v, w = rng.random(30), rng.random(30) + 0.1
        v[rng.integers(30, size=5)] = v[0]                  # ties
        ref = IsotonicRegression().fit(np.arange(30), v, sample_weight=w).predict(np.arange(30))
        out = np.empty(30)
        kcal.pav(v, w, 30, out)
        np.testing.assert_allclose(out, ref, atol=1e-12)
        np.testing.assert_allclose(serving._pav(v, w), ref, atol=1e-12)


def test_the_compiled_map_equals_a_numpy_reference_and_its_sigmoid_is_the_optimum():
    """``CalibrationMap`` (compiled: ``kernels.calibration.fit_map``) against the map in
    plain NumPy that ``fastbudget.serving`` fits (its pool-adjacent-violators checked
    against scikit-learn's isotonic regression), on empty, one-bin, one-class, noisy,
    biased and weighted statistics; and the certificate of Platt's fit: the gradient of
    the ridged binned log-loss vanishes at ``(A, B)``."""
    from fastbudget.serving import _Calibration
    rng = np.random.default_rng(5)
    f, y, _ = _noisy(5_000, seed=5)
    cases = [None, cal.update_stats(None, np.full(10, 0.3), np.ones(10), np.ones(10)),
             cal.update_stats(None, f, -np.ones_like(f), np.ones_like(f)),
             cal.update_stats(None, f, y, np.ones_like(f)),
             cal.update_stats(None, f + 3.0, y, rng.random(f.size)),
             cal.update_stats(None, 300 * f, y, np.ones_like(f))]
    for stats in cases:
        m = cal.CalibrationMap(stats)
        numpy_map = _Calibration(stats)
        A, B, k_u, k_p = numpy_map.A, numpy_map.B, numpy_map.knots_u, numpy_map.knots_p
        np.testing.assert_allclose([m.A, m.B], [A, B], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(m.knots_u, k_u)
        np.testing.assert_allclose(m.knots_p, k_p, rtol=0, atol=1e-12)
        # the compiled map's values against NumPy's interpolation, at the knots too
        g = np.r_[np.linspace(-2000, 2000, 4001), np.linspace(-2, 2, 4001), 0.0, -0.0,
                  np.sinh(k_u), 1e300, -1e300, 5e-324]
        u = np.arcsinh(g)
        ref = ((1.0 - 2.0 * cal.TIE_BREAK) * np.interp(u, k_u, k_p)
               + cal.TIE_BREAK * (1.0 + u / (1.0 + np.abs(u))))
        ref = np.clip(ref, cal.P_MIN, 1.0 - cal.P_MIN)
        ref = np.where(g > 0.0, np.maximum(ref, 0.5 + 1e-12), np.minimum(ref, 0.5))
        np.testing.assert_allclose(m(g), ref, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(numpy_map(g), ref)
        assert m(g[:8000].reshape(2, -1)).shape == (2, 4000)
        assert np.isnan(m(np.array([np.nan, 1.0, np.nan]))[[0, 2]]).all()
        if stats is not None:
            live = stats[0] > 0
            fb, n, pos = np.sinh(stats[2, live] / stats[0, live]), stats[0, live], stats[1, live]
            r = n * expit(m.A * fb + m.B) - pos
            grad = [np.dot(r, fb) + cal.RIDGE * (m.A - 1.0), r.sum() + cal.RIDGE * m.B]
            assert np.abs(grad).max() < 1e-6 * (1.0 + n.sum())


# ---------------------------------------------------------------------- every learner
@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_predict_proba_before_fit_raises_not_fitted(id_, factory):
    est = factory()
    with pytest.raises(NotFittedError, match="not fitted"):
        est.predict_proba(np.zeros((2, 3)))


@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_probabilities_are_distributions_that_agree_with_predict(id_, factory):
    est = factory()
    X, y = _chunks(est)
    P = est.predict_proba(X)
    assert P.shape == (len(X), len(est.classes_))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert ((P > 0) & (P < 1)).all()
    if is_binary(est):
        np.testing.assert_array_equal(est.classes_[P.argmax(axis=1)], est.predict(X))
        # monotone in the decision value: the same ranking
        f = est.decision_function(X)
        order = np.argsort(f, kind="stable")
        assert (np.diff(P[order, 1]) >= 0).all()
        # all chunks but the first, each weighted by its arrival (see test_recent_...); TVM
        # scores every row in its learning loop, the first chunk's too
        scored = len(X) if getattr(est, "_calibration_per_row", False) else len(X) - 30
        total = cal._recency(0.0, np.ones(scored))[1]
        assert est.calibration_counts_ == pytest.approx(total, rel=1e-12)
        d = est.predict_proba_one(X[0])
        assert list(d) == est.classes_.tolist() and d[est.classes_[1]] == P[0, 1]


@pytest.mark.parametrize("id_,factory", [e for e in ESTIMATORS if is_binary(e[1]())],
                         ids=[i for i, f in ESTIMATORS if is_binary(f())])
def test_calibration_is_fitted_on_scores_taken_before_learning(id_, factory):
    """The statistics are exactly those of the decision values each chunk had under the
    model before it learned the chunk (each row before it learned the row, for a learner
    with ``_calibration_per_row``; a reference loop), weighted by sample_weight."""
    est, ref = factory(), factory()
    X, y = stream(4, n=200)
    w = np.random.default_rng(4).random(200) + 0.5
    if getattr(est, "_unit_weights_only", False):       # (Forgetron refuses other weights)
        w = np.ones(200)
    stats = None
    # a learner that takes the scores in its learning loop (``_calibration_per_row``:
    # TVM, the perceptrons, Forgetron, Pegasos, BSGD, IncrementalSVC) scores each row under
    # the model that has learned the rows before it, those of its chunk too: the reference
    # then scores and learns row by row
    per_row = getattr(est, "_calibration_per_row", False)
    for i in range(0, 200, 40):
        if i and per_row:
            f = np.zeros(40)
            for r in range(40):
                f[r] = ref.decision_function(X[i + r:i + r + 1])[0]
                ref.partial_fit(X[i + r:i + r + 1], y[i + r:i + r + 1],
                                sample_weight=w[i + r:i + r + 1])
        elif i:
            f = ref.decision_function(X[i:i + 40])
        if i:
            stats = cal.update_stats(stats, f, np.where(y[i:i + 40] == 1, 1.0, -1.0),
                                     w[i:i + 40])
        if not (i and per_row):
            ref.partial_fit(X[i:i + 40], y[i:i + 40], classes=[0, 1],
                            sample_weight=w[i:i + 40])
        if not i and per_row:
            # the first chunk too, each row under the model of the rows before it (the
            # first row under the empty model, f = 0), with the gamma of the first chunk
            one = factory().set_params(
                **({"gamma": ref.gamma_} if hasattr(ref, "gamma_") else {}))
            f = np.zeros(40)
            for r in range(40):
                if r:
                    f[r] = one.decision_function(X[r:r + 1])[0]
                one.partial_fit(X[r:r + 1], y[r:r + 1], classes=[0, 1],
                                sample_weight=w[r:r + 1])
            stats = cal.update_stats(None, f, np.where(y[:40] == 1, 1.0, -1.0), w[:40])
        est.partial_fit(X[i:i + 40], y[i:i + 40], classes=[0, 1], sample_weight=w[i:i + 40])
    if per_row and not isinstance(est, TVMClassifier):
        # the perceptrons', Forgetron's, Pegasos' and BSGD's loops (and the engine's kernel
        # row, for IncrementalSVC) sum f(x) vector by vector in storage order, decision_function in its own order (transposed, vectorised, or
        # BLAS): the same values but for the last bit. The weights per bin must be equal
        # (every row in the same bin), the sums of asinh(f) within rounding.
        np.testing.assert_array_equal(est._calibration_stats[:2], stats[:2])
        np.testing.assert_allclose(est._calibration_stats, stats, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(est._calibration_stats, stats)


@pytest.mark.parametrize("id_,factory", ESTIMATORS, ids=IDS)
def test_saved_with_the_model_and_old_files_load(id_, factory, tmp_path):
    est = factory()
    X, _ = _chunks(est)
    est.save(tmp_path / "m.npz")
    loaded = load_model(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    # a file written before calibration existed has no statistics: it loads with empty
    # ones (the sigmoid map), and its memory is the same as a fresh model's
    for holder in (est.estimators_ if hasattr(est, "estimators_") else [est]):
        del holder.__dict__["_calibration_stats"]
    est.save(tmp_path / "old.npz")
    with np.load(tmp_path / "old.npz") as z:
        assert not [k for k in z.files if "calibration" in k]
    old = load_model(tmp_path / "old.npz")
    assert old.memory_bytes() == loaded.memory_bytes()
    # served with NumPy alone, both files give the loaded models' probabilities (the
    # test suite's dummy learner is not one serving scores)
    for path, model in (("m.npz", loaded), ("old.npz", old))[:0 if "dummy" in id_ else 2]:
        np.testing.assert_allclose(serving.load_predictor(tmp_path / path).predict_proba(X),
                                   model.predict_proba(X), rtol=0, atol=1e-12)
    if is_binary(est):
        assert old.calibration_counts_ == 0.0
        np.testing.assert_array_equal(old.predict_proba(X)[:, 1],
                                      cal.CalibrationMap(None)(old.decision_function(X)))
    old.partial_fit(X[:30], np.asarray(_chunks_labels(est))[:30])      # and learns on


def test_plain_sum_statistics_of_an_older_file_load_and_learn_on(tmp_path):
    """A file written before the recency weighting holds plain sums (same shape): it loads,
    predicts with them, and the next chunk is added with the recency factor of their
    total, as a stream of that weight would be."""
    from fastbudget import TVMClassifier

    est = TVMClassifier(budget=10, gamma=0.5)
    X, y = stream(9, n=160)
    est.partial_fit(X[:40], y[:40])
    f = est.decision_function(X[40:120])
    plain = cal.new_stats()                         # what commit aca1386 accumulated
    b, u = cal._bins(f)
    plain[0] = np.bincount(b, minlength=cal.N_BINS)
    plain[1] = np.bincount(b, weights=(y[40:120] == 1).astype(float), minlength=cal.N_BINS)
    plain[2] = np.bincount(b, weights=u, minlength=cal.N_BINS)
    est._calibration_stats = plain
    est.save(tmp_path / "old.npz")
    old = load_model(tmp_path / "old.npz")
    np.testing.assert_array_equal(old._calibration_stats, plain)
    assert old.calibration_counts_ == 80.0
    np.testing.assert_array_equal(old.predict_proba(X)[:, 1],
                                  cal.CalibrationMap(plain)(old.decision_function(X)))
    # (TVMClassifier scores each row before it learns it: ``_calibration_per_row``)
    ref = load_model(tmp_path / "old.npz")
    g = np.zeros(40)
    for r in range(120, 160):
        g[r - 120] = ref.decision_function(X[r:r + 1])[0]
        ref.partial_fit(X[r:r + 1], y[r:r + 1])
    old.partial_fit(X[120:], y[120:])
    y_pm = np.where(y[120:] == 1, 1.0, -1.0)
    np.testing.assert_allclose(old._calibration_stats,
                               cal.update_stats(plain, g, y_pm, np.ones(40)), rtol=1e-12)
    # the plain sums shrank as a total of 80 does before 40 unit examples
    assert old._calibration_stats[0].sum() == pytest.approx(cal._recency(80.0, np.ones(40))[1])


def _chunks_labels(est):
    return stream(0, n=300, n_classes=2 if is_binary(est) else 3)[1]


def test_a_refused_chunk_leaves_the_calibration_as_it_was():
    from fastbudget import TVMClassifier

    est = TVMClassifier(budget=10, gamma=0.5)
    X, y = stream(6, n=120)
    est.partial_fit(X[:60], y[:60])
    est.partial_fit(X[60:90], y[60:90])
    before = est._calibration_stats.copy()
    with pytest.raises(ValueError, match=r"label 7 .*not among the classes"):
        est.partial_fit(X[90:], np.r_[y[90:119], 7])
    with pytest.raises(ValueError, match=r"not among the classes"):
        est.learn_one(X[90], 7)
    np.testing.assert_array_equal(est._calibration_stats, before)

    def boom(*a):
        raise RuntimeError("learner failed")

    est._partial_fit_encoded = boom          # a failure inside the learner
    with pytest.raises(RuntimeError):
        est.partial_fit(X[90:], y[90:])
    del est._partial_fit_encoded
    np.testing.assert_array_equal(est._calibration_stats, before)


def test_learn_one_calibrates_as_partial_fit_row_by_row():
    from fastbudget import IncrementalSVC, TVMClassifier

    for make in (lambda: TVMClassifier(budget=10, gamma=0.5),
                 lambda: IncrementalSVC(gamma=0.5, capacity=200)):
        a, b = make(), make()
        X, y = stream(7, n=80)
        a.partial_fit(X[:10], y[:10])
        b.partial_fit(X[:10], y[:10])
        for i in range(10, 80):
            a.learn_one(X[i], int(y[i]))
            b.partial_fit(X[i:i + 1], y[i:i + 1])
        np.testing.assert_array_equal(a._calibration_stats, b._calibration_stats)
        # TVM scores its first chunk's rows too (in its learning loop)
        scored = 80 if getattr(a, "_calibration_per_row", False) else 70
        assert a.calibration_counts_ == pytest.approx(cal._recency(0.0, np.ones(scored))[1],
                                                      rel=1e-12)


def test_one_vs_rest_normalises_the_learners_probabilities():
    from fastbudget import OneVsRestClassifier, PerceptronClassifier

    est = OneVsRestClassifier(PerceptronClassifier(budget=20, kernel="rbf", gamma=0.5),
                              total_budget=60)
    X, y = _chunks(est)
    P = est.predict_proba(X)
    # one map fitted on the sum of the learners' statistics, for every column
    pooled = cal.CalibrationMap(sum(e._calibration_stats for e in est.estimators_))
    raw = np.column_stack([pooled(e.decision_function(X)) for e in est.estimators_])
    np.testing.assert_allclose(P, raw / raw.sum(axis=1, keepdims=True))
    # so the most probable class is the predicted one (the learners' own maps cross)
    np.testing.assert_array_equal(est.classes_[P.argmax(axis=1)], est.predict(X))
    own = np.column_stack([e._calibration()(e.decision_function(X)) for e in est.estimators_])
    assert (own.argmax(axis=1) != P.argmax(axis=1)).any()
    # (the perceptron scores each row in its learning loop, the first chunk's too)
    total = cal._recency(0.0, np.ones(len(X)))[1]
    assert all(e.calibration_counts_ == pytest.approx(total, rel=1e-12) for e in est.estimators_)
    d = est.predict_proba_one(X[0])
    assert list(d) == est.classes_.tolist()
    assert abs(sum(d.values()) - 1.0) < 1e-12


@pytest.mark.parametrize("id_,factory", [e for e in ESTIMATORS if is_binary(e[1]())],
                         ids=[i for i, f in ESTIMATORS if is_binary(f())])
def test_fit_calibrates_as_the_same_stream_in_chunks(id_, factory):
    """A learner that scores every row in its learning loop (``_calibration_per_row``: TVM,
    the perceptrons, Forgetron, Pegasos, BSGD, IncrementalSVC) fills the calibration statistics in a
    single ``fit`` as ``partial_fit`` over chunks of the same rows does (up to the rounding
    of the recency factors), and its probabilities follow them; a learner that scores a
    chunk before learning it has nothing to score in ``fit`` and keeps the sigmoid."""
    X, y = stream(11, n=400)
    a = factory().fit(X, y)
    if not getattr(a, "_calibration_per_row", False):
        assert a.calibration_counts_ == 0.0
        f = a.decision_function(X)
        np.testing.assert_array_equal(a.predict_proba(X)[:, 1], cal.CalibrationMap(None)(f))
        return
    b = factory().set_params(**({"gamma": a.gamma_} if hasattr(a, "gamma_") else {}))
    for i in range(0, 400, 37):
        b.partial_fit(X[i:i + 37], y[i:i + 37], classes=[0, 1])
    np.testing.assert_allclose(a._calibration_stats, b._calibration_stats, rtol=1e-12,
                               atol=1e-12)
    assert a.calibration_counts_ == pytest.approx(cal._recency(0.0, np.ones(400))[1],
                                                  rel=1e-12)
    f = a.decision_function(X)
    np.testing.assert_allclose(a.predict_proba(X)[:, 1],
                               cal.CalibrationMap(a._calibration_stats)(f), rtol=0, atol=0)
    assert not np.allclose(a.predict_proba(X)[:, 1], cal.CalibrationMap(None)(f))


def _update_stats_numpy(stats, f, y_pm, w):
    """update_stats as it was written in NumPy (a reversed cumprod of the recency factors,
    then bincount with weights): the reference of the compiled chunk sums."""
    out = cal.new_stats() if stats is None else stats.copy()
    rho, _ = cal._recency(float(out[0].sum()), w)
    after = np.cumprod(np.r_[rho[1:], 1.0][::-1])[::-1]
    out *= after[0] * rho[0]
    w = w * after
    b, u = cal._bins(f)
    out[0] += np.bincount(b, weights=w, minlength=cal.N_BINS)
    out[1] += np.bincount(b, weights=w * (np.asarray(y_pm) > 0), minlength=cal.N_BINS)
    out[2] += np.bincount(b, weights=w * u, minlength=cal.N_BINS)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_update_stats_compiled_equals_the_numpy_form_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    n = 5000
    f = rng.normal(scale=[0.5, 3.0, 200.0, 1e4][seed], size=n)
    f[rng.random(n) < 0.05] = 0.0                       # f = 0 counts as negative
    f[:3] = [-1e300, 1e300, -0.0]                       # beyond the grid, and -0
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    w = rng.choice([0.0, 0.5, 1.0, 3.0], size=n)
    stats = None
    for lo in range(0, n, 1700):                        # chunks after a first: a decayed start
        sl = slice(lo, lo + 1700)
        ref = _update_stats_numpy(stats, f[sl], y[sl], w[sl])
        stats = cal.update_stats(stats, f[sl], y[sl].astype(int), w[sl])
        np.testing.assert_array_equal(stats, ref)
    assert stats[0].sum() > 0 and (stats[1] <= stats[0]).all()
