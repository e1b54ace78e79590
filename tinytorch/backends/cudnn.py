"""``tinytorch.backends.cudnn``: PyTorch's convolution switches.

Where the build found cuDNN (``is_available()``), conv2d on the GPU goes through it; otherwise it
is im2col + cuBLAS. Either way the switches keep PyTorch's meaning:

* ``allow_tf32`` (default True, as PyTorch): float32 convolutions on the GPU may use TF32 tensor
  cores (~10 mantissa bits). Matmuls follow ``backends.cuda.matmul.allow_tf32`` instead.
* ``deterministic``: accepted; tinytorch picks deterministic convolution algorithms always.
* ``benchmark``: accepted, no effect (algorithms come from cuDNN's heuristics, no search).
* ``enabled`` (default True): False sends GPU convolutions to im2col + cuBLAS even where cuDNN
  is built in.
"""
from __future__ import annotations

import sys
import types


class _CudnnModule(types.ModuleType):
    _allow_tf32 = True
    deterministic = False
    benchmark = False
    _enabled = True

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

    @property
    def enabled(self) -> bool:
        return self._enabled

    @enabled.setter
    def enabled(self, value: bool) -> None:
        from tinytorch import _cuda_backend
        type(self)._enabled = bool(value)
        backend = _cuda_backend()
        if backend is not None:
            backend.set_cudnn_enabled(bool(value))

    def is_available(self) -> bool:
        """Whether conv2d on the GPU goes through cuDNN (this build found it)."""
        return self.version() is not None

    def version(self):
        """cuDNN's version number (e.g. 92801), or None without it."""
        from tinytorch import _cuda_backend
        backend = _cuda_backend()
        v = backend.cudnn_version() if backend is not None else 0
        return v or None


sys.modules[__name__].__class__ = _CudnnModule
