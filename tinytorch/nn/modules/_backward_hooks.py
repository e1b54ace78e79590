"""The machinery of ``Module.register_full_backward_hook`` / ``register_full_backward_pre_hook``
(PyTorch's ``torch.utils.hooks.BackwardHook``).

A module call with backward hooks passes its positional tensor inputs, and then its outputs,
through an identity node each (``BackwardHookFunctionBackward``). In backward the outputs' node
runs first: its hook sees the gradients w.r.t. the module's outputs (``grad_output``), runs the
backward pre-hooks (which may replace them) and keeps them. The inputs' node runs once the
module's own backward is done: its hook sees the gradients w.r.t. the inputs (``grad_input``),
calls the backward hooks with both, and passes on what they return instead of ``grad_input``.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence

from tinytorch._core.graph import _make_node, _set_history
from tinytorch._tensor.tensor import Tensor


def _identity_backward(node: Any, *grads: Any) -> tuple:
    return grads


def _through_identity(args: tuple) -> tuple:
    """``(new_args, node, tensor_positions)``: each tensor of ``args`` that requires grad replaced by
    an output of one identity node; ``(args, None, None)`` when none does (or grad mode is off)."""
    where = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    tensors = tuple(args[i] for i in where)
    node = _make_node("BackwardHookFunctionBackward", _identity_backward, tensors, len(tensors))
    if node is None:
        return args, None, None
    out = list(args)
    for k, i in enumerate(where):
        if tensors[k].requires_grad:
            o = tensors[k].detach()     # a new tensor on the same memory, to carry the node's history
            _set_history(o, node, k)
            out[i] = o
    if type(args) is tuple:
        return tuple(out), node, where
    return type(args)(*out), node, where  # a namedtuple output


def _pack(where: Sequence[int], values: Sequence[Any], size: int) -> tuple:
    res: List[Any] = [None] * size
    for i, v in zip(where, values):
        res[i] = v
    return tuple(res)


def _checked(out: Any, expected: int, what: str, hook: Callable) -> tuple:
    name = getattr(hook, "__qualname__", None) or repr(hook)
    if not isinstance(out, (tuple, list)):
        raise TypeError(f"backward {what}hook {name} returned {type(out).__name__}; expected None or a tuple of "
                        f"{expected} gradients")
    if len(out) != expected:
        noun = "grad_output" if what else "grad_input"
        raise RuntimeError(f"Backward {what}hook returned an invalid number of {noun}, got {len(out)}, "
                           f"but expected {expected}")
    return tuple(out)


class BackwardHook:
    """One module call's backward hooks: ``setup_input_hook(args)`` before the forward,
    ``setup_output_hook(result)`` after it."""

    def __init__(self, module: Any, user_hooks: List[Callable], user_pre_hooks: List[Callable]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: Optional[tuple] = None
        self.n_inputs = -1
        self.input_tensors_index: Optional[List[int]] = None
        self.n_outputs = -1
        self.output_tensors_index: Optional[List[int]] = None

    def setup_input_hook(self, args: tuple) -> tuple:
        new, node, where = _through_identity(args)
        self.n_inputs = len(args)
        self.input_tensors_index = where
        if node is not None:
            node.register_hook(self._input_hook)
        return new

    def setup_output_hook(self, result: Any) -> Any:
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        new, node, where = _through_identity(outs)
        self.n_outputs = len(outs)
        self.output_tensors_index = where
        if node is not None:
            node.register_hook(self._output_hook)
        return new[0] if single else new

    def _output_hook(self, grad_inputs: tuple, grad_outputs: tuple) -> Optional[tuple]:
        """Post-hook of the outputs' identity node (its grad_inputs are its grad_outputs)."""
        assert self.output_tensors_index is not None
        self.grad_outputs = _pack(self.output_tensors_index, grad_outputs, self.n_outputs)
        for hook in self.user_pre_hooks:
            r = hook(self.module, self.grad_outputs)
            if r is not None:
                self.grad_outputs = _checked(r, self.n_outputs, "pre ", hook)
        local = self.grad_outputs
        if self.input_tensors_index is None:
            # no input requires grad: there is no inputs' node, so the hooks run now, with grad_input all None
            grad_inputs_none = (None,) * self.n_inputs
            for hook in self.user_hooks:
                r = hook(self.module, grad_inputs_none, self.grad_outputs)
                if r is not None and not (isinstance(r, tuple) and all(g is None for g in r)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        if not self.user_pre_hooks:
            return None
        return tuple(local[i] for i in self.output_tensors_index)

    def _input_hook(self, grad_inputs: tuple, grad_outputs: tuple) -> Optional[tuple]:
        """Post-hook of the inputs' identity node: ``grad_inputs`` are the gradients w.r.t. the
        module's tensor inputs."""
        if self.grad_outputs is None:
            # the gradient reached the inputs without passing through the module's outputs
            # (e.g. from a tensor the forward kept); PyTorch does not call the hooks then either
            return None
        assert self.input_tensors_index is not None
        res = _pack(self.input_tensors_index, grad_inputs, self.n_inputs)
        for hook in self.user_hooks:
            r = hook(self.module, res, self.grad_outputs)
            if r is not None:
                res = _checked(r, self.n_inputs, "", hook)
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)
