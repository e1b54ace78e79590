"""``tinytorch.autograd``: backward, grad, Function, gradcheck and grad-mode switches."""
from __future__ import annotations

from tinytorch._core import engine as _engine
from tinytorch._core.graph import Node, is_grad_enabled  # noqa: F401
from tinytorch._tensor.creation import zeros_like
from tinytorch._core.engine import run_backward  # noqa: F401
from tinytorch.autograd.function import Function, FunctionCtx
from tinytorch.autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from tinytorch.autograd.gradcheck import gradcheck
from tinytorch.autograd.variable import Variable  # noqa: F401  (legacy)

__all__ = ["backward", "grad", "Function", "FunctionCtx", "gradcheck", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "Node", "Variable"]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
    """Computes the sum of gradients of given tensors w.r.t. graph leaves."""
    _engine.backward(tensors, grad_tensors, retain_graph, create_graph, inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         allow_unused: bool = False, materialize_grads: bool = False):
    """Computes and returns the sum of gradients of outputs with respect to the inputs."""
    result = _engine.grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                          allow_unused or materialize_grads)
    if materialize_grads:
        inputs = inputs if isinstance(inputs, (list, tuple)) else (inputs,)
        result = tuple(r if r is not None else zeros_like(x) for r, x in zip(result, inputs))
    return result
