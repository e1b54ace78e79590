"""Input checks shared by layers: errors name the layer, what it expected and what it got. The
exception types are PyTorch's: a wrong input rank or size is a RuntimeError (Linear, Conv,
pooling), except where PyTorch raises ValueError for the rank (BatchNorm, InstanceNorm:
``rank_error=ValueError``)."""
from __future__ import annotations


def check_input(layer, x, ranks: tuple[int, ...], dim: int | None = None, size: int | None = None,
                what: str = "channels", rank_error: type = RuntimeError) -> None:
    name = type(layer).__name__
    shape = list(x.shape)
    if x.dim() not in ranks:
        exp = " or ".join(f"{r}D" for r in ranks)
        raise rank_error(f"{name}: expected {exp} input, got {x.dim()}D input of shape {shape}")
    if dim is not None and size is not None:
        d = dim if dim >= 0 else x.dim() + dim
        if shape[d] != size:
            raise RuntimeError(f"{name}: expected input with {size} {what} (dim {d}), got input of shape {shape}")
