"""``tinytorch._dynamo``: PyTorch's graph-capture entry points (``torch._dynamo``) as honest
pass-throughs. ``tinytorch.compile`` returns the model unchanged and tinytorch runs eagerly, so
there is nothing to capture, guard or recompile: ``disable``/``allow_in_graph`` and friends
return the function they are given, ``mark_dynamic``/``mark_static``/``reset`` do nothing, and
the settings of ``config`` are accepted and have no effect."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Optional, Union

from tinytorch._dynamo import config  # noqa: F401
from tinytorch.compiler import (  # noqa: F401  (the same pass-throughs as tinytorch.compiler)
    allow_in_graph, assume_constant_result, disable, is_compiling, list_backends, reset,
)


def mark_dynamic(t: Any, index: Union[int, list, tuple], *, min: Optional[int] = None, max: Optional[int] = None,
                 specialize_on: Any = None) -> None:
    """Nothing to mark: no graph is captured, every shape is handled as it comes."""


def maybe_mark_dynamic(t: Any, index: Union[int, list, tuple]) -> None:
    """Nothing to mark (see ``mark_dynamic``)."""


def mark_static(t: Any, index: Optional[Union[int, list, tuple]] = None) -> None:
    """Nothing to mark (see ``mark_dynamic``)."""


def mark_static_address(t: Any, guard: bool = True) -> None:
    """Nothing to mark: no CUDA graphs are recorded."""


def forbid_in_graph(fn: Callable) -> Callable:
    """Returns ``fn`` unchanged (there is no graph to keep it out of)."""
    return fn


def graph_break() -> None:
    """Nothing to break: no graph is captured."""


def reset_code_caches() -> None:
    """Nothing to reset: no compiled code is cached."""


def optimize(backend: Any = "inductor", *, nopython: bool = False, guard_export_fn: Any = None,
             guard_fail_fn: Any = None, guard_filter_fn: Any = None, disable: bool = False,
             dynamic: Optional[bool] = None, **kwargs: Any) -> Callable[[Callable], Callable]:
    """The decorator PyTorch's older API returns (``torch._dynamo.optimize("inductor")(fn)``):
    here it returns ``fn`` unchanged."""
    return _PassThrough()


def run(fn: Optional[Callable] = None) -> Any:
    """Returns ``fn`` unchanged (nothing was compiled to run without compiling)."""
    return fn if fn is not None else _PassThrough()


class _PassThrough(contextlib.ContextDecorator):
    """Decorator that returns the function unchanged; also a context manager that does nothing."""

    def __call__(self, fn: Callable) -> Callable:   # type: ignore[override]
        return fn

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> bool:
        return False


__all__ = ["config", "allow_in_graph", "assume_constant_result", "disable", "forbid_in_graph", "graph_break",
           "is_compiling", "list_backends", "mark_dynamic", "mark_static", "mark_static_address",
           "maybe_mark_dynamic", "optimize", "reset", "reset_code_caches", "run"]
