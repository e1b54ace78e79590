"""parameters_to_vector / vector_to_parameters."""
from __future__ import annotations

from tinytorch._ops.shape import cat
from tinytorch.autograd.grad_mode import no_grad
from tinytorch._tensor.tensor import Tensor


def parameters_to_vector(parameters) -> Tensor:
    """One 1-D tensor of all parameters, flattened and concatenated (differentiable, like PyTorch)."""
    if isinstance(parameters, Tensor):
        raise TypeError(f"expected an iterable of Tensors, but got: {type(parameters).__name__}")
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Copies consecutive slices of the 1-D ``vec`` into ``parameters`` (in place, their shapes kept)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    if isinstance(parameters, Tensor):
        raise TypeError(f"expected an iterable of Tensors, but got: {type(parameters).__name__}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if vec.dim() != 1 or vec.numel() != total:
        raise ValueError(f"vector_to_parameters: expected a 1-D vector of {total} elements, "
                         f"got shape {list(vec.shape)}")
    pointer = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.copy_(vec[pointer:pointer + n].reshape(p.shape))
            pointer += n
