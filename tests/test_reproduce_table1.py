"""StreamSVM's Table 1 page (``fastbudget.reproduce.streamsvm.write_table1`` and ``REASONS``)
and the helpers of ``perf/table1_gaps.py`` that its Synthetic B and C reasons rest on."""
import math
import re

import numpy as np
import pytest
from _helpers import perf_script

from fastbudget.reproduce import streamsvm as repro


@pytest.fixture(scope="module")
def gaps():
    return perf_script("table1_gaps")


def test_reasons_name_real_cells_with_a_status_and_a_text():
    for (name, col), (status, why) in repro.REASONS.items():
        assert name in repro.PAPER and col in repro.COLUMNS, (name, col)
        assert status in ("closed", "explained", "unexplained"), (name, col, status)
        assert len(why) > 40, (name, col)


def _rows(value):
    """Rows as ``main`` hands them to ``write_table1``; ``value(paper)`` gives our figure (%)."""
    rows = []
    for name, p in repro.PAPER.items():
        res = {("raw", 1): np.full(3, value(p[1]) / 100), ("raw", repro.L_TABLE):
               np.full(3, value(p[2]) / 100), ("unit", 1): np.full(3, value(p[1]) / 100),
               ("unit", repro.L_TABLE): np.full(3, value(p[2]) / 100)}
        base = {"l2svm": (value(p[0]), 0.0)}
        rows.append((name, 2, 100, 10, "test rows", res, base, 0.0))
    return rows


def test_table1_page_within_when_ours_is_the_paper(tmp_path):
    text = repro.write_table1(tmp_path / "t1.md", _rows(lambda p: p + 1.5), 3).read_text()
    assert "24 of 24 cells within 2 points" in text
    assert "| not examined |" not in text and "| closed |" not in text


def test_table1_page_takes_status_and_reason_of_every_short_cell(tmp_path):
    text = repro.write_table1(tmp_path / "t1.md", _rows(lambda p: p - 10.0), 3).read_text()
    n = 0
    for name in repro.PAPER:
        for col in repro.COLUMNS:
            line = next(ln for ln in text.splitlines() if ln.startswith(f"| {name} | {col} |"))
            status, why = repro.REASONS.get((name, col), ("not examined", ""))
            assert f"| no | {status} | {why} |" in line, line
            n += 1
    assert n == 24
    counts = re.search(r"0 of 24 cells within 2 points; of the others (.*)\.", text).group(1)
    assert sum(int(c.split()[0]) for c in counts.split(", ")) == 24


@pytest.mark.parametrize("tag,dim", [("B", 3), ("C", 5)])
def test_family_geometry_leaves_the_class_direction_alone(gaps, tag, dim, monkeypatch):
    # the spread scales only the directions orthogonal to the class direction u, and an
    # offset at 90 degrees moves only those: the projection on u (all the class
    # information, so the Bayes rule and its accuracy) is the same in every setting
    monkeypatch.setattr(gaps, "N_TEST_FAM", 100)
    u = np.full(dim, 1 / math.sqrt(dim))
    base = gaps._family_data(tag, dim, 0.8, 1.0, 0.0, 0)
    for spread, r, angle in ((0.1, 0.0, 0), (3.0, 2.0, 90), (0.3, 1.5, 90)):
        Xa, ya, Xb, yb = gaps._family_data(tag, dim, 0.8, spread, r, angle)
        np.testing.assert_array_equal(ya, base[1])
        np.testing.assert_allclose(Xa @ u, base[0] @ u, atol=1e-12)
        orth = Xa - np.outer(Xa @ u, u)
        orth0 = base[0] - np.outer(base[0] @ u, u)
        shift = orth - spread * orth0
        np.testing.assert_allclose(shift, np.broadcast_to(shift[0], shift.shape), atol=1e-12)
        assert np.linalg.norm(shift[0]) == pytest.approx(r)
    # an offset along u moves the projection by r
    Xa, *_ = gaps._family_data(tag, dim, 0.8, 1.0, 2.0, 0)
    np.testing.assert_allclose(Xa @ u, base[0] @ u + 2.0, atol=1e-12)


def test_paper_test_set_monte_carlo(gaps):
    n = 10000
    right, wrong = np.ones(n), np.zeros(n)
    mc = gaps._paper_test_sets((right, right, right), (100.0, 100.0, 100.0), n_draw=500)
    assert mc["all"] == 1.0 and mc["each"] == [1.0, 1.0, 1.0] and mc["sd"] == [0.0] * 3
    mc = gaps._paper_test_sets((right, right, right), (97.0, 100.0, 100.0), n_draw=500)
    assert mc["all"] == 0.0 and mc["each"] == [0.0, 1.0, 1.0]
    # Algo-2 right everywhere, batch wrong everywhere: Algo-2 beats it by 100 points
    assert gaps._paper_test_sets((wrong, wrong, right), (0.0, 0.0, 100.0),
                                 n_draw=500)["algo2_gap"] == 1.0
    # a column right on 66 % of the points: the binomial sd of a 200-point test set
    col = (np.random.default_rng(0).random(n) < 0.66).astype(float)
    mc = gaps._paper_test_sets((col, col, col), (66.0, 66.0, 66.0), n_draw=4000)
    assert mc["sd"][0] == pytest.approx(100 * math.sqrt(0.66 * 0.34 / 200), rel=0.1)
    # the same column three times: the cells agree on every test set
    assert mc["all"] == pytest.approx(mc["each"][0])
