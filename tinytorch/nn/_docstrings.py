"""Docstrings of the ``nn`` modules and ``nn.functional`` functions, written once from tables by
the shared mechanism of ``tinytorch/_docs/docstrings.py``: the summary in PyTorch's words
(``_doc_summaries.py``), the object's own implementation note, and an Args section built from its
signature and the ``nn`` parameter glossary (``_doc_params.py``), defaults from the signature. A
docstring that already has an Args section is left as written. ``help(nn.Conv2d)`` then reads::

    Applies a 2D convolution over an input signal composed of several input planes.

    Args:
        in_channels (int): number of channels in the input image.
        ...
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List, Optional

from tinytorch._docs.docstrings import args_section as _args_block
from tinytorch._docs.docstrings import compose, documented_parameters, has_args, set_doc
from tinytorch.nn._doc_params import lookup
from tinytorch.nn._doc_summaries import FUNCTIONS, MODULES

# (owner, parameter) pairs the glossary lacks: tests/cpu/test_docstrings.py requires none
MISSING: List[tuple] = []


def args_section(owner: str, fn: Callable, is_module: bool) -> Optional[str]:
    """The ``Args:`` block for ``fn``'s parameters, or None when it takes none."""
    params = documented_parameters(fn, skip_first=is_module)
    return _args_block(params, lambda name: lookup(owner, name, is_module), MISSING, owner)


def document_modules(namespace: Dict[str, Any], module_base: type) -> None:
    """Gives every ``nn`` module class in ``namespace`` its Args docstring (unless it has one)."""
    for name, cls in list(namespace.items()):
        if not (inspect.isclass(cls) and issubclass(cls, module_base)) or name.startswith("_"):
            continue
        own = cls.__dict__.get("__doc__")
        if own and "Args" in own:
            continue
        # a class documents the constructor it is called with (its own or an nn base's)
        args = args_section(name, cls.__init__, True) if cls.__init__ is not object.__init__ else None
        doc = compose({name}, own, MODULES.get(name), args)
        if doc:
            cls.__doc__ = doc


def document_functions(namespace: Dict[str, Any]) -> None:
    """Gives every public function in ``namespace`` (``nn.functional``) its Args docstring."""
    for name, fn in list(namespace.items()):
        if name.startswith("_") or not callable(fn) or inspect.isclass(fn) or inspect.ismodule(fn):
            continue
        own = fn.__doc__
        if has_args(own) or (own and "Args" in own):
            continue
        set_doc(fn, compose({name, getattr(fn, "__name__", name)}, own, FUNCTIONS.get(name),
                            args_section(f"F.{name}", fn, False)))
