"""``--on-bad-row skip``: a malformed row (or, for learning, a row with a label the model does
not know) is left out with a warning naming its line, the stream goes on, and the model is
the one learned from the stream without those rows; the readers' ``on_bad_row`` callback
underneath. The default (``error``) still stops at the first bad row."""
import io
import json
import signal

import numpy as np
import pytest

import fastbudget
from fastbudget.datasets import _source, read_csv, read_libsvm
from fastbudget.datasets.readers import RowLines, collect

from _cli import GAMMA, SCALER_WARNING_IGNORED, error_line, run

pytestmark = SCALER_WARNING_IGNORED

BAD_CSV = ["1,2,x,1", "1,2,1", "1,nan,3,1", "1,2,inf,-1", '"1",2,3,1', "1,,3,1", "1,2,3,4,1"]
BAD_SVM = ["1 1:x", "-1 2:1 1:1", "1 1:1 1:2", "1 abc", "-1 1:", "1 2:1e400", "x 1:1"]


def rows(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    return X, y


def csv_lines(X, y):
    return [",".join(f"{v!r}" for v in r) + f",{lab:g}" for r, lab in zip(X.tolist(), y)]


def svm_lines(X, y):
    return [f"{lab:g} " + " ".join(f"{j + 1}:{v!r}" for j, v in enumerate(r))
            for r, lab in zip(X.tolist(), y)]


def with_bad(good, bad, at):
    """``good`` lines with ``bad[k]`` inserted before good line ``at[k]``; also the 1-based
    (file) lines of the bad ones, counting a header line."""
    out, where = [], []
    for i, ln in enumerate(good):
        for b, a in zip(bad, at):
            if a == i:
                out.append(b)
                where.append(len(out) + 1)       # + the header
        out.append(ln)
    return out, where


# ----------------------------------------------------------------------------- readers
@pytest.mark.parametrize("fmt", ["csv", "libsvm"])
def test_reader_leaves_bad_rows_out_as_if_they_were_not_there(fmt, monkeypatch):
    monkeypatch.setattr(_source, "BLOCK_BYTES", 200)   # bad lines at block boundaries too
    X, y = rows(120)
    make, bad = (csv_lines, BAD_CSV) if fmt == "csv" else (svm_lines, BAD_SVM)
    at = [0, 7, 8, 9, 50, 64, 119]
    lines, where = with_bad(make(X, y), bad, at)
    head = "a,b,c,label\n" if fmt == "csv" else "# a comment\n"
    dirty = (head + "\n".join(lines) + "\n").encode()
    clean = (head + "\n".join(make(X, y)) + "\n").encode()
    read = ((lambda f, **kw: read_csv(f, **kw)) if fmt == "csv"
            else (lambda f, **kw: read_libsvm(f, n_features=3, **kw)))
    seen = []
    got_lines, want_lines = RowLines(), RowLines()
    got = list(read(io.BytesIO(dirty), chunk_size=8, row_lines=got_lines,
                    on_bad_row=lambda line, exc: seen.append((line, str(exc)))))
    want = list(read(io.BytesIO(clean), chunk_size=8, row_lines=want_lines))
    assert [len(c[1]) for c in got] == [len(c[1]) for c in want]    # the same chunks
    for (Xg, yg), (Xw, yw) in zip(got, want):
        np.testing.assert_array_equal(Xg, Xw)
        np.testing.assert_array_equal(yg, yw)
    np.testing.assert_array_equal(collect(got)[0], X)
    # each bad line reported once, in order, with the error it raises alone
    assert [ln for ln, _ in seen] == where
    for (line, msg), b in zip(seen, bad):
        with pytest.raises(ValueError) as exc:
            list(read(io.BytesIO((head + b + "\n").encode())))
        assert msg == str(exc.value).replace("line 2:", f"line {line}:")
    # the good rows keep their own lines
    kept = [i + 2 for i, ln in enumerate(lines) if ln not in bad]
    assert [got_lines.line(i) for i in range(got_lines.n_rows)] == kept
    # the default still raises at the first bad line
    with pytest.raises(ValueError, match=f"line {where[0]}:"):
        list(read(io.BytesIO(dirty), chunk_size=8))


def test_reader_quoted_text_label_is_a_bad_row():
    seen = []
    chunks = list(read_csv(io.BytesIO(b"a,b,l\n1,2,A\n3,4,'B'\n5,6,C\n"), label_type="str",
                           on_bad_row=lambda line, exc: seen.append((line, str(exc)))))
    assert chunks[0][1].tolist() == ["A", "C"]
    assert chunks[0][0].tolist() == [[1, 2], [5, 6]]
    assert seen[0][0] == 3 and "in quotes" in seen[0][1]
    with pytest.raises(TypeError, match="on_bad_row"):
        read_csv(io.BytesIO(b"1,2\n"), on_bad_row="skip")


# ----------------------------------------------------------------------------- the CLI
def api_model(X, y, chunk, budget=20):
    """The model the CLI learns (--standardize none) on rows X, y in chunks of ``chunk``."""
    m = fastbudget.TVMClassifier(budget=budget, gamma=float(GAMMA), random_state=0)
    m.partial_fit(X[:chunk], y[:chunk], classes=np.unique(y[:chunk]))
    for i in range(chunk, len(y), chunk):
        m.partial_fit(X[i:i + chunk], y[i:i + chunk])
    return m


def assert_same_model(path, ref, X):
    """The model file ``path`` is ``ref``, bit for bit (its saved file, its scores)."""
    got = fastbudget.load(path)
    assert got.n_seen_ == ref.n_seen_
    np.testing.assert_array_equal(got.decision_function(X), ref.decision_function(X))
    again = path.with_name("ref-" + path.name)
    ref.save(again)
    assert again.read_bytes() == path.read_bytes()


def warnings_of(err):
    return [ln for ln in err.splitlines() if ln.startswith("fastbudget: warning: skipped")]


def test_train_skips_bad_rows_and_learns_the_clean_stream(tmp_path):
    X, y = rows(300)
    bad = BAD_CSV + ["1,2,3,7"]                         # 7: not one of the classes
    at = [0, 30, 31, 99, 100, 101, 150, 299]           # 30/31, 99/100: chunk boundaries
    lines, where = with_bad(csv_lines(X, y), bad, at)
    (tmp_path / "bad.csv").write_text("a,b,c,label\n" + "\n".join(lines) + "\n")
    _, out, err = run("train", "tvm", tmp_path / "bad.csv", "--budget", 20, "--gamma", GAMMA,
                      "--standardize", "none", "--chunk-size", 30, "--on-bad-row", "skip",
                      "-q", "-o", tmp_path / "m.npz")
    assert_same_model(tmp_path / "m.npz", api_model(X, y, 30), X)
    warn = warnings_of(err)                            # shown in spite of -q
    assert len(warn) == len(bad)
    for w, line in zip(warn, where):
        assert f"bad.csv, line {line}:" in w
    assert "'x' is not a number" in warn[0]
    assert "expected 4 fields" in warn[1]
    assert "label 7 is not one of the model's classes (-1, 1)" in warn[-1]
    assert "on 300 examples" in out
    assert f"8 bad rows skipped (lines {', '.join(map(str, where[:5]))}, ...)" in out
    # the default is unchanged: the first bad row stops the command
    line = error_line("train", "tvm", tmp_path / "bad.csv", "--standardize", "none",
                      "-o", tmp_path / "e.npz")
    assert f"bad.csv, line {where[0]}: value in feature column 2 'x' is not a number." in line
    assert not (tmp_path / "e.npz").exists()


@pytest.mark.parametrize("standardize", ["warmup", "pass"])
def test_skip_standardisation_as_on_the_clean_file(tmp_path, standardize):
    X, y = rows(300, seed=1)
    lines, _ = with_bad(csv_lines(X, y), ["1e9,2,3,1", "5,5,5,9"], [40, 60])
    lines[lines.index("1e9,2,3,1")] = "1e9,2,zz,1"      # not a number (the warm-up would see 1e9)
    (tmp_path / "bad.csv").write_text("a,b,c,label\n" + "\n".join(lines) + "\n")
    (tmp_path / "clean.csv").write_text("a,b,c,label\n" + "\n".join(csv_lines(X, y)) + "\n")
    out = {}
    for name in ("bad", "clean"):
        _, out[name], err = run("train", "tvm", tmp_path / f"{name}.csv", "--budget", 20,
                                "--gamma", GAMMA, "--standardize", standardize,
                                "--warmup-rows", 100, "--chunk-size", 50, "--on-bad-row",
                                "skip", "-q", "-o", tmp_path / f"{name}.npz")
        assert len(warnings_of(err)) == (2 if name == "bad" else 0)  # once, also in 2 passes
    assert "2 bad rows skipped (lines 42, 63)" in out["bad"]
    assert "no bad rows skipped" in out["clean"]
    assert ((tmp_path / "bad.npz.scaler.json").read_text()
            == (tmp_path / "clean.npz.scaler.json").read_text())
    assert_same_model(tmp_path / "bad.npz", fastbudget.load(tmp_path / "clean.npz"), X)


def test_skip_on_standard_input_libsvm_counts_after_ten(tmp_path):
    X, y = rows(200, seed=2)
    bad = (BAD_SVM * 2)[:12]
    at = [0, 1, 2, 3, 24, 25, 26, 49, 50, 51, 150, 199]
    lines, where = with_bad(svm_lines(X, y), bad, at)
    where = [w - 1 for w in where]                      # no header line
    stdin = ("\n".join(lines) + "\n").encode()
    _, out, err = run("train", "tvm", "-", "--n-features", 3, "--budget", 20, "--gamma", GAMMA,
                      "--standardize", "none", "--chunk-size", 25, "--on-bad-row", "skip",
                      "-o", tmp_path / "m.npz", stdin=stdin)
    assert_same_model(tmp_path / "m.npz", api_model(X, y, 25), X)
    warn = warnings_of(err)
    assert len(warn) == 10
    assert [w.split("<stdin>, line ")[1].split(":")[0] for w in warn] == \
        [str(w) for w in where[:10]]
    assert err.count("more bad rows skipped") == 1
    assert f"12 bad rows skipped (lines {', '.join(map(str, where[:5]))}, ...)" in out


def test_update_and_prequential_skip_on_a_saved_model(tmp_path):
    X, y = rows(400, seed=3)
    (tmp_path / "a.svm").write_text("\n".join(svm_lines(X[:200], y[:200])) + "\n")
    run("train", "tvm", tmp_path / "a.svm", "--budget", 20, "--gamma", GAMMA,
        "--standardize", "none", "--chunk-size", 50, "-q", "-o", tmp_path / "a.npz")
    # a label the model does not know, an index beyond its 3 features, a bad value
    lines, where = with_bad(svm_lines(X[200:], y[200:]),
                            ["3 1:1 2:1", "1 1:1 4:2", "-1 1:0.5 2:?"], [10, 40, 41])
    (tmp_path / "b.svm").write_text("\n".join(lines) + "\n")
    _, out, err = run("update", tmp_path / "a.npz", tmp_path / "b.svm", "--chunk-size", 40,
                      "--on-bad-row", "skip", "-o", tmp_path / "ab.npz")
    ref = fastbudget.load(tmp_path / "a.npz")
    for i in range(200, 400, 40):
        ref.partial_fit(X[i:i + 40], y[i:i + 40])
    assert_same_model(tmp_path / "ab.npz", ref, X)
    warn = warnings_of(err)
    assert "label 3 is not one of the model's classes (-1, 1); a saved model cannot" in warn[0]
    assert "the data has more features than the model, which was trained on 3." in warn[1]
    assert "'?' is not a number" in warn[2]
    assert "3 bad rows skipped" in out
    line = error_line("update", tmp_path / "a.npz", tmp_path / "b.svm", "--chunk-size", 40, "-o",
                      tmp_path / "e.npz")
    assert f"line {where[0] - 1}: label 3 is not one of the model's classes" in line
    # prequential: the curve of the dirty file is the clean file's
    (tmp_path / "c.svm").write_text("\n".join(svm_lines(X[200:], y[200:])) + "\n")
    outs = {}
    for name in ("b", "c"):
        _, outs[name], _ = run("prequential", "tvm", tmp_path / f"{name}.svm", "--model",
                               tmp_path / "a.npz", "--chunk-size", 40, "--no-plot",
                               "--on-bad-row", "skip", "--out", tmp_path / name)
    assert ((tmp_path / "b" / "prequential.csv").read_text()
            == (tmp_path / "c" / "prequential.csv").read_text())
    assert "3 bad rows skipped" in outs["b"] and "no bad rows skipped" in outs["c"]


def test_evaluate_skips_predict_does_not_offer_it(tmp_path):
    X, y = rows(200, seed=4)
    (tmp_path / "a.csv").write_text("a,b,c,label\n" + "\n".join(csv_lines(X, y)) + "\n")
    run("train", "tvm", tmp_path / "a.csv", "--budget", 20, "--gamma", GAMMA, "-q",
        "-o", tmp_path / "a.npz")
    lines, _ = with_bad(csv_lines(X, y), ["1,x,2,1", "1,2,3,5"], [5, 6])
    (tmp_path / "b.csv").write_text("a,b,c,label\n" + "\n".join(lines) + "\n")
    _, out, err = run("evaluate", tmp_path / "a.npz", tmp_path / "b.csv", "--json",
                      "--on-bad-row", "skip")
    doc = json.loads(out)
    # the unknown label 5 is not a bad row for evaluate: it counts as an error, as before
    assert doc["n"] == 201 and doc["skipped_rows"] == 1 and doc["unknown_labels"] == {"5": 1}
    assert len(warnings_of(err)) == 1
    code, _, err = run("predict", tmp_path / "a.npz", tmp_path / "b.csv",
                       "--on-bad-row", "skip", ok=False)
    assert code == 2 and "--on-bad-row" in err


def test_skip_keeps_structural_errors(tmp_path):
    (tmp_path / "a.csv").write_text("a,b,label\n1,2,1\n3,4,-1\n")
    line = error_line("train", "tvm", tmp_path / "a.csv", "--label-column", "nope",
                      "--on-bad-row", "skip")
    assert "'nope' is not in the header" in line
    line = error_line("train", "tvm", tmp_path / "missing.csv", "--on-bad-row", "skip")
    assert "missing.csv" in line
    # a file of bad rows only has no rows left
    (tmp_path / "b.csv").write_text("a,b,label\n1,x,1\n3,y,-1\n")
    code, _, err = run("train", "tvm", tmp_path / "b.csv", "--on-bad-row", "skip", ok=False)
    assert code == 2 and len(warnings_of(err)) == 2
    assert err.splitlines()[-1].startswith("fastbudget: error: ") and "no data rows" in err


def test_live_feed_survives_a_bad_line(tmp_path):
    from _cli import n_seen, spawn, stop_with, wait_for
    X, y = rows(400, seed=5)
    good = svm_lines(X, y)
    out = tmp_path / "live.npz"
    proc = spawn("train", "tvm", "-", "--n-features", 3, "--budget", 20, "--gamma", GAMMA,
                 "--standardize", "none", "--chunk-size", 100, "--checkpoint-every", 100,
                 "--on-bad-row", "skip", "-q", "-o", out)
    # a broken line in the second chunk, the pipe left open: the feed goes on past it
    feed = good[:150] + ["1 1:0.5 2:garbage"] + good[150:300]
    proc.stdin.write(("\n".join(feed) + "\n").encode())
    proc.stdin.flush()
    wait_for(lambda: n_seen(out) == 300, proc)
    stdout, stderr = stop_with(proc, signal.SIGINT)
    assert proc.returncode == 0, stderr
    assert "<stdin>, line 151: value of feature index 2 'garbage' is not a number." in stderr
    assert "1 bad row skipped (line 151)" in stdout
    got = fastbudget.load(out)
    ref = api_model(X[:300], y[:300], 100)
    np.testing.assert_array_equal(got.decision_function(X), ref.decision_function(X))


def test_error_mode_says_how_to_go_on(tmp_path):
    """The default stops at the first bad row and says how to go on past such rows; an
    error that ``skip`` would not leave out, and ``predict`` (which has no such option),
    do not say it."""
    hint = "To leave such rows out and go on, pass --on-bad-row skip."
    X, y = rows(60, seed=6)
    lines, where = with_bad(csv_lines(X, y), ["1,x,2,1"], [30])
    (tmp_path / "b.csv").write_text("a,b,c,label\n" + "\n".join(lines) + "\n")
    svm, _ = with_bad(svm_lines(X, y), ["1 1:x"], [30])
    (tmp_path / "b.svm").write_text("\n".join(svm) + "\n")
    for f, ln in (("b.csv", where[0]), ("b.svm", where[0] - 1)):     # no header line
        line = error_line("train", "perceptron", tmp_path / f, "-o", tmp_path / "m.npz")
        assert f"{f}, line {ln}: " in line and line.endswith(hint), line
    (tmp_path / "a.csv").write_text("a,b,c,label\n" + "\n".join(csv_lines(X, y)) + "\n")
    run("train", "perceptron", tmp_path / "a.csv", "-q", "-o", tmp_path / "a.npz")
    lines, where = with_bad(csv_lines(X, y), ["1,2,3,5"], [10])
    (tmp_path / "c.csv").write_text("a,b,c,label\n" + "\n".join(lines) + "\n")
    line = error_line("update", tmp_path / "a.npz", tmp_path / "c.csv", "-o", tmp_path / "u.npz")
    assert f"line {where[0]}: label 5 is not one of the model's classes" in line
    assert line.endswith(hint)
    assert error_line("evaluate", tmp_path / "a.npz", tmp_path / "b.csv").endswith(hint)
    # reworded by the command line: an index beyond the saved model's 3 features
    svm, where = with_bad(svm_lines(X, y), ["1 1:1 7:2"], [20])
    (tmp_path / "w.svm").write_text("\n".join(svm) + "\n")
    line = error_line("evaluate", tmp_path / "a.npz", tmp_path / "w.svm")
    assert f"line {where[0] - 1}" in line and line.endswith(hint), line
    for args in (("predict", tmp_path / "a.npz", tmp_path / "b.csv"),
                 ("train", "perceptron", tmp_path / "missing.csv"),
                 ("train", "perceptron", tmp_path / "a.csv", "--label-column", "nope")):
        line = error_line(*args)
        assert "on-bad-row" not in line, line


def test_text_labels_in_the_first_column_are_named(tmp_path):
    """UCI letter's layout (``T,2,8,...``: text labels first, no header): with the default
    label column (the last) the first line reads as a header and the second fails on its
    text label, where skipping would leave out every row; the error says to pass
    --label-column 0, and with it the file trains. A given label column and a bad field
    further down keep the plain advice."""
    rng = np.random.default_rng(0)
    labels = rng.choice(["A", "B"], 60)
    lines = [f"{lab}," + ",".join(str(int(v)) for v in rng.integers(0, 15, 3)) for lab in labels]
    (tmp_path / "l.csv").write_text("\n".join(lines) + "\n")
    line = error_line("train", "perceptron", tmp_path / "l.csv", "-o", tmp_path / "m.npz")
    assert line.endswith("line 2: value in feature column 0 " + repr(lines[1].split(",")[0])
                         + " is not a number. If column 0 holds the labels ("
                         + repr(lines[1].split(",")[0]) + " is text), pass --label-column 0; "
                         "to leave such rows out and go on, pass --on-bad-row skip."), line
    run("train", "perceptron", tmp_path / "l.csv", "--label-column", "0", "-q", "-o",
        tmp_path / "m.npz")
    assert fastbudget.load(tmp_path / "m.npz").classes_.tolist() == ["A", "B"]
    hint = "To leave such rows out and go on, pass --on-bad-row skip."
    line = error_line("train", "perceptron", tmp_path / "l.csv", "--label-column", "2", "-o",
                      tmp_path / "n.npz")
    assert line.endswith(hint), line
    bad = ["1,2,3,A"] * 5 + ["1,x,3,B"] + ["1,2,3,B"] * 5
    (tmp_path / "d.csv").write_text("\n".join(bad) + "\n")
    line = error_line("train", "perceptron", tmp_path / "d.csv", "-o", tmp_path / "d.npz")
    assert "line 6:" in line and line.endswith(hint), line
