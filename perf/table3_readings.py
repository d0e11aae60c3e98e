"""Other readings of paper 000's merge rules and data, tested on TVM's unexplained cells.

Regenerates the sections H7-H13 of ``docs/results/tvm_table3_gaps.md`` (the hypotheses
H1-H6 and the cause table are ``perf/table3_gaps.py``'s). The cells: Letter B = 20 Default
(Table 3, paper 76.5), USPS and IJCNN B = 100 Global (Table 5, paper 91.1 and 95.9); each
reading is also run on the cells that already match (Default beside each Global, Letter
B = 100) so that a reading that closes a cell by breaking another is seen.

Usage (each run prints its figures and saves them with ``--json FILE``; ``--section render``
then writes the sections of the doc from those files)::

    python perf/table3_readings.py --section rules --orders 3 --json R.json      # H7-H9
    python perf/table3_readings.py --section rules --orders 3 --readings label-sided \
        --json L.json                                                            # H10
    python perf/table3_readings.py --section sweep --orders 10 --sets Letter --variants '' \
        --budgets 20,50,100 --readings ours,label-sided --json S.json           # H10, Letter
    python perf/table3_readings.py --section post --orders 2 --sets USPS --json P.json
    python perf/table3_readings.py --section post --orders 2 --sets IJCNN --max-n 10000 \
        [--post-readings 0,1,2] [--post-tries 60] [--post-variants Global]       # H11-H12
    python perf/table3_readings.py --section data --orders 5 --json D.json      # H13
    python perf/table3_readings.py --section data --parts uspsb,uspst5,uspsnn,uspsmm,uspsk \
        --orders 3 --json D.json        # (adds to D.json; --parts raw --orders 5 likewise)
    python perf/table3_readings.py --section render \
        --render rules=R.json,labelsided=L.json+S.json,post=P.json+...,data=D.json

``sweep`` runs every paper set (``fastbudget reproduce``'s data and parameters) under the
chosen readings, Table 5 variants and budgets.

``rules`` runs a throw-away copy of the package (the library is not changed) whose
compiled rejection test and merge can follow other readings of Sec. 4.2.4 and Alg. 3,
switched per run through spare entries of ``TwinState.ist``:

- ist[11] = 1: the linear estimate of the rejection test unweighted, (f_i + f_j) / 2;
- ist[11] = 2: the test with an absolute tolerance, |f(q_new) - estimate| < eta;
- ist[12] = 1: a merged twin keeps only its net weight |s+ - s-| on its majority label
  (the two labels' weights cancel: the twin as one example of the IDSVM code), which also
  lowers the sum of weights that control of C divides by;
- ist[13] counts the merges that join twins of different majority labels (s+ > s- vs
  s+ < s-), ist[14] those among them whose lighter twin is positive;
- ist[15] = 1: the twins' sides for One-Sided merging are their majority labels instead of
  the sign of f(q) (runs with one_sided=True).

``post`` uses a plain NumPy/scikit-learn rendering of Algorithms 1-3 (the exact weighted
SVM re-solved by ``SVC`` after every accepted example) for readings the compiled loop
cannot take without a rewrite: the rejection test on the re-solved model (merge, re-solve,
compare f(q_new) with the linear estimate, undo and try the next pair if it fails) and the
overflow twin TV_{B+1} as a merge candidate. The reference with the library's readings is
run too, as its check.
"""
import argparse
import json
import pathlib
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
# (run by path: this script's folder heads sys.path, so its sibling imports as is)
import table3_gaps as tg

from fastbudget import TVMClassifier

T0 = time.perf_counter()

# ----------------------------------------------------------------- rules (patched copy)
_RULES_PATCH = (
    ("N_TIST = 11\n", "N_TIST = 16\n"),
    ("        side = 1 if f >= 0.0 else -1\n",
     "        side = 1 if f >= 0.0 else -1\n"
     "        if _tw_ist[15] == 1:\n"
     "            side = 1 if tw.s_pos[j] >= tw.s_neg[j] else -1\n"),
    ("    si = s_tot[i]\n    sj = s_tot[j]\n",
     "    si = s_tot[i]\n    sj = s_tot[j]\n"
     "    if tw_ist[11] == 1:\n        si = 1.0\n        sj = 1.0\n"),
    ("    return lo < fnew < hi\n",
     "    if tw_ist[11] == 2:\n        return abs(fnew - fhat) < eta\n"
     "    return lo < fnew < hi\n"),
    ("        msp = _tw_s_pos[leave1] + _tw_s_pos[leave2]\n"
     "        msn = _tw_s_neg[leave1] + _tw_s_neg[leave2]\n",
     "        msp = _tw_s_pos[leave1] + _tw_s_pos[leave2]\n"
     "        msn = _tw_s_neg[leave1] + _tw_s_neg[leave2]\n"
     "        l1 = _tw_s_pos[leave1] - _tw_s_neg[leave1]\n"
     "        l2 = _tw_s_pos[leave2] - _tw_s_neg[leave2]\n"
     "        if l1 * l2 < 0.0:\n"
     "            _tw_ist[13] += 1\n"
     "            lp = l1 if _tw_s_tot[leave1] < _tw_s_tot[leave2] else l2\n"
     "            if lp > 0.0:\n"
     "                _tw_ist[14] += 1\n"
     "        if _tw_ist[12] == 1 and msp != msn:\n"
     "            cancel = min(msp, msn)\n"
     "            msp -= cancel\n"
     "            msn -= cancel\n"),
    ("    m = 0\n    if leave2 >= 0:\n", "    m = 0\n    cancel = 0.0\n    if leave2 >= 0:\n"),
    ("    ssum = _tw_par[P_SSUM] + wi\n", "    ssum = _tw_par[P_SSUM] + wi - 2.0 * cancel\n"),
)

# (label, ist[11], ist[12], ist[15]); ist[15] = 1: the twins' sides for One-Sided merging
# are their majority labels (s+ >= s-: positive) instead of the sign of f(q); with
# one_sided=False this changes nothing, so "label-sided" runs force one_sided=True
USPS_GREY = "USPS (grey levels)"
RULES = (("ours", 0, 0, 0), ("estimate unweighted", 1, 0, 0), ("absolute tolerance", 2, 0, 0),
         ("net-weight twins", 0, 1, 0), ("label-sided", 0, 0, 1))
