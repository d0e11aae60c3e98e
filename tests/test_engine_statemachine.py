"""hypothesis drives random sequences of add / remove / reweight / set_C on the exact engine.

After every step the engine must hold the exact weighted SVM of its live examples: the KT
certificate recomputed from scratch, and agreement with the polished libsvm oracle
(tests/reference/svm_reference.py). Points come from a small pool, labels are drawn
separately, so duplicates and the same point with both labels are frequent; weights
include 0. Set FASTBUDGET_HYPOTHESIS_EXAMPLES to run longer.
"""
import os

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from fastbudget.engine import IncrementalEngine
from _engine import assert_matches_oracle, certify, kernel_args

CAPACITY = 24
POOL = np.random.default_rng(7).normal(size=(12, 2))
N_EXAMPLES = int(os.environ.get("FASTBUDGET_HYPOTHESIS_EXAMPLES", "25"))

weights = st.one_of(st.just(0.0), st.floats(0.1, 10.0), st.sampled_from([1.0, 10.0]))
Cs = st.one_of(st.sampled_from([0.1, 1.0, 100.0]), st.floats(0.05, 200.0))


class EngineMachine(RuleBasedStateMachine):
    """The model under test and a plain record of what it should have learned."""

    @initialize(kernel=st.sampled_from(["rbf", "linear", "poly"]), C=Cs)
    def start(self, kernel, C):
        self.kernel = kernel
        self.kw = kernel_args(kernel, 2)
        self.eng = IncrementalEngine(CAPACITY, 2, C=C, kernel=kernel, **self.kw)
        self.record = {}  # slot -> (pool index, y, w)
        self.C = C

    @precondition(lambda self: len(self.record) < CAPACITY)
    @rule(i=st.integers(0, len(POOL) - 1), positive=st.booleans(), w=weights)
    def add(self, i, positive, w):
        y = 1.0 if positive else -1.0
        slot = self.eng.add(POOL[i], y, w)
        assert slot not in self.record
        self.record[slot] = (i, y, w)

    @precondition(lambda self: len(self.record) > 0)
    @rule(data=st.data())
    def remove(self, data):
        slot = data.draw(st.sampled_from(sorted(self.record)))
        self.eng.remove(slot)
        del self.record[slot]

    @precondition(lambda self: len(self.record) > 0)
    @rule(data=st.data(), w=weights)
    def reweight(self, data, w):
        slot = data.draw(st.sampled_from(sorted(self.record)))
        self.eng.reweight(slot, w)
        i, y, _ = self.record[slot]
        self.record[slot] = (i, y, w)

    @rule(C=Cs)
    def set_C(self, C):
        self.eng.set_C(C)
        self.C = C

    @invariant()
    def is_the_exact_svm_of_what_it_holds(self):
        if not hasattr(self, "eng"):
            return
        live = self.eng.live()
        assert sorted(live) == sorted(self.record)
        st_ = self.eng.st
        for slot in live:
            i, y, w = self.record[slot]
            assert np.array_equal(st_.X[slot], POOL[i]) and st_.y[slot] == y
            assert st_.wt[slot] == w
        assert abs(self.eng.C - self.C) <= 1e-14 * self.C
        certify(self.eng, self.kernel, self.kw)
        if live.size:
            assert_matches_oracle(self.eng, self.kernel, self.kw)


EngineMachine.TestCase.settings = settings(
    max_examples=N_EXAMPLES, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow], derandomize=True)
TestEngineMachine = EngineMachine.TestCase
