"""IncrementalEngine: the exact incremental / decremental SVM over preallocated state.

The engine owns an :class:`~fastbudget.kernels.adiabatic.EngineState` sized once for
``capacity`` weighted examples and drives the compiled operations of
:mod:`fastbudget.kernels.adiabatic`. Slots are stable: ``add`` returns the slot an example
lives in, and ``remove``/``reweight``/``loo`` take that slot. A freed slot is reused by the
next ``add``.

Every operation ends with a KT certificate on the exact gradients (an ill-conditioned path
that ends with the KT conditions violated counts as a failure). Failures are transactional:
when an operation reports a numerical failure, the engine restores the state from before
the call, rebuilds R from scratch and retries once; if that fails too, it learns the
operation's resulting set of examples again from an empty model (``adiabatic.relearn``), in
up to ``RELEARN_ORDERS`` orders, and only when every order fails raises
:class:`NumericalError` with the state as it was before the call.
"""
import numpy as np

from ._kernel_args import kernel_params, resolve_gamma, sv_by_class  # noqa: F401
from ._validation import as_kernel_array
from .calibration import NO_SCORES
from .exceptions import CapacityError, NumericalError, NumericalWarning  # noqa: F401 (re-exported)
from .kernels import adiabatic as ad
from .kernels import ops
from .kernels import tvm as ktvm
from .kernels.kernel import KERNEL_CODES, decision_values


# orders tried by the last resort (reversed slot order, then seeded permutations)
RELEARN_ORDERS = 3


_MESSAGES = {
    ad.NO_CONVERGENCE: "the adiabatic path did not converge (degenerate cycling of bookkeeping events)",
    ad.STUCK: "no example can absorb the equality constraint (inconsistent state)",
    ad.NOT_FINITE: "a non-finite value appeared",
    1: "the margin-set Jacobian is numerically singular",
    ad.KT_VIOLATED: "the path ended with the KT conditions violated (a numerically dependent "
                    "vector drifted)",
    ad.NEEDS_REPAIR: "the path ended with the KT conditions violated and was not repaired",
}


def check_state_arrays(get, n_features):
    """Raise ``ValueError`` unless the engine arrays ``get(field)`` (the fields of
    ``ad.EngineState``; ``get`` returns None for an absent one) are laid out as
    ``ad.alloc_state`` lays them out for some number of slots and ``n_features`` features,
    and the indices they hold point inside them. The compiled kernels index without bounds
    checks, so a loaded file that broke this would make them read and write outside the
    arrays (a segmentation fault at best). Run by ``persist.load_model``."""
    status = get("status")
    if not isinstance(status, np.ndarray) or status.ndim != 1:
        raise ValueError("engine array 'status' is missing or not 1-D")
    n = status.shape[0]
    shapes = {"X": (n, n_features), "R": (n + 1, n + 1), "K": (n, n), "beta": (n + 1,),
              "v": (n + 1,), "kpar": (3,), "fs": (ad.N_FS,), "ist": (ad.N_IST,),
              "tol": (ad.N_TOL,)}
    ints = ("status", "S_idx", "spos", "ist", "sparse")
    for f in ad.EngineState._fields:
        a = get(f)
        if a is None:
            continue
        want = shapes.get(f, (n,))
        kind = "i" if f in ints or f in ("skip", "insp") else "f"
        if not isinstance(a, np.ndarray) or a.shape != want or a.dtype.kind != kind:
            raise ValueError(
                f"engine array {f!r} is {getattr(a, 'dtype', type(a).__name__)} of shape "
                f"{np.shape(a)}; an engine of {n} slots and {n_features} features holds "
                f"shape {want}")
    ist = get("ist")
    if ist is not None:
        for i, label in ((ad.I_NS, "margin set size"), (ad.I_HW, "high-water mark"),
                         (ad.I_NSPARSE, "sparse count")):
            if not 0 <= int(ist[i]) <= n:
                raise ValueError(f"engine {label} ist[{i}] = {int(ist[i])} is outside [0, {n}]")
        if int(ist[ad.I_KCODE]) not in KERNEL_CODES.values():
            raise ValueError(f"engine kernel code {int(ist[ad.I_KCODE])} is unknown")
    if ((status < ad.FREE) | (status > ad.CAND)).any():
        raise ValueError("engine array 'status' holds an unknown slot status")
    for f, low in (("S_idx", -1), ("spos", -1), ("sparse", 0)):
        a = get(f)
        if a is None:
            continue
        if f == "sparse":
            a = a[:int(ist[ad.I_NSPARSE])] if ist is not None else a[:0]
        if a.size and (a.min() < low or a.max() >= n):
            raise ValueError(f"engine array {f!r} holds a slot index outside [{low}, {n})")
    S_idx = get("S_idx")
    if ist is not None and S_idx is not None and (S_idx[:int(ist[ad.I_NS])] < 0).any():
        raise ValueError("engine margin set lists a free slot (S_idx = -1)")



