"""Numba-compiled compute kernels.

Everything in this package is an ``@njit(cache=True)`` function over NumPy arrays: no classes,
no Python objects. Functions trust their input (the estimator layer validates), mutate the state
arrays they are given in place (their docstrings say so) and report failures as integer status
codes instead of raising.
"""
