"""Optional plots (matplotlib is imported lazily; every function returns False without it).

- :func:`plot_boundary`: a 2-D model's decision boundary, its +-1 margins and, for TVM, its
  twin vectors (paper 000, Figure 2);
- :func:`plot_prequential`: running (cumulative and windowed) accuracy of a stream;
- :func:`plot_series`: accuracy against the number of examples, one line per series
  (paper 000, Figures 2.e and 3).
"""
import sys

import numpy as np

__all__ = ["have_matplotlib", "plot_boundary", "plot_prequential", "plot_series"]

MISSING = ("matplotlib is not installed, so no PNG was written; "
           "install it with: pip install 'fastbudget[plot]'")


def have_matplotlib():
    """True when matplotlib can be imported (with the non-interactive Agg backend)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot(quiet=False):
    if not have_matplotlib():
        if not quiet:
            print(f"note: {MISSING}", file=sys.stderr)
        return None
    import matplotlib.pyplot as plt
    return plt


def plot_boundary(model, path, title="", transform=None, bounds=(0.0, 4.0), grid=300,
                  twins=True, ax=None, quiet=False):
    """Draw the decision boundary f = 0 (black), the margins f = +-1 and the twin vectors.

    Parameters
    ----------
    model : fitted binary estimator on 2 features
    path : str or None
        PNG to write (None with ``ax`` given: draw only).
    transform : callable or None
        Maps original coordinates (the plotted ones) to the model's input space.
    bounds : (low, high)
        Square plotted, in original coordinates.
    ax : matplotlib Axes, optional

    Returns
    -------
    bool : whether something was drawn.
    """
    plt = _pyplot(quiet)
    if plt is None:
        return False
    lo, hi = bounds
    g = np.linspace(lo, hi, grid)
    gx, gy = np.meshgrid(g, g)
    P = np.c_[gx.ravel(), gy.ravel()]
    f = np.asarray(model.decision_function(transform(P) if transform else P)).reshape(gx.shape)
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6, 6))
    ax.contourf(gx, gy, f > 0, levels=[-0.5, 0.5, 1.5], colors=["#dde8f6", "#f6e3d6"])
    ax.contour(gx, gy, f, levels=[-1, 0, 1], colors=["c", "k", "y"],
               linewidths=[1, 2, 1], linestyles=["--", "-", "--"])
    if twins and hasattr(model, "twin_vectors_"):
        Q = model.twin_vectors_
        if transform is not None:
            Q = _invert(transform, Q)
        ax.scatter(Q[:, 0], Q[:, 1], s=40, facecolors="none", edgecolors="r", linewidths=1.5,
                   label=f"{len(Q)} twin vectors")
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_title(title, fontsize=9)
    if own:
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return True


def _invert(transform, Q):
    """Invert an affine per-coordinate transform from two probe points."""
    a = transform(np.zeros((1, Q.shape[1])))[0]
    b = transform(np.ones((1, Q.shape[1])))[0]
    return (Q - a) / (b - a)


def plot_prequential(rows, path, title="", window=None, quiet=False):
    """Running accuracy: rows of (n_tested, cumulative, windowed). Returns whether written."""
    plt = _pyplot(quiet)
    if plt is None:
        return False
    r = np.asarray(rows, dtype=float)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(r[:, 0], 100 * r[:, 1], label="cumulative")
    ax.plot(r[:, 0], 100 * r[:, 2], label=f"last {window:,} examples" if window else "window",
            alpha=0.8)
    ax.set_xlabel("examples tested (then trained on)")
    ax.set_ylabel("prequential accuracy (%)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_series(series, path, title="", xlabel="examples seen", ylabel="test accuracy (%)",
                logx=True, ncols=1, quiet=False):
    """Line plots: ``series`` maps a panel title to {label: (x, y)}. Returns whether written."""
    plt = _pyplot(quiet)
    if plt is None:
        return False
    k = len(series)
    nrows = int(np.ceil(k / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 2.8 * nrows), squeeze=False)
    for ax, (panel, lines) in zip(axes.ravel(), series.items()):
        for label, (x, y) in lines.items():
            ax.plot(x, y, marker=".", label=label)
        if logx:
            ax.set_xscale("log")
        ax.set_title(panel, fontsize=9)
        ax.grid(alpha=0.3)
        ax.set_xlabel(xlabel, fontsize=8)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.legend(fontsize=6)
    for ax in axes.ravel()[k:]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True
