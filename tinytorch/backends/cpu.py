"""``tinytorch.backends.cpu``: ``get_cpu_capability()`` (as torch's) and
``quantized.int8_activations``, the switch of the CPU matvec on packed llama.cpp weights
(``nn.QuantizedLinear``, GGUF models): off (the default), x stays float32 and the result is the
float32 matmul on the dequantized weight (transformers' numbers); on, Q4_0/Q4_1/Q8_0 matvecs
quantize x per 32-value block to int8 and take integer dot products, as llama.cpp does (faster;
each output moves by at most sum |w| * max|x_block| / 254). CPUs without AVX2 and the other
formats keep the float kernels.

``fused_decode`` (default True): a language model's CPU decode step of one token runs all its
layers in one call (``tinytorch.models.fused_decode``) instead of dispatching each op from Python;
False runs the eager layers."""
from __future__ import annotations

import os

from tinytorch import _C


class _Quantized:
    @property
    def int8_activations(self) -> bool:
        return _C.quant_int8_activations()

    @int8_activations.setter
    def int8_activations(self, value: bool) -> None:
        _C.set_quant_int8_activations(bool(value))


quantized = _Quantized()

fused_decode: bool = True


def get_cpu_capability() -> str:
    """The best vector instruction set tinytorch's CPU kernels use here: ``"AVX512"``, ``"AVX2"`` or
    ``"DEFAULT"`` (PyTorch's names)."""
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        return "DEFAULT"
    best = "AVX512" if {"avx512f", "avx512bw", "avx512vl"} <= flags else \
        "AVX2" if {"avx2", "fma"} <= flags else "DEFAULT"
    # TINYTORCH_CPU_CAPABILITY=default|avx2|avx512 caps the hand-vectorized kernels (cpu/simd_level.h)
    order = ["DEFAULT", "AVX2", "AVX512"]
    cap = os.environ.get("TINYTORCH_CPU_CAPABILITY", "").upper()
    return order[min(order.index(best), order.index(cap))] if cap in order else best
