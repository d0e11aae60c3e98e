"""TVM's m2 removal rule (Alg. 3): removal='abs' (the paper's |f(q)| > m2) against
removal='own_side' (only twins beyond m2 on their own label's side), on the streams of
``fastbudget reproduce`` (the same data, kernels, C and order seeds 1000 + o).

Run from the repository root (about 12 minutes for all parts on 2 cores)::

    python perf/compare_tvm_removal.py --data-dir ../shared/data
    python perf/compare_tvm_removal.py --data-dir ../shared/data --parts t3 \\
        --sets Gauss,Banana,N-Checkerboard,Checkerboard --orders 15

This is ``perf/compare_tvm.py --param removal --values abs,own_side`` with Table 5 limited
to its '[-1 1]' variant (m2 = 1, the one the rule changes); every option of that script
applies (parts t3, t3small, t3large, t4, t5; ``--orders``, ``--t5-orders`` (default 3),
``--jsonl FILE``).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from compare_tvm import main  # noqa: E402

if __name__ == "__main__":
    main(["--t5-variants", "[-1 1]", *sys.argv[1:]], param="removal", values="abs,own_side")