# (data set, B, variant, paper figure, estimator keywords)
RULE_CASES = (
    ("IJCNN", 100, "Global", 95.9, {"one_sided": False}),
    ("IJCNN", 100, "Default", 97.0, {}),
    ("USPS", 100, "Global", 91.1, {"one_sided": False}),
    ("USPS", 100, "Default", 92.1, {}),
    ("Letter", 20, "Default", 76.5, {}),
    ("Letter", 100, "Default", 87.6, {}),
    ("Letter", 100, "Global", 80.4, {"one_sided": False}),
    ("Checkerboard", 100, "Default", 98.1, {}),
    ("Checkerboard", 100, "Global", 95.5, {"one_sided": False}),
    # H13's USPS inputs: the grey levels as shipped, not standardised
    (USPS_GREY, 100, "Global", 91.1, {"one_sided": False}),
    (USPS_GREY, 100, "Default", 92.1, {}),
)
NOREJ_CASES = (
    ("IJCNN", 100, "NoRejection", 90.0, {"rejection": None}),
    ("USPS", 100, "NoRejection", 81.9, {"rejection": None}),
    ("Letter", 100, "NoRejection", 78.8, {"rejection": None}),
)


def _with_ist(fmode, net, lab):
    """TVMClassifier whose twins carry the readings' switches (patched copy only)."""
    class V(TVMClassifier):
        def _allocate(self, X):
            super()._allocate(X)
            self.twins_.ist[11] = fmode
            self.twins_.ist[12] = net
            self.twins_.ist[15] = lab
    return V


def rules_inner(args):
    import fastbudget
    from fastbudget.kernels import tvm as ktvm

    assert ktvm.N_TIST == 16, "run through --section rules (the patched copy)"
    print("patched copy:", fastbudget.__file__, flush=True)

    variant = _with_ist

    want = None if args.sets is None else set(args.sets.split(","))
    cases = [(c, r) for c in RULE_CASES for r in RULES]
    cases += [(c, r) for c in NOREJ_CASES for r in RULES if r[0] in ("ours", "net-weight twins")]
    data = {}
    rows = []
    wantr = None if args.readings is None else set(args.readings.split(","))
    for (name, B, var, paper, kw), (label, fmode, net, lab) in cases:
        if wantr is not None and label not in wantr:
            continue
        if lab:
            kw = dict(kw, one_sided=True)
        if want is not None and name not in want:
            continue
        if name not in data:
            if name == USPS_GREY:
                from fastbudget.datasets import load_paper_dataset

                data[name] = load_paper_dataset("usps", args.data)
            else:
                data[name] = tg.load(name, args.data)
        Xa, ya, Xb, yb = data[name]
        gamma = tg.gamma_of(name, Xa.shape[1])
        r = {k: [] for k in ("acc", "merges", "cross", "cross_pos", "later", "accepted",
                             "pos_share", "cpu")}
        for o in range(args.orders):
            perm = np.random.default_rng(1000 + o).permutation(len(ya))
            t = time.process_time()
            clf = variant(fmode, net, lab)(budget=B, C=100.0, kernel="rbf", gamma=gamma, **kw)
            clf.fit(Xa[perm], ya[perm])
            r["cpu"].append(time.process_time() - t)
            ist = clf.twins_.ist
            W = np.asarray(clf.twin_weights_, dtype=float)
            sp, sn = W[:, 0], W[:, 1]
            r["acc"].append(100.0 * clf.score(Xb, yb))
            r["merges"].append(int(ist[ktvm.T_MERGES]))
            r["cross"].append(int(ist[13]))
            r["cross_pos"].append(int(ist[14]))
            r["accepted"].append(int(ist[ktvm.T_ACCEPTED]))
            r["later"].append(int(ist[ktvm.T_TRIES]) - int(ist[ktvm.T_MERGES]))
            r["pos_share"].append(float(sp[sp > sn].sum() / max(sp.sum(), 1e-12)))
        rows.append(dict(name=name, B=B, variant=var, paper=paper, reading=label, **r))
        print(f"{name} B={B} {var} [{label}]: {tg._ms(r['acc'])} merges "
              f"{np.mean(r['merges']):.0f} cross-label {np.mean(r['cross']):.0f} "
              f"(lighter positive {np.mean(r['cross_pos']):.0f}) pos share "
              f"{np.mean(r['pos_share']):.2f} cpu {np.mean(r['cpu']):.0f} s", flush=True)
        pathlib.Path(args.json).write_text(json.dumps(rows))


# one-sidedness and the linear test both switched off: what the paper's NoRejection column
# would be if its one-sided rule were part of its rejection routine
GLOBAL_NOREJ = "Global no rejection"


def _params(var):
    from fastbudget.reproduce import tvm as rt

    if var == GLOBAL_NOREJ:
        return {"one_sided": False, "rejection": None}
    return rt.T5_PARAMS[var]


def sweep_inner(args):
    """Every paper set (``fastbudget reproduce``'s data, parameters and orders) under the
    readings named in ``--readings``, for the Table 5 variants in ``--variants`` at B = 100
    and the Default at the budgets in ``--budgets``."""
    from fastbudget.kernels import tvm as ktvm
    from fastbudget.reproduce import tvm as rt

    assert ktvm.N_TIST == 16, "run through --section sweep (the patched copy)"
    readings = [r for r in RULES if r[0] in args.readings.split(",")]
    todo = [(v, 100) for v in args.variants.split(",") if v] + [
        ("Default", int(b)) for b in args.budgets.split(",") if b]
    want = None if args.sets is None else set(args.sets.split(","))
    rows = []
    for name in rt.SETS:
        if want is not None and name not in want:
            continue
        data = rt.load_set(name, args.data)
        if data is None:
            continue
        Xa, ya, Xb, yb = data
        kp = rt.kernel_params(name, Xa.shape[1])
        for var, B in todo:
            for label, fmode, net, lab in readings:
                if _params(var).get("rejection", 0.2) is None and (fmode or lab):
                    continue  # (the rejection test's readings change nothing without it)
                acc = []
                for o in range(args.orders):
                    perm = np.random.default_rng(1000 + o).permutation(len(ya))
                    kw = dict(_params(var), **({"one_sided": True} if lab else {}))
                    clf = _with_ist(fmode, net, lab)(budget=B, C=rt._C(name), **kp, **kw)
                    clf.fit(Xa[perm], ya[perm])
                    acc.append(100.0 * clf.score(Xb, yb))
                col = "NoRejection" if var == GLOBAL_NOREJ else var
                paper = (rt.PAPER_TABLE5[name][2 + list(rt.T5_PARAMS).index(col)] if B == 100
                         else rt.PAPER_TABLE3[name][4 + [20, 50, 100, 200, 500].index(B)])
                rows.append(dict(name=name, B=B, variant=var, reading=label, paper=paper,
                                 acc=acc))
                print(f"{name} B={B} {var} [{label}]: {tg._ms(acc)} (paper {paper})", flush=True)
                pathlib.Path(args.json).write_text(json.dumps(rows))