def state_decision(st, X):
    """Decision values of the SVM held in an engine state (stored values divided by the
    margin target mu), for the rows of X. Shared by every learner built on the engine."""
    X = as_kernel_array(X, np.float64)
    hw = int(st.ist[ad.I_HW])
    mu = st.fs[ad.F_MU]
    coef = np.where(st.status[:hw] != ad.FREE, st.alpha[:hw] * st.y[:hw] / mu, 0.0)
    out = np.empty(X.shape[0])
    decision_values(int(st.ist[ad.I_KCODE]), st.kpar, st.X, coef, hw,
                    float(st.fs[ad.F_B] / mu), X, out)
    return out


_LIGHT = ("wt", "cb", "alpha", "g", "status", "S_idx", "spos", "y", "fs", "ist")


def snapshot_state(st, refill=None):
    """What an operation on the engine state ``st`` may change, copied: the per-slot
    vectors, the scalars and the live block of R. ``X`` and ``K`` are not copied: an
    operation that only fills free slots writes their rows alone, and those are free again
    after a restore. An operation that frees live slots and fills them again (Span's
    replacements, SV-incremental's unlearning of non-support vectors) passes those slots as
    ``refill``: their rows of ``X`` and ``K`` are saved too. Cost O(capacity + |S|^2), plus
    O(len(refill) capacity)."""
    m = int(st.ist[ad.I_NS]) + 1
    rows = None
    if refill is not None:
        refill = np.asarray(refill, dtype=np.int64)
        rows = (refill, st.X[refill], st.K[refill])
    return {name: getattr(st, name).copy() for name in _LIGHT}, st.R[:m, :m].copy(), rows


def restore_state(st, snap):
    """Put ``st`` back as :func:`snapshot_state` found it (in place)."""
    vecs, Rlive, rows = snap
    for name, arr in vecs.items():
        np.copyto(getattr(st, name), arr)
    m = Rlive.shape[0]
    st.R[:m, :m] = Rlive
    if rows is not None:
        slots, X, K = rows
        st.X[slots] = X
        st.K[slots] = K
        st.K[:, slots] = K.T


def state_kkt_residual(st):
    """Largest KT violation of the SVM held in ``st`` (margin units), measured on exact g
    (``adiabatic.refresh``) without changing ``st``: the refresh runs between a snapshot
    and its restore. Shared by every learner built on the engine."""
    snap = snapshot_state(st)
    scratch = [a.copy() for a in (st.wv, st.gam, st.beta, st.v)]   # written by refresh
    try:
        ad.refresh(st)
        return float(ad.kkt_residual(st))
    finally:
        restore_state(st, snap)
        for a, b in zip((st.wv, st.gam, st.beta, st.v), scratch):
            np.copyto(a, b)


