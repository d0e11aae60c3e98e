"""Plain-Python references of the baseline learners, written from the papers for the tests.

Slow and obviously correct: Python lists of support vectors in arrival order, kernels by
NumPy, no preallocation, no ring buffers. Labels are +-1 floats.
"""
import math

import numpy as np
from scipy.optimize import minimize_scalar


def kernel(kind, gamma=1.0, degree=3, coef0=1.0):
    """K(x, z) as a Python function."""
    if kind == "rbf":
        return lambda x, z: math.exp(-gamma * float(np.sum((x - z) ** 2)))
    if kind == "poly":
        return lambda x, z: (gamma * float(np.dot(x, z)) + coef0) ** degree
    return lambda x, z: float(np.dot(x, z))


def kernel_perceptron(X, y, K, budget=None):
    """Kernel perceptron; a full budget drops the oldest SV. Returns list of (t, coef)."""
    active = []  # (t, x, coef) oldest first
    for t, (x, yt) in enumerate(zip(X, y)):
        f = sum(c * K(xs, x) for _, xs, c in active)
        if yt * f <= 0:
            if budget is not None and len(active) == budget:
                active.pop(0)
            active.append((t, x, float(yt)))
    return [(t, c) for t, _, c in active]


def linear_perceptron(X, y, fit_intercept=True):
    w = np.zeros(X.shape[1])
    b = 0.0
    for x, yt in zip(X, y):
        if yt * (w @ x + b) <= 0:
            w = w + yt * x
            if fit_intercept:
                b += yt
    return w, b


def forgetron(X, y, K, budget):
    """Self-tuned Forgetron (Dekel, Shalev-Shwartz & Singer 2008, Sec. 5).

    Returns the history: after each round t, a dict with the active set as a list of
    (t_i, sigma_i, y_i) oldest first, Q, M, and ``removed`` (t of the removed SV or None)
    and ``phi``.
    """
    active = []  # [t, x, y, sigma]
    Q = 0.0
    M = 0
    history = []
    for t, (x, yt) in enumerate(zip(X, y)):
        f = sum(s * ys * K(xs, x) for _, xs, ys, s in active)
        removed, phi = None, 1.0
        if yt * f <= 0:
            M += 1
            active.append([t, x, float(yt), 1.0])
            if len(active) > budget:
                tr, xr, yr, sr = active[0]
                fprime = sum(s * ys * K(xs, xr) for _, xs, ys, s in active)  # f'_t(x_r)
                mu = yr * fprime

                def psi(p):
                    lam = p * sr
                    return lam * lam + 2 * lam - 2 * lam * (p * mu)

                target = 15.0 / 32.0 * M
                if Q + psi(1.0) <= target:
                    phi = 1.0
                else:
                    # largest phi in (0, 1] with Q + psi(phi) <= target, by bisection on the
                    # interval [0, phi_hi] where the constraint is violated at phi_hi
                    lo, hi = 0.0, 1.0
                    # psi(0) = 0 <= target - Q; find the first crossing from below
                    grid = np.linspace(0.0, 1.0, 2001)
                    vals = np.array([Q + psi(g) - target for g in grid])
                    first_bad = int(np.argmax(vals > 0))
                    lo, hi = grid[first_bad - 1], grid[first_bad]
                    for _ in range(200):
                        mid = 0.5 * (lo + hi)
                        if Q + psi(mid) <= target:
                            lo = mid
                        else:
                            hi = mid
                    phi = lo
                Q += psi(phi)
                for a in active:
                    a[3] *= phi
                active.pop(0)
                removed = tr
        history.append({
            "active": [(a[0], a[3], a[2]) for a in active],
            "Q": Q, "M": M, "removed": removed, "phi": phi,
        })
    return history


