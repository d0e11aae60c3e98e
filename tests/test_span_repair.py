"""Span's compiled stream hands a failed KT certificate back instead of repairing it itself.

An exact operation whose certificate fails returns ``adiabatic.NEEDS_REPAIR``; ``span_learn``
then stops at that row and records in its control array where the arrival's work goes on
(``ctl[K_PHASE]``, ``ctl[K_SLOT]``); the estimator runs ``adiabatic.repair`` from Python and
calls again, resuming the row there (``estimators.span._learn_rows``), so that the stream
does not compile the repair. The repair then runs after the same operation and before the
same next one as when the stream ran it in place, so the model must be the same bit for bit.

These tests force NEEDS_REPAIR after operations that succeeded (the certificate holds, so
the repair returns OK at once and changes nothing) in every phase where an arrival can
stop, with the compiled code run as Python (``NUMBA_DISABLE_JIT``) so that the operation
can be patched, and compare every state array with the stream learned without it.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np

from fastbudget.estimators import span as span_mod
from fastbudget.estimators.span import SpanBudgetClassifier
from fastbudget.kernels import adiabatic as ad
from fastbudget.kernels import span as ks

from _engine import ill_conditioned_data

_PY = textwrap.dedent("""
    import copy, json
    import numpy as np
    from fastbudget.datasets import make_drifting_gaussians
    from fastbudget.estimators import span as span_mod
    from fastbudget.estimators.span import SpanBudgetClassifier
    from fastbudget.kernels import adiabatic as ad
    from fastbudget.kernels import span as ks

    real_step, real_learn, real_repair = ks.engine_step, ks.span_learn, ad.repair
    n_ops, phases, repairs = [0], [], []

    def forced_step(st, op, c, x, yc, w):
        # every third successful operation reports a failed certificate (arrivals make
        # one or two operations: each gets its turn)
        s = real_step(st, op, c, x, yc, w)
        n_ops[0] += 1
        return ad.NEEDS_REPAIR if s == ad.OK and n_ops[0] % 3 == 0 else s

    def spy_learn(st, wk, Xc, *args):
        # (args: y, w, budget, policy, margin, span_set, ctl, fout)
        s, i = real_learn(st, wk, Xc, *args)
        if s == ad.NEEDS_REPAIR:
            phases.append((int(args[-2][ks.K_DECIDE]), int(args[-2][ks.K_PHASE])))
        return s, i

    def spy_repair(st):
        repairs.append(real_repair(st))
        return repairs[-1]

    ks.span_learn, ad.repair = spy_learn, spy_repair

    def same(a, b):
        assert a.keys() == b.keys()
        for k in a:
            va, vb = np.asarray(a[k]), np.asarray(b[k])
            assert va.dtype == vb.dtype and va.shape == vb.shape, k
            va, vb = np.ascontiguousarray(va), np.ascontiguousarray(vb)
            if va.dtype.kind == "f":
                va, vb = va.view(np.uint8), vb.view(np.uint8)
            assert np.array_equal(va, vb), k

    X, y = make_drifting_gaussians(260, noise=0.05, random_state=1)
    out = {}
    for policy, C in (("span", 100.0), ("lru", 2.0)):
        states = []
        for forced in (False, True):
            ks.engine_step = forced_step if forced else real_step
            del phases[:], repairs[:]
            n_ops[0] = 0
            clf = SpanBudgetClassifier(budget=6, policy=policy, C=C, gamma=0.5)
            for lo in range(0, 260, 65):
                clf.partial_fit(X[lo:lo + 65], y[lo:lo + 65], classes=[-1, 1])
            states.append(clf._get_state())
        same(*states)
        out[policy] = sorted(set(p for d, p in phases))
        assert len(repairs) == len(phases) > 0 and set(repairs) == {ad.OK}
    del phases[:], repairs[:]

    # a full memory (budget support vectors) with an example of alpha = 0 in the spare
    # slot as well: an arrival first unlearns it (for real also in decision mode under the
    # span policy, whose swap search runs on the model without it); a repair after that
    # unlearning resumes the arrival (phase P_FULL) in both modes
    ks.engine_step = real_step
    B = 6
    clf = SpanBudgetClassifier(budget=B, C=2.0, gamma=0.5)
    clf.partial_fit(X, y, classes=[-1, 1])
    st, wk = clf._st, clf._wk
    assert (st.alpha > 0).sum() == B and (st.status != ad.FREE).sum() == B
    f = clf.decision_function(X) * np.where(y > 0, 1.0, -1.0)
    far, wrong = int(np.argmax(f)), np.flatnonzero(f < 0.0)
    assert f[far] > 1.0 and wrong.size
    c = int(np.flatnonzero(st.status == ad.FREE)[0])
    yf = 1.0 if y[far] > 0 else -1.0
    assert real_step(st, np.int64(ks.OP_ADD), np.int64(c), X[far], yf, 1.0) == ad.OK
    assert st.alpha[c] == 0.0 and (st.status != ad.FREE).sum() == B + 1
    args = (B, ks.POLICY_SPAN, 0.0, ks.SPAN_ALL)
    out["full"] = []
    for i in wrong[:6]:
        yi = 1.0 if y[i] > 0 else -1.0
        for decide in (True, False):
            got = []
            for forced in (False, True):
                del phases[:], repairs[:]
                ks.engine_step = forced_step if forced else real_step
                n_ops[0] = 2          # the first operation reports NEEDS_REPAIR
                m = copy.deepcopy(clf)
                if decide:
                    s, ctl = span_mod._span_decide(m._st, m._wk, X[i], yi, 1.0, args)
                else:
                    ctl = ks.alloc_ctl()
                    s, _ = span_mod._learn_rows(m._st, m._wk, X[i:i + 1], np.array([yi]),
                                                np.ones(1), args, ctl)
                got.append((s, ctl.copy(), m._get_state()))
                out["full"] += [(d, p) for d, p in phases if forced]
            ks.engine_step = real_step
            assert got[0][0] == got[1][0] == ad.OK
            assert np.array_equal(got[0][1], got[1][1])
            same(got[0][2], got[1][2])
    print(json.dumps(out))