def rules_section(args):
    rows = tg.run_patched(_RULES_PATCH, "rules", __file__, args,
                          ["--readings", args.readings, "--variants", args.variants,
                           "--budgets", args.budgets])
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows))
    return rows


POST_CASES = (("USPS", 100, "Global", 91.1), ("USPS", 100, "Default", 92.1),
              ("IJCNN", 100, "Global", 95.9), ("IJCNN", 100, "Default", 97.0),
              ("Letter", 20, "Default", 76.5), ("Letter", 100, "Global", 80.4),
              ("Letter", 100, "Default", 87.6), ("Checkerboard", 100, "Global", 95.5),
              ("Checkerboard", 100, "Default", 98.1))
POST_READINGS = (("reference, the library's readings", {}),
                 ("rejection on the re-solved model", {"post": True}),
                 ("overflow twin a merge candidate", {"overflow": True}))


def post_section(args):
    want = None if args.sets is None else set(args.sets.split(","))
    wantr = None if args.post_readings is None else set(args.post_readings.split(","))
    data = {}
    rows = []
    for name, B, var, paper in POST_CASES:
        if want is not None and name not in want:
            continue
        if args.post_variants and var not in args.post_variants.split(","):
            continue
        if name not in data:
            data[name] = tg.load(name, args.data)
        Xa, ya, Xb, yb = data[name]
        gamma = tg.gamma_of(name, Xa.shape[1])
        for k, (label, kw) in enumerate(POST_READINGS):
            if wantr is not None and str(k) not in wantr:
                continue
            r = {k2: [] for k2 in ("acc", "merges", "cross", "dropped", "accepted", "cpu")}
            for o in range(args.orders):
                perm = np.random.default_rng(1000 + o).permutation(len(ya))[:args.max_n]
                t = time.process_time()
                kw2 = dict(kw, post_tries=args.post_tries) if kw.get("post") else kw
                m = RefTVM(B, gamma, one_sided=(var == "Default"), **kw2).fit(Xa[perm],
                                                                            ya[perm])
                r["cpu"].append(time.process_time() - t)
                r["acc"].append(100.0 * m.score(Xb, yb))
                r["merges"].append(m.n_merges)
                r["cross"].append(m.n_cross)
                r["dropped"].append(m.n_dropped)
                r["accepted"].append(m.n_accepted)
                print(f"  {name} B={B} {var} [{label}] order {o}: {r['acc'][-1]:.1f} "
                      f"({r['cpu'][-1]:.0f} s)", flush=True)
            if kw.get("post"):
                label = f"{label} (at most {args.post_tries} pairs)"
            rows.append(dict(name=name, B=B, variant=var, paper=paper, reading=label,
                             n=len(perm), **r))
            print(f"{name} B={B} {var} [{label}]: {tg._ms(r['acc'])} merges "
                  f"{np.mean(r['merges']):.0f} cross-label {np.mean(r['cross']):.0f} dropped "
                  f"{np.mean(r['dropped']):.0f}", flush=True)
            if args.json:
                pathlib.Path(args.json).write_text(json.dumps(rows))
    return rows


# ----------------------------------------------------------------- data (H12)
LETTER_SPLITS = (("A-M negative, N-Z positive (ours)", 13), ("A-L negative, M-Z positive", 12),
                 ("A-N negative, O-Z positive", 14))


def letter_split(data, n_neg):
    """Letter standardised with the first ``n_neg`` letters negative (first 16,000 rows
    train, last 4,000 test)."""
    from fastbudget.datasets.standardize import StreamingStandardizer

    path = pathlib.Path(data) / "letter" / "letter-recognition.data"
    lab, X = [], []
    for line in path.read_text().split():
        parts = line.split(",")
        lab.append(ord(parts[0]) - ord("A"))
        X.append([float(v) for v in parts[1:]])
    X = np.asarray(X)
    y = np.where(np.asarray(lab) < n_neg, -1, 1)
    sc = StreamingStandardizer(n_warmup=None).fit(X[:16000])
    return sc.transform(X[:16000]), y[:16000], sc.transform(X[16000:]), y[16000:]


def _tvm_acc(Xa, ya, Xb, yb, B, orders, **kw):
    out = []
    for o in range(orders):
        perm = np.random.default_rng(1000 + o).permutation(len(ya))
        clf = TVMClassifier(budget=B, C=100.0, kernel="rbf", gamma=1.0 / Xa.shape[1], **kw)
        out.append(100.0 * clf.fit(Xa[perm], ya[perm]).score(Xb, yb))
    return out


