"""``fastbudget warmup [--jobs N] [--native]``: compile every learner now (fills Numba's
on-disk cache), in one process per core by default; a package with portable machine code
only loads it, unless ``--native`` (compile for this CPU)."""
from ..._progress import note


def run(opts, args):
    """Run ``fastbudget warmup``; returns the exit status."""
    from ... import warmup           # (imports every learner)
    note("compiling every learner (first run only; later runs load the on-disk cache)...",
         opts.quiet)
    t = warmup(verbose=not opts.quiet, jobs=args.jobs, native=args.native)
    print(f"warmup done in {t:.1f} s")
    return 0