class EngineSVViews:
    """The fitted views of a learner whose model is the exact SVM held in an engine state,
    laid out as scikit-learn's ``SVC`` lays out a binary model: the support vectors
    (alpha > 0) of ``classes_[0]`` first, then those of ``classes_[1]``, each group in slot
    order. The learner gives ``_sv_state()``, the ``EngineState`` (None before anything was
    learned), and may add ``_b_shift()`` to the intercept."""

    def _sv_state(self):
        raise NotImplementedError

    def _b_shift(self):
        return 0.0

    def _sv(self):
        """``(state, slots of the support vectors in SVC's order, n_support_)``."""
        self._check_fitted()
        st = self._sv_state()
        if st is None:
            return None, np.zeros(0, dtype=np.int64), np.zeros(2, dtype=np.int32)
        i = np.flatnonzero((st.status != ad.FREE) & (st.alpha > 0))
        return (st, *sv_by_class(i, st.y[i] > 0))

    @property
    def support_(self):
        """ndarray of int: the engine slots of the support vectors."""
        return self._sv()[1]

    @property
    def n_support_(self):
        """ndarray (2,) of int32: support vectors of each class."""
        return self._sv()[2]

    @property
    def support_vectors_(self):
        """ndarray (n_SV, n_features), a copy."""
        st, i, _ = self._sv()
        return np.zeros((0, self.n_features_in_)) if st is None else st.X[i]

    @property
    def dual_coef_(self):
        """ndarray (1, n_SV): ``alpha_i y_i``."""
        st, i, _ = self._sv()
        if st is None:
            return np.zeros((1, 0))
        return (st.alpha[i] * st.y[i] / st.fs[ad.F_MU]).reshape(1, -1)

    @property
    def intercept_(self):
        """ndarray (1,)."""
        self._check_fitted()
        st = self._sv_state()
        if st is None:
            return np.zeros(1)
        return np.array([st.fs[ad.F_B] / st.fs[ad.F_MU] + self._b_shift()])


def finish_repair(st, status):
    """``status`` of a compiled operation on ``st``, with a failed KT certificate
    (``adiabatic.NEEDS_REPAIR``) finished by ``adiabatic.repair``: OK or KT_VIOLATED then.

    The repair is a compiled function of its own, so that the operations do not carry its
    code (see ``adiabatic._certify``): Numba compiles it the first time a process needs
    it (or in ``fastbudget.warmup()``)."""
    if status == ad.NEEDS_REPAIR:
        return ad.repair(st)
    return status


def add_batch_state(st, X, y, w, slots, fout=NO_SCORES):
    """``adiabatic.add_batch`` with its NEEDS_REPAIR finished (:func:`finish_repair`):
    returns (status, rows learned, or the failing row). ``fout``: each row's decision
    value before it is learned, one entry per row (or length 0: none)."""
    status, done = ad.add_batch(st, X, y, w, slots, fout)
    repaired = status == ad.NEEDS_REPAIR
    status = finish_repair(st, status)
    if repaired and status == ad.OK:
        done += 1        # the row whose certificate failed is learned, the state repaired
    return status, done


def tvm_fit_rows(st, tw, X, y, w, B, *per_row):
    """``kernels.tvm.tvm_partial_fit`` on the rows of a chunk, with each NEEDS_REPAIR it
    returns finished by ``ops.tvm_repair`` (the engine repaired, the twins brought up to
    date) and the chunk resumed at the next row. Returns (status, row) as
    ``tvm_partial_fit`` does, the row counted from the start of the chunk. ``st`` and
    ``tw`` modified in place. Further arguments of ``tvm_partial_fit`` follow ``B``; an
    array of them with one entry per row of ``X`` (an output) is resumed with the rows,
    as a view, others are passed as they are."""
    lo = 0
    while True:
        rest = tuple(a[lo:] if a.shape[0] == X.shape[0] else a for a in per_row)
        status, row = ktvm.tvm_partial_fit(st, tw, X[lo:], y[lo:], w[lo:], B, *rest)
        row += lo
        if status != ad.NEEDS_REPAIR:
            return status, row
        status = ops.tvm_repair(st, tw)
        if status != ad.OK:
            return status, row
        lo = row + 1   # (then the chunk's scratch is cleared again, even with no row left)


def _run_retried(st, snap, fn, *args):
    """``fn(st, *args)``, and once more on a rebuilt R if it fails; on a second failure
    ``st`` is restored to ``snap``. Returns the status."""
    status = finish_repair(st, fn(st, *args))
    if status == ad.OK:
        return status
    restore_state(st, snap)
    ad.rebuild(st)
    status = finish_repair(st, fn(st, *args))
    if status != ad.OK:
        restore_state(st, snap)
    return status


