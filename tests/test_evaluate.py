"""The streaming evaluation loops of ``fastbudget.evaluate`` against plain-Python versions.

A small pure-Python learner (running class means, nearest mean wins) records every
``partial_fit`` call, so that each test checks both what the loop measured and that the model
learned the stream in the same calls as the plain loop makes.
"""
import numpy as np
import pytest

from fastbudget.evaluate import holdout, ordered_chunks, prequential


class Means:
    """Nearest class mean; each ``partial_fit`` call is logged as (rows, classes given)."""

    def __init__(self):
        self.sums, self.counts, self.calls = {}, {}, []

    def partial_fit(self, X, y, classes=None):
        self.calls.append((tuple(map(tuple, np.asarray(X).tolist())),
                           None if classes is None else tuple(classes)))
        if classes is not None:
            for c in classes:
                self.sums.setdefault(c, np.zeros(X.shape[1]))
                self.counts.setdefault(c, 0)
        for x, label in zip(X, y):
            self.sums[label] = self.sums[label] + x
            self.counts[label] += 1
        return self

    def predict(self, X):
        labels = [c for c in self.sums if self.counts[c]]
        means = np.array([self.sums[c] / self.counts[c] for c in labels])
        d = ((np.asarray(X)[:, None, :] - means[None]) ** 2).sum(axis=2)
        return np.array(labels)[np.argmin(d, axis=1)]

    def score(self, X, y):
        return float(np.mean(self.predict(X) == y))


