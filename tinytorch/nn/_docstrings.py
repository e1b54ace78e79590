"""Docstrings of the ``nn`` modules and ``nn.functional`` functions, written once from tables: the
summary in PyTorch's words (``_doc_summaries.py``), the object's own implementation note, and an
Args section built from its signature and the parameter glossary (``_doc_params.py``), defaults
from the signature. A docstring that already has an Args section is left as written.
``help(nn.Conv2d)`` then reads::

    Applies a 2D convolution over an input signal composed of several input planes.

    Args:
        in_channels (int): number of channels in the input image.
        ...
"""
from __future__ import annotations

import inspect
import textwrap
from typing import Any, Callable, Dict, List, Optional

from tinytorch.nn._doc_params import lookup
from tinytorch.nn._doc_summaries import FUNCTIONS, MODULES

# (owner, parameter) pairs the glossary lacks: tests/cpu/test_docstrings.py requires none
MISSING: List[tuple] = []
_SKIPPED_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _default(v: Any) -> str:
    if v is inspect.Parameter.empty:
        return ""
    if isinstance(v, float) and v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e5):
        return f" Default: ``{v:g}``"
    return f" Default: ``{v!r}``"


def _params(fn: Callable, is_module: bool) -> List[inspect.Parameter]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    ps = [p for p in sig.parameters.values() if p.kind not in _SKIPPED_KINDS]
    if is_module and ps and ps[0].name == "self":
        ps = ps[1:]
    return ps


def args_section(owner: str, fn: Callable, is_module: bool) -> Optional[str]:
    """The ``Args:`` block for ``fn``'s parameters, or None when it takes none."""
    ps = _params(fn, is_module)
    if not ps:
        return None
    lines = ["Args:"]
    for p in ps:
        entry = lookup(owner, p.name, is_module)
        if entry is None:
            MISSING.append((owner, p.name))
            continue
        typ, desc = entry
        text = f"{p.name} ({typ}): {desc}"
        if "Default" not in desc:
            text += _default(p.default)
        lines.append(textwrap.fill(text, 100, initial_indent="    ", subsequent_indent="        "))
    return "\n".join(lines)


def _compose(name: str, own: Optional[str], summary: Optional[str], args: Optional[str]) -> Optional[str]:
    if own and own.lstrip().startswith(f"{name}("):  # Cython's embedded signature, not prose
        own = None
    parts = [textwrap.fill(summary, 100)] if summary else []
    if own:
        note = inspect.cleandoc(own)
        if not summary or note.split("\n")[0].rstrip(".") != summary.rstrip("."):
            parts.append(note)
    if args:
        parts.append(args)
    return "\n\n".join(parts) if parts else own


def document_modules(namespace: Dict[str, Any], module_base: type) -> None:
    """Gives every ``nn`` module class in ``namespace`` its Args docstring (unless it has one)."""
    for name, cls in list(namespace.items()):
        if not (inspect.isclass(cls) and issubclass(cls, module_base)) or name.startswith("_"):
            continue
        own = cls.__dict__.get("__doc__")
        if own and "Args" in own:
            continue
        args = args_section(name, cls.__init__, True) if "__init__" in _own_or_base_init(cls) else None
        doc = _compose(name, own, MODULES.get(name), args)
        if doc:
            cls.__doc__ = doc


def _own_or_base_init(cls: type) -> Dict[str, Any]:
    # a class documents the constructor it is called with (its own or an nn base's)
    return {"__init__": cls.__init__} if cls.__init__ is not object.__init__ else {}


def document_functions(namespace: Dict[str, Any]) -> None:
    """Gives every public function in ``namespace`` (``nn.functional``) its Args docstring."""
    for name, fn in list(namespace.items()):
        if name.startswith("_") or not callable(fn) or inspect.isclass(fn) or inspect.ismodule(fn):
            continue
        own = fn.__doc__
        if own and "Args" in own:
            continue
        doc = _compose(name, own, FUNCTIONS.get(name), args_section(f"F.{name}", fn, False))
        if doc:
            try:
                fn.__doc__ = doc
            except (AttributeError, TypeError):  # a builtin without a writable __doc__
                pass
