"""Long soaks (the two marked slow; run with ``python -m pytest -m slow tests/test_soak.py``).

Numerical health over long runs: the KT residual and max|J R - I| stay below their
documented bounds (KT <= 1e-8 in margin units; |J R - I| <= tol_drift = 1e-6 right after
each drift check, which rebuilds R when exceeded)."""
import numpy as np
import pytest

from fastbudget import IncrementalEngine, TVMClassifier
from fastbudget.datasets import stream_chunks
from fastbudget.kernels import adiabatic as ad



@pytest.mark.slow
def test_engine_random_add_remove_soak():
    """10^5 random adds and removes on a capacity-300 engine (RBF, C = 10)."""
    rng = np.random.default_rng(0)
    eng = IncrementalEngine(300, 3, C=10.0, kernel="rbf", gamma=0.5)
    live = []
    worst_kt = 0.0
    worst_jr = 0.0
    for step in range(100_000):
        if len(live) < 50 or (len(live) < 299 and rng.random() < 0.5):
            x = rng.normal(size=3)
            y = 1.0 if x[0] * x[1] + 0.3 * rng.normal() > 0 else -1.0
            live.append(eng.add(x, y, rng.uniform(0.1, 5.0)))
        else:
            eng.remove(live.pop(int(rng.integers(len(live)))))
        if step % 1000 == 0:
            worst_kt = max(worst_kt, eng.kkt_residual())
            worst_jr = max(worst_jr, eng.jr_residual())
    print(f"engine soak: max KT {worst_kt:.2e}, max |JR-I| {worst_jr:.2e}, "
          f"rebuilds {eng.n_rebuilds}")
    assert worst_kt <= 1e-8
    assert worst_jr <= 1e-5


@pytest.mark.slow
def test_tvm_long_stream_health():
    """10^6 N-Checkerboard examples through TVM (B = 100): certificates at every 10^5."""
    sd = 4 / np.sqrt(12)
    clf = TVMClassifier(budget=100, gamma=1 / (2 * 0.37))
    for X, y in stream_chunks("checkerboard", 1_000_000, 100_000, random_state=3, noise=0.15):
        clf.partial_fit((X - 2) / sd, y, classes=[-1, 1])
        st = clf.engine_state_
        assert clf.kkt_residual() <= 1e-8
        assert ad.jr_residual(st.y, st.K, st.S_idx, int(st.ist[ad.I_NS]), st.R) <= 1e-5


def test_drift_check_rebuilds_R_when_drifted():
    """Corrupting R beyond the drift tolerance is caught by the next check and repaired."""
    rng = np.random.default_rng(1)
    eng = IncrementalEngine(60, 2, C=10.0, kernel="rbf", gamma=1.0)
    for _ in range(50):
        x = rng.normal(size=2)
        eng.add(x, 1.0 if x[0] > 0 else -1.0)
    nS = int(eng.st.ist[ad.I_NS])
    assert nS > 2
    eng.st.R[1, 1] += 1e-3
    before = eng.n_rebuilds
    assert ad.check_drift(eng.st, True) == ad.OK
    assert eng.n_rebuilds == before + 1
    assert eng.jr_residual() <= 1e-8
