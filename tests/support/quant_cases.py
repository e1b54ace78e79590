"""Packed GGML weights for the quantized-kernel tests (CPU and CUDA) and their float64 reference.

Weights are random blocks with small finite fp16 scale fields (every bit pattern of the other
fields is a valid block). The reference is gguf's numpy ``gguf.quants.dequantize`` (so the block
layouts are checked against gguf's); where gguf is not installed (the GPU machine), the tinytorch
CPU dequantizer, which tests/ops/quant/test_quant.py checks against gguf, stands in for it."""
from __future__ import annotations

from enum import IntEnum

import numpy as np

import tinytorch as tt

try:
    from gguf import quants as gguf_quants
except ImportError:  # optional dependency (pip install '.[llm]')
    gguf_quants = None


class Q(IntEnum):
    """GGML quantization codes (gguf.GGMLQuantizationType's values)."""
    Q4_0 = 2
    Q4_1 = 3
    Q5_0 = 6  # no kernel: the unsupported-type error
    Q8_0 = 8
    Q4_K = 12
    Q6_K = 14


# values per block, bytes per block, byte offsets of the fp16 fields
FORMATS = {Q.Q4_0: (32, 18, (0,)), Q.Q4_1: (32, 20, (0, 2)), Q.Q8_0: (32, 34, (0,)),
           Q.Q4_K: (256, 144, (0, 2)), Q.Q6_K: (256, 210, (208,))}
QTYPES = list(FORMATS)


def block_size(qtype) -> int:
    return FORMATS[qtype][0]


def packed_weight(qtype, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(data (n, bytes per row) uint8, float64 dequantized weight (n, k))."""
    rng = np.random.default_rng(seed)
    values, nbytes, halves = FORMATS[qtype]
    nb = k // values
    raw = rng.integers(0, 256, (n, nb, nbytes), dtype=np.uint8)
    for off in halves:
        scale = rng.uniform(0.002, 0.02, (n, nb)) * rng.choice([-1.0, 1.0], (n, nb))
        raw[:, :, off:off + 2] = scale.astype(np.float16).view(np.uint8).reshape(n, nb, 2)
    data = raw.reshape(n, nb * nbytes)
    if gguf_quants is not None:
        ref = gguf_quants.dequantize(data, int(qtype)).reshape(n, k)
    else:
        ref = tt.nn.QuantizedLinear(k, n, int(qtype), data).dequantize(tt.float64).numpy()
    return data, ref.astype(np.float64)
