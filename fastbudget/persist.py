"""Saving and loading fitted models: one ``.npz`` file, arrays plus JSON metadata, no pickle.

The format is documented in ``docs/format.md``. In short, the file is a zip archive written by
``numpy.savez`` (uncompressed) that holds

- ``__metadata__.npy``: a ``uint8`` array, the UTF-8 bytes of a JSON object (format name and
  version, library version, class name, hyper-parameters, scalar state, the manifest of every
  array with its shape and dtype, and a SHA-256 checksum);
- one ``.npy`` member per state array, named ``base.<name>`` (``classes_``, and when the model
  has them ``class_weight_`` and ``feature_names_in_``) or ``state.<name>`` (the learner's
  ``_get_state()``).

Loading reads nothing with ``allow_pickle``, resolves the class by name in a registry of
fastbudget estimators (never by importing a name found in the file), and checks the format
name and version, the member list, the declared sizes (before reading), every shape and dtype,
the checksum and finiteness before it builds the model. Any failure raises
:class:`ModelFormatError` (a ``ValueError``) and no model is returned.

Writing is atomic: the file is written under a temporary name in the destination directory,
flushed to disk, then renamed over ``path``; a crash at any point leaves either the previous
file or the new one, never a mixture.
"""
import importlib
import contextlib
import json
import math
import os
import tempfile

import numpy as np

from ._invariants import check_invariants
from ._modelfile import (ALLOWED_KINDS as _ALLOWED_KINDS, FORMAT_NAME, FORMAT_VERSION,
                         METADATA_KEY, NAME_RE as _NAME_RE, check_base,
                         check_checksum, check_state_values, decode_value, digest as _digest,
                         fail as _fail, has_nonfinite as _has_nonfinite,
                         read_members as _read_members)
from ._registry import estimator_modules
from .exceptions import ModelFormatError, ModelLockedError, NotFittedError  # noqa: F401

# Modules that define estimators (``fastbudget._registry``); imported lazily (only these, never
# names from a file) when a class name is not registered yet. Missing modules are ignored.
_ESTIMATOR_MODULES = estimator_modules()

_REGISTRY = {}


def _is_budget_classifier(cls):
    """Whether ``cls`` is ``fastbudget.base.BudgetClassifier`` or a subclass of it.

    Read from the class's method resolution order rather than with ``issubclass``: this
    module sits below ``fastbudget.base`` (whose ``save``, ``load`` and class registration
    call it), so it does not import it.
    """
    return isinstance(cls, type) and any(
        k.__module__ == "fastbudget.base" and k.__qualname__ == "BudgetClassifier"
        for k in cls.__mro__)


def register_estimator(cls):
    """Allow ``load`` to rebuild instances of ``cls`` (a ``BudgetClassifier`` subclass).

    fastbudget's own classes register themselves; call this for your own subclasses.
    Returns ``cls`` (usable as a decorator).
    """
    if not _is_budget_classifier(cls):
        raise TypeError(f"register_estimator expects a BudgetClassifier subclass, got {cls!r}.")
    _REGISTRY[cls.__name__] = cls
    return cls


def _lookup_class(name):
    if name not in _REGISTRY:
        for mod in _ESTIMATOR_MODULES:
            try:
                importlib.import_module(mod)
            except ImportError:
                pass
    cls = _REGISTRY.get(name)
    if cls is None:
        raise ModelFormatError(
            f"The file holds a model of class {name!r}, which is not a known fastbudget "
            "estimator. If it is your own subclass, call "
            "fastbudget.persist.register_estimator(YourClass) before loading."
        )
    return cls


