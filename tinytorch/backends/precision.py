"""The process-wide switches PyTorch keeps at the top level over its backends: deterministic
algorithms (``backends.cudnn.deterministic``) and the float32 matmul precision
(``backends.cuda.matmul.allow_tf32``)."""
from __future__ import annotations

from tinytorch.backends import cuda, cudnn

_DETERMINISTIC = {"on": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Asks for deterministic algorithms. tinytorch's own kernels are deterministic (the CUDA
    scatter/index_put/embedding backwards sort keys first); the switch also restricts cuDNN's
    backward passes to deterministic engines (``backends.cudnn.deterministic``)."""
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
    cuda.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision() -> str:
    return "high" if cuda.matmul.allow_tf32 else "highest"


__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
           "get_float32_matmul_precision"]
