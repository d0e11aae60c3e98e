"""SpanBudgetClassifier's last resort (the engine's): when a chunk fails at row i also on a
rebuilt R, the rows before i are learned again, row i's decision is made by the compiled
stream (``kernels.span.span_learn`` in decision mode) and its resulting set is learned from an empty model
(``engine.relearn_state``); the rows after it go on as usual. Failures are injected by
patching the compiled chunk loop, the way the SV-incremental and engine tests do."""
import numpy as np
import pytest

from fastbudget.datasets import make_drifting_gaussians
from fastbudget.engine import RELEARN_ORDERS, NumericalError
from fastbudget.estimators import span as span_mod
from fastbudget.estimators.span import SpanBudgetClassifier
from fastbudget.kernels import adiabatic as ad
from fastbudget.kernels import span as ks

from _helpers import assert_same_state, model_state
from _engine import ill_conditioned_data

KW = dict(budget=15, C=2.0, gamma=0.5)
_COUNTS = (("A", ks.C_ADDED), ("S", ks.C_SWAP), ("R", ks.C_REJECT), ("P", ks.C_PRUNED))
_CACHE = {}


def _setting(policy):
    """The stream, and for rows 100..399 what the model does with each when learned without
    failures (one row at a time, which is bit-identical to one chunk): 'S' swap, 'R' turned
    away, 'AP' learned while the memory is not full, dropping an example with alpha = 0."""
    if policy not in _CACHE:
        X, y = make_drifting_gaussians(600, noise=0.05, random_state=1)
        clf = SpanBudgetClassifier(policy=policy, **KW)
        clf.partial_fit(X[:100], y[:100], classes=[-1, 1])
        kinds = {}
        for i in range(100, 400):
            before = clf._wk.cnt.copy()
            clf.partial_fit(X[i:i + 1], y[i:i + 1])
            d = clf._wk.cnt - before
            kind = "".join(k for k, j in _COUNTS if d[j])
            if kind:
                kinds.setdefault(kind, []).append(i)
        _CACHE[policy] = X, y, kinds
    return _CACHE[policy]


def _fit(policy, lo, hi):
    """The model of chunks X[:lo] and X[lo:hi]."""
    X, y, _ = _setting(policy)
    clf = SpanBudgetClassifier(policy=policy, **KW)
    clf.partial_fit(X[:lo], y[:lo], classes=[-1, 1])
    clf.partial_fit(X[lo:hi], y[lo:hi])
    return clf


def _fail_at(monkeypatch, X, rows):
    """Make the compiled chunk loop fail (KT violated) at the given stream rows, on every
    attempt: a call whose rows hold one of them learns up to and including it (the state
    really changes), then reports the failure there. Calls in decision mode (the last
    resort's decision for the failing row) are not failed. Returns the list of calls'
    statuses."""
    bad = {X[i].tobytes() for i in rows}
    real = span_mod.ks.span_learn
    calls = []

    def failing(st, wk, Xc, *args):
        # (args: y, w, budget, policy, margin, span_set, ctl, fout)
        if args[-2][ks.K_DECIDE]:
            return real(st, wk, Xc, *args)
        hit = [p for p in range(Xc.shape[0]) if Xc[p].tobytes() in bad]
        if not hit:
            calls.append(ad.OK)
            return real(st, wk, Xc, *args)
        p = hit[0]
        rest = [a[:p + 1] for a in args[:2]]
        real(st, wk, Xc[:p + 1], *rest, *args[2:])
        calls.append(ad.KT_VIOLATED)
        return ad.KT_VIOLATED, p

    monkeypatch.setattr(span_mod.ks, "span_learn", failing)
    return calls


def _count_relearns(monkeypatch, fail=False):
    real = ad.relearn
    calls = []

    def spy(st, order, w, mu):
        calls.append(real(st, order, w, mu))
        return ad.KT_VIOLATED if fail else calls[-1]

    monkeypatch.setattr(ad, "relearn", spy)
    return calls


def _assert_same_model(clf, plain):
    """Decision values to 1e-9 (relative), the same support vectors in the same slots, the
    same stored examples, and the same counters and ages."""
    X, _, _ = _setting(clf.policy)
    f = plain.decision_function(X)
    assert np.abs(clf.decision_function(X) - f).max() <= 1e-9 * max(1.0, np.abs(f).max())
    assert np.array_equal(clf.support_, plain.support_)
    assert np.array_equal(clf.support_vectors_, plain.support_vectors_)
    st, sp = clf.engine_state_, plain.engine_state_
    live = np.flatnonzero(st.status != ad.FREE)
    assert np.array_equal(live, np.flatnonzero(sp.status != ad.FREE))
    assert np.array_equal(st.X[live], sp.X[live]) and np.array_equal(st.y[live], sp.y[live])
    assert np.array_equal(st.wt[live], sp.wt[live])
    assert np.array_equal(clf._wk.age[live], plain._wk.age[live])
    assert np.array_equal(clf._wk.cnt, plain._wk.cnt)
    assert (clf.n_swaps_, clf.n_rejected_, clf.n_updates_) == \
        (plain.n_swaps_, plain.n_rejected_, plain.n_updates_)
    assert clf.kkt_residual() < 1e-9


