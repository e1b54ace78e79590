"""The op fuzzer's CI tier: a seeded hypothesis corpus over every op-table row and the ops with
dims, indices and sizes (tests/fuzz/catalogue.py), every dtype and memory layout, NaN/inf, 0-size
and 0-dim shapes, out-of-range arguments and overflowing sizes; each case runs in a child
interpreter, so a crash or a hang is a reported failure, not a dead test run. Values are checked
against float64 numpy; bad arguments must raise an exception of PyTorch's kinds.
The long tier against torch is tests/fuzz/test_fuzz_torch.py (`pytest -m fuzz`)."""
import pytest

from fuzz.run import FAILING, run_cases, summary
from fuzz.strategies import corpus

CASES = 4000


@pytest.mark.parametrize("seed", [20261126])
def test_op_fuzzer_numpy_tier(seed):
    counts, notes = run_cases(corpus(CASES, seed), "numpy")
    assert sum(counts.values()) == CASES
    assert counts["agree"] > CASES // 3, summary(counts, notes)       # the corpus really compares values
    assert not any(counts[k] for k in FAILING), summary(counts, notes)


def test_fuzzer_reports_crashes_and_hangs():
    """The harness itself: a case that kills the child (a segfault) or stops it (a hang) is reported,
    and the run goes on with a fresh child."""
    ok = {"op": "sum", "inputs": [{"shape": [3], "dtype": "float64", "layout": "sliced", "seed": 2}],
          "args": [], "kwargs": {}}
    cases = [ok, {"op": "_segfault", "inputs": [], "args": [], "kwargs": {}}, ok,
             {"op": "_hang", "inputs": [], "args": [], "kwargs": {}}, ok]
    counts, notes = run_cases(cases, "numpy", case_seconds=3)
    assert (counts["agree"], counts["crash"], counts["hang"]) == (3, 1, 1), (counts, notes)
