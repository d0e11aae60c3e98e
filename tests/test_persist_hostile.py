"""Hostile model files (issue 30, items 2 and 3): refused with ModelFormatError before the
allocation they ask for, with bounded memory; every attack file is built here.

The peak memory of a refused load is measured in a fresh subprocess with ``tracemalloc``
(NumPy reports its buffers to it) and compared with the legitimate model's size.
"""
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

from fastbudget import _modelfile as mf
from fastbudget.persist import ModelFormatError, load_model
from fastbudget.serving import load_predictor

LOADERS = {"load": load_model, "serving": load_predictor}


@pytest.fixture(scope="module")
def legit(tmp_path_factory):
    """A TVM model of a few MB (its exact engine holds (2B+5)^2 matrices)."""
    from fastbudget.estimators.tvm import TVMClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 10))
    y = (X[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(int)
    path = tmp_path_factory.mktemp("hostile") / "tvm.npz"
    TVMClassifier(budget=150, C=1.0, random_state=0).fit(X, y).save(path)
    return path


def _members(path):
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays.pop(mf.METADATA_KEY).tobytes())
    return meta, arrays


def _npy_header(shape, dtype):
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.dtype(dtype).str, "fortran_order": False, "shape": tuple(shape)})
    return buf.getvalue()


def _write(path, meta, members, *, compress=()):
    """Write a model archive: ``members`` maps a name to an array, or to a pair
    (header bytes, iterable of data pieces) written as they come (so that a huge member
    is never held in memory); names in ``compress`` are deflated."""
    blob = json.dumps(meta).encode()
    with zipfile.ZipFile(path, "w", allowZip64=True) as zf:
        with zf.open(mf.METADATA_KEY + ".npy", "w") as fh:
            fh.write(_npy_header((len(blob),), np.uint8) + blob)
        for name, v in members.items():
            ctype = zipfile.ZIP_DEFLATED if name in compress else zipfile.ZIP_STORED
            info = zipfile.ZipInfo(name + ".npy", date_time=(2026, 11, 25, 0, 0, 0))
            info.compress_type = ctype
            with zf.open(info, "w", force_zip64=True) as fh:
                if isinstance(v, np.ndarray):
                    fh.write(_npy_header(v.shape, v.dtype) + np.ascontiguousarray(v).tobytes())
                else:
                    header, pieces = v
                    fh.write(header)
                    for p in pieces:
                        fh.write(p)


