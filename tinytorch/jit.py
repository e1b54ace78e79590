"""``tinytorch.jit``: TorchScript's entry points as pass-throughs, where that is honest.

``script(obj)`` and ``trace(func, example_inputs)`` return ``obj``/``func`` unchanged: tinytorch
runs eagerly, and an eager Python module computes what its scripted version computes (``trace``
would also freeze data-dependent control flow to the example's path; here every call follows its
own inputs). The decorators (``ignore``, ``unused``, ``export``, ``script_if_tracing``) return
their function, ``annotate`` its value, ``is_scripting``/``is_tracing`` are False. ``save``,
``load`` and ``freeze`` need TorchScript's serialized graph, which tinytorch does not have: they
raise NotImplementedError (save weights with ``tinytorch.save(model.state_dict(), ...)``)."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tinytorch.compiler import is_compiling  # noqa: F401

Final = Any   # torch.jit.Final[T]: a type annotation only


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """Returns ``obj`` (a Module, function or class) unchanged: it runs eagerly."""
    return obj


def trace(func: Callable, example_inputs: Any = None, *args: Any, **kwargs: Any) -> Callable:
    """Returns ``func`` unchanged: it runs eagerly on each call's own inputs."""
    if not callable(func):
        raise RuntimeError(f"trace(): expected a Module or function, got {type(func).__name__}")
    return func


def trace_module(mod: Callable, inputs: Any = None, *args: Any, **kwargs: Any) -> Callable:
    """Returns ``mod`` unchanged, as ``trace``."""
    return mod


def _identity_decorator(fn: Optional[Callable] = None, **kwargs: Any) -> Any:
    if fn is None:
        return lambda f: f
    return fn


ignore = _identity_decorator
unused = _identity_decorator
export = _identity_decorator
script_if_tracing = _identity_decorator
interface = _identity_decorator
script_method = _identity_decorator


def annotate(the_type: Any, the_value: Any) -> Any:
    """Returns ``the_value`` (a type hint for the TorchScript compiler only)."""
    return the_value


def is_scripting() -> bool:
    """False: nothing is ever scripted."""
    return False


def is_tracing() -> bool:
    """False: nothing is ever traced."""
    return False


_NO_TORCHSCRIPT = ("tinytorch.jit.{} is not implemented: tinytorch has no TorchScript graph to "
                   "serialize or optimize; save weights with tinytorch.save(model.state_dict(), path)")


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(_NO_TORCHSCRIPT.format("save"))


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> None:
    """Raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(_NO_TORCHSCRIPT.format("load"))


def freeze(mod: Any, preserved_attrs: Any = None, optimize_numerics: bool = True) -> None:
    """Raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(_NO_TORCHSCRIPT.format("freeze"))


__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "script_if_tracing", "interface",
           "annotate", "is_scripting", "is_tracing", "save", "load", "freeze", "Final"]
