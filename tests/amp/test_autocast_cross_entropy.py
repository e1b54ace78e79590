"""cross_entropy under autocast reads float16/bfloat16 logits in float32 without copying them
(_tensor/autocast.py's FP32_READERS): the loss is float32 and equal to the loss of logits.float(), and
the gradient at the logits is the one through that cast (float32, rounded to the logits' dtype), bit for bit,
for every reduction, ignore_index, label smoothing, class weights (those take the cast), class-
probability targets, a big vocabulary (CUDA's block per row) and double backward."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.numeric import DEVICES, to_numpy

CASES = [
    # (N, C, kwargs)
    (6, 5, {}),
    (6, 5, {"reduction": "sum"}),
    (6, 5, {"reduction": "none", "ignore_index": 2}),
    (5, 9, {"label_smoothing": 0.2}),
    (7, 3000, {}),                         # C > 1024: a block per row on CUDA
    (7, 3000, {"reduction": "none"}),
    (4, 6, {"weight": True}),
    (4, 6, {"probs": True, "label_smoothing": 0.1}),
]


def _inputs(n, c, dtype, device, seed):
    rng = np.random.default_rng(seed)
    x = tt.tensor(rng.standard_normal((n, c)) * 3, dtype=dtype, device=device)
    t = rng.integers(0, c, (n,))
    t[::3] = 2 if c > 2 else 0                   # repeated classes (and the ignore_index 2 case)
    return x, tt.tensor(t, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [tt.bfloat16, tt.float16])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_loss_and_gradient_equal_the_cast(case, dtype, device):
    n, c, kwargs = CASES[case]
    kwargs = dict(kwargs)
    x, t = _inputs(n, c, dtype, device, seed=case)
    if kwargs.pop("weight", False):
        kwargs["weight"] = tt.linspace(0.5, 2.0, c, device=device)
    if kwargs.pop("probs", False):
        t = tt.randn(n, c, device=device).softmax(-1)
    g = tt.randn(n, device=device) if kwargs.get("reduction") == "none" else tt.tensor(0.37, device=device)

    xa = x.detach().requires_grad_()
    with tt.autocast(device, dtype=dtype):
        loss = F.cross_entropy(xa, t, **kwargs)
    xb = x.detach().requires_grad_()
    ref = F.cross_entropy(xb.float(), t, **kwargs)

    assert loss.dtype == tt.float32 and loss.shape == ref.shape
    copied = "weight" in kwargs or t.dtype.is_floating_point          # those read a float32 copy
    assert (loss.grad_fn.next_functions[0][0].name() == "AccumulateGrad") != copied   # the logits, read as they are
    np.testing.assert_array_equal(to_numpy(loss), to_numpy(ref))
    ga, = tt.autograd.grad(loss, [xa], g)
    gb, = tt.autograd.grad(ref, [xb], g)
    assert ga.dtype == dtype
    # the same float32 gradient rounded to the logits' dtype: the kernels read both inputs the same way
    np.testing.assert_array_equal(to_numpy(ga.float()), to_numpy(gb.float()))


@pytest.mark.parametrize("device", DEVICES)
def test_double_backward_through_the_float32_loss(device):
    x, t = _inputs(4, 7, tt.bfloat16, device, seed=9)
    xa = x.detach().requires_grad_()
    with tt.autocast(device, dtype=tt.bfloat16):
        loss = F.cross_entropy(xa, t, label_smoothing=0.1)
    ga, = tt.autograd.grad(loss, [xa], create_graph=True)
    ha, = tt.autograd.grad((ga.float() ** 2).sum(), [xa])
    xb = x.detach().requires_grad_()
    gb, = tt.autograd.grad(F.cross_entropy(xb.float(), t, label_smoothing=0.1), [xb], create_graph=True)
    hb, = tt.autograd.grad((gb.float() ** 2).sum(), [xb])
    assert ga.dtype == ha.dtype == tt.bfloat16
    np.testing.assert_array_equal(to_numpy(ga.float()), to_numpy(gb.float()))
    np.testing.assert_array_equal(to_numpy(ha.float()), to_numpy(hb.float()))


def test_float32_and_float64_logits_are_untouched():
    x, t = _inputs(3, 4, tt.float64, "cpu", seed=3)
    with tt.autocast("cpu", dtype=tt.bfloat16):
        assert F.cross_entropy(x, t).dtype == tt.float64
        assert F.cross_entropy(x.float(), t).dtype == tt.float32
    assert F.cross_entropy(x.bfloat16(), t).dtype == tt.bfloat16      # outside autocast: the logits' dtype
