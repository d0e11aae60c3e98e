"""Edit a saved model file and write it back with its checksum recomputed (a crafted file
that passes the checksum), for the tests of what ``load`` refuses."""
import json

import numpy as np

from fastbudget import persist


def read_model_file(path):
    """``(meta, arrays)`` of a model file, as ``load`` reads them."""
    return persist._read_members(path)


def write_model_file(path, meta, arrays):
    """Write ``meta`` (its ``sha256`` recomputed) and ``arrays`` as ``save`` does."""
    meta = dict(meta)
    meta["arrays"] = {k: {"shape": list(a.shape), "dtype": a.dtype.str}
                      for k, a in arrays.items()}
    body = {k: v for k, v in meta.items() if k != "sha256"}
    meta["sha256"] = persist._digest(body, arrays)
    blob = np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **{persist.METADATA_KEY: blob}, **arrays)


def edited_copy(src, dst, edit):
    """Copy the model file ``src`` to ``dst`` after ``edit(arrays, scalars)`` (both dicts,
    modified in place; arrays are writeable copies). Returns what ``edit`` returned."""
    meta, arrays = read_model_file(src)
    arrays = {k: np.array(a, copy=True) for k, a in arrays.items()}
    meta = json.loads(json.dumps(meta))
    out = edit(arrays, meta["scalars"])
    write_model_file(dst, meta, arrays)
    return out