def relearn_state(st, snap, slots, weights, mu):
    """Last resort of a failed update: learn the examples of ``slots`` (with ``weights``,
    at margin target ``mu``) again from an empty model (``adiabatic.relearn``), in reversed
    slot order and then in seeded random orders, ``RELEARN_ORDERS`` in all. True on success
    (certified); otherwise ``st`` is restored to ``snap`` and False returned."""
    slots = as_kernel_array(slots, np.int64)
    weights = as_kernel_array(weights, np.float64)
    for attempt in range(RELEARN_ORDERS):
        perm = (np.arange(slots.size)[::-1] if attempt == 0
                else np.random.default_rng(attempt).permutation(slots.size))
        if ad.relearn(st, slots[perm], weights[perm], float(mu)) == ad.OK:
            return True
        restore_state(st, snap)
    return False


def set_C_state(st, C, what="Changing C"):
    """Move the SVM held in ``st`` to ``C`` along the exact path (``adiabatic.set_C``),
    with the engine's fallbacks: retried on a rebuilt R, then the live examples relearned
    from an empty model at ``C``; raises NumericalError with ``st`` unchanged when all
    fail. Shared by :meth:`IncrementalEngine.set_C` and the learners that hold a bare
    engine state (Span, SV-incremental)."""
    snap = snapshot_state(st)
    status = _run_retried(st, snap, ad.set_C, float(C))
    if status == ad.OK:
        return
    live = np.flatnonzero(st.status != ad.FREE)
    if relearn_state(st, snap, live, st.wt[live].copy(), st.fs[ad.F_C] / C):
        return
    raise NumericalError(
        f"{what} to {C!r} failed: {_MESSAGES.get(status, status)}; R was rebuilt and the path "
        f"retried, then the model relearned from scratch in {RELEARN_ORDERS} orders. The "
        "model is unchanged. Near-duplicate examples with a very wide kernel are the usual "
        "cause: lower gamma or C, or drop duplicates.")


