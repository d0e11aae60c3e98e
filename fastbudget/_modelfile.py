"""Reading a saved model file at the format level, with the standard library and NumPy only.

This module knows the file format of ``docs/format.md`` (a zip archive of ``.npy`` members,
one of them the JSON metadata with the manifest and the checksum) and nothing about the
learners: it reads and checks the members, the metadata, the manifest, the checksum and the
labels and feature names every model has. ``fastbudget.persist`` (which rebuilds a learner)
and ``fastbudget.serving`` (which predicts with NumPy alone) both read files through it, so
a damaged or hostile file gets the same :class:`ModelFormatError` from either. It imports
neither Numba nor any other part of fastbudget.
"""
import hashlib
import json
import math
import os
import re
import stat
import tokenize
import zipfile

import numpy as np

from .exceptions import ModelFormatError

FORMAT_NAME = "fastbudget-model"
FORMAT_VERSION = 1
METADATA_KEY = "__metadata__"
_MAX_METADATA_BYTES = 16 * 2**20
_NPY_HEADER_SLACK = 4096  # an .npy header is at most a few hundred bytes
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
# dtype kinds a state array may have: bool, signed/unsigned int, float, unicode text
ALLOWED_KINDS = "biufU"
# arrays every model may hold besides its learner's state
BASE_ARRAYS = ("base.classes_", "base.class_weight_", "base.feature_names_in_",
               "base.calibration_stats")
BASE_SCALARS = ("base.n_features_in_", "base.classes_object")


def fail(path, msg):
    """Raise :class:`ModelFormatError` saying that ``path`` cannot be loaded and why."""
    raise ModelFormatError(f"Cannot load {os.fspath(path)!r}: {msg}")


# ---------------------------------------------------------------------- checksum
def digest(meta_without_checksum, arrays):
    """SHA-256 (hex) of the metadata without its ``sha256`` key and of every array
    (``docs/format.md``)."""
    h = hashlib.sha256()
    h.update(json.dumps(meta_without_checksum, sort_keys=True, separators=(",", ":")).encode())
    for name in sorted(arrays):
        a = arrays[name]
        h.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def check_checksum(path, meta, arrays):
    """Raise :class:`ModelFormatError` unless the stored checksum matches."""
    body = {k: v for k, v in meta.items() if k != "sha256"}
    if digest(body, arrays) != meta["sha256"]:
        fail(path, "checksum mismatch; the file is damaged (or was edited).")


