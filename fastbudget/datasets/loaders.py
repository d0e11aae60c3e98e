"""Loaders for the papers' benchmark data, from a directory the caller names.

``load_paper_dataset(name, data_dir)`` returns ``(X_train, y_train, X_test, y_test)``: float64
C-contiguous features (sparse files densified), int64 labels in {-1, +1}. ``data_dir`` is
the folder holding one sub-folder per data set (``adult_a9a/``, ``banana/`` ...) with the files
described in each ``SOURCE.md``; a data set's files may also sit directly in ``data_dir``.
Nothing is standardised unless ``standardize=True`` (statistics from the training part only,
applied to both parts).

Binary tasks (paper 000 Sec. 5.1, paper 001 Table 1, paper 004 Sec. 4.2; "+" is +1):

=============  ==========================  ====================================  ===============
name           files                       labels                                split
=============  ==========================  ====================================  ===============
adult          a9a.gz / a9a.t.gz (LIBSVM)  +1 = income >50K                      given
adult_paper    a9a.gz, rows with no        +1 = income >50K                      21,048 / 9,114 *
               missing value (30,162)
banana         banana.all.txt (LIBSVM)     as given                              4,300 / 1,000 *
ijcnn          ijcnn1.trn/.tst.bz2         as given (+1 rare)                    given
letter         letter-recognition.data     N-Z +, A-M -                          first 16,000 / last 4,000
pendigits      pendigits.tra / .tes        digits 0,3,6,8,9 +                    given
shuttle        shuttle.trn.gz / .tst       class 1 -, classes 2-7 +              given
usps           zip.train.gz / zip.test.gz  digits 0,3,6,8,9 +                    given
waveform       waveform-21.tsv.gz          class 0 (first) -, classes 1, 2 +     first 4,000 / last 1,000
covtype        covtype_..._20k.csv.gz      cover type 2 +                        16,000 / 4,000 *
mnist_0v1      mnist_5k.csv.gz             digit 1 +, digit 0 - (1,000 rows)     800 / 200 *
mnist_8v9      mnist_5k.csv.gz             digit 9 +, digit 8 - (1,000 rows)     800 / 200 *
w8a            w8a.t (LIBSVM, 300 feat.)   as given (stand-in for w3a)           11,961 / 2,990 *
australian     australian.tsv.gz           target 1 (approved) +                 all train **
german         german.data-numeric (24)    class 1 (good) +, 2 (bad) -           all train **
heart          heart-statlog.tsv.gz (raw)  presence +                            all train **
ionosphere     ionosphere.tsv.gz           good (1) +                            all train **
sonar          sonar.tsv.gz                rock (1) +, mine (0) -                all train **
mushrooms      agaricus-lepiota.data       poisonous +; 22 attributes one-hot    all train **
thyroid        new-thyroid.tsv.gz          not normal (2, 3) +, normal (1) -     140 / 75 *
ripley         synth.tr / synth.te         yc = 1 +                              given
=============  ==========================  ====================================  ===============

``*`` Seeded stratified split (``random_state``, default 0): each class contributes its share
of the test rows (largest remainder rounding, so the totals are exact); both parts are
returned in a seeded random order (the MNIST file is sorted by digit). ``**`` Paper 004 uses
10-fold cross-validation, so these come back whole (``X_test`` has 0 rows) unless
``test_size`` asks for a split. ``test_size`` (an int count or a fraction) overrides the
default of every data set without a given split.

Adult (``adult_paper``): paper 000's Adult has 21,048 / 9,114 rows and 123 attributes: the
30,162 rows of UCI's ``adult.data`` with no missing value, split. In a9a (Platt's coding, LIBSVM
indices from 1) a missing value is a one-hot group with no feature set, so these rows are the
a9a training rows with one feature in each of workclass (6-13), occupation (47-60) and
native-country (83-123); the paper's split itself is unknown, so ours is seeded.

Mushrooms: each of the 22 categorical attributes is one-hot coded over the values that occur
(``?`` in stalk-root counts as a value), in attribute order with values sorted, giving 117
binary features; LIBSVM's ``mushrooms`` has 112 and paper 004 reports 112.
"""
import os
import numbers

