"""Transactions: an update that raises leaves the model exactly as it was.

:class:`TransactionMixin` gives :class:`fastbudget.base.BudgetClassifier` its
``_transaction()`` context: before an update it snapshots the attribute bindings and the
fitted state, and on any exception (including ``KeyboardInterrupt``) it puts both back and
re-raises. A learner that lists its state arrays (``_state_arrays``) gets the cheap undo
buffer, allocated once; a learner whose updates touch a known part of a large state
overrides ``_save_undo`` / ``_rollback``; any other is snapshotted as a copy of
``_get_state()``.

The update itself runs in compiled code that, for the learners whose loop is one call per
chunk (TVM, BSGD, Perceptron, Forgetron, Pegasos), releases the GIL, so two threads can
learn at once on two models. Two updates of one model never run at once: every public update
method is ``locked``, holding a lock per model for the whole call (its validation and its
transaction), so a second thread's update waits for the first and then learns on its result
(neither is lost; their order is the order they got the lock). Prediction takes no lock:
several threads score one model at once.
"""
import contextlib
import copy
import functools
import operator
import threading
import weakref

import numpy as np

# one lock per model, outside the model's ``__dict__`` (which is pickled, deep-copied and
# snapshotted): updates of one model run one at a time
_LOCKS = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


def _update_lock(model):
    """The model's update lock (re-entrant: an update may run another inside it)."""
    lock = _LOCKS.get(model)
    if lock is None:
        with _LOCKS_GUARD:
            lock = _LOCKS.setdefault(model, threading.RLock())
    return lock


def locked(method):
    """Run the update ``method`` holding the model's update lock, its validation included
    (whether the model is fitted yet, for one, is read under the lock)."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with _update_lock(self):
            return method(self, *args, **kwargs)
    return run


class TransactionMixin:
    """Snapshot and rollback of a fitted model (see the module docstring)."""

    def _state_arrays(self):
        """The arrays holding the fitted state, not copied, or None (not exposed).

        A learner that lists them (all of ``_get_state()``'s arrays) gets the cheap rollback
        of ``_transaction``: they are copied into an undo buffer of the same shapes,
        allocated once, instead of a fresh copy of ``_get_state()`` per call (which at the
        sizes of a budget allocates, and page-faults, the whole state on every call).
        """
        return None

    def _undo_copy(self, live, to_live=False):
        """Copy ``live`` (``_state_arrays()``) into the undo buffer, or back (``to_live``)."""
        undo = self.__dict__.get("_undo")
        if undo is None or len(undo[0]) != len(live) or not all(map(operator.is_, live, undo[0])):
            if to_live:
                raise RuntimeError("no snapshot to roll back to")
            undo = (list(live), [np.empty_like(a) for a in live])
            self.__dict__["_undo"] = undo
        # (slice assignment, not np.copyto: the same copy at half the call overhead, which
        # is most of the cost for the dozens of small state arrays)
        if to_live:
            for a, u in zip(*undo):
                a[...] = u
        else:
            for a, u in zip(*undo):
                u[...] = a

    def _save_undo(self):
        """Save what :meth:`_rollback` needs to put the fitted state back as it is now, and
        return it (any object), or None when the learner has no cheap undo: the transaction
        then copies ``_get_state()``. By default the arrays of ``_state_arrays()`` are copied
        into the undo buffer; a learner whose updates touch a known part of a large state
        overrides this pair (``IncrementalSVC``: the engine's light snapshot)."""
        live = self._state_arrays()
        if live is None:
            return None
        self._undo_copy(live)
        return True

    def _rollback(self, saved=True):
        """Put the state back as :meth:`_save_undo` found it (in place); ``saved`` is what
        it returned (unused here: the undo buffer holds it)."""
        self._undo_copy(self._state_arrays(), to_live=True)

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_undo", None)       # the rollback buffer is not part of the model
        state.pop("_undo_piece", None)  # (nor forgetting's second one)
        state.pop("_cw_cache", None)   # nor _check_one's cache of the class weights
        state.pop("_scores_out", None)  # nor a chunk's calibration scores being taken
        return state

    def _snapshot(self):
        """Everything needed to undo the next update (see ``_transaction``)."""
        if not self.__sklearn_is_fitted__():
            return dict(self.__dict__), None, False
        saved = self._save_undo()          # (first, so that the attributes hold the buffer)
        if saved is not None:
            return dict(self.__dict__), _Undo(saved), False
        attrs = dict(self.__dict__)
        try:
            state = self._get_state()
        except NotImplementedError:
            return attrs, copy.deepcopy(attrs), True
        return attrs, copy_state(state), False

    def _restore(self, snap):
        attrs, state, whole = snap
        self.__dict__.clear()
        if whole:
            self.__dict__.update(state)
            return
        self.__dict__.update(attrs)
        if isinstance(state, _Undo):
            self._rollback(state.saved)
        elif state is not None:
            self._set_state(state)

    @contextlib.contextmanager
    def _transaction(self):
        """Run an update so that any exception leaves the model exactly as before.

        Snapshots the attribute bindings and the state: into a buffer allocated once when the
        learner exposes ``_state_arrays()``, else as a copy of ``_get_state()`` (cost: one
        copy of the budget-sized state); on an exception (including ``KeyboardInterrupt``)
        restores them and re-raises. Runs inside a ``locked`` update method, which holds the
        model's lock (see the module docstring).
        """
        snap = self._snapshot()
        try:
            yield
        except BaseException:
            self._restore(snap)
            raise


class _Undo:
    """What ``_save_undo`` returned, marked as such in a transaction's snapshot."""
    __slots__ = ("saved",)

    def __init__(self, saved):
        self.saved = saved


def copy_state(state):
    """Deep copy of a state dict (arrays copied, JSON values deep-copied)."""
    out = {}
    for k, v in state.items():
        out[k] = np.array(v, copy=True) if isinstance(v, np.ndarray) else copy.deepcopy(v)
    return out
