"""SVIncrementalClassifier: batch-incremental SVM on new data plus weighted old support
vectors (Rueping 2001, paper 004)."""
import numbers

import numpy as np

from ..base import BudgetClassifier
from ..engine import (RELEARN_ORDERS, EngineSVViews, _MESSAGES, kernel_params, relearn_state,
                      resolve_gamma, restore_state, set_C_state, snapshot_state, state_decision,
                      state_kkt_residual)
from ..exceptions import CapacityError, NumericalError
from ..kernels import adiabatic as ad
from ..kernels import span as ks

_ENGINE_FIELDS = ad.EngineState._fields
_STAGES = {1: "unlearning the previous non-support vectors",
           2: "reweighting the previous support vectors", 3: "learning the new batch"}
# a multiplier within this relative distance of a bound counts as at the bound when the
# intercept is chosen (see kt_intercept)
_BOUND_RTOL = 1e-9


def _batch_step(st, *args):
    """``kernels.span.sv_incremental_batch`` with a failed KT certificate finished by the
    compiled ``adiabatic.repair`` (compiled only when a process needs it): after step 1's
    unlearning the step is called again and goes on; after step 3 it is done. Returns
    (status, stage)."""
    while True:
        status, stage = ks.sv_incremental_batch(st, *args)
        if status != ad.NEEDS_REPAIR:
            return status, stage
        status = ad.repair(st)
        if status != ad.OK or stage == 3:
            return status, (0 if status == ad.OK else stage)


def _interleave(y_pm):
    """An order of the rows that alternates the two classes while both last."""
    pos = np.flatnonzero(y_pm > 0)
    neg = np.flatnonzero(y_pm <= 0)
    k = min(pos.size, neg.size)
    head = np.empty(2 * k, dtype=np.int64)
    head[0::2] = pos[:k]
    head[1::2] = neg[:k]
    return np.concatenate([head, pos[k:], neg[k:]])


