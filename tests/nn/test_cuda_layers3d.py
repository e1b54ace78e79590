"""Less common nn layers on the GPU against the CPU result on the same inputs: embedding_bag,
3-D max pooling with indices and unpooling, fractional max pooling, lazy modules materialized on
the device, SyncBatchNorm without a process group, multi_head_attention_forward, grouped_mm,
linear_cross_entropy (chunked). Forward values and gradients."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from support.numeric import GRAD_TOL, TOL, make, to_numpy

pytestmark = pytest.mark.cuda


def close(gpu, cpu, dtype="float32", grad=False):
    rtol, atol = (GRAD_TOL if grad else TOL)[dtype]
    np.testing.assert_allclose(to_numpy(gpu), to_numpy(cpu), rtol=rtol, atol=atol)


def _both(fn, *tensors):
    """fn on CPU leaves and on their CUDA copies; (cpu out, gpu out, cpu leaves, gpu leaves)."""
    cpu = [t.detach().clone().requires_grad_(t.dtype.is_floating_point) for t in tensors]
    gpu = [t.detach().cuda().requires_grad_(t.dtype.is_floating_point) for t in tensors]
    return fn(*cpu), fn(*gpu), cpu, gpu


def test_embedding_bag_cuda():
    w, _ = make((10, 4), "float32", seed=1)
    idx, offs = tt.tensor([1, 2, 4, 5, 4, 3, 2, 9]), tt.tensor([0, 3, 3])
    for mode in ("sum", "mean", "max"):
        c, g, cl, gl = _both(lambda w: F.embedding_bag(idx.to(w.device), w, offs.to(w.device), mode=mode,
                                                       padding_idx=3), w)
        assert g.device.type == "cuda"
        close(g, c)
        c.sum().backward()
        g.sum().backward()
        close(gl[0].grad, cl[0].grad, grad=True)


def test_max_pool3d_indices_and_unpool_cuda():
    x, _ = make((2, 3, 5, 6, 7), "float32", "transposed", seed=2)
    (cv, ci), (gv, gi), cl, gl = _both(lambda t: F.max_pool3d(t, 3, 2, 1, return_indices=True), x)
    close(gv, cv)
    np.testing.assert_array_equal(gi.cpu().numpy(), ci.numpy())
    close(F.max_unpool3d(gv, gi, 3, 2, 1, output_size=(5, 6, 7)), F.max_unpool3d(cv, ci, 3, 2, 1, output_size=(5, 6, 7)))
    cv.sum().backward()
    gv.sum().backward()
    close(gl[0].grad, cl[0].grad, grad=True)


def test_fractional_max_pool_cuda():
    x, _ = make((2, 3, 10, 9), "float32", seed=3)
    s = tt.tensor(np.random.default_rng(0).random((2, 3, 2)), dtype=tt.float32)
    (cv, ci), (gv, gi), _, _ = _both(
        lambda t: F.fractional_max_pool2d(t, 3, (4, 5), return_indices=True, _random_samples=s.to(t.device)), x)
    close(gv, cv)
    np.testing.assert_array_equal(gi.cpu().numpy(), ci.numpy())


def test_lazy_and_sync_batchnorm_on_cuda():
    m = nn.LazyLinear(3, device="cuda")
    y = m(tt.randn(2, 5, device="cuda"))
    assert m.weight.device.type == "cuda" and y.device.type == "cuda" and type(m) is nn.Linear
    bn = nn.LazyBatchNorm2d().cuda()
    bn(tt.randn(2, 4, 3, 3, device="cuda"))
    assert bn.running_mean.device.type == "cuda" and bn.num_features == 4
    x, _ = make((4, 3, 5), "float32", seed=4)
    ref = nn.BatchNorm1d(3)
    sbn = nn.SyncBatchNorm(3).cuda()
    close(sbn(x.cuda()), ref(x))
    close(sbn.running_var, ref.running_var)


def test_mha_grouped_mm_linear_cross_entropy_cuda():
    q, _ = make((3, 2, 8), "float32", seed=5)
    w_in, _ = make((24, 8), "float32", seed=6)
    w_o, _ = make((8, 8), "float32", seed=7)
    (co, cw), (go, gw), _, _ = _both(lambda q, a, b: F.multi_head_attention_forward(
        q, q, q, 8, 2, a, None, None, None, False, 0.0, b, None), q, w_in, w_o)
    close(go, co)
    close(gw, cw)
    a, _ = make((14, 5), "float32", seed=8)
    b, _ = make((3, 5, 6), "float32", seed=9)
    offs = tt.tensor([3, 7, 12], dtype=tt.int32)
    c, g, _, _ = _both(lambda a, b: F.grouped_mm(a, b, offs=offs.to(a.device)), a, b)
    close(g, c)
    x, _ = make((13, 5), "float32", seed=10)
    W, _ = make((7, 5), "float32", seed=11)
    y = tt.tensor(np.random.default_rng(1).integers(0, 7, 13))
    opts = nn.LinearCrossEntropyOptions(batch_chunk_size=4)
    c, g, cl, gl = _both(lambda x, W: F.linear_cross_entropy(x, W, y.to(x.device), options=opts), x, W)
    close(g, c)
    c.backward()
    g.backward()
    close(gl[1].grad, cl[1].grad, grad=True)