import numpy as np

from .readers import collect, read_csv, read_libsvm
from .standardize import StreamingStandardizer

__all__ = ["load_paper_dataset", "PAPER_DATASETS"]

_ROUND = np.array([0, 3, 6, 8, 9])

# name -> (folder, default test size or None when the split is given / 0 for whole)
PAPER_DATASETS = {
    "adult": ("adult_a9a", None),
    "adult_paper": ("adult_a9a", 9114),
    "banana": ("banana", 1000),
    "ijcnn": ("ijcnn1", None),
    "letter": ("letter", None),
    "pendigits": ("pendigits", None),
    "shuttle": ("shuttle", None),
    "usps": ("usps", None),
    "waveform": ("waveform", None),
    "covtype": ("covtype", 4000),
    "mnist_0v1": ("mnist", 0.2),
    "mnist_8v9": ("mnist", 0.2),
    "w8a": ("w8a_test", 0.2),
    "australian": ("australian", 0),
    "german": ("german", 0),
    "heart": ("heart", 0),
    "ionosphere": ("ionosphere", 0),
    "sonar": ("sonar", 0),
    "mushrooms": ("mushrooms", 0),
    "thyroid": ("thyroid", 75),
    "ripley": ("ripley", None),
}
_ALIASES = {"a9a": "adult", "ijcnn1": "ijcnn", "mushroom": "mushrooms", "new-thyroid": "thyroid",
            "covertype": "covtype", "w8a_test": "w8a", "0v1": "mnist_0v1", "8v9": "mnist_8v9"}


def _pm(mask):
    return np.where(mask, 1, -1).astype(np.int64)


def _stratified_split(X, y, n_test, random_state):
    rng = np.random.default_rng(random_state)
    n = y.shape[0]
    classes = np.unique(y)
    counts = np.array([(y == c).sum() for c in classes])
    quota = n_test * counts / n
    q = np.floor(quota).astype(np.int64)
    rest = n_test - q.sum()
    order = np.argsort(-(quota - q), kind="stable")
    q[order[:rest]] += 1
    test = []
    for c, k in zip(classes, q):
        idx = np.flatnonzero(y == c)
        test.append(rng.permutation(idx)[:k])
    test = np.concatenate(test)
    mask = np.zeros(n, dtype=bool)
    mask[test] = True
    tr = rng.permutation(np.flatnonzero(~mask))
    te = rng.permutation(test)
    return X[tr], y[tr], X[te], y[te]


class _Locator:
    def __init__(self, data_dir, folder, name):
        self.dirs = [os.path.join(data_dir, folder), data_dir]
        self.name = name

    def __call__(self, fname):
        for d in self.dirs:
            p = os.path.join(d, fname)
            if os.path.exists(p):
                return p
        p = os.path.join(self.dirs[0], fname)
        raise FileNotFoundError(
            2, f"Data set {self.name!r}: file {fname!r} not found in {self.dirs[0]!r} or "
               f"{self.dirs[1]!r}. Pass the directory that holds the data folders as data_dir.", p)


def _libsvm(path, d):
    X, y = collect(read_libsvm(path, n_features=d))
    return X, y


def _csv(path, **kw):
    return collect(read_csv(path, **kw))


def _mushrooms(path):
    with open(path, "rb") as f:
        rows = [line.decode("ascii").strip().split(",") for line in f if line.strip()]
    bad = [i + 1 for i, r in enumerate(rows) if len(r) != 23]
    if bad:
        raise ValueError(f"{path}, line {bad[0]}: expected 23 comma-separated fields.")
    A = np.array(rows)
    y = _pm(A[:, 0] == "p")
    cols = []
    for j in range(1, 23):
        for v in np.unique(A[:, j]):
            cols.append(A[:, j] == v)
    return np.ascontiguousarray(np.column_stack(cols), dtype=np.float64), y