# ---------------------------------------------------------------------- JSON values
def decode_value(v, where, nested=None):
    """A JSON value of ``params`` or ``scalars`` back to Python (the tags of
    ``docs/format.md``). ``nested(class_name, params, where)`` builds a nested estimator
    (``{"__estimator__": ...}``); without it the pair ``(class_name, params)`` is returned."""
    if isinstance(v, list):
        return [decode_value(x, where, nested) for x in v]
    if isinstance(v, dict):
        if "__float__" in v:
            if set(v) != {"__float__"} or v["__float__"] not in ("inf", "-inf", "nan"):
                raise ModelFormatError(f"Malformed float in {where}.")
            return float(v["__float__"])
        if "__tuple__" in v:
            if set(v) != {"__tuple__"} or not isinstance(v["__tuple__"], list):
                raise ModelFormatError(f"Malformed tuple in {where}.")
            return tuple(decode_value(x, where, nested) for x in v["__tuple__"])
        if "__items__" in v:
            items = v["__items__"]
            if (set(v) != {"__items__"} or not isinstance(items, list)
                    or not all(isinstance(kv, list) and len(kv) == 2 for kv in items)):
                raise ModelFormatError(f"Malformed dict in {where}.")
            out = {}
            for kv in items:
                key = decode_value(kv[0], where, nested)
                if not isinstance(key, (str, bool, int, float)):
                    raise ModelFormatError(f"Malformed dict key in {where}.")
                out[key] = decode_value(kv[1], where, nested)
            return out
        if "__estimator__" in v:
            if (set(v) != {"__estimator__", "params"} or not isinstance(v["params"], dict)
                    or not isinstance(v["__estimator__"], str)):
                raise ModelFormatError(f"Malformed nested estimator in {where}.")
            params = {k: decode_value(x, f"{where}.{k}", nested) for k, x in v["params"].items()}
            if nested is None:
                return (v["__estimator__"], params)
            return nested(v["__estimator__"], params, where)
        return {k: decode_value(x, where, nested) for k, x in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    raise ModelFormatError(f"Unexpected value in {where}.")


def has_nonfinite(v):
    """Whether a decoded scalar value (or a list/tuple/dict of them) holds NaN or +-inf."""
    if isinstance(v, (float, np.floating)):
        return not math.isfinite(float(v))
    if isinstance(v, (list, tuple)):
        return any(has_nonfinite(x) for x in v)
    if isinstance(v, dict):
        return any(has_nonfinite(x) for x in v.values())
    return False


# ---------------------------------------------------------------------- members

# bytes read from a member at once, so that reading costs no more than the arrays it fills
_PIECE = 1 << 16
# zip bookkeeping per member beside its name and data (local header 30 + central directory
# entry 46 bytes, ZIP64 extra fields and data descriptor), plus the end records
_ZIP_MEMBER_OVERHEAD = 256
_ZIP_END_OVERHEAD = 22 + 56 + 20 + 65535     # end record, ZIP64 end record + locator, comment
# nesting deeper than this in the metadata JSON is refused (a model's is at most ~6 deep)
_MAX_JSON_DEPTH = 64
# (tokenize.TokenError: NumPy re-reads an .npy header that ast cannot parse with tokenize,
# which raises it for an unclosed bracket)
_READ_ERRORS = (ValueError, OSError, EOFError, zipfile.BadZipFile, RuntimeError, TypeError,
                KeyError, SyntaxError, NotImplementedError, OverflowError, MemoryError,
                tokenize.TokenError)


def _open_regular(path):
    """Open ``path`` for reading; refuse at once anything but a regular file (a device such
    as ``/dev/zero`` or a FIFO would be read without end, or block)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) \
        | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        fail(path, f"not a fastbudget model file (not a valid .npz archive: {exc}).")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            fail(path, "not a regular file (a device, FIFO, socket or directory); a model "
                       "file is a regular file written by save.")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return fh, st.st_size


def _json_depth_ok(value, limit):
    """Whether ``value`` (parsed JSON) nests lists/objects at most ``limit`` deep
    (iterative: a deep document cannot exhaust the stack here)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (list, dict)):
            if depth > limit:
                return False
            items = v.values() if isinstance(v, dict) else v
            stack.extend((x, depth + 1) for x in items if isinstance(x, (list, dict)))
    return True


def parse_metadata(path, raw):
    """The metadata JSON object from its UTF-8 bytes, refusing invalid or deeply nested
    JSON with :class:`ModelFormatError` (never ``RecursionError``)."""
    try:
        meta = json.loads(raw.decode("utf-8"))
    except RecursionError:
        fail(path, f"metadata nests deeper than {_MAX_JSON_DEPTH} levels; the file is "
                   "damaged or hostile.")
    except (UnicodeDecodeError, ValueError) as exc:
        fail(path, f"metadata is not valid JSON ({exc}); the file is damaged.")
    if not _json_depth_ok(meta, _MAX_JSON_DEPTH):
        fail(path, f"metadata nests deeper than {_MAX_JSON_DEPTH} levels; the file is "
                   "damaged or hostile.")
    return meta


def _npy_header(fh, path, name):
    """(shape, fortran_order, dtype) from the header of an ``.npy`` member, read without
    reading the data (NumPy's own header parser, which bounds the header's length)."""
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ValueError(f"unknown .npy version {version}")
    except _READ_ERRORS as exc:
        fail(path, f"member {name!r} is damaged or not a plain array ({exc}).")
    if dtype.hasobject or dtype.kind not in ALLOWED_KINDS or dtype.fields is not None:
        fail(path, f"member {name!r} is not a plain array (dtype {dtype}).")
    return tuple(shape), bool(fortran), dtype