def data_section(args):
    from sklearn.svm import SVC

    res = {"splits": [], "curve": [], "usps": [], "usps_svm": []}
    if args.json and pathlib.Path(args.json).exists():
        res.update(json.loads(pathlib.Path(args.json).read_text()))
    parts = args.parts.split(",")
    for label, n_neg in (LETTER_SPLITS if "letter" in parts else ()):
        Xa, ya, Xb, yb = letter_split(args.data, n_neg)
        svc = SVC(C=100.0, gamma=1.0 / 16, cache_size=500).fit(Xa, ya)
        r = dict(label=label, pos=float(np.mean(ya > 0)), svc=100.0 * svc.score(Xb, yb),
                 nsv=int(svc.n_support_.sum()),
                 b20=_tvm_acc(Xa, ya, Xb, yb, 20, args.orders),
                 b100=_tvm_acc(Xa, ya, Xb, yb, 100, min(args.orders, 3)))
        res["splits"].append(r)
        print(f"Letter {label}: SVC {r['svc']:.1f} ({r['nsv']} SVs), B=20 {tg._ms(r['b20'])}, "
              f"B=100 {tg._ms(r['b100'])}", flush=True)
    if "letter" in parts:
        res["splits"] = res["splits"][-len(LETTER_SPLITS):]
        res["curve"] = []
    Xa, ya, Xb, yb = tg.load("Letter", args.data)
    for B in ((20, 25, 30, 35, 40, 50) if "letter" in parts else ()):
        acc = _tvm_acc(Xa, ya, Xb, yb, B, args.orders)
        res["curve"].append((B, acc))
        print(f"Letter B={B}: {tg._ms(acc)}", flush=True)
    from fastbudget.datasets import load_paper_dataset

    if "usps" in parts:
        res["usps"] = []
    for label, std in ((("standardised (the reproduction)", True),
                        ("as shipped ([-1, 1] grey levels)", False)) if "usps" in parts else ()):
        Xa, ya, Xb, yb = load_paper_dataset("usps", args.data, standardize=std)
        r = dict(label=label, default=_tvm_acc(Xa, ya, Xb, yb, 100, min(args.orders, 3)),
                 glob=_tvm_acc(Xa, ya, Xb, yb, 100, min(args.orders, 3), one_sided=False))
        res["usps"].append(r)
        print(f"USPS {label}: Default {tg._ms(r['default'])}, Global {tg._ms(r['glob'])}",
              flush=True)
    if "uspsb" in parts:
        # the exact SVM (the paper's LIBSVM: 96.1 % with 1,077 SVs; IDSVM 96.7 %, 1,081) and
        # TVM's Table 3 row on both scalings
        res["usps_svm"] = []
        for label, std in (("standardised (the reproduction)", True),
                           ("as shipped ([-1, 1] grey levels)", False)):
            Xa, ya, Xb, yb = load_paper_dataset("usps", args.data, standardize=std)
            svc = SVC(C=100.0, gamma=1.0 / 256, cache_size=500).fit(Xa, ya)
            r = dict(label=label, svc=100.0 * svc.score(Xb, yb), nsv=int(svc.n_support_.sum()),
                     budgets={B: _tvm_acc(Xa, ya, Xb, yb, B, min(args.orders, 3))
                              for B in (20, 50, 200, 500)})
            res["usps_svm"].append(r)
            print(f"USPS {label}: SVC {r['svc']:.1f} ({r['nsv']} SVs) " + ", ".join(
                f"B={B} {tg._ms(a)}" for B, a in r["budgets"].items()), flush=True)
    if "uspst5" in parts:
        # every Table 5 variant (B = 100) on both scalings
        from fastbudget.reproduce import tvm as rt

        res["usps_t5"] = []
        for label, std in (("standardised (the reproduction)", True),
                           ("as shipped ([-1, 1] grey levels)", False)):
            Xa, ya, Xb, yb = load_paper_dataset("usps", args.data, standardize=std)
            r = dict(label=label, cols={v: _tvm_acc(Xa, ya, Xb, yb, 100, min(args.orders, 3),
                                                     **kw) for v, kw in rt.T5_PARAMS.items()})
            res["usps_t5"].append(r)
            print(f"USPS {label}: " + ", ".join(f"{v} {tg._ms(a)}" for v, a in r["cols"].items()),
                  flush=True)
    if "raw" in parts:
        # Letter's integer attributes and IJCNN's LIBSVM scaling as shipped (not
        # standardised): the exact SVM's support vectors against the paper's LIBSVM (Letter
        # 93.2 % with 2,075; IJCNN 98.7 % with 2,103), and TVM (Letter B = 20, 100)
        from fastbudget.datasets import load_paper_dataset as lpd

        res["raw"] = []
        for name, key, std in (("Letter", "letter", True), ("Letter", "letter", False),
                               ("IJCNN", "ijcnn", True), ("IJCNN", "ijcnn", False)):
            Xa, ya, Xb, yb = lpd(key, args.data, standardize=std)
            svc = SVC(C=100.0, gamma=1.0 / Xa.shape[1], cache_size=1000).fit(Xa, ya)
            r = dict(name=name, label="standardised" if std else "as shipped",
                     svc=100.0 * svc.score(Xb, yb), nsv=int(svc.n_support_.sum()))
            if name == "Letter":
                r["b20"] = _tvm_acc(Xa, ya, Xb, yb, 20, args.orders)
                r["b100"] = _tvm_acc(Xa, ya, Xb, yb, 100, min(args.orders, 3))
            res["raw"].append(r)
            print(f"{name} {r['label']}: SVC {r['svc']:.1f} ({r['nsv']} SVs) "
                  f"{tg._ms(r.get('b20', [np.nan]))} / {tg._ms(r.get('b100', [np.nan]))}",
                  flush=True)
    if "uspsmm" in parts:
        # each pixel scaled to [-1, 1] by its own training min and max (what LIBSVM's
        # svm-scale does; LIBSVM's usps file is not in the data directory)
        Xa, ya, Xb, yb = load_paper_dataset("usps", args.data)
        lo, hi = Xa.min(0), Xa.max(0)
        span = np.where(hi > lo, hi - lo, 1.0)
        Xa, Xb = 2.0 * (Xa - lo) / span - 1.0, 2.0 * (Xb - lo) / span - 1.0
        svc = SVC(C=100.0, gamma=1.0 / 256, cache_size=500).fit(Xa, ya)
        r = dict(label="each pixel min-max to [-1, 1]", svc=100.0 * svc.score(Xb, yb),
                 nsv=int(svc.n_support_.sum()),
                 default=_tvm_acc(Xa, ya, Xb, yb, 100, min(args.orders, 3)),
                 glob=_tvm_acc(Xa, ya, Xb, yb, 100, min(args.orders, 3), one_sided=False))
        res["usps_mm"] = r
        print(f"USPS {r['label']}: SVC {r['svc']:.1f} ({r['nsv']} SVs), Default "
              f"{tg._ms(r['default'])}, Global {tg._ms(r['glob'])}", flush=True)
    if "uspsk" in parts:
        # the USPS cells of Tables 3-4 with other classifiers on both scalings: Random
        # (the exact SVM on a uniform sample of 100) with the RBF kernel, and Random and TVM
        # (B = 100) with the paper's polynomial and linear kernels
        from fastbudget.estimators.baselines import RandomBudgetClassifier
        from fastbudget.reproduce import tvm as rt

        res["usps_k"] = []
        for label, std in (("standardised (the reproduction)", True),
                           ("as shipped ([-1, 1] grey levels)", False)):
            Xa, ya, Xb, yb = load_paper_dataset("usps", args.data, standardize=std)
            r = {"label": label}
            for kern in ("rbf", "poly", "linear"):
                kp = rt.kernel_params("USPS", Xa.shape[1], kern)
                for tag in (("Random", "TVM") if kern != "rbf" else ("Random",)):
                    acc = []
                    for o in range(min(args.orders, 3)):
                        perm = np.random.default_rng(1000 + o).permutation(len(ya))
                        clf = (RandomBudgetClassifier(budget=100, C=100.0, random_state=o, **kp)
                               if tag == "Random" else TVMClassifier(budget=100, C=100.0, **kp))
                        acc.append(100.0 * clf.fit(Xa[perm], ya[perm]).score(Xb, yb))
                    r[f"{kern} {tag}"] = acc
                    print(f"USPS {label} {kern} {tag}: {tg._ms(acc)}", flush=True)
            res["usps_k"].append(r)
    if "uspsnn" in parts:
        # how often an example's nearest of 100 random training examples has the other
        # label (the partner a weight-1 twin is folded into by input-space merging)
        res["usps_nn"] = []
        for label, std in (("standardised (the reproduction)", True),
                           ("as shipped ([-1, 1] grey levels)", False)):
            Xa, ya, _, _ = load_paper_dataset("usps", args.data, standardize=std)
            rng = np.random.default_rng(0)
            other = []
            for _ in range(200):
                idx = rng.choice(len(ya), 101, replace=False)
                q, P = idx[0], idx[1:]
                d2 = ((Xa[P] - Xa[q]) ** 2).sum(1)
                other.append(ya[P[np.argmin(d2)]] != ya[q])
            res["usps_nn"].append(dict(label=label, other=float(np.mean(other))))
            print(f"USPS {label}: nearest of 100 has the other label {np.mean(other):.2f}",
                  flush=True)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(res))
    return res


