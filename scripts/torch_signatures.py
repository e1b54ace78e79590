"""Writes the keyword names PyTorch accepts for each public function and Tensor method, the table
tests/api/test_keyword_audit.py checks tinytorch against (CI has no torch). Run with torch:

    /path/to/venv-with-torch/bin/python scripts/torch_signatures.py   # -> tests/fixtures/torch_signatures.json

A Python-defined torch function gives its signature; a builtin gives the union of its native
overloads' argument names (the schema's ``self`` is ``input`` for a function and is dropped for a
method, as PyTorch's argument parser does). ``out`` is left out: tinytorch has no ``out=`` forms."""
from __future__ import annotations

import inspect
import json
import os
import sys
from collections import defaultdict

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "torch_signatures.json")
SKIP = {"out"}


def _python_visible(schema) -> bool:
    """An overload Python calls reach: one taking a tensor or a dtype (TorchScript's scalar and list
    overloads, aten::add.int(int a, int b) and the like, have neither)."""
    types = [str(a.type) for a in schema.arguments]
    return any("Tensor" in t or "ScalarType" in t for t in types)


def _schemas() -> dict:
    by_name = defaultdict(set)
    for s in torch._C._jit_get_all_schemas():
        if s.name.startswith("aten::") and _python_visible(s):
            # out= variants' result arguments (values, indices, ...) are written, not passed
            by_name[s.name[len("aten::"):]].update(
                a.name for a in s.arguments if not (a.alias_info is not None and a.alias_info.is_write
                                                    and a.kwarg_only))
    return by_name


def _python_keywords(fn, method: bool):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if method and params:
        params = params[1:]   # self
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None   # takes any keyword: nothing to hold tinytorch to
    return sorted(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in SKIP)


def _keywords(fn, name: str, schemas: dict, method: bool):
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        return _python_keywords(inspect.unwrap(fn), method)
    names = schemas.get(name)
    if not names:
        return None
    if method:
        names = names - {"self"}
    else:
        names = {"input" if n == "self" else n for n in names}
    return sorted(names - SKIP)


def _table(namespace, names, schemas, method=False) -> dict:
    out = {}
    for name in sorted(names):
        fn = getattr(namespace, name, None)
        if fn is None or not callable(fn) or isinstance(fn, type):
            continue
        kws = _keywords(fn, name, schemas, method)
        if kws is not None:
            out[name] = kws
    return out


def main() -> int:
    schemas = _schemas()
    public = [n for n in dir(torch) if not n.startswith("_")]
    methods = [n for n in dir(torch.Tensor) if not n.startswith("_")]
    functional = [n for n in dir(F) if not n.startswith("_")]
    table = {"torch": torch.__version__,
             "functions": _table(torch, public, schemas),
             "methods": _table(torch.Tensor, methods, schemas, method=True),
             "nn.functional": _table(F, functional, schemas)}
    with open(OUT, "w") as f:
        json.dump(table, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"wrote {OUT}: " + ", ".join(f"{len(v)} {k}" for k, v in table.items() if isinstance(v, dict)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
