"""The comparison learners: Random, Perceptron, Forgetron, Pegasos and BSGD.

Each estimator validates its input, encodes labels as +-1, allocates its state once (sized
by the budget) and hands every chunk to one compiled loop in ``fastbudget.kernels.budget``
or ``fastbudget.kernels.bsgd``. They share parameter names with the TVM learner:
``budget``, ``kernel``, ``gamma``, ``degree``, ``coef0``, ``lambda_`` (where the algorithm
has one) and ``random_state``.

Kernels: ``K(x, z) = exp(-gamma ||x - z||^2)`` (RBF), ``(gamma <x, z> + coef0)^degree``
(poly), ``<x, z>`` (linear). ``gamma=None`` means ``1 / n_features``, which is paper 000's
width ``delta = n_features / 2`` for ``exp(-||x - z||^2 / (2 delta))`` on standardised data.
"""
import numpy as np

from .. import forgetting as _fg
from .._kernel_args import sv_by_class
from .._transaction import locked
from ..base import BudgetClassifier
from ..engine import EngineSVViews, IncrementalEngine, resolve_gamma
from ..kernels import budget as _kb
from ..kernels import bsgd as _kbs
from ..kernels.adiabatic import engine_nbytes
from ..kernels.kernel import KERNEL_CODES, decision_values

__all__ = [
    "RandomBudgetClassifier",
    "PerceptronClassifier",
    "ForgetronClassifier",
    "PegasosClassifier",
    "BSGDClassifier",
]


_COMPUTED = object()     # (a state entry that is not an attribute: _state_arrays)