# ---------------------------------------------------------------------- JSON encoding
def _encode_value(v, where):
    """Hyper-parameter or scalar state -> JSON-able value (tagged where types would be lost)."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (np.bool_,)):
        return bool(v)
    if isinstance(v, numbers_integral()):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isfinite(f):
            return f
        return {"__float__": repr(f)}
    if isinstance(v, tuple):
        return {"__tuple__": [_encode_value(x, where) for x in v]}
    if isinstance(v, list):
        return [_encode_value(x, where) for x in v]
    if isinstance(v, dict):
        if all(isinstance(k, str) and not (k.startswith("__") and k.endswith("__")) for k in v):
            return {k: _encode_value(x, where) for k, x in v.items()}
        # other keys (class_weight keyed by int or float labels, or a label like '__x__'):
        # a list of [key, value] pairs, so that every key keeps its JSON type
        for k in v:
            if not isinstance(k, (str, bool, int, float, np.integer, np.floating, np.bool_)):
                raise ValueError(
                    f"{where}: dict key {k!r} cannot be saved (keys must be strings, numbers or "
                    "booleans).")
        return {"__items__": [[_encode_value(k, where), _encode_value(x, where)]
                              for k, x in v.items()]}
    if _is_budget_classifier(type(v)):
        return {
            "__estimator__": type(v).__name__,
            "params": {k: _encode_value(x, f"{where}.{k}") for k, x in v.get_params(deep=False).items()},
        }
    raise ValueError(
        f"{where}={v!r} cannot be saved (only numbers, strings, booleans, None, lists, tuples, "
        "dicts and fastbudget estimators can). For random_state pass an int seed instead of a "
        "Generator or RandomState."
    )


def numbers_integral():
    return (int, np.integer)


def _nested_estimator(name, params, where):
    return _construct(_lookup_class(name), params, where)


def _decode_value(v, where):
    return decode_value(v, where, _nested_estimator)


def _construct(cls, params, where):
    valid = set(cls._get_param_names())
    if not isinstance(params, dict) or set(params) - valid:
        raise ModelFormatError(
            f"{where}: parameters {sorted(set(params) - valid)} are not parameters of "
            f"{cls.__name__} (valid: {sorted(valid)}); the file was written by another version "
            "or is damaged."
        )
    try:
        return cls(**params)
    except Exception as exc:
        raise ModelFormatError(f"{where}: could not construct {cls.__name__}: {exc}") from None


def _infinite_ok(est):
    """Predicate: may the state entry of this name hold +-inf? (never NaN; the estimator
    says, e.g. TVM's empty nearest-merge-neighbour slots, also inside a one-vs-rest wrapper)."""
    ask = getattr(est, "_state_may_be_infinite", None)
    if ask is not None:
        return ask
    names = set(getattr(est, "_state_nonfinite_ok", ()))
    return names.__contains__


# ---------------------------------------------------------------------- save
def _collect(est):
    """Full state of a fitted estimator: (arrays, scalars) with namespaced keys."""
    if not est.__sklearn_is_fitted__():
        raise NotFittedError(
            f"This {type(est).__name__} instance is not fitted yet; there is no model to save."
        )
    state = est._get_state()
    if not isinstance(state, dict):
        raise TypeError(f"{type(est).__name__}._get_state() must return a dict.")
    arrays, scalars = {}, {}
    classes = np.asarray(est.classes_)
    classes_kind = classes.dtype.kind
    if classes_kind == "O":
        if not all(isinstance(c, str) for c in classes.tolist()):
            raise ValueError(
                "classes_ holds objects that are neither numbers nor strings; such labels cannot "
                "be saved without pickle. Use integer or string labels."
            )
        classes = classes.astype(str)
    arrays["base.classes_"] = classes
    balanced = est.__dict__.get("_balanced_weights")
    if balanced is not None:
        # the weights fit computed for class_weight='balanced' (class_weight_)
        arrays["base.class_weight_"] = np.asarray(balanced, dtype=np.float64)
    names = est.__dict__.get("feature_names_in_")
    if names is not None:
        # the column names the model was started on (a fixed-width unicode array)
        stored = np.array([str(n) for n in names], dtype=str)
        if stored.tolist() != [str(n) for n in names]:
            raise ValueError(
                "feature_names_in_ holds a name ending in a NUL character, which a unicode "
                "array cannot store; rename that column before fitting.")
        arrays["base.feature_names_in_"] = stored
    calib = est.__dict__.get("_calibration_stats")
    if calib is not None:
        # the online calibration map's statistics (fastbudget.calibration); absent from
        # files written before it existed, which load with empty statistics
        arrays["base.calibration_stats"] = np.asarray(calib, dtype=np.float64)
    scalars["base.n_features_in_"] = int(est.n_features_in_)
    scalars["base.classes_object"] = classes_kind == "O"
    inf_ok = _infinite_ok(est)
    for k, v in state.items():
        if not isinstance(k, str) or not _NAME_RE.match(k):
            raise ValueError(f"{type(est).__name__}._get_state(): bad state name {k!r}.")
        if isinstance(v, np.ndarray):
            if v.dtype.kind not in _ALLOWED_KINDS:
                raise ValueError(
                    f"State array {k!r} has dtype {v.dtype}; only bool, integer, float and "
                    "unicode arrays can be saved (no object arrays)."
                )
            if v.dtype.kind == "f":
                bad = np.isnan(v).any() or (not inf_ok(k) and not np.isfinite(v).all())
                if bad:
                    raise ValueError(
                        f"The model state is corrupted: array {k!r} holds NaN or infinity. "
                        "Not saving it, so any previous file stays intact; refit the model."
                    )
            arrays["state." + k] = v
        else:
            enc = _encode_value(v, f"state {k!r}")
            if not inf_ok(k) and _has_nonfinite(v):
                raise ValueError(
                    f"The model state is corrupted: scalar {k!r} is NaN or infinite. Not saving it."
                )
            scalars["state." + k] = enc
    return arrays, scalars


def _metadata(est, arrays, scalars):
    from . import __version__

    params = {k: _encode_value(v, f"parameter {k}") for k, v in est.get_params(deep=False).items()}
    meta = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "class": type(est).__name__,
        "params": params,
        "scalars": scalars,
        "arrays": {k: {"shape": list(a.shape), "dtype": a.dtype.str} for k, a in arrays.items()},
    }
    meta["sha256"] = _digest(meta, arrays)
    return meta


