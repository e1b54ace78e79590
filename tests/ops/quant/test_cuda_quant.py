"""nn.QuantizedLinear on the GPU: the CUDA matvec (input rows in groups of 8/4/2/1) and the
dequantized-tile + cuBLAS path (> 8 rows) against gguf's numpy dequantize + a float64 matmul,
for every supported GGML type and input dtype; dequantize; device errors."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import GRAD_TOL, assert_close, assert_close_dot, make, to_numpy
from support.quant_cases import QTYPES, Q, block_size, packed_weight

pytestmark = pytest.mark.cuda

DTYPES = ["float32", "float16", "bfloat16"]


def features(qtype) -> int:
    return 160 if block_size(qtype) == 32 else 512


@pytest.mark.parametrize("qtype", QTYPES, ids=lambda q: q.name)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", [1, 3, 7, 8, 17, 64])
def test_forward(qtype, dtype, m):
    n, k = 37, features(qtype)
    data, w = packed_weight(qtype, n, k, seed=m)
    bias = np.linspace(-1, 1, n).astype(np.float32)
    layer = tt.nn.QuantizedLinear(k, n, qtype, data, bias=bias, device="cuda")
    x, xr = make((m, k), dtype, seed=1)
    y = layer(x.cuda())
    assert y.device.type == "cuda" and y.dtype == x.dtype and tuple(y.shape) == (m, n)
    b = to_numpy(tt.tensor(bias).to(getattr(tt, dtype)))
    # The GEMM path on the GPU multiplies 16-bit tiles of the dequantized weight: each weight is
    # rounded to the dtype once, an error within TOL[dtype] in units of |x| @ |W|^T.
    assert_close_dot(y, xr @ w.T + b, np.abs(xr) @ np.abs(w).T + 1, dtype, what=f"{qtype.name} {dtype} M={m}")


@pytest.mark.parametrize("qtype", QTYPES, ids=lambda q: q.name)
def test_large_rows_and_batched_input(qtype):
    n, k = 1001, 2048
    data, w = packed_weight(qtype, n, k, seed=2)
    layer = tt.nn.QuantizedLinear(k, n, qtype, data).to("cuda")
    x, xr = make((2, 3, k), "float32", seed=3, layout="contiguous")
    y = layer(x.cuda())
    assert tuple(y.shape) == (2, 3, n)
    xr = xr.reshape(6, k)
    assert_close_dot(y.reshape(6, n), xr @ w.T, np.abs(xr) @ np.abs(w).T, "float32")


@pytest.mark.parametrize("qtype", QTYPES, ids=lambda q: q.name)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dequantize(qtype, dtype):
    n, k = 5, features(qtype)
    data, w = packed_weight(qtype, n, k, seed=4)
    layer = tt.nn.QuantizedLinear(k, n, qtype, data, device="cuda")
    got = layer.dequantize(getattr(tt, dtype))
    assert got.device.type == "cuda"
    assert_close(got, w.astype(np.float32), dtype if dtype != "float32" else None,
                 tol=(0, 0) if dtype == "float32" else None)
    assert layer.weight_nbytes == data.nbytes


def test_noncontiguous_input_and_grad():
    n, k = 19, 64
    data, w = packed_weight(Q.Q8_0, n, k, seed=5)
    layer = tt.nn.QuantizedLinear(k, n, Q.Q8_0, data, device="cuda")
    x, xr = make((k, k), "float32", layout="transposed", seed=6)
    assert_close_dot(layer(x.cuda()), xr @ w.T, np.abs(xr) @ np.abs(w).T, "float32")
    xg = x.cuda().detach().requires_grad_(True)
    g = np.random.default_rng(7).uniform(-1, 1, (k, n))
    layer(xg).backward(tt.tensor(g, dtype=tt.float32).cuda())
    assert_close(xg.grad, g @ w, tol=GRAD_TOL["float32"])


def test_device_mismatch():
    data, _ = packed_weight(Q.Q4_0, 4, 64)
    layer = tt.nn.QuantizedLinear(64, 4, Q.Q4_0, data, device="cuda")
    with pytest.raises(RuntimeError, match="cuda"):
        layer(tt.zeros(1, 64))
    assert tuple(layer.cpu()(tt.zeros(1, 64)).shape) == (1, 4)
