"""Concept drift: TVMClassifier with forgetting=None / 'auto' against an oracle and river's HAT.

Five river streams of 15,000 examples (``docs/results/drift.md``):

- abrupt drift at 9,000 (``ConceptDriftStream``, width 100): Agrawal function 1 -> 6,
  SEA variant 0 -> 3, STAGGER function 0 -> 2;
- incremental drift: ``Hyperplane(n_features=6, mag_change=0.003)`` and
  ``RandomRBFDrift(change_speed=0.001)`` (10 features, 50 centroids, all drifting).

Learners, each scored prequentially (predict, then learn, one example at a time):
TVM off (``forgetting=None``), TVM ``forgetting='auto'``, the *oracle* (TVM off started
fresh at the drift, at 9,000 = 60% of the stream for the incremental ones) and
``river.tree.HoeffdingAdaptiveTreeClassifier`` (raw features). The TVMs see features
standardised by ``fastbudget.datasets.StreamingStandardizer(n_warmup=1000)`` (statistics
of the first 1,000 examples, then frozen). The table gives the accuracy over the last 20%
of each stream (examples 12,000 to 15,000), the mean over the seeds.

Run: ``python perf/drift.py [--seeds 1 2 3] [--plot docs/results/drift.png]`` (needs river;
matplotlib for the plot). Several minutes of CPU.
"""
import argparse
import sys
import time
import warnings

import numpy as np

N = 15000
DRIFT = 9000
LAST = int(0.8 * N)
STREAMS = ("Agrawal 1->6", "SEA 0->3", "STAGGER 0->2", "Hyperplane", "RandomRBFDrift")


def make_stream(name, seed):
    """(X raw float64, y int, list of river dicts) for stream ``name``."""
    from river.datasets import synth

    def abrupt(a, b):
        return synth.ConceptDriftStream(a, b, position=DRIFT, width=100, seed=seed)

    if name.startswith("Agrawal"):
        s = abrupt(synth.Agrawal(classification_function=1, seed=seed),
                   synth.Agrawal(classification_function=6, seed=seed + 100))
    elif name.startswith("SEA"):
        s = abrupt(synth.SEA(variant=0, seed=seed), synth.SEA(variant=3, seed=seed + 100))
    elif name.startswith("STAGGER"):
        s = abrupt(synth.STAGGER(classification_function=0, seed=seed),
                   synth.STAGGER(classification_function=2, seed=seed + 100))
    elif name == "Hyperplane":
        s = synth.Hyperplane(seed=seed, n_features=6, mag_change=0.003)
    elif name == "RandomRBFDrift":
        s = synth.RandomRBFDrift(seed_model=seed, seed_sample=seed + 100, change_speed=0.001)
    else:
        raise ValueError(name)
    D, X, y = [], [], []
    for x, t in s.take(N):
        D.append(x)
        X.append([float(v) for v in x.values()])
        y.append(int(t))
    return np.array(X), np.array(y), D


def prequential_tvm(Z, y, start=0, **params):
    """Hits (1/0) of TVM scored before learning each example from ``start`` on."""
    from fastbudget import TVMClassifier

    clf = TVMClassifier(budget=100, gamma="auto", **params)
    hit = np.zeros(len(y))
    clf.learn_one(Z[start], y[start], classes=[0, 1])
    for t in range(start + 1, len(y)):
        hit[t] = clf.predict(Z[t:t + 1])[0] == y[t]
        clf.learn_one(Z[t], y[t])
    return hit, clf


def prequential_hat(D, y, seed):
    from river import tree

    m = tree.HoeffdingAdaptiveTreeClassifier(seed=seed)
    hit = np.zeros(len(y))
    for t, (x, yt) in enumerate(zip(D, y)):
        hit[t] = m.predict_one(x) == yt
        m.learn_one(x, int(yt))
    return hit


def run(name, seed):
    from fastbudget.datasets import StreamingStandardizer

    X, y, D = make_stream(name, seed)
    Z = StreamingStandardizer(n_warmup=1000).fit(X[:1000]).transform(X)
    out = {}
    t0 = time.process_time()
    out["off"], _ = prequential_tvm(Z, y)
    out["auto"], clf = prequential_tvm(Z, y, forgetting="auto")
    out["oracle"], _ = prequential_tvm(Z, y, start=DRIFT)
    out["HAT"] = prequential_hat(D, y, seed)
    return out, clf.n_drifts_, time.process_time() - t0


def rolling(hit, w=500):
    c = np.concatenate([[0.0], np.cumsum(hit)])
    return (c[w:] - c[:-w]) / w


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--plot", default=None, help="PNG of accuracy over time (seed 1)")
    ap.add_argument("--streams", nargs="+", default=list(STREAMS))
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows, curves = [], {}
    for name in args.streams:
        res = {k: [] for k in ("off", "auto", "oracle", "HAT")}
        drifts = []
        for seed in args.seeds:
            out, nd, cpu = run(name, seed)
            for k, h in out.items():
                res[k].append(h[LAST:].mean())
            drifts.append(nd)
            if seed == args.seeds[0]:
                curves[name] = out
            print(f"  {name} seed {seed}: " + ", ".join(
                f"{k} {h[LAST:].mean():.3f}" for k, h in out.items())
                + f"; drifts {nd}; {cpu:.0f} s CPU", file=sys.stderr, flush=True)
        rows.append((name, {k: float(np.mean(v)) for k, v in res.items()}, drifts))
    print(f"Accuracy over examples {LAST:,}-{N:,} (prequential), mean of seeds {args.seeds}")
    print("| stream | TVM off | TVM auto | oracle | HAT | auto - oracle | auto - HAT | "
          "drifts flagged |")
    print("|---|---|---|---|---|---|---|---|")
    for name, m, drifts in rows:
        print(f"| {name} | {m['off']:.3f} | {m['auto']:.3f} | {m['oracle']:.3f} | "
              f"{m['HAT']:.3f} | {m['auto'] - m['oracle']:+.3f} | {m['auto'] - m['HAT']:+.3f} | "
              f"{', '.join(map(str, drifts))} |")
    if args.plot:
        from fastbudget.plotting import _pyplot

        plt = _pyplot()
        if plt is None:
            return
        fig, axes = plt.subplots(len(curves), 1, figsize=(8, 2.3 * len(curves)), sharex=True)
        axes = np.atleast_1d(axes)
        for ax, (name, out) in zip(axes, curves.items()):
            for k, style in (("off", ":"), ("auto", "-"), ("oracle", "--"), ("HAT", "-.")):
                h = out[k]
                x = np.arange(500, N + 1)
                r = rolling(h)
                if k == "oracle":
                    r[:DRIFT + 1] = np.nan
                ax.plot(x, r, style, label=f"TVM {k}" if k != "HAT" else "HAT", lw=1.2)
            ax.axvline(DRIFT, color="grey", lw=0.8)
            ax.axvspan(LAST, N, color="grey", alpha=0.1)
            ax.set_ylabel("accuracy")
            ax.set_title(f"{name} (seed {args.seeds[0]}; window of 500)", fontsize=9)
        axes[0].legend(loc="lower left", fontsize=8, ncol=4)
        axes[-1].set_xlabel("examples")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=90)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
