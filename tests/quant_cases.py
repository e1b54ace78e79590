"""Packed GGML weights for the quantized-kernel tests (CPU and CUDA) and their float64 reference:
gguf's numpy quantizer where it has one (Q4_0, Q4_1, Q8_0), else random blocks with finite fp16
scales (Q4_K, Q6_K: every bit pattern of the other fields is a valid block). The reference is
always gguf.quants.dequantize, so the block layouts are checked against gguf's."""
from __future__ import annotations

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")
from gguf import GGMLQuantizationType as Q  # noqa: E402
from gguf import quants  # noqa: E402

QTYPES = [Q.Q4_0, Q.Q4_1, Q.Q8_0, Q.Q4_K, Q.Q6_K]
# Byte offsets of the fp16 fields of a block, for the formats built from random bytes.
_HALF_FIELDS = {Q.Q4_K: (0, 2), Q.Q6_K: (208,)}


def block_size(qtype) -> int:
    return gguf.GGML_QUANT_SIZES[qtype][0]


def packed_weight(qtype, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(data (n, bytes per row) uint8, float64 dequantized weight (n, k))."""
    rng = np.random.default_rng(seed)
    if qtype in _HALF_FIELDS:
        values, nbytes = gguf.GGML_QUANT_SIZES[qtype]
        raw = rng.integers(0, 256, (n, k // values, nbytes), dtype=np.uint8)
        for off in _HALF_FIELDS[qtype]:
            half = (rng.uniform(0.002, 0.02, (n, k // values)) * rng.choice([-1, 1], (n, k // values)))
            raw[:, :, off:off + 2] = half.astype(np.float16).view(np.uint8).reshape(n, k // values, 2)
        data = raw.reshape(n, -1)
    else:
        data = quants.quantize(rng.standard_normal((n, k)).astype(np.float32), qtype)
    return data, quants.dequantize(data, qtype).astype(np.float64)
