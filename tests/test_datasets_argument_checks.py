"""The generators and loaders of fastbudget.datasets refuse arguments that would give NaN
features or an empty training part, saying what to pass. Each test failed before its fix."""
import numpy as np
import pytest

from fastbudget.datasets import load_paper_dataset, make_drifting_gaussians, stream_chunks


@pytest.mark.parametrize("kw", [{"at_time": float("nan")}, {"at_time": float("inf")},
                                {"at_time": "10"}, {"at_time": True},
                                {"separation": float("inf")}])
def test_drifting_gaussians_refuses_non_finite_time_and_separation(kw):
    """at_time was not checked (NaN or inf gave NaN features without a word, a string failed
    deep inside with "could not convert string to float"), nor was an infinite separation
    (inf * 0 = NaN in the features)."""
    name = next(iter(kw))
    with pytest.raises(ValueError, match=f"{name} must be a .*finite number"):
        make_drifting_gaussians(5, drift=0.1, random_state=0, **kw)
    if name == "separation":
        with pytest.raises(ValueError, match="separation must be a positive finite number"):
            stream_chunks("drifting_gaussians", 5, 2, random_state=0, **kw)
    # finite values still work, and an int time is the same as a float one
    X, y = make_drifting_gaussians(5, drift=0.1, at_time=10, random_state=0)
    X2, y2 = make_drifting_gaussians(5, drift=0.1, at_time=10.0, random_state=0)
    assert np.isfinite(X).all() and np.array_equal(X, X2) and np.array_equal(y, y2)


def test_loader_test_fraction_that_rounds_to_every_row_is_refused(tmp_path):
    """test_size is checked to be a fraction below 1, but 0.96 of 10 rows rounded to 10 test
    rows and load_paper_dataset returned an empty training part without a word."""
    rows = [f"{1 if i % 2 else -1} 1:{i / 10} 2:{-i / 10}" for i in range(10)]
    (tmp_path / "banana").mkdir()
    (tmp_path / "banana" / "banana.all.txt").write_text("\n".join(rows) + "\n")
    Xa, ya, Xb, yb = load_paper_dataset("banana", tmp_path, test_size=0.9)
    assert (Xa.shape, Xb.shape) == ((1, 2), (9, 2))
    with pytest.raises(ValueError, match="leaves no training rows; pass a smaller test_size"):
        load_paper_dataset("banana", tmp_path, test_size=0.96)
