"""``njit``: Numba's decorator, with an on-disk cache that can also load portable machine code.

Numba caches each compiled function on disk (``cache=True``) under a key that names the CPU it
was compiled for: this machine's model and features. A fresh install therefore compiles every
function it meets (a minute for TVM's first fit). A wheel built with
``python -m fastbudget._portable build`` carries machine code compiled for portable x86-64
levels (``x86-64-v3``: AVX2 and FMA; ``x86-64-v4``: AVX-512) in the package's own
``__pycache__`` folders, and the manifest ``kernels/_portable.json`` names those keys.

:class:`PortableCache` looks a function up as Numba does, under this machine's key (code
compiled here, e.g. by ``fastbudget warmup``, always wins); on a miss it tries the shipped
levels this CPU can run, best first, and only then compiles. Code compiled for a level is the
same program for a more generic CPU: the same results, sometimes slower (``docs/results/
cold_start.md``). ``FASTBUDGET_PORTABLE=0`` in the environment turns the portable lookup off
(``warmup`` does, to compile for this CPU).
"""
import inspect
import json
import os

from numba import njit as _numba_njit
from numba.core.caching import FunctionCache, IndexDataCacheFile

__all__ = ["njit", "PortableCache", "portable_levels", "NO_REFCOUNT"]


def _no_refcount_options():
    """``{"_nrt": False}`` where this Numba has the option, else ``{}``."""
    from numba.core.cpu import CPUTargetOptions

    return {"_nrt": False} if hasattr(CPUTargetOptions, "_nrt") else {}


#: options of a kernel that only borrows arrays: it allocates none and gets none back from a
#: function it calls (a callee may allocate scratch, and frees it before it returns). Such a
#: kernel is compiled without Numba's reference counting, whose updates at each binding of an
#: array cost 4-6 % of TVM's d = 2 stream (``docs/results/tvm_profile.md``). Numba refuses to
#: compile an allocation without it, and its arrays then carry no reference count (a null
#: one, which a callee compiled with counting skips). The option is Numba's own (``_nrt``; the
#: source of 0.59, the oldest Numba supported, has it, its inheritance and that null check);
#: without it the same code is compiled with reference counting, which gives the same
#: results. ``tests/test_tvm.py`` checks that no call leaks.
NO_REFCOUNT = _no_refcount_options()

#: the manifest written by ``python -m fastbudget._portable build`` next to this file
MANIFEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_portable.json")

_levels = None


def _host_features():
    import llvmlite.binding as ll

    return {k for k, v in ll.get_host_cpu_features().items() if v}


def portable_levels(codegen=None):
    """The shipped levels this process may load: a list of Numba magic tuples (target
    triple, CPU name, feature string), best first. Empty without a manifest, when
    ``FASTBUDGET_PORTABLE=0``, or when the manifest's target triple is not this process's
    or this CPU lacks a level's features (code for it would stop on an illegal instruction)."""
    global _levels
    if os.environ.get("FASTBUDGET_PORTABLE", "1") == "0":
        return []
    if _levels is None:
        try:
            with open(MANIFEST, encoding="utf-8") as f:
                manifest = json.load(f)
            import numba

            if manifest.get("numba") != numba.__version__:
                _levels = []   # (the index files would be refused anyway)
            else:
                have = _host_features()
                _levels = [tuple(lv["magic_tuple"]) for lv in manifest["levels"]
                           if set(lv["requires"]) <= have]
        except (OSError, ValueError, KeyError, TypeError):
            _levels = []
    if codegen is not None:
        triple = codegen.magic_tuple()[0]
        return [m for m in _levels if m[0] == triple]
    return list(_levels)


class PortableCache(FunctionCache):
    """Numba's per-function cache; on a miss under this machine's key it loads the entry
    of a shipped portable level (:func:`portable_levels`), if there is one.

    The shipped entries are read from the package's own ``__pycache__`` folder even when
    Numba caches elsewhere (``NUMBA_CACHE_DIR`` set, or a package folder this user cannot
    write: Numba then caches in the user's cache folder), so such installs load them too;
    what is compiled here is written where Numba caches."""

    def __init__(self, py_func):
        super().__init__(py_func)
        tree = os.path.join(os.path.dirname(os.path.abspath(inspect.getfile(py_func))),
                            "__pycache__")
        if os.path.abspath(self._cache_path) == tree:
            self._shipped = self._cache_file
        else:
            self._shipped = IndexDataCacheFile(
                cache_path=tree, filename_base=self._impl.filename_base,
                source_stamp=self._impl.locator.get_source_stamp())

    def _load_overload(self, sig, target_context):
        data = super()._load_overload(sig, target_context)
        if data is not None or not self._enabled:
            return data
        codegen = target_context.codegen()
        levels = portable_levels(codegen)
        if not levels:
            return None
        here = self._index_key(sig, codegen)
        for magic in levels:
            data = self._shipped.load((here[0], magic, here[2]))
            if data is not None:
                return self._impl.rebuild(target_context, data)
        return None


def njit(*args, **kwargs):
    """``numba.njit``; with ``cache=True`` the dispatcher's cache is a :class:`PortableCache`
    (set in place of the ``FunctionCache`` Numba would make: what its ``enable_caching``
    does, so the cache folder is found and checked once).

    Each function is compiled with reference counting unless it asks for
    :data:`NO_REFCOUNT`: Numba would otherwise compile a function first called from a
    kernel without it without it too (the option is inherited when not set), and refuse one
    that allocates (the engine's rebuild of R, called from TVM's update)."""
    if NO_REFCOUNT:
        kwargs.setdefault("_nrt", True)
    if not kwargs.pop("cache", False):
        return _numba_njit(*args, **kwargs)
    out = _numba_njit(*args, **kwargs)

    def swap(disp):
        if hasattr(disp, "_cache"):   # (not under NUMBA_DISABLE_JIT: a Python function)
            disp._cache = PortableCache(disp.py_func)
        return disp

    if args and callable(args[0]):   # @njit(cache=True) is a call with a keyword: not here
        return swap(out)
    return lambda fn: swap(out(fn))
