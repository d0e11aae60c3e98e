"""The repair of a failed KT certificate runs outside the operations that need it.

An operation whose KT certificate fails returns ``adiabatic.NEEDS_REPAIR`` with its state
consistent, and the caller finishes it with the separately compiled ``adiabatic.repair``
(``ops.tvm_repair`` for the Twin Vector Machine's stream, which also brings the twins up
to date and resumes the chunk at the next row). These tests drive streams whose
certificate really fails (the repair runs, spied on) and check that the result is the one
of the same stream cut so that the repair falls elsewhere: a state equal bit for bit, and
certified.
"""
import warnings

import numpy as np

from fastbudget import TVMClassifier
from fastbudget import engine as engine_mod
from fastbudget.engine import IncrementalEngine
from fastbudget.kernels import adiabatic as ad

from _engine import ill_conditioned_data


def _spy(monkeypatch, mod, name):
    """Count the calls of ``mod.name`` (made through the module attribute) and their
    statuses."""
    calls = []
    real = getattr(mod, name)

    def spy(*args):
        s = real(*args)
        calls.append(s)
        return s

    monkeypatch.setattr(mod, name, spy)
    return calls


def _tvm_arrays(clf):
    return ([a.copy() for a in clf.engine_state_]
            + [a.copy() for a in clf.twins_])


def test_tvm_repair_mid_chunk_resumes_the_chunk_bit_for_bit(monkeypatch):
    """Gauss, B = 500, stream order 1004: the update of row 453 ends with the KT
    certificate failed (``tests/test_tvm.py::test_gauss_path_that_ended_kt_violated_is_
    repaired``). In one chunk, ``tvm_partial_fit`` returns NEEDS_REPAIR at that row, the
    estimator repairs (``ops.tvm_repair``) and resumes at row 454; cut into chunks that
    end at row 453, the repair comes at the end of a chunk instead. Both end in the same
    state, every array equal bit for bit, and certified."""
    from fastbudget.reproduce import tvm as R
    Xa, ya, _, _ = R.load_set("Gauss", None)
    kp = R.kernel_params("Gauss", Xa.shape[1])
    idx = np.random.default_rng(1004).permutation(len(ya))[:1000]
    X, y = Xa[idx], ya[idx]
    calls = _spy(monkeypatch, engine_mod.ops, "tvm_repair")
    one = TVMClassifier(budget=500, C=100.0, **kp)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one.partial_fit(X, y, classes=[-1, 1])
    assert calls and all(s == ad.OK for s in calls), calls
    n_one = len(calls)
    cut = TVMClassifier(budget=500, C=100.0, **kp)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for lo, hi in ((0, 453), (453, 454), (454, 1000)):
            cut.partial_fit(X[lo:hi], y[lo:hi], classes=[-1, 1])
    assert len(calls) == 2 * n_one
    for a, b in zip(_tvm_arrays(one), _tvm_arrays(cut)):
        assert np.array_equal(a, b, equal_nan=True)
    assert getattr(one, "n_skipped_", 0) == 0
    assert one.kkt_residual() <= 1e-9


def test_engine_add_that_needs_repair_is_repaired_outside(monkeypatch):
    """The engine's single adds on the ill-conditioned family (seed 253, gamma 0.05, a
    certificate that fails): each failed certificate is finished by one call of the
    compiled ``adiabatic.repair`` from Python, which mends it (status OK, certificate
    holds after every add)."""
    X, y = ill_conditioned_data(253)
    calls = _spy(monkeypatch, ad, "repair")
    eng = IncrementalEngine(len(y), X.shape[1], C=1e4, kernel="rbf", gamma=0.05)
    for i in range(len(y)):
        eng.add(X[i], y[i])
        assert eng.kkt_residual() <= ad._kt_tolerance(eng.st)
    assert calls and all(s == ad.OK for s in calls), calls


def test_sv_incremental_step_resumes_after_a_repair_in_either_stage(monkeypatch):
    """SV-incremental's batch step hands NEEDS_REPAIR back (``rueping._batch_step``):
    after the unlearning stage the estimator repairs and calls the step again, after the
    batch's learning it repairs and is done. Forced here on well-conditioned data (the
    step reports NEEDS_REPAIR once, the certificate holds, so the repair returns OK at
    once): the model equals the one learned without it, and the repair ran from Python
    once per forced report."""
    from fastbudget import SVIncrementalClassifier
    from fastbudget.estimators import rueping

    rng = np.random.default_rng(5)
    X = rng.normal(size=(80, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    plain = SVIncrementalClassifier(C=10.0, gamma=0.5, L="auto", capacity=120)
    for lo in range(0, 80, 20):
        plain.partial_fit(X[lo:lo + 20], y[lo:lo + 20], classes=[-1, 1])
    real = rueping.ks.sv_incremental_batch
    for stage in (1, 3):
        forced = []

        def step(st, *args):
            if not forced and st.ist[ad.I_HW] > 0:
                forced.append(stage)
                if stage == 1:          # stopped before anything of the step was done
                    return ad.NEEDS_REPAIR, 1
                s, _ = real(st, *args)  # the whole step done, certificate to finish
                assert s == ad.OK
                return ad.NEEDS_REPAIR, 3
            return real(st, *args)

        with monkeypatch.context() as m:
            m.setattr(rueping.ks, "sv_incremental_batch", step)
            repairs = _spy(m, ad, "repair")
            clf = SVIncrementalClassifier(C=10.0, gamma=0.5, L="auto", capacity=120)
            for lo in range(0, 80, 20):
                clf.partial_fit(X[lo:lo + 20], y[lo:lo + 20], classes=[-1, 1])
        assert forced == [stage] and repairs == [ad.OK]
        assert clf.n_retries_ == 0
        np.testing.assert_array_equal(clf.decision_function(X), plain.decision_function(X))


def test_engine_add_batch_finishes_a_needs_repair_from_python(monkeypatch):
    """``IncrementalEngine.add_batch`` finishes a NEEDS_REPAIR of the compiled batch (at
    its last row, every row learned) with ``adiabatic.repair``: forced once on
    well-conditioned data, the rows keep their slots and the model equals the one learned
    without it."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    w = np.ones(30)
    plain = IncrementalEngine(40, 2, C=10.0, kernel="rbf", gamma=0.5)
    s_plain = plain.add_batch(X, y, w)
    real = ad.add_batch
    forced = []

    def batch(st, *args):
        s, done = real(st, *args)
        if not forced:
            forced.append(1)
            assert s == ad.OK
            return ad.NEEDS_REPAIR, done - 1
        return s, done

    monkeypatch.setattr(ad, "add_batch", batch)
    repairs = _spy(monkeypatch, ad, "repair")
    eng = IncrementalEngine(40, 2, C=10.0, kernel="rbf", gamma=0.5)
    slots = eng.add_batch(X, y, w)
    assert forced == [1] and repairs == [ad.OK]
    np.testing.assert_array_equal(slots, s_plain)
    for a, b in zip(eng.st, plain.st):
        assert np.array_equal(a, b)
