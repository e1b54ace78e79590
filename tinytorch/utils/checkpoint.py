"""``tinytorch.utils.checkpoint``: activation checkpointing, as PyTorch's reentrant variant. The
forward runs without recording; backward runs it again with recording (the same random numbers)
and backpropagates through that. Memory: the inputs instead of every intermediate activation."""
from __future__ import annotations

import warnings
from typing import Any, Callable

from tinytorch._core import graph as _autograd

from tinytorch._core import engine as _engine
from tinytorch.autograd import backward as autograd_backward
from tinytorch.autograd.function import Function
from tinytorch.autograd.grad_mode import enable_grad
from tinytorch.random import get_rng_state, set_rng_state
from tinytorch._tensor.tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential"]


def _parameters_of(fn) -> list:
    """The parameters of a Module (or a Module's bound method) being checkpointed: inputs of the
    checkpoint's node, so that it exists (and runs) even when no tensor argument needs grad."""
    from tinytorch.nn import Module  # lazily: importing tinytorch.utils(.data) does not load nn
    owner = fn if isinstance(fn, Module) else getattr(fn, "__self__", None)
    if isinstance(owner, Module):
        return [p for p in owner.parameters() if p.requires_grad]
    return []


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, n_args, *args):
        ctx.run_function, ctx.n_args = run_function, n_args
        ctx.rng_state = get_rng_state() if preserve_rng_state else None
        ctx.inputs = [a.detach() if isinstance(a, Tensor) else a for a in args[:n_args]]
        ctx.requires = [isinstance(a, Tensor) and a.requires_grad for a in args[:n_args]]
        outputs = run_function(*args[:n_args])
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        if not _engine._accumulating_into_all_leaves():
            raise RuntimeError("checkpoint (reentrant) is not compatible with autograd.grad() or backward(inputs=...): "
                               "its backward accumulates into every leaf's .grad; call .backward() without inputs")
        inputs = [a.detach().requires_grad_(r) if isinstance(a, Tensor) else a
                  for a, r in zip(ctx.inputs, ctx.requires)]
        saved = get_rng_state() if ctx.rng_state is not None else None
        try:
            if saved is not None:
                set_rng_state(ctx.rng_state)
            with enable_grad():
                outputs = ctx.run_function(*inputs)
        finally:
            if saved is not None:
                set_rng_state(saved)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:
            autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        # the arguments' gradients go back through this node; parameters got theirs above
        arg_grads = tuple(a.grad if isinstance(a, Tensor) else None for a in inputs)
        return (None, None, None) + arg_grads   # (None for the parameters: Function pads)


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None, preserve_rng_state: bool = True,
               **kwargs) -> Any:
    """Checkpoints a model or part of the model: ``function(*args)`` runs without saving
    activations, and again during backward. Only the reentrant variant exists: use ``.backward()``
    (not ``autograd.grad``), and give the function's tensors as arguments or checkpoint a Module
    (its parameters are found) so that its gradients flow."""
    if use_reentrant is False:
        raise NotImplementedError("checkpoint(use_reentrant=False) needs saved-tensor hooks, which tinytorch has not; "
                                  "use use_reentrant=True")
    if kwargs:
        raise ValueError(f"checkpoint: unexpected keyword arguments {sorted(kwargs)} (pass them inside function)")
    params = _parameters_of(function)
    if _autograd.is_grad_enabled() and not params and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("checkpoint: none of the inputs have requires_grad=True; gradients will be None", stacklevel=2)
    return _Checkpoint.apply(function, preserve_rng_state, len(args), *args, *params)


def checkpoint_sequential(functions, segments: int, input: Tensor, use_reentrant: bool | None = None,
                          preserve_rng_state: bool = True) -> Any:
    """Splits a Sequential (or list of modules) into ``segments`` chunks and checkpoints each
    chunk but the last, which runs normally."""
    from tinytorch.nn import Sequential  # lazily: importing tinytorch.utils(.data) does not load nn
    functions = list(functions.children()) if isinstance(functions, Sequential) else list(functions)
    size = max(len(functions) // segments, 1)
    end = 0
    for start in range(0, len(functions) - size, size):
        end = start + size
        chunk = Sequential(*functions[start:end])
        input = checkpoint(chunk, input, use_reentrant=use_reentrant, preserve_rng_state=preserve_rng_state)
    for f in functions[end:]:
        input = f(input)
    return input
