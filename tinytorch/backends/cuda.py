"""``tinytorch.backends.cuda.matmul.allow_tf32``: let float32 GEMMs use TF32 tensor cores
(faster, ~10 mantissa bits). Off by default, as in PyTorch."""
from __future__ import annotations

from tinytorch._core.cuda_loader import cuda_backend as _cuda_backend


class _Matmul:
    _allow_tf32 = False

    @property
    def allow_tf32(self) -> bool:
        return self._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        self._allow_tf32 = bool(value)
        backend = _cuda_backend()
        if backend is not None and hasattr(backend, "set_allow_tf32"):
            backend.set_allow_tf32(self._allow_tf32)


matmul = _Matmul()


def is_built() -> bool:
    return _cuda_backend() is not None
