"""``autograd.gradcheck``: analytical vs central-difference numerical Jacobians in float64."""
from __future__ import annotations

import numpy as np

from tinytorch._tensor.creation import tensor
from tinytorch._core.engine import grad
from tinytorch.autograd.grad_mode import no_grad
from tinytorch._tensor.tensor import Tensor


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Checks gradients of ``func`` at ``inputs`` (float64 tensors requiring grad) against
    finite differences, one output element and one input element at a time."""
    inputs = _as_tuple(inputs)
    diff_inputs = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    for x in diff_inputs:
        if x.dtype.name != "float64":
            raise ValueError(f"gradcheck expects float64 inputs, got {x.dtype}")
    raw = _as_tuple(func(*inputs))
    # (position in func's result, output) for the differentiable outputs
    outputs = [(p, o) for p, o in enumerate(raw) if isinstance(o, Tensor) and o.requires_grad]
    # every analytical Jacobian first: the numerical pass perturbs the inputs in place, which
    # bumps their version counters and would invalidate what the graph saved
    analytics = []
    for oi, (_, out) in enumerate(outputs):
        n_out = out.numel()
        analytic = [np.zeros((n_out, x.numel())) for x in diff_inputs]
        for j in range(n_out):
            g = np.zeros(n_out)
            g[j] = 1.0
            grads = grad(out, diff_inputs, tensor(g.reshape(out.shape), dtype=out.dtype),
                         retain_graph=True, allow_unused=True)
            for k, gk in enumerate(grads):
                if gk is not None:
                    analytic[k][j] = gk.detach().numpy().reshape(-1)
        analytics.append(analytic)
    for oi, ((pos, out), analytic) in enumerate(zip(outputs, analytics)):
        n_out = out.numel()
        for k, x in enumerate(diff_inputs):
            numeric = np.zeros((n_out, x.numel()))
            with no_grad():
                flat_index = np.ndindex(*x.shape) if x.dim() else [()]
                for i, idx in enumerate(flat_index):
                    orig = _get(x, idx)
                    _set(x, idx, orig + eps)
                    plus = _as_tuple(func(*inputs))[pos].detach().numpy().astype(np.float64).reshape(-1).copy()
                    _set(x, idx, orig - eps)
                    minus = _as_tuple(func(*inputs))[pos].detach().numpy().astype(np.float64).reshape(-1).copy()
                    _set(x, idx, orig)
                    numeric[:, i] = (plus - minus) / (2 * eps)
            if not np.allclose(analytic[k], numeric, atol=atol, rtol=rtol):
                if raise_exception:
                    err = np.abs(analytic[k] - numeric).max()
                    raise RuntimeError(f"Jacobian mismatch for output {oi} with respect to input {k}: max abs "
                                       f"error {err:.3e}\nnumerical:{numeric}\nanalytical:{analytic[k]}")
                return False
    return True


def _element(x, idx):
    a = x.detach()
    for i in idx:
        a = a.select(0, i)
    return a


def _get(x, idx) -> float:
    return float(_element(x, idx).item())


def _set(x, idx, value: float) -> None:
    """Writes one element of a (possibly non-contiguous) tensor in place, without autograd."""
    _element(x, idx)._impl.copy_(tensor(value, dtype=x.dtype)._impl)
