"""The errors ``save`` raises for what it can't store, shared by its formats."""
from __future__ import annotations

from typing import Any


def unsaveable(obj: Any, where: str, fmt: str = "") -> TypeError:
    """The error for an object ``save`` can't store: what it stores, and for a module or an
    optimizer (anything with a ``state_dict()``) how to save it instead."""
    if callable(getattr(obj, "state_dict", None)):
        return TypeError(f"tinytorch.save: can't save object of type {type(obj).__name__} at {where!r}{fmt}: "
                         "modules and optimizers would need their code to rebuild, and tinytorch.load never runs "
                         "code; save their state_dict() instead: tinytorch.save(model.state_dict(), f), then "
                         "model.load_state_dict(tinytorch.load(f))")
    return TypeError(f"tinytorch.save: can't save object of type {type(obj).__name__} at {where!r}{fmt}: only "
                     "tensors, numpy arrays, dict/list/tuple/set containers and int, float, complex, str, bytes, "
                     "bool, None are supported (objects would need code to rebuild: save their state_dict())")