def _member_data(zf, info, path, name, shape, dtype, sink):
    """Read the data of one member, checking its header against ``shape`` and ``dtype``
    (the manifest's) first, and give it to ``sink(piece)`` in pieces of at most
    ``_PIECE`` bytes; refuses a member that holds less or more data than that."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    try:
        with zf.open(info) as fh:
            got_shape, fortran, got_dtype = _npy_header(fh, path, name)
            if got_dtype.str != dtype.str or got_shape != shape:
                fail(path, f"array {name!r} has dtype {got_dtype.str} and shape {got_shape}, "
                           f"but the manifest says {dtype.str} and {shape}.")
            if fortran and len(shape) > 1 and sum(n > 1 for n in shape) > 1:
                fail(path, f"array {name!r} is stored in Fortran order, which save never "
                           "writes; the file was not written by fastbudget.")
            left = nbytes
            while left > 0:
                piece = fh.read(min(left, _PIECE))
                if not piece:
                    fail(path, f"member {name!r} is truncated; the file is damaged.")
                sink(piece)
                left -= len(piece)
            if fh.read(1):
                fail(path, f"member {name!r} holds more data than its manifest entry says.")
    except ModelFormatError:
        raise
    except _READ_ERRORS as exc:
        fail(path, f"member {name!r} is damaged or not a plain array ({exc}).")


def _read_array(zf, info, path, name, shape, dtype):
    out = np.empty(shape, dtype=dtype)
    view = memoryview(out.reshape(-1).view(np.uint8)) if out.size else memoryview(b"")
    pos = [0]

    def sink(piece):
        view[pos[0]:pos[0] + len(piece)] = piece
        pos[0] += len(piece)

    _member_data(zf, info, path, name, shape, dtype, sink)
    return out


def read_members(path, limit=None):
    """Return (metadata dict, {name: array}) after the structural checks and the checksum.

    ``limit(meta)``, when given, returns the most bytes the ``state.`` arrays of a model
    with this metadata may take (or None: no bound); a manifest that declares more is
    refused before anything else is read.

    Memory stays within a few pieces of ``_PIECE`` bytes beyond the metadata until the
    checksum has been verified on data streamed from the file (a first pass); only then
    are the arrays allocated, at the manifest's sizes, and read (a second pass, checked
    against the same checksum). So a file whose checksum fails, however its members
    expand, is refused before any array is allocated. Also refused before reading: a
    file that is not a regular file, or larger than its manifest allows; a member whose
    ``.npy`` header or size differs from its manifest entry.
    """
    fh, size = _open_regular(path)
    with fh:
        try:
            zf = zipfile.ZipFile(fh)
        except _READ_ERRORS as exc:
            fail(path, f"not a fastbudget model file (not a valid .npz archive: {exc}).")
        with zf:
            return _read_archive(zf, size, path, limit)


def _read_archive(zf, size, path, limit):
    infos = {}
    for info in zf.infolist():
        name = info.filename
        if not name.endswith(".npy") or name[:-4] in infos:
            fail(path, f"unexpected member {name!r} in the archive.")
        infos[name[:-4]] = info
    if METADATA_KEY not in infos:
        fail(path, "no metadata entry; this is not a fastbudget model file.")
    minfo = infos[METADATA_KEY]
    if minfo.file_size > _MAX_METADATA_BYTES or minfo.compress_size > _MAX_METADATA_BYTES:
        fail(path, "metadata entry is implausibly large.")
    n_meta = None
    try:
        with zf.open(minfo) as fh:
            shape, _, dtype = _npy_header(fh, path, METADATA_KEY)
            if dtype != np.uint8 or len(shape) != 1:
                fail(path, "metadata entry has the wrong type.")
            n_meta = shape[0]
            if n_meta > minfo.file_size:
                fail(path, "metadata entry is larger than its member.")
            raw = fh.read(n_meta)
    except ModelFormatError:
        raise
    except _READ_ERRORS as exc:
        fail(path, f"member {METADATA_KEY!r} is damaged or not a plain array ({exc}).")
    if len(raw) != n_meta:
        fail(path, f"member {METADATA_KEY!r} is truncated; the file is damaged.")
    meta = parse_metadata(path, raw)
    check_meta_header(meta, path)
    manifest = meta["arrays"]
    if set(manifest) != set(infos) - {METADATA_KEY}:
        missing = sorted(set(manifest) - set(infos))
        extra = sorted(set(infos) - set(manifest) - {METADATA_KEY})
        fail(path, f"archive members do not match the manifest (missing {missing}, unexpected {extra}).")
    specs = {}
    bound = _ZIP_END_OVERHEAD + _ZIP_MEMBER_OVERHEAD + 2 * len(minfo.filename) \
        + minfo.file_size
    for name, spec in manifest.items():
        shape, dtype = check_spec(name, spec, path)
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if infos[name].file_size > expected + _NPY_HEADER_SLACK:
            fail(path, f"array {name!r} is larger than its manifest entry says.")
        specs[name] = (shape, dtype)
        info = infos[name]
        bound += _ZIP_MEMBER_OVERHEAD + 2 * len(info.filename) + len(info.extra) \
            + len(info.comment) + expected + _NPY_HEADER_SLACK
    if limit is not None:
        cap = limit(meta)
        declared = sum(int(np.prod(sh, dtype=np.int64)) * dt.itemsize
                       for name, (sh, dt) in specs.items() if name.startswith("state."))
        if cap is not None and declared > cap:
            fail(path, f"its manifest declares {declared} bytes of state, more than a "
                       f"{meta['class']} with the stored parameters holds (at most {cap}); "
                       "the file is damaged or hostile.")
    if size > bound:
        fail(path, f"the file ({size} bytes) is larger than the arrays its manifest lists "
                   f"allow ({bound} bytes); it is damaged or holds hidden data.")
    # first pass: the checksum over data streamed from the file, nothing allocated
    body = {k: v for k, v in meta.items() if k != "sha256"}
    if _streamed_digest(zf, infos, specs, body, path) != meta["sha256"]:
        fail(path, "checksum mismatch; the file is damaged (or was edited).")
    arrays = {name: _read_array(zf, infos[name], path, name, *specs[name]) for name in specs}
    return meta, arrays


def _streamed_digest(zf, infos, specs, body, path):
    """``digest`` computed from the members' data read in pieces (same value)."""
    h = hashlib.sha256()
    h.update(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    for name in sorted(specs):
        shape, dtype = specs[name]
        h.update(f"\0{name}\0{dtype.str}\0{shape}\0".encode())
        _member_data(zf, infos[name], path, name, shape, dtype, h.update)
    return h.hexdigest()


def check_meta_header(meta, path):
    if not isinstance(meta, dict):
        fail(path, "metadata is not a JSON object.")
    if meta.get("format") != FORMAT_NAME:
        fail(path, f"format is {meta.get('format')!r}, expected {FORMAT_NAME!r}.")
    ver = meta.get("format_version")
    if not isinstance(ver, int) or isinstance(ver, bool) or ver < 1:
        fail(path, f"invalid format_version {ver!r}.")
    if ver > FORMAT_VERSION:
        fail(
            path,
            f"written with format version {ver} (fastbudget {meta.get('library_version')}), but "
            f"this fastbudget reads up to version {FORMAT_VERSION}. Upgrade fastbudget.",
        )
    for key, typ in (("class", str), ("params", dict), ("scalars", dict), ("arrays", dict),
                     ("sha256", str)):
        if not isinstance(meta.get(key), typ):
            fail(path, f"metadata field {key!r} is missing or has the wrong type.")
    for name in meta["arrays"]:
        if not isinstance(name, str) or not NAME_RE.match(name) or name == METADATA_KEY:
            fail(path, f"bad array name {name!r} in the manifest.")
    for name in meta["scalars"]:
        if not isinstance(name, str) or not NAME_RE.match(name):
            fail(path, f"bad scalar name {name!r}.")


def check_spec(name, spec, path):
    if not isinstance(spec, dict) or set(spec) != {"shape", "dtype"}:
        fail(path, f"manifest entry of {name!r} is malformed.")
    shape = spec["shape"]
    if (not isinstance(shape, list) or len(shape) > 8
            or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**40 for s in shape)):
        fail(path, f"manifest shape of {name!r} is malformed.")
    try:
        dtype = np.dtype(spec["dtype"]) if isinstance(spec["dtype"], str) else None
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in ALLOWED_KINDS or dtype.str != spec["dtype"]:
        fail(path, f"manifest dtype of {name!r} ({spec['dtype']!r}) is not allowed.")
    return tuple(shape), dtype




