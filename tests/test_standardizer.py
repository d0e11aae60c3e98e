"""StreamingStandardizer takes a pandas frame as one array, and a fit on bad input leaves it
exactly as it was. Each test failed before its fix."""
import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

from fastbudget.datasets import StreamingStandardizer
from fastbudget.exceptions import NotFittedError


def test_standardizer_fits_a_pandas_frame_as_one_array():
    """fit(DataFrame) iterated over the frame, i.e. its column names, and failed with
    "X must be numeric; got dtype <U1" (transform and partial_fit took the frame)."""
    import pandas as pd
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3)) * [1.0, 10.0, 0.1] + [0.0, 5.0, -2.0]
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    want = StandardScaler().fit(X)
    s = StreamingStandardizer().fit(df)
    np.testing.assert_allclose(s.mean_, want.mean_, rtol=1e-12)
    np.testing.assert_allclose(s.var_, want.var_, rtol=1e-12)
    np.testing.assert_allclose(StreamingStandardizer().fit_transform(df), want.transform(X),
                               rtol=1e-12, atol=1e-12)
    assert StreamingStandardizer().fit(df["a"].to_frame()).mean_.shape == (1,)


def test_standardizer_fit_on_bad_input_leaves_it_as_it_was():
    """fit reset the statistics first: a chunk that failed (a reader's error on a later
    line, NaN in an array) left a standardizer holding the statistics of the chunks read
    before it, not frozen, which then transformed without complaint."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(100, 2)) * 3.0 + 5.0
    good = StreamingStandardizer().fit(X)
    want = {k: np.copy(v) for k, v in vars(good).items()}

    def failing_reader():
        yield X[:50] + 100.0, np.ones(50)
        raise ValueError("data.csv, line 77: value 'x' is not a number.")

    bad = X.copy()
    bad[60, 1] = np.nan
    for data in (failing_reader(), bad, [X[:10], np.zeros((3, 3))]):
        with pytest.raises(ValueError):
            good.fit(data)
        assert vars(good).keys() == want.keys()
        for k, v in want.items():
            assert np.array_equal(vars(good)[k], v), k
    # an unfitted standardizer stays unfitted
    fresh = StreamingStandardizer()
    with pytest.raises(ValueError, match="line 77"):
        fresh.fit(failing_reader())
    with pytest.raises(NotFittedError):
        fresh.transform(X)