def _sign(meta, arrays, extra=None):
    """The checksum over ``arrays`` (and ``extra``: name -> (shape, dtype, pieces), data
    streamed), written into ``meta`` as an attacker who knows the format would."""
    meta["arrays"] = {k: {"shape": list(a.shape), "dtype": a.dtype.str} for k, a in arrays.items()}
    for name, (shape, dtype, _) in (extra or {}).items():
        meta["arrays"][name] = {"shape": list(shape), "dtype": np.dtype(dtype).str}
    body = {k: v for k, v in meta.items() if k != "sha256"}
    h = hashlib.sha256()
    h.update(json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    names = sorted(set(arrays) | set(extra or {}))
    for name in names:
        if name in arrays:
            a = arrays[name]
            h.update(f"\0{name}\0{a.dtype.str}\0{a.shape}\0".encode())
            h.update(np.ascontiguousarray(a).tobytes())
        else:
            shape, dtype, pieces = extra[name]
            h.update(f"\0{name}\0{np.dtype(dtype).str}\0{tuple(shape)}\0".encode())
            for p in pieces():
                h.update(p)
    meta["sha256"] = h.hexdigest()


def _zeros(nbytes, piece=1 << 20):
    def gen():
        left = nbytes
        z = bytes(piece)
        while left > 0:
            yield z[:min(piece, left)]
            left -= piece
    return gen


def _refused_by_both(path, match):
    for name, load in LOADERS.items():
        with pytest.raises(ModelFormatError, match=match):
            load(path)


_PEAK = textwrap.dedent("""
    import resource, sys, time, tracemalloc
    from fastbudget.persist import ModelFormatError, load_model
    from fastbudget.serving import load_predictor
    how = sys.argv[2]
    if how.endswith("-nolimit"):        # the learner's bound off: the streamed checksum's turn
        import fastbudget.persist as persist
        import fastbudget.serving as serving
        persist._state_limit = serving._state_limit = lambda meta: None
    load = load_model if how.startswith("load") else load_predictor
    from fastbudget import _meb
    from fastbudget.persist import _lookup_class
    _lookup_class("TVMClassifier")      # its modules imported before memory is traced
    tracemalloc.start()
    t = time.process_time()
    try:
        load(sys.argv[1])
        print("loaded yes")
    except ModelFormatError as exc:
        print("refused", str(exc).replace(chr(10), " ")[:300])
    print("cpu", time.process_time() - t)
    print("peak", tracemalloc.get_traced_memory()[1])
    print("maxrss_kb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def _peak(path, how):
    r = subprocess.run([sys.executable, "-c", _PEAK, str(path), how], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = dict(line.split(" ", 1) for line in r.stdout.strip().splitlines())
    return out, int(out["peak"])


# ---------------------------------------------------------------------- header lies
def test_npy_header_claiming_1e12_rows(legit, tmp_path):
    """The member's .npy header claims 10^12 rows: refused from the header (no
    MemoryError), whether the manifest agrees with the real data or with the header."""
    meta, arrays = _members(legit)
    Q = arrays["state.twin_Q"]
    lie = (_npy_header((10**12, Q.shape[1]), Q.dtype), [Q.tobytes()])
    _write(tmp_path / "a.npz", meta, dict(arrays, **{"state.twin_Q": lie}))
    _refused_by_both(tmp_path / "a.npz", "manifest says")
    meta2 = json.loads(json.dumps(meta))
    meta2["arrays"]["state.twin_Q"]["shape"] = [10**12, Q.shape[1]]
    _write(tmp_path / "b.npz", meta2, dict(arrays, **{"state.twin_Q": lie}))
    _refused_by_both(tmp_path / "b.npz", "truncated|more than a TVMClassifier")


def test_npy_header_with_an_unclosed_bracket(legit, tmp_path):
    """A member whose .npy header dict is cut short by an unclosed bracket (one flipped
    byte can do it; NumPy then re-reads the header with ``tokenize``, which raises
    ``tokenize.TokenError``, neither a ValueError nor a SyntaxError): refused as damaged."""
    meta, arrays = _members(legit)
    Q = arrays["state.twin_Q"]
    good = _npy_header(Q.shape, Q.dtype)
    text = good[10:].decode("latin1")
    cut = text.rindex("}")
    bad = good[:10] + (text[:cut] + "(" + text[cut + 1:]).encode("latin1")
    assert len(bad) == len(good)
    _write(tmp_path / "a.npz", meta, dict(arrays, **{"state.twin_Q": (bad, [Q.tobytes()])}))
    _refused_by_both(tmp_path / "a.npz", "damaged or not a plain array")


def test_metadata_header_claiming_huge_length(legit, tmp_path):
    meta, arrays = _members(legit)
    blob = json.dumps(meta).encode()
    with zipfile.ZipFile(tmp_path / "m.npz", "w") as zf:
        zf.writestr(mf.METADATA_KEY + ".npy", _npy_header((10**12,), np.uint8) + blob)
        for k, a in arrays.items():
            zf.writestr(k + ".npy", _npy_header(a.shape, a.dtype) + a.tobytes())
    _refused_by_both(tmp_path / "m.npz", "metadata entry is larger")


def test_file_larger_than_its_manifest(legit, tmp_path):
    """Data hidden in front of the archive (a zip reader skips it): refused before reading."""
    data = legit.read_bytes()
    (tmp_path / "big.npz").write_bytes(bytes(8 << 20) + data)
    _refused_by_both(tmp_path / "big.npz", "larger than the arrays its manifest lists allow")


# ---------------------------------------------------------------------- zip bombs
BOMB = 256 << 20          # bytes the bomb member expands to


@pytest.fixture(scope="module")
def bombs(legit, tmp_path_factory):
    """Two deflated members that expand to 256 MB (a file of ~0.5 MB): one whose checksum
    was not recomputed, and one signed over the zeros it expands to, with the manifest
    declaring the expanded size."""
    d = tmp_path_factory.mktemp("bombs")
    meta, arrays = _members(legit)
    Q = arrays.pop("state.twin_Q")
    shape = (BOMB // (8 * Q.shape[1]), Q.shape[1])
    nbytes = shape[0] * shape[1] * 8
    member = (_npy_header(shape, np.float64), _zeros(nbytes)())
    unsigned = json.loads(json.dumps(meta))
    unsigned["arrays"]["state.twin_Q"]["shape"] = list(shape)
    _write(d / "unsigned.npz", unsigned, dict(arrays, **{"state.twin_Q": member}),
           compress=("state.twin_Q",))
    signed = json.loads(json.dumps(meta))
    _sign(signed, arrays, {"state.twin_Q": (shape, np.float64, _zeros(nbytes))})
    _write(d / "signed.npz", signed,
           dict(arrays, **{"state.twin_Q": (_npy_header(shape, np.float64), _zeros(nbytes)())}),
           compress=("state.twin_Q",))
    return d / "unsigned.npz", d / "signed.npz"


@pytest.mark.parametrize("how", ["load", "serving"])
def test_zip_bomb_refused_in_bounded_memory(legit, bombs, how):
    """Refused before the member is inflated: by the bound the learner's parameters put on
    its state (both files), else (that bound switched off) by the checksum streamed over
    the inflated data (the unsigned one). Peak traced memory <= 2x the legitimate file."""
    unsigned, signed = bombs
    size = os.path.getsize(legit)
    assert os.path.getsize(unsigned) < BOMB / 100
    out, legit_peak = _peak(legit, how)
    assert "loaded" in out
    for bomb in (unsigned, signed):
        out, peak = _peak(bomb, how)
        assert "refused" in out and "more than a TVMClassifier" in out["refused"], out
        assert peak <= 2 * size, (peak, size, legit_peak)
    out, peak = _peak(unsigned, how + "-nolimit")
    assert "refused" in out and "checksum mismatch" in out["refused"], out
    assert peak <= 2 * size, (peak, size, legit_peak)


# ---------------------------------------------------------------------- not files
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_dev_zero_refused_at_once():
    for load in LOADERS.values():
        with pytest.raises(ModelFormatError, match="not a regular file"):
            load("/dev/zero")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_refused_without_blocking(tmp_path):
    fifo = tmp_path / "model.npz"
    os.mkfifo(fifo)
    code = textwrap.dedent(f"""
        from fastbudget.persist import ModelFormatError, load_model
        from fastbudget.serving import load_predictor
        for load in (load_model, load_predictor):
            try:
                load({str(fifo)!r})
            except ModelFormatError as exc:
                assert "not a regular file" in str(exc), exc
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "ok"


def test_directory_refused(tmp_path):
    for load in LOADERS.values():
        with pytest.raises(ModelFormatError, match="not a regular file"):
            load(tmp_path)


# ---------------------------------------------------------------------- deep JSON
def test_metadata_nested_200000_levels(legit, tmp_path):
    _, arrays = _members(legit)
    blob = ("[" * 200_000 + "]" * 200_000).encode()
    with zipfile.ZipFile(tmp_path / "deep.npz", "w") as zf:
        zf.writestr(mf.METADATA_KEY + ".npy", _npy_header((len(blob),), np.uint8) + blob)
        for k, a in arrays.items():
            zf.writestr(k + ".npy", _npy_header(a.shape, a.dtype) + a.tobytes())
    _refused_by_both(tmp_path / "deep.npz", "nests deeper than")


@pytest.mark.parametrize("where", ["params", "scalars"])
def test_nested_500_levels_inside_params_signed(legit, tmp_path, where):
    """500 levels inside ``params`` (or a scalar), with the checksum recomputed."""
    meta, arrays = _members(legit)
    v = 1.0
    for _ in range(500):
        v = [v]
    if where == "params":
        meta["params"]["C"] = v
    else:
        meta["scalars"]["state.n_skipped"] = v
    _sign(meta, arrays)
    _write(tmp_path / "p.npz", meta, arrays)
    _refused_by_both(tmp_path / "p.npz", "nests deeper than")


def test_legitimate_file_still_loads_and_matches(legit):
    """The hardened reader reads the legitimate file to the same model."""
    model = load_model(legit)
    pred = load_predictor(legit)
    X = np.random.default_rng(1).normal(size=(50, 10))
    np.testing.assert_allclose(pred.decision_function(X), model.decision_function(X),
                               rtol=1e-12, atol=1e-12)
