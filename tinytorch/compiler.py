"""``tinytorch.compile`` and ``tinytorch.compiler``: pass-throughs. PyTorch's compiler captures
the program into a graph and generates fused kernels; tinytorch runs eagerly and has no graph
capture, so ``compile`` returns the module or function unchanged (same values, eager speed). It
takes PyTorch's arguments and ignores them, so programs that compile their model run as is."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Optional


def compile(model: Optional[Callable] = None, *, fullgraph: bool = False, dynamic: Optional[bool] = None,  # noqa: A001
            backend: Any = None, mode: Optional[str] = None, options: Optional[dict] = None,
            name: Optional[str] = None, disable: bool = False, **kwargs: Any) -> Callable:
    """options=None, disable=False) -> model

    Returns ``model`` unchanged (tinytorch has no compiler; see the module docstring). Used as
    ``@compile`` or ``@compile(mode=...)`` it decorates to the same function.

    Args:
        model (Callable): module/function to optimize. Default: ``None``

    Keyword args:
        fullgraph (bool): accepted for PyTorch compatibility (tinytorch runs eagerly). Default:
            ``False``
        dynamic (bool or None): accepted for PyTorch compatibility (tinytorch runs eagerly). Default:
            ``None``
        backend (str or Callable): accepted for PyTorch compatibility (tinytorch runs eagerly). Default:
            ``None``
        mode (str): accepted for PyTorch compatibility (tinytorch runs eagerly). Default: ``None``
        options (dict, optional): accepted for PyTorch compatibility (tinytorch runs eagerly). Default:
            ``None``
        name (str, optional): accepted for PyTorch compatibility (tinytorch runs eagerly). Default:
            ``None``
        disable (bool): turn compile() into a no-op for testing. Default: ``False``"""
    if model is None:
        return lambda fn: fn
    if not callable(model):
        raise RuntimeError(f"compile(): model must be callable, got {type(model).__name__}")
    return model


def disable(fn: Optional[Callable] = None, recursive: bool = True, *, reason: Optional[str] = None) -> Callable:
    """Returns ``fn`` unchanged (nothing is compiled to begin with)."""
    if fn is None:
        return lambda f: f
    return fn


def is_compiling() -> bool:
    """False: tinytorch never traces a program."""
    return False


is_dynamo_compiling = is_compiling


def is_exporting() -> bool:
    """False: tinytorch never exports a program."""
    return False


def reset() -> None:
    """Nothing to reset: no compiled code is cached."""


def allow_in_graph(fn: Callable) -> Callable:
    """Returns ``fn`` unchanged."""
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    """Returns ``fn`` unchanged."""
    return fn


def cudagraph_mark_step_begin() -> None:
    """Nothing to mark: tinytorch records no CUDA graphs."""


def list_backends(exclude_tags: Any = None) -> list:
    """No compiler backends: an empty list."""
    return []


@contextlib.contextmanager
def set_stance(stance: str = "default", *, skip_guard_eval_unsafe: bool = False, force_backend: Any = None) -> Iterator[None]:
    """Accepted and ignored: everything runs eagerly."""
    yield


__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "reset",
           "allow_in_graph", "assume_constant_result", "cudagraph_mark_step_begin", "list_backends", "set_stance"]
