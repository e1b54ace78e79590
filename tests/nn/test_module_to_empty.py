"""Module.to_empty(device=...) as PyTorch's: every parameter and buffer (of this module only with
recurse=False) becomes an uninitialised tensor of the same shape and dtype on the device, parameters
keep their identity and requires_grad, and reset_parameters() then initialises them there."""
from __future__ import annotations

import pytest

import tinytorch as tt
import tinytorch.nn as nn


def _model():
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2).to(tt.float64))


def _check_moved(model, device):
    for name, t in list(model.named_parameters()) + list(model.named_buffers()):
        assert t.device.type == device, name


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def test_to_empty_then_reset_parameters(device):
    tt.manual_seed(0)
    model = _model()
    shapes = {n: (tuple(t.shape), t.dtype) for n, t in model.state_dict().items()}
    params = list(model.parameters())
    model[0].weight.requires_grad_(False)
    assert model.to_empty(device=device) is model
    _check_moved(model, device)
    assert {n: (tuple(t.shape), t.dtype) for n, t in model.state_dict().items()} == shapes
    assert all(a is b for a, b in zip(params, model.parameters()))          # identity kept
    assert not model[0].weight.requires_grad and model[0].bias.requires_grad
    for m in model:
        m.reset_parameters()
    tt.manual_seed(0)
    fresh = _model()
    assert tt.equal(model[1].running_var.cpu(), fresh[1].running_var)       # reset_running_stats ran
    assert tt.equal(model[1].weight.cpu(), tt.ones(4))
    w = model[0].weight.cpu()
    bound = 1 / 3 ** 0.5                                                    # kaiming_uniform(a=sqrt(5)) over fan_in 3
    assert bool(tt.isfinite(w).all()) and float(w.abs().max()) <= bound
    model.eval()
    out = model[2](model[1](model[0](tt.randn(5, 3, device=device))).double())
    assert out.shape == (5, 2) and out.dtype == tt.float64 and out.device.type == device


def test_to_empty_recurse_false_moves_only_this_modules_own():
    outer = nn.Module()
    outer.register_buffer("scale", tt.ones(2, dtype=tt.float16))
    outer.inner = nn.Linear(2, 2)
    before = outer.inner.weight.clone()
    outer.to_empty(device="cpu", recurse=False)
    assert outer.scale.dtype == tt.float16 and tuple(outer.scale.shape) == (2,)
    assert tt.equal(outer.inner.weight, before)                              # the child is untouched
    with pytest.raises(TypeError):
        outer.to_empty("cpu")                                                # device is keyword-only
