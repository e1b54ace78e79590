"""The ``__torch_function__`` guards ``nn.functional`` re-exports from ``torch.overrides``
(has_torch_function, has_torch_function_unary, has_torch_function_variadic,
handle_torch_function), and two helpers of PyTorch's functional module that code copied from it
calls: boolean_dispatch and assert_int_or_pair. The protocol itself is tinytorch/_tensor/torch_function.py."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Optional

from tinytorch._tensor import torch_function as _torch_function

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "boolean_dispatch", "assert_int_or_pair"]


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Check for __torch_function__ implementations in the elements of an iterable.

    Check for __torch_function__ implementations in the elements of an iterable (exact Tensors
    and Parameters are not dispatchable).

    Args:
        relevant_args (iterable): Iterable of arguments to check for __torch_function__ methods."""
    if getattr(_torch_function._state, "disabled", False):
        return False
    return bool(_torch_function._overloaded_types(tuple(relevant_args), {}))


def has_torch_function_unary(input: Any) -> bool:
    """Special case of `has_torch_function` for single inputs.

    Special case of ``has_torch_function`` for a single argument.

    Args:
        input (Tensor): the input tensor."""
    return has_torch_function((input,))


def has_torch_function_variadic(*args: Any) -> bool:
    """Special case of ``has_torch_function`` that skips tuple creation.

    Args:
        args: the arguments to check for __torch_function__ methods.
    """
    return has_torch_function(args)


def handle_torch_function(public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any) -> Any:
    """Implement a function with checks for ``__torch_function__`` overrides.

    Implement a function with checks for ``__torch_function__`` overrides: calls the overriding
    types' ``__torch_function__(public_api, types, args, kwargs)`` in PyTorch's order.

    Args:
        public_api (function): Function exposed by the public torch API originally called like
            ``public_api(*args, **kwargs)`` on which arguments are now being checked.
        relevant_args (iterable): Iterable of arguments to check for __torch_function__ methods."""
    types = _torch_function._overloaded_types(tuple(relevant_args), {})
    return _torch_function.call_overrides(public_api, types, args, kwargs)


def boolean_dispatch(arg_name: str, arg_index: int, default: bool, if_true: Callable, if_false: Callable,
                     module_name: Optional[str] = None, func_name: Optional[str] = None) -> Callable:
    """Dispatches to either of 2 functions based on a boolean argument.

    Dispatches to either of 2 functions based on a boolean argument (given by name or position).

    Args:
        arg_name (str): the name of the argument.
        arg_index (int): the position of the boolean argument.
        default (bool): the value of the flag when the argument is not passed.
        if_true (callable): the function called when the flag is true.
        if_false (callable): the function called when the flag is false.
        module_name (str, optional): the ``__module__`` of the returned function. Default: ``None``
        func_name (str, optional): the ``__name__`` of the returned function. Default: ``None``"""
    def fn(*args: Any, **kwargs: Any) -> Any:
        flag = kwargs[arg_name] if arg_name in kwargs else args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    docs = [f.__doc__ for f in (if_true, if_false) if f.__doc__ is not None]
    if len(docs) == 2:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = docs[0] if docs else None
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def assert_int_or_pair(arg: Any, arg_name: str, message: str) -> None:
    """Asserts that an argument is an int or a pair.

    Asserts ``arg`` is an int or a sequence of two (``message`` formatted with ``arg_name``).

    Args:
        arg (int or tuple): the value to check.
        arg_name (str): the name of the argument.
        message (str): the assertion message, formatted with ``arg_name``."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))
