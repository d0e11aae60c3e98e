"""``fastbudget.warmup()``: compile every compiled path once, on tiny inputs.

Numba compiles a function the first time it runs and caches the machine code on disk
(``cache=True``), so the first call in a fresh install pays the compile time and later
processes load it from the cache. Call ``warmup()`` once after installing (the ``fastbudget
warmup`` command does the same) to move that cost out of the first real fit.
"""
import time
import warnings

import numpy as np


def warmup(verbose=False):
    """Run every learner on a tiny problem so that all compiled functions are built.

    Returns the seconds it took (large on the first call in a fresh install, small once
    the on-disk cache is filled).
    """
    from ._registry import LEARNERS, learner_class
    from .engine import IncrementalEngine, relearn_state
    from .estimators.span import _POLICIES, _SPAN_SETS, SpanBudgetClassifier
    from .estimators.tvm import TVMClassifier
    from .kernels import adiabatic as ad
    from .kernels import ops

    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    # every learner of the registry, with the parameter sets its class lists
    # (``_warmup_params``: those that select compiled code, on tiny budgets)
    jobs = []
    for name in LEARNERS:
        cls = learner_class(name)
        jobs += [cls(**params) for params in cls._warmup_params()]
    for est in jobs:
        t = time.perf_counter()
        with warnings.catch_warnings():
            # tiny budgets on 40 points (a TVM that stops learning by rejection, ...): what
            # these fits say is not about the caller's models
            warnings.simplefilter("ignore")
            est.fit(X, y)
            est.decision_function(X)
            if isinstance(est, TVMClassifier):
                est.learn_one(X[0], y[0])   # its one-row test (kernels.tvm.tvm_count_one)
        if verbose:
            # the parameters that select compiled code (kernel, merge, lookahead, ...)
            p = {k: v for k, v in est.get_params().items()
                 if k in ("kernel", "merge", "lookahead", "n_balls", "policy", "method")
                 and v != type(est)().get_params()[k]}
            what = f"{type(est).__name__}({', '.join(f'{k}={v!r}' for k, v in p.items())})"
            print(f"{what:<48s} {time.perf_counter() - t:7.2f} s")
    eng = IncrementalEngine(16, 2, C=1.0, gamma=1.0)
    slots = [eng.add(X[i], 1.0 if y[i] > 0 else -1.0) for i in range(12)]
    eng.reweight(slots[0], 2.0)
    eng.set_C(2.0)
    eng.loo(slots[1])
    eng.remove(slots[2])
    eng.kkt_residual()
    # the last resorts of a failed update, which would otherwise compile in the middle of
    # the stream that needs them: the repair of a failed KT certificate (``repair``, and
    # TVM's ``tvm_repair``, which then brings the twins up to date; both return at once
    # here, where the certificate holds), R rebuilt from scratch, the examples relearned
    # from an empty model (``relearn_state``), and Span's decision for one arrival
    # (``span_decide``)
    ad.repair(eng.st)
    tvm = next(e for e in jobs if isinstance(e, TVMClassifier))
    ops.tvm_repair(tvm.engine_state_, tvm.twins_)
    ad.rebuild(eng.st)
    live = np.flatnonzero(eng.st.status != ad.FREE)
    relearn_state(eng.st, eng.snapshot(), live, eng.st.wt[live], eng.st.fs[ad.F_MU])
    span = next(e for e in jobs if isinstance(e, SpanBudgetClassifier))
    span._relearn_row(X[0].copy(), 1.0, 1.0,
                      (int(span.budget), _POLICIES[span.policy], float(span.margin),
                       _SPAN_SETS[span.span_set]))
    return time.perf_counter() - t0