# a9a's one-hot groups that hold UCI Adult's missing values (1-based LIBSVM feature indices)
_ADULT_MISSABLE = ((6, 13), (47, 60), (83, 123))


def _adult_complete(X):
    """Rows of an a9a matrix with a feature set in every group that can be missing."""
    keep = np.ones(X.shape[0], dtype=bool)
    for lo, hi in _ADULT_MISSABLE:
        keep &= X[:, lo - 1:hi].any(axis=1)
    return keep


def _load_raw(name, f):
    """Return (X_train, y_train, X_test, y_test) with test None when the set has no split."""
    if name == "adult":
        Xa, ya = _libsvm(f("a9a.gz"), 123)
        Xb, yb = _libsvm(f("a9a.t.gz"), 123)
        return Xa, _pm(ya > 0), Xb, _pm(yb > 0)
    if name == "adult_paper":
        X, y = _libsvm(f("a9a.gz"), 123)
        keep = _adult_complete(X)
        return np.ascontiguousarray(X[keep]), _pm(y[keep] > 0), None, None
    if name == "banana":
        X, y = _libsvm(f("banana.all.txt"), 2)
        return X, _pm(y > 0), None, None
    if name == "ijcnn":
        Xa, ya = _libsvm(f("ijcnn1.trn.bz2"), 22)
        Xb, yb = _libsvm(f("ijcnn1.tst.bz2"), 22)
        return Xa, _pm(ya > 0), Xb, _pm(yb > 0)
    if name == "letter":
        X, lab = _csv(f("letter-recognition.data"), label_column=0, label_type="str", header=False)
        y = _pm(lab >= "N")
        return X[:16000], y[:16000], X[16000:], y[16000:]
    if name == "pendigits":
        Xa, ya = _csv(f("pendigits.tra"), label_column=-1, header=False)
        Xb, yb = _csv(f("pendigits.tes"), label_column=-1, header=False)
        return Xa, _pm(np.isin(ya, _ROUND)), Xb, _pm(np.isin(yb, _ROUND))
    if name == "shuttle":
        Xa, ya = _csv(f("shuttle.trn.gz"), label_column=-1, header=False)
        Xb, yb = _csv(f("shuttle.tst"), label_column=-1, header=False)
        return Xa, _pm(ya != 1), Xb, _pm(yb != 1)
    if name == "usps":
        Xa, ya = _csv(f("zip.train.gz"), label_column=0, header=False)
        Xb, yb = _csv(f("zip.test.gz"), label_column=0, header=False)
        return Xa, _pm(np.isin(ya, _ROUND)), Xb, _pm(np.isin(yb, _ROUND))
    if name == "waveform":
        X, y = _csv(f("waveform-21.tsv.gz"), label_column="target")
        y = _pm(y != 0)
        return X[:4000], y[:4000], X[4000:], y[4000:]
    if name == "covtype":
        X, y = _csv(f("covtype_binary_scale_20k.csv.gz"), label_column=0, header=False)
        return X, _pm(y == 2), None, None
    if name in ("mnist_0v1", "mnist_8v9"):
        neg, pos = (0, 1) if name == "mnist_0v1" else (8, 9)
        X, y = _csv(f("mnist_5k.csv.gz"), label_column=-1, header=False)
        keep = (y == neg) | (y == pos)
        return np.ascontiguousarray(X[keep]), _pm(y[keep] == pos), None, None
    if name == "w8a":
        X, y = _libsvm(f("w8a.t"), 300)
        return X, _pm(y > 0), None, None
    if name in ("australian", "ionosphere", "sonar"):
        fname = {"australian": "australian.tsv.gz", "ionosphere": "ionosphere.tsv.gz",
                 "sonar": "sonar.tsv.gz"}[name]
        X, y = _csv(f(fname), label_column="target")
        return X, _pm(y == 1), None, None
    if name == "heart":
        X, y = _csv(f("heart-statlog.tsv.gz"), label_column="target")
        return X, _pm(y == 1), None, None
    if name == "german":
        X, y = _csv(f("german.data-numeric"), label_column=-1, header=False)
        return X, _pm(y == 1), None, None
    if name == "mushrooms":
        X, y = _mushrooms(f("agaricus-lepiota.data"))
        return X, y, None, None
    if name == "thyroid":
        X, y = _csv(f("new-thyroid.tsv.gz"), label_column="target")
        return X, _pm(y != 1), None, None
    if name == "ripley":
        Xa, ya = _csv(f("synth.tr"), label_column=-1, header=True)
        Xb, yb = _csv(f("synth.te"), label_column=-1, header=True)
        return Xa, _pm(ya == 1), Xb, _pm(yb == 1)
    raise AssertionError(name)  # pragma: no cover


