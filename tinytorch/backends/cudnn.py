"""``tinytorch.backends.cudnn``: PyTorch's convolution switches, kept for code that sets them.

tinytorch has no cuDNN (convolutions are im2col + cuBLAS), but the switches keep PyTorch's meaning:

* ``allow_tf32`` (default True, as PyTorch): float32 convolutions on the GPU may use TF32 tensor
  cores (~10 mantissa bits). Matmuls follow ``backends.cuda.matmul.allow_tf32`` instead.
* ``deterministic``: accepted; tinytorch's convolution kernels are always deterministic.
* ``benchmark``: accepted, no effect (there is no algorithm search).
* ``enabled``: accepted, no effect.
"""
from __future__ import annotations

import sys
import types


class _CudnnModule(types.ModuleType):
    _allow_tf32 = True
    deterministic = False
    benchmark = False
    enabled = True

    @property
    def allow_tf32(self) -> bool:
        return self._allow_tf32

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        from tinytorch import _cuda_backend
        type(self)._allow_tf32 = bool(value)
        backend = _cuda_backend()
        if backend is not None:
            backend.set_conv_allow_tf32(bool(value))

    def is_available(self) -> bool:
        """False: tinytorch does not use cuDNN."""
        return False

    def version(self):
        return None


sys.modules[__name__].__class__ = _CudnnModule
