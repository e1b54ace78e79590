"""scripts/api_coverage.py (tinytorch's names against torch's): runs only where torch is installed."""
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "api_coverage.py"


def test_coverage_report_lists_absent_names_with_reasons():
    torch = pytest.importorskip("torch")
    import tinytorch
    spec = importlib.util.spec_from_file_location("api_coverage", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = mod.render(torch, tinytorch)
    for title in ("torch (top-level functions)", "torch.nn (modules)", "torch.nn.functional",
                  "torch.Tensor (methods and attributes)", "torch.linalg"):
        assert f"| {title} |" in text and f"#### {title}" in text
    absent = text.split("### Absent names")[1]
    for present in ("`lerp`", "`erfinv`", "`index_add`", "`median`", "`compile`"):
        assert present not in absent.split("#### torch.nn (modules)")[0], present
    assert mod.reason_of("view_as_complex").startswith("complex") and mod.reason_of("zz_unknown") == "not implemented yet"
