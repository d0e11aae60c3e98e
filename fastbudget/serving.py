"""Predict with a saved model using NumPy alone (Numba is never imported).

``load_predictor(path)`` reads a file written by ``model.save(path)`` (any fastbudget learner,
binary or ``OneVsRestClassifier``, any kernel) and returns a :class:`Predictor` with
``decision_function``, ``predict``, ``predict_proba`` (the calibration map saved with the
model, fitted with NumPy), ``classes_``, ``n_features_in_`` and, for a model fitted
on named columns, ``feature_names_in_``. Its decision values equal those of the loaded
model's compiled ``decision_function`` to rounding (about 1e-15 relative; the tests ask for
1e-12), computed block by block so that the memory used does not grow with the number of
rows beyond the output. The file is read and checked by the same code as ``fastbudget.load``
(``fastbudget._modelfile``), so a damaged or hostile file gets the same
:class:`~fastbudget.ModelFormatError`.

Each learner's scoring is reduced, once at load, to a kernel expansion
``f(x) = (b + sum_i c_i k(s_i, x)) / scale`` (the support vectors, twin vectors or core
vectors with a non-zero coefficient) or to a linear function ``f(x) = <w, x> + b``:

- TVM: twin vectors ``Q`` with ``coef``, bias and margin target ``mu`` of its engine;
- exact-SVM engines (IncrementalSVC, SpanBudgetClassifier, SVIncrementalClassifier,
  RandomBudgetClassifier): ``alpha_i y_i / mu`` over the live slots, bias ``b / mu``, plus
  for SVIncrementalClassifier LIBSVM's midpoint bias when every multiplier is at a bound;
- Perceptron, Forgetron, BSGD: the stored support vectors and coefficients, no bias; the
  primal linear models (Perceptron with ``budget=None``, Pegasos): ``w``;
- StreamSVM: the final ball (its lookahead buffer absorbed, or its balls merged, by the same
  enclosing-ball solver as the compiled learner's, transcribed to Python), with the bias
  feature ``b0`` folded into the kernel ``k(x, z) + b0^2``.
"""
import math

import numpy as np

from . import _inputcheck as _ic
from . import _modelfile as mf
from .exceptions import ModelFormatError

__all__ = ["Predictor", "load_predictor", "ModelFormatError"]

# kernel codes, as fastbudget.kernels.kernel
_LINEAR, _RBF, _POLY = 0, 1, 2
_KERNEL_CODES = {"linear": _LINEAR, "rbf": _RBF, "poly": _POLY}
# engine layout, as fastbudget.kernels.adiabatic
_FREE, _MARGIN, _ERROR, _RESERVE = 0, 1, 2, 3
_I_KCODE, _I_HW = 0, 2
_F_B, _F_MU = 0, 3
# state entries that may hold +-inf (the learners' _state_nonfinite_ok)
_INFINITE_OK = {"TVMClassifier": ("twin_nn_d", "twin_nn2_d")}
_RUEPING_BOUND_RTOL = 1e-9
_SERVED = ("TVMClassifier", "IncrementalSVC", "SpanBudgetClassifier", "SVIncrementalClassifier",
           "RandomBudgetClassifier", "PerceptronClassifier", "ForgetronClassifier",
           "BSGDClassifier", "PegasosClassifier", "StreamSVMClassifier", "OneVsRestClassifier")      # fastbudget.estimators.rueping._BOUND_RTOL
# bytes of kernel values computed at once (a block of rows times the support vectors)
_BLOCK_BYTES = 4 * 2**20
# bytes of each scratch array of the squared distances taken from the differences
_CACHE_BYTES = 2**18
_EPS = np.finfo(np.float64).eps


