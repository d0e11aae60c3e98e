"""save to a path it cannot write (a directory, a missing or unwritable directory) says so
and names the path asked for, writes nothing, and takes a bytes path as a path."""
import numpy as np
import pytest

import fastbudget.persist as persist
from _estimators import ESTIMATORS
from _helpers import fitted_on_stream as _fitted
from fastbudget.persist import load_model


def test_save_to_a_directory_or_a_bytes_path(tmp_path):
    """Saving to a directory says so and what to pass (the error named the temporary file's
    rename); a bytes path is a path, as for numpy (it raised a TypeError from string
    concatenation)."""
    est, X, y = _fitted(dict(ESTIMATORS)["perceptron"])
    (tmp_path / "d").mkdir()
    with pytest.raises(IsADirectoryError, match=r"is a directory; pass a file name, e.g. .*model\.npz"):
        est.save(tmp_path / "d")
    assert list((tmp_path / "d").iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["d"]
    est.save(bytes(tmp_path / "m.npz"))
    assert np.array_equal(load_model(tmp_path / "m.npz").decision_function(X),
                          est.decision_function(X))


def test_save_into_a_missing_or_unwritable_directory_names_the_path(tmp_path, monkeypatch):
    """save into a directory that does not exist says so, naming that directory and the path
    asked for (the error named the hidden temporary file, '.m.npz.<random>.tmp', which the
    user never gave); another failure to create the file names the path too. Nothing is
    written."""
    est, X, y = _fitted(dict(ESTIMATORS)["perceptron"])
    missing = tmp_path / "no" / "m.npz"
    with pytest.raises(FileNotFoundError) as info:
        est.save(missing)
    msg = str(info.value)
    assert f"the directory {str(tmp_path / 'no')!r} does not exist" in msg
    assert ".tmp" not in msg and info.value.filename == str(missing)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / ".m.npz.xyz.tmp"))

    monkeypatch.setattr(persist.tempfile, "mkstemp", refuse)
    with pytest.raises(PermissionError, match=r"cannot write .*m\.npz.*Permission denied") as info:
        est.save(tmp_path / "m.npz")
    assert ".tmp" not in str(info.value) and info.value.filename == str(tmp_path / "m.npz")
    assert list(tmp_path.iterdir()) == []
