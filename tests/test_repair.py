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