# ====================================================================== scorers
class _Scratch:
    """Scratch arrays of one ``decision_function`` call, allocated once and reused block after
    block. Allocating them per block cost 2.6 times the arithmetic inside a Dask worker: its
    nanny sets ``MALLOC_TRIM_THRESHOLD_``, which fixes glibc's mmap threshold at 128 KiB, so
    every block's arrays were fresh pages mapped, zeroed and unmapped again."""

    def __init__(self, rows, d, width):
        self.d, self.width = d, width
        self.kernel = np.empty(rows * width)
        self.rows = np.empty(rows * d)
        self.vec = np.empty(rows)
        self.f = np.empty(rows)
        self.piece = np.empty(max(1, _CACHE_BYTES // 8))
        self.far = None

    def matrix(self, m, w):
        """An (m, w) view of the kernel scratch."""
        return self.kernel[:m * w].reshape(m, w)

    def far_matrix(self, m, w):
        """An (m, w) array for the squared distances of far rows, allocated at first use."""
        if self.far is None:                      # (at most the kernel scratch's size)
            self.far = np.empty(self.kernel.size)
        return self.far[:m * w].reshape(m, w)


class _Linear:
    """f(x) = <w, x> + b."""

    def __init__(self, w, b):
        self.w = np.ascontiguousarray(w, dtype=np.float64)
        self.b = float(b)
        self.n_vectors = 0

    def score(self, Xb, scratch, out):
        np.matmul(Xb, self.w, out=out)
        out += self.b
        return out


class _Expansion:
    """f(x) = (b + sum_i c_i (k(s_i, x) + add)) / scale over the rows with c_i != 0."""

    def __init__(self, code, kpar, SV, coef, b=0.0, scale=1.0, add=0.0):
        coef = np.asarray(coef, dtype=np.float64)
        keep = coef != 0.0
        self.SV = np.ascontiguousarray(np.asarray(SV, dtype=np.float64)[keep])
        self.coef = np.ascontiguousarray(coef[keep])
        self.code = int(code)
        self.gamma, self.degree, self.coef0 = (float(v) for v in kpar[:3])
        self.b, self.scale, self.add = float(b), float(scale), float(add)
        self.n_vectors = self.SV.shape[0]
        if self.code == _RBF:
            # centred at the mean support vector: the expansion |x|^2 + |s|^2 - 2 <x, s>
            # loses less where the data sit far from the origin
            self.centre = self.SV.mean(axis=0) if self.n_vectors else np.zeros(SV.shape[1])
            self.Sc = self.SV - self.centre
            self.sn = np.einsum("ij,ij->i", self.Sc, self.Sc)
            self.sn_max = float(self.sn.max()) if self.n_vectors else 0.0
            self.SVT = np.ascontiguousarray(self.SV.T)

    def _sq_distances(self, Xr, out=None, u=None):
        """Squared distances of the rows of ``Xr`` to every vector, from the differences,
        summed feature by feature as the compiled kernel sums them, vectorised over rows and
        vectors (a loop over rows costs a few microseconds of Python per row, which at small
        d is ten times the arithmetic), in pieces of rows whose two scratch arrays stay in a
        core's cache (``_CACHE_BYTES`` each: with the block's 4 MiB they ran 3 times slower).
        ``out`` (rows x vectors) and ``u`` (flat, at least one row of vectors) may be given
        as scratch."""
        nv = self.n_vectors
        if out is None:
            out = np.empty((Xr.shape[0], nv))
        step = max(1, _CACHE_BYTES // (8 * max(1, nv)))
        if u is None or u.size < min(step, Xr.shape[0]) * nv:
            u = np.empty(min(step, Xr.shape[0]) * nv)
        step = min(step, max(1, u.size // max(1, nv)))
        for a in range(0, Xr.shape[0], step):
            acc = out[a:a + step]
            acc[...] = 0.0
            v = u[:acc.shape[0] * nv].reshape(acc.shape[0], nv)
            for k in range(Xr.shape[1]):
                np.subtract(self.SVT[k][None, :], Xr[a:a + step, k:k + 1], out=v)
                v *= v
                acc += v
        return out

    def _kernel(self, Xb, scratch):
        m = Xb.shape[0]
        q = scratch.matrix(m, self.n_vectors)
        if self.code == _RBF:
            Xc = np.subtract(Xb, self.centre, out=scratch.rows[:m * Xb.shape[1]].reshape(Xb.shape))
            xn = np.einsum("ij,ij->i", Xc, Xc, out=scratch.vec[:m])
            # rows whose squared distances the expansion cannot give to ~1e-13 relative
            # in exp(-gamma q): computed from the differences instead
            risky = np.flatnonzero(
                self.gamma * (xn + self.sn_max) * (8.0 * _EPS) * math.sqrt(Xb.shape[1] + 1)
                > 1e-13)
            if 2 * risky.size > m:
                # most of the block: every row from the differences (no expansion to throw
                # away for most rows)
                self._sq_distances(Xb, q, scratch.piece)
            else:
                np.matmul(Xc, self.Sc.T, out=q)
                q *= -2.0
                q += xn[:, None]
                q += self.sn[None, :]
                np.maximum(q, 0.0, out=q)
                if risky.size:
                    far = scratch.far_matrix(risky.size, self.n_vectors)
                    q[risky] = self._sq_distances(Xb[risky], far, scratch.piece)
            q *= -self.gamma
            return np.exp(q, out=q)
        np.matmul(Xb, self.SV.T, out=q)
        if self.code == _LINEAR:
            return q
        q *= self.gamma
        q += self.coef0
        return np.power(q, self.degree, out=q)

    def score(self, Xb, scratch, out):
        if self.n_vectors == 0:
            out[...] = self.b
        else:
            K = self._kernel(Xb, scratch)
            if self.add != 0.0:
                K += self.add
            np.matmul(K, self.coef, out=out)
            out += self.b
        if self.scale != 1.0:
            out /= self.scale
        return out


class _CompiledExpansion:
    """An :class:`_Expansion` scored by the library's compiled predict
    (``kernels.kernel.decision_values``, one pass over each row: no rows x vectors matrix),
    for :meth:`Predictor.compiled`. Imports Numba when made."""

    def __init__(self, exp):
        from .kernels.kernel import decision_values

        self._values = decision_values
        self.exp = exp
        self.n_vectors = exp.n_vectors
        self.kpar = np.array([exp.gamma, exp.degree, exp.coef0], dtype=np.float64)
        # (b + sum c_i (k_i + add)) = (b + add sum c_i) + sum c_i k_i
        self.b = exp.b + exp.add * float(exp.coef.sum()) if exp.add != 0.0 else exp.b

    def score(self, Xb, scratch, out):
        e = self.exp
        if e.n_vectors == 0:
            out[...] = self.b
        else:
            self._values(e.code, self.kpar, e.SV, e.coef, e.n_vectors, self.b, Xb, out)
        if e.scale != 1.0:
            out /= e.scale
        return out


class _Zero:
    """A model that has seen no example it kept: f = 0."""

    n_vectors = 0

    def score(self, Xb, scratch, out):
        out[...] = 0.0
        return out


# ====================================================================== probabilities
def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _fit_sigmoid(f, n, pos, ridge):
    """Platt's ``(A, B)`` on binned data by Newton's method with a backtracking line search
    (the steps of ``fastbudget.kernels.calibration.fit_sigmoid``, in NumPy)."""
    def objective(A, B):
        z = A * f + B
        return (np.dot(n, np.logaddexp(0.0, z)) - np.dot(pos, z)
                + 0.5 * ridge * ((A - 1.0) ** 2 + B * B))

    A, B = 1.0, 0.0
    obj = objective(A, B)
    for _ in range(100):
        p = _sigmoid(A * f + B)
        r = n * p - pos
        gA, gB = np.dot(r, f) + ridge * (A - 1.0), r.sum() + ridge * B
        s = n * p * (1.0 - p)
        hAA, hAB, hBB = np.dot(s, f * f) + ridge, np.dot(s, f), s.sum() + ridge
        det = hAA * hBB - hAB * hAB
        if not det > 0.0:
            break
        dA, dB = (hBB * gA - hAB * gB) / det, (hAA * gB - hAB * gA) / det
        dec = gA * dA + gB * dB
        if dec < 1e-12 * (1.0 + abs(obj)):
            A, B = A - dA, B - dB          # converged: one full step more (as the kernel)
            break
        t = 1.0
        while t > 1e-12:
            new = objective(A - t * dA, B - t * dB)
            if new <= obj - 1e-4 * t * dec:
                break
            t *= 0.5
        else:
            break
        A, B, obj = A - t * dA, B - t * dB, new
    return A, B


def _pav(v, w):
    """Weighted non-decreasing least-squares fit of ``v`` (pool adjacent violators)."""
    vals, wts, cnt = [], [], []
    for x, ww in zip(v.tolist(), w.tolist()):
        vals.append(x)
        wts.append(ww)
        cnt.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            x2, w2, c2 = vals.pop(), wts.pop(), cnt.pop()
            tot = wts[-1] + w2
            vals[-1] = (vals[-1] * wts[-1] + x2 * w2) / tot
            wts[-1] = tot
            cnt[-1] += c2
    return np.repeat(np.array(vals, dtype=np.float64), cnt)


class _Calibration:
    """A saved learner's calibration map (``fastbudget.calibration``) fitted from its
    statistics with NumPy: the steps of the library's compiled ``fit_map`` and
    ``apply_map`` (``fastbudget.kernels.calibration``), the same knots to rounding
    (``tests/test_probability.py`` compares them). Statistics of None (a file from before
    calibration) are empty: Platt's sigmoid of f, as the loaded model gives."""

    def __init__(self, stats):
        from .calibration import N_BINS, PRIOR_WEIGHT, RIDGE, U_MAX
        if stats is None:
            stats = np.zeros((3, N_BINS))
        n, pos, su = stats
        half = N_BINS // 2
        live = n > 0
        u = su[live] / n[live]
        f = np.sinh(u)
        nl, pl = n[live], pos[live]
        self.A, self.B = _fit_sigmoid(f, nl, pl, RIDGE)
        neg = np.flatnonzero(live) < half
        if not live.any():
            # no data at all: the sigmoid at the middle of each bin
            u = (np.arange(N_BINS) - half + 0.5) * (2.0 * U_MAX / N_BINS)
            rate = _sigmoid(self.A * np.sinh(u) + self.B)
            neg = np.arange(N_BINS) < half
        else:
            rate = _pav((pl + PRIOR_WEIGHT * _sigmoid(self.A * f + self.B))
                        / (nl + PRIOR_WEIGHT), nl + PRIOR_WEIGHT)
        rate = np.where(neg, np.minimum(rate, 0.5), np.maximum(rate, 0.5))
        self.knots_u = np.concatenate([np.minimum(u[neg], 0.0), [0.0], u[~neg]])
        self.knots_p = np.maximum.accumulate(np.concatenate([rate[neg], [0.5], rate[~neg]]))

    def __call__(self, f):
        from .calibration import P_MIN, TIE_BREAK
        u = np.arcsinh(f)
        m = np.interp(u, self.knots_u, self.knots_p)
        p = (1.0 - 2.0 * TIE_BREAK) * m + TIE_BREAK * (1.0 + u / (1.0 + np.abs(u)))
        p = np.clip(p, P_MIN, 1.0 - P_MIN)
        # the sign of f decides, as predict: p > 1/2 exactly when f > 0
        return np.where(f > 0.0, np.maximum(p, 0.5 + 1e-12), np.minimum(p, 0.5))


# ====================================================================== the predictor
class Predictor:
    """A saved fastbudget model, scored with NumPy alone (see :func:`load_predictor`).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features,), object
        Only for a model fitted on a table with string column names.
    model_class : str
        Class name of the saved learner (``'TVMClassifier'``, ``'OneVsRestClassifier'``, ...).
    """

    def __init__(self, model_class, classes, n_features, feature_names, scorers,
                 block_bytes=_BLOCK_BYTES, calibration=None):
        self.model_class = model_class
        # the learners' calibration statistics (None: none saved), one per scorer
        self._calibration = calibration
        self._maps = None
        self.classes_ = classes
        self.n_features_in_ = n_features
        if feature_names is not None:
            self.feature_names_in_ = feature_names
        self._scorers = scorers
        self._block_bytes = int(block_bytes)

    def __repr__(self):
        return (f"Predictor({self.model_class}, n_features_in_={self.n_features_in_}, "
                f"classes_={self.classes_.tolist()!r})")

    def _rows_per_block(self):
        width = max([self.n_features_in_] + [s.n_vectors for s in self._scorers])
        return max(64, self._block_bytes // (8 * width))

    def decision_function(self, X):
        """Decision values, as the saved model's ``decision_function``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) for two classes (positive means ``classes_[1]``), else
        (n_samples, n_classes), column k from the learner of ``classes_[k]``; float64.

        Raises
        ------
        ValueError
            For input the fitted model would refuse (1-D, empty, non-numeric, NaN or
            infinity, values too large for a kernel, a wrong number of features, other
            feature names), with the same message.
        """
        name = self.model_class
        _ic.check_names(X, self.__dict__.get("feature_names_in_"), name)
        arr = _ic.as_2d(X, self.n_features_in_, name)
        n = arr.shape[0]
        rows = self._rows_per_block()
        # the whole X is checked first (as the compiled path does), block by block
        for a in range(0, n, rows):
            _ic.check_block(np.asarray(arr[a:a + rows], dtype=np.float64), a)
        _ic.check_width(arr, self.n_features_in_, name)
        k = len(self._scorers)
        out = np.empty(n) if k == 1 else np.empty((n, k))
        width = max([1] + [s.n_vectors for s in self._scorers])
        scratch = _Scratch(min(rows, n), self.n_features_in_, width)
        for a in range(0, n, rows):
            Xb = np.ascontiguousarray(arr[a:a + rows], dtype=np.float64)
            if k == 1:
                self._scorers[0].score(Xb, scratch, out[a:a + rows])
            else:
                f = scratch.f[:Xb.shape[0]]
                for j, s in enumerate(self._scorers):
                    out[a:a + rows, j] = s.score(Xb, scratch, f)
        return out

    def predict(self, X):
        """Predicted labels, taken from ``classes_`` (ties between one-vs-rest learners go
        to the first class, as the fitted model's ``predict``)."""
        f = self.decision_function(X)
        if f.ndim == 1:
            return self.classes_[(f > 0).astype(np.intp)]
        return self.classes_[np.argmax(f, axis=1)]

    def predict_proba(self, X):
        """Class probabilities, as the saved model's ``predict_proba``: its online
        calibration map (``fastbudget.calibration``), fitted with NumPy from the statistics
        saved with the model, applied to the decision values (one-vs-rest: one map fitted
        on the sum of the learners' statistics for every column, the row divided by its
        sum). Within 1e-12 of the loaded model's (``tests/test_serving.py``; both fits end
        Newton's method with one full step past its stopping test, so they agree to
        rounding).

        Returns
        -------
        ndarray of shape (n_samples, n_classes), float64
            Columns in the order of ``classes_``; rows sum to 1.
        """
        f = self.decision_function(X)
        if self._maps is None:
            stats = list(self._calibration or [None] * max(1, len(self._scorers)))
            if f.ndim == 1:
                self._maps = [_Calibration(stats[0])]
            else:
                present = [a for a in stats if a is not None]
                self._maps = [_Calibration(np.sum(present, axis=0) if present else None)]
        g = self._maps[0]
        if f.ndim == 1:
            p = g(f)
            return np.column_stack([1.0 - p, p])
        P = np.column_stack([g(f[:, j]) for j in range(f.shape[1])])
        return P / P.sum(axis=1, keepdims=True)

    def compiled(self):
        """The same predictor with its kernel expansions scored by the library's compiled
        predict (``fastbudget.kernels``; imports Numba) instead of NumPy: one pass over each
        row instead of a rows x vectors matrix per block, faster alone and when several
        processes share a machine's memory (``fastbudget.distributed`` scores so;
        ``docs/results/distributed.md``). Values within 1e-12 relative of NumPy's."""
        scorers = [_CompiledExpansion(s) if isinstance(s, _Expansion) else s
                   for s in self._scorers]
        return Predictor(self.model_class, self.classes_, self.n_features_in_,
                         self.__dict__.get("feature_names_in_"), scorers, self._block_bytes,
                         self._calibration)


def load_predictor(path):
    """Read a model file written by ``model.save(path)`` for prediction with NumPy alone.

    Parameters
    ----------
    path : str or os.PathLike

    Returns
    -------
    Predictor

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ModelFormatError
        The file is damaged, foreign, inconsistent or of a newer format (the checks of
        ``fastbudget.load`` that need no learner code: members, manifest, checksum, labels,
        feature names, finiteness of the state), or it holds a state this reader cannot
        score (named in the message).

    Notes
    -----
    Every learner is scored with NumPy alone except a kernel ``StreamSVMClassifier`` with
    ``method='coreset'`` (the default for non-linear kernels) or several balls with a
    kernel or a lookahead: their final ball is an iterative solve over the core vectors
    that this module has no NumPy copy of, so such a file is loaded with ``fastbudget.load``
    and scored by its compiled ``decision_function`` (Numba is imported).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from fastbudget import PerceptronClassifier
    >>> from fastbudget.serving import load_predictor
    >>> X = np.array([[0.0, 0.0], [0.1, 0.2], [2.0, 2.0], [2.1, 1.9]])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> PerceptronClassifier(kernel="rbf", budget=10).fit(X, ["no", "no", "yes", "yes"]).save(path)
    >>> model = load_predictor(path)          # NumPy alone from here on
    >>> model.predict(np.array([[0.0, 0.1], [2.0, 2.1]])).tolist()
    ['no', 'yes']
    """
    meta, arrays = mf.read_members(path, limit=_state_limit)
    mf.check_checksum(path, meta, arrays)
    cls = meta["class"]
    if cls not in _SERVED:
        # (load's words: a class name outside fastbudget's learners is never imported)
        raise ModelFormatError(
            f"The file holds a model of class {cls!r}, which is not a known fastbudget "
            "estimator. If it is your own subclass, load it with fastbudget.load after "
            "fastbudget.persist.register_estimator(YourClass); fastbudget.serving scores "
            "fastbudget's own learners only.")
    params = {k: mf.decode_value(v, f"parameter {k}") for k, v in meta["params"].items()}
    n_features, classes, names, _ = mf.check_base(path, meta, arrays)
    inf_names = _INFINITE_OK.get(cls, ())
    if cls == "OneVsRestClassifier":
        inner = params.get("estimator")
        inner_cls = inner[0] if isinstance(inner, tuple) and len(inner) == 2 else None
        inner_inf = _INFINITE_OK.get(inner_cls, ())

        def infinite_ok(name):
            head, _, rest = name.partition(".")
            return head[:1] == "e" and head[1:].isdigit() and rest in inner_inf
    else:
        def infinite_ok(name):
            return name in inf_names
    state = mf.check_state_values(path, meta, arrays, infinite_ok)
    try:
        if cls == "OneVsRestClassifier":
            scorers = _ovr_scorers(params, state, len(classes), n_features)
        else:
            scorers = [_scorer(cls, params, state, n_features)]
    except _NeedsCompiled:
        from .persist import load_model
        return _CompiledPredictor(load_model(path, _warn_scaler=False), cls)
    except ModelFormatError as exc:
        mf.fail(path, str(exc))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        mf.fail(path, f"the stored state does not fit {cls} ({type(exc).__name__}: {exc}).")
    for s in scorers:
        for a in (getattr(s, "SV", None), getattr(s, "coef", None), getattr(s, "w", None)):
            if a is not None and not np.isfinite(a).all():
                mf.fail(path, f"the {cls} holds a non-finite coefficient or vector.")
        if not all(math.isfinite(v) for v in (getattr(s, "b", 0.0), getattr(s, "scale", 1.0))) \
                or getattr(s, "scale", 1.0) == 0.0:
            mf.fail(path, f"the {cls} holds a non-finite or zero bias or scale.")
    return Predictor(cls, classes, n_features, names, scorers,
                     calibration=_calibration_stats(path, cls, arrays, state, len(scorers)))


def _calibration_stats(path, cls, arrays, state, n_learners):
    """The calibration statistics saved with the model, one array (or None: a file from
    before calibration) per learner, checked as ``fastbudget.load`` checks them."""
    from .calibration import check_stats

    if cls == "OneVsRestClassifier":
        stats = [state.get(f"e{k}.calibration_stats") for k in range(n_learners)]
    else:
        stats = [arrays.get("base.calibration_stats")]
    for a in stats:
        if a is not None:
            try:
                check_stats(a)
            except ValueError as exc:
                mf.fail(path, str(exc))
    return stats


def _slots(cls, p):
    """The number of vectors (rows) a learner of class ``cls`` with parameters ``p`` keeps,
    at most: its budget or capacity in its own unit (None when unbounded or unknown)."""
    def count(name):
        v = p.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or not 0 < v < 2**31:
            raise ValueError(name)
        return v

    if cls == "TVMClassifier":
        return 2 * (count("budget") + 2)
    if cls in ("IncrementalSVC", "SVIncrementalClassifier"):
        return count("capacity")
    if cls in ("SpanBudgetClassifier", "RandomBudgetClassifier", "ForgetronClassifier",
               "BSGDClassifier"):
        return count("budget") + 1
    if cls == "PerceptronClassifier":
        return None if p.get("budget") is None else count("budget")
    if cls == "PegasosClassifier":
        return count("k")
    if cls == "StreamSVMClassifier":
        return count("capacity") + count("lookahead") + count("n_balls")
    return None


def _state_limit(meta):
    """A generous bound on the bytes of the state arrays a model with this metadata holds,
    from its class and parameters alone: for n kept vectors of d features, per learner
    ``16 (3 (n + 2)^2 + (n + 2) (d + 16))`` (twice the exact engine's two n x n matrices and
    bordered inverse, and the per-vector arrays), plus 1 MiB; None when unbounded
    (``fastbudget.load`` uses the learners' own closed forms instead)."""
    try:
        params = {k: mf.decode_value(v, k) for k, v in meta["params"].items()}
        n_classes = int(meta["arrays"]["base.classes_"]["shape"][0])
        d = meta["scalars"]["base.n_features_in_"]
        if not isinstance(d, int) or not 0 < d < 2**31:
            return None
        cls, p, k = meta["class"], params, 1
        if cls == "OneVsRestClassifier":
            cls, p = params["estimator"]
            k = 1 if n_classes == 2 else n_classes
            if params.get("total_budget") is not None:
                p = dict(p, budget=int(params["total_budget"]) // k)
        n = _slots(cls, p)
    except Exception:  # noqa: BLE001 - no bound; the checks that follow report the damage
        return None
    if n is None:
        return None
    return k * 16 * (3 * (n + 2) ** 2 + (n + 2) * (d + 16)) + 2**20


def _ovr_scorers(params, state, n_classes, n_features):
    inner = params.get("estimator")
    if not (isinstance(inner, tuple) and len(inner) == 2 and isinstance(inner[1], dict)):
        raise ModelFormatError("the one-vs-rest model's estimator parameter is malformed.")
    inner_cls, inner_params = inner
    n = state.get("n_estimators")
    want = 1 if n_classes == 2 else n_classes
    if not isinstance(n, int) or isinstance(n, bool) or n != want:
        raise ModelFormatError(f"n_estimators={n!r} does not match {n_classes} classes.")
    share = state.get("budget_per_estimator")
    p = dict(inner_params)
    if params.get("total_budget") is not None:
        p["budget"] = share
    subs = [{} for _ in range(n)]
    for key, v in state.items():
        if key in ("n_estimators", "budget_per_estimator"):
            continue
        head, _, rest = key.partition(".")
        if not (head[:1] == "e" and head[1:].isdigit() and int(head[1:]) < n and rest):
            raise ModelFormatError(f"unexpected state entry {key!r}.")
        subs[int(head[1:])][rest] = v
    return [_scorer(inner_cls, p, sub, n_features) for sub in subs]


# ====================================================================== per learner
def _arr(state, name, ndim=None, dtype_kind=None):
    a = state.get(name)
    if not isinstance(a, np.ndarray):
        raise ModelFormatError(f"state array {name!r} is missing.")
    if ndim is not None and a.ndim != ndim:
        raise ModelFormatError(f"state array {name!r} has {a.ndim} dimensions, not {ndim}.")
    if dtype_kind is not None and a.dtype.kind not in dtype_kind:
        raise ModelFormatError(f"state array {name!r} has dtype {a.dtype}.")
    return a


def _engine_parts(state, prefix, n_features):
    """(code, kpar, X, coef, b, hw, mu) of the exact SVM held in an engine state, as
    ``fastbudget.engine.state_decision`` scores it."""
    X = _arr(state, prefix + "X", 2, "f")
    alpha = _arr(state, prefix + "alpha", 1, "f")
    y = _arr(state, prefix + "y", 1, "f")
    status = _arr(state, prefix + "status", 1, "iu")
    ist = _arr(state, prefix + "ist", 1, "iu")
    fs = _arr(state, prefix + "fs", 1, "f")
    kpar = _arr(state, prefix + "kpar", 1, "f")
    hw = int(ist[_I_HW])
    n = X.shape[0]
    if X.shape[1] != n_features or not 0 <= hw <= n or min(alpha.shape[0], y.shape[0],
                                                              status.shape[0]) < hw \
            or kpar.shape[0] < 3 or fs.shape[0] <= _F_MU:
        raise ModelFormatError(f"the engine arrays {prefix!r} are not laid out consistently.")
    code = int(ist[_I_KCODE])
    mu = float(fs[_F_MU])
    if code not in (_LINEAR, _RBF, _POLY) or not mu > 0.0:
        raise ModelFormatError(f"the engine {prefix!r} holds an unknown kernel or margin.")
    coef = np.where(status[:hw] != _FREE, alpha[:hw] * y[:hw] / mu, 0.0)
    return code, kpar, X[:hw], coef, float(fs[_F_B]), mu


def _engine_scorer(state, prefix, n_features, b_shift=0.0):
    code, kpar, X, coef, b, mu = _engine_parts(state, prefix, n_features)
    return _Expansion(code, kpar, X, coef, b=float(b / mu) + b_shift)


def _kt_intercept(state, prefix, rtol):
    """LIBSVM's bias for an engine whose multipliers all sit at a bound (as
    ``fastbudget.kernels.span.kt_intercept``), in stored units."""
    status = _arr(state, prefix + "status", 1, "iu")
    alpha = _arr(state, prefix + "alpha", 1, "f")
    cb = _arr(state, prefix + "cb", 1, "f")
    y = _arr(state, prefix + "y", 1, "f")
    K = _arr(state, prefix + "K", 2, "f")
    fs = _arr(state, prefix + "fs", 1, "f")
    hw = int(_arr(state, prefix + "ist", 1, "iu")[_I_HW])
    mu = float(fs[_F_MU])
    if min(cb.shape[0], K.shape[0], K.shape[1]) < hw:
        raise ModelFormatError(f"the engine arrays {prefix!r} are not laid out consistently.")
    st, al, c, yy = status[:hw], alpha[:hw], cb[:hw], y[:hw]
    inside = (st == _MARGIN) & (al > rtol * c) & (al < (1.0 - rtol) * c)
    if inside.any():
        return float(fs[_F_B])
    live = (st != _FREE) & (al != 0.0)
    f0 = np.zeros(hw)
    for j in np.flatnonzero(live):          # in the compiled order (sums over j)
        f0 += (al[j] * yy[j]) * K[j, :hw]
    lo, hi = -np.inf, np.inf
    for i in range(hw):
        if st[i] not in (_MARGIN, _ERROR, _RESERVE) or c[i] <= 0.0:
            continue
        at_upper = al[i] >= (1.0 - rtol) * c[i]
        edge = yy[i] * mu - f0[i]
        if (yy[i] > 0.0) != at_upper:
            lo = max(lo, edge)
        else:
            hi = min(hi, edge)
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        return float(fs[_F_B])
    return 0.5 * (lo + hi)


def _kernel_code(params):
    kernel = params.get("kernel")
    if kernel not in _KERNEL_CODES:
        raise ModelFormatError(f"unknown kernel {kernel!r}.")
    return _KERNEL_CODES[kernel]


def _sv_store_scorer(state, params, n_features):
    """Perceptron / Forgetron / BSGD kernel models: ``_SV``, ``_coef``, ``_istate[0]`` live
    rows, ``_kpar``, the kernel named by the parameters, no bias."""
    SV = _arr(state, "_SV", 2, "f")
    coef = _arr(state, "_coef", 1, "f")
    istate = _arr(state, "_istate", 1, "iu")
    kpar = _arr(state, "_kpar", 1, "f")
    n = int(istate[0])
    if SV.shape[1] != n_features or not 0 <= n <= min(SV.shape[0], coef.shape[0]) \
            or kpar.shape[0] < 3:
        raise ModelFormatError("the support-vector arrays are not laid out consistently.")
    return _Expansion(_kernel_code(params), kpar, SV[:n], coef[:n])


def _primal_scorer(state, n_features):
    w = _arr(state, "_w", 1, "f")
    if w.shape[0] != n_features + 1:
        raise ModelFormatError(f"the weight vector has {w.shape[0]} entries, not "
                               f"{n_features + 1}.")
    return _Linear(w[:-1], w[-1])


def _scorer(cls, params, state, n_features):
    if cls in ("TVMClassifier", "IncrementalSVC", "SpanBudgetClassifier",
               "SVIncrementalClassifier"):
        if not state.get("allocated", False):
            return _Zero()
        if cls == "TVMClassifier":
            code, kpar, _, _, b, mu = _engine_parts(state, "engine_", n_features)
            Q = _arr(state, "twin_Q", 2, "f")
            coef = _arr(state, "twin_coef", 1, "f")
            if Q.shape[1] != n_features or coef.shape[0] != Q.shape[0]:
                raise ModelFormatError("the twin arrays are not laid out consistently.")
            return _Expansion(code, kpar, Q, coef, b=b, scale=mu)
        if cls == "SVIncrementalClassifier":
            fs = _arr(state, "engine_fs", 1, "f")
            kt = _kt_intercept(state, "engine_", _RUEPING_BOUND_RTOL)
            return _engine_scorer(state, "engine_", n_features,
                                  b_shift=(kt - float(fs[_F_B])) / float(fs[_F_MU]))
        return _engine_scorer(state, "engine_", n_features)
    if cls == "RandomBudgetClassifier":
        dirty = _arr(state, "_dirty", 1, "biu")
        if dirty.any():
            raise ModelFormatError(
                "this RandomBudgetClassifier was saved by an older fastbudget with examples "
                "its exact SVM had not learned yet; load it with fastbudget.load and save it "
                "again to serve it with NumPy alone.")
        return _engine_scorer(state, "_eng_", n_features)
    if cls == "PerceptronClassifier":
        if params.get("kernel") == "linear" and params.get("budget") is None:
            return _primal_scorer(state, n_features)
        return _sv_store_scorer(state, params, n_features)
    if cls in ("ForgetronClassifier", "BSGDClassifier"):
        return _sv_store_scorer(state, params, n_features)
    if cls == "PegasosClassifier":
        return _primal_scorer(state, n_features)
    if cls == "StreamSVMClassifier":
        return _streamsvm_scorer(state, n_features)
    raise ModelFormatError(
        f"the file holds a model of class {cls!r}, which fastbudget.serving cannot score "
        "(it serves fastbudget's own learners); load it with fastbudget.load.")


# ====================================================================== StreamSVM
class _NeedsCompiled(Exception):
    """The state needs a compiled solver this module has no NumPy copy of."""


class _CompiledPredictor(Predictor):
    """A model whose final solve has no NumPy copy here (StreamSVM's core-set and
    several-balls kernel models: their final ball is an iterative solve over the core
    vectors): scored by the learner's own compiled ``decision_function``, which imports
    Numba."""

    def __init__(self, est, model_class):
        super().__init__(model_class, est.classes_, est.n_features_in_,
                         est.__dict__.get("feature_names_in_"), [])
        self._est = est

    def decision_function(self, X):
        return self._est.decision_function(X)

    def predict_proba(self, X):
        return self._est.predict_proba(X)

    def compiled(self):
        return self   # (already the compiled predict)


def _streamsvm_mode(cfg):
    """``StreamSVMClassifier._mode`` of a stored configuration."""
    if cfg.get("coreset", False):
        return "coreset"
    if int(cfg["K"]) > 1 and (int(cfg["code"]) != _LINEAR or int(cfg["L"]) > 1):
        return "kmultiball"
    return "other"


def _streamsvm_scorer(state, d):
    """The final ball of a StreamSVM state (``StreamSVMClassifier._final_ball``)."""
    from . import _meb

    cfg = {k[4:]: v for k, v in state.items() if k.startswith("cfg_")}
    mode = _streamsvm_mode(cfg)
    if mode != "other":
        raise _NeedsCompiled(mode)
    st = {k[3:]: v for k, v in state.items() if k.startswith("st_")}
    kpar = [float(v) for v in cfg["kpar"]]
    code, K, b0 = int(cfg["code"]), int(cfg["K"]), float(cfg["b0"])
    inv_C = 1.0 / float(cfg["C"])
    tol = float(cfg["tol"])
    L = int(cfg["L"])
    ist = np.array(st["ist"], dtype=np.int64)
    fst = np.array(st["fst"], dtype=np.float64)
    if fst.size < _meb.FST_SIZE:          # saved before the weight floor existed
        fst = np.r_[fst, np.zeros(_meb.FST_SIZE - fst.size)]
    if code not in (_LINEAR, _RBF, _POLY):
        raise ModelFormatError(f"unknown kernel code {code!r}.")
    nb = int(ist[1])
    if code == _LINEAR and K > 1:
        Wb, Rb, xib = st["Wb"], st["Rb"], st["xib"]
        Qb = st["Qb"] if "Qb" in st else np.zeros_like(Rb)
        if not (Wb.ndim == 2 and Wb.shape[1] == d + 1 and 0 <= nb <= Wb.shape[0]
                and min(Rb.shape[0], Qb.shape[0], xib.shape[0]) >= nb):
            raise ModelFormatError("the balls are not laid out consistently.")
        w = np.zeros(d + 1)
        status = _meb.merge_balls_linear(Wb, Rb, Qb, xib, nb, inv_C, tol, w, np.zeros(_meb.FST_SIZE))
        _meb.check(status)
        return _Linear(w[:-1], w[-1] * b0)
    if not (0 <= nb <= L and st["bufX"].shape == (L, d)):
        raise ModelFormatError("the lookahead buffer is not laid out consistently.")
    buf = tuple(st[k] for k in ("bufX", "bufy", "bufs", "bufg", "bufk"))
    if code == _LINEAR:
        w = np.array(st["w"], dtype=np.float64)
        if w.shape != (d + 1,):
            raise ModelFormatError("the weight vector is not laid out consistently.")
        if nb > 0:
            _meb.check(_meb.absorb_buffer_linear(w, fst, ist, *buf, nb, inv_C, b0, tol))
        return _Linear(w[:-1], w[-1] * b0)
    M = int(ist[0])
    SVs, alpha_s, sv_s = st["SV"], st["alpha"], st["sv_s"]
    if not (SVs.ndim == 2 and SVs.shape[1] == d and 0 <= M <= SVs.shape[0]
            and min(alpha_s.shape[0], sv_s.shape[0]) >= M):
        raise ModelFormatError("the core vectors are not laid out consistently.")
    SV = np.zeros((M + nb, d))
    SV[:M] = SVs[:M]
    alpha = np.zeros(M + nb)
    alpha[:M] = alpha_s[:M]
    if nb > 0:
        _meb.check(_meb.absorb_buffer_kernel(code, kpar, b0, SV, alpha, fst, ist, *buf, nb,
                                             inv_C, tol))
    return _Expansion(code, kpar, SV, alpha, add=b0 * b0)
