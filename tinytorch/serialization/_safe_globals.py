"""The user's allow-list for PyTorch checkpoints: ``tinytorch.serialization.add_safe_globals``,
``safe_globals``, ``get_safe_globals``, ``clear_safe_globals``, as ``torch.serialization``'s.

``tinytorch.load`` rebuilds only tensors and plain data by default (``_torch_unpickler.py``). A
checkpoint that also pickles the user's own classes or functions (a config dataclass, an enum, a
numpy scalar) names them as ``GLOBAL module.qualname``; the user allows those names here, trusting
them. An allowed global is looked up in this registry by that name, never imported, and the
unpickler then lets the file call it (``REDUCE``), create it (``NEWOBJ``) and set its state
(``BUILD``), as ``torch.load(weights_only=True)`` does for the same list.

Entries are the objects themselves (their name is ``obj.__module__ + "." + obj.__qualname__``) or
``(obj, "module.name")`` pairs for an object pickled under another name (a class that moved, or a
tinytorch stand-in for a torch class: ``(MyLinear, "torch.nn.modules.linear.Linear")``).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Tuple, Union

SafeGlobal = Union[Callable[..., Any], Tuple[Callable[..., Any], str]]

# a list, not a set: entries need not be hashable, and the order is what get_safe_globals returns
_marked_safe_globals: List[SafeGlobal] = []


def _check(entries: Any, fn: str) -> List[SafeGlobal]:
    if not isinstance(entries, (list, tuple)):
        raise TypeError(f"{fn}: expected a list of classes/functions or (object, 'module.name') pairs, "
                        f"got {type(entries).__name__}")
    out = []
    for e in entries:
        if isinstance(e, tuple):
            if len(e) != 2 or not isinstance(e[1], str):
                raise ValueError(f"{fn}: expected tuple entries of the form (object, 'module.name'), got {e!r}")
        elif not (hasattr(e, "__module__") and hasattr(e, "__qualname__")):
            raise TypeError(f"{fn}: {e!r} has no __module__/__qualname__ to be named by; pass it as an "
                            "(object, 'module.name') pair")
        out.append(e)
    return out


def _full_name(entry: SafeGlobal) -> Tuple[str, Any]:
    if isinstance(entry, tuple):
        return entry[1], entry[0]
    return f"{entry.__module__}.{entry.__qualname__}", entry


def add_safe_globals(safe_globals: List[SafeGlobal]) -> None:
    """Marks the given globals as safe for ``weights_only`` load.

    For example, functions added to this list can be called during unpickling, classes can be
    instantiated and have their state set. Each item can be a function/class or a tuple of the
    form (function/class, string) where string is the full path of the function/class.

    Args:
        safe_globals (List[Union[Callable, Tuple[Callable, str]]]): list of globals to mark as safe

    Example:
        >>> class MyTensorLike: ...
        >>> tinytorch.serialization.add_safe_globals([MyTensorLike])
        >>> tinytorch.load("checkpoint.pt")
    """
    for e in _check(safe_globals, "add_safe_globals"):
        if not any(e is m or (isinstance(e, tuple) and isinstance(m, tuple) and e[0] is m[0] and e[1] == m[1])
                   for m in _marked_safe_globals):
            _marked_safe_globals.append(e)


def _remove_safe_globals(safe_globals: Iterable[SafeGlobal]) -> None:
    for e in safe_globals:
        for i, m in enumerate(_marked_safe_globals):
            if m is e or (isinstance(e, tuple) and isinstance(m, tuple) and e[0] is m[0] and e[1] == m[1]):
                del _marked_safe_globals[i]
                break


def get_safe_globals() -> List[SafeGlobal]:
    """Returns the list of user-added globals that are safe for ``weights_only`` load."""
    return list(_marked_safe_globals)


def clear_safe_globals() -> None:
    """Clears the list of globals that are safe for ``weights_only`` load."""
    _marked_safe_globals.clear()


class safe_globals:
    """Context-manager that adds certain globals as safe for ``weights_only`` load.

    Args:
        safe_globals (List[Union[Callable, Tuple[Callable, str]]]): list of globals for
            weights_only load; they are removed again when the block exits.

    Example:
        >>> with tinytorch.serialization.safe_globals([MyConfig]):
        ...     ckpt = tinytorch.load("checkpoint.pt")
        >>> assert tinytorch.serialization.get_safe_globals() == []
    """

    def __init__(self, safe_globals: List[SafeGlobal]) -> None:
        self.safe_globals = _check(safe_globals, "safe_globals")
        self._added: List[SafeGlobal] = []

    def __enter__(self) -> "safe_globals":
        # only what was not already allowed is removed on exit, so nesting keeps outer entries
        before = list(_marked_safe_globals)
        add_safe_globals(self.safe_globals)
        self._added = [e for e in _marked_safe_globals if not any(e is b for b in before)]
        return self

    def __exit__(self, *exc: Any) -> None:
        _remove_safe_globals(self._added)
        self._added = []


def user_allowed_globals() -> Dict[str, Any]:
    """``{"module.name": object}`` of the globals the user has allowed (read once per load)."""
    return dict(_full_name(e) for e in _marked_safe_globals)


__all__ = ["add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals"]