def pegasos(X, y, lam, k, fit_intercept=True, flush=True):
    """Pegasos (Shalev-Shwartz, Singer & Srebro 2007), one pass over consecutive blocks of k.

    Returns (w, b, norms) with the norm of [w, b] after every step."""
    d = X.shape[1]
    Z = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else np.hstack([X, np.zeros((X.shape[0], 1))])
    w = np.zeros(d + 1)
    norms = []
    n = X.shape[0]
    t = 0
    starts = list(range(0, n, k))
    for s in starts:
        idx = np.arange(s, min(s + k, n))
        if len(idx) < k and not flush:
            break
        t += 1
        eta = 1.0 / (lam * t)
        viol = [i for i in idx if y[i] * (w @ Z[i]) < 1]
        g = sum((y[i] * Z[i] for i in viol), np.zeros(d + 1))
        w = (1 - eta * lam) * w + eta / len(idx) * g
        nrm = np.linalg.norm(w)
        w = min(1.0, (1 / math.sqrt(lam)) / nrm) * w if nrm > 0 else w
        norms.append(np.linalg.norm(w))
    return w[:d], w[d], norms


def best_merge_h(a, k):
    """Global maximiser of s(h) = a k^((1-h)^2) + (1-a) k^(h^2) on [0, 1]: a grid locates
    every peak, scipy's bounded minimiser refines each; exact ties go to h >= 1/2."""
    def s(h):
        return a * k ** ((1 - h) ** 2) + (1 - a) * k ** (h ** 2)

    grid = np.linspace(0.0, 1.0, 401)
    vals = s(grid)
    cands = [0.0, 1.0]
    for i in range(1, 400):
        if vals[i] >= vals[i - 1] and vals[i] >= vals[i + 1]:
            res = minimize_scalar(lambda h: -s(h), bounds=(grid[i - 1], grid[i + 1]),
                                  method="bounded", options={"xatol": 1e-12})
            cands.append(float(res.x))
    best = max(s(h) for h in cands)
    good = [h for h in cands if s(h) >= best - 1e-12 * abs(best)]
    upper = [h for h in good if h >= 0.5]
    return max(upper) if upper else min(good)


def bsgd(X, y, K, lam, budget, maintenance, gamma=None, jitter=1e-8):
    """BSGD (Wang, Crammer & Vucetic 2012), Algorithm 1 with removal / projection / merging.

    The SV with the smallest |alpha| (ties within a relative 1e-9 to the oldest) is the
    one maintained. Returns the final list of (x, alpha). Merging finds h with scipy's bounded scalar
    minimiser (an independent method from the golden section of the compiled code).
    """
    sv = []  # [x, alpha, arrival t]
    for t, (x, yt) in enumerate(zip(X, y), start=1):
        f = sum(a * K(xs, x) for xs, a, _ in sv)
        for e in sv:
            e[1] *= 1.0 - 1.0 / t
        if yt * f < 1:
            sv.append([x.copy(), yt / (lam * t), t])
            if len(sv) > budget:
                # smallest |alpha|, ties (relative 1e-9) to the oldest
                amin = min(abs(e[1]) for e in sv)
                m = min((i for i, e in enumerate(sv) if abs(e[1]) <= amin * (1 + 1e-9)),
                        key=lambda i: sv[i][2])
                xm, am, tm = sv[m]
                if maintenance == "removal":
                    sv.pop(m)
                elif maintenance == "projection":
                    rest = [e for i, e in enumerate(sv) if i != m]
                    Km = np.array([[K(a[0], b[0]) for b in rest] for a in rest])
                    km = np.array([K(a[0], xm) for a in rest])
                    Km = Km + jitter * np.mean(np.diag(Km)) * np.eye(len(rest))
                    beta = np.linalg.solve(Km, km)
                    for e, bj in zip(rest, beta):
                        e[1] += am * bj
                    sv = rest
                else:
                    best = None
                    for n, (xn, an, tn) in enumerate(sv):
                        if n == m or an * am <= 0:
                            continue
                        kmn = K(xm, xn)
                        h = best_merge_h(am / (am + an), kmn)
                        z = h * xm + (1 - h) * xn
                        az = am * K(xm, z) + an * K(xn, z)
                        e = am * am + an * an + 2 * am * an * kmn - az * az
                        if best is None or e < best[0]:
                            best = (e, n, z, az, max(tm, tn))
                    if best is None:
                        sv.pop(m)
                    else:
                        _, n, z, az, tz = best
                        sv = [e for i, e in enumerate(sv) if i not in (m, n)] + [[z, az, tz]]
    return [(e[0], e[1]) for e in sv]
