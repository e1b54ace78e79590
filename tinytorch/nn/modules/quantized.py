"""QuantizedLinear: a linear layer whose weight stays packed in llama.cpp (GGUF) blocks."""
from __future__ import annotations

from typing import Optional, Union

import numpy as np

from tinytorch import _C
from tinytorch._core.graph import is_grad_enabled
from tinytorch._tensor.creation import from_numpy
from tinytorch._core.dtype import float32, to_dtype, uint8
from tinytorch._core.tensor_base import TensorBase as Tensor, _wrap
from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module
from tinytorch.nn.common_types import _device_t

# GGML quantization types (gguf.GGMLQuantizationType values) with kernels, by name.
SUPPORTED_QTYPES: dict[int, str] = {2: "Q4_0", 3: "Q4_1", 8: "Q8_0", 12: "Q4_K", 14: "Q6_K"}


def _qtype_code(qtype) -> int:
    code = int(qtype)  # a gguf.GGMLQuantizationType is an IntEnum
    if code not in SUPPORTED_QTYPES:
        names = ", ".join(f"{c} ({n})" for c, n in SUPPORTED_QTYPES.items())
        name = getattr(qtype, "name", str(code))
        raise ValueError(f"QuantizedLinear: unsupported qtype {name} (code {code}); supported GGML types: {names}. "
                         "F16/BF16 weights need no quantized layer: use nn.Linear in that dtype")
    return code


def _packed_bytes(data, out_features: int, row_bytes: int) -> Tensor:
    """``data`` (numpy uint8 (out_features, row_bytes) or flat, bytes-like, or a uint8 Tensor) as a
    (out_features, row_bytes) uint8 Tensor; writeable numpy memory is borrowed, not copied."""
    if isinstance(data, Tensor):
        if data.dtype != uint8:
            raise TypeError(f"QuantizedLinear: packed data must be uint8, got {data.dtype}")
        t = data.detach()
    else:
        arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) else data
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"QuantizedLinear: data must be a numpy uint8 array, bytes or a uint8 Tensor, "
                            f"got {type(data).__name__}")
        if arr.dtype != np.uint8:
            raise TypeError(f"QuantizedLinear: packed data must be uint8, got numpy {arr.dtype}")
        arr = np.ascontiguousarray(arr)
        # a tensor may write its storage, so read-only memory (bytes, a read-only GGUF memmap) is copied once
        t = from_numpy(arr if arr.flags.writeable else arr.copy())
    want = out_features * row_bytes
    if t.numel() != want or (t.dim() != 1 and tuple(t.shape) != (out_features, row_bytes)):
        raise ValueError(f"QuantizedLinear: packed data of shape {tuple(t.shape)} ({t.numel()} bytes) does not "
                         f"match out_features={out_features} x {row_bytes} bytes per row = {want} bytes")
    return t.contiguous().reshape(out_features, row_bytes)


class QuantizedLinear(Module):
    r"""y = x W^T + b with W (out_features, in_features) kept packed in GGML blocks (Q4_0, Q4_1,
    Q8_0, Q4_K, Q6_K) and dequantized block by block inside the matvec/GEMM kernels.

    Args:
        in_features: size of each input sample (a multiple of the qtype's block size: 32, or
            256 for the K-quants).
        out_features: size of each output sample.
        qtype: a ``gguf.GGMLQuantizationType`` (or its int code), one of ``SUPPORTED_QTYPES``.
        data: the packed bytes of W, rows contiguous: numpy uint8 of shape
            (out_features, bytes_per_row) or flat, bytes, or a uint8 Tensor.
        bias: optional (out_features) bias (a Tensor or numpy array); cast to the input's dtype.
        device: where the packed weight lives.

    Inference layer: the packed weight is a buffer, never a parameter, so it has no gradient.
    Inputs may require grad: then the forward runs as ``F.linear(x, self.dequantize(x.dtype), bias)``
    (dequantize, then matmul) so autograd records it and gradients reach ``x`` (and a bias that
    requires grad). Inputs: float32, float16 or bfloat16 (..., in_features); output in the
    input's dtype, accumulated in float32.
    """

    SUPPORTED_QTYPES = SUPPORTED_QTYPES

    def __init__(self, in_features: int, out_features: int, qtype: int,
                 data: Union[np.ndarray, bytes, Tensor], bias: Optional[Union[Tensor, np.ndarray]] = None,
                 device: _device_t = None) -> None:
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.qtype = _qtype_code(qtype)
        row_bytes = _C.quant_row_bytes(self.qtype, self.in_features)
        qweight = _packed_bytes(data, self.out_features, row_bytes)
        if bias is not None:
            bias = bias if isinstance(bias, Tensor) else from_numpy(np.ascontiguousarray(bias, dtype=np.float32))
            if tuple(bias.shape) != (self.out_features,):
                raise ValueError(f"QuantizedLinear: bias of shape {tuple(bias.shape)} should have shape "
                                 f"({self.out_features},)")
            bias = bias.detach()
        if device is not None:
            qweight = qweight.to(device)
            bias = bias.to(device) if bias is not None else None
        self.register_buffer("qweight", qweight)
        self.register_buffer("bias", bias)

    @property
    def qtype_name(self) -> str:
        return SUPPORTED_QTYPES[self.qtype]

    @property
    def weight_nbytes(self) -> int:
        """Bytes held by the packed weight."""
        return self.qweight.numel()

    def dequantize(self, dtype=float32) -> Tensor:
        """The weight as a dense (out_features, in_features) tensor of ``dtype`` on the layer's device."""
        return _wrap(_C.quant_dequantize(self.qweight._impl, self.qtype, self.out_features, self.in_features,
                                         to_dtype(dtype).code))

    def forward(self, x: Tensor) -> Tensor:
        bias = self.bias
        if bias is not None and bias.dtype != x.dtype and x.dtype.is_floating_point:
            bias = bias.to(x.dtype)
        if is_grad_enabled() and (x.requires_grad or (bias is not None and bias.requires_grad)):
            return F.linear(x, self.dequantize(x.dtype), bias)
        return _wrap(_C.quant_linear(x._impl, self.qweight._impl, self.qtype, self.out_features, self.in_features,
                                     None if bias is None else bias._impl))

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, qtype={self.qtype_name}, "
                f"bias={self.bias is not None}")