def load_paper_dataset(name, data_dir, *, standardize=False, test_size=None, random_state=0):
    """Load one of the papers' binary benchmark tasks (see the module table).

    Parameters
    ----------
    name : str
        One of ``PAPER_DATASETS`` (aliases: ``a9a``, ``ijcnn1``, ``mushroom``,
        ``new-thyroid``, ``0v1``, ``8v9``).
    data_dir : str or os.PathLike
        Directory holding the data folders (never assumed by the library).
    standardize : bool, default=False
        Fit mean 0 / sd 1 on the training part and apply it to both parts.
    test_size : int, float or None, default=None
        For data sets without a given split: number (int) or fraction (float in [0, 1)) of
        rows for the test part; None uses the data set's default. Must be None when the files
        fix the split.
    random_state : int or None, default=0
        Seed of the split.

    Returns
    -------
    X_train : ndarray of float64, shape (n_train, d)
    y_train : ndarray of int64, shape (n_train,), values in {-1, +1}
    X_test : ndarray of float64, shape (n_test, d)
    y_test : ndarray of int64, shape (n_test,)
    """
    key = _ALIASES.get(str(name).lower(), str(name).lower())
    if key not in PAPER_DATASETS:
        raise ValueError(f"Unknown data set {name!r}; choose one of {sorted(PAPER_DATASETS)}.")
    data_dir = os.fspath(data_dir)
    if not os.path.isdir(data_dir):
        raise FileNotFoundError(2, f"data_dir {data_dir!r} is not a directory", data_dir)
    folder, default = PAPER_DATASETS[key]
    if default is None and test_size is not None:
        raise ValueError(
            f"Data set {key!r} comes with a fixed train/test split; leave test_size=None."
        )
    Xa, ya, Xb, yb = _load_raw(key, _Locator(data_dir, folder, key))
    if Xb is None:
        n = ya.shape[0]
        ts = default if test_size is None else test_size
        if isinstance(ts, bool) or not isinstance(ts, numbers.Real) or ts < 0 or (
                not isinstance(ts, numbers.Integral) and ts >= 1) or ts >= n:
            raise ValueError(
                f"test_size must be an int in [0, {n}) or a fraction in [0, 1), got {test_size!r}."
            )
        n_test = int(ts) if isinstance(ts, numbers.Integral) else int(round(ts * n))
        if n_test >= n:
            raise ValueError(
                f"test_size={ts!r} of the {n} rows of {key!r} is {n_test} test rows, which "
                f"leaves no training rows; pass a smaller test_size."
            )
        if n_test == 0:
            Xb, yb = np.zeros((0, Xa.shape[1])), np.zeros(0, dtype=np.int64)
        else:
            Xa, ya, Xb, yb = _stratified_split(Xa, ya, n_test, random_state)
    Xa = np.ascontiguousarray(Xa, dtype=np.float64)
    Xb = np.ascontiguousarray(Xb, dtype=np.float64)
    if standardize:
        sc = StreamingStandardizer().fit(Xa)
        Xa, Xb = sc.transform(Xa), (sc.transform(Xb) if Xb.shape[0] else Xb)
    return Xa, ya, Xb, yb
