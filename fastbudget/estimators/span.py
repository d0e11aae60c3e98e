"""SpanBudgetClassifier: a fixed budget of support vectors kept by the S-span (paper 002).

A chunk is learned in one compiled call (``kernels.span.span_learn``) with the exact
engine's fallbacks: an exact operation whose KT certificate fails ends the call at its row
(NEEDS_REPAIR), the separately compiled ``adiabatic.repair`` runs and the call resumes the
row where it stopped (``_learn_rows``); when the chunk fails numerically, the model is put
back as before the chunk, R rebuilt and the chunk retried; when the retry fails at row i
too, the rows before i are learned again on a rebuilt R, row i's decision is made by the
compiled stream (``span_learn`` in decision mode: whether x is learned, which stored
example it replaces or which one with alpha = 0 makes room) and the resulting set is
learned again from an empty model (``engine.relearn_state``, as IncrementalSVC and
SVIncrementalClassifier do), and the chunk goes on from row i + 1 (where the same
applies). Only when every relearning order fails is ``NumericalError`` raised, with the
model as before the chunk.
"""
import numpy as np

from .. import forgetting as _fg
from .._validation import check_stored_arrays as _check_stored_arrays
from ..base import BudgetClassifier
from ..calibration import NO_SCORES
from ..engine import (RELEARN_ORDERS, EngineSVViews, _MESSAGES, check_state_arrays,
                      kernel_params, relearn_state, resolve_gamma,
                      restore_state, set_C_state, snapshot_state, state_decision,
                      state_kkt_residual)
from ..exceptions import NumericalError
from ..kernels import adiabatic as ad
from ..kernels import span as ks

_ENGINE_FIELDS = ad.EngineState._fields
_WORK_FIELDS = ks.SpanWork._fields
_POLICIES = {"span": ks.POLICY_SPAN, "lru": ks.POLICY_LRU}
_SPAN_SETS = {"all": ks.SPAN_ALL, "margin": ks.SPAN_MARGIN}


def _learn_rows(st, wk, X, y, w, args, ctl, fout=NO_SCORES):
    """``kernels.span.span_learn`` on the rows ``X``, ``y``, ``w`` (``args``: budget,
    policy, margin, span_set), with each NEEDS_REPAIR it returns finished by
    ``adiabatic.repair`` and the row resumed where it stopped (``ctl`` records where), so
    that the compiled stream does not carry the repair. Returns (status, rows learned, or
    the failing row), as one ``span_learn`` call with the repair in it would. ``fout``:
    the rows' scores before they are learned (one per row), or length 0."""
    lo = 0
    while True:
        status, done = ks.span_learn(st, wk, X[lo:], y[lo:], w[lo:], *args, ctl, fout[lo:])
        if status != ad.NEEDS_REPAIR:
            return status, lo + done
        lo += done
        status = ad.repair(st)
        if status != ad.OK:
            ctl[ks.K_PHASE] = ks.P_START
            return status, lo


def _span_decide(st, wk, x, yc, w, args):
    """The decision the stream makes for one arrival ``(x, yc)`` of weight ``w``, without
    its exact updates (``span_learn`` in decision mode). Returns (status, ctl): the record
    is ``ctl[D_KIND]``, ``ctl[D_EVICT]``, ``ctl[D_REMOVE]``, ``ctl[D_SLOT]``."""
    ctl = ks.alloc_ctl(decide=True)
    status, _ = _learn_rows(st, wk, x[None, :], np.array([yc], dtype=np.float64),
                            np.array([w], dtype=np.float64), args, ctl)
    return status, ctl