# ----------------------------------------------------------------- the doc's sections
def _head(key, title, cmd, hyp, exp):
    return [f"## {title}", "",
            f"Generated by `python perf/table3_readings.py {cmd}` (the runs: 2026-11-26 from "
            "commit 179a814 on, on a shared 2-core machine at load 4-16; tables written by "
            f"`--section render` at {tg.stamp()}).", "", f"*Hypothesis.* {hyp}", "",
            f"*Experiment.* {exp}", ""]


def render_rules(args, rows, key, title, cmd, hyp, exp):
    L = _head(key, title, cmd, hyp, exp)
    L += ["| data set | B | variant | paper | reading | accuracy | merges | cross-label merges "
          "(lighter twin positive) | pos. share |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cross = (f"{np.mean(r['cross']):.0f} ({np.mean(r['cross_pos']):.0f})"
                 if "cross" in r else "")
        merges = f"{np.mean(r['merges']):.0f}" if "merges" in r else ""
        share = f"{100 * np.mean(r['pos_share']):.0f} %" if "pos_share" in r else ""
        L.append(f"| {r['name']} | {r['B']} | {r['variant']} | {r['paper']} | {r['reading']} | "
                 f"{tg._ms(r['acc'])} | {merges} | {cross} | {share} |")
    L += ["", "*Verdict.* See the verdicts of H7-H13 below."]
    tg.write_section(args.out, key, L)


