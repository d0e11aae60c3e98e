"""Build hook: a wheel that carries portable machine code (``FASTBUDGET_PORTABLE_BUILD=1``).

By default the package is pure Python and its first use compiles (``docs/getting-started.md``). With
``FASTBUDGET_PORTABLE_BUILD=1`` in the environment, ``build_py`` runs
``python -m fastbudget._portable build`` on the built tree, so the wheel's ``__pycache__``
folders hold every kernel compiled for the portable x86-64 levels, and the wheel is tagged for
this Python and platform (the cache files are both). Its metadata then requires the exact
Numba it was compiled with (``numba==X.Y.Z`` in place of ``pyproject.toml``'s lower bound):
the shipped code is only used under that Numba (``kernels/_jit.py``), so a wheel that
allowed any Numba would install, and then compile on first use like a source install. It
needs numpy, scipy and numba in the building environment:
``pip wheel --no-build-isolation --no-deps .``. Everything else is in ``pyproject.toml``.
"""
import os
import re
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:   # setuptools < 70.1 (pyproject.toml asks for 77 in isolated builds)
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:   # no wheel to build here (metadata, sdist)
        bdist_wheel = None


def _portable():
    return os.environ.get("FASTBUDGET_PORTABLE_BUILD", "0") == "1"


class BuildPy(build_py):
    def run(self):
        super().run()
        if not _portable() or getattr(self, "editable_mode", False):
            return
        try:
            import numba  # noqa: F401
            import numpy  # noqa: F401
            import scipy  # noqa: F401
        except ImportError as exc:
            raise SystemExit(
                f"FASTBUDGET_PORTABLE_BUILD=1 compiles the kernels while building and needs "
                f"numpy, scipy and numba here ({exc}); install them and build with "
                f"pip wheel --no-build-isolation --no-deps .") from None
        lib = os.path.abspath(self.build_lib)
        for d, subdirs, _ in os.walk(os.path.join(lib, "fastbudget")):
            if "__pycache__" in subdirs:   # no stale code from an earlier build
                shutil.rmtree(os.path.join(d, "__pycache__"))
                subdirs.remove("__pycache__")
        env = dict(os.environ, PYTHONPATH=lib)
        env.pop("NUMBA_CACHE_DIR", None)   # into the built package's own __pycache__
        subprocess.run([sys.executable, "-m", "fastbudget._portable", "build"], env=env,
                       cwd=lib, check=True)


cmdclass = {"build_py": BuildPy}
if bdist_wheel is not None:
    class BdistWheel(bdist_wheel):
        def finalize_options(self):
            super().finalize_options()
            if _portable():
                self.root_is_pure = False   # cpXY-cpXY-<platform>: the cache is both

        def egg2dist(self, egginfo_path, distinfo_path):
            super().egg2dist(egginfo_path, distinfo_path)
            if _portable():
                _pin_numba(os.path.join(distinfo_path, "METADATA"))

    cmdclass["bdist_wheel"] = BdistWheel


def _pin_numba(metadata):
    """Require the Numba the kernels were compiled with (the wheel's METADATA, before the
    wheel's RECORD is written)."""
    import numba
    with open(metadata, encoding="utf-8") as f:
        lines = f.read().split("\n")
    pinned = False
    for i, line in enumerate(lines):
        # numba itself (not a package whose name starts with it), with no environment marker
        if re.match(r"Requires-Dist: numba(?![\w.-])", line) and ";" not in line:
            lines[i] = f"Requires-Dist: numba=={numba.__version__}"
            pinned = True
    if not pinned:
        raise SystemExit(f"no 'Requires-Dist: numba' line to pin in {metadata}")
    with open(metadata, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


setup(cmdclass=cmdclass)