""")


def test_stream_resumes_after_a_repair_in_every_phase_bit_for_bit():
    """NEEDS_REPAIR forced after every third successful operation: each arrival stopped
    after unlearning an example with alpha = 0 (memory not full: then x is learned), after
    unlearning the one it replaces (LRU: x is then learned; span: x is moved to its
    weight) and after its last operation, resumes there; the model, counters and ages are
    those of the stream without the forced repairs, every array bit for bit. Also the
    decision of one arrival (decision mode) resumed after its unlearning is repaired."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-c", _PY], env=env, cwd=root, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    import json
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert {ks.P_ADD, ks.P_SWAP_IN, ks.P_DONE} <= set(got["span"]), got
    assert {ks.P_ADD, ks.P_LRU_ADD, ks.P_DONE} <= set(got["lru"]), got
    assert [1, ks.P_FULL] in got["full"] and [0, ks.P_FULL] in got["full"], got


def test_real_failed_certificates_are_repaired_from_python(monkeypatch):
    """On these streams of ``test_engine``'s ill-conditioned family (found by a scan) an
    operation of Span's stream really fails its KT certificate: the compiled stream
    returns NEEDS_REPAIR, the estimator repairs (spied on: OK) and the stream goes on; the
    model is the exact SVM on its memory (KT residual within the certificate's
    tolerance), and learning the same rows one at a time, with the repair at the same
    places, gives the same model bit for bit."""
    real = ad.repair
    calls = []

    def spy(st):
        calls.append(real(st))
        return calls[-1]

    monkeypatch.setattr(ad, "repair", spy)
    for seed, budget in ((20, 10), (332, 6)):
        X, y = ill_conditioned_data(seed)
        for policy in ("span", "lru"):
            kw = dict(budget=budget, policy=policy, C=1e4, gamma=0.05, margin=1.0)
            del calls[:]
            clf = SpanBudgetClassifier(**kw).partial_fit(X, y, classes=[-1, 1])
            assert calls and set(calls) == {ad.OK}, (seed, policy, calls)
            assert clf.kkt_residual() <= ad._kt_tolerance(clf.engine_state_)
            one = SpanBudgetClassifier(**kw)
            for i in range(len(y)):
                one.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1, 1])
            a, b = clf._get_state(), one._get_state()
            for k in a:
                if isinstance(a[k], np.ndarray):
                    assert np.array_equal(a[k], b[k]), (seed, policy, k)
    # the stream does not call the repair itself (so it does not compile it)
    assert not hasattr(ks, "repair")