def _cases(policy):
    """The failing rows of each case, in the chunk X[lo:hi] that starts ("first") and ends
    ("last") with a swap: two swaps apart, two rows in a row, and a rejection (span policy)
    and an arrival learned while the memory is not full ("other-kinds")."""
    _, _, kinds = _setting(policy)
    swaps = kinds["S"]
    lo, hi = swaps[0], swaps[-1] + 1
    inner = [i for i in swaps if lo < i < hi - 1]
    other = [next(i for i in kinds[k] if lo < i < hi - 1) for k in ("R", "AP") if k in kinds]
    updated = sorted(i for v in kinds.values() for i in v if lo < i < hi - 1)
    i = next(i for i in updated if i + 1 in updated)
    return {"first": [lo], "last": [hi - 1], "two": [inner[2], inner[4]],
            "two-adjacent": [i, i + 1], "other-kinds": other}


@pytest.mark.parametrize("case", ["first", "last", "two", "two-adjacent", "other-kinds"])
@pytest.mark.parametrize("policy", ["span", "lru"])
def test_row_that_fails_twice_is_relearned(monkeypatch, policy, case):
    """A row whose update fails on both attempts: its decision (swap, rejection, learning
    with an example dropped) and its resulting set are relearned from an empty model, and
    the chunk goes on. The model, counters and ages are those learned without failures."""
    cases = _cases(policy)
    lo, hi, rows = cases["first"][0], cases["last"][0] + 1, cases[case]
    assert rows, "no such row in this stream"
    plain = _fit(policy, lo, hi)
    relearned = _count_relearns(monkeypatch)
    calls = _fail_at(monkeypatch, _setting(policy)[0], rows)
    clf = _fit(policy, lo, hi)
    assert relearned == [ad.OK] * len(rows)
    # per failing row: first attempt, retry, (replay of the rows before it); then the rest
    assert calls.count(ad.KT_VIOLATED) == 2 * len(rows)
    _assert_same_model(clf, plain)
    if case == "other-kinds":
        _, _, kinds = _setting(policy)
        assert {k for k, v in kinds.items() if set(rows) & set(v)} == \
            ({"R", "AP"} if policy == "span" else {"AP"})


@pytest.mark.parametrize("policy", ["span", "lru"])
@pytest.mark.parametrize("case", ["first", "two"])
def test_row_that_no_relearning_mends_leaves_the_model_unchanged(monkeypatch, policy, case):
    """When every relearning order fails too, NumericalError says so and the model is
    bit-for-bit as before the chunk (also when an earlier row of the chunk was relearned)."""
    cases = _cases(policy)
    lo, hi = cases["first"][0], cases["last"][0] + 1
    X, y, _ = _setting(policy)
    clf = SpanBudgetClassifier(policy=policy, **KW)
    clf.partial_fit(X[:lo], y[:lo], classes=[-1, 1])
    before = model_state(clf)
    rows = cases[case]
    relearned = _count_relearns(monkeypatch, fail=True)
    _fail_at(monkeypatch, X, rows)
    with pytest.raises(NumericalError, match=f"failed at row {rows[0] - lo} of the chunk.*"
                       f"relearned from scratch in {RELEARN_ORDERS} orders.*unchanged"):
        clf.partial_fit(X[lo:hi], y[lo:hi])
    assert len(relearned) == RELEARN_ORDERS
    assert_same_state(model_state(clf), before)
    monkeypatch.undo()
    clf.partial_fit(X[lo:hi], y[lo:hi])
    _assert_same_model(clf, _fit(policy, lo, hi))


def test_second_failure_refused_after_a_first_relearned(monkeypatch):
    """Two failing rows, the first relearned and the second not: NumericalError, and the
    model is as before the chunk, not as after the first row's relearning."""
    cases = _cases("span")
    lo, hi = cases["first"][0], cases["last"][0] + 1
    X, y, _ = _setting("span")
    clf = SpanBudgetClassifier(**KW)
    clf.partial_fit(X[:lo], y[:lo], classes=[-1, 1])
    before = model_state(clf)
    rows = cases["two"]
    real = ad.relearn
    relearned = []

    def first_only(st, order, w, mu):
        relearned.append(real(st, order, w, mu))
        return relearned[-1] if len(relearned) == 1 else ad.KT_VIOLATED

    monkeypatch.setattr(ad, "relearn", first_only)
    _fail_at(monkeypatch, X, rows)
    with pytest.raises(NumericalError, match=f"failed at row {rows[1] - lo} of the chunk"):
        clf.partial_fit(X[lo:hi], y[lo:hi])
    assert len(relearned) == 1 + RELEARN_ORDERS
    assert_same_state(model_state(clf), before)


