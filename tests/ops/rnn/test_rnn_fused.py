"""The fused CPU RNN/LSTM/GRU kernels (tinytorch._ops.rnn) against the composed per-step path
(nn.modules.rnn._FUSED = False, itself checked against numpy in test_rnn.py): outputs, h_n/c_n
and every parameter, input and initial-state gradient for each option combination and float
dtype, plus finite differences on a tiny float64 case. The two paths round differently over a
whole recurrence (float32 gates use a vectorized exp), so every comparison uses GRAD_TOL."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.autograd import gradcheck
from support.numeric import GRAD_TOL, assert_close, make
from support.rnn_cases import KINDS, OPTIONS, input_shapes, kind_id, option_id, run_rnn


def _weighted_sum(results):
    """sum(out * w_out) + sum(h_n * w_h) (+ c_n), random weights in the results' dtypes."""
    rng = np.random.default_rng(1)
    out, *states = results
    loss = (out * tt.tensor(rng.uniform(-1, 1, tuple(out.shape)), dtype=out.dtype)).sum()
    for s in states:
        loss = loss + (s * tt.tensor(rng.uniform(-1, 1, tuple(s.shape)), dtype=s.dtype)).sum()
    return loss


def _run(module, x, hx, fused: bool):
    """Forward + backward of sum(out * w_out) + sum(h_n * w_h) (+ c_n); returns the number of
    fused layer calls, the results and the gradients."""
    return run_rnn(module, x, hx, fused, _weighted_sum)


def _inputs(module, dtype, layout, batched, with_state, seed=0):
    x_shape, state_shape, count = input_shapes(module, batched)
    x, _ = make(x_shape, dtype, layout, seed=seed, requires_grad=True)
    hx = None
    if with_state:
        hx = tuple(make(state_shape, dtype, layout, seed=seed + 1 + i, requires_grad=True)[0] for i in range(count))
    return x, hx


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("options", OPTIONS, ids=option_id)
@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_fused_matches_composed(kind, options, dtype):
    cls, extra = kind
    tt.manual_seed(0)
    module = cls(4, 6, **extra, **options, dtype=getattr(tt, dtype))
    for batched, with_state, layout in ((True, False, "contiguous"), (True, True, "sliced"), (False, True, "sliced")):
        x, hx = _inputs(module, dtype, layout, batched, with_state)
        calls, fused, fused_grads = _run(module, x, hx, True)
        assert calls == options["num_layers"] * (2 if options["bidirectional"] else 1)
        calls, composed, composed_grads = _run(module, x, hx, False)
        assert calls == 0
        for a, b, what in zip(fused, composed, ("output", "h_n", "c_n")):
            assert a.shape == b.shape and a.dtype == b.dtype
            assert_close(a, b, dtype, GRAD_TOL[dtype], what=f"{what} batched={batched} state={with_state}")
        assert fused_grads.keys() == composed_grads.keys()
        for n in fused_grads:
            assert fused_grads[n] is not None, n
            assert_close(fused_grads[n], composed_grads[n], dtype, GRAD_TOL[dtype], what=f"grad {n}")


def test_fused_path_is_taken_and_dropout_between_layers():
    m = nn.LSTM(4, 6, num_layers=2, dropout=0.5)
    x, _ = make((5, 3, 4), "float32")
    out, (h, c) = m(x)
    assert "LstmFusedBackward0" in repr(out.grad_fn)
    m.eval()  # eval: dropout off, so fused == composed
    _, a, _ = _run(m, x.detach().requires_grad_(), None, True)
    _, b, _ = _run(m, x.detach().requires_grad_(), None, False)
    assert_close(a[0], b[0], "float32", GRAD_TOL["float32"])
    m.train()  # train: the second layer sees dropped inputs, so the output differs from eval's
    tt.manual_seed(3)
    assert not np.allclose(m(x)[0].detach().numpy(), a[0].detach().numpy())


def test_other_dtypes_take_the_composed_path():
    m = nn.GRU(4, 6).to(tt.bfloat16)
    x, _ = make((5, 3, 4), "bfloat16")
    calls, _, grads = _run(m, x.requires_grad_(), None, True)
    assert calls == 0 and grads["weight_hh_l0"] is not None


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_finite_differences_float64(cls):
    tt.manual_seed(0)
    m = cls(2, 3, num_layers=2, bidirectional=True, dtype=tt.float64)
    x, _ = make((3, 2, 2), "float64", requires_grad=True)
    h0, _ = make((4, 2, 3), "float64", seed=1, requires_grad=True)
    params = list(m.parameters())

    def f(x, h0, *ps):
        out, state = m(x, (h0, h0 * 0.5) if cls is nn.LSTM else h0)
        hs = state if isinstance(state, tuple) else (state,)
        return out.sum() + sum((s * s).sum() for s in hs)

    assert gradcheck(f, (x, h0, *params))


def test_bad_arguments_raise():
    from tinytorch._ops import rnn as fused
    x, _ = make((5, 3, 4), "float32")
    w_ih, _ = make((24, 4), "float32")
    w_hh, _ = make((24, 6), "float32")
    h0, _ = make((3, 6), "float32")
    with pytest.raises(ValueError, match="mode"):
        fused.rnn_layer("LSTMX", x, h0, h0, w_ih, w_hh, None, None, False)
    with pytest.raises(RuntimeError, match="weight_ih"):
        fused.rnn_layer("GRU", x, h0, None, w_ih, w_hh, None, None, False)
    with pytest.raises(TypeError, match="float32 or float64"):
        fused.rnn_layer("LSTM", x.half(), h0, h0, w_ih, w_hh, None, None, False)
    with pytest.raises(RuntimeError, match="shape"):
        fused.rnn_layer("LSTM", x, h0[:2], h0, w_ih, w_hh, None, None, False)