def _file_mode(path):
    """The permissions of a saved model: those of the file it replaces, else what ``open``
    would give a new file (0666 less the umask; ``mkstemp`` makes its file 0600)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


@contextlib.contextmanager
def atomic_file(path, mode="wb"):
    """Open a temporary file beside ``path`` for writing; on a normal exit it is flushed to
    disk, given ``path``'s permissions (``_file_mode``) and renamed to ``path``; on an
    exception it is removed and ``path`` is left as it was. A reader sees the previous file
    or the complete new one, never a part. Used for models, scaler sidecars and the
    command line's prediction files."""
    path = os.fsdecode(os.fspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(
            21, f"{path!r} is a directory; pass a file name, e.g. "
            f"{os.path.join(path, 'model.npz')!r}", path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                                   suffix=".tmp")
    except FileNotFoundError as exc:
        # (the error would name the temporary file, which the caller never gave)
        raise FileNotFoundError(
            exc.errno, f"the directory {directory!r} does not exist; create it first, or pass "
            f"a path in an existing directory", path) from None
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot write {path!r}: {exc.strerror}", path) from None
    try:
        try:
            with os.fdopen(fd, mode) as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, _file_mode(path))
            os.replace(tmp, path)
        except OSError as exc:
            if exc.filename is not None or exc.errno is None:
                raise
            # a failed write (ENOSPC: disk full, EDQUOT, EIO) names the file it was for
            raise type(exc)(exc.errno, f"cannot write {path!r}: {exc.strerror}", path) from None
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


#: ``model_lock`` locks ``<model><LOCK_SUFFIX>``, a file beside the model.
LOCK_SUFFIX = ".lock"