class SVIncrementalClassifier(EngineSVViews, BudgetClassifier):
    """Batch-incremental kernel SVM: each batch is learned together with the previous
    support vectors, optionally weighted by L (Rueping, ICDM 2001, paper 004).

    ``partial_fit(X_batch, y_batch)`` makes the model the exact SVM on the support vectors
    of the previous model plus the new batch (the SV-incremental algorithm of Syed, Liu &
    Sung 1999). With ``L`` set, an error on an old support vector costs ``L`` times more
    (SV-L-incremental): the old support vectors get the weight (box bound ``C * L``)

        ``L = factor * W_seen / n_SV``,

    where ``W_seen`` is the total sample weight of *all* examples learned before this batch
    (the number of examples seen, with unit weights), ``n_SV`` the number of support vectors
    kept, and ``factor`` is 1 for ``L='auto'`` (the paper's ``#examples / #SVs``) or the
    number given (the paper finds 2 better). Weights are *reset* at every batch, not
    multiplied: an old support vector that survives several batches carries the current L,
    so the old support vectors together always stand for ``factor`` times everything seen
    (each one for an equal share). For two batches this is exactly the paper's rule
    (``#examples`` = size of the first batch); for more batches it is the reading that keeps
    "every support vector stands for a constant fraction of all examples" (Sec. 3.2).
    ``L=None`` keeps every example's own weight (plain SV-incremental).

    Worked out for three batches of sizes n1, n2, n3 (unit weights, ``factor`` f):

    - batch 1: the SVM on the n1 examples; s1 of them are support vectors;
    - batch 2: those s1 support vectors get weight ``L2 = f n1 / s1`` (together f n1) and
      the n2 new examples weight 1; the exact SVM on the s1 + n2 examples has s2 support
      vectors, some old (weight L2), some new (weight 1);
    - batch 3: *all* s2 support vectors -- old and new alike -- get ``L3 = f (n1 + n2) / s2``
      (together f (n1 + n2)); an old support vector's weight goes from L2 to L3, not to
      L2 * L3, and a batch-2 example that became a support vector goes from 1 to L3.

    Non-unit sample weights count by their sum in ``n_seen_``. The paper only runs two
    batches, where this is its rule; its words "the number of examples in the previous
    batch" would instead give L3 = f n2 / s2, which lets the first batch fade (not what
    "every support vector stands for a constant fraction of all examples" asks).

    The weighted solve is the exact incremental engine (Cauwenberghs & Poggio 2000): the
    non-support vectors of the previous step are unlearned (exact, they have alpha = 0), the
    old support vectors move to their new bounds along one exact path, and the batch is
    learned one example at a time; one compiled call per batch. The result agrees with
    ``sklearn.svm.SVC(C=C).fit(X_sv + X_batch, sample_weight=[L...L, w_batch])``.

    Parameters
    ----------
    C : float, default=1.0
    kernel : {'rbf', 'linear', 'poly'}, default='rbf'
    gamma : float, 'scale', 'auto' or None, default='scale'
        Resolved on the first batch as in scikit-learn (None = 'auto' = ``1/n_features``).
    degree : int, default=3
    coef0 : float, default=0.0
    L : None, 'auto' or float > 0, default=None
        None: SV-incremental; 'auto': ``#examples / #SVs``; a number: that many times 'auto'.
    capacity : int, default=1000
        Most examples held at once (support vectors kept + the largest batch).
        Memory is about ``16 * capacity**2`` bytes, allocated at the first batch.
    class_weight : dict, 'balanced' or None, default=None
        Class weights as in scikit-learn's ``SVC``: a dict ``{label: weight}`` (labels not in
        it weigh 1) or ``'balanced'``, ``n_samples / (n_classes * np.bincount(y))`` on the
        data of ``fit`` (``partial_fit`` and ``learn_one`` refuse it: pass a dict). An
        example's weight is ``sample_weight * class_weight[label]``; its bound is ``C``
        times that in the batch it arrives with. With ``L`` set, the support vectors kept
        are given the weight L at the next batch whatever their class (as their
        ``sample_weight``), so class weights act within each batch and through ``n_seen_``;
        with ``L=None`` every example keeps its weight.

    Attributes
    ----------
    classes_, n_features_in_, gamma_
    support_vectors_ : ndarray (n_SV, n_features); as in scikit-learn's ``SVC``, those of
        ``classes_[0]`` come first, then those of ``classes_[1]``
    dual_coef_ : ndarray (1, n_SV), ``alpha_i y_i``
    intercept_ : ndarray (1,)
    n_support_ : ndarray (2,) of int32, support vectors of each class
    sample_weight_ : ndarray (n_SV,), current weights of the support vectors
    n_batches_ : int ; n_seen_ : float, total weight of the examples learned
    L_ : float or None, the weight given to the old support vectors at the last batch
    n_retries_ : int, batches that were learned a second time with their classes
        interleaved after the engine failed on the given order (the result is the same
        exact SVM)

    Notes
    -----
    With a tiny C every multiplier can sit at its bound; then the KT conditions leave the
    bias free in an interval and the engine holds one end of it. Predictions and
    ``intercept_`` use the midpoint of that interval, as LIBSVM does, so that
    ``decision_function`` agrees with ``SVC(C=C)`` there as well (any point of the interval
    is optimal for the same multipliers).

    ``learn_one`` learns a batch of one example: the previous support vectors are
    reweighted first, as for any batch.

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget.estimators.rueping import SVIncrementalClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2)); y = np.where(X[:, 0] + X[:, 1] > 0, 1, -1)
    >>> clf = SVIncrementalClassifier(C=1.0, kernel="linear", L="auto", capacity=200)
    >>> for k in range(3):
    ...     _ = clf.partial_fit(X[100 * k:100 * (k + 1)], y[100 * k:100 * (k + 1)], classes=[-1, 1])
    >>> bool(clf.score(X, y) > 0.95)
    True
    """

    @classmethod
    def _unit_test_params(cls):
        """Small, fast parameter sets for the shared checks (``tests/_estimators.py``), by id."""
        return {"svl_incremental": {"C": 1.0, "gamma": 0.5, "L": "auto", "capacity": 600}}

    @classmethod
    def _warmup_params(cls):
        """Parameter sets whose fits compile every compiled path (``fastbudget.warmup``)."""
        return [{"gamma": 1.0, "L": "auto", "capacity": 64}]

    # read by every chunk (C along the exact path to its new value)
    _per_chunk_params = ("class_weight", "C", "L")

    def __init__(self, C=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0, L=None,
                 capacity=1000, class_weight=None):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.L = L
        self.capacity = capacity
        self.class_weight = class_weight

    # ------------------------------------------------------------ protocol
    def _validate_params(self):
        self._check_param("capacity", self.capacity, low=2, low_inclusive=True, integer=True)
        self._check_param("degree", self.degree, low=1, low_inclusive=True, integer=True)
        self._check_param("coef0", self.coef0)
        self._l_factor()

    def _l_factor(self):
        L = self.L
        if L is None:
            return None
        if isinstance(L, str):
            if L == "auto":
                return 1.0
            raise ValueError(f"L must be None, 'auto' or a positive number; got {L!r}.")
        if isinstance(L, bool) or not isinstance(L, numbers.Real) or not (np.isfinite(L) and L > 0):
            raise ValueError(f"L must be None, 'auto' or a positive number; got {L!r}.")
        return float(L)

    def _init_state(self, n_features):
        self._allocated = False
        self._cap = int(self.capacity)
        self.n_batches_ = 0
        self.n_seen_ = 0.0
        self.L_ = None
        self.n_retries_ = 0

    def _allocate(self, X):
        self.gamma_ = resolve_gamma(self.gamma, X)
        code, kpar = kernel_params(self.kernel, self.gamma_, self.degree, self.coef0)
        n = self._cap
        self._st = ad.alloc_state(n, X.shape[1], code, kpar, float(self.C))
        self._buf_i = np.zeros(n, dtype=np.int64)
        self._buf_w = np.zeros(n)
        self._allocated = True

    def _partial_fit_encoded(self, X, y_pm, sample_weight):
        factor = self._l_factor()
        if not self._allocated:
            self._allocate(X)
        st = self._st
        if float(self.C) != float(st.fs[ad.F_C] / st.fs[ad.F_MU]):
            set_C_state(st, float(self.C))   # exact path; fallbacks as the engine's
        n_sv = int(np.count_nonzero((st.status != ad.FREE) & (st.alpha > 0)))
        need = n_sv + X.shape[0]
        if need > self._cap:
            raise CapacityError(
                f"This batch of {X.shape[0]} examples and the {n_sv} support vectors kept need "
                f"{need} slots but capacity is {self._cap}. Create the model with "
                f"capacity >= {need}, or pass smaller batches.")
        reweight = factor is not None and n_sv > 0
        L_w = factor * self.n_seen_ / n_sv if reweight else 0.0
        slots = np.empty(X.shape[0], dtype=np.int64)
        # step 1 unlearns the held non-support vectors and step 3 may fill their slots
        # with the batch: their X / K rows are saved too (a retry starts from this model)
        snap = snapshot_state(st, refill=np.flatnonzero((st.status != ad.FREE)
                                                        & (st.alpha == 0.0)))
        status, stage = _batch_step(st, X, y_pm, sample_weight, reweight, L_w,
                                    self._buf_i, self._buf_w, slots)
        if status != ad.OK:
            # The exact solution does not depend on the order the batch is learned in, but
            # the engine's path can. A generic safety net: undo, rebuild R and learn the
            # batch once more with the classes interleaved. (It was written for a run of one
            # class, which leaves every example of that class tied at the margin: the first
            # example of the other class made the engine cycle, rep 3 of Sec. 4.1. The
            # engine now leaves such degenerate vertices itself (``adiabatic._path``) and the
            # retry no longer triggers on the Sec. 4.1 batches.)
            restore_state(st, snap)
            ad.rebuild(st)
            order = _interleave(y_pm)
            status, stage = _batch_step(
                st, np.ascontiguousarray(X[order]), np.ascontiguousarray(y_pm[order]),
                np.ascontiguousarray(sample_weight[order]), reweight, L_w, self._buf_i,
                self._buf_w, slots)
            if status != ad.OK:
                restore_state(st, snap)
                if not self._relearn(snap, X, y_pm, sample_weight, reweight, L_w):
                    raise NumericalError(
                        f"Exact SVM update failed while {_STAGES.get(stage, stage)}: "
                        f"{_MESSAGES.get(status, status)} (also with the batch's classes "
                        "interleaved, after rebuilding R, and when the support vectors and "
                        f"the batch were relearned from scratch in {RELEARN_ORDERS} orders). "
                        "The model is unchanged. Near-duplicate examples with a very wide "
                        "kernel are the usual cause: lower gamma or C.")
            self.n_retries_ = int(self.n_retries_) + 1
        self.L_ = L_w if reweight else None
        self.n_seen_ = float(self.n_seen_ + sample_weight.sum())
        self.n_batches_ = int(self.n_batches_ + 1)

    def _relearn(self, snap, X, y_pm, sample_weight, reweight, L_w):
        """The engine's last resort (:func:`fastbudget.engine.relearn_state`) for a batch:
        learn the step's result set, the support vectors of the model (at weight ``L_w``
        when ``reweight``) and the batch (into the first slots that are free or hold a
        non-support vector), again from an empty model. True on success; otherwise the
        state is restored to ``snap`` (taken with those slots' rows)."""
        st = self._st
        live = st.status != ad.FREE
        sv = np.flatnonzero(live & (st.alpha > 0))
        c = np.flatnonzero(~live | (st.alpha == 0.0))[:X.shape[0]]
        st.X[c] = X
        st.y[c] = y_pm
        w_sv = np.full(sv.size, L_w) if reweight else st.wt[sv].copy()
        return relearn_state(st, snap, np.concatenate([sv, c]),
                             np.concatenate([w_sv, sample_weight]), st.fs[ad.F_MU])

    def _b_shift(self):
        """LIBSVM's intercept minus the engine's (stored units / mu); 0 unless every
        multiplier sits at a bound (see :func:`fastbudget.kernels.span.kt_intercept`)."""
        st = self._st
        return (ks.kt_intercept(st, _BOUND_RTOL) - st.fs[ad.F_B]) / st.fs[ad.F_MU]

    def _decision(self, X):
        if not self._allocated:
            return np.zeros(X.shape[0])
        return state_decision(self._st, X) + self._b_shift()

    # ------------------------------------------------------------ fitted views
    def _sv_state(self):
        return self._st if self._allocated else None

    @property
    def sample_weight_(self):
        st, i, _ = self._sv()
        return np.zeros(0) if st is None else st.wt[i]

    def kkt_residual(self):
        """Largest KT violation of the SVM on the held examples (margin units), on exact
        g; the model is left as it was."""
        self._check_fitted()
        if not self._allocated:
            return 0.0
        return state_kkt_residual(self._st)

    def memory_bytes(self):
        self._check_fitted()
        return ad.engine_nbytes(self._cap, self.n_features_in_) + 16 * self._cap

    # ------------------------------------------------------------ persistence protocol
    def _get_state(self):
        self._check_fitted()
        state = {"allocated": bool(self._allocated), "capacity": int(self._cap),
                 "n_batches_": int(self.n_batches_), "n_seen_": float(self.n_seen_),
                 "n_retries_": int(self.n_retries_),
                 "L_": None if self.L_ is None else float(self.L_)}
        if self._allocated:
            state["gamma_"] = float(self.gamma_)
            for name in _ENGINE_FIELDS:
                state["engine_" + name] = getattr(self._st, name).copy()
        return state

    def _check_state(self, state):
        """Raise ``ValueError`` unless the stored capacity is the parameter's and the engine
        has that many slots (the batch step fills free slots without bounds checks; ``load``
        calls this and checks the engine arrays apart)."""
        cap = state.get("capacity")
        if cap is not None and cap != int(self.capacity):
            raise ValueError(f"stored capacity {cap!r} is not the parameter's {self.capacity}")
        status = state.get("engine_status")
        if state.get("allocated") and isinstance(status, np.ndarray) and \
                status.shape != (int(self.capacity),):
            raise ValueError(f"the engine has {status.size} slots; capacity={self.capacity} "
                             f"holds {int(self.capacity)}")

    def _set_state(self, state):
        for k in ("allocated", "capacity", "n_batches_", "n_seen_", "L_"):
            if k not in state:
                raise ValueError(f"state is missing {k!r}; pass the dict returned by _get_state().")
        self._cap = int(state["capacity"])
        self.n_batches_ = int(state["n_batches_"])
        self.n_seen_ = float(state["n_seen_"])
        self.n_retries_ = int(state.get("n_retries_", 0))    # (absent in older files)
        self.L_ = None if state["L_"] is None else float(state["L_"])
        self._allocated = bool(state["allocated"])
        if self._allocated:
            self.gamma_ = float(state["gamma_"])
            self._st = ad.EngineState(**{f: np.array(state["engine_" + f], copy=True)
                                         for f in _ENGINE_FIELDS})
            self._buf_i = np.zeros(self._cap, dtype=np.int64)
            self._buf_w = np.zeros(self._cap)
        return self