def test_replay_that_fails_leaves_the_model_unchanged(monkeypatch):
    """The rows before the failing one are learned again on a rebuilt R; when that replay
    fails, NumericalError says so and nothing is relearned."""
    cases = _cases("lru")
    lo, hi = cases["first"][0], cases["last"][0] + 1
    X, y, _ = _setting("lru")
    clf = SpanBudgetClassifier(policy="lru", **KW)
    clf.partial_fit(X[:lo], y[:lo], classes=[-1, 1])
    before = model_state(clf)
    row = cases["two"][0]
    real = span_mod.ks.span_learn
    calls = []

    def failing(st, wk, Xc, *args):
        calls.append(Xc.shape[0])
        real(st, wk, Xc, *args)
        return ad.KT_VIOLATED, row - lo

    monkeypatch.setattr(span_mod.ks, "span_learn", failing)
    relearned = _count_relearns(monkeypatch)
    with pytest.raises(NumericalError, match=f"failed at row {row - lo} of the chunk.*"
                       "learning the rows before it again on a rebuilt R failed too"):
        clf.partial_fit(X[lo:hi], y[lo:hi])
    assert calls == [hi - lo, hi - lo, row - lo] and relearned == []
    assert_same_state(model_state(clf), before)


def test_failed_unlearning_before_the_swap_search_is_relearned_first(monkeypatch):
    """The span policy's swap search runs on the model without the stored example with
    alpha = 0 that makes room, unlearned exactly by the decision (``_span_decide``). When
    that unlearning fails (injected here), the model without it is relearned, and the
    decision made again on that: the same model, counters and ages as without failures."""
    cases = _cases("span")
    lo, hi = cases["first"][0], cases["last"][0] + 1
    _, _, kinds = _setting("span")
    row = kinds["AP"][0]
    plain = _fit("span", lo, hi)
    real = span_mod._span_decide
    decided = []

    def evict_fails(st, wk, x, yc, w, args):
        s, dec = real(st, wk, x, yc, w, args)
        decided.append(int(dec[ks.D_KIND]))
        if len(decided) == 1 and dec[ks.D_EVICT] >= 0:
            dec[ks.D_KIND] = ks.D_EVICT_FAILED
            return ad.KT_VIOLATED, dec
        return s, dec

    monkeypatch.setattr(span_mod, "_span_decide", evict_fails)
    relearned = _count_relearns(monkeypatch)
    _fail_at(monkeypatch, _setting("span")[0], [row])
    clf = _fit("span", lo, hi)
    assert decided == [ks.D_ADD, ks.D_ADD] and relearned == [ad.OK, ad.OK]
    _assert_same_model(clf, plain)


@pytest.mark.parametrize("policy", ["span", "lru"])
@pytest.mark.parametrize("seed", [454, 592])
def test_ill_conditioned_chunk_is_learned_by_relearning(monkeypatch, policy, seed):
    """No injection: on these streams of ``test_engine``'s ill-conditioned family (RBF,
    gamma = 0.05, C = 1e4, duplicates with opposite labels; budget 10) one arrival's path
    does not converge, also on a rebuilt R, and the chunk raised NumericalError. Its
    resulting set is now relearned from an empty model (in the first order) and the chunk
    learned: the model is the exact SVM on its memory (polished scikit-learn solution)."""
    from reference import svm_reference as ref

    X, y = ill_conditioned_data(seed)
    relearned = _count_relearns(monkeypatch)
    clf = SpanBudgetClassifier(budget=10, policy=policy, C=1e4, gamma=0.05, margin=1.0)
    clf.partial_fit(X, y, classes=[-1, 1])
    assert relearned == [ad.OK]
    assert clf.n_updates_ == clf._wk.cnt[ks.C_ADDED] > 0
    st = clf.engine_state_
    assert clf.kkt_residual() <= ad._kt_tolerance(st)
    live = np.flatnonzero(st.status != ad.FREE)
    Xm, ym = st.X[live], st.y[live]
    fit = ref.oracle_fit(Xm, ym, st.wt[live], 1e4, "rbf", 0.05)
    f_o = fit["K"] @ (fit["alpha"] * ym) + fit["b"]
    assert np.abs(clf.decision_function(Xm) - f_o).max() <= 1e-5 * np.abs(f_o).max()