def check_base(path, meta, arrays):
    """The labels and input layout every model file holds, checked.

    Returns ``(n_features, classes, feature_names, class_weight)``: ``n_features_in_`` (a
    positive int), ``classes_`` (sorted, unique, at least two; an object array of ``str``
    when the model was fitted on such labels), ``feature_names_in_`` (object array of
    ``str``, or None) and the ``'balanced'`` class weights (float64, or None). Raises
    :class:`ModelFormatError` for anything else, and for unknown ``base.`` entries.
    """
    scalars = meta["scalars"]
    n_features = scalars.get("base.n_features_in_")
    if not isinstance(n_features, int) or isinstance(n_features, bool) or n_features < 1:
        fail(path, "n_features_in_ is missing or not a positive integer.")
    classes = arrays.get("base.classes_")
    if classes is None or classes.ndim != 1 or classes.shape[0] < 2:
        fail(path, "classes_ is missing or holds fewer than two labels.")
    if classes.dtype.kind == "f" and not np.isfinite(classes).all():
        fail(path, "classes_ holds NaN or infinity.")
    if len(np.unique(classes)) != classes.shape[0] or not np.array_equal(np.unique(classes), classes):
        fail(path, "classes_ is not sorted and unique.")
    if scalars.get("base.classes_object") is True:
        classes = classes.astype(object)
    for k in arrays:
        if not k.startswith("state.") and k not in BASE_ARRAYS:
            fail(path, f"unknown array {k!r}.")
    for k in scalars:
        if not k.startswith("state.") and k not in BASE_SCALARS:
            fail(path, f"unknown scalar {k!r}.")
    balanced = arrays.get("base.class_weight_")
    if balanced is not None and (
            balanced.dtype.kind != "f" or balanced.shape != classes.shape
            or not np.isfinite(balanced).all() or (balanced < 0).any()):
        fail(path, "class_weight_ is not one finite non-negative weight per class.")
    names = arrays.get("base.feature_names_in_")
    if names is not None:
        if names.dtype.kind != "U" or names.shape != (n_features,):
            fail(path, f"feature_names_in_ is not one name (text) per feature ({n_features}).")
        names = np.array(names.tolist(), dtype=object)  # plain str, as fit records them
    return n_features, classes, names, balanced


def check_state_values(path, meta, arrays, infinite_ok, nested=None):
    """The learner's state from the file: ``{name: value}`` with every ``state.`` array
    (an owned, writeable copy) and decoded scalar. Refuses NaN anywhere and +-inf in the
    entries for which ``infinite_ok(name)`` is false."""
    state = {}
    for k, a in arrays.items():
        if k.startswith("state."):
            name = k[len("state."):]
            if a.dtype.kind == "f" and (
                np.isnan(a).any() or (not infinite_ok(name) and not np.isfinite(a).all())
            ):
                fail(path, f"state array {name!r} holds NaN or infinity.")
            state[name] = np.array(a, copy=True)  # writeable, owned
    for k, v in meta["scalars"].items():
        if k.startswith("state."):
            name = k[len("state."):]
            val = decode_value(v, f"state {name!r}", nested)
            if not infinite_ok(name) and has_nonfinite(val):
                fail(path, f"state value {name!r} is NaN or infinite.")
            state[name] = val
    return state
