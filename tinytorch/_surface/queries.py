"""Small top-level queries and switches of PyTorch's namespace: result_type, broadcast_shapes,
is_floating_point, is_complex, is_nonzero, is_same_size, scalar_tensor, typename, and the
determinism / float32-matmul-precision switches (mapped onto tinytorch's backend flags)."""
from __future__ import annotations

from typing import Any

from tinytorch._tensor.creation import tensor as _tensor
from tinytorch._core.dtype import get_default_dtype
from tinytorch._tensor.tensor import Tensor

__all__ = ["result_type", "broadcast_shapes", "is_floating_point", "is_complex", "is_nonzero", "is_same_size",
           "scalar_tensor", "typename", "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
           "get_float32_matmul_precision"]


def result_type(tensor1: Any, tensor2: Any):
    """The dtype an arithmetic op on the two operands gives (PyTorch's promotion: 0-d tensors and
    Python numbers rank below dimensioned tensors), read from an addition of empty stand-ins."""
    def probe(x):
        if isinstance(x, Tensor):
            return x.new_empty((0,) if x.dim() else ())
        return x
    a, b = probe(tensor1), probe(tensor2)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a, b = _tensor(a), _tensor(b)
    return (a + b).dtype


def broadcast_shapes(*shapes) -> tuple:
    """The shape the given shapes broadcast to (RuntimeError when they don't)."""
    out: list = []
    for s in shapes:
        s = (s,) if isinstance(s, int) else tuple(s)
        n = max(len(out), len(s))
        a, b = [1] * (n - len(out)) + out, [1] * (n - len(s)) + list(s)
        for x, y in zip(a, b):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape: "
                                   f"{tuple(out)} and {s}")
        out = [y if x == 1 else x for x, y in zip(a, b)]
    from tinytorch._core.size import Size
    return Size(out)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    """True for float16, bfloat16, float32 and float64 tensors."""
    return input.dtype.is_floating_point


def is_complex(input: Tensor) -> bool:  # noqa: A002
    """False: tinytorch has no complex dtypes."""
    return False


def is_nonzero(input: Tensor) -> bool:  # noqa: A002
    """Whether a one-element tensor is nonzero (RuntimeError for other sizes, as PyTorch)."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_same_size(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """Whether both tensors have the same shape."""
    return tuple(input.shape) == tuple(other.shape)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding s (of the default dtype unless given)."""
    t = _tensor(s, dtype=dtype or get_default_dtype(), device=device)
    return t.requires_grad_() if requires_grad else t


def typename(obj: Any) -> str:
    """PyTorch's type name of obj: 'torch.FloatTensor' for tensors, else module.qualname."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if not hasattr(obj, "__qualname__"):
        module = type(obj).__module__
    return f"{module}.{name}" if module not in ("", "builtins") else name


_DETERMINISTIC = {"on": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Asks for deterministic algorithms. tinytorch's own kernels are deterministic (the CUDA
    scatter/index_put/embedding backwards sort keys first); the switch also restricts cuDNN's
    backward passes to deterministic engines (``backends.cudnn.deterministic``)."""
    from tinytorch.backends import cudnn
    _DETERMINISTIC["on"], _DETERMINISTIC["warn_only"] = bool(mode), bool(warn_only)
    cudnn.deterministic = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _DETERMINISTIC["on"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _DETERMINISTIC["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """'highest': float32 GEMMs in full float32; 'high'/'medium': TF32 allowed on the GPU
    (``backends.cuda.matmul.allow_tf32``), as PyTorch."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision value: {precision}; expected one of 'highest', 'high', 'medium'")
    from tinytorch.backends import cuda
    cuda.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision() -> str:
    from tinytorch.backends import cuda
    return "high" if cuda.matmul.allow_tf32 else "highest"
