"""``fastbudget reproduce``: tvm-table2 (subprocess, checked against in-process fits), the
options passed on to the modules of papers 001, 002 and 004, ``reproduce all`` and
``--svc-n-max`` parsing."""
import argparse
import importlib
import re
import subprocess
import sys

import numpy as np
import pytest

from fastbudget import reproduce
from fastbudget.reproduce import tvm
from fastbudget.reproduce._common import run_stream

from _cli import ROOT, error_line, run


def _row(text, section, name):
    """Cells of the row ``name`` in the table under the heading ``section``."""
    part = text.split(section, 1)[1]
    line = next(ln for ln in part.splitlines() if ln.startswith(f"| {name} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def _svc_reference(name, n_max, n_test, n_svc=None):
    from sklearn.svm import SVC
    Xa, ya, Xb, yb = tvm.load_set(name, None, n_max, n_test)
    if n_svc:
        idx = np.sort(np.random.default_rng(1000).permutation(len(ya))[:n_svc])
        Xa, ya = Xa[idx], ya[idx]
    svc = SVC(C=100.0, **tvm.kernel_params(name, Xa.shape[1])).fit(Xa, ya)
    return int(svc.n_support_.sum()), 100 * svc.score(Xb, yb)


def test_table2_quick_subprocess(tmp_path):
    _, out, _ = run("reproduce", "tvm-table2", "--quick", "--n-max", 600, "--sets",
                    "Gauss,Checkerboard", "--idsvm-seconds", 60, "--svc-n-max", "Gauss=300",
                    "--out", tmp_path, "-q")
    assert "report written" in out
    text = (tmp_path / "tvm_table2_quick.md").read_text()
    for needle in ("Command: `fastbudget reproduce tvm-table2 --quick", "commit:", "Machine:",
                   "shared with other jobs", "## Training time (s)", "## Number of SVs / TVs",
                   "600 / 2,000", "3,940", "39,650", "[81.1;", "[99.8;",
                   "stopped at 3,000 (after 5,400 ex.)"):
        assert needle in text, needle
    assert "| Adult |" not in text
    # rows follow the order given to --sets
    assert text.index("| Gauss |") < text.index("| Checkerboard |")

    # Checkerboard: SVC on all 600 examples, as an in-process fit gives
    n_sv, acc = _svc_reference("Checkerboard", 600, 2000)
    t = _row(text, "## Training time", "Checkerboard")
    tvm_t, svc_t, ratio = float(t[2]), float(t[3]), float(t[4])
    assert tvm_t > 0 and svc_t > 0
    assert ratio == pytest.approx(tvm_t / svc_t, rel=0.02)   # cells: 3 significant digits
    s = _row(text, "## Number of SVs", "Checkerboard")
    assert int(s[2].replace(",", "")) == n_sv
    # IDSVM had time to learn all 600 examples: the exact SVM, so the same SVs as libsvm
    # (up to the tolerance of either solver), and no stop mark
    assert "*" not in s[3]
    assert abs(int(s[3].replace(",", "")) - n_sv) <= max(2, 0.02 * n_sv)
    tv = re.match(r"(\d+) \((\d+)\)", s[1])
    assert tv and int(tv.group(2)) <= int(tv.group(1)) <= 100
    a = _row(text, "## Test accuracy", "Checkerboard")
    assert float(a[2].split()[0]) == pytest.approx(acc, abs=0.05)

    # Gauss: SVC capped at 300 examples of the order-0 stream, labelled as such
    n_sv, _ = _svc_reference("Gauss", 600, 2000, n_svc=300)
    t = _row(text, "## Training time", "Gauss")
    assert "‡" in t[3] and "(on 300)" in t[3] and "‡" in t[4]
    assert int(_row(text, "## Number of SVs", "Gauss")[2].split()[0].replace(",", "")) == n_sv


def test_table2_idsvm_time_cap(tmp_path):
    # a zero-second cap still learns the first chunk (50 examples), then stops and says so
    run("reproduce", "tvm-table2", "--quick", "--n-max", 400, "--sets", "Gauss",
        "--idsvm-seconds", 0, "--out", tmp_path, "-q")
    text = (tmp_path / "tvm_table2_quick.md").read_text()
    t = _row(text, "## Training time", "Gauss")
    assert "* (50 ex., time)" in t[5]
    s = _row(text, "## Number of SVs", "Gauss")
    assert s[3].endswith("(50 *)") and 0 < int(s[3].split()[0]) <= 50
    # the capacity cap stops it too
    run("reproduce", "tvm-table2", "--quick", "--n-max", 400, "--sets", "Gauss",
        "--idsvm-capacity", 120, "--out", tmp_path, "-q")
    text = (tmp_path / "tvm_table2_quick.md").read_text()
    assert "* (120 ex., capacity)" in _row(text, "## Training time", "Gauss")[5]


def test_table2_bad_svc_cap():
    assert "unknown data set 'Nope'" in error_line("reproduce", "tvm-table2", "--quick",
                                                   "--sets", "Gauss", "--svc-n-max", "Nope=10")


def test_svc_caps_parsing():
    assert tvm._svc_caps(None) == {}
    assert tvm._svc_caps("500") == {None: 500}
    assert tvm._svc_caps("gauss=5,Waveform=7") == {"Gauss": 5, "Waveform": 7}
    for bad in ("x", "Gauss=", "Gauss=1"):
        with pytest.raises(ValueError):
            tvm._svc_caps(bad)


def _ns(**kw):
    base = dict(quick=False, data_dir=None, orders=5, orders_given=False, out="docs/results",
                quiet=False)
    base.update(kw)
    return argparse.Namespace(**base)


def test_hook_arguments():
    span = reproduce._script_args("--seeds")
    assert span(_ns()) == ["--out", "docs/results"]
    assert span(_ns(quick=True, data_dir="/d", orders=3, orders_given=True, out="/o",
                    quiet=True)) == ["--quick", "--data", "/d", "--seeds", "3", "--out", "/o",
                                     "--quiet"]
    assert reproduce._script_args("--reps")(_ns(orders=2, orders_given=True))[:2] == [
        "--reps", "2"]


@pytest.mark.parametrize("module,flag", [("span", "--seeds"), ("rueping", "--reps")])
def test_paper_modules_accept_the_options_passed_on(module, flag, capsys):
    mod = importlib.import_module(f"fastbudget.reproduce.{module}")
    with pytest.raises(SystemExit) as exc:
        mod.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for opt in ("--quick", "--data", "--out", "--quiet", flag):
        assert opt in out, opt


def _fake_mains(monkeypatch):
    """Replace the ``main`` of the paper modules by one that records its arguments."""
    seen = []
    for module in ("span", "rueping", "streamsvm", "baselines"):
        mod = importlib.import_module(f"fastbudget.reproduce.{module}")
        monkeypatch.setattr(mod, "main",
                            lambda argv, module=module: seen.append((module, list(argv))))
    return seen


def test_options_are_passed_on_through_cli(tmp_path, monkeypatch):
    seen = _fake_mains(monkeypatch)
    args = _ns(name="rueping", orders=4, out=str(tmp_path), quiet=True, data_dir=str(tmp_path),
               argv=["rueping"])
    del args.orders_given          # run_cli works it out: --orders was given here
    assert reproduce.run_cli(args) == 0
    assert seen == [("rueping", ["--data", str(tmp_path), "--reps", "4", "--out", str(tmp_path),
                                 "--quiet"])]
    seen.clear()
    args = _ns(name="span", orders=None, out=str(tmp_path), quiet=True, quick=True,
               argv=["span"])
    del args.orders_given
    reproduce.run_cli(args)
    assert seen[0][0] == "span" and "--seeds" not in seen[0][1] and "--quick" in seen[0][1]
    seen.clear()
    args = _ns(name="baselines", orders=None, out=str(tmp_path), data_dir=str(tmp_path),
               argv=["baselines"])
    del args.orders_given
    reproduce.run_cli(args)
    assert seen == [("baselines", ["all", "--data", str(tmp_path)])]


def _opt(cmd, flag):
    return cmd[cmd.index(flag) + 1]


@pytest.mark.parametrize("name", ["span", "rueping", "streamsvm"])
def test_paths_passed_on_are_the_callers_made_absolute(tmp_path, monkeypatch, name):
    # --out and --data-dir given relative to the caller's directory reach the module as
    # absolute paths of that directory (the report names them)
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    seen = _fake_mains(monkeypatch)
    args = _ns(name=name, orders=None, out="reports", data_dir="data", argv=[name])
    del args.orders_given
    assert reproduce.run_cli(args) == 0
    (module, cmd), = seen
    assert module == name
    out = _opt(cmd, "--out")
    if name == "streamsvm":
        assert out == str(tmp_path / "reports" / "streamsvm.md")
    else:
        assert out == str(tmp_path / "reports")
    assert _opt(cmd, "--data") == str(tmp_path / "data")


def test_streamsvm_writes_to_out(tmp_path, monkeypatch):
    # --out was passed on only with --quick: without it the script wrote the source tree's
    # docs/results/streamsvm.md whatever --out said
    seen = _fake_mains(monkeypatch)
    for quick, fn in ((False, "streamsvm.md"), (True, "streamsvm_quick.md")):
        args = _ns(name="streamsvm", orders=None, out=str(tmp_path), quick=quick,
                   argv=["streamsvm"])
        del args.orders_given
        assert reproduce.run_cli(args) == 0
        assert _opt(seen[-1][1], "--out") == str(tmp_path / fn)


@pytest.mark.parametrize("module", ["span", "rueping"])
def test_quiet_paper_module_silences_only_its_own_run(module, monkeypatch, capsys, tmp_path):
    """--quiet sends the module's progress lines to nowhere for its run only (run in the
    command's process, it must leave standard output as it was)."""
    mod = importlib.import_module(f"fastbudget.reproduce.{module}")
    monkeypatch.setattr(mod, "_report", lambda args: print("progress line"))
    before = sys.stdout
    mod.main(["--quiet", "--out", str(tmp_path)])
    assert sys.stdout is before
    print("after")
    mod.main(["--out", str(tmp_path)])
    assert capsys.readouterr().out == "after\nprogress line\n"


@pytest.mark.parametrize("skip", [False, True])
def test_all_runs_table2_unless_skipped(tmp_path, monkeypatch, skip):
    called = []

    def fake(name):
        def f(args):
            called.append(name)
            return [f"# {name} report"]
        return f

    monkeypatch.setattr(reproduce, "REGISTRY",
                        {k: (fake(k), d) for k, (_f, d) in reproduce.REGISTRY.items()})
    args = _ns(name="all", orders=None, out=str(tmp_path), quiet=True, no_table2=skip,
               argv=["all"])
    del args.orders_given
    assert reproduce.run_cli(args) == 0
    own = [n for n in reproduce.OWN if not (skip and n == "tvm-table2")]
    assert called == own
    index = (tmp_path / "README.md").read_text()
    assert ("tvm_table2.md" in index) is not skip
    for n in own:
        assert f"({n.replace('-', '_')}.md)" in index


def test_python_dash_m_fastbudget():
    import os
    r = subprocess.run([sys.executable, "-m", "fastbudget", "reproduce", "list"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0, r.stderr
    assert "tvm-table2" in r.stdout and "--no-table2" in r.stdout


def test_figure3_quick_against_in_process(tmp_path):
    run("reproduce", "tvm-figure3", "--quick", "--n-max", 800, "--sets", "Gauss", "--budgets",
        "20,100", "--out", tmp_path, "-q")
    text = (tmp_path / "tvm_figure3_quick.md").read_text()
    row = _row(text, "### Gauss", "TVM B=100")
    assert row[-2].startswith("[81.1;")           # the paper's Table 3 final point
    assert _row(text, "### Gauss", "TVM B=20")[-2].startswith("[81.3;")
    Xa, ya, Xb, yb = tvm.load_set("Gauss", None, 800, 2000)
    cps = sorted(set(int(c) for c in np.geomspace(100, len(ya), 8)))
    kp = tvm.kernel_params("Gauss", Xa.shape[1])
    acc, curve, _ = run_stream(tvm._tvm(100, 100.0, kp), Xa, ya, Xb, yb, 1000,
                                         chunk=5000, checkpoints=cps)
    assert [float(v) for v in row[1:len(curve) + 1]] == pytest.approx(
        [a for _, a in curve], abs=0.051)
    assert float(row[-2].split(";")[1].rstrip("]")) == pytest.approx(curve[-1][1] - 81.1, abs=0.051)


def test_adult_extra_row_holds_C_fixed(tmp_path, shared_data):
    # the Adult row follows the paper's control of C; the † row holds C = 1 (control_C=False)
    run("reproduce", "tvm-table4", "--quick", "--n-max", 1500, "--sets", "Adult", "--orders", 1,
        "--data-dir", shared_data, "--out", tmp_path, "-q")
    text = (tmp_path / "tvm_table4_quick.md").read_text()
    assert tvm.ADULT_NOTE in text
    Xa, ya, Xb, yb = tvm.load_set("Adult", shared_data, 1500, 2000)
    kp = tvm.kernel_params("Adult", Xa.shape[1], "linear")
    accs = {}
    for row, control in (("Adult", True), (tvm.ADULT_FIXED_C, False)):
        accs[row] = run_stream(tvm._tvm(100, 1.0, kp, control_C=control),
                                         Xa, ya, Xb, yb, 1000)[0]
        cell = _row(text, "| data set |", row)[5]
        assert float(cell.split()[0]) == pytest.approx(accs[row], abs=0.051), row
        assert "[81.3;" in cell                       # both compared with the paper's Adult
    assert accs["Adult"] != accs[tvm.ADULT_FIXED_C]


def test_index_replaces_only_its_own_readme(tmp_path, capsys):
    from fastbudget.reproduce import write_index
    (tmp_path / "a.md").write_text("# Report A\n")
    write_index(tmp_path)
    ours = (tmp_path / "README.md").read_text()
    assert ours.startswith("# Reproduction reports") and "[a.md](a.md): Report A" in ours
    (tmp_path / "b.md").write_text("# Report B\n")
    write_index(tmp_path)                       # our own index is brought up to date
    assert "[b.md](b.md): Report B" in (tmp_path / "README.md").read_text()
    other = tmp_path / "mine"
    other.mkdir()
    (other / "README.md").write_text("my notes\n")
    write_index(other)                          # a user's README is left alone, with a note
    assert (other / "README.md").read_text() == "my notes\n"
    assert "not a fastbudget report index" in capsys.readouterr().err
