"""Global settings and queries as PyTorch's: the default device and dtype, the autocast switches,
inference mode, interop threads, warn_always, deterministic algorithms and the float32 matmul
precision; result_type, broadcast_shapes, is_floating_point & co., scalar_tensor, typename."""
from __future__ import annotations

import pytest

import tinytorch as tt


def test_state_switches():
    assert tt.get_default_device() == tt.device("cpu")
    tt.set_default_device("cpu")
    tt.set_default_device(None)
    assert not tt.is_autocast_enabled("cpu")
    with tt.autocast("cpu", dtype=tt.bfloat16):
        assert tt.is_autocast_enabled("cpu") and not tt.is_autocast_enabled("cuda")
        assert tt.get_autocast_dtype("cpu") == tt.bfloat16
    assert tt.get_autocast_dtype("cuda") == tt.float16
    tt.set_autocast_enabled("cpu", True)
    try:
        assert tt.is_autocast_enabled("cpu")
        assert tt.matmul(tt.ones(2, 2), tt.ones(2, 2)).dtype == tt.bfloat16   # the autocast wrappers see it
    finally:
        tt.set_autocast_enabled("cpu", False)
    assert not tt.is_autocast_enabled("cpu")
    assert not tt.is_inference_mode_enabled()
    with tt.inference_mode():
        assert tt.is_inference_mode_enabled()
    tt.set_num_interop_threads(2)
    assert tt.get_num_interop_threads() == 2
    tt.set_warn_always(True)
    assert tt.is_warn_always_enabled()
    tt.set_warn_always(False)
    previous = tt.get_default_dtype()
    try:
        tt.set_default_tensor_type("torch.DoubleTensor")
        assert tt.get_default_dtype() == tt.float64
    finally:
        tt.set_default_dtype(previous)
    assert tt.detach(tt.ones(2, requires_grad=True)).requires_grad is False
    filled = tt.fill(tt.tensor([float("nan"), float("inf")]), 2.5)
    assert filled.tolist() == [2.5, 2.5]
    value = tt.tensor(1.0, requires_grad=True)
    tt.fill(tt.ones(3), value).sum().backward()
    assert value.grad.item() == 3.0


def test_queries_and_switches():
    assert tt.result_type(tt.tensor([1]), 1.0) == tt.float32
    assert tt.result_type(tt.tensor([1], dtype=tt.uint8), tt.tensor(5)) == tt.uint8
    assert tt.result_type(tt.tensor(1.0, dtype=tt.float64), tt.tensor([1], dtype=tt.int32)) == tt.float64
    assert tt.result_type(1, 2.0) == tt.float32 and tt.result_type(tt.tensor([True]), True) == tt.bool
    assert tt.broadcast_shapes((2, 1), (3,), 1) == (2, 3)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        tt.broadcast_shapes((2,), (3,))
    assert tt.is_floating_point(tt.ones(1)) and not tt.is_floating_point(tt.ones(1).long())
    assert tt.is_complex(tt.ones(1)) is False and tt.is_same_size(tt.ones(2, 3), tt.zeros(2, 3))
    assert tt.is_nonzero(tt.tensor([1.5])) is True
    with pytest.raises(RuntimeError, match="more than one value"):
        tt.is_nonzero(tt.ones(2))
    s = tt.scalar_tensor(3)
    assert s.dim() == 0 and s.dtype == tt.float32 and s.item() == 3.0
    assert tt.typename(tt.ones(1)) == "torch.FloatTensor" and tt.typename(3) == "int"
    try:
        tt.use_deterministic_algorithms(True)
        assert tt.are_deterministic_algorithms_enabled() and tt.backends.cudnn.deterministic
    finally:
        tt.use_deterministic_algorithms(False)
    assert not tt.backends.cudnn.deterministic
    try:
        tt.set_float32_matmul_precision("high")
        assert tt.get_float32_matmul_precision() == "high" and tt.backends.cuda.matmul.allow_tf32
    finally:
        tt.set_float32_matmul_precision("highest")
    with pytest.raises(RuntimeError, match="Invalid precision"):
        tt.set_float32_matmul_precision("low")
