"""Checks tinytorch's import contract: each module imports only modules of its own layer or the
layers below it, never the package root, at module level or inside functions; and no modules
import each other in a circle (a circle inside one layer is as tangled as one across layers).

The layers are `[tool.tinytorch.layers]` in pyproject.toml, lowest first. The check reads .py,
.pyx and .pxd files (import-linter's grimp parses only .py files, and half of the core is
Cython), so it scans import statements line by line. Usage: python scripts/check_layers.py"""
from __future__ import annotations

import os
import re
import sys

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "tinytorch"
IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+c?import\s+(.+)|c?import\s+([\w.]+(?:\s*,\s*[\w.]+)*))")


def load_layers() -> list:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["tool"]["tinytorch"]["layers"]["order"]


def module_name(path: str) -> str:
    rel = os.path.relpath(path, ROOT)
    name = os.path.splitext(rel)[0].replace(os.sep, ".")
    return name[: -len(".__init__")] if name.endswith(".__init__") else name


def layer_of(module: str, layers: list) -> int | None:
    """Index of the layer holding module (the longest matching prefix wins), None if unlisted."""
    best, best_len = None, -1
    for i, layer in enumerate(layers):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = i, len(prefix)
    return best


def imports(path: str):
    """(line number, imported module) for every import statement of the file."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        m = IMPORT.match(line)
        if not m:
            continue
        if m.group(1):
            base = m.group(1)
            names = m.group(2).strip().strip("(").split("#")[0]
            names = [n.strip().split(" as ")[0].strip().rstrip("\\").strip() for n in names.split(",")]
            names = [n for n in names if n]
            if not names:                    # from x import (   -- the names follow on the next lines
                yield no, base
            for n in names:                  # a submodule (from tinytorch._ops import shape) or a name
                yield no, f"{base}.{n}" if submodule_exists(f"{base}.{n}") or base == PACKAGE else base
        else:
            for n in m.group(3).split(","):
                yield no, n.strip()


def submodule_exists(module: str) -> bool:
    path = os.path.join(ROOT, *module.split("."))
    return os.path.isdir(path) or any(os.path.exists(path + ext) for ext in (".py", ".pyx", ".pxd")) or \
        module in (f"{PACKAGE}._C", f"{PACKAGE}._cuda")


def check() -> list:
    layers = load_layers()
    errors = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, PACKAGE)):
        for fname in sorted(files):
            if not fname.endswith((".py", ".pyx", ".pxd", ".pxi")):
                continue
            path = os.path.join(dirpath, fname)
            src = module_name(path)
            if src == PACKAGE:
                continue                    # the root composes everything
            src_layer = layer_of(src, layers)
            rel = os.path.relpath(path, ROOT)
            if src_layer is None:
                errors.append(f"{rel}: module {src} is in no layer of [tool.tinytorch.layers]")
                continue
            for no, target in imports(path):
                if target != PACKAGE and not target.startswith(PACKAGE + "."):
                    continue
                if target == PACKAGE or not submodule_exists(target):
                    errors.append(f"{rel}:{no}: imports the package root ({target}); import the module defining it")
                    continue
                t_layer = layer_of(target, layers)
                if t_layer is not None and t_layer > src_layer:
                    errors.append(f"{rel}:{no}: {src} (layer {src_layer}) imports {target} (layer {t_layer}, above)")
    return errors


def circles() -> list:
    """The import graph's strongly connected components of more than one module (Tarjan's
    algorithm), each as a sorted list of module names."""
    graph: dict = {}
    for dirpath, _, files in os.walk(os.path.join(ROOT, PACKAGE)):
        for fname in sorted(files):
            if fname.endswith((".py", ".pyx", ".pxd", ".pxi")) and not fname.endswith(".pyi"):
                path = os.path.join(dirpath, fname)
                src = module_name(path)
                edges = graph.setdefault(src, set())
                for _, target in imports(path):
                    if target.startswith(PACKAGE + ".") and submodule_exists(target) and target != src:
                        edges.add(target)
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found: list = []

    def visit(v):  # recursive Tarjan; the graph is a few hundred modules deep at most
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main() -> int:
    errors = check()
    for c in circles():
        errors.append("import circle: " + " <-> ".join(c))
    for e in errors:
        print(e)
    print(f"import contract: {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
