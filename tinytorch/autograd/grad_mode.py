"""Grad-mode context managers (thread-local): no_grad, enable_grad, set_grad_enabled, inference_mode."""
from __future__ import annotations

import functools

from tinytorch._core.graph import _set_grad_enabled, _set_inference_mode, is_grad_enabled, \
    is_inference_mode_enabled


class _GradModeContext:
    """Base: usable as a context manager and as a decorator."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args):
                return fn(*args, **kwargs)
        return wrapper

    _args: tuple = ()


class _SwitchGrad(_GradModeContext):
    """Base of no_grad / enable_grad / set_grad_enabled: grad mode ``_mode`` inside the block, the
    mode from before it restored on exit."""
    _mode: bool

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set_grad_enabled(self._mode)

    def __exit__(self, *exc):
        _set_grad_enabled(self._prev)
        return False


class no_grad(_SwitchGrad):
    """Context manager / decorator that disables gradient calculation."""
    _mode = False


class enable_grad(_SwitchGrad):
    """Context manager / decorator that enables gradient calculation."""
    _mode = True


class set_grad_enabled(_SwitchGrad):
    """Sets gradient calculation on or off, immediately (function) or for a with-block."""

    def __init__(self, mode: bool) -> None:
        self._args = (mode,)
        self._prev = is_grad_enabled()
        _set_grad_enabled(bool(mode))

    def __call__(self, fn):
        # used as a decorator: __init__ already switched the mode; undo that (as PyTorch), the
        # wrapper sets it for each call
        _set_grad_enabled(self._prev)
        return super().__call__(fn)

    def __enter__(self):
        pass        # __init__ switched the mode already


class inference_mode(_GradModeContext):
    """Like no_grad (tinytorch has no separate inference tensors)."""

    def __init__(self, mode: bool = True) -> None:
        self._args = (mode,)
        self._mode = mode

    def __enter__(self):
        self._prev = (is_grad_enabled(), is_inference_mode_enabled())
        if self._mode:
            _set_grad_enabled(False)
            _set_inference_mode(True)

    def __exit__(self, *exc):
        _set_grad_enabled(self._prev[0])
        _set_inference_mode(self._prev[1])
        return False