def _stream(n, chunk, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y, [(X[i:i + chunk], y[i:i + chunk]) for i in range(0, n, chunk)]


def plain_prequential(model, chunks, classes, window):
    """The CLI's test-then-train loop written out: per chunk, the first one's first half
    learned untested; a window of whole chunks holding at least ``window`` examples."""
    rows, per_chunk = [], []
    tested = correct = learned = 0
    for k, (X, y) in enumerate(chunks):
        if k == 0 and classes is not None:
            h = max(2, len(y) // 2)
            model.partial_fit(X[:h], y[:h], classes=classes)
            learned += len(y[:h])
            X, y = X[h:], y[h:]
            if len(y) == 0:
                continue
        right = sum(int(p == t) for p, t in zip(model.predict(X), y))
        model.partial_fit(X, y)
        learned += len(y)
        tested += len(y)
        correct += right
        per_chunk.append((len(y), right))
        kept = list(per_chunk)
        while sum(m for m, _ in kept[1:]) >= window:
            kept.pop(0)
        w_n = sum(m for m, _ in kept)
        w_c = sum(c for _, c in kept)
        rows.append((learned, tested, correct, correct / tested, w_n, w_c / w_n, len(y)))
    return rows


@pytest.mark.parametrize("chunk, window", [(50, 120), (37, 1), (200, 10_000), (2, 7)])
def test_prequential_is_the_plain_test_then_train_loop(chunk, window):
    X, y, chunks = _stream(600, chunk)
    ours, ref = Means(), Means()
    steps = list(prequential(ours, chunks, classes=[-1, 1], window=window))
    want = plain_prequential(ref, chunks, [-1, 1], window)
    got = [(s.n_learned, s.n_tested, s.n_correct, s.accuracy, s.window_tested,
            s.window_accuracy, s.chunk_tested) for s in steps]
    assert got == want
    assert ours.calls == ref.calls
    assert steps[-1].n_learned == 600
    assert 0.6 < steps[-1].accuracy < 1.0          # the learner learns something


def test_prequential_of_a_fitted_model_tests_every_chunk():
    X, y, chunks = _stream(300, 60)
    ours = Means().partial_fit(X[:10], y[:10], [-1, 1])
    ref = Means().partial_fit(X[:10], y[:10], [-1, 1])
    steps = list(prequential(ours, chunks, window=100))
    assert [s.chunk_tested for s in steps] == [60] * 5
    assert [s[1:] for s in plain_prequential(ref, chunks, None, 100)] == [
        (s.n_tested, s.n_correct, s.accuracy, s.window_tested, s.window_accuracy,
         s.chunk_tested) for s in steps]
    assert ours.calls == ref.calls


def test_prequential_step_context_wraps_each_chunk_and_window_is_checked():
    X, y, chunks = _stream(100, 25)
    model, entered = Means(), []

    class Guard:
        def __enter__(self):
            entered.append(len(model.calls))

        def __exit__(self, *exc):
            entered.append(len(model.calls))

    list(prequential(model, chunks, classes=[-1, 1], step=Guard))
    # entered before and left after each chunk's calls: 2 calls in the first, 1 after
    assert entered == [0, 2, 2, 3, 3, 4, 4, 5]
    with pytest.raises(ValueError, match="window"):
        next(prequential(Means(), chunks, classes=[-1, 1], window=0))
    assert list(prequential(Means(), [], classes=[-1, 1])) == []


def plain_holdout(model, X, y, order, chunk, cps, Xt, yt):
    """``reproduce.run_stream`` as it was: chunks of ``chunk`` rows in ``order``, a chunk
    ending early at a checkpoint, scored after each."""
    curve, n, cps = [], 0, list(cps)
    while n < len(order):
        stop = min(len(order), n + chunk)
        if cps and cps[0] < stop:
            stop = max(cps[0], n + 1)
        idx = order[n:stop]
        model.partial_fit(X[idx], y[idx], classes=np.array([-1, 1]))
        n = stop
        while cps and cps[0] <= n:
            curve.append((n, model.score(Xt, yt)))
            cps.pop(0)
    acc = model.score(Xt, yt)
    if curve == [] or curve[-1][0] != n:
        curve.append((n, acc))
    return acc, curve


@pytest.mark.parametrize("cps", [[100, 250, 251, 1000, 1500], [1, 2, 3], [1500], [0, 700]])
def test_holdout_on_ordered_chunks_is_the_reproductions_loop(cps):
    X, y, _ = _stream(1700, 1)
    Xa, ya, Xt, yt = X[:1500], y[:1500], X[1500:], y[1500:]
    order = np.random.default_rng(3).permutation(1500)
    ours, ref = Means(), Means()
    res = holdout(ours, ordered_chunks(Xa, ya, order, 400, cuts=cps), Xt, yt,
                  classes=np.array([-1, 1]), checkpoints=cps)
    acc, curve = plain_holdout(ref, Xa, ya, order, 400, cps, Xt, yt)
    assert (res.accuracy, res.curve, res.n_learned) == (acc, curve, 1500)
    assert ours.calls == ref.calls
    assert res.fit_seconds >= 0


def test_holdout_cuts_incoming_chunks_at_checkpoints():
    """A stream of fixed chunks (figure 2's): a chunk is cut at each checkpoint, and the
    model after n examples is the one a row-by-row feed has after n."""
    X, y, chunks = _stream(1000, 300)
    Xt, yt, _ = _stream(200, 200, seed=1)
    seen = []
    res = holdout(Means(), chunks, Xt, yt, classes=[-1, 1], checkpoints=[10, 300, 555, 1000],
                  on_checkpoint=lambda n, acc, m: seen.append((n, acc, sum(m.counts.values()))))
    assert [(n, k) for n, _, k in seen] == [(10, 10), (300, 300), (555, 555), (1000, 1000)]
    sizes = []
    res2 = holdout(Means(), chunks, Xt, yt, classes=[-1, 1], checkpoints=[10, 300, 555, 1000],
                   on_chunk=sizes.append)
    assert sizes == [10, 290, 255, 45, 300, 100]
    for n, acc, _ in seen:
        ref = Means()
        for i in range(n):
            ref.partial_fit(X[i:i + 1], y[i:i + 1], classes=[-1, 1])
        assert ref.score(Xt, yt) == acc
    assert res.curve == res2.curve == [(n, a) for n, a, _ in seen]
    assert res.accuracy == seen[-1][1]


def test_holdout_without_checkpoints_scores_once_at_the_end():
    X, y, chunks = _stream(500, 120)
    ours = Means()
    res = holdout(ours, chunks, X[:50], y[:50], classes=[-1, 1])
    assert res.curve == [] and res.n_learned == 500
    assert len(ours.calls) == 5 and all(c == (-1, 1) for _, c in ours.calls)
    assert res.accuracy == ours.score(X[:50], y[:50])
