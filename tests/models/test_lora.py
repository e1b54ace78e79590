"""nn.utils.lora: LoRALinear / inject_lora against the merged dense model in float64 numpy,
gradients only on the adapters, merge/unmerge, adapter-only save/load, errors."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.autograd import gradcheck
from tinytorch.nn.utils.lora import (LoRALinear, inject_lora, load_lora, lora_state_dict, merge_lora, save_lora,
                                     unmerge_lora)
from support.numeric import GRAD_TOL, TOL, assert_close, make
from support.training import fit_mse


class MLP(nn.Module):
    def __init__(self, dtype=tt.float32):
        super().__init__()
        self.up = nn.Linear(6, 10, dtype=dtype)
        self.act = nn.Tanh()
        self.down = nn.Linear(10, 4, bias=False, dtype=dtype)

    def forward(self, x):
        return self.down(self.act(self.up(x)))


def _np(t):
    return np.asarray(t.detach().double())


def _randomize_b(model, seed=0):
    rng = np.random.default_rng(seed)
    with tt.no_grad():
        for name, m in model.named_modules():
            if isinstance(m, LoRALinear):
                m.lora_B.copy_(tt.tensor(rng.normal(0, 0.3, tuple(m.lora_B.shape))))


def _np_dense(model, x):
    """float64 numpy forward of the MLP with W + (alpha/r) B A merged in."""
    def w(mod):
        if isinstance(mod, LoRALinear):
            return _np(mod.base.weight) + mod.scaling * _np(mod.lora_B) @ _np(mod.lora_A), mod.base.bias
        return _np(mod.weight), mod.bias
    wu, bu = w(model.up)
    wd, _ = w(model.down)
    h = np.tanh(x @ wu.T + _np(bu))
    return h @ wd.T


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_lora_model_equals_merged_dense_model(dtype, layout):
    tt.manual_seed(0)
    model = MLP(getattr(tt, dtype))
    names = inject_lora(model, ["up", "down"], r=3, alpha=6.0)
    assert names == ["up", "down"]
    _randomize_b(model)
    x, xr = make((5, 6), dtype, layout=layout)
    tol = TOL[dtype] if dtype != "bfloat16" else (5e-2, 5e-2)
    expect = _np_dense(model, xr)
    assert_close(model(x), expect, tol=tol)
    if dtype != "bfloat16":  # merging rounds W + ΔW to the dtype: bfloat16 would be compared with its rounding
        merge_lora(model)
        assert all(m.merged for m in (model.up, model.down))
        assert_close(model(x), expect, tol=tol)


def test_gradients_only_on_adapters_and_match_numpy():
    tt.manual_seed(1)
    model = MLP(tt.float64)
    inject_lora(model, ["up", "down"], r=2, alpha=4.0)
    _randomize_b(model, 1)
    x, xr = make((3, 6), "float64", seed=2)
    out = model(x)
    g = np.random.default_rng(3).normal(size=(3, 4))
    out.backward(tt.tensor(g))
    assert model.up.base.weight.grad is None and model.up.base.bias.grad is None
    assert model.down.base.weight.grad is None
    assert not model.up.base.weight.requires_grad
    # the last layer's adapter gradient in closed form: y = h W^T + s (h A^T) B^T
    d = model.down
    h = np.tanh(xr @ (_np(model.up.base.weight) + model.up.scaling * _np(model.up.lora_B) @ _np(model.up.lora_A)).T
                + _np(model.up.base.bias))
    A, B = _np(d.lora_A), _np(d.lora_B)
    assert_close(d.lora_B.grad, d.scaling * g.T @ (h @ A.T), tol=GRAD_TOL["float64"])
    assert_close(d.lora_A.grad, d.scaling * (g @ B).T @ h, tol=GRAD_TOL["float64"])
    # the input gradient (through base and adapter) by finite differences
    xg = x.detach().clone().requires_grad_()
    assert gradcheck(lambda v: model(v), (xg,))


def test_merge_unmerge_round_trip():
    tt.manual_seed(2)
    model = MLP()
    inject_lora(model, ["up", "down"], r=4, alpha=8.0)
    _randomize_b(model, 2)
    w0 = _np(model.up.base.weight).copy()
    x = tt.randn(4, 6)
    y0 = model(x)
    merge_lora(model)
    assert_close(model(x), _np(y0), tol=TOL["float32"])
    assert not np.allclose(_np(model.up.base.weight), w0)
    unmerge_lora(model)
    assert_close(model.up.base.weight, w0, tol=TOL["float32"])
    assert_close(model(x), _np(y0), tol=TOL["float32"])
    with pytest.raises(RuntimeError, match="not merged"):
        model.up.unmerge()
    model.up.merge()
    with pytest.raises(RuntimeError, match="already merged"):
        model.up.merge()


def test_fresh_adapter_is_identity_and_trains():
    tt.manual_seed(3)
    base = MLP()
    model = MLP()
    model.load_state_dict(base.state_dict())
    inject_lora(model, ["up"], r=2)
    x = tt.randn(8, 6)
    np.testing.assert_array_equal(_np(model(x)), _np(base(x)))  # B = 0
    params = [p for p in model.parameters() if p.requires_grad]
    assert len(params) == 2
    opt = tt.optim.AdamW(params, lr=1e-2)
    target = tt.randn(8, 4)
    first, last = fit_mse(model, opt, x, target, 50)
    assert last < first


def test_adapter_state_dict_save_load_round_trip(tmp_path):
    tt.manual_seed(4)
    a, b = MLP(), MLP()
    b.load_state_dict(a.state_dict())
    inject_lora(a, ["up", "down"], r=2, alpha=2.0)
    inject_lora(b, ["up", "down"], r=2, alpha=2.0)
    _randomize_b(a, 4)
    sd = lora_state_dict(a)
    assert list(sd) == ["up.lora_A", "up.lora_B", "down.lora_A", "down.lora_B"]
    save_lora(a, tmp_path / "adapter.safetensors")
    raw = tt.load(tmp_path / "adapter.safetensors")
    assert sorted(raw) == sorted(sd)  # adapters only: no base weights in the file
    # a plain safetensors reader sees the same tensors under the same names
    data = (tmp_path / "adapter.safetensors").read_bytes()
    import json, struct
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    assert {k for k in header if k != "__metadata__"} == set(sd)
    x = tt.randn(3, 6)
    assert not np.allclose(_np(a(x)), _np(b(x)))
    load_lora(b, tmp_path / "adapter.safetensors")
    np.testing.assert_array_equal(_np(a(x)), _np(b(x)))
    # a model injected differently is refused, naming the keys
    c = MLP()
    inject_lora(c, ["up"], r=2)
    with pytest.raises(RuntimeError, match="unexpected.*down.lora_A"):
        load_lora(c, tmp_path / "adapter.safetensors")
    d = MLP()
    inject_lora(d, ["up", "down"], r=3)
    with pytest.raises(RuntimeError, match="size mismatch for up.lora_A"):
        load_lora(d, tmp_path / "adapter.safetensors")


class PackedInt8Linear(nn.Module):
    """A stand-in for a packed quantized linear: int8 codes + a per-row scale, no float weight."""

    def __init__(self, weight: np.ndarray):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        scale = np.abs(weight).max(1) / 127.0
        self.register_buffer("codes", tt.tensor(np.round(weight / scale[:, None]).astype(np.int32)))
        self.register_buffer("scale", tt.tensor(scale, dtype=tt.float32))

    def dequantized(self):
        return self.codes.float() * self.scale.unsqueeze(1)

    def forward(self, x):
        return x @ self.dequantized().T


def test_wraps_a_packed_quantized_linear():
    rng = np.random.default_rng(5)
    q = PackedInt8Linear(rng.normal(size=(5, 7)))
    model = nn.Sequential(q)
    inject_lora(model, ["0"], r=2, alpha=2.0)
    lora = model[0]
    assert isinstance(lora, LoRALinear) and lora.lora_A.dtype == tt.float32
    _randomize_b(model, 6)
    x, xr = make((3, 7), "float32", seed=7)
    w = _np(q.dequantized()) + lora.scaling * _np(lora.lora_B) @ _np(lora.lora_A)
    assert_close(model(x), xr @ w.T, tol=TOL["float32"])
    model(x).sum().backward()
    assert lora.lora_A.grad is not None and lora.lora_B.grad is not None
    with pytest.raises(NotImplementedError, match="PackedInt8Linear.*no float weight"):
        lora.merge()


def test_dropout_only_in_training():
    tt.manual_seed(7)
    layer = LoRALinear(nn.Linear(6, 6), r=2, dropout=0.5)
    with tt.no_grad():
        layer.lora_B.fill_(1.0)
    x = tt.randn(4, 6)
    layer.eval()
    y1, y2 = layer(x), layer(x)
    np.testing.assert_array_equal(_np(y1), _np(y2))
    layer.train()
    assert not np.allclose(_np(layer(x)), _np(y1))


def test_errors():
    with pytest.raises(ValueError, match="rank r must be a positive int, got 0"):
        LoRALinear(nn.Linear(3, 3), r=0)
    with pytest.raises(ValueError, match="rank r must be a positive int, got -2"):
        inject_lora(MLP(), ["up"], r=-2)
    with pytest.raises(ValueError, match=r"no module of MLP matches target_modules=\['q_proj', 'v_proj'\]"):
        inject_lora(MLP(), ["q_proj", "v_proj"])
    with pytest.raises(ValueError, match="no module of MLP matches target_modules='blocks.*'"):
        inject_lora(MLP(), "blocks.*")
    with pytest.raises(TypeError, match="'act' .*Tanh.* not a linear layer"):
        inject_lora(MLP(), ["act"])
    with pytest.raises(TypeError, match="in_features"):
        LoRALinear(nn.Tanh())
    with pytest.raises(ValueError, match="dropout"):
        LoRALinear(nn.Linear(3, 3), dropout=1.0)
    m = MLP()
    inject_lora(m, ["up"])
    assert inject_lora(m, ["up", "down"]) == ["down"]  # an adapted layer is not wrapped twice
    with pytest.raises(ValueError, match="has no LoRALinear"):
        save_lora(MLP(), "/tmp/never_written.safetensors")


def test_regex_and_glob_patterns():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.q_proj = nn.Linear(4, 4)
            self.v_proj = nn.Linear(4, 4)
            self.o_proj = nn.Linear(4, 4)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])

    assert inject_lora(Net(), ["q_proj", "v_proj"]) == ["blocks.0.q_proj", "blocks.0.v_proj", "blocks.1.q_proj",
                                                         "blocks.1.v_proj"]
    assert inject_lora(Net(), ["blocks.1.*"]) == ["blocks.1.q_proj", "blocks.1.v_proj", "blocks.1.o_proj"]
    assert inject_lora(Net(), r"blocks\.\d\.o_proj") == ["blocks.0.o_proj", "blocks.1.o_proj"]


def test_disable_lora_computes_the_base_and_restores():
    from tinytorch.nn.utils.lora import disable_lora
    tt.manual_seed(2)
    model = MLP(tt.float64)
    base_out = _np(model(tt.ones(3, 6, dtype=tt.float64)))
    inject_lora(model, ["up", "down"], r=2, alpha=4.0)
    _randomize_b(model, 3)
    x, xr = make((3, 6), "float64", seed=4)
    adapted = _np_dense(model, xr)
    with disable_lora(model) as m:
        assert m is model
        plain = np.tanh(xr @ _np(model.up.base.weight).T + _np(model.up.base.bias)) @ _np(model.down.base.weight).T
        assert_close(model(x), plain, tol=TOL["float64"])
        assert_close(model(tt.ones(3, 6, dtype=tt.float64)), base_out, tol=TOL["float64"])
    assert_close(model(x), adapted, tol=TOL["float64"])  # adapters back on
    assert not np.allclose(adapted, plain)
    with pytest.raises(ValueError, match="disable_lora: MLP has no LoRALinear"):
        with disable_lora(MLP()):
            pass
    merge_lora(model)
    with pytest.raises(RuntimeError, match="merged into their base weights.*'up'"):
        with disable_lora(model):
            pass


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_lora_on_quantized_linear_gradients_reach_input_and_adapters(dtype):
    # QLoRA: the GGML-packed base stays packed; backward reaches the input (through the
    # dequantized weight) and the adapters, against float64 numpy
    from support.quant_cases import QTYPES, packed_weight
    qtype = next(q for q in QTYPES if q.name == "Q8_0")
    data, w = packed_weight(qtype, 6, 64, seed=8)
    model = nn.Sequential(nn.QuantizedLinear(64, 6, qtype, data))
    inject_lora(model, ["0"], r=3, alpha=6.0)
    _randomize_b(model, 9)
    if dtype != "float32":
        model[0].lora_A.data = model[0].lora_A.data.to(getattr(tt, dtype))
        model[0].lora_B.data = model[0].lora_B.data.to(getattr(tt, dtype))
    lora = model[0]
    x, xr = make((2, 4, 64), dtype, seed=10)
    x.requires_grad_()
    g = np.random.default_rng(11).normal(size=(2, 4, 6))
    a, b = _np(lora.lora_A), _np(lora.lora_B)
    dense = w + lora.scaling * b @ a
    y = model(x)
    tol = TOL[dtype] if dtype == "float32" else (5e-2, 5e-2)
    assert_close(y, xr @ dense.T, tol=tol)
    y.backward(tt.tensor(g, dtype=getattr(tt, dtype)))
    gtol = GRAD_TOL[dtype] if dtype == "float32" else (5e-2, 5e-2)
    assert_close(x.grad, g @ dense, tol=gtol)
    g2, x2 = g.reshape(-1, 6), xr.reshape(-1, 64)
    assert_close(lora.lora_B.grad, lora.scaling * g2.T @ (x2 @ a.T), tol=gtol)
    assert_close(lora.lora_A.grad, lora.scaling * (g2 @ b).T @ x2, tol=gtol)
    assert model[0].base.qweight.grad is None
