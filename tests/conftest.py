import os
import pathlib

import numpy as np
import pytest

# $FASTBUDGET_DATA_DIR, as the command line's --data-dir (FASTBUDGET_DATA: its former name)
SHARED_DATA = pathlib.Path(
    os.environ.get("FASTBUDGET_DATA_DIR") or os.environ.get("FASTBUDGET_DATA")
    or pathlib.Path(__file__).resolve().parents[2] / "shared" / "data"
)


@pytest.fixture
def rng():
    seed = int(os.environ.get("FASTBUDGET_SEED", "12345"))
    return np.random.default_rng(seed)


@pytest.fixture
def shared_data():
    if not SHARED_DATA.exists():
        pytest.fail(f"../shared/data not found at {SHARED_DATA}; set FASTBUDGET_DATA_DIR")
    return SHARED_DATA
