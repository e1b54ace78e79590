"""``tinytorch.backends.cudnn``: PyTorch's convolution switches.

Where the build found cuDNN (``is_available()``), conv2d on the GPU goes through it; otherwise it
is im2col + cuBLAS. Either way the switches keep PyTorch's meaning:

* ``allow_tf32`` (default True, as PyTorch): float32 convolutions on the GPU may use TF32 tensor
  cores (~10 mantissa bits). Matmuls follow ``backends.cuda.matmul.allow_tf32`` instead.
* ``deterministic`` (default False): True restricts cuDNN's backward passes to deterministic
  algorithms (the default heuristics may pick ones that accumulate with atomics). im2col + cuBLAS
  is deterministic either way.
* ``benchmark`` (default False): True times cuDNN's candidate engines (the heuristics' and the
  fallback list's, filtered as above) the first time each convolution shape runs and keeps the
  fastest; False takes the first candidate in the heuristics' order.
* ``enabled`` (default True): False sends GPU convolutions to im2col + cuBLAS even where cuDNN
  is built in.
"""
from __future__ import annotations

import sys
import types

from tinytorch._core.cuda_loader import cuda_backend as _cuda_backend


def _switch(name: str, default: bool, setter: str) -> property:
    """A bool module attribute mirrored into the CUDA library by ``_cuda.<setter>``."""
    attr = "_" + name

    def get(self) -> bool:
        return getattr(type(self), attr, default)

    def set_(self, value: bool) -> None:
        setattr(type(self), attr, bool(value))
        backend = _cuda_backend()
        if backend is not None:
            getattr(backend, setter)(bool(value))
    return property(get, set_, doc=f"tinytorch.backends.cudnn.{name} (default {default})")


class _CudnnModule(types.ModuleType):
    allow_tf32 = _switch("allow_tf32", True, "set_conv_allow_tf32")
    deterministic = _switch("deterministic", False, "set_cudnn_deterministic")
    enabled = _switch("enabled", True, "set_cudnn_enabled")
    benchmark = _switch("benchmark", False, "set_cudnn_benchmark")

    def is_available(self) -> bool:
        """Whether conv2d on the GPU goes through cuDNN (this build found it)."""
        return self.version() is not None

    def version(self):
        """cuDNN's version number (e.g. 92801), or None without it."""
        backend = _cuda_backend()
        v = backend.cudnn_version() if backend is not None else 0
        return v or None


sys.modules[__name__].__class__ = _CudnnModule
