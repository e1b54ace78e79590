"""The fused CUDA RNN/LSTM/GRU kernels (cuda/src/rnn.cu behind tinytorch._ops.rnn): outputs,
h_n/c_n and every parameter, input and initial-state gradient for each option combination
(layers, bidirectional, batch_first, bias, given h0/c0, unbatched, non-contiguous input), against
the composed per-step path on the GPU (nn.modules.rnn._FUSED = False) and the fused CPU kernels
in float32/float64, and against the float64 CPU kernels on the same rounded values in
float16/bfloat16. Whole recurrences round differently on each path, so comparisons use GRAD_TOL."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch._ops import rnn as fused_ops

from support.cuda_helpers import pair
from support.numeric import GRAD_TOL, assert_close
from support.rnn_cases import KINDS, OPTIONS, input_shapes, kind_id, option_id, run_rnn

pytestmark = pytest.mark.cuda

# (batched, with h0/c0, layout of x and the states)
INPUTS = ((True, False, "contiguous"), (True, True, "sliced"), (False, True, "sliced"))


def _loss_weights(shapes, dtype):
    """float64 CPU weights for the loss, rounded to dtype so every path sees the same values."""
    rng = np.random.default_rng(1)
    return [tt.tensor(rng.uniform(-1, 1, s)).to(getattr(tt, dtype)).double() for s in shapes]


def _run(module, x, hx, fused: bool, weight_dtype: str):
    """Forward + backward of sum(out * w_out) + sum(h_n * w_h) (+ c_n) in float64; returns the
    number of fused layer calls, the results and the gradients (parameters, input, states)."""
    def weighted_sum(results):
        weights = _loss_weights([tuple(r.shape) for r in results], weight_dtype)
        loss = (results[0].double() * weights[0].to(x.device)).sum()
        for r, w in zip(results[1:], weights[1:]):
            loss = loss + (r.double() * w.to(x.device)).sum()
        return loss
    return run_rnn(module, x, hx, fused, weighted_sum)


def _inputs(module, dtype, layout, batched, with_state, seed=0):
    """(cpu, cuda) pairs of x and the initial states, same values and layout on both devices."""
    x_shape, state_shape, count = input_shapes(module, batched)
    x = pair(x_shape, dtype, layout, seed=seed, requires_grad=True, low=-2.0, high=2.0)
    hx = None
    if with_state:
        hx = [pair(state_shape, dtype, layout, seed=seed + 1 + i, requires_grad=True) for i in range(count)]
    return x, hx


def _modules(cls, extra, options, dtype):
    """The same initialization on the CPU and on the GPU."""
    tt.manual_seed(0)
    cpu = cls(4, 6, **extra, **options, dtype=getattr(tt, dtype))
    tt.manual_seed(0)
    gpu = cls(4, 6, **extra, **options, dtype=getattr(tt, dtype)).to("cuda")
    return cpu, gpu


def _compare(a_results, a_grads, b_results, b_grads, dtype, what, grads=True):
    for a, b, name in zip(a_results, b_results, ("output", "h_n", "c_n")):
        assert tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype, (what, name)
        assert_close(a, b, dtype, GRAD_TOL[dtype], what=f"{what}: {name}")
    if not grads:
        return
    assert a_grads.keys() == b_grads.keys()
    for n in a_grads:
        assert a_grads[n] is not None and b_grads[n] is not None, (what, n)
        assert a_grads[n].dtype == b_grads[n].dtype, (what, n)
        assert_close(a_grads[n], b_grads[n], dtype, GRAD_TOL[dtype], what=f"{what}: grad {n}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", OPTIONS, ids=option_id)
@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_cuda_fused_matches_composed_and_cpu(kind, options, dtype):
    cls, extra = kind
    cpu, gpu = _modules(cls, extra, options, dtype)
    layers = options["num_layers"] * (2 if options["bidirectional"] else 1)
    for batched, with_state, layout in INPUTS:
        what = f"batched={batched} state={with_state} layout={layout}"
        (xc, xg), hx = _inputs(gpu, dtype, layout, batched, with_state)
        hc = hx and tuple(c for c, _ in hx)
        hg = hx and tuple(g for _, g in hx)
        calls, fused, fused_grads = _run(gpu, xg, hg, True, dtype)
        assert calls == layers
        assert all(r.device.type == "cuda" for r in fused)
        calls, composed, composed_grads = _run(gpu, xg, hg, False, dtype)
        assert calls == 0
        _compare(fused, fused_grads, composed, composed_grads, dtype, f"CUDA fused vs composed {what}")
        calls, on_cpu, cpu_grads = _run(cpu, xc, hc, True, dtype)
        assert calls == layers
        _compare([r.cpu() for r in fused], {n: g.cpu() for n, g in fused_grads.items()}, on_cpu, cpu_grads, dtype,
                 f"CUDA fused vs CPU fused {what}")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("options", OPTIONS, ids=option_id)
@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_cuda_fused_low_precision_against_float64(kind, options, dtype):
    """16-bit storage, float32 gates and GEMM accumulation, against the float64 CPU kernels run on
    the same rounded weights and inputs. RNN(relu)'s gradients are left out: a pre-activation
    within rounding of 0 may take the other side of the kink, which changes its gradient by O(1)."""
    cls, extra = kind
    tt.manual_seed(0)
    gpu = cls(4, 6, **extra, **options).to(getattr(tt, dtype)).to("cuda")
    ref = cls(4, 6, **extra, **options, dtype=tt.float64)
    with tt.no_grad():
        for name, p in ref.named_parameters():
            p.copy_(getattr(gpu, name).cpu().double())
    layers = options["num_layers"] * (2 if options["bidirectional"] else 1)
    for batched, with_state, layout in INPUTS:
        what = f"{dtype} batched={batched} state={with_state} layout={layout}"
        (xc, xg), hx = _inputs(gpu, dtype, layout, batched, with_state)
        xr = xc.detach().double().requires_grad_(True)
        hr = hx and tuple(c.detach().double().requires_grad_(True) for c, _ in hx)
        hg = hx and tuple(g for _, g in hx)
        calls, fused, fused_grads = _run(gpu, xg, hg, True, dtype)
        assert calls == layers
        assert all(r.dtype == getattr(tt, dtype) for r in fused)
        _, expected, expected_grads = _run(ref, xr, hr, True, dtype)
        _compare([r.cpu().double() for r in fused], {n: g.cpu().double() for n, g in fused_grads.items()},
                 expected, expected_grads, dtype, what, grads=extra.get("nonlinearity") != "relu")


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_cuda_dropout_between_layers(cls):
    """Train mode draws one dropout mask between the layers; with the same seed the fused and the
    composed paths draw the same mask, so they agree; eval mode differs from train mode."""
    tt.manual_seed(0)
    m = cls(4, 6, num_layers=3, dropout=0.5).to("cuda")
    xg = pair((5, 3, 4), "float32", seed=2, requires_grad=True)[1]
    results = {}
    for fused in (True, False):
        tt.manual_seed(7)
        results[fused] = _run(m, xg, None, fused, "float32")
    assert results[True][0] == 3 and results[False][0] == 0
    _compare(results[True][1], results[True][2], results[False][1], results[False][2], "float32", "dropout=0.5")
    grad_fn = repr(results[True][1][0].grad_fn)
    assert "FusedBackward0" in grad_fn, grad_fn
    m.eval()
    with tt.no_grad():
        evaluated = m(xg)[0]
    assert not np.allclose(evaluated.cpu().numpy(), results[True][1][0].detach().cpu().numpy())


def test_cuda_fused_bad_arguments_raise():
    x = pair((5, 3, 4), "float32")[1]
    w_ih, w_hh = pair((24, 4), "float32")[1], pair((24, 6), "float32")[1]
    h0 = pair((3, 6), "float32")[1]
    with pytest.raises(RuntimeError, match="device"):
        fused_ops.rnn_layer("LSTM", x, h0.cpu(), h0, w_ih, w_hh, None, None, False)
    with pytest.raises(TypeError, match="float16, bfloat16, float32 or float64"):
        fused_ops.rnn_layer("LSTM", x.int(), h0.int(), h0.int(), w_ih.int(), w_hh.int(), None, None, False)
    with pytest.raises(TypeError, match="dtype"):
        fused_ops.rnn_layer("LSTM", x, h0.half(), h0, w_ih, w_hh, None, None, False)


def test_cuda_half_takes_the_fused_path_and_mixed_dtypes_do_not():
    m = nn.GRU(4, 6).to(tt.float16).to("cuda")
    x = pair((5, 3, 4), "float16", requires_grad=True)[1]
    calls, _, grads = _run(m, x, None, True, "float16")
    assert calls == 1 and grads["weight_hh_l0"] is not None
    assert not m._use_fused(x, (tt.zeros(1, 3, 6, device="cuda"),))  # a float32 state
    assert not m._use_fused(x.cpu(), (None,))  # CPU float16: the composed path