class IncrementalEngine:
    """Exact SVM that learns and unlearns one weighted example at a time.

    Parameters
    ----------
    capacity : int
        Number of slots (examples held at once). Memory is ``memory_bytes()``, a closed
        form of (capacity, n_features), allocated here and never again.
    n_features : int
    C : float
        Regularisation; example i has the box bound ``C * w_i``.
    kernel : {'rbf', 'linear', 'poly'}
    gamma, degree, coef0 : float
        Kernel parameters as in scikit-learn (RBF ``exp(-gamma ||x-z||^2)``; polynomial
        ``(gamma <x,z> + coef0) ** degree``).
    tol_drift : float
        Rebuild R when ``max|J R - I|`` exceeds this (checked every ``check_every`` ops).
    """

    def __init__(self, capacity, n_features, C=1.0, kernel="rbf", gamma=1.0, degree=3,
                 coef0=0.0, tol_drift=1e-6, check_every=64):
        code, kpar = kernel_params(kernel, gamma, degree, coef0)
        self.capacity = int(capacity)
        self.n_features = int(n_features)
        self.st = ad.alloc_state(self.capacity, self.n_features, code, kpar, float(C),
                                 tol_drift=tol_drift, check_every=check_every)

    # ------------------------------------------------------------ transactions
    def snapshot(self):
        """:func:`snapshot_state` of this engine's state."""
        return snapshot_state(self.st)

    def restore(self, snap):
        """:func:`restore_state` of a snapshot taken by :meth:`snapshot` (in place)."""
        restore_state(self.st, snap)

    def _run(self, fn, *args, target=None):
        """Run one compiled operation transactionally: on failure restore, rebuild R and
        retry once; then learn the examples the operation should end with again from an
        empty model (``target()``: see :meth:`_target`), and if that fails too raise
        NumericalError with the engine unchanged. Every operation ends with the KT
        certificate (``adiabatic._certify``, finished by ``adiabatic.repair`` when it
        fails: :func:`finish_repair`), so an ill-conditioned path that ends with the
        KT conditions violated counts as a failure too and cannot end silently wrong."""
        snap = self.snapshot()
        status = _run_retried(self.st, snap, fn, *args)
        if status == ad.OK:
            return
        if target is not None and relearn_state(self.st, snap, *target()):
            return
        raise NumericalError(
            f"Exact SVM update failed: {_MESSAGES.get(status, status)}; R was rebuilt and the "
            f"update retried, then the model relearned from scratch in {RELEARN_ORDERS} orders. "
            "The model is unchanged. Near-duplicate examples with a very wide kernel are the "
            "usual cause: lower gamma or C, or drop duplicates."
        )

    def _target(self, add=None, drop=None, weight=None):
        """The examples an operation should end with, as ``(slots, weights, mu)`` for
        :func:`relearn_state`, read from the state before it: every live slot with its
        weight, plus ``add = (slots, X, y, w)`` (the points are written into those free
        slots), without slot ``drop``, with ``weight = (slot, w)``."""
        st = self.st
        live = np.flatnonzero(st.status != ad.FREE)
        wts = st.wt[live].copy()
        mu = st.fs[ad.F_MU]
        if drop is not None:
            keep = live != drop
            live, wts = live[keep], wts[keep]
        if weight is not None:
            wts[live == weight[0]] = weight[1]
        if add is not None:
            c, X, y, w = add
            st.X[c] = X
            st.y[c] = y
            live = np.concatenate([live, c])
            wts = np.concatenate([wts, w])
        return live, wts, mu

    def add_batch(self, X, y, weight, scores=None):
        """Learn the rows of X in order inside one compiled call; returns their slots.

        ``scores``, an array of one float64 per row, receives each row's decision value
        under the SVM of every row before it, before the row is learned (the online
        calibration's scores, ``fastbudget.calibration``); a row learned by the last resort
        below (relearned from scratch) gets NaN.

        Transactional: on a numerical failure the batch is undone, R rebuilt and the batch
        retried. When the retry fails too at row i > 0, rows before i are learned again on
        the fresh R (the same operations on the same state: the same result), R is rebuilt
        there and the batch goes on from row i, as learning it in two calls would. Only a
        row that fails right after a rebuild raises NumericalError, with the engine as it
        was before the call."""
        X = as_kernel_array(X, np.float64)
        y = as_kernel_array(y, np.float64)
        weight = as_kernel_array(weight, np.float64)
        n = X.shape[0]
        if n > self.capacity - self.n_live:
            raise CapacityError(
                f"Learning {n} more examples needs {n} free slots but only "
                f"{self.capacity - self.n_live} of {self.capacity} are free. Create the model "
                "with a larger capacity, unlearn examples first, or use a budgeted learner "
                "(TVMClassifier)."
            )
        st = self.st
        slots = np.empty(n, dtype=np.int64)
        # the rows' scores (or length 0: none) resume with the rows
        f = NO_SCORES if scores is None else scores
        snap = self.snapshot()
        lo = 0
        fresh = False  # R was rebuilt at ``lo``: a retry would repeat the same operations
        while True:
            seg = snap if lo == 0 else self.snapshot()
            status, done = add_batch_state(st, X[lo:], y[lo:], weight[lo:], slots[lo:],
                                           f[lo:])
            if status == ad.OK:
                return slots
            self.restore(seg)
            if not fresh:
                ad.rebuild(st)
                status, done = add_batch_state(st, X[lo:], y[lo:], weight[lo:], slots[lo:],
                                               f[lo:])
                if status == ad.OK:
                    return slots
                self.restore(seg)
                ad.rebuild(st)
            if done == 0 or add_batch_state(st, X[lo:lo + done], y[lo:lo + done],
                                            weight[lo:lo + done], slots[lo:lo + done],
                                            f[lo:lo + done])[0] != ad.OK:
                break
            lo += done
            ad.rebuild(st)
            fresh = True
        self.restore(snap)
        free = np.flatnonzero(st.status == ad.FREE)[:n]   # the slots add_batch would take
        if relearn_state(st, snap, *self._target(add=(free, X, y, weight))):
            slots[:] = free
            f[:] = np.nan         # (relearned from scratch: no score before learning)
            return slots
        raise NumericalError(
            f"Exact SVM update failed at row {lo + done}: {_MESSAGES.get(status, status)}, "
            "also right after rebuilding R and when the model and the whole chunk were "
            f"relearned from scratch in {RELEARN_ORDERS} orders. Nothing of the chunk was "
            "learned. Near-duplicate examples with a very wide kernel or a large C are the "
            "usual cause: lower gamma or C, or drop duplicates."
        )

    @property
    def n_live(self):
        return int(np.count_nonzero(self.st.status != ad.FREE))

    # ------------------------------------------------------------ operations
    def free_slot(self):
        free = np.flatnonzero(self.st.status == ad.FREE)
        if free.size == 0:
            raise CapacityError(
                f"All {self.capacity} slots are in use. Create the model with a larger "
                "capacity, unlearn examples first, or use a budgeted learner (TVMClassifier)."
            )
        return int(free[0])

    def add(self, x, y, weight=1.0):
        """Learn (x, y) with ``weight`` exactly; returns its slot. y must be +1 or -1."""
        c = self.free_slot()
        x = as_kernel_array(x, np.float64)
        self._run(ops.engine_step, *ops.step_args(self.st, ops.OP_ADD, c, x, y, weight),
                  target=lambda: self._target(add=([c], x[None, :], [float(y)],
                                                   [float(weight)])))
        return c

    def remove(self, slot):
        """Unlearn the example in ``slot`` exactly (decremental unlearning)."""
        self._check_slot(slot)
        self._run(ops.engine_step, *ops.step_args(self.st, ops.OP_REMOVE, slot),
                  target=lambda: self._target(drop=int(slot)))

    def reweight(self, slot, weight):
        """Change the weight of ``slot`` (its bound becomes C * weight) exactly."""
        self._check_slot(slot)
        if not (np.isfinite(weight) and weight >= 0):
            raise ValueError(f"weight must be finite and >= 0; got {weight!r}.")
        self._run(ops.engine_step, *ops.step_args(self.st, ops.OP_REWEIGHT, slot, w=weight),
                  target=lambda: self._target(weight=(int(slot), float(weight))))

    def set_C(self, C):
        """Change C exactly along the regularisation path."""
        if not (np.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive finite number; got {C!r}.")
        set_C_state(self.st, float(C))

    def loo(self, slot):
        """Exact leave-one-out margin ``y f_{-slot}(x_slot)`` (negative: LOO error)."""
        self._check_slot(slot)
        snap = self.snapshot()
        try:
            status, margin = ad.loo_margin(self.st, int(slot))
        finally:
            self.restore(snap)
        if status != ad.OK:
            raise NumericalError(f"Leave-one-out unlearning failed: {_MESSAGES.get(status, status)}.")
        return float(margin)

    def _check_slot(self, slot):
        if not (0 <= int(slot) < self.capacity) or self.st.status[int(slot)] == ad.FREE:
            raise IndexError(f"Slot {slot} holds no example.")

    # ------------------------------------------------------------ views
    @property
    def mu(self):
        """Margin target of the stored problem (see ``kernels.adiabatic``)."""
        return float(self.st.fs[ad.F_MU])

    @property
    def C(self):
        """The SVM's C (bounds C * w_i)."""
        return float(self.st.fs[ad.F_C] / self.st.fs[ad.F_MU])

    @property
    def b(self):
        """The SVM's bias."""
        return float(self.st.fs[ad.F_B] / self.st.fs[ad.F_MU])

    @property
    def alpha(self):
        """The SVM's multipliers by slot (0 on free slots), a copy."""
        st = self.st
        return np.where(st.status != ad.FREE, st.alpha / st.fs[ad.F_MU], 0.0)

    def live(self):
        """Indices of occupied slots."""
        return np.flatnonzero(self.st.status != ad.FREE)

    def decision_function(self, X):
        return state_decision(self.st, X)

    def kkt_residual(self, refresh=True):
        """Largest KT violation (margin units; see ``adiabatic.kkt_residual``): on exact g
        (the engine is left as it was), or with ``refresh=False`` on the stored g."""
        if refresh:
            return state_kkt_residual(self.st)
        return float(ad.kkt_residual(self.st))

    def jr_residual(self):
        """max |J R - I| over the live margin set (the inverse-Jacobian certificate)."""
        st = self.st
        return float(ad.jr_residual(st.y, st.K, st.S_idx, int(st.ist[ad.I_NS]), st.R))

    def memory_bytes(self):
        """Bytes held by the state (closed form ``adiabatic.engine_nbytes``)."""
        return ad.engine_nbytes(self.capacity, self.n_features)

    @property
    def n_rebuilds(self):
        return int(self.st.ist[ad.I_NREBUILD])