class _StreamingMixin:
    """State round trip, one-example API and kernel set-up shared by the baselines.

    ``fit`` / ``partial_fit`` (validation, label encoding, transactions) come from
    :class:`fastbudget.base.BudgetClassifier` (which also refuses a changed hyper-parameter
    after fitting). Subclasses define ``_validate_params()``, ``_init_state``,
    ``_fit_chunk(X, y_pm, sw)``, ``_decision(X)`` and ``_state_names`` (attributes holding
    the fitted state: ndarrays or JSON-able scalars).
    """

    _state_names = ()
    _unit_weights_only = False

    # ------------------------------------------------------------------ internals
    def _partial_fit_encoded(self, X, y_pm, sample_weight):
        if self._unit_weights_only and not np.all(sample_weight == 1.0):
            raise ValueError(
                f"{type(self).__name__} does not support sample weights "
                f"({self._unit_weights_reason}); repeat examples instead."
            )
        self._fit_chunk(X, y_pm, sample_weight)

    def _kernel_setup(self, X):
        """Kernel code and ``kpar = [gamma, degree, coef0]``, fixed at the first chunk.

        ``gamma=None`` or ``'auto'``: ``1 / n_features``; ``'scale'``:
        ``1 / (n_features * X.var())`` of the first chunk (1.0 when it has no variance), as
        scikit-learn's SVC.
        """
        if self._kpar[0] == 0.0:
            self._kpar[:] = (resolve_gamma(self.gamma, X), float(self.degree), float(self.coef0))
        return KERNEL_CODES[self.kernel], self._kpar

    def _validate_kernel(self):
        if not isinstance(self.kernel, str) or self.kernel not in KERNEL_CODES:
            raise ValueError(
                f"Unknown kernel {self.kernel!r}; choose one of {sorted(KERNEL_CODES)}."
            )
        self._check_param("gamma", self.gamma, low=0.0, allow=(None, "scale", "auto"))
        self._check_param("degree", self.degree, low=1, low_inclusive=True, integer=True)
        self._check_param("coef0", self.coef0)

    def _validate_budget(self, allow_none=False):
        if allow_none and self.budget is None:
            return
        self._check_param("budget", self.budget, low=2, low_inclusive=True, integer=True)

    def _state_arrays(self):
        # the transaction's undo buffer (base class): the arrays of _get_state() but the
        # drift detector's, which fastbudget.forgetting puts back itself (the scalars are
        # attributes, which the transaction rebinds). None, i.e. a copy of _get_state(),
        # when an entry is computed rather than held (Random's engine and generator state)
        out = []
        for name in self._state_names:
            v = self.__dict__.get(name, _COMPUTED)
            if v is _COMPUTED:
                return None
            if isinstance(v, np.ndarray):
                out.append(v)
        return out

    def _get_state(self):
        """Complete fitted state: dict of name -> ndarray copy or JSON-able scalar.

        ``_set_state(_get_state())`` on a fresh instance with the same parameters gives a
        model that predicts and continues learning bit-identically.
        """
        self._check_fitted()
        state = {}
        for name in self._state_names:
            v = getattr(self, name)
            state[name] = v.copy() if isinstance(v, np.ndarray) else v
        state.update(_fg.get_state(self))       # the drift detector (forgetting='auto')
        return state

    def _set_state(self, state):
        """Restore a state produced by :meth:`_get_state` (``classes_`` and
        ``n_features_in_`` already set)."""
        missing = [k for k in self._state_names if k not in state]
        if missing:
            raise ValueError(f"state is missing {missing}; pass the dict returned by _get_state().")
        for name in self._state_names:
            v = state[name]
            setattr(self, name, np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
        _fg.set_state(self, state)
        self._after_set_state()
        return self

    # ------------------------------------------------------------------ forgetting
    def _forget_reset(self):
        # a restarted model keeps the kernel coefficient resolved on the first chunk, and
        # the random generator goes on (a new one from random_state would repeat the
        # first model's draws, or with random_state=None not be saved with the model)
        kpar = self.__dict__.get("_kpar")
        kpar = None if kpar is None else kpar.copy()
        rng = self.__dict__.get("_rng")
        super()._forget_reset()
        if kpar is not None:
            self._kpar[:] = kpar
        if rng is not None:
            self._rng = rng

    def _forget_bytes(self):
        if getattr(self, "forgetting", None) is None:
            return 0
        return _fg.nbytes(_fg.window(self), self.n_features_in_)

    @property
    def n_drifts_(self):
        """Drifts flagged, i.e. restarts of the model (0 when ``forgetting`` is None)."""
        self._check_fitted()
        st = self.__dict__.get("forget_state_")
        return 0 if st is None else int(st.ist[_fg.kd.D_DRIFTS])

    def _after_set_state(self):
        pass

    # Entries of ``_istate`` that index the preallocated arrays: (position, array whose
    # length n bounds it, True when the entry may equal n). The compiled updates index
    # without bounds checks, so a file holding a larger value would write outside memory.
    _istate_bounds = ()
    # arrays whose first dimension may differ from _init_state's (grown while learning)
    _growable = ()

    def _check_state(self, state):
        """Raise ``ValueError`` unless the arrays of ``state`` have the dtypes and shapes
        ``_init_state`` gives for these parameters and ``n_features_in_``, and the counters
        of ``_istate`` are non-negative and inside those arrays (``load`` calls this before
        ``_set_state``; names absent from ``state`` are left to ``_set_state``)."""
        ref = object.__new__(type(self))
        ref.__dict__.update(self.__dict__)
        ref._init_state(int(self.n_features_in_))
        name = type(self).__name__
        grown = set()
        for key in self._state_names:
            want = getattr(ref, key, None)
            if key not in state or not isinstance(want, np.ndarray):
                continue
            got = state[key]
            ok = (isinstance(got, np.ndarray) and got.dtype == want.dtype
                  and got.ndim == want.ndim)
            if ok and got.shape != want.shape:
                ok = key in self._growable and got.shape[1:] == want.shape[1:]
                grown.add(got.shape[0])
            if not ok:
                raise ValueError(
                    f"state array {key!r} is {getattr(got, 'dtype', type(got).__name__)} of "
                    f"shape {np.shape(got)}, but {name} with these parameters and "
                    f"{self.n_features_in_} features holds {want.dtype} of shape {want.shape}")
        if len(grown) > 1:
            raise ValueError(f"the arrays {list(self._growable)} differ in length {sorted(grown)}")
        ist = state.get("_istate")
        if isinstance(ist, np.ndarray) and (ist < 0).any():
            raise ValueError(f"_istate holds a negative counter {ist.tolist()}")
        for pos, key, inclusive in self._istate_bounds:
            if isinstance(ist, np.ndarray) and isinstance(state.get(key), np.ndarray):
                n = state[key].shape[0]
                v = int(ist[pos])
                if v > n or (v == n and not inclusive):
                    raise ValueError(
                        f"_istate[{pos}] = {v} points outside {key!r} ({n} rows)")


class _KernelSVMixin:
    """Public attributes of support-vector models stored in ``_SV`` / ``_coef``, laid out
    as scikit-learn's ``SVC`` lays out a binary model: the support vectors of
    ``classes_[0]`` (negative coefficient) first, then those of ``classes_[1]``."""

    def _sv_order(self):
        self._check_fitted()
        n = int(self._istate[0])
        return sv_by_class(np.arange(n), self._coef[:n] >= 0.0)

    @property
    def n_support_(self):
        """ndarray (2,) of int32: live support vectors of each class, by the sign of their
        coefficient (a coefficient of 0 counts with ``classes_[1]``)."""
        return self._sv_order()[1]

    @property
    def support_vectors_(self):
        """ndarray (n_support, n_features): copy of the live support vectors."""
        return self._SV[self._sv_order()[0]]

    @property
    def dual_coef_(self):
        """ndarray (1, n_support): signed coefficients (positive for ``classes_[1]``)."""
        return self._coef[self._sv_order()[0]].reshape(1, -1)

    @property
    def intercept_(self):
        """ndarray (1,) of 0.0: these kernel learners have no bias term."""
        self._check_fitted()
        return np.zeros(1)

    @property
    def gamma_(self):
        """The kernel's gamma, resolved at the first chunk (float)."""
        self._check_fitted()
        return float(self._kpar[0])

    def _decision(self, X):
        code, kpar = KERNEL_CODES[self.kernel], self._kpar
        out = np.empty(X.shape[0])
        decision_values(code, kpar, self._SV, self._coef, int(self._istate[0]), 0.0, X, out)
        return out


# ====================================================================== Perceptron
class PerceptronClassifier(_StreamingMixin, _KernelSVMixin, BudgetClassifier):
    """Perceptron (Rosenblatt 1958), linear or kernel, with an optional budget.

    On a mistake, ``y_t f(x_t) <= 0``, the example is added with coefficient ``y_t``
    (kernel) or ``w += y_t x_t, b += y_t`` (linear, primal). With a budget B the kernel
    store is a ring buffer and a new support vector replaces the oldest one (no shrinking;
    compare :class:`ForgetronClassifier`).

    Parameters
    ----------
    budget : int or None, default=None
        Maximum number of support vectors. None: unbounded; with ``kernel='linear'`` the
        model is then kept as a primal weight vector (O(d) memory).
    kernel : {'linear', 'rbf', 'poly'}, default='linear'
    gamma : float or None, default=None
        Kernel coefficient; None means ``1 / n_features``.
    degree : int, default=3
    coef0 : float, default=1.0
    fit_intercept : bool, default=True
        Learn a bias (primal linear model only; kernel models get one through ``coef0``).
    random_state : None
        Unused (the algorithm is deterministic); kept for a common interface.
    class_weight : dict, 'balanced' or None, default=None
        Class weights as in scikit-learn's ``SVC``: a dict ``{label: weight}`` (labels not in
        it weigh 1) or ``'balanced'``, ``n_samples / (n_classes * np.bincount(y))`` on the
        data of ``fit`` (``partial_fit`` and ``learn_one`` refuse it: pass a dict). An
        example's weight is ``sample_weight * class_weight[label]``; it scales the update
        made on a mistake (the coefficient ``w y`` of the new support vector, or the primal
        step ``w y x``); the mistake test is unchanged.

    forgetting : None or 'auto', default=None
        Concept drift (``fastbudget.forgetting``, which describes the detector and the
        younger rival): None keeps every concept learned; ``'auto'`` restarts the model on
        the buffered recent examples when drift is detected. The buffer (``20 * budget``
        examples, 2000 without a budget) is counted in ``memory_bytes()``; ``n_drifts_``
        counts the restarts.

    Attributes
    ----------
    classes_ : ndarray (2,)
    n_features_in_ : int
    coef_ : ndarray (1, n_features), intercept_ : ndarray (1,)
        The primal model (``kernel='linear'``, ``budget=None``); kernel models have
        ``intercept_ = [0.0]``.
    support_vectors_, dual_coef_ (1, n_support), n_support_ (2,), gamma_ : kernel model,
        laid out as scikit-learn's ``SVC`` (see :class:`BSGDClassifier`)
    n_mistakes_ : int
        Number of prediction mistakes made while learning.

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget.estimators.baselines import PerceptronClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> PerceptronClassifier().fit(X, y).score(X, y) > 0.9
    True
    """

    @classmethod
    def _unit_test_params(cls):
        """Small, fast parameter sets for the shared checks (``tests/_estimators.py``), by id."""
        return {"perceptron": {"budget": 30, "kernel": "rbf"}}

    @classmethod
    def _warmup_params(cls):
        """Parameter sets whose fits compile every compiled path (``fastbudget.warmup``)."""
        return [{"budget": 8, "gamma": 1.0}, {}]   # ({}: the default, the primal perceptron)

    def __init__(self, budget=None, kernel="linear", gamma=None, degree=3, coef0=1.0,
                 fit_intercept=True, random_state=None, class_weight=None, forgetting=None):
        self.forgetting = forgetting
        self.budget = budget
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.class_weight = class_weight

    @property
    def _state_names(self):
        if self._primal:
            return ("_w", "_istate")
        return ("_SV", "_coef", "_sv_t", "_istate", "_kpar")

    @property
    def _primal(self):
        return self.kernel == "linear" and self.budget is None

    #: each row scored in the learning loop before it is learned (fastbudget.calibration)
    _calibration_per_row = True

    @property
    def _istate_bounds(self):
        # [n_live, head, ...]: n_live <= capacity, head < capacity
        return () if self._primal else ((0, "_SV", True), (1, "_SV", False))

    @property
    def _growable(self):
        # budget=None: the store of support vectors doubles when full
        return ("_SV", "_coef", "_sv_t") if self.budget is None else ()

    def _validate_common_params(self):
        # budget=None (unbounded) is valid here; the other checks are in _validate_params
        pass

    def _validate_params(self):
        _fg.check_forgetting(self)
        self._validate_kernel()
        self._validate_budget(allow_none=True)
        self._check_bool("fit_intercept", self.fit_intercept)

    def _init_state(self, n_features):
        if self._primal:
            self._w = np.zeros(n_features + 1)
            self._istate = np.zeros(2, dtype=np.int64)   # [n_seen, n_mistakes]
        else:
            cap = self.budget if self.budget is not None else 64
            self._SV = np.zeros((cap, n_features))
            self._coef = np.zeros(cap)
            self._sv_t = np.full(cap, -1, dtype=np.int64)
            self._istate = np.zeros(4, dtype=np.int64)   # [n_live, head, n_seen, n_mistakes]
            self._kpar = np.zeros(3)

    def _grow(self, need):
        cap = self._SV.shape[0]
        if need <= cap:
            return
        new = max(need, 2 * cap)
        SV = np.zeros((new, self._SV.shape[1]))
        SV[:cap] = self._SV
        coef = np.zeros(new)
        coef[:cap] = self._coef
        sv_t = np.full(new, -1, dtype=np.int64)
        sv_t[:cap] = self._sv_t
        self._SV, self._coef, self._sv_t = SV, coef, sv_t

    def _fit_chunk(self, X, y, sw):
        if self._primal:
            _kb.perceptron_linear_fit(X, y, sw, self._w, self._istate, bool(self.fit_intercept),
                                      self._row_scores(X))
            return
        code, kpar = self._kernel_setup(X)
        if self.budget is None:
            self._grow(int(self._istate[0]) + X.shape[0])
        _kb.perceptron_kernel_fit(code, kpar, X, y, sw, self._SV, self._coef, self._sv_t,
                                  self._istate, -1 if self.budget is None else int(self.budget),
                                  self._row_scores(X))

    def _decision(self, X):
        if self._primal:
            return X @ self._w[:-1] + self._w[-1]
        return _KernelSVMixin._decision(self, X)

    @property
    def coef_(self):
        """ndarray (1, n_features): primal weights (``kernel='linear'``, ``budget=None``)."""
        self._check_fitted()
        if not self._primal:
            raise AttributeError("coef_ exists only for kernel='linear' with budget=None.")
        return self._w[:-1].reshape(1, -1).copy()

    @property
    def intercept_(self):
        """ndarray (1,): bias of the primal linear model; 0.0 for kernel models."""
        self._check_fitted()
        return np.array([self._w[-1] if self._primal else 0.0])

    def _sv_order(self):
        self._check_fitted()
        if self._primal:
            raise AttributeError("support vectors exist only for kernel models (budget set "
                                 "or kernel != 'linear'); the primal model has coef_.")
        return _KernelSVMixin._sv_order(self)

    @property
    def gamma_(self):
        self._check_fitted()
        if self._primal:
            raise AttributeError("gamma_ exists only for kernel models (budget set or "
                                 "kernel != 'linear').")
        return float(self._kpar[0])

    @property
    def n_mistakes_(self):
        self._check_fitted()
        return int(self._istate[1] if self._primal else self._istate[3])

    def memory_bytes(self):
        """Bytes of the model state.

        A closed form of ``budget`` B and ``n_features`` d: ``8 (B d + 2 B + 7)`` for a
        kernel model, ``8 (d + 3)`` for the primal one (``kernel='linear'``,
        ``budget=None``). A kernel model with ``budget=None`` has no bound: its store of
        support vectors doubles whenever it is full, so the value is that of its current
        capacity (64 at the start) in place of B, and grows with the stream.
        """
        self._check_fitted()
        d = self.n_features_in_
        if self._primal:
            return 8 * (d + 1 + 2) + self._forget_bytes()   # _w, _istate
        cap = int(self.budget) if self.budget is not None else int(self._SV.shape[0])
        return (8 * (cap * d + 2 * cap + 4 + 3)         # _SV, _coef, _sv_t; _istate, _kpar
                + self._forget_bytes())


# ====================================================================== Forgetron
class ForgetronClassifier(_StreamingMixin, _KernelSVMixin, BudgetClassifier):
    """Self-tuned Forgetron: a kernel perceptron on a budget of B support vectors.

    Dekel, Shalev-Shwartz & Singer, "The Forgetron: a kernel-based perceptron on a
    budget", SIAM J. Comput. 37(5), 2008. On a mistake the example is added with weight
    ``sigma = 1``; if that makes B + 1 support vectors, all weights are multiplied by the
    self-tuned ``phi_t`` (Sec. 5: the largest phi in (0, 1] that keeps
    ``Q_t + Psi(phi sigma_r, phi mu_t) <= 15/32 M_t``, ``Psi(l, mu) = l^2 + 2 l - 2 l mu``)
    and the oldest support vector is removed.

    Parameters
    ----------
    budget : int, default=100
    kernel : {'rbf', 'poly', 'linear'}, default='rbf'
    gamma : float or None, default=None
        None means ``1 / n_features``. Paper 000 tuned the Forgetron's width separately.
    degree : int, default=3
    coef0 : float, default=1.0
    random_state : None
        Unused (deterministic); kept for a common interface.
    class_weight : dict, 'balanced' or None, default=None
        Class weights as in scikit-learn's ``SVC``: a dict ``{label: weight}`` (labels not in
        it weigh 1) or ``'balanced'``, ``n_samples / (n_classes * np.bincount(y))`` on the
        data of ``fit`` (``partial_fit`` and ``learn_one`` refuse it: pass a dict). An
        example's weight is ``sample_weight * class_weight[label]``; the Forgetron refuses
        weights other than 1 (see ``sample_weight``), so only weights of 1 are accepted
        (the parameter exists for a common interface).

    Attributes
    ----------
    support_vectors_, dual_coef_ (1, n_support; ``sigma_i y_i``), n_support_ (2,),
        intercept_ ([0.0]), gamma_, classes_, n_features_in_: laid out as scikit-learn's
        ``SVC`` (see :class:`BSGDClassifier`)
    support_index_ : ndarray (n_support,), int64
        Stream position (0-based) of each support vector, in the order of
        ``support_vectors_``.
    n_mistakes_ : int
    Q_ : float
        Accumulated ``Psi`` of the removals so far.

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget.estimators.baselines import ForgetronClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = ForgetronClassifier(budget=50, gamma=1.0).fit(X, y)
    >>> bool(clf.n_support_.sum() <= 50)
    True
    """

    @classmethod
    def _unit_test_params(cls):
        """Small, fast parameter sets for the shared checks (``tests/_estimators.py``), by id."""
        return {"forgetron": {"budget": 30}}

    @classmethod
    def _warmup_params(cls):
        """Parameter sets whose fits compile every compiled path (``fastbudget.warmup``)."""
        return [{"budget": 8, "gamma": 1.0}]

    _state_names = ("_SV", "_coef", "_sv_t", "_istate", "_fstate", "_kpar")
    #: each row scored in the learning loop before it is learned (fastbudget.calibration)
    _calibration_per_row = True
    _istate_bounds = ((0, "_SV", True), (1, "_SV", False))     # [n_live, head, ...]
    _unit_weights_only = True
    _unit_weights_reason = "its shrinking schedule assumes unit perceptron steps"

    def __init__(self, budget=100, kernel="rbf", gamma=None, degree=3, coef0=1.0,
                 random_state=None, class_weight=None):
        self.budget = budget
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.random_state = random_state
        self.class_weight = class_weight

    def _validate_params(self):
        self._validate_kernel()
        self._validate_budget()

    def _init_state(self, n_features):
        B = int(self.budget)
        self._SV = np.zeros((B, n_features))
        self._coef = np.zeros(B)
        self._sv_t = np.full(B, -1, dtype=np.int64)
        self._istate = np.zeros(4, dtype=np.int64)   # [n_live, head, n_seen, n_mistakes]
        self._fstate = np.zeros(1)                   # [Q]
        self._kpar = np.zeros(3)

    def _fit_chunk(self, X, y, sw):
        code, kpar = self._kernel_setup(X)
        _kb.forgetron_fit(code, kpar, X, y, self._SV, self._coef, self._sv_t, self._istate,
                          self._fstate, int(self.budget), self._row_scores(X))

    @property
    def support_index_(self):
        self._check_fitted()
        return self._sv_t[self._sv_order()[0]]

    @property
    def n_mistakes_(self):
        self._check_fitted()
        return int(self._istate[3])

    @property
    def Q_(self):
        self._check_fitted()
        return float(self._fstate[0])

    def memory_bytes(self):
        """Bytes of the model state, a closed form of ``budget`` B and ``n_features`` d:
        ``8 (B d + 2 B + 8)``."""
        self._check_fitted()
        B, d = int(self.budget), self.n_features_in_
        return (8 * (B * d + 2 * B + 4 + 1 + 3)         # _SV, _coef, _sv_t; _istate, _fstate, _kpar
                + self._forget_bytes())


# ====================================================================== Pegasos
class PegasosClassifier(_StreamingMixin, BudgetClassifier):
    """Pegasos, linear, one pass with block size k (Shalev-Shwartz, Singer & Srebro, ICML 2007).

    Minimises ``lam/2 ||w||^2 + 1/m sum_i max(0, 1 - y_i <w, x_i>)`` by one pass of
    mini-batch sub-gradient steps: block t holds the next k examples of the stream,
    ``eta_t = 1/(lam t)``, ``w <- (1 - eta_t lam) w + (eta_t/k) sum_{y<w,x> < 1} y x``,
    then the projection onto the ball of radius ``1/sqrt(lam)`` (the paper's Fig. 2).
    ``fit`` applies a trailing partial block; ``partial_fit`` keeps it buffered so blocks
    stay contiguous across chunks.

    Parameters
    ----------
    lambda_ : float, default=1e-4
    k : int, default=1
        Block size.
    fit_intercept : bool, default=True
        Bias as a constant feature 1 (regularised with w).
    random_state : None
        Unused (one pass in stream order); kept for a common interface.
    class_weight : dict, 'balanced' or None, default=None
        Class weights as in scikit-learn's ``SVC``: a dict ``{label: weight}`` (labels not in
        it weigh 1) or ``'balanced'``, ``n_samples / (n_classes * np.bincount(y))`` on the
        data of ``fit`` (``partial_fit`` and ``learn_one`` refuse it: pass a dict). An
        example's weight is ``sample_weight * class_weight[label]``; it scales the example's
        hinge loss term (its sub-gradient), i.e. a per-class C.

    Attributes
    ----------
    coef_ : ndarray (1, n_features), intercept_ : ndarray (1,), classes_, n_features_in_
        (shapes as scikit-learn's linear classifiers)
    n_steps_ : int
        Number of sub-gradient steps taken.

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget.estimators.baselines import PegasosClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2)); y = (X[:, 0] - X[:, 1] > 0).astype(int)
    >>> PegasosClassifier(lambda_=1e-3).fit(X, y).score(X, y) > 0.9
    True
    """

    @classmethod
    def _unit_test_params(cls):
        """Small, fast parameter sets for the shared checks (``tests/_estimators.py``), by id."""
        return {"pegasos": {"random_state": 0}}

    @classmethod
    def _warmup_params(cls):
        """Parameter sets whose fits compile every compiled path (``fastbudget.warmup``)."""
        return [{}]

    _per_chunk_params = ("class_weight", "lambda_")  # read by every chunk

    _state_names = ("_w", "_g", "_Xb", "_yb", "_sb", "_istate")
    #: each row scored in the learning loop before it is learned (fastbudget.calibration)
    _calibration_per_row = True
    _istate_bounds = ((0, "_Xb", False),)     # [n_buf, ...]: a full block is applied at once

    def __init__(self, lambda_=1e-4, k=1, fit_intercept=True, random_state=None,
                 class_weight=None):
        self.lambda_ = lambda_
        self.k = k
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.class_weight = class_weight

    def _validate_params(self):
        self._check_param("lambda_", self.lambda_, low=0.0)
        self._check_param("k", self.k, low=1, low_inclusive=True, integer=True)
        self._check_bool("fit_intercept", self.fit_intercept)

    def _init_state(self, n_features):
        k = int(self.k)
        self._w = np.zeros(n_features + 1)
        self._g = np.zeros(n_features + 1)
        self._Xb = np.zeros((k, n_features))
        self._yb = np.zeros(k)
        self._sb = np.zeros(k)
        self._istate = np.zeros(3, dtype=np.int64)   # [n_buf, t, n_seen]

    def _fit_chunk(self, X, y, sw):
        _kb.pegasos_fit(X, y, sw, self._w, self._g, self._Xb, self._yb, self._sb, self._istate,
                        float(self.lambda_), bool(self.fit_intercept), False,
                        self._row_scores(X))

    @locked
    def fit(self, X, y, sample_weight=None):
        """One pass over (X, y) from scratch; a trailing partial block is applied at the end
        (as a block of its actual size). Parameters as ``partial_fit``; returns self."""
        super().fit(X, y, sample_weight=sample_weight)
        self.flush()
        return self

    @locked
    def flush(self):
        """Apply the buffered partial block now (end of a finite stream); returns self."""
        self._check_fitted()
        X0 = np.zeros((0, self.n_features_in_))
        e = np.zeros(0)
        _kb.pegasos_fit(X0, e, e, self._w, self._g, self._Xb, self._yb, self._sb, self._istate,
                        float(self.lambda_), bool(self.fit_intercept), True, e)
        return self

    def _decision(self, X):
        return X @ self._w[:-1] + self._w[-1]

    @property
    def coef_(self):
        """ndarray (1, n_features), as scikit-learn's linear classifiers."""
        self._check_fitted()
        return self._w[:-1].reshape(1, -1).copy()

    @property
    def intercept_(self):
        """ndarray (1,)."""
        self._check_fitted()
        return np.array([self._w[-1]])

    @property
    def n_steps_(self):
        self._check_fitted()
        return int(self._istate[1])

    def memory_bytes(self):
        """Bytes of the model state, a closed form of the block size ``k`` and
        ``n_features`` d: ``8 (2 (d + 1) + k d + 2 k + 3)`` (the weights and their gradient,
        the buffered block and the counters)."""
        self._check_fitted()
        k, d = int(self.k), self.n_features_in_
        return 8 * (2 * (d + 1) + k * d + 2 * k + 3)    # _w, _g; _Xb, _yb, _sb; _istate


# ====================================================================== BSGD
_MAINT = {"removal": _kbs.MAINT_REMOVE, "projection": _kbs.MAINT_PROJECT, "merging": _kbs.MAINT_MERGE}


class BSGDClassifier(_StreamingMixin, _KernelSVMixin, BudgetClassifier):
    """Budgeted stochastic gradient descent (Wang, Crammer & Vucetic, JMLR 13, 2012).

    Kernel Pegasos (``eta_t = 1/(lam t)``, no bias, one pass) whose model
    ``f(x) = sum_i alpha_i K(x_i, x)`` keeps at most B support vectors: every SGD step
    scales all ``alpha_i`` by ``1 - 1/t`` and, on a margin violation ``y_t f(x_t) < 1``,
    adds ``x_t`` with ``alpha = y_t/(lam t)`` (Algorithm 1); when that makes B + 1, budget
    maintenance (Sec. 4) removes the SV with the smallest ``|alpha|`` (``'removal'``),
    projects it onto the others (``'projection'``, an O(B^3) solve) or merges it with the
    same-sign SV that minimises the weight degradation (``'merging'``, RBF only; the
    merged point lies on the segment between the two, found by golden-section search).
    Plain SGD steps leave every unmerged SV with the same ``|alpha| = 1/(lam t)``; such
    ties of the smallest ``|alpha|`` go to the oldest SV.

    Parameters
    ----------
    budget : int, default=100
    kernel : {'rbf', 'poly', 'linear'}, default='rbf'
    gamma : float or None, default=None
        None means ``1 / n_features``.
    degree : int, default=3
    coef0 : float, default=1.0
    lambda_ : float, default=1e-4
        Regularisation; ``lambda_ = 1 / (C N)`` relates it to an SVM's C on N examples.
    maintenance : {'merging', 'removal', 'projection'}, default='merging'
    random_state : None
        Unused (one pass in stream order, deterministic maintenance); common interface.
    class_weight : dict, 'balanced' or None, default=None
        Class weights as in scikit-learn's ``SVC``: a dict ``{label: weight}`` (labels not in
        it weigh 1) or ``'balanced'``, ``n_samples / (n_classes * np.bincount(y))`` on the
        data of ``fit`` (``partial_fit`` and ``learn_one`` refuse it: pass a dict). An
        example's weight is ``sample_weight * class_weight[label]``; it scales the example's
        hinge loss: a new support vector gets ``alpha = w y / (lambda_ t)``.

    forgetting : None or 'auto', default=None
        Concept drift (``fastbudget.forgetting``, which describes the detector and the
        younger rival): None keeps every concept learned; ``'auto'`` restarts the model on
        the buffered recent examples when drift is detected. The buffer (``20 * budget``
        examples, 2000 without a budget) is counted in ``memory_bytes()``; ``n_drifts_``
        counts the restarts.

    Attributes
    ----------
    support_vectors_ : ndarray (n_support, n_features)
        As in scikit-learn's ``SVC``: those of ``classes_[0]`` (negative coefficient) first,
        then those of ``classes_[1]``.
    dual_coef_ : ndarray (1, n_support), the signed coefficients
    n_support_ : ndarray (2,) of int32, support vectors of each class (by the sign of the
        coefficient; a merged vector of BSGD belongs to no one example)
    intercept_ : ndarray (1,) of 0.0 (no bias term)
    gamma_ : float, the kernel's gamma resolved at the first chunk
    classes_, n_features_in_
    n_maintenance_ : int
        Number of budget-maintenance steps taken.

    Notes
    -----
    The paper's optional projection of w onto the ball of radius ``1/sqrt(lam)`` is not
    applied (as in the paper's experiments and the BudgetedSVM toolbox).

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget.estimators.baselines import BSGDClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = BSGDClassifier(budget=30, gamma=1.0, lambda_=1e-3).fit(X, y)
    >>> bool(clf.n_support_.sum() <= 30 and clf.score(X, y) > 0.8)
    True
    """

    @classmethod
    def _unit_test_params(cls):
        """Small, fast parameter sets for the shared checks (``tests/_estimators.py``), by id."""
        return {"bsgd": {"budget": 30, "random_state": 0}}

    @classmethod
    def _warmup_params(cls):
        """Parameter sets whose fits compile every compiled path (``fastbudget.warmup``)."""
        return [{"budget": 8, "gamma": 1.0}]

    _per_chunk_params = ("class_weight", "lambda_")  # read by every chunk

    _state_names = ("_SV", "_coef", "_Kc", "_sv_t", "_istate", "_kpar")
    #: each row scored in the learning loop before it is learned (fastbudget.calibration)
    _calibration_per_row = True
    _istate_bounds = ((0, "_SV", True),)      # [n_live, ...]

    def __init__(self, budget=100, kernel="rbf", gamma=None, degree=3, coef0=1.0,
                 lambda_=1e-4, maintenance="merging", random_state=None, class_weight=None,
                 forgetting=None):
        self.forgetting = forgetting
        self.budget = budget
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.lambda_ = lambda_
        self.maintenance = maintenance
        self.random_state = random_state
        self.class_weight = class_weight

    def _validate_params(self):
        _fg.check_forgetting(self)
        self._validate_kernel()
        self._validate_budget()
        self._check_param("lambda_", self.lambda_, low=0.0)
        if self.maintenance not in _MAINT:
            raise ValueError(
                f"maintenance must be one of {sorted(_MAINT)}; got {self.maintenance!r}."
            )
        if self.maintenance == "merging" and self.kernel != "rbf":
            raise ValueError(
                "maintenance='merging' needs kernel='rbf' (the merged point has a closed "
                "form only for the RBF kernel); use maintenance='removal' or 'projection'."
            )

    def _init_state(self, n_features):
        B = int(self.budget)
        self._SV = np.zeros((B + 1, n_features))
        self._coef = np.zeros(B + 1)
        self._Kc = np.zeros((B + 1, B + 1))
        self._sv_t = np.full(B + 1, -1, dtype=np.int64)
        self._istate = np.zeros(4, dtype=np.int64)   # [n_live, t, n_seen, n_maintenance]
        self._kpar = np.zeros(3)
        self._alloc_work(n_features)

    def _alloc_work(self, n_features):
        B = int(self.budget)
        self._krow = np.zeros(B + 1)
        self._v = np.zeros(B + 1)
        self._Lw = np.zeros((B, B)) if self.maintenance == "projection" else np.zeros((1, 1))
        self._z = np.zeros(n_features)

    def _after_set_state(self):
        self._alloc_work(self.n_features_in_)

    def _fit_chunk(self, X, y, sw):
        code, kpar = self._kernel_setup(X)
        if self._Lw.shape[0] != int(self.budget) and self.maintenance == "projection":
            self._Lw = np.zeros((int(self.budget), int(self.budget)))
        _kbs.bsgd_fit(code, kpar, X, y, sw, self._SV, self._coef, self._Kc, self._sv_t, self._istate,
                      float(self.lambda_), int(self.budget), _MAINT[self.maintenance],
                      self._krow, self._Lw, self._v, self._z, 1e-6, 1e-8, self._row_scores(X))

    @property
    def n_maintenance_(self):
        self._check_fitted()
        return int(self._istate[3])

    def memory_bytes(self):
        """Bytes of the model state and its work arrays, a closed form of ``budget`` B,
        ``maintenance`` and ``n_features`` d: with n = B + 1,
        ``8 (n d + n^2 + 4 n + 7 + P + d)``, P = B^2 for ``'projection'`` (its Cholesky
        factor) and 1 otherwise."""
        self._check_fitted()
        B, d = int(self.budget), self.n_features_in_
        n = B + 1
        P = B * B if self.maintenance == "projection" else 1
        # _SV, _Kc, _coef/_sv_t/_krow/_v, _istate + _kpar, _Lw, _z
        return 8 * (n * d + n * n + 4 * n + 4 + 3 + P + d) + self._forget_bytes()


# ====================================================================== Random
_ENGINE_FIELDS = ("X", "y", "wt", "cb", "alpha", "g", "status", "S_idx", "spos", "R", "K",
                  "kpar", "fs", "ist", "tol")


class RandomBudgetClassifier(_StreamingMixin, EngineSVViews, BudgetClassifier):
    """Exact SVM on a uniform random sample of B examples of the stream (paper 000's Random).

    A reservoir (Vitter's Algorithm R, 1985) keeps a uniform sample of ``budget`` examples
    of everything seen; the model is the exact soft-margin SVM on that sample
    (``min 1/2 ||w||^2 + C sum_i s_i xi_i``, s_i the example's weight: scikit-learn's
    ``SVC(C=C).fit(X_sample, y_sample, sample_weight=s_sample)``), kept by the exact incremental / decremental
    engine (:class:`fastbudget.engine.IncrementalEngine`, Cauwenberghs & Poggio 2000).
    Each ``partial_fit`` (or ``learn_one``) first updates the reservoir in one compiled
    call, then unlearns the examples of the slots that call replaced and learns their
    replacements exactly, once per slot however often the chunk replaced it. Prediction
    only reads the model (it works on read-only state arrays). Over a stream of N examples
    about ``B ln(N / B)`` examples are replaced in all, so the exact updates cost little
    however the stream is cut. Paper 000 (Sec. 5.2) trains IDSVM on a random sample of
    size B = 100 with C = 100 (C = 1 on Adult).

    Parameters
    ----------
    budget : int, default=100
        Sample size B.
    kernel : {'rbf', 'poly', 'linear'}, default='rbf'
    gamma : float, 'scale', 'auto' or None, default=None
        None / 'auto': ``1 / n_features``; 'scale': ``1 / (n_features X.var())`` of the
        first chunk.
    degree : int, default=3
    coef0 : float, default=1.0
    C : float, default=100.0
    random_state : None, int or numpy.random.Generator seed material, default=None
        Seeds the reservoir; its generator state is part of the model (same seed and same
        stream give the same model; a restored model continues identically).
    class_weight : dict, 'balanced' or None, default=None
        Class weights as in scikit-learn's ``SVC``: a dict ``{label: weight}`` (labels not in
        it weigh 1) or ``'balanced'``, ``n_samples / (n_classes * np.bincount(y))`` on the
        data of ``fit`` (``partial_fit`` and ``learn_one`` refuse it: pass a dict). An
        example's weight is ``sample_weight * class_weight[label]``.

    Weights do not change the sampling: every example of positive weight enters the
    reservoir with the same probability, and keeps its weight there, which scales its C in
    the SVM on the sample, as ``sample_weight`` does in ``SVC``. An example of weight 0 is
    left out of the stream altogether (it takes no slot and does not count towards the
    sampling probabilities), so it changes nothing, as in ``SVC``.

    forgetting : None or 'auto', default=None
        Concept drift (``fastbudget.forgetting``, which describes the detector and the
        younger rival): None keeps every concept learned; ``'auto'`` restarts the model on
        the buffered recent examples when drift is detected. The buffer (``20 * budget``
        examples, 2000 without a budget) is counted in ``memory_bytes()``; ``n_drifts_``
        counts the restarts.

    Attributes
    ----------
    classes_, n_features_in_
    support_vectors_, dual_coef_ (1, n_support; ``alpha_i y_i``), intercept_ (1,),
    n_support_ (2,), gamma_: laid out as scikit-learn's ``SVC``
    sample_ : tuple (X, y) of the current reservoir (copies; y in {-1, +1})
    sample_weight_ : ndarray, the weights of the reservoir's examples (a copy; ones when
        every example had weight 1)

    Examples
    --------
    >>> import numpy as np
    >>> from fastbudget.estimators.baselines import RandomBudgetClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = RandomBudgetClassifier(budget=100, gamma=1.0, C=10.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.85
    True
    """

    @classmethod
    def _unit_test_params(cls):
        """Small, fast parameter sets for the shared checks (``tests/_estimators.py``), by id."""
        return {"random": {"budget": 30, "C": 1.0, "gamma": 0.5, "random_state": 0}}

    @classmethod
    def _warmup_params(cls):
        """Parameter sets whose fits compile every compiled path (``fastbudget.warmup``)."""
        return [{"budget": 8, "gamma": 1.0}]

    def __init__(self, budget=100, kernel="rbf", gamma=None, degree=3, coef0=1.0, C=100.0,
                 random_state=None, class_weight=None, forgetting=None):
        self.forgetting = forgetting
        self.budget = budget
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.C = C
        self.random_state = random_state
        self.class_weight = class_weight

    _istate_bounds = ((0, "_RX", True),)      # [n_in_reservoir, ...]

    @property
    def _state_names(self):
        return ("_RX", "_Ry", "_Rw", "_dirty", "_eslot", "_istate", "_kpar", "_rng_state",
                *("_eng_" + f for f in _ENGINE_FIELDS))

    def _validate_params(self):
        _fg.check_forgetting(self)
        self._validate_kernel()
        self._validate_budget()
        self._check_param("C", self.C, low=0.0)
        try:
            if isinstance(self.random_state, (bool, np.bool_)):
                raise TypeError("a bool is not a seed")
            np.random.default_rng(self.random_state)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"random_state must be None, a non-negative int or a numpy "
                             f"Generator; got {self.random_state!r} ({exc}).") from None

    def _init_state(self, n_features):
        B = int(self.budget)
        self._RX = np.zeros((B, n_features))
        self._Ry = np.zeros(B)
        self._Rw = np.zeros(B)
        self._dirty = np.zeros(B, dtype=np.int8)
        self._eslot = np.full(B, -1, dtype=np.int64)
        self._istate = np.zeros(2, dtype=np.int64)   # [n_in_reservoir, n_seen]
        self._kpar = np.zeros(3)
        self._rng = np.random.default_rng(self.random_state)
        self._engine = IncrementalEngine(B, n_features, C=float(self.C), kernel=self.kernel,
                                         gamma=1.0, degree=self.degree, coef0=self.coef0)

    # engine arrays and the generator state appear in the state dict under these names
    def __getattr__(self, name):
        if name.startswith("_eng_") and "_engine" in self.__dict__:
            return getattr(self.__dict__["_engine"].st, name[5:]).copy()
        if name == "_rng_state" and "_rng" in self.__dict__:
            return self.__dict__["_rng"].bit_generator.state
        raise AttributeError(name)

    def _set_state(self, state):
        if "_Rw" not in state and "_Ry" in state:
            # files saved before weights were supported hold only examples of weight 1
            state = dict(state, _Rw=np.ones(np.shape(state["_Ry"])))
        eng = {k: state[k] for k in state if k.startswith("_eng_")}
        rng_state = state["_rng_state"]
        rest = {k: v for k, v in state.items() if not k.startswith("_eng_") and k != "_rng_state"}
        missing = [k for k in self._state_names if k not in state]
        if missing:
            raise ValueError(f"state is missing {missing}; pass the dict returned by _get_state().")
        for name, v in rest.items():
            setattr(self, name, np.array(v, copy=True) if isinstance(v, np.ndarray) else v)
        B = int(self.budget)
        self._engine = IncrementalEngine(B, self.n_features_in_, C=float(self.C),
                                         kernel=self.kernel, gamma=1.0, degree=self.degree,
                                         coef0=self.coef0)
        for k, v in eng.items():
            np.copyto(getattr(self._engine.st, k[5:]), v)
        bitgen = type(np.random.default_rng().bit_generator)
        if rng_state.get("bit_generator") != bitgen.__name__:
            bitgen = getattr(np.random, rng_state["bit_generator"])
        self._rng = np.random.Generator(bitgen())
        self._rng.bit_generator.state = rng_state
        # a model saved by an earlier version, whose updates left the exact SVM to the
        # next prediction, may hold replaced slots not yet learned
        self._sync()
        _fg.set_state(self, state)
        return self

    def _fit_chunk(self, X, y, sw):
        self._kernel_setup(X)
        keep = sw > 0.0
        if not keep.all():        # weight 0: as if the example were not in the stream
            X, y, sw = (np.ascontiguousarray(a[keep]) for a in (X, y, sw))
        u = self._rng.random(X.shape[0])
        _kb.reservoir_update(X, y, sw, u, self._RX, self._Ry, self._Rw, self._dirty,
                             self._istate, int(self.budget))
        # (inside partial_fit's transaction: a numerical failure here leaves the model,
        # reservoir included, as it was before the call)
        self._sync()

    def _sync(self):
        """Bring the exact SVM up to date with the reservoir (unlearn replaced examples,
        learn their replacements); a no-op when the sample did not change. Modifies the
        engine, ``_eslot`` and ``_dirty`` in place; called by every update, never by
        prediction."""
        changed = np.flatnonzero(self._dirty)
        if changed.size == 0:
            return
        eng = self._engine
        eng.st.kpar[:] = self._kpar
        for j in changed:
            if self._eslot[j] >= 0:
                eng.remove(int(self._eslot[j]))
                self._eslot[j] = -1
        slots = eng.add_batch(np.ascontiguousarray(self._RX[changed]),
                              np.ascontiguousarray(self._Ry[changed]),
                              np.ascontiguousarray(self._Rw[changed]))
        self._eslot[changed] = slots
        self._dirty[changed] = 0

    def _decision(self, X):
        return self._engine.decision_function(X)

    def _sv_state(self):
        return self._engine.st

    @property
    def gamma_(self):
        """The kernel's gamma, resolved at the first chunk (float)."""
        self._check_fitted()
        return float(self._kpar[0])

    @property
    def sample_(self):
        self._check_fitted()
        n = int(self._istate[0])
        return self._RX[:n].copy(), self._Ry[:n].copy()

    @property
    def sample_weight_(self):
        self._check_fitted()
        return self._Rw[:int(self._istate[0])].copy()

    def memory_bytes(self):
        """Bytes of the model state, a closed form of ``budget`` B and ``n_features`` d:
        the reservoir, ``8 (B d + 3 B + 5) + B``, and the exact SVM on it,
        ``fastbudget.kernels.adiabatic.engine_nbytes(B, d)`` (about ``16 B^2``)."""
        self._check_fitted()
        B, d = int(self.budget), self.n_features_in_
        # _RX, _Ry, _Rw, _eslot; _istate, _kpar; _dirty (int8)
        return 8 * (B * d + 3 * B + 2 + 3) + B + engine_nbytes(B, d) + self._forget_bytes()
