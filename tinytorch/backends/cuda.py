"""``tinytorch.backends.cuda``: ``matmul.allow_tf32`` lets float32 GEMMs use TF32 tensor cores
(faster, ~10 mantissa bits; off by default, as in PyTorch); the scaled-dot-product-attention
backend switches (``sdp_kernel``, ``enable_flash_sdp``, ``flash_sdp_enabled``, ...) read and set
the selection of ``tinytorch.nn.attention`` (see there: every backend computes the same
function with tinytorch's one SDPA implementation). ``fused_decode`` (default False, opt-in: its
kernels have not yet been run on a GPU, see docs/llm.md): True runs a language model's CUDA decode
step of one token as five fused kernels per layer (``tinytorch.models.fused_decode``), eagerly and
in ``generate(cuda_graph=True)``'s captured step; False runs the eager layers."""
from __future__ import annotations

import contextlib
import warnings
from typing import Iterator

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

fused_decode: bool = False


def is_built() -> bool:
    return _cuda_backend() is not None


def _attention():   # nn.attention holds the selection; loaded on first use (nn is heavy to import)
    from tinytorch.nn import attention
    return attention


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
               enable_cudnn: bool = True) -> Iterator[None]:
    """Deprecated (as in PyTorch): use ``tinytorch.nn.attention.sdpa_kernel``. Context manager
    that enables the chosen scaled-dot-product-attention backends for its block (the previous
    selection is restored at its end)."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will "
                  "be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=3)
    attention = _attention()
    B = attention.SDPBackend
    chosen = [b for b, on in ((B.FLASH_ATTENTION, enable_flash), (B.EFFICIENT_ATTENTION, enable_mem_efficient),
                              (B.MATH, enable_math), (B.CUDNN_ATTENTION, enable_cudnn)) if on]
    with attention.sdpa_kernel(chosen):
        yield


def _enabled(name: str) -> bool:
    attention = _attention()
    return attention.SDPBackend[name] in attention.enabled_backends()


def _enable(name: str, enabled: bool) -> None:
    # nn.attention's selection is per thread, so these switches are too (PyTorch's are global)
    attention = _attention()
    backend = attention.SDPBackend[name]
    current = [b for b in attention.enabled_backends() if b != backend]
    attention._state.enabled = tuple(current + [backend]) if enabled else tuple(current)


def flash_sdp_enabled() -> bool:
    """Whether the flash scaled-dot-product-attention backend is enabled."""
    return _enabled("FLASH_ATTENTION")


def enable_flash_sdp(enabled: bool) -> None:
    """Enables or disables the flash scaled-dot-product-attention backend."""
    _enable("FLASH_ATTENTION", enabled)


def mem_efficient_sdp_enabled() -> bool:
    """Whether the memory-efficient scaled-dot-product-attention backend is enabled."""
    return _enabled("EFFICIENT_ATTENTION")


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Enables or disables the memory-efficient scaled-dot-product-attention backend."""
    _enable("EFFICIENT_ATTENTION", enabled)


def math_sdp_enabled() -> bool:
    """Whether the math scaled-dot-product-attention backend is enabled."""
    return _enabled("MATH")


def enable_math_sdp(enabled: bool) -> None:
    """Enables or disables the math scaled-dot-product-attention backend."""
    _enable("MATH", enabled)


def cudnn_sdp_enabled() -> bool:
    """Whether the cuDNN scaled-dot-product-attention backend is enabled."""
    return _enabled("CUDNN_ATTENTION")


def enable_cudnn_sdp(enabled: bool) -> None:
    """Enables or disables the cuDNN scaled-dot-product-attention backend."""
    _enable("CUDNN_ATTENTION", enabled)
