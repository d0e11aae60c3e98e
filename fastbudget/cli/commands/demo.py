"""``fastbudget demo``: TVM (B = 100) learns a 10^6-example N-Checkerboard stream beside an
exact SVM trained on a prefix of it, and draws the decision boundary with its twin vectors."""
import math
import os
import threading
import time

import numpy as np

import fastbudget

from ..._progress import note, progress
from ...datasets import make_checkerboard, stream_chunks
from ...evaluate import holdout
from ..files import check_out_dir

CB_GAMMA = 1.0 / (2 * 0.37)          # paper 000: RBF delta = 0.37 on standardised checkerboards
CB_SCALE = 4.0 / math.sqrt(12.0)     # sd of U[0, 4)


class _ExactSVM:
    """The demo's exact SVM on the first ``n`` examples of the stream, fitted and scored.

    scikit-learn's ``SVC`` (when installed) releases the GIL while it trains and predicts,
    so the demo runs it in a thread while Numba compiles TVM; without scikit-learn the
    fallback is fastbudget's own ``IncrementalSVC``, which needs Numba and runs after TVM.
    """

    def __init__(self, args, std, Xt, yt):
        try:
            from sklearn.svm import SVC
        except ImportError:
            from ...estimators.idsvm import IncrementalSVC
            self.n = min(args.exact_n or 2_000, args.n)
            self.model = IncrementalSVC(C=100.0, gamma=CB_GAMMA, capacity=self.n)
            self.name, self.threaded, self.where = "fastbudget IncrementalSVC", False, ""
        else:
            self.n = min(args.exact_n or 10_000, args.n)
            self.model = SVC(C=100.0, gamma=CB_GAMMA)
            self.name, self.threaded = "scikit-learn SVC", True
            self.where = ", in a thread beside TVM"
        X, self.y = next(stream_chunks("checkerboard", args.n, self.n,
                                       random_state=args.seed, noise=0.15))
        self.X, self.Xt, self.yt = std(X), Xt, yt
        self._thread, self._out, self._error = None, None, None

    def _run(self):
        try:
            t = time.perf_counter()
            self.model.fit(self.X, self.y)
            seconds = time.perf_counter() - t
            m = self.model
            n_sv = int(np.sum(getattr(m, "n_support_", [len(getattr(m, "support_vectors_", []))])))
            self._out = (self.model.score(self.Xt, self.yt), seconds, n_sv)
        except BaseException as exc:      # re-raised in the main thread by result()
            self._error = exc

    def start(self, quiet):
        note(f"training the exact SVM ({self.name}) on the first {self.n:,} examples...", quiet)
        if self.threaded:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        else:
            self._run()

    def result(self):
        """(test accuracy, seconds of fit, number of support vectors)."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        return self._out


def run(opts, args):
    """Run ``fastbudget demo``: TVM (B = budget) on a noisy checkerboard stream beside an
    exact SVM on a prefix; returns the exit status."""
    q = opts.quiet

    def std(X):
        return (X - 2.0) / CB_SCALE

    if not args.no_plot:
        check_out_dir(args.out)
    Xt, yt = make_checkerboard(5000, noise=0.0, random_state=args.seed + 1)
    Xt = std(Xt)
    print(f"fastbudget demo: TVM with budget B = {args.budget} learns a {args.n:,}-example "
          f"N-Checkerboard stream (15% of labels flipped), RBF delta = 0.37, C = 100")
    # the exact (unbounded) SVM on a prefix of the same stream; scikit-learn's SVC releases
    # the GIL while it trains and predicts, so it runs in a thread beside TVM's compile
    exact = _ExactSVM(args, std, Xt, yt)
    if exact.threaded:
        exact.start(q)
    note("compiling (first run only)...", q)
    t = time.perf_counter()
    tvm = fastbudget.TVMClassifier(budget=args.budget, C=100.0, gamma=CB_GAMMA)
    Xw, yw = make_checkerboard(200, 0.15, random_state=10_000 + args.seed)
    tvm.partial_fit(std(Xw), yw, classes=[-1, 1])     # compiles (or loads) the TVM code
    tvm.decision_function(Xt[:10])
    t_compile = time.perf_counter() - t
    tvm = fastbudget.TVMClassifier(budget=args.budget, C=100.0, gamma=CB_GAMMA)
    with progress(args.n, "TVM", quiet=q) as bar:
        stream = ((std(X), y) for X, y in stream_chunks("checkerboard", args.n, args.chunk_size,
                                                        random_state=args.seed, noise=0.15))
        res = holdout(tvm, stream, Xt, yt, classes=[-1, 1], on_chunk=bar.update)
    acc, n, t_fit = res.accuracy, res.n_learned, res.fit_seconds
    if not exact.threaded:
        exact.start(q)
    acc_ex, t_exact, n_sv = exact.result()
    n_ex, exact_name = exact.n, exact.name
    sv_bytes = n_sv * (Xt.shape[1] + 1) * 8
    print(f"  TVM (B = {args.budget}) on all {n:,} examples : test accuracy {100 * acc:6.2f} %  "
          f"({n / max(t_fit, 1e-9):,.0f} examples/s, {t_fit:.1f} s; model memory "
          f"{tvm.memory_bytes() / 1024:,.1f} KiB, {tvm.n_twins_} twin vectors)")
    print(f"  exact SVM on the first {n_ex:,} examples   : test accuracy {100 * acc_ex:6.2f} %  "
          f"({exact_name}, {t_exact:.1f} s{exact.where}, {n_sv:,} support vectors = "
          f"{sv_bytes / 1024:,.1f} KiB of vectors)")
    print(f"  test set: 5,000 points of the noise-free board; best possible 100 %. "
          f"Paper 000 (Fig. 2): TVM B = 100 reaches 98.7 % after 10^7 examples.")
    print(f"  startup: {t_compile:.1f} s (Numba compiles TVM on the first run after install "
          f"and loads it from its on-disk cache afterwards)")
    if not args.no_plot:
        from ... import plotting
        os.makedirs(args.out, exist_ok=True)
        png = os.path.join(args.out, "demo_boundary.png")
        title = (f"TVM, B = {args.budget}, after {n:,} N-Checkerboard examples "
                 f"(test accuracy {100 * acc:.2f} %)")
        if plotting.plot_boundary(tvm, png, title=title, transform=std,
                                  bounds=(0.0, 4.0), quiet=q):
            print(f"  decision boundary with its twin vectors: {png}")
    return 0