def render_post(args, rows):
    L = _head("post", "H11 and H12: the rejection test on the re-solved model; the overflow "
              "twin as a merge candidate",
              "--section post --orders 2 --sets USPS` (whole stream), `... --sets IJCNN "
              "--max-n 10000`, `... --orders 1 --sets Letter,Checkerboard --post-readings 0,1`, "
              "`... --orders 1 --sets IJCNN --max-n 5000 --post-readings 0,1 --post-tries 60`, "
              "`... --sets IJCNN|USPS --post-variants Global --post-readings 1 --post-tries 60",
              "Two readings of the order of Alg. 3's steps that the compiled loop cannot "
              "take. H11: Sec. 4.2.4's TVM(q_new) is the value of the model *after* the merge "
              "(the pair merged, the overflow twin added, the SVM re-solved), compared with "
              "the linear estimate from the model before it: a light positive twin folded into "
              "a heavy negative one leaves f(q_new) near the heavy twin's value under the "
              "current model (the test passes), but once the positive support is gone the "
              "re-solved f(q_new) drops below the estimate, so the paper's test, read so, "
              "would stop exactly the cross-label merges that make our Global collapse. "
              "H12: the overflow twin TV_{B+1} is itself a merge candidate (Alg. 3 merges "
              "\"the best pair\"; the abstract says two twin vectors are merged after the "
              "example is added).",
              "`RefTVM` in the script: Algorithms 1-3 in NumPy with the weighted SVM re-solved "
              "exactly by `SVC` after every change (C_eff = 100 B / sum of weights; all allowed "
              "pairs in increasing distortion). Its *reference* row keeps the library's "
              "readings: on Letter B = 20, order 1000 it makes the library's 5,416 merges and "
              "scores its 75.9 %; on USPS Global it ends about 1 point below the library (the "
              "solver's tolerance changes some ties of f). H11 tries at most 10 (or 60) "
              "pairs per example (each a re-solve), then drops the example; stream orders "
              "1000 + o (column *orders*); IJCNN also on "
              "the first 5,000 or 10,000 examples of each order (column *examples*; the "
              "collapse of our Global is complete after 1,000).")
    L += ["| data set | B | variant | paper | reading | examples | orders | accuracy | merges | "
          "cross-label merges | dropped | CPU s per run |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["reading"] == "rejection on the re-solved model":
            r["reading"] += " (at most 10 pairs)"
        L.append(f"| {r['name']} | {r['B']} | {r['variant']} | {r['paper']} | {r['reading']} | "
                 f"{r.get('n', 'all')} | {len(r['acc'])} | {tg._ms(r['acc'])} | "
                 f"{np.mean(r['merges']):.0f} | "
                 f"{np.mean(r['cross']):.0f} | {np.mean(r['dropped']):.0f} | "
                 f"{np.mean(r['cpu']):.0f} |")
    L += ["", "*Verdict.* See the verdicts of H7-H13 below."]
    tg.write_section(args.out, "post", L)


def render_data(args, res):
    L = _head("data", "H13: the data side (Letter's class split and budget, USPS's scaling)",
              "--section data --orders 5` (Letter; USPS Default and Global: 3 orders) and "
              "`python perf/table3_readings.py --section data --parts uspsb,uspst5,uspsnn,uspsmm,"
              "uspsk --orders 3` and (Letter at B = 100 on 3 orders) `python "
              "perf/table3_readings.py --section data --parts raw --orders 5",
              "The paper's Letter B = 20 figure comes from another class split of the 26 "
              "letters (\"the first 13 letters\" read with an off-by-one), or from a budget "
              "counted per class; the USPS Global gap comes from USPS's scaling.",
              "Letter with the first 12, 13 (ours) or 14 letters negative: the exact SVM on "
              "all 16,000 training rows (C = 100, gamma = 1/16; the paper's LIBSVM: 93.2 % "
              "with 2,075 SVs) and TVM (defaults) at B = 20 (5 orders) and 100 (3). Our "
              "Letter (A-M negative) at budgets 20-50 (5 orders), to place the paper's "
              "76.5 on our curve. USPS "
              "standardised (ours) and as shipped (grey levels in [-1, 1], gamma = 1/256), "
              "Default and Global at B = 100, and USPS's other cells of Tables 3-5 on both; the "
              "exact SVM's support vectors on other inputs of USPS, Letter and IJCNN against "
              "the paper's LIBSVM counts. Stream orders "
              "1000 + o.")
    L += ["| Letter split | positives | exact SVM (SVs) | TVM B = 20 (paper 76.5) | TVM B = 100 "
          "(paper 87.6) |", "|---|---|---|---|---|"]
    for r in res["splits"]:
        L.append(f"| {r['label']} | {100 * r['pos']:.1f} % | {r['svc']:.1f} ({r['nsv']}) | "
                 f"{tg._ms(r['b20'])} | {tg._ms(r['b100'])} |")
    L += ["", "| Letter (A-M negative), budget | " + " | ".join(
        f"B = {B}" for B, _ in res["curve"]) + " |", "|---|" + "---|" * len(res["curve"]),
        "| TVM (defaults) | " + " | ".join(tg._ms(a) for _, a in res["curve"]) + " |",
        "", "| USPS inputs | Default (paper 92.1) | Global (paper 91.1) | Global - Default "
        "(paper -1.0) |", "|---|---|---|---|"]
    for r in res["usps"]:
        L.append(f"| {r['label']} | {tg._ms(r['default'])} | {tg._ms(r['glob'])} | "
                 f"{np.mean(r['glob']) - np.mean(r['default']):+.1f} |")
    if res.get("usps_mm"):
        r = res["usps_mm"]
        L += ["", f"USPS with {r['label']} (LIBSVM's svm-scale): exact SVM {r['svc']:.1f} % "
              f"({r['nsv']} SVs); TVM B = 100 Default {tg._ms(r['default'])}, Global "
              f"{tg._ms(r['glob'])} (3 orders)."]
    if res.get("usps_svm"):
        L += ["", "| USPS inputs | exact SVM (SVs); paper LIBSVM 96.1 (1,077) | TVM B = 20 "
              "(paper 85.0) | B = 50 (88.5) | B = 200 (93.5) | B = 500 (95.0) |",
              "|---|---|---|---|---|---|"]
        for r in res["usps_svm"]:
            b = {str(k): v for k, v in r["budgets"].items()}
            L.append(f"| {r['label']} | {r['svc']:.1f} ({r['nsv']}) | " + " | ".join(
                tg._ms(b[k]) for k in ("20", "50", "200", "500")) + " |")
    if res.get("usps_t5"):
        from fastbudget.reproduce import tvm as rt

        cols = list(rt.T5_PARAMS)
        L += ["", "| USPS inputs, Table 5 (B = 100) | " + " | ".join(
            f"{v} (paper {rt.PAPER_TABLE5['USPS'][2 + i]})" for i, v in enumerate(cols)) + " |",
            "|---|" + "---|" * len(cols)]
        for r in res["usps_t5"]:
            L.append(f"| {r['label']} | " + " | ".join(tg._ms(r["cols"][v]) for v in cols) + " |")
    if res.get("raw"):
        L += ["", "| data set, inputs | exact SVM (SVs) | paper's LIBSVM | TVM B = 20 | "
              "TVM B = 100 |", "|---|---|---|---|---|"]
        ref = {"Letter": ("93.2 (2,075)", "76.5", "87.6"), "IJCNN": ("98.7 (2,103)", "", "")}
        for r in res["raw"]:
            p = ref[r["name"]]
            b20 = f"{tg._ms(r['b20'])} (paper {p[1]})" if "b20" in r else ""
            b100 = f"{tg._ms(r['b100'])} (paper {p[2]})" if "b100" in r else ""
            L.append(f"| {r['name']}, {r['label']} | {r['svc']:.1f} ({r['nsv']}) | {p[0]} | "
                     f"{b20} | {b100} |")
    if res.get("usps_k"):
        keys = (("rbf Random", 86.8), ("poly Random", 86.6), ("poly TVM", 92.8),
                ("linear Random", 78.7), ("linear TVM", 83.8))
        L += ["", "| USPS inputs, B = 100 | " + " | ".join(
            f"{k} (paper {p})" for k, p in keys) + " |", "|---|" + "---|" * len(keys)]
        for r in res["usps_k"]:
            L.append(f"| {r['label']} | " + " | ".join(tg._ms(r[k]) for k, _ in keys) + " |")
    if res.get("usps_nn"):
        L += ["", "USPS: share of examples whose nearest of 100 random training examples "
              "has the other label (200 draws, seed 0): " + "; ".join(
                  f"{r['label']} {100 * r['other']:.0f} %" for r in res["usps_nn"]) + "."]
    L += ["", "*Verdict.* See the verdicts of H7-H13 below."]
    tg.write_section(args.out, "data", L)


def render(args):
    """Write the doc's sections from the JSON files the runs saved (``--json`` of each run;
    ``--render KEY=FILE[+FILE]``)."""
    files = dict(kv.split("=", 1) for kv in args.render.split(","))

    def rows(key):
        out = []
        for f in files[key].split("+"):
            out += json.loads(pathlib.Path(f).read_text())
        return out

    if "rules" in files:
        render_rules(
            args, rows("rules"), "rules",
            "H7-H9: the rejection test's estimate and tolerance, net-weight twins",
            "--section rules --orders 3` and, for the rows *USPS (grey levels)* (H13's "
            "inputs), `python perf/table3_readings.py --section rules --orders 3 --sets "
            "'USPS (grey levels)' --readings 'ours,estimate unweighted,label-sided'",
            "The paper's rejection test (Sec. 4.2.4) or its merged twins differ from ours "
            "in a way the text leaves open, and that difference is what keeps the paper's "
            "Global from collapsing on IJCNN and from losing 3.4 points on USPS (and gives "
            "Letter B = 20 its 4.7 points). H7: the linear estimate TVM^(q_new) unweighted, "
            "(f(q_i) + f(q_j)) / 2 (the text weights it by s_i, s_j). H8: the test with an "
            "absolute tolerance, |f(q_new) - TVM^| < eta (the text's is relative). H9: a "
            "merged twin keeps only its net weight |s+ - s-| on its majority label, as an "
            "implementation holding one IDSVM example per twin would (the text keeps both "
            "labels' weights); control of C then divides by the smaller sum of net weights. "
            "H9 is also the main effect of weighting q_new and d* by y alpha instead of s "
            "(inside the margin alpha+ - alpha- = C_eff (s+ - s-)).",
            "A throw-away copy of the package whose compiled rejection test and merge "
            "follow the reading (switches in spare entries of `TwinState.ist`, see the "
            "script's docstring); the paper's defaults otherwise; B = 100 (Letter also 20); "
            "stream orders 1000-1002. *Cross-label merges*: merges of two twins with "
            "different majority labels (s+ > s- against s+ < s-), in brackets those whose "
            "lighter twin is the positive one; *pos. share*: the share of the positive "
            "weight held by positive-majority twins at the end. NoRejection rows (the "
            "paper's Table 5 column) for H9, which is the only one that applies without "
            "the test.")
    if "labelsided" in files:
        render_rules(
            args, rows("labelsided"), "labelsided",
            "H10: One-Sided by the twins' labels",
            "--section rules --orders 3 --readings label-sided` and `python "
            "perf/table3_readings.py --section sweep --orders 10 --sets Letter --variants '' "
            "--budgets 20,50,100 --readings ours,label-sided",
            "Sec. 4.2.3 separates the twins by the sign of TVM(q_i); an implementation that "
            "separated them by their majority label (s+ >= s-) would never merge twins of "
            "different labels. If the paper's One-Sided were that, its Default would differ "
            "from ours on Letter B = 20, where 937 of our 4,980 merges per run join twins of "
            "different labels inside one region (H7-H9 table). For the Global cells it is a "
            "diagnostic, not a reading: Global with the cross-label merges forbidden.",
            "The patched copy of H7-H9 with the twins' side set by their majority label "
            "(one_sided=True forced, so the Global and Default rows are the same runs); "
            "orders 1000-1002, and for Letter 1000-1009 beside ours on the same orders.")
    if "post" in files:
        render_post(args, rows("post"))
    if "data" in files:
        render_data(args, json.loads(pathlib.Path(files["data"]).read_text()))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--orders", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "docs" / "results"))
    ap.add_argument("--sets", default=None)
    ap.add_argument("--section", required=True,
                    choices=("rules", "rules-inner", "sweep", "sweep-inner", "post",
                             "data", "render"))
    ap.add_argument("--render", default=None, help="render: KEY=FILE[+FILE],...")
    ap.add_argument("--readings", default="ours,estimate unweighted")
    ap.add_argument("--variants", default="Default,Global")
    ap.add_argument("--budgets", default="")
    ap.add_argument("--parts", default="letter,usps,uspsb,uspst5,uspsmm,uspsk,raw,uspsnn",
                    help="data: which parts to run")
    ap.add_argument("--post-readings", default=None, help="indices into POST_READINGS")
    ap.add_argument("--post-tries", type=int, default=10)
    ap.add_argument("--post-variants", default=None, help="post: Default and/or Global")
    ap.add_argument("--max-n", type=int, default=None,
                    help="post: only the first N examples of each stream order")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.section in ("rules", "sweep"):
        return rules_section(args)
    if args.section == "render":
        return render(args)
    if args.section == "post":
        return post_section(args)
    if args.section == "data":
        return data_section(args)
    if args.section == "sweep-inner":
        return sweep_inner(args)
    if args.section == "rules-inner":
        return rules_inner(args)



# ----------------------------------------------------------------- post (NumPy reference)
class RefTVM:
    """Algorithms 1-3 of paper 000 in plain NumPy, the weighted SVM re-solved exactly by
    ``SVC`` after every change of the twins (no adiabatic engine, no merge cache).

    Twin t is (Q[t], +1, sp[t]) and (Q[t], -1, sn[t]); C_eff = C B / sum(sp + sn) (Sec. 4.3).
    ``post``: the rejection test of Sec. 4.2.4 applied to the re-solved model (the pair is
    merged, the SVM re-solved on the new twin set, and f(q_new) compared with the linear
    estimate of the model before the merge; on failure the merge is undone and the next
    pair is tried, at most ``post_tries`` pairs, then the example is dropped).
    ``overflow``: the new example's twin TV_{B+1} is a merge candidate like the others (a
    merge that takes it leaves no twin to add).
    """

    def __init__(self, B, gamma, C=100.0, m1=1.0, m2=2.0, eta=0.2, one_sided=True,
                 post=False, post_tries=10, overflow=False):
        self.B, self.gamma, self.C, self.m1, self.m2, self.eta = B, gamma, C, m1, m2, eta
        self.one_sided, self.post, self.post_tries, self.overflow = (one_sided, post,
                                                                     post_tries, overflow)
        self.n_merges = self.n_dropped = self.n_removed = self.n_accepted = self.n_solves = 0
        self.n_cross = 0

    # -- the weighted SVM on the twins
    def _kern(self, A, Bm):
        d2 = (A * A).sum(1)[:, None] + (Bm * Bm).sum(1)[None, :] - 2.0 * A @ Bm.T
        return np.exp(-self.gamma * np.maximum(d2, 0.0))

    def _solve(self, Q, sp, sn):
        """(coef per twin, b) of the exact weighted SVM on the twins."""
        from sklearn.svm import SVC

        self.n_solves += 1
        ip, ineg = np.flatnonzero(sp > 0), np.flatnonzero(sn > 0)
        if len(ip) == 0 or len(ineg) == 0:
            return np.zeros(len(Q)), (1.0 if len(ip) else -1.0)
        X = np.vstack([Q[ip], Q[ineg]])
        y = np.r_[np.ones(len(ip)), -np.ones(len(ineg))]
        w = np.r_[sp[ip], sn[ineg]]
        C = self.C * self.B / (sp.sum() + sn.sum())
        m = SVC(C=C, kernel="rbf", gamma=self.gamma, tol=1e-5, cache_size=50,
                shrinking=False).fit(X, y, sample_weight=w)
        coef = np.zeros(len(Q))
        owner = np.r_[ip, ineg][m.support_]
        np.add.at(coef, owner, m.dual_coef_[0])
        return coef, float(m.intercept_[0])

    def _f(self, X, Q=None, coef=None, b=None):
        Q = self.Q if Q is None else Q
        coef = self.coef if coef is None else coef
        b = self.b if b is None else b
        nz = coef != 0
        if not nz.any():
            return np.full(len(X), b)
        return self._kern(X, Q[nz]) @ coef[nz] + b

    def fit(self, X, y):
        B = self.B
        d = X.shape[1]
        self.Q = np.zeros((0, d))
        self.sp = np.zeros(0)
        self.sn = np.zeros(0)
        self.coef = np.zeros(0)
        self.b = 0.0
        i = 0
        N = len(y)
        blk = 4
        while i < N:
            if len(self.Q) < B:
                self._add(X[i], y[i])
                i += 1
                continue
            # Beneficial on a block of the coming examples under the current model (the
            # block grows while no example is Beneficial)
            f = self._f(X[i:min(N, i + blk)])
            hit = np.flatnonzero(np.abs(f) <= self.m1)
            if len(hit) == 0:
                i += len(f)
                blk = min(2 * blk, 512)
                continue
            blk = max(4, blk // 2)
            i += hit[0]
            self._update(X[i], y[i], f[hit[0]])
            i += 1
        return self

    def _add(self, x, yi):
        self.n_accepted += 1
        self.Q = np.vstack([self.Q, x])
        self.sp = np.r_[self.sp, 1.0 if yi > 0 else 0.0]
        self.sn = np.r_[self.sn, 0.0 if yi > 0 else 1.0]
        self.coef, self.b = self._solve(self.Q, self.sp, self.sn)
        self.fq = self._f(self.Q)

    def _update(self, x, yi, fx):
        self.n_accepted += 1
        Q, sp, sn, fq = self.Q, self.sp, self.sn, self.fq
        xp, xn = (1.0, 0.0) if yi > 0 else (0.0, 1.0)
        # margin twins sit at |f| = 1 up to the solver's tolerance: never beyond m2 = 2
        k = int(np.argmax(np.abs(fq)))
        if abs(fq[k]) > self.m2:
            self.n_removed += 1
            Q = Q.copy(); sp = sp.copy(); sn = sn.copy()  # noqa: E702
            Q[k], sp[k], sn[k] = x, xp, xn
            self._set(Q, sp, sn)
            return
        # candidates: twins 0..B-1, and B = the overflow twin when it may merge
        QQ = np.vstack([Q, x]) if self.overflow else Q
        ss = np.r_[sp + sn, 1.0] if self.overflow else sp + sn
        ff = np.r_[fq, fx] if self.overflow else fq
        n = len(QQ)
        iu, ju = np.triu_indices(n, 1)
        d2 = ((QQ[iu] - QQ[ju]) ** 2).sum(1)
        cost = ss[iu] * ss[ju] * d2 / (ss[iu] + ss[ju])
        if self.one_sided:
            ok = (ff[iu] >= 0) == (ff[ju] >= 0)
            iu, ju, cost = iu[ok], ju[ok], cost[ok]
        order = np.argsort(cost, kind="stable")
        tries = 0
        for p in order:
            a, c = int(iu[p]), int(ju[p])
            qn = (ss[a] * QQ[a] + ss[c] * QQ[c]) / (ss[a] + ss[c])
            fhat = (ss[a] * ff[a] + ss[c] * ff[c]) / (ss[a] + ss[c])
            spa = np.r_[sp, xp] if self.overflow else sp
            sna = np.r_[sn, xn] if self.overflow else sn
            mp, mn = spa[a] + spa[c], sna[a] + sna[c]
            # the new twin set: the merged twin in a's slot, the overflow twin in c's
            # (when c is the overflow twin itself, nothing is added)
            Qn, spn, snn = Q.copy(), sp.copy(), sn.copy()
            Qn[a], spn[a], snn[a] = qn, mp, mn
            if c < len(Q):
                Qn[c], spn[c], snn[c] = x, xp, xn
            if self.eta is None:
                passed = True
                new = None
            elif not self.post:
                fn = self._f(qn[None, :])[0]
                passed = _inside(fn, fhat, self.eta)
                new = None
            else:
                if tries >= self.post_tries:
                    break
                tries += 1
                coef, b = self._solve(Qn, spn, snn)
                fn = self._f(qn[None, :], Qn, coef, b)[0]
                passed = _inside(fn, fhat, self.eta)
                new = (coef, b)
            if passed:
                self.n_merges += 1
                if np.sign(spa[a] - sna[a]) * np.sign(spa[c] - sna[c]) < 0:
                    self.n_cross += 1
                self._set(Qn, spn, snn, new)
                return
        self.n_dropped += 1

    def _set(self, Q, sp, sn, solved=None):
        self.Q, self.sp, self.sn = Q, sp, sn
        self.coef, self.b = self._solve(Q, sp, sn) if solved is None else solved
        self.fq = self._f(Q)

    def score(self, X, y):
        return float(np.mean(np.where(self._f(X) >= 0, 1, -1) == y))


def _inside(fn, fhat, eta):
    lo, hi = (1.0 - eta) * fhat, (1.0 + eta) * fhat
    if lo > hi:
        lo, hi = hi, lo
    return lo < fn < hi


if __name__ == "__main__":
    main()
