"""Peak RSS of ``fastbudget train tvm`` on a 10^5-row and a 10^7-row LIBSVM file.

Usage::

    python perf/bench_cli_memory.py [--rows 100000,10000000] [--dir /tmp] [--keep]

Writes N-Checkerboard LIBSVM files (2 features; about 40 bytes a row, so 10^7 rows are about
400 MB) into ``--dir``, runs ``python -m fastbudget.cli train tvm FILE`` on each in a child
process and reads the child's peak resident set size from ``resource.getrusage`` (ru_maxrss,
KiB on Linux). The files are deleted afterwards unless ``--keep``. The claim checked: the
reader and the learner stream in constant memory, so the peak RSS of the 10^7-row run is within
a few MiB of the 10^5-row run (the import of NumPy/Numba and the compiled code dominate both).
"""
import argparse
import os
import pathlib
import subprocess
import sys
import time


ROOT = pathlib.Path(__file__).resolve().parents[1]

from fastbudget.datasets import stream_chunks


def write_file(path, n, seed=0, chunk=200_000):
    t = time.perf_counter()
    with open(path, "w") as f:
        for X, y in stream_chunks("checkerboard", n, chunk, random_state=seed, noise=0.15):
            f.write("\n".join(f"{int(b)} 1:{a0:.6f} 2:{a1:.6f}"
                              for b, (a0, a1) in zip(y, X)) + "\n")
    return time.perf_counter() - t


def train_rss(path, out):
    """Run the CLI in a fresh child; return (peak RSS in MiB, seconds, stdout)."""
    code = (
        "import resource, sys, runpy\n"
        "sys.argv = ['fastbudget'] + sys.argv[1:]\n"
        "from fastbudget.cli import main\n"
        "rc = main()\n"
        "print('MAXRSS_KIB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code, "train", "tvm", str(path), "--budget", "100",
                        "--gamma", str(1 / (2 * 0.37)), "--chunk-size", "10000", "-q", "-o", str(out)],
                       capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    kib = int(r.stderr.split("MAXRSS_KIB")[1].split()[0])
    return kib / 1024, wall, r.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="100000,10000000")
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    results = []
    for n in [int(v) for v in args.rows.split(",")]:
        path = pathlib.Path(args.dir) / f"fastbudget_bench_{n}.svm"
        out = pathlib.Path(args.dir) / f"fastbudget_bench_{n}.npz"
        try:
            tw = write_file(path, n)
            size = path.stat().st_size / 2**20
            rss, wall, msg = train_rss(path, out)
        finally:
            for p in (path, out, pathlib.Path(str(out) + ".scaler.json")):
                if p.exists() and not args.keep:
                    p.unlink()
        results.append((n, size, rss, wall))
        print(f"{n:>12,} rows  file {size:8.1f} MiB (written in {tw:.0f} s)  peak RSS {rss:7.1f} MiB  "
              f"train {wall:6.1f} s   [{msg}]", flush=True)
    if len(results) >= 2:
        d = results[-1][2] - results[0][2]
        print(f"peak RSS difference, {results[-1][0]:,} vs {results[0][0]:,} rows: {d:+.1f} MiB "
              f"(file size ratio {results[-1][1] / results[0][1]:.0f}x)")


if __name__ == "__main__":
    main()
