"""Fuzz what fastbudget reads from files: model files (byte flips, truncation, edits of the
state arrays and of the metadata with the checksum recomputed) and data files (LIBSVM and
CSV lines with out-of-range indices, damaged compressed streams).

Whatever the bytes, ``load`` returns a model or raises ``ModelFormatError`` (a
``ValueError``); a model it returns answers ``decision_function``; a reader yields chunks or
raises ``ValueError``. Nothing else (``IndexError``, ``ZeroDivisionError``, ``KeyError``,
``MemoryError``, ``NumericalError``, ``RecursionError``, ...) may escape. The CI run is
bounded (``max_examples``); ``-m slow`` runs the same properties 20 times longer.
"""
import gzip
import io
import json
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _helpers import stream
from _modelfile_edit import read_model_file, write_model_file
import fastbudget
from fastbudget.datasets import read_csv, read_libsvm
from fastbudget.persist import ModelFormatError

CI = settings(max_examples=80, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
SLOW = settings(CI, max_examples=1200)


def _learners():
    from fastbudget import (ForgetronClassifier, IncrementalSVC, OneVsRestClassifier,
                            PerceptronClassifier, RandomBudgetClassifier,
                            SpanBudgetClassifier, StreamSVMClassifier, SVIncrementalClassifier,
                            TVMClassifier)
    return {
        "tvm": lambda: TVMClassifier(budget=12, C=1.0, gamma=0.5),
        "span": lambda: SpanBudgetClassifier(budget=12, C=1.0, gamma=0.5),
        "idsvm": lambda: IncrementalSVC(C=1.0, gamma=0.5, capacity=200),
        "svincremental": lambda: SVIncrementalClassifier(C=1.0, gamma=0.5, capacity=300),
        "random": lambda: RandomBudgetClassifier(budget=12, C=1.0, gamma=0.5, random_state=0),
        "forgetron": lambda: ForgetronClassifier(budget=12),
        "streamsvm": lambda: StreamSVMClassifier(capacity=100),
        "ovr": lambda: OneVsRestClassifier(PerceptronClassifier(budget=10)),
    }


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """One saved file per learner: (bytes, meta, arrays, rows to score)."""
    d = tmp_path_factory.mktemp("fuzz")
    out = {}
    for name, make in _learners().items():
        X, y = stream(1, n=150, n_classes=3 if name == "ovr" else 2)
        est = make()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i in range(0, 150, 50):
                est.partial_fit(X[i:i + 50], y[i:i + 50], classes=np.unique(y))
        path = d / f"{name}.npz"
        est.save(path)
        meta, arrays = read_model_file(path)
        out[name] = (path.read_bytes(), meta, arrays, X[:10])
    return out


def _load_or_refuse(path, X):
    """Load ``path``: a ModelFormatError, or a model that scores ``X`` (a ValueError from
    decision_function counts as clear too). Anything else fails the test."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = fastbudget.load(path)
    except ModelFormatError as exc:
        assert str(exc).startswith("Cannot load")
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model.decision_function(X)
        except ValueError:
            pass
    return True


LEARNER = st.sampled_from(sorted(_learners()))


def _check_flips(models, tmp_path, name, flips):
    raw, _, _, X = models[name]
    b = bytearray(raw)
    for pos, mask in flips:
        b[pos % len(b)] ^= mask
    path = tmp_path / "flipped.npz"
    path.write_bytes(bytes(b))
    _load_or_refuse(path, X)


FLIPS = st.lists(st.tuples(st.integers(0, 2**31), st.integers(1, 255)), min_size=1, max_size=6)


# (the properties are closures over the fixture, so that a failure report does not print
# the model files)
def test_byte_flips(models, tmp_path):
    @CI
    @given(name=LEARNER, flips=FLIPS)
    def prop(name, flips):
        _check_flips(models, tmp_path, name, flips)
    prop()


def test_truncation(models, tmp_path):
    @CI
    @given(name=LEARNER, frac=st.floats(0, 1, exclude_max=True))
    def prop(name, frac):
        raw, _, _, X = models[name]
        path = tmp_path / "cut.npz"
        path.write_bytes(raw[:int(frac * len(raw))])
        assert not _load_or_refuse(path, X)
    prop()


def _value(kind):
    if kind in "iu":
        return st.one_of(st.integers(-3, 40), st.integers(-2**62, 2**62))
    if kind == "b":
        return st.booleans()
    if kind == "f":
        return st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                         st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-300, 1e300, 0.5]))
    return st.text(max_size=4)


@st.composite
def _array_edits(draw, models):
    name = draw(LEARNER)
    _, meta, arrays, X = models[name]
    keys = sorted(k for k, a in arrays.items() if a.size)
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(keys))
        a = arrays[key]
        flat = draw(st.integers(0, a.size - 1))
        edits.append((key, flat, draw(_value(a.dtype.kind))))
    return name, edits


def _write_edit(models, tmp_path, name, edits, meta_edit=None):
    _, meta, arrays, X = models[name]
    arrays = {k: np.array(a, copy=True) for k, a in arrays.items()}
    meta = json.loads(json.dumps(meta))
    for key, flat, v in edits:
        a = arrays[key]
        try:
            with np.errstate(all="ignore"):
                a.reshape(-1)[flat] = v
        except (OverflowError, ValueError):
            a.reshape(-1)[flat] = 0
    if meta_edit is not None:
        meta_edit(meta)
    path = tmp_path / "edited.npz"
    write_model_file(path, meta, arrays)
    return path, X


def test_array_edits_with_a_valid_checksum(models, tmp_path):
    @CI
    @given(case=_array_edits(models))
    def prop(case):
        name, edits = case
        path, X = _write_edit(models, tmp_path, name, edits)
        _load_or_refuse(path, X)
    prop()


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats()
                    | st.text(max_size=6),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)


def test_metadata_edits_with_a_valid_checksum(models, tmp_path):
    """Scalars, parameters and header fields replaced by arbitrary JSON (the checksum
    recomputed): refused or loaded, never another exception."""
    @CI
    @given(name=LEARNER, section=st.sampled_from(["scalars", "params", "top"]),
           pick=st.integers(0, 1000), value=JSON)
    def prop(name, section, pick, value):
        def edit(meta):
            where = meta if section == "top" else meta[section]
            keys = sorted(k for k in where if k not in ("arrays", "sha256"))
            if keys:
                where[keys[pick % len(keys)]] = value
        path, X = _write_edit(models, tmp_path, name, [], edit)
        _load_or_refuse(path, X)
    prop()


# ---------------------------------------------------------------------- data files
INDEX = st.one_of(st.integers(0, 12), st.integers(0, 10**13))
VALUE = st.sampled_from(["0.5", "-1", "1e3", "nan", "inf", "x", "", "1e400"])


@st.composite
def libsvm_text(draw):
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        label = draw(st.sampled_from(["+1", "-1", "0", "x", ""]))
        idx = sorted(draw(st.lists(INDEX, max_size=4)))
        lines.append(" ".join([label] + [f"{i}:{draw(VALUE)}" for i in idx]))
    return "\n".join(lines)


def _consume(reader):
    n = 0
    for X, y in reader:
        assert X.dtype == np.float64 and X.ndim == 2 and np.isfinite(X).all()
        n += X.shape[0]
    return n


def _damaged_gz(text, flips):
    raw = bytearray(gzip.compress(text.encode()))
    for pos, mask in flips:
        raw[pos % len(raw)] ^= mask
    return bytes(raw)


@CI
@given(text=libsvm_text(), gz=st.booleans(), flips=st.lists(
    st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=2),
    chunk=st.integers(1, 4))
def test_libsvm_reader_indices_and_damaged_gzip(tmp_path, text, gz, flips, chunk):
    """Indices up to 10^13 (beyond the 10^6 features inferred at most: refused naming the
    line, never a huge allocation) and gzip streams with flipped bytes: ValueError or
    chunks, nothing else."""
    data = _damaged_gz(text, flips) if gz else text.encode()
    path = tmp_path / ("f.svm.gz" if gz else "f.svm")
    path.write_bytes(data)
    for src in (str(path), io.BytesIO(data)):
        try:
            _consume(read_libsvm(src, chunk_size=chunk))
        except ValueError as exc:
            assert str(exc)


@CI
@given(rows=st.lists(st.lists(VALUE, min_size=1, max_size=4).map(",".join), max_size=6),
       flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 255)), max_size=2))
def test_csv_reader_damaged_gzip(tmp_path, rows, flips):
    data = _damaged_gz("\n".join(rows), flips)
    path = tmp_path / "f.csv.gz"
    path.write_bytes(data)
    try:
        _consume(read_csv(str(path), chunk_size=3))
    except ValueError as exc:
        assert str(exc)


# ---------------------------------------------------------------------- longer runs
@pytest.mark.slow
def test_byte_flips_long(models, tmp_path):
    @SLOW
    @given(name=LEARNER, flips=FLIPS)
    def prop(name, flips):
        _check_flips(models, tmp_path, name, flips)
    prop()


@pytest.mark.slow
def test_array_edits_long(models, tmp_path):
    @SLOW
    @given(case=_array_edits(models))
    def prop(case):
        name, edits = case
        path, X = _write_edit(models, tmp_path, name, edits)
        _load_or_refuse(path, X)
    prop()
