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
"""
import numpy as np
from numba import njit

from .adiabatic import add, remove, reweight

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
        ``adiabatic.OK`` or a failure code, as the operation returns it.
    """
    if op == OP_ADD:
        return add(st, c, x, yc, w)
    if op == OP_REMOVE:
        return remove(st, c)
    return reweight(st, c, w)


def step_args(st, op, c, x=None, yc=0.0, w=0.0):
    """The arguments after ``st`` of an :func:`engine_step` call from Python, typed as the
    compiled callers type them (int64 codes and slots, float64 values; ``x`` defaults to
    the slot's own row), so that Python and compiled callers share one signature."""
    return (np.int64(op), np.int64(c), st.X[int(c)] if x is None else x, float(yc), float(w))
