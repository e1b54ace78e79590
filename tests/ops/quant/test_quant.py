"""nn.QuantizedLinear and its kernels (matvec for few rows, dequantized tiles + GEMM for many)
against gguf's numpy dequantize + a float64 matmul, for every supported GGML type, input dtype,
row count and layout; gradients w.r.t. the input; bad input."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinytorch as tt

pytest.importorskip("gguf")  # the reference: gguf's own dequantizer (tests/support/quant_cases.py)
from support.numeric import GRAD_TOL, assert_close, assert_close_dot, make, to_numpy  # noqa: E402
from support.quant_cases import QTYPES, Q, block_size, packed_weight  # noqa: E402

DTYPES = ["float32", "float16", "bfloat16"]


def reference(x: np.ndarray, w: np.ndarray, bias=None):
    """x @ w.T (+ bias) in float64 and the |x| @ |w|.T scale of its rounding error."""
    y = x @ w.T
    return (y if bias is None else y + bias), np.abs(x) @ np.abs(w).T


def features(qtype) -> int:
    # 32-value formats: 3 blocks (an odd count: the kernels' paired accumulators have a tail);
    # K-quants: 2 super-blocks.
    return 96 if block_size(qtype) == 32 else 512


@pytest.mark.parametrize("qtype", QTYPES, ids=lambda q: q.name)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m", [1, 3, 17, 64])  # matvec (rows in groups of 8); the GEMM path (> 48 rows)
def test_forward(qtype, dtype, m):
    n, k = 37, features(qtype)
    data, w = packed_weight(qtype, n, k, seed=m)
    layer = tt.nn.QuantizedLinear(k, n, qtype, data)
    x, xr = make((m, k), dtype, seed=1)
    y = layer(x)
    assert y.dtype == x.dtype and tuple(y.shape) == (m, n)
    ref, scale = reference(xr, w)
    assert_close_dot(y, ref, scale, dtype, what=f"{qtype.name} {dtype} M={m}")


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q8_0, Q.Q6_K], ids=lambda q: q.name)
@pytest.mark.parametrize("m", [1, 5, 50])
def test_many_rows_and_tiles(qtype, m):
    # K = 4096: the GEMM path (50 rows) cuts the 131 rows of W into per-thread tiles of a multiple
    # of 16 rows (2 threads: 80 + a partial 51); the matvec splits N over threads
    n, k = 131, 4096
    data, w = packed_weight(qtype, n, k, seed=3)
    bias = np.random.default_rng(4).uniform(-1, 1, n)
    layer = tt.nn.QuantizedLinear(k, n, qtype, data.reshape(-1), bias=bias.astype(np.float32))
    x, xr = make((m, k), "float32", seed=2)
    ref, scale = reference(xr, w, bias.astype(np.float32))
    before = tt.get_num_threads()
    try:
        for threads in (1, 2):
            tt.set_num_threads(threads)
            assert_close_dot(layer(x), ref, scale, "float32", what=f"{threads} threads")
    finally:
        tt.set_num_threads(before)


@pytest.mark.parametrize("layout", ["transposed", "sliced", "expanded"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_noncontiguous_and_batched_input(layout, dtype):
    n, k = 21, 64
    data, w = packed_weight(Q.Q4_0, n, k, seed=5)
    layer = tt.nn.QuantizedLinear(k, n, Q.Q4_0, data)
    x, xr = make((4, k) if layout != "transposed" else (k, k), dtype, layout=layout, seed=6)
    ref, scale = reference(xr, w)
    assert_close_dot(layer(x), ref, scale, dtype)
    xb, xbr = make((2, 3, k), dtype, seed=7)  # leading batch dims
    y = layer(xb)
    assert tuple(y.shape) == (2, 3, n)
    ref, scale = reference(xbr.reshape(6, k), w)
    assert_close_dot(y.reshape(6, n), ref, scale, dtype)


@pytest.mark.parametrize("qtype", QTYPES, ids=lambda q: q.name)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_dequantize(qtype, dtype):
    n, k = 5, features(qtype)
    data, w = packed_weight(qtype, n, k, seed=8)
    got = tt.nn.QuantizedLinear(k, n, int(qtype), data).dequantize(getattr(tt, dtype))
    assert got.dtype == getattr(tt, dtype)
    # the float32 dequantized values are exact; other dtypes round them once
    assert_close(got, w.astype(np.float32).astype(np.float64), dtype if dtype != "float32" else None,
                 tol=(0, 0) if dtype in ("float32", "float64") else None)


def test_bias_and_16bit_bias_cast():
    n, k = 9, 32
    data, w = packed_weight(Q.Q8_0, n, k, seed=9)
    bias = np.linspace(-1, 1, n).astype(np.float32)
    layer = tt.nn.QuantizedLinear(k, n, Q.Q8_0, data, bias=tt.tensor(bias))
    for dtype in DTYPES:
        x, xr = make((2, k), dtype, seed=10)
        ref, scale = reference(xr, w, to_numpy(tt.tensor(bias).to(getattr(tt, dtype))))
        assert_close_dot(layer(x), ref, scale + 1, dtype)


@pytest.mark.parametrize("m", [1, 12])
def test_grad_input(m):
    # the packed weight has no gradient; the input's flows through dequantize-then-matmul
    n, k = 11, 64
    data, w = packed_weight(Q.Q4_1, n, k, seed=11)
    layer = tt.nn.QuantizedLinear(k, n, Q.Q4_1, data, bias=np.ones(n, np.float32))
    x, xr = make((m, k), "float32", seed=12, requires_grad=True)
    y = layer(x)
    g = np.random.default_rng(13).uniform(-1, 1, (m, n))
    y.backward(tt.tensor(g, dtype=tt.float32))
    assert_close(x.grad, g @ w, tol=GRAD_TOL["float32"])
    assert_close_dot(y, *reference(xr, w, np.ones(n)), "float32")
    assert [name for name, _ in layer.named_parameters()] == []


def test_module_api():
    n, k = 6, 64
    data, w = packed_weight(Q.Q4_0, n, k)
    layer = tt.nn.QuantizedLinear(k, n, Q.Q4_0, data.tobytes())
    assert layer.weight_nbytes == n * 2 * 18 and layer.qtype == 2
    assert "qtype=Q4_0" in repr(layer) and "in_features=64" in repr(layer)
    assert set(layer.state_dict()) == {"qweight"}
    assert layer.to("cpu") is layer and tt.nn.QuantizedLinear.SUPPORTED_QTYPES[8] == "Q8_0"
    layer.to(tt.float16)  # only floating tensors change dtype: the packed bytes stay uint8
    assert layer.qweight.dtype == tt.uint8
    x, xr = make((1, k), "float32")
    assert_close_dot(layer(x), *reference(xr, w), "float32")


def test_empty_and_zero_rows():
    data, _ = packed_weight(Q.Q8_0, 4, 32)
    layer = tt.nn.QuantizedLinear(32, 4, Q.Q8_0, data)
    assert tuple(layer(tt.zeros(0, 32)).shape) == (0, 4)
    empty = tt.nn.QuantizedLinear(32, 0, Q.Q8_0, np.zeros((0, 34), np.uint8))
    assert tuple(empty(tt.zeros(3, 32)).shape) == (3, 0)
    no_features = tt.nn.QuantizedLinear(0, 3, Q.Q8_0, np.zeros((3, 0), np.uint8), bias=np.ones(3, np.float32))
    assert_close(no_features(tt.zeros(2, 0)), np.ones((2, 3)))


def test_bad_input():
    data, _ = packed_weight(Q.Q4_0, 4, 64)
    with pytest.raises(ValueError, match=r"unsupported qtype Q5_0 \(code 6\)"):
        tt.nn.QuantizedLinear(64, 4, Q.Q5_0, data)
    with pytest.raises(ValueError, match="in_features 48 is not a multiple of qtype 2's block size 32"):
        tt.nn.QuantizedLinear(48, 4, Q.Q4_0, data)
    with pytest.raises(ValueError, match=r"\(4, 36\) \(144 bytes\) does not match out_features=5 x 36"):
        tt.nn.QuantizedLinear(64, 5, Q.Q4_0, data)
    with pytest.raises(ValueError, match=r"\(143,\)"):
        tt.nn.QuantizedLinear(64, 4, Q.Q4_0, data.reshape(-1)[:143])
    with pytest.raises(TypeError, match="must be uint8, got numpy int8"):
        tt.nn.QuantizedLinear(64, 4, Q.Q4_0, data.view(np.int8))
    with pytest.raises(ValueError, match=r"bias of shape \(3,\)"):
        tt.nn.QuantizedLinear(64, 4, Q.Q4_0, data, bias=np.zeros(3, np.float32))
    layer = tt.nn.QuantizedLinear(64, 4, Q.Q4_0, data)
    with pytest.raises(TypeError, match=r"float32, float16 or bfloat16, got float64\[1, 64\]"):
        layer(tt.zeros(1, 64, dtype=tt.float64))
    with pytest.raises(ValueError, match=r"float32\[2, 63\].*in_features=64"):
        layer(tt.zeros(2, 63))
    with pytest.raises(ValueError, match="unsupported qtype 6"):
        tt._C.quant_linear(tt.zeros(1, 64)._impl, layer.qweight._impl, 6, 4, 64, None)
    with pytest.raises(ValueError, match="holds 144 bytes, but out_features=4 x in_features=64 in qtype 3 needs "
                                         "4 x 40 = 160 bytes"):
        tt._C.quant_linear(tt.zeros(1, 64)._impl, layer.qweight._impl, 3, 4, 64, None)


@pytest.mark.parametrize("isa", ["avx2", "scalar"])
def test_every_isa_path(isa):
    # the ISA is picked once per process: the AVX2 and scalar kernels (matvec, dequantization, the
    # GEMM path's tiles) run in a child process with
    # TINYTORCH_QUANT_ISA capping it (on a CPU without AVX-512 the AVX2 run repeats the default)
    code = textwrap.dedent("""
        import numpy as np
        import tinytorch as tt
        from support.numeric import assert_close_dot, make
        from support.quant_cases import QTYPES, block_size, packed_weight
        for q in QTYPES:
            k = 96 if block_size(q) == 32 else 512
            data, w = packed_weight(q, 13, k, seed=3)
            layer = tt.nn.QuantizedLinear(k, 13, q, data)
            # dequantization (also the prefill GEMM's tiles) gives the exact float32 values
            assert np.array_equal(layer.dequantize().numpy(), w.astype(np.float32)), q.name
            for m in (1, 3, 9, 50):
                for dtype in ("float32", "bfloat16"):
                    x, xr = make((m, k), dtype, seed=m)
                    assert_close_dot(layer(x), xr @ w.T, np.abs(xr) @ np.abs(w).T, dtype, what=f"{q.name} M={m}")
        print("ok")
    """)
    tests_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = os.path.dirname(os.path.dirname(os.path.abspath(tt.__file__)))
    env = dict(os.environ, TINYTORCH_QUANT_ISA=isa,
               PYTHONPATH=os.pathsep.join(p for p in (tests_dir, root, os.environ.get("PYTHONPATH")) if p))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout[-2000:] + r.stderr[-4000:]


def _int8_x(x: np.ndarray) -> np.ndarray:
    """x as the int8-activation matvec sees it: llama.cpp's Q8 rounding per 32-value block, in float32
    (d = max|x| / 127, codes nearbyint(x * 127 / max|x|)), as float64 values d * code."""
    xb = x.astype(np.float32).reshape(x.shape[0], -1, 32)
    amax = np.abs(xb).max(-1, keepdims=True)
    inv = np.where(amax > 0, np.float32(127) / np.where(amax > 0, amax, 1), np.float32(0)).astype(np.float32)
    codes = np.rint(xb * inv)
    return (codes.astype(np.float64) * (amax / np.float32(127)).astype(np.float64)).reshape(x.shape)


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q8_0], ids=lambda q: q.name)
def test_int8_activations_compute_llama_cpp_numerics(qtype):
    # tinytorch.backends.cpu.quantized.int8_activations: x rounded per block to int8, integer block dots;
    # Q4_1's offset m * sum(x) stays on the float x. Checked against that arithmetic in float64, and
    # within the rounding bound of the float32 result (|x - x_int8| @ |w|).
    k, n = 128, 37
    data, w = packed_weight(qtype, n, k, seed=11)
    layer = tt.nn.QuantizedLinear(k, n, int(qtype), data)
    m_field = data.reshape(n, k // 32, -1)[:, :, 2:4].copy().view(np.float16)[..., 0].astype(np.float64) \
        if qtype == Q.Q4_1 else np.zeros((n, k // 32))
    m_full = np.repeat(m_field, 32, axis=1)
    backend = tt.backends.cpu.quantized
    assert backend.int8_activations is False          # off by default
    try:
        for rows in (1, 3, 4, 6):
            x, xr = make((rows, k), "float32", seed=rows)
            float_out = to_numpy(layer(x))
            backend.int8_activations = True
            out = to_numpy(layer(x))
            backend.int8_activations = False
            xq = _int8_x(xr)
            ref = xq @ (w - m_full).T + xr @ m_full.T
            assert_close_dot(out, ref, np.abs(xq) @ np.abs(w - m_full).T + np.abs(xr) @ np.abs(m_full).T, "float32",
                             what=f"{qtype.name} M={rows}")
            bound = np.abs(xr - xq) @ np.abs(w - m_full).T
            assert np.all(np.abs(out - float_out) <= bound + 1e-5 * (np.abs(xr) @ np.abs(w).T)), qtype.name
            if tt.backends.cpu.get_cpu_capability() != "DEFAULT":
                assert not np.array_equal(out, float_out)  # the switch really changes the kernel
    finally:
        backend.int8_activations = False


def test_cpu_capability_names_an_isa(monkeypatch):
    best = tt.backends.cpu.get_cpu_capability()
    assert best in ("AVX512", "AVX2", "DEFAULT")
    monkeypatch.setenv("TINYTORCH_CPU_CAPABILITY", "default")           # the cap the kernels honour
    assert tt.backends.cpu.get_cpu_capability() == "DEFAULT"
    monkeypatch.setenv("TINYTORCH_CPU_CAPABILITY", "avx2")
    assert tt.backends.cpu.get_cpu_capability() == ("DEFAULT" if best == "DEFAULT" else "AVX2")
