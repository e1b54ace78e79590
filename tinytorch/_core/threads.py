"""Intra-op parallelism on CPU: ``tinytorch.set_num_threads`` / ``get_num_threads``."""
from __future__ import annotations

from tinytorch import _C


def set_num_threads(n: int) -> None:
    """Sets the number of threads used for intra-op parallelism on CPU (and by BLAS).

    Args:
        n (int): the number of threads used for intraop parallelism on CPU."""
    _C.set_num_threads(n)


def get_num_threads() -> int:
    """Returns the number of threads used for parallelizing CPU operations."""
    return _C.get_num_threads()
