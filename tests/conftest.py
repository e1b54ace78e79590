"""pytest hooks and session fixtures for the whole suite. The shared helpers (tolerances,
assert_close, make, ...) live in tests/support/: imported from there, not from a conftest, since
tests/distributed/conftest.py, loaded as "conftest" too, replaces this module in sys.modules."""
from __future__ import annotations

import pytest

import tinytorch as tt


def pytest_collection_modifyitems(config, items):
    has_cuda = False
    try:
        has_cuda = tt.cuda.is_available()
    except AttributeError:
        pass
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
    # The fuzzer's long tier runs only when asked for: pytest -m fuzz
    skip_fuzz = pytest.mark.skip(reason="the long fuzz tier runs with -m fuzz")
    fuzz_asked = "fuzz" in (config.getoption("markexpr", "") or "")
    for item in items:
        if "cuda" in item.keywords and not has_cuda:
            item.add_marker(skip)
        if item.get_closest_marker("fuzz") and not fuzz_asked:
            item.add_marker(skip_fuzz)


@pytest.fixture(autouse=True, scope="session")
def _exact_float32_convolutions():
    """GPU float32 results are compared with CPU float32 results: convolutions without TF32, as
    PyTorch's own test suite runs (tests/ops/linalg/test_cuda_linalg.py tests the switch itself)."""
    if tt.cuda.is_available():
        tt.backends.cudnn.allow_tf32 = False
    yield
