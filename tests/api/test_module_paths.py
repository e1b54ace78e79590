"""PyTorch module paths that programs import."""
import importlib

import numpy as np
import pytest

import tinytorch
from tinytorch import nn

PATHS = [   # (module, name, the object it must be)
    ("tinytorch.nn.modules.dropout", "Dropout", nn.Dropout),
    ("tinytorch.nn.modules.dropout", "Dropout1d", nn.Dropout1d),
    ("tinytorch.nn.modules.dropout", "Dropout2d", nn.Dropout2d),
    ("tinytorch.nn.modules.sparse", "Embedding", nn.Embedding),
    ("tinytorch.nn.modules.activation", "MultiheadAttention", nn.MultiheadAttention),
    ("tinytorch.nn.modules.linear", "NonDynamicallyQuantizableLinear", None),
    ("tinytorch.nn.attention", "SDPBackend", None),
    ("tinytorch.nn.attention", "sdpa_kernel", None),
    ("tinytorch.onnx", "export", None),
]


@pytest.mark.parametrize("module, name, obj", PATHS, ids=lambda v: v if isinstance(v, str) else "")
def test_import_path(module, name, obj):
    got = getattr(importlib.import_module(module), name)
    if obj is not None:
        assert got is obj


def test_non_dynamically_quantizable_linear_is_mha_out_proj():
    from tinytorch.nn.modules.linear import NonDynamicallyQuantizableLinear
    mha = nn.MultiheadAttention(8, 2)
    assert type(mha.out_proj) is NonDynamicallyQuantizableLinear
    assert isinstance(mha.out_proj, nn.Linear)


def test_onnx_export_raises_with_reason():
    with pytest.raises(NotImplementedError, match="no graph capture"):
        tinytorch.onnx.export(nn.Linear(2, 2), (tinytorch.ones(1, 2),), "model.onnx")
    assert tinytorch.onnx.is_in_onnx_export() is False


def test_lstm_flatten_parameters_is_a_noop():
    lstm = nn.LSTM(3, 4, num_layers=2)
    x = tinytorch.randn(5, 2, 3)
    before = [p.detach().clone() for p in lstm.parameters()]
    out1, _ = lstm(x)
    assert lstm.flatten_parameters() is None
    out2, _ = lstm(x)
    np.testing.assert_array_equal(out1.detach().numpy(), out2.detach().numpy())
    for a, b in zip(before, lstm.parameters()):
        np.testing.assert_array_equal(a.numpy(), b.detach().numpy())
    nn.GRU(3, 4).flatten_parameters()


def test_sdpa_kernel_selects_and_restores():
    from tinytorch.nn.attention import SDPBackend, enabled_backends, sdpa_kernel
    assert SDPBackend.MATH == 0 and SDPBackend.FLASH_ATTENTION == 1 and SDPBackend.ERROR == -1
    everything = enabled_backends()
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        assert enabled_backends() == [SDPBackend.FLASH_ATTENTION]
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH], set_priority=True):
            assert enabled_backends() == [SDPBackend.CUDNN_ATTENTION, SDPBackend.MATH]
        assert enabled_backends() == [SDPBackend.FLASH_ATTENTION]
    assert enabled_backends() == everything
    with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
        with sdpa_kernel("math"):
            pass


def test_sdpa_under_sdpa_kernel_computes_the_same():
    from tinytorch.nn.attention import SDPBackend, sdpa_kernel
    F = nn.functional
    q, k, v = (tinytorch.randn(2, 3, 5, 4) for _ in range(3))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())


def test_sdp_backend_matches_torch():
    torch = pytest.importorskip("torch")
    from tinytorch.nn.attention import SDPBackend
    assert {k: int(v) for k, v in torch.nn.attention.SDPBackend.__members__.items()} == \
        {k: int(v) for k, v in SDPBackend.__members__.items()}
