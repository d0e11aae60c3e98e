"""One compiled entry for the exact engine's single-slot operations: add, remove, reweight.

Compile time is why this module exists. Numba builds one LLVM module per compiled function,
links into it the optimised code of every compiled function it calls and optimises and
emits the whole module again, so every compiled function that reaches ``run_path`` (the
largest function of the engine) carries its own copy of it and of everything under it.
``add``, ``remove`` and ``reweight`` of :mod:`fastbudget.kernels.adiabatic` were three such
functions, each compiled with its own copy of the engine; Span's stream used all three, and
an :class:`~fastbudget.engine.IncrementalEngine` driven from Python compiled each on first use.
They are now inlined (``inline="always"``) into :func:`engine_step`, which selects the
operation by a run-time code: one module and one copy of the engine for the three.

The operations end with the KT certificate and return ``adiabatic.NEEDS_REPAIR`` when it
fails; the repair (``adiabatic.repair``) is compiled on its own, only by a process that
needs it (see ``adiabatic._certify``). :func:`tvm_repair` is its counterpart for the Twin
Vector Machine's stream, which must also bring the twins up to date after it.
"""
import numpy as np
from ._jit import njit

from . import adiabatic as ad
from .adiabatic import add, remove, reweight
from .tvm import P_MERGE, _sync

# operation codes of ``engine_step``
OP_ADD = 0
OP_REMOVE = 1
OP_REWEIGHT = 2


@njit(cache=True)
def engine_step(st, op, c, x, yc, w):
    """One exact operation on slot ``c`` of the engine state ``st``, chosen by ``op``.

    Parameters
    ----------
    st : EngineState
        Modified in place.
    op : int
        ``OP_ADD``: learn ``(x, yc)`` with weight ``w`` in free slot ``c``
        (``adiabatic.add``). ``OP_REMOVE``: unlearn slot ``c`` and free it
        (``adiabatic.remove``). ``OP_REWEIGHT``: move slot ``c`` to weight ``w``
        (``adiabatic.reweight``).
    c : int
        The slot.
    x : ndarray (d,) float64
        The point for ``OP_ADD``; unused otherwise (pass any row of the same type, e.g.
        ``st.X[c]``, so that every call has one signature).
    yc, w : float
        Label (``OP_ADD``) and weight (``OP_ADD``, ``OP_REWEIGHT``); unused otherwise.

    Returns
    -------
    status : int
        ``adiabatic.OK`` or a failure code, as the operation returns it;
        ``adiabatic.NEEDS_REPAIR`` when the KT certificate failed (the caller runs
        ``adiabatic.repair``, which returns OK or KT_VIOLATED).
    """
    if op == OP_ADD:
        return add(st, c, x, yc, w)
    if op == OP_REMOVE:
        return remove(st, c)
    return reweight(st, c, w)


@njit(cache=True)
def tvm_repair(st, tw):
    """Finish the update after which ``kernels.tvm.tvm_partial_fit`` returned
    ``adiabatic.NEEDS_REPAIR`` (at the row it returns): repair the engine
    (``adiabatic.repair``), then bring the twins up to date (the rest of ``tvm._sync``),
    as ``_sync`` did when it ran the repair itself. Returns OK, KT_VIOLATED or the status
    of the twins' update. ``st`` and ``tw`` modified in place; the caller then goes on with
    the chunk's next row.

    A cold path, compiled only by a process whose stream needs it (and by
    ``fastbudget.warmup()``), instead of being compiled into every ``tvm_partial_fit``.
    """
    s = ad.repair(st)
    if s != ad.OK:
        return s
    ist = st.ist
    nops = ist[ad.I_NOPS]
    # ``_sync`` counts one operation and runs the periodic refresh and certificate when
    # the count reaches ``check_every``: both ran already for this update (the repair may
    # have set the count, see ``_s_add``), so it starts far below and is put back after
    ist[ad.I_NOPS] = -(np.int64(1) << np.int64(62))
    s = _sync(st, tw, np.int64(tw.par[P_MERGE]))
    ist[ad.I_NOPS] = nops
    return s


def step_args(st, op, c, x=None, yc=0.0, w=0.0):
    """The arguments after ``st`` of an :func:`engine_step` call from Python, typed as the
    compiled callers type them (int64 codes and slots, float64 values; ``x`` defaults to
    the slot's own row), so that Python and compiled callers share one signature."""
    return (np.int64(op), np.int64(c), st.X[int(c)] if x is None else x, float(yc), float(w))