class SpanBudgetClassifier(EngineSVViews, BudgetClassifier):
    """Online kernel SVM on a fixed budget of support vectors, replaced by the S-span.

    Agarwal, Saradhi & Karnick (ESANN 2008, paper 002). The model is at every moment the
    exact soft-margin SVM on the support vectors it holds, kept by the exact incremental /
    decremental engine (Cauwenberghs & Poggio 2000). An arrival ``(x, y)`` the model
    classifies correctly (``y f(x) > margin``) is ignored. A misclassified one is learned
    while fewer than ``budget`` support vectors are held; once the memory is full:

    - ``policy='span'``: x is tried in place of every stored support vector (each trial is
      the exact SVM on the swapped set, one weight-transfer path); the swap giving the least
      S-span (largest span over the support vectors, paper 002 eq. 1) is made, by exact
      decremental unlearning and incremental learning (steps 5-6), only if it lowers the
      S-span; otherwise x is turned away;
    - ``policy='lru'``: the oldest stored support vector is unlearned and x learned (the
      paper's LRU baseline, same exact updates).

    Examples whose multiplier falls to 0 are dropped (exact: they do not shape the model), so
    the memory holds support vectors only. Spans come from the engine's inverse Jacobian
    (see :mod:`fastbudget.kernels.span`). Each ``partial_fit`` chunk is one compiled call.

    A chunk whose exact update fails numerically is retried on a rebuilt R; when the retry
    fails at a row too, that row's decision is made as usual and the examples it leaves in
    memory are learned again from an empty model (the engine's last resort, as in
    ``IncrementalSVC``), and the chunk goes on. Only when that fails too is
    :class:`~fastbudget.engine.NumericalError` raised, with the model as before the chunk.

    Parameters
    ----------
    budget : int, default=50
        Most support vectors held (N, the paper's memory limit); the engine has
        ``budget + 1`` slots (the spare one holds the arrival during the swap search).
    policy : {'span', 'lru'}, default='span'
    C : float, default=1.0
        Box constraint; an example of weight w has the bound ``C * w``.
    kernel : {'rbf', 'linear', 'poly'}, default='rbf'
    gamma : float, 'scale', 'auto' or None, default='scale'
        As in scikit-learn, resolved on the first chunk (None = 'auto' = ``1/n_features``).
    degree : int, default=3
    coef0 : float, default=0.0
    margin : float in [0, 1], default=0.0
        An arrival updates the model when ``y f(x) <= margin``; 0 is the paper's "fails to
        classify correctly", 1 updates on every margin violation.
    span_set : {'all', 'margin'}, default='all'
        Support vectors the S-span is the maximum over: 'all' (margin vectors and error
        vectors, the latter by their distance to the margin set's affine span) or 'margin'
        (margin vectors only: Vapnik & Chapelle's span for non-separable data, the "slightly
        modified expression" paper 002 Sec. 2 refers to).
    class_weight : dict, 'balanced' or None, default=None
        Class weights as in scikit-learn's ``SVC``: a dict ``{label: weight}`` (labels not in
        it weigh 1) or ``'balanced'``, ``n_samples / (n_classes * np.bincount(y))`` on the
        data of ``fit`` (``partial_fit`` and ``learn_one`` refuse it: pass a dict). An
        example's weight is ``sample_weight * class_weight[label]``; its bound is ``C`` times
        that (SVC's C per class).

    forgetting : None or 'auto', default=None
        Concept drift (``fastbudget.forgetting``, which describes the detector and the
        younger rival): None keeps every concept learned; ``'auto'`` restarts the model on
        the buffered recent examples when drift is detected. The buffer (``20 * budget``
        examples, 2000 without a budget) is counted in ``memory_bytes()``; ``n_drifts_``
        counts the restarts.

    Attributes
    ----------
    classes_, n_features_in_, gamma_
    support_ : ndarray of int, engine slots of the support vectors; as in scikit-learn's
        ``SVC``, those of ``classes_[0]`` come first, then those of ``classes_[1]``
        (``support_vectors_`` and ``dual_coef_`` follow the same order)
    support_vectors_ : ndarray (n_SV, n_features)
    dual_coef_ : ndarray (1, n_SV), ``alpha_i y_i``
    intercept_ : ndarray (1,)
    n_support_ : ndarray (2,) of int32, support vectors of each class
    n_swaps_, n_rejected_, n_updates_ : int, replacements made, arrivals turned away by the
        span test, arrivals that triggered an update
    engine_state_ : the engine's :class:`~fastbudget.kernels.adiabatic.EngineState`

    Examples
    --------
    >>> from fastbudget.datasets import make_drifting_gaussians
    >>> from fastbudget.estimators.span import SpanBudgetClassifier
    >>> X, y = make_drifting_gaussians(400, random_state=0)
    >>> clf = SpanBudgetClassifier(budget=20, C=1.0, gamma="auto", margin=1.0).fit(X, y)
    >>> bool(clf.n_support_.sum() <= 20)
    True
    >>> bool(clf.score(X, y) > 0.7)
    True
    """

    @classmethod
    def _unit_test_params(cls):
        """Small, fast parameter sets for the shared checks (``tests/_estimators.py``), by id."""
        return {"span": {"budget": 20, "C": 1.0, "gamma": 0.5},
                "span_lru": {"budget": 20, "C": 1.0, "gamma": 0.5, "policy": "lru"}}

    @classmethod
    def _warmup_params(cls):
        """Parameter sets whose fits compile every compiled path (``fastbudget.warmup``)."""
        return [{"budget": 8, "gamma": 1.0}, {"budget": 8, "policy": "lru"}]

    # read by every chunk (C along the exact path to its new value)
    _per_chunk_params = ("class_weight", "C", "policy", "margin", "span_set")

    def __init__(self, budget=50, policy="span", C=1.0, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, margin=0.0, span_set="all", class_weight=None, forgetting=None):
        self.forgetting = forgetting
        self.budget = budget
        self.policy = policy
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.margin = margin
        self.span_set = span_set
        self.class_weight = class_weight

    # ------------------------------------------------------------ protocol
    def _validate_params(self):
        if not isinstance(self.policy, str) or self.policy not in _POLICIES:
            raise ValueError(f"policy must be 'span' or 'lru'; got {self.policy!r}.")
        self._check_param("degree", self.degree, low=1, low_inclusive=True, integer=True)
        self._check_param("coef0", self.coef0)
        self._check_param("margin", self.margin, low=0.0, low_inclusive=True)
        if self.margin > 1.0:
            raise ValueError(f"margin must be in [0, 1]; got {self.margin!r}.")
        if not isinstance(self.span_set, str) or self.span_set not in _SPAN_SETS:
            raise ValueError(f"span_set must be 'all' or 'margin'; got {self.span_set!r}.")
        _fg.check_forgetting(self)

    def _init_state(self, n_features):
        self._allocated = False

    def _allocate(self, X):
        # (a model restarted by ``forgetting`` keeps the gamma_ of the first chunk)
        gamma = self.__dict__.get("gamma_")
        self.gamma_ = resolve_gamma(self.gamma, X) if gamma is None else gamma
        code, kpar = kernel_params(self.kernel, self.gamma_, self.degree, self.coef0)
        n = int(self.budget) + 1
        self._st = ad.alloc_state(n, X.shape[1], code, kpar, float(self.C))
        self._wk = ks.alloc_work(n, ad.N_FS, ad.N_IST)
        self._allocated = True

    #: each row scored in the learning loop before it is learned (``fastbudget.calibration``)
    _calibration_per_row = True

    def _partial_fit_encoded(self, X, y_pm, sample_weight):
        if not self._allocated:
            self._allocate(X)
        st = self._st
        if float(self.C) != self.C_:
            set_C_state(st, float(self.C))   # exact path; fallbacks as the engine's
        args = (int(self.budget), _POLICIES[self.policy], float(self.margin),
                _SPAN_SETS[self.span_set])
        wk = self._wk
        n = X.shape[0]
        # each row's score before it is learned, for the calibration (or length 0)
        f = self._row_scores(X)
        # a replacement frees a live slot and fills it with a new point: their X / K rows
        # are saved too, so that the retry below starts from the model as it was
        first = snap = snapshot_state(st, refill=np.flatnonzero(st.status != ad.FREE))
        first_counts = counts = (wk.age.copy(), wk.cnt.copy())
        lo = 0   # rows [0, lo) are learned
        while True:
            if lo > 0:
                snap = snapshot_state(st, refill=np.flatnonzero(st.status != ad.FREE))
                counts = (wk.age.copy(), wk.cnt.copy())
            rows = (X[lo:], y_pm[lo:], sample_weight[lo:])
            fr = f[lo:]
            status, done = _learn_rows(st, wk, *rows, args, ks.alloc_ctl(), fr)
            if status == ad.OK:
                return
            # undo the rest of the chunk (transactional), rebuild R from scratch and retry
            self._restore_work(snap, counts)
            ad.rebuild(st)
            status, done = _learn_rows(st, wk, *rows, args, ks.alloc_ctl(), fr)
            if status == ad.OK:
                return
            # The retry failed at row lo + done too. Last resort (the engine's): learn the
            # rows before it again on a rebuilt R (they succeeded in the retry), make that
            # row's decision and learn its resulting set from an empty model, then go on
            # with the next row (each pass learns at least one row: this ends)
            self._restore_work(snap, counts)
            ad.rebuild(st)
            row = lo + done
            stage = "retry"
            if not 0 <= done < n - lo:
                break
            if done > 0:
                replay, _ = _learn_rows(st, wk, *(r[:done] for r in rows), args,
                                        ks.alloc_ctl(), fr[:done])
                if replay != ad.OK:
                    status, stage = replay, "replay"
                    break
            if not self._relearn_row(X[row], y_pm[row], sample_weight[row], args):
                stage = "relearn"
                break
            if f.shape[0]:
                f[row] = np.nan    # (its model relearned from scratch: no score before it)
            lo = row + 1
            if lo == n:
                return
        self._restore_work(first, first_counts)
        how = {"retry": "",
               "replay": (", and learning the rows before it again on a rebuilt R failed "
                          "too"),
               "relearn": (f", then the examples its update should end with relearned from "
                           f"scratch in {RELEARN_ORDERS} orders")}[stage]
        raise NumericalError(
            f"Exact SVM update failed at row {row} of the chunk: "
            f"{_MESSAGES.get(status, status)}; R was rebuilt and the chunk retried{how}. The "
            "model is unchanged (the chunk was not learned). Near-duplicate examples with a "
            "very wide kernel are the usual cause: lower gamma or C, or drop duplicates.")

    def _restore_work(self, snap, counts):
        """Put the engine state and the ages / counters back as saved."""
        restore_state(self._st, snap)
        np.copyto(self._wk.age, counts[0])
        np.copyto(self._wk.cnt, counts[1])

    def _relearn_row(self, x, yc, w, args):
        """The engine's last resort for one arrival whose exact update failed, also on a
        rebuilt R: the compiled stream makes the arrival's decision (``_span_decide``: is x
        learned, which stored example it replaces or which one with alpha = 0 makes room;
        the ages and counters are updated as learning updates them), then the
        resulting set (the live examples without those, plus x in its slot with weight w)
        is learned again from an empty model (:func:`fastbudget.engine.relearn_state`).
        True on success; otherwise False, with the state and counters as on entry. When the
        span policy's exact unlearning of the example with alpha = 0 fails (its swap search
        needs the model without it), the model without it is relearned first and the
        decision made again on that."""
        st, wk = self._st, self._wk
        entry = None
        for _ in range(2):
            snap = snapshot_state(st, refill=np.flatnonzero(st.status != ad.FREE))
            counts = (wk.age.copy(), wk.cnt.copy())
            if entry is None:
                entry = (snap, (counts[0].copy(), counts[1].copy()))
            status, dec = _span_decide(st, wk, x, yc, w, args)
            kind = int(dec[ks.D_KIND])
            if kind == ks.D_NONE:
                # x is not learned: the state is as before (the row's failure was not its own)
                if status == ad.OK:
                    return True
                break
            vecs = snap[0]
            live = np.flatnonzero(vecs["status"] != ad.FREE)
            keep = (live != dec[ks.D_EVICT]) & (live != dec[ks.D_REMOVE])
            slots, wts = live[keep], vecs["wt"][live[keep]]
            if kind in (ks.D_ADD, ks.D_SWAP):
                c = int(dec[ks.D_SLOT])
                st.X[c] = x
                st.y[c] = yc
                slots, wts = np.append(slots, c), np.append(wts, w)
            if not relearn_state(st, snap, slots, wts, vecs["fs"][ad.F_MU]):
                break
            if kind != ks.D_EVICT_FAILED:
                return True
            # the model without the evicted example is learned: decide again on it, as
            # learning would after the unlearning (the row's counters once; the drop counted)
            counts[1][ks.C_PRUNED] += 1
            np.copyto(wk.cnt, counts[1])
        self._restore_work(*entry)
        return False

    @property
    def C_(self):
        st = self._st
        return float(st.fs[ad.F_C] / st.fs[ad.F_MU])

    def _decision(self, X):
        if not self._allocated:
            return np.zeros(X.shape[0])
        return state_decision(self._st, X)

    def _sv_state(self):
        return self._st if self._allocated else None

    def _count(self, k):
        self._check_fitted()
        return int(self._wk.cnt[k]) if self._allocated else 0

    @property
    def n_swaps_(self):
        return self._count(ks.C_SWAP)

    @property
    def n_rejected_(self):
        return self._count(ks.C_REJECT)

    @property
    def n_updates_(self):
        return self._count(ks.C_TRIG)

    @property
    def engine_state_(self):
        self._check_fitted()
        return self._st if self._allocated else None

    def spans(self):
        """Squared spans of the held support vectors and the squared S-span.

        Returns
        -------
        slots : ndarray of int64, the support vectors' slots (as ``support_``)
        span_sq : ndarray of float64, ``S_p^2`` for each (inf when undefined)
        s_span_sq : float, their maximum over ``span_set`` (paper 002, eq. 1)
        """
        self._check_fitted()
        if not self._allocated:
            return np.zeros(0, dtype=np.int64), np.zeros(0), 0.0
        n = self._st.status.shape[0]
        out = np.empty(n)
        v = np.empty(n + 1)
        worst = ks.span_sq(self._st, v, out, _SPAN_SETS[self.span_set])
        i = self._sv()[1]
        return i, out[i].copy(), float(worst)

    def kkt_residual(self):
        """Largest KT violation of the SVM on the held examples (margin units), on exact
        g; the model is left as it was."""
        self._check_fitted()
        if not self._allocated:
            return 0.0
        return state_kkt_residual(self._st)

    def memory_bytes(self):
        """Bytes of the model state: a closed form of (budget, n_features)."""
        self._check_fitted()
        n = int(self.budget) + 1
        extra = (0 if self.forgetting is None
                 else _fg.nbytes(_fg.window(self), self.n_features_in_))
        return (ad.engine_nbytes(n, self.n_features_in_) + ks.work_nbytes(n, ad.N_FS, ad.N_IST)
                + extra)

    def _forget_started(self):
        return self._allocated

    @property
    def n_drifts_(self):
        """Drifts flagged, i.e. restarts of the model (0 when ``forgetting`` is None)."""
        self._check_fitted()
        st = self.__dict__.get("forget_state_")
        return 0 if st is None else int(st.ist[_fg.kd.D_DRIFTS])

    def _state_arrays(self):
        # the transaction's undo buffer (base class): every array of _get_state() but the
        # drift detector's, which fastbudget.forgetting puts back itself
        if not self.__dict__.get("_allocated", False):
            return None
        return [*self._st, *self._wk]

    # ------------------------------------------------------------ persistence protocol
    def _get_state(self):
        self._check_fitted()
        if not self._allocated:
            return {"allocated": False}
        state = {"allocated": True, "gamma_": float(self.gamma_)}
        for name in _ENGINE_FIELDS:
            state["engine_" + name] = getattr(self._st, name).copy()
        for name in _WORK_FIELDS:
            state["work_" + name] = getattr(self._wk, name).copy()
        state.update(_fg.get_state(self))
        return state

    def _check_state(self, state):
        """Raise ``ValueError`` unless the engine has ``budget + 1`` slots and the span
        buffers are laid out as ``alloc_work`` lays them out for it, with the slot indices
        and the saved margin-set size they hold inside them (the compiled kernels index
        without bounds checks; ``load`` calls this and checks the engine arrays apart)."""
        if not state.get("allocated", False):
            return
        n = int(self.budget) + 1
        status = state.get("engine_status")
        if isinstance(status, np.ndarray) and status.shape != (n,):
            raise ValueError(f"the engine has {status.size} slots; budget={self.budget} "
                             f"holds {n}")
        _check_stored_arrays(state, "work_", ks.alloc_work(n, ad.N_FS, ad.N_IST)._asdict(),
                             "span buffer", f"budget={self.budget}")
        # the snapshot buffer (s_status, s_S_idx, s_ist, ...) is copied back into the
        # engine: its slot indices and counters must fit the engine as the engine's own do
        check_state_arrays(lambda f: state.get("work_s_" + f), int(self.n_features_in_))
        m = state.get("work_s_m")
        if m is not None and not 0 <= int(m[0]) <= n + 1:
            raise ValueError(f"span buffer 's_m' = {int(m[0])} is outside [0, {n + 1}]")

    def _set_state(self, state):
        _fg.set_state(self, state)      # the drift detector (absent without forgetting)
        if not state.get("allocated", False):
            self._allocated = False
            return self
        missing = [k for k in ["gamma_"] + ["engine_" + f for f in _ENGINE_FIELDS]
                   + ["work_" + f for f in _WORK_FIELDS] if k not in state]
        if missing:
            raise ValueError(f"state is missing {missing}; pass the dict returned by _get_state().")
        self.gamma_ = float(state["gamma_"])
        self._st = ad.EngineState(**{f: np.array(state["engine_" + f], copy=True)
                                     for f in _ENGINE_FIELDS})
        self._wk = ks.SpanWork(**{f: np.array(state["work_" + f], copy=True)
                                  for f in _WORK_FIELDS})
        self._allocated = True
        return self
