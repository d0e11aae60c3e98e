"""Helpers of ``perf/table3_gaps.py`` behind the TVM Table 3 / Table 5 gap sections of
``docs/results/tvm_table3_gaps.md``: the marked sections survive a regeneration, and the
experiment-only patch of the merge search still applies to ``kernels/tvm.py`` (it fails
loudly, rather than silently measuring the unpatched code, when that file changes)."""
import pathlib

import pytest
from _helpers import perf_script

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gaps():
    return perf_script("table3_gaps")


def test_write_section_appends_then_replaces_in_place(gaps, tmp_path):
    path = tmp_path / "tvm_table3_gaps.md"
    path.write_text("# head\n\ntext\n")
    gaps.write_section(tmp_path, "a", ["## A", "one"])
    gaps.write_section(tmp_path, "b", ["## B", "two"])
    gaps.write_section(tmp_path, "a", ["## A", "three"])
    text = path.read_text()
    assert text.startswith("# head\n\ntext\n")
    assert "one" not in text and text.count("<!-- section:a -->") == 1
    assert text.index("three") < text.index("two")       # replaced where it stood
    assert gaps._sections(text) == [
        "<!-- section:a -->\n## A\nthree\n<!-- /section:a -->",
        "<!-- section:b -->\n## B\ntwo\n<!-- /section:b -->"]


def test_search_patch_applies_once_each_and_keeps_the_default_path(gaps, tmp_path):
    gaps.patched_copy(tmp_path, gaps._SEARCH_PATCH, "search")
    new = (tmp_path / "fastbudget" / "kernels" / "tvm.py").read_text()
    old = (ROOT / "fastbudget" / "kernels" / "tvm.py").read_text()
    for before, after in gaps._SEARCH_PATCH:
        assert old.count(before) == 1, before
        assert after in new
    # with par[10] = 0 (the estimator's value after allocation) the search is the library's
    assert "int(_tw_par[P_TRIES]) if _tw_par[10] <= 0.0" in new
    assert "if mi < 0 and eta >= 0.0 and _tw_par[10] <= 0.0:" in new


def test_search_patch_refuses_a_changed_kernel(gaps, tmp_path, monkeypatch):
    src = tmp_path / "src"
    (src / "fastbudget" / "kernels").mkdir(parents=True)
    (src / "fastbudget" / "kernels" / "tvm.py").write_text("N_TIST = 11\n")
    monkeypatch.setattr(gaps, "ROOT", src)
    with pytest.raises(RuntimeError, match="no longer applies"):
        gaps.patched_copy(tmp_path / "out", gaps._SEARCH_PATCH, "search")
