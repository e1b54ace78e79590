"""Typing: the package ships py.typed and stubs for what carries no annotations of its own
(tinytorch/_tensor/tensor.pyi, __init__.pyi, nn/functional/__init__.pyi, written by scripts/gen_stubs.py);
the stubs are current, cover every public Tensor method and top-level function, and a type
checker accepts them together with ordinary PyTorch-style code."""
from __future__ import annotations

import ast
import inspect
import os
import subprocess
import sys
import textwrap

import pytest

import tinytorch
import tinytorch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PKG = os.path.join(ROOT, "tinytorch")


def _stub_names(path: str, cls: str | None = None) -> set:
    tree = ast.parse(open(path).read())
    body = tree.body
    if cls:
        body = next(n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
    return {n.name for n in body if isinstance(n, ast.FunctionDef)} | \
        {n.target.id for n in body if isinstance(n, ast.AnnAssign)}


def test_stubs_are_current():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_stubs.py"), "--check"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_stubs_cover_the_public_api():
    methods = _stub_names(os.path.join(PKG, "_tensor", "tensor.pyi"), "Tensor")
    missing = [n for n in dir(tinytorch.Tensor) if not n.startswith("_") and n not in methods]
    assert not missing, f"tensor.pyi lacks {missing}"
    top = _stub_names(os.path.join(PKG, "__init__.pyi"))
    missing = [n for n in dir(tinytorch) if not n.startswith("_") and inspect.isfunction(getattr(tinytorch, n))
               and n not in top]
    assert not missing, f"__init__.pyi lacks {missing}"
    fs = _stub_names(os.path.join(PKG, "nn", "functional", "__init__.pyi"))
    missing = [n for n in dir(F) if not n.startswith("_") and inspect.isfunction(getattr(F, n)) and n not in fs]
    assert not missing, f"nn/functional/__init__.pyi lacks {missing}"


def test_py_typed_and_stubs_are_packaged():
    assert os.path.exists(os.path.join(PKG, "py.typed"))
    pathutil = pytest.importorskip("scikit_build_core.build._pathutil")
    try:  # scikit-build-core's own file selection for wheel.packages (a private helper: skip if it moved)
        files = {str(t) for _, t in pathutil.iter_package_files(
            packages={"tinytorch": PKG}, include=[], src_exclude=[], target_exclude=[],
            build_dir="build/{wheel_tag}", mode="default")}
    except (AttributeError, TypeError) as e:
        pytest.skip(f"scikit-build-core's iter_package_files changed: {e}")
    for f in ("tinytorch/py.typed", "tinytorch/_tensor/tensor.pyi", "tinytorch/__init__.pyi",
              "tinytorch/nn/functional/__init__.pyi"):
        assert f in files, f"{f} would not be in the wheel"


def test_mypy_accepts_pytorch_style_code(tmp_path, monkeypatch):
    api = pytest.importorskip("mypy.api")
    src = tmp_path / "user.py"
    src.write_text(textwrap.dedent("""
        import tinytorch as torch
        import tinytorch.nn as nn
        import tinytorch.nn.functional as F

        def step(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
            logits = model(x)
            loss = F.cross_entropy(logits, y, label_smoothing=0.1)
            loss.backward()
            h = x.sum(dim=1, keepdim=True).relu().view(-1) + 2
            n: int = h.dim() + h.numel()
            return loss.item() + float(n)

        a = torch.zeros(3, dtype=torch.float32)
        b: torch.Tensor = torch.cat([a, a], dim=0)
        s: torch.Size = b.shape
        reveal_type(torch.matmul(b, b))
        bad: int = b.sum()
    """))
    monkeypatch.setenv("MYPYPATH", ROOT)
    out, err, rc = api.run(["--no-incremental", "--follow-imports=silent", "--ignore-missing-imports",
                            "--cache-dir", str(tmp_path / "cache"), str(src)])
    assert 'Revealed type is "tinytorch._tensor.tensor.Tensor"' in out, out
    # the one deliberate error (a Tensor is not an int) and nothing else
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "user.py:18" in errors[0] and "Tensor" in errors[0], out


def _unannotated(fn) -> list:
    sig = inspect.signature(fn)
    missing = [p.name for p in sig.parameters.values()
               if p.name not in ("self", "cls") and p.annotation is inspect.Parameter.empty]
    return missing + (["return"] if sig.return_annotation is inspect.Signature.empty else [])


def test_nn_modules_and_optimizers_are_fully_annotated():
    # every nn module's __init__ and forward and every optimizer's __init__ and step (shared aliases:
    # tinytorch/nn/common_types.py); scripts/annotation_coverage.py reports the same at 100%
    import tinytorch.nn as nn
    import tinytorch.optim as optim
    gaps = {}
    for prefix, module, base, methods in (("nn", nn, nn.Module, ("__init__", "forward")),
                                          ("optim", optim, optim.Optimizer, ("__init__", "step"))):
        for name in dir(module):
            cls = getattr(module, name)
            if inspect.isclass(cls) and issubclass(cls, base):
                for meth in methods:
                    if _unannotated(getattr(cls, meth)):
                        gaps[f"{prefix}.{name}.{meth}"] = _unannotated(getattr(cls, meth))
    assert not gaps, f"unannotated parameters: {gaps}"
