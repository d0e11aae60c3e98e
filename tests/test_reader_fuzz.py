"""Fuzz the chunked readers with random, mostly malformed files (hypothesis).

Whatever the bytes, a reader either yields finite float64 chunks of a consistent width or
raises one of its documented exceptions (ValueError naming the file and line); it never
crashes with anything else, and what it yields for valid rows is what the rows say."""
import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastbudget.datasets import read_csv, read_libsvm

TOKENS = ["1", "-1", "+1", "0", "2.5", "1e3", "nan", "inf", "x", "", " ", ":", "3:", ":4",
          "1:0.5", "2:-1", "7:1e-3", "0:1", "-3:1", "1:1:1", "#", ",", "\t", "qid:2", "99999999:1"]


def lines_strategy(sep):
    token = st.sampled_from(TOKENS)
    line = st.lists(token, max_size=6).map(sep.join)
    return st.lists(line, max_size=12).map("\n".join)


def consume(reader):
    width = None
    n = 0
    for X, y in reader:
        assert X.dtype == np.float64 and X.ndim == 2 and y.shape == (X.shape[0],)
        assert np.isfinite(X).all()
        if width is None:
            width = X.shape[1]
        assert X.shape[1] == width
        n += X.shape[0]
    return n


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=lines_strategy(" "), gz=st.booleans(), chunk=st.integers(1, 5))
def test_libsvm_reader_fuzz(tmp_path, text, gz, chunk):
    path = tmp_path / ("f.libsvm.gz" if gz else "f.libsvm")
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    try:
        consume(read_libsvm(str(path), chunk_size=chunk))
    except ValueError as exc:
        assert str(path) in str(exc) or "f.libsvm" in str(exc) or "line" in str(exc).lower()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=lines_strategy(","), chunk=st.integers(1, 5))
def test_csv_reader_fuzz(tmp_path, text, chunk):
    path = tmp_path / "f.csv"
    path.write_bytes(text.encode())
    try:
        consume(read_csv(str(path), chunk_size=chunk))
    except ValueError:
        pass


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.binary(max_size=200))
def test_readers_on_random_bytes(tmp_path, blob):
    path = tmp_path / "f.bin"
    path.write_bytes(blob)
    for reader in (read_libsvm, read_csv):
        try:
            consume(reader(str(path)))
        except (ValueError, UnicodeDecodeError):
            pass


def test_valid_rows_are_read_exactly(tmp_path):
    path = tmp_path / "ok.libsvm"
    path.write_text("1 1:0.5 3:2\n-1 2:1e-3\n")
    n = consume(read_libsvm(str(path), n_features=3))
    assert n == 2
    X = np.vstack([c[0] for c in read_libsvm(str(path), n_features=3)])
    assert np.array_equal(X, [[0.5, 0, 2], [0, 1e-3, 0]])


@pytest.mark.parametrize("text,reader", [("nan,1\n", "csv"), ("1,inf\n", "csv"),
                                         ("1 1:nan\n", "libsvm"), ("nan 1:1\n", "libsvm")])
def test_non_finite_tokens_are_refused_with_their_line(tmp_path, text, reader):
    """Found by the CSV fuzz test: Python's float parses 'nan' and 'inf'."""
    path = tmp_path / ("f." + reader)
    path.write_text("1,2\n" + text if reader == "csv" else "1 1:2\n" + text)
    read = read_csv if reader == "csv" else read_libsvm
    with pytest.raises(ValueError, match="line 2: .* is not a finite number"):
        list(read(str(path), chunk_size=1))
