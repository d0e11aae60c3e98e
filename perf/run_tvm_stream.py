"""TVM (B = 100) on a long N-Checkerboard stream: accuracy vs N, throughput, memory.

    python perf/run_tvm_stream.py --n 10000000 [--budget 100] [--seed 0] [--chunk 100000]

Streams the data in chunks (the stream is never held whole), prints after each power of 10
and at the end: examples seen, test accuracy on 5,000 clean points, cumulative seconds,
examples/second, peak RSS (MiB) and the model's memory_bytes(). The paper (000, Sec. 5.3)
reports 98.7% after 10^7 examples.
"""
import argparse
import resource
import time

import numpy as np

from fastbudget import TVMClassifier
from fastbudget.datasets import make_checkerboard, stream_chunks
from fastbudget.kernels import adiabatic as ad

SD = 4 / np.sqrt(12)


def jr(clf):
    st = clf.engine_state_
    return ad.jr_residual(st.y, st.K, st.S_idx, int(st.ist[ad.I_NS]), st.R)


def rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--budget", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--chunk", type=int, default=100_000)
    a = p.parse_args(argv)
    Xt, yt = make_checkerboard(5000, random_state=10_000 + a.seed)
    Xt = (Xt - 2) / SD
    clf = TVMClassifier(budget=a.budget, gamma=1 / (2 * 0.37))
    clf.partial_fit(Xt[:2], np.array([-1, 1]), classes=[-1, 1])  # compile outside the clock
    clf = TVMClassifier(budget=a.budget, gamma=1 / (2 * 0.37))
    marks = sorted(set([10 ** k for k in range(2, 12) if 10 ** k <= a.n] + [a.n]))
    seen = 0
    t_fit = 0.0
    print("| N | accuracy | seconds | examples/s | accepted | merges | peak RSS MiB | model bytes "
          "| KT residual | max abs(J R - I) | R rebuilds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for X, y in stream_chunks("checkerboard", a.n, a.chunk, random_state=a.seed, noise=0.15):
        X = (X - 2) / SD
        while marks and seen + X.shape[0] >= marks[0]:
            cut = marks[0] - seen
            if cut > 0:
                t = time.perf_counter()
                clf.partial_fit(X[:cut], y[:cut], classes=[-1, 1])
                t_fit += time.perf_counter() - t
            seen += cut
            X, y = X[cut:], y[cut:]
            acc = clf.score(Xt, yt)
            print(f"| {seen:,} | {100 * acc:.2f} | {t_fit:.1f} | {seen / max(t_fit, 1e-9):,.0f} | "
                  f"{clf.n_accepted_:,} | {clf.n_merges_:,} | {rss_mib():.1f} | "
                  f"{clf.memory_bytes():,} | {clf.kkt_residual():.1e} | {jr(clf):.1e} | "
                  f"{int(clf.engine_state_.ist[ad.I_NREBUILD])} |", flush=True)
            marks.pop(0)
        if X.shape[0]:
            t = time.perf_counter()
            clf.partial_fit(X, y, classes=[-1, 1])
            t_fit += time.perf_counter() - t
            seen += X.shape[0]
    return clf


if __name__ == "__main__":
    main()
