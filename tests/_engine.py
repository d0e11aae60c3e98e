"""Helpers shared by the tests of the exact engine: data, the certificates an engine state
must pass after every step, and the comparison with the exact oracle
(``tests/reference/svm_reference.py``)."""
import numpy as np

from fastbudget.kernels import adiabatic as ad
from reference import svm_reference as ref

KT_TOL = 1e-8  # scaled KT residual after every step (issue #2)
EQ_TOL = 1e-12  # |sum alpha y| / max(1, sum alpha)
JR_TOL = 1e-6  # max |J R - I|: the engine's own drift tolerance (alloc_state tol_drift)
AGREE = 1e-6  # decision values vs the exact oracle, relative
KPAR = {"rbf": {}, "linear": {}, "poly": {"degree": 3, "coef0": 1.0}}


def make_data(rng, n, d, noise=0.5):
    X = rng.normal(size=(n, d))
    score = X[:, 0] * (X[:, 1] if d > 1 else 1.0) + 0.5 * X[:, -1]
    y = np.where(score + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    if np.unique(y).size < 2:
        y[0] = -y[0]
    return X, y


def kernel_args(kernel, d):
    kw = dict(KPAR[kernel])
    kw["gamma"] = 1.0 / d
    return kw


def engine_alpha(eng):
    """The SVM's multipliers by slot (the engine may store a scaled problem)."""
    if hasattr(type(eng), "alpha"):
        return np.asarray(eng.alpha, dtype=np.float64)
    return eng.st.alpha.copy()


def engine_view(eng):
    """Live slots and their (X, y, alpha, C * w) copied out of the engine state."""
    st = eng.st
    live = np.flatnonzero(st.status != ad.FREE)
    return (live, st.X[live].copy(), st.y[live].copy(), engine_alpha(eng)[live],
            eng.C * st.wt[live])


def certify(eng, kernel, kw, where=""):
    """Every certificate on the current engine state, from scratch. Returns the report."""
    st = eng.st
    live, X, y, alpha, cb = engine_view(eng)
    assert np.array_equal(st.cb[live], st.fs[ad.F_C] * st.wt[live]), f"bounds != C w {where}"
    if live.size == 0:
        return None
    K = ref.kernel_matrix(X, X, kernel, **kw)
    rep = ref.kt_report(alpha, eng.b, y, K, cb)
    assert rep["kt_scaled"] <= KT_TOL, f"KT residual {rep['kt_scaled']:.3g} {where}"
    assert rep["eq"] <= EQ_TOL, f"sum(alpha y) = {rep['eq']:.3g} {where}"
    assert rep["box"] <= 1e-12 * max(1.0, cb.max()), f"box violation {rep['box']:.3g} {where}"
    jr = eng.jr_residual()
    assert jr <= JR_TOL, f"max|J R - I| = {jr:.3g} {where}"
    # the engine's own (stored) certificate agrees with the one recomputed here
    mu = float(st.fs[ad.F_MU]) if hasattr(ad, "F_MU") else 1.0  # scale of the stored problem
    scale = np.maximum(1.0, np.abs(K) @ alpha + abs(eng.b)).max() * max(1.0, mu)
    assert eng.kkt_residual(refresh=False) <= KT_TOL * scale
    # margin-set bookkeeping is consistent
    nS = int(st.ist[ad.I_NS])
    S = st.S_idx[:nS]
    assert np.all(st.status[S] == ad.MARGIN) and np.count_nonzero(st.status == ad.MARGIN) == nS
    assert np.all(st.spos[S] == np.arange(nS))
    return rep


def assert_state_as_before(eng, before):
    """The engine's state equals ``before`` (a copy of its arrays) wherever it means
    anything: scratch arrays aside, X and K on the live slots, R on the live block."""
    work = ("beta", "v", "gam", "wv", "dcb", "skip", "sparse", "insp")
    for name, a, b in zip(eng.st._fields, before, eng.st):
        if name in ("X", "K"):       # written only in slots that are free again
            live = np.flatnonzero(before[eng.st._fields.index("status")] != ad.FREE)
            sub = np.ix_(live, live) if name == "K" else live
            assert np.array_equal(a[sub], b[sub]), name
        elif name == "R":
            m = int(eng.st.ist[ad.I_NS]) + 1
            assert np.array_equal(a[:m, :m], b[:m, :m]), name
        elif name not in work:
            assert np.array_equal(a, b), name


def assert_matches_oracle(eng, kernel, kw, X_test=None, oracle=None, where=""):
    """Engine model == exact oracle (polished libsvm) on its live examples; returns the
    relative difference of raw libsvm for the report."""
    live, X, y, alpha, cb = engine_view(eng)
    w = cb / eng.C
    orc = oracle or ref.oracle_fit(X, y, w, eng.C, kernel, **kw)
    assert orc["report"]["kt_scaled"] <= 1e-10, f"oracle not a KT point {where}"
    assert orc["report"]["eq"] <= 1e-12
    K = orc["K"]
    Kx = None if X_test is None else ref.kernel_matrix(X_test, X, kernel, **kw)
    rel, b_ok = ref.compare_models(alpha, eng.b, orc["alpha"], orc["b"], y, K, cb, Kx)
    assert rel <= AGREE, f"decision values differ by {rel:.3g} relative {where}"
    assert b_ok, f"bias outside the optimal interval {where}"
    # the engine's decision function (compiled) equals the one recomputed from its alpha
    if X_test is not None:
        f_eng = eng.decision_function(X_test)
        f_ref = Kx @ (alpha * y) + eng.b
        # round-off of a sum is relative to the size of its terms, not of its value
        terms = np.abs(Kx) @ alpha + abs(eng.b)
        assert np.all(np.abs(f_eng - f_ref) <= 1e-13 * np.maximum(1.0, terms))
    # raw libsvm: its dual objective is never better than the exact one
    obj = ref.dual_objective(alpha, y, K)
    obj_orc = ref.dual_objective(orc["alpha"], y, K)
    assert obj <= obj_orc + 1e-10 * max(1.0, abs(obj_orc))
    if orc["svc"] is not None:
        obj_sk = ref.dual_objective(orc["alpha_sk"], y, K)
        assert obj <= obj_sk + 1e-10 * max(1.0, abs(obj_sk)), "libsvm found a better optimum"
        f_sk = K @ (orc["alpha_sk"] * y) + orc["b_sk"]
        f_or = K @ (orc["alpha"] * y) + orc["b"]
        return float(np.max(np.abs(f_sk - f_or)) / max(1.0, np.abs(f_or).max()))
    return 0.0


def learn_stream(eng, X, y, w, order, kernel, kw, every_step=True):
    slots = np.full(len(y), -1)
    for t, i in enumerate(order):
        slots[i] = eng.add(X[i], y[i], w[i])
        if every_step:
            certify(eng, kernel, kw, where=f"after adding #{t} (row {i})")
    return slots


def ill_conditioned_data(seed):
    """A small problem that drives the engine into near-singular updates: duplicated points
    across the two classes, a long run of one class first, a shifted cloud (``seed`` picks
    the sizes and the shift)."""
    rng = np.random.default_rng(seed)
    npre = int(rng.integers(2, 25))
    d = int(rng.integers(1, 4))
    dup = int(rng.integers(0, min(npre, 4)))
    nother = int(rng.integers(max(1, dup), 6))
    first = rng.choice([-1.0, 1.0])
    shift = rng.choice([0.0, 0.7, 2.0])
    Xp = rng.normal(size=(npre, d)) + shift
    Xp[npre - dup:] = Xp[:dup]
    Xo = rng.normal(size=(nother, d)) - shift
    Xo[:dup] = Xp[:dup]
    X = np.vstack([Xp, Xo])
    y = np.concatenate([np.full(npre, first), np.full(nother, -first)])
    return X, y
