"""``autograd.Function``: user-defined ops with a forward and a backward staticmethod."""
from __future__ import annotations

import weakref

from tinytorch._core.graph import _make_node, _set_history
from tinytorch.autograd.grad_mode import no_grad
from tinytorch._tensor.tensor import Tensor


class FunctionCtx:
    """The ``ctx`` passed to forward/backward."""

    def __init__(self) -> None:
        self.saved_tensors_: tuple = ()
        self.needs_input_grad: tuple = ()
        self._non_differentiable: set = set()
        self.materialize_grads = True

    def save_for_backward(self, *tensors) -> None:
        self.saved_tensors_ = tensors

    @property
    def saved_tensors(self) -> tuple:
        node = self._node() if getattr(self, "_node", None) is not None else None
        if node is not None:
            return node.saved_tensors
        return self.saved_tensors_

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_differentiable.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class Function:
    """Subclass with ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call ``apply``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("Function subclasses must implement forward")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("Function subclasses must implement backward")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        tensor_args = tuple(a if isinstance(a, Tensor) else None for a in args)
        ctx.needs_input_grad = tuple(a is not None and a.requires_grad for a in tensor_args)
        with no_grad():
            outputs = cls.forward(ctx, *args)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # outputs that are inputs come back as new tensors (aliases), so history attaches to them
        outs = tuple(o.detach() if isinstance(o, Tensor) and any(o is a for a in args) else o for o in outs)

        def backward(node, *grads):
            if ctx.materialize_grads:
                grads = tuple(g if g is not None else o.new_zeros(o.shape) for g, o in zip(grads, shapes))
            result = cls.backward(ctx, *grads)
            if not isinstance(result, tuple):
                result = (result,)
            if len(result) < len(args):
                result = result + (None,) * (len(args) - len(result))
            if len(result) != len(args):
                raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of gradients "
                                   f"(expected {len(args)}, got {len(result)})")
            return tuple(r if tensor_args[i] is not None and ctx.needs_input_grad[i] else None
                         for i, r in enumerate(result))

        node = _make_node(f"{cls.__name__}Backward", backward, tensor_args, len(outs))
        shapes = [o.detach() if isinstance(o, Tensor) else None for o in outs]
        if node is not None:
            # the node owns the saved tensors; ctx (referenced by the node's backward closure)
            # keeps only a weak reference to it, so the graph has no reference cycle
            ctx._node = weakref.ref(node)
            node.save(*ctx.saved_tensors_)
            ctx.saved_tensors_ = ()
            for i, o in enumerate(outs):
                if isinstance(o, Tensor) and id(o) not in ctx._non_differentiable and o.dtype.is_floating_point:
                    _set_history(o, node, i)
        return outs[0] if single else outs
