"""The process-wide switches PyTorch keeps at the top level over its backends: deterministic
algorithms (``backends.cudnn.deterministic``) and the float32 matmul precision
(``backends.cuda.matmul.allow_tf32``)."""
from __future__ import annotations

from tinytorch.backends import cuda, cudnn

_DETERMINISTIC = {"on": False, "warn_only": False}


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Asks for deterministic algorithms. tinytorch's own kernels are deterministic (the CUDA
    scatter/index_put/embedding backwards sort keys first); the switch also restricts cuDNN's
    backward passes to deterministic engines (``backends.cudnn.deterministic``).

    Args:
        mode (bool): if True, makes potentially nondeterministic operations switch to a deterministic
            algorithm or throw a runtime error. If False, allows nondeterministic operations.

    Keyword args:
        warn_only (bool, optional): if True, operations that do not have a deterministic implementation
            will throw a warning instead of an error. Default: ``False``"""
    _DETERMINISTIC["on"], _DETERMINISTIC["warn_only"] = bool(mode), bool(warn_only)
    cudnn.deterministic = bool(mode)


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in effect."""
    return _DETERMINISTIC["on"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Returns True if the global deterministic flag is set to warn only."""
    return _DETERMINISTIC["warn_only"]


def set_float32_matmul_precision(precision: str) -> None:
    """'highest': float32 GEMMs in full float32; 'high'/'medium': TF32 allowed on the GPU
    (``backends.cuda.matmul.allow_tf32``), as PyTorch.

    Args:
        precision (str): can be set to ``'highest'`` (default), ``'high'``, or ``'medium'``."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision value: {precision}; expected one of 'highest', 'high', 'medium'")
    cuda.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision() -> str:
    """Returns the current value of float32 matrix multiplication precision."""
    return "high" if cuda.matmul.allow_tf32 else "highest"


__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
           "get_float32_matmul_precision"]