def _lock_holder(fd):
    """The process id the holder of a lock file wrote in it (None when unknown)."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def model_lock(path, *, wait=True, on_wait=None):
    """Hold an exclusive lock on the model file ``path`` (a context manager).

    ``save`` replaces a file atomically but takes no lock: two processes that each load
    a model, learn and save it lose one of the two updates (the second rename wins). Run
    such a read-modify-write under this lock (the command line's ``update`` and ``train``
    do)::

        with fastbudget.persist.model_lock("m.npz"):
            model = fastbudget.load("m.npz")
            model.partial_fit(X, y)
            model.save("m.npz")

    The lock is ``fcntl.flock`` on ``<path>.lock``, created beside the model (it holds the
    holder's process id) and removed on release; it is advisory, so it protects only
    against writers that take it too. On a system without ``fcntl`` (Windows) it does
    nothing. The lock is released when the process ends, also by a crash.

    Parameters
    ----------
    path : str or os.PathLike
        The model file (which need not exist yet).
    wait : bool, default True
        Wait for another holder to release the lock; False raises ``ModelLockedError`` at
        once instead.
    on_wait : callable, optional
        Called once as ``on_wait(pid)`` before waiting (``pid`` the holder's process id,
        or None when unknown), e.g. to print a message.

    Raises
    ------
    ModelLockedError
        ``wait=False`` and another process holds the lock.
    """
    try:
        import fcntl
    except ImportError:         # no flock: no lock (documented)
        yield
        return
    lock_path = os.fsdecode(os.fspath(path)) + LOCK_SUFFIX
    told = False
    while True:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise type(exc)(exc.errno, f"cannot create the lock file {lock_path!r}: "
                                       f"{exc.strerror}", lock_path) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _lock_holder(fd)
                if not wait:
                    raise ModelLockedError(
                        f"{os.fspath(path)!r} is locked by another process"
                        + (f" (pid {pid})" if pid else "") + f" that is writing it (lock "
                        f"file {lock_path!r}); try again when it has finished.") from None
                if on_wait is not None and not told:
                    on_wait(pid)
                    told = True
                fcntl.flock(fd, fcntl.LOCK_EX)
            # the holder before us removes the file before it releases it: a lock on a
            # removed file (or one another process has since created anew) is no lock
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(lock_path))
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
        except BaseException:
            os.close(fd)
            raise
        break
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        try:
            os.unlink(lock_path)
        except OSError:
            pass
        os.close(fd)        # (releases the lock)


def save_model(est, path):
    """Write ``est`` to ``path`` atomically; see the module docstring and docs/format.md.
    A fitted model whose hyper-parameters were changed after fitting is refused (nothing
    is written): the file would hold parameters its state was not built from."""
    kept = getattr(est, "_check_params_kept", None)
    if kept is not None:
        kept("save writes that model")
    arrays, scalars = _collect(est)
    meta = _metadata(est, arrays, scalars)
    blob = np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    with atomic_file(path) as fh:
        np.savez(fh, **{METADATA_KEY: blob}, **arrays)


# ---------------------------------------------------------------------- load
def _state_limit(meta):
    """The most bytes the state arrays of a model with this metadata may declare: twice
    the learner's closed-form ``memory_bytes()`` for its stored parameters, number of
    features and classes, plus 1 MiB; None (no bound) for a learner whose memory is not a
    closed form of its parameters (growable stores, StreamSVM's core vectors) or when the
    metadata is too damaged to tell (the checks after this one say what is wrong). Nothing
    is allocated: the learner is built from its parameters alone."""
    try:
        cls = _lookup_class(meta["class"])
        params = {k: _decode_value(v, f"parameter {k}") for k, v in meta["params"].items()}
        est = _construct(cls, params, "parameters")
        est._validate_common_params()
        est._validate_params()
        n_classes = int(meta["arrays"]["base.classes_"]["shape"][0])
        n_features = meta["scalars"]["base.n_features_in_"]
        if not isinstance(n_features, int) or n_features < 1 or n_classes < 2:
            return None
        learners = [est]
        if hasattr(est, "_new_learner"):            # one-vs-rest: its learners' shells
            est.classes_ = np.arange(n_classes)
            learners = [est._new_learner() for _ in range(est._n_learners())]
        total = 0
        for sub in learners:
            if getattr(sub, "_growable", ()):
                return None
            sub.classes_ = np.arange(2)
            sub.n_features_in_ = n_features
            total += int(sub.memory_bytes())
    except Exception:  # noqa: BLE001 - no bound; the checks that follow report the damage
        return None
    return 2 * total + 2**20


def _check_engines(state, n_features):
    """Check every exact-SVM engine state in ``state`` (the arrays named ``<prefix>X``,
    ``<prefix>status``, ``<prefix>S_idx``, ...; learners store them under ``engine_``,
    ``_eng_`` and, inside a one-vs-rest model, ``e<k>.`` before that) with
    ``engine.check_state_arrays``. (Partial copies of an engine's vectors, such as Span's
    snapshot buffer, are checked by their learner's ``_check_state``.)"""
    from .engine import check_state_arrays

    for key in state:
        prefix = key[:-len("status")]
        if key.endswith("status") and prefix + "S_idx" in state and prefix + "X" in state:
            check_state_arrays(lambda f: state.get(prefix + f), n_features)


def load_model(path, expected_class=None, *, _warn_scaler=True):
    """Load a model written by :func:`save_model` / ``BudgetClassifier.save``.

    Parameters
    ----------
    path : str or os.PathLike
    expected_class : type, optional
        When given, the file must hold an instance of this class (or a subclass).

    A model that ``fastbudget train`` trained on standardised rows (its ``<path>.scaler.json``
    says so) warns that X must be standardised the same way: see :func:`load_scaler`.

    Returns
    -------
    BudgetClassifier
        A fitted model that continues exactly where the saved one stopped.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ModelFormatError
        The file is damaged, foreign, inconsistent, of a newer format, or of another class.
    """
    try:
        return _load_model(path, expected_class, _warn_scaler)
    except ModelFormatError as exc:
        if str(exc).startswith("Cannot load"):
            raise
        _fail(path, str(exc))          # (raised while decoding: name the file too)
    except NotImplementedError as exc:
        # zipfile: a damaged header that names an unknown zip version or compression
        _fail(path, f"not a fastbudget model file (not a valid .npz archive: {exc}).")


def _load_model(path, expected_class, _warn_scaler):
    meta, arrays = _read_members(path, limit=_state_limit)
    check_checksum(path, meta, arrays)
    cls = _lookup_class(meta["class"])
    if expected_class is not None and not issubclass(cls, expected_class):
        _fail(
            path,
            f"it holds a {cls.__name__}, not a {expected_class.__name__}; use "
            "fastbudget.persist.load_model (fastbudget.load) to load any model.",
        )
    params = {k: _decode_value(v, f"parameter {k}") for k, v in meta["params"].items()}
    est = _construct(cls, params, "parameters")
    try:
        # the checks fit runs: a fitted model keeps its hyper-parameters unchecked (partial_fit
        # re-checks only those assigned since), so a bad value in the file (kernel 'x',
        # budget -3, lambda_ NaN) would otherwise surface as a KeyError in predict, an
        # IndexError in partial_fit or non-finite decision values
        est._validate_common_params()
        est._validate_params()
    except (ValueError, TypeError) as exc:
        _fail(path, f"the stored hyper-parameters are invalid ({exc}); the file was edited "
                    "or is damaged.")
    n_features, classes, names, balanced = check_base(path, meta, arrays)
    state = check_state_values(path, meta, arrays, _infinite_ok(est), _nested_estimator)
    calib = arrays.get("base.calibration_stats")
    if calib is not None:
        from .calibration import check_stats

        try:
            check_stats(calib)
        except ValueError as exc:
            _fail(path, str(exc) + ".")
    est.classes_ = classes
    est.n_features_in_ = n_features
    if calib is not None:
        est._calibration_stats = np.array(calib, dtype=np.float64)
    elif est._calibrates:
        from .calibration import new_stats

        est._calibration_stats = new_stats()    # a file from before calibration: no data
    if names is not None:
        est.feature_names_in_ = names
    if balanced is not None:
        est._balanced_weights = np.array(balanced, dtype=np.float64)
    try:
        check = getattr(est, "_check_state", None)
        if check is not None:
            check(state)
        _check_engines(state, n_features)
        check_invariants(est, state)      # (fastbudget._invariants: consistency, not layout)
        est._set_state(state)
        est._snapshot_params()
    except ModelFormatError:
        raise
    except Exception as exc:
        _fail(path, f"the stored state does not fit {cls.__name__} ({type(exc).__name__}: {exc}).")
    if _warn_scaler:
        _warn_if_standardised(path)
    return est


load = load_model

#: ``fastbudget train`` saves the standardisation of its input beside the model, in
#: ``<model><SCALER_SUFFIX>`` (JSON; its fields are described in ``fastbudget.cli.scaler``).
SCALER_SUFFIX = ".scaler.json"


def read_scaler_file(model_path):
    """The scaler file the command line saved beside a model, checked.

    Returns ``(path, doc)``: the file's path, and its JSON object with ``mean`` and ``scale``
    as float64 arrays and ``clip`` a float or None when the model was trained on
    standardised data (``doc['mean']`` None when it was trained on the data as given), or
    None when there is no such file. Raises ``ModelFormatError`` when it cannot be read or
    is inconsistent.
    """
    path = os.fspath(model_path) + SCALER_SUFFIX
    if not os.path.exists(path):
        return path, None
    try:
        with open(path) as f:
            doc = json.load(f)
        if not isinstance(doc, dict):
            raise ValueError("it does not hold a JSON object")
        if doc.get("libsvm_zero_based") not in (None, True, False):
            raise ValueError("libsvm_zero_based is not true, false or null")
        if doc.get("mean") is not None:
            clip = doc.get("clip")
            doc = dict(doc, mean=np.asarray(doc["mean"], dtype=np.float64),
                       scale=np.asarray(doc["scale"], dtype=np.float64),
                       clip=None if clip is None else float(clip))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ModelFormatError(f"cannot read the scaler file {path}: {exc}") from None
    if doc.get("mean") is not None:
        mean, scale, clip = doc["mean"], doc["scale"], doc["clip"]
        if (mean.shape != scale.shape or mean.ndim != 1 or not np.isfinite(mean).all()
                or not np.all(scale > 0) or not np.isfinite(scale).all()
                or (clip is not None and not clip > 0)):
            raise ModelFormatError(f"the scaler file {path} is inconsistent; delete it or "
                                   "retrain.")
    return path, doc


def load_scaler(model_path):
    """The standardisation ``fastbudget train`` applied to a model's input, for Python.

    A model trained by the command line was fitted on standardised rows (``--standardize
    warmup``, the default, or ``pass``); ``fastbudget predict`` and the other commands read
    ``<model>.scaler.json`` and apply it, ``fastbudget.load`` does not. Pass the rows through
    the returned standardiser first::

        model = fastbudget.load("m.npz")
        scaler = fastbudget.load_scaler("m.npz")
        model.predict(scaler.transform(X))

    Parameters
    ----------
    model_path : str or os.PathLike
        The model file (not the scaler file) as given to ``fastbudget train -o``.

    Returns
    -------
    StreamingStandardizer or None
        Fitted and frozen, with the saved ``mean_``, ``scale_`` and ``clip`` (``var_`` is
        ``scale_ ** 2``); None when the model was trained on the data as given
        (``--standardize none``).

    Raises
    ------
    FileNotFoundError
        No scaler file beside the model (a model saved from Python, or a scaler file not
        copied with the model).
    ModelFormatError
        The scaler file cannot be read or is inconsistent.
    """
    from .datasets import StreamingStandardizer

    path, doc = read_scaler_file(model_path)
    if doc is None:
        raise FileNotFoundError(
            2, f"no scaler file beside the model (models saved from Python have none; the "
               f"command line writes {os.path.basename(path)!r} next to its model, copy it "
               f"with the model)", path)
    if doc.get("mean") is None:
        return None
    out = StreamingStandardizer(n_warmup=None, clip=doc["clip"])
    out.mean_ = doc["mean"]
    out.scale_ = doc["scale"]
    out.var_ = doc["scale"] ** 2
    n = doc.get("n_rows")
    out.n_samples_seen_ = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else 0
    out.frozen_ = True
    return out


def _warn_if_standardised(path):
    """``load``'s warning for a model the command line trained on standardised rows: in
    Python they must be standardised as well, or every prediction is made on the wrong
    scale (silently)."""
    import warnings

    try:
        _, doc = read_scaler_file(path)
    except ModelFormatError:
        return                      # a damaged file is the command line's to report
    if doc is None or doc.get("mean") is None:
        return
    p = os.fspath(path)
    warnings.warn(
        f"{p!r} was trained by the command line on standardised rows: standardise X as "
        f"'fastbudget predict' does, with fastbudget.load_scaler({p!r}).transform(X), before "
        f"predict, decision_function or partial_fit.",
        UserWarning, stacklevel=3)
