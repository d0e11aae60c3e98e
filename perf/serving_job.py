"""Serving, compiled and floor CPU seconds of one saved TVM model in this process, on rows
spread over the board's test range; prints them as one JSON line.

    python perf/serving_job.py MODEL.npz N_ROWS

Run by ``test_bench_serving.py::test_serving_in_a_dask_worker_environment`` in a fresh
process given the environment a Dask nanny gives its workers.
"""
import json
import sys

import numpy as np

from _bench import best_seconds, checkerboard, floor_seconds, uniform_rows
import fastbudget as fb
from fastbudget.serving import load_predictor


def main(path, n_rows):
    Xt = checkerboard(30_000)[2]
    pred = load_predictor(path)
    model = fb.load(path)
    Xs = uniform_rows(Xt, n_rows)
    serving = best_seconds(lambda: pred.decision_function(Xs), 3)
    compiled = best_seconds(lambda: model.decision_function(Xs), 3)
    fl = floor_seconds(model, Xs)
    same = bool(np.allclose(pred.decision_function(Xs[:5000]),
                            model.decision_function(Xs[:5000]), rtol=0, atol=1e-12))
    print(json.dumps({"serving_s": serving, "compiled_s": compiled, "floor_s": fl,
                      "same": same}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
