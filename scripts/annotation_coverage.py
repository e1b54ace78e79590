"""How much of tinytorch's public API a type checker sees annotated: for Tensor methods, top-level
functions, nn.functional functions, nn.Module's methods, the nn module classes (constructor and
forward) and the optimizers (constructor and step), the share whose parameters and return are
all annotated, and the share annotated with types more precise than ``Any``.

Where a stub exists (``tinytorch/_tensor/tensor.pyi``, ``tinytorch/__init__.pyi``,
``tinytorch/nn/functional/__init__.pyi``, written by
``scripts/gen_stubs.py``) it is what type checkers read, so it is what is counted; elsewhere the
runtime signatures (the source's annotations) are.

    python3 scripts/annotation_coverage.py                  # this checkout
    python3 scripts/annotation_coverage.py --root /work/main   # another checkout (built)
"""
from __future__ import annotations

import argparse
import ast
import inspect
import os
import sys

_SKIP = ("self", "cls")


def _from_signature(fn) -> tuple | None:
    """(annotated, precise) of a callable's runtime signature; None if it has none."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    anns = [p.annotation for p in sig.parameters.values() if p.name not in _SKIP]
    anns.append(sig.return_annotation)
    annotated = all(a is not inspect.Parameter.empty for a in anns)
    precise = annotated and all(str(a) not in ("Any", "typing.Any") for a in anns)
    return annotated, precise


def _from_stub(node: ast.FunctionDef) -> tuple:
    args = node.args
    params = [a for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg not in _SKIP]
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    anns = [a.annotation for a in params] + [node.returns]
    annotated = all(a is not None for a in anns)
    precise = annotated and all("Any" not in ast.unparse(a) for a in anns)
    return annotated, precise


def _stub_functions(path: str, cls: str | None) -> dict:
    if not os.path.exists(path):
        return {}
    tree = ast.parse(open(path).read())
    body = tree.body
    if cls is not None:
        body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), [])
    return {n.name: _from_stub(n) for n in body if isinstance(n, ast.FunctionDef)}


def _share(results: list) -> tuple:
    n = len(results)
    a = sum(1 for r in results if r and r[0])
    p = sum(1 for r in results if r and r[1])
    return n, a, p


def measure(root: str) -> list:
    sys.path.insert(0, root)
    import tinytorch
    import tinytorch.nn as nn
    import tinytorch.nn.functional as F
    import tinytorch.optim as optim
    rows = []

    T = tinytorch.Tensor
    stub = _stub_functions(os.path.join(root, "tinytorch", "tensor.pyi"), "Tensor")
    names = [n for n in dir(T) if not n.startswith("_") and callable(getattr(T, n))
             and not isinstance(inspect.getattr_static(T, n), property)]
    rows.append(("Tensor methods", _share([stub.get(n) if stub else _from_signature(getattr(T, n)) for n in names])))

    stub = _stub_functions(os.path.join(root, "tinytorch", "__init__.pyi"), None)
    names = [n for n in dir(tinytorch) if not n.startswith("_") and callable(getattr(tinytorch, n))
             and not inspect.isclass(getattr(tinytorch, n)) and not isinstance(getattr(tinytorch, n), tinytorch.dtype)]
    rows.append(("top-level functions", _share([stub.get(n) if stub else _from_signature(getattr(tinytorch, n))
                                                for n in names])))

    stub = _stub_functions(os.path.join(root, "tinytorch", "nn", "functional", "__init__.pyi"), None)
    names = [n for n in dir(F) if not n.startswith("_") and callable(getattr(F, n))
             and not inspect.isclass(getattr(F, n)) and not inspect.ismodule(getattr(F, n))]
    rows.append(("nn.functional functions", _share([stub.get(n) if stub else _from_signature(getattr(F, n))
                                                    for n in names])))

    names = [n for n in dir(nn.Module) if (not n.startswith("_") or n in ("__call__", "__init__"))
             and callable(getattr(nn.Module, n))]
    rows.append(("nn.Module methods", _share([_from_signature(getattr(nn.Module, n)) for n in names])))

    mods = [getattr(nn, n) for n in dir(nn) if inspect.isclass(getattr(nn, n)) and issubclass(getattr(nn, n), nn.Module)]
    rows.append(("nn module classes (__init__ and forward)",
                 _share([_from_signature(c.__init__) for c in mods] + [_from_signature(c.forward) for c in mods])))

    opts = [getattr(optim, n) for n in dir(optim) if inspect.isclass(getattr(optim, n))
            and issubclass(getattr(optim, n), optim.Optimizer)]
    rows.append(("optimizers (__init__ and step)",
                 _share([_from_signature(c.__init__) for c in opts] + [_from_signature(c.step) for c in opts])))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the checkout to measure (its tinytorch must be built)")
    args = ap.parse_args()
    print("| API | callables | fully annotated | annotated, no `Any` |")
    print("| --- | ---: | ---: | ---: |")
    for name, (n, a, p) in measure(args.root):
        print(f"| {name} | {n} | {a} ({100.0 * a / max(n, 1):.0f}%) | {p} ({100.0 * p / max(n, 1):.0f}%) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
