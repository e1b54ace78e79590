"""``tinytorch.autograd``: backward, grad, Function, gradcheck and grad-mode switches."""
from __future__ import annotations

from tinytorch._autograd import Node, is_grad_enabled, run_backward
from tinytorch.autograd.function import Function, FunctionCtx
from tinytorch.autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from tinytorch.autograd.gradcheck import gradcheck

__all__ = ["backward", "grad", "Function", "FunctionCtx", "gradcheck", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled", "Node"]


def _seq(x):
    if x is None:
        return None
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _root_grads(tensors, grad_tensors, create_graph):
    import tinytorch
    grads = []
    for i, t in enumerate(tensors):
        g = grad_tensors[i] if grad_tensors is not None and i < len(grad_tensors) else None
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {t.dtype}")
            g = tinytorch._tensor._wrap(tinytorch._C.full(list(t._impl.shape), 1.0, t._impl.dtype_code, t._impl.device))
        else:
            if not isinstance(g, tinytorch.Tensor):
                g = tinytorch.tensor(g, dtype=t.dtype, device=t.device)
            if tuple(g.shape) != tuple(t.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {tuple(g.shape)} and "
                                   f"output[{i}] has a shape of {tuple(t.shape)}.")
            if not create_graph:
                g = g.detach()
        grads.append(g)
    return tuple(grads)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
    """Computes the sum of gradients of given tensors w.r.t. graph leaves."""
    tensors = _seq(tensors)
    grad_tensors = _seq(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(tensors, grad_tensors, create_graph)
    run_backward(tensors, roots, bool(retain_graph), bool(create_graph), _seq(inputs), True, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         allow_unused: bool = False, materialize_grads: bool = False):
    """Computes and returns the sum of gradients of outputs with respect to the inputs."""
    outputs = _seq(outputs)
    inputs = _seq(inputs)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_grads(outputs, _seq(grad_outputs), create_graph)
    result = run_backward(outputs, roots, bool(retain_graph), bool(create_graph), inputs, False,
                          allow_unused or materialize_grads)
    if materialize_grads:
        import tinytorch
        result = tuple(r if r is not None else tinytorch.zeros_like(x) for r, x in zip(result, inputs))
    return result
