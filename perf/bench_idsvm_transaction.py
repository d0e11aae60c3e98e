"""IncrementalSVC.partial_fit in chunks: time and peak RSS against the model's state size.

    python perf/bench_idsvm_transaction.py [--capacity 3000] [--chunk 50]

Learns ``capacity`` standardised noisy-checkerboard examples (RBF delta = 0.37, C = 100)
in chunks. Each call runs in a transaction (any exception leaves the model as it was);
the peak RSS shows what the rollback snapshot costs on top of the state (``memory_bytes``,
dominated by K and R, capacity^2 each). Run in a fresh process: the RSS is the process's.
"""
import argparse
import resource
import time

from fastbudget import IncrementalSVC
from fastbudget.datasets import make_checkerboard


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capacity", type=int, default=3000)
    ap.add_argument("--chunk", type=int, default=50)
    a = ap.parse_args()
    X, y = make_checkerboard(a.capacity, noise=0.15, random_state=0)
    X = (X - 2) / (4 / 12 ** 0.5)
    clf = IncrementalSVC(C=100.0, gamma=1 / (2 * 0.37), capacity=a.capacity)
    clf.partial_fit(X[:a.chunk], y[:a.chunk], classes=[-1, 1])      # (compiles)
    t = time.perf_counter()
    for lo in range(a.chunk, a.capacity, a.chunk):
        clf.partial_fit(X[lo:lo + a.chunk], y[lo:lo + a.chunk])
    sec = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    state = clf.memory_bytes() / 2**20
    print(f"capacity {a.capacity}, chunks of {a.chunk}: {sec:.2f} s, peak RSS {rss:.0f} MiB, "
          f"state {state:.0f} MiB, peak RSS / state {rss / state:.2f}")


if __name__ == "__main__":
    main()
