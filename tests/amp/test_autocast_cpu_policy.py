"""CPU autocast applies PyTorch's CPU lists (AutocastCPU), not CUDA's: inside
``autocast("cpu", dtype=bfloat16)`` matmul, linear and the convolutions run in bfloat16, the ops on
CPU's float32 list (the losses, cdist, the 3-D pools, grid_sample) in float32, and the rest (exp, log,
pow, softmax, layer_norm, ... which CUDA runs in float32) in their inputs' dtype. The CUDA lists, the
op schema's autocast column, are unchanged (checked on the wrappers' per-device table, no GPU needed)."""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch._generated import functional as G   # the schema's functions (tt.<op> may be a __torch_function__ wrapper)
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from support.numeric import assert_close, make, to_numpy
from tinytorch._tensor.autocast import CPU_POLICY, policy_of
from tinytorch.nn.functional._autocast_policy import POLICY as FUNCTIONAL_CUDA_POLICY


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(x, w, b, eps=1e-5):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


# Not on CPU's lists: run in bfloat16 on bfloat16 inputs (CUDA casts them to float32).
# name: (fn, call on (x, w, b), float64 reference on their values); x is (4, 6) bfloat16 in (0.1, 2),
# w and b (6,) float32.
KEEP = {
    "tinytorch.exp": (tt.exp, lambda f, x, w, b: f(x), lambda x, w, b: np.exp(x)),
    "Tensor.exp": (tt.Tensor.exp, lambda f, x, w, b: x.exp(), lambda x, w, b: np.exp(x)),
    "tinytorch.log": (tt.log, lambda f, x, w, b: f(x), lambda x, w, b: np.log(x)),
    "tinytorch.log1p": (tt.log1p, lambda f, x, w, b: f(x), lambda x, w, b: np.log1p(x)),
    "tinytorch.expm1": (tt.expm1, lambda f, x, w, b: f(x), lambda x, w, b: np.expm1(x)),
    "tinytorch.rsqrt": (tt.rsqrt, lambda f, x, w, b: f(x), lambda x, w, b: 1 / np.sqrt(x)),
    "tinytorch.reciprocal": (tt.reciprocal, lambda f, x, w, b: f(x), lambda x, w, b: 1 / x),
    "tinytorch.pow": (tt.pow, lambda f, x, w, b: f(x, 1.5), lambda x, w, b: x ** 1.5),
    "Tensor.__pow__": (tt.Tensor.__pow__, lambda f, x, w, b: x ** 2, lambda x, w, b: x ** 2),
    "tinytorch.softmax": (tt.softmax, lambda f, x, w, b: f(x, -1), lambda x, w, b: _softmax(x)),
    "Tensor.softmax": (tt.Tensor.softmax, lambda f, x, w, b: x.softmax(-1), lambda x, w, b: _softmax(x)),
    "F.softmax": (F.softmax, lambda f, x, w, b: f(x, dim=-1), lambda x, w, b: _softmax(x)),
    "F.log_softmax": (F.log_softmax, lambda f, x, w, b: f(x, dim=-1), lambda x, w, b: np.log(_softmax(x))),
    "tinytorch.logsumexp": (tt.logsumexp, lambda f, x, w, b: f(x, -1),
                            lambda x, w, b: np.log(np.exp(x).sum(-1))),
    "tinytorch.cumsum": (tt.cumsum, lambda f, x, w, b: f(x, -1), lambda x, w, b: np.cumsum(x, -1)),
    "Tensor.norm": (tt.Tensor.norm, lambda f, x, w, b: x.norm(), lambda x, w, b: np.linalg.norm(x)),
    # bfloat16 input with float32 affine parameters, as a LayerNorm module's under autocast
    "F.layer_norm": (F.layer_norm, lambda f, x, w, b: f(x, (6,), w, b), _layer_norm),
    "tinytorch.layer_norm": (tt.layer_norm, lambda f, x, w, b: f(x, (6,), w, b), _layer_norm),
    "F.softplus": (F.softplus, lambda f, x, w, b: f(x), lambda x, w, b: np.log1p(np.exp(x))),
    "F.normalize": (F.normalize, lambda f, x, w, b: f(x, dim=-1),
                    lambda x, w, b: x / np.linalg.norm(x, axis=-1, keepdims=True)),
}


@pytest.mark.parametrize("name", sorted(KEEP))
def test_ops_off_cpu_lists_keep_bfloat16(name):
    fn, call, ref = KEEP[name]
    x, xr = make((4, 6), "bfloat16", low=0.1, high=2.0, seed=1)
    w, wr = make((6,), "float32", seed=2)
    b, br = make((6,), "float32", seed=3)
    assert policy_of(fn, "cpu") is None and policy_of(fn, "cuda") == "fp32"
    with tt.autocast("cpu", dtype=tt.bfloat16):
        out = call(fn, x, w, b)
    assert out.dtype == tt.bfloat16, name
    expected = ref(xr, wr, br)
    assert_close(out, expected, "bfloat16", tol=(1.6e-2, 1.6e-2 * max(1.0, float(np.abs(expected).max()))),
                 what=name)
    assert call(fn, x.float(), w, b).dtype == tt.float32   # outside autocast: the inputs' dtype


# On CPU's lower-precision list: float32 inputs run in bfloat16.
LOWER = {
    "tinytorch.matmul": (tt.matmul, lambda a, w, b: tt.matmul(a, w.t()), lambda a, w, b: a @ w.T),
    "Tensor.__matmul__": (tt.Tensor.__matmul__, lambda a, w, b: a @ w.t(), lambda a, w, b: a @ w.T),
    "tinytorch.mm": (tt.mm, lambda a, w, b: tt.mm(a, w.t()), lambda a, w, b: a @ w.T),
    "F.linear": (F.linear, lambda a, w, b: F.linear(a, w, b), lambda a, w, b: a @ w.T + b),
    "tinytorch.addmm": (tt.addmm, lambda a, w, b: tt.addmm(b, a, w.t()), lambda a, w, b: b + a @ w.T),
    "tinytorch.einsum": (tt.einsum, lambda a, w, b: tt.einsum("ik,jk->ij", a, w), lambda a, w, b: a @ w.T),
    "F.conv1d": (F.conv1d, lambda a, w, b: F.conv1d(a.reshape(1, 4, 8), w.reshape(5, 4, 2)),
                 lambda a, w, b: _conv1d(a.reshape(1, 4, 8), w.reshape(5, 4, 2))),
}


def _conv1d(x, w):
    k = w.shape[-1]
    cols = np.stack([x[0, :, i:i + k] for i in range(x.shape[-1] - k + 1)])   # (L, C, k)
    return np.einsum("lck,ock->ol", cols, w)[None]


@pytest.mark.parametrize("name", sorted(LOWER))
def test_cpu_lower_list_runs_in_bfloat16(name):
    fn, call, ref = LOWER[name]
    a, _ = make((4, 8), "float32", seed=1)
    w, _ = make((5, 8), "float32", "transposed", seed=2)
    b, _ = make((5,), "float32", seed=3)
    assert policy_of(fn, "cpu") == "lower" and policy_of(fn, "cuda") == "lower"
    with tt.autocast("cpu", dtype=tt.bfloat16):
        out = call(a, w, b)
    assert out.dtype == tt.bfloat16, name
    # computed from the bfloat16-rounded inputs
    expected = ref(*(to_numpy(t.to(tt.bfloat16)) for t in (a, w, b)))
    assert_close(out, expected, "bfloat16", tol=(2e-2, 2e-2 * float(np.abs(expected).max())), what=name)


def test_conv2d_and_modules_run_in_bfloat16():
    tt.manual_seed(0)
    conv, lin = nn.Conv2d(2, 3, 3), nn.Linear(12, 4)
    x = tt.randn(1, 2, 4, 4)
    with tt.autocast("cpu", dtype=tt.bfloat16):
        h = conv(x)
        y = lin(h.flatten(1))
    assert h.dtype == tt.bfloat16 and y.dtype == tt.bfloat16
    assert_close(h, conv(x), "bfloat16", tol=(3e-2, 3e-2))


# On CPU's float32 list: bfloat16 inputs run in float32.
def _bf(shape, seed, low=-2.0, high=2.0):
    return make(shape, "bfloat16", low=low, high=high, seed=seed)[0]


FP32 = {
    "mse_loss": lambda: F.mse_loss(_bf((4, 5), 1), _bf((4, 5), 2)),
    "l1_loss": lambda: F.l1_loss(_bf((4, 5), 1), _bf((4, 5), 2)),
    "smooth_l1_loss": lambda: F.smooth_l1_loss(_bf((4, 5), 1), _bf((4, 5), 2)),
    "huber_loss": lambda: F.huber_loss(_bf((4, 5), 1), _bf((4, 5), 2)),
    "cross_entropy": lambda: F.cross_entropy(_bf((4, 5), 1), tt.tensor([0, 3, 1, 4])),
    "nll_loss": lambda: F.nll_loss(_bf((4, 5), 1), tt.tensor([0, 3, 1, 4])),
    "kl_div": lambda: F.kl_div(_bf((4, 5), 1), _bf((4, 5), 2, 0.1, 1.0), reduction="batchmean"),
    "binary_cross_entropy_with_logits": lambda: F.binary_cross_entropy_with_logits(_bf((4, 5), 1),
                                                                                   _bf((4, 5), 2, 0.0, 1.0)),
    "binary_cross_entropy": lambda: F.binary_cross_entropy(_bf((4, 5), 1, 0.05, 0.95), _bf((4, 5), 2, 0.0, 1.0)),
    "multilabel_margin_loss": lambda: F.multilabel_margin_loss(_bf((2, 4), 1), tt.tensor([[3, 0, -1, 1],
                                                                                          [1, -1, 0, 0]])),
    "soft_margin_loss": lambda: F.soft_margin_loss(_bf((4, 5), 1), _bf((4, 5), 2).sign()),
    "margin_ranking_loss": lambda: F.margin_ranking_loss(_bf((6,), 1), _bf((6,), 2), _bf((6,), 3).sign()),
    "cdist": lambda: tt.cdist(_bf((3, 4), 1), _bf((2, 4), 2)),
    "max_pool3d": lambda: F.max_pool3d(_bf((1, 1, 4, 4, 4), 1), 2),
    "avg_pool3d": lambda: F.avg_pool3d(_bf((1, 1, 4, 4, 4), 1), 2),
    "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(_bf((1, 1, 4, 4, 4), 1), 2),
}


@pytest.mark.parametrize("name", sorted(FP32))
def test_cpu_fp32_list_runs_in_float32(name):
    assert CPU_POLICY[name] == "fp32"
    with tt.autocast("cpu", dtype=tt.bfloat16):
        out = FP32[name]()
    assert out.dtype == tt.float32, name
    assert_close(out, FP32[name]().float(), "bfloat16")   # the value of the bfloat16 computation, to its precision


def test_mse_loss_value_and_gradient_dtypes():
    a, ar = make((4, 5), "bfloat16", seed=1, requires_grad=True)
    b, br = make((4, 5), "bfloat16", seed=2)
    with tt.autocast("cpu", dtype=tt.bfloat16):
        loss = F.mse_loss(a, b)
    assert loss.dtype == tt.float32
    assert_close(loss, ((ar - br) ** 2).mean(), "float32")
    loss.backward()
    assert a.grad.dtype == tt.bfloat16   # back in the argument's dtype
    assert_close(a.grad, 2 * (ar - br) / ar.size, "bfloat16")


def test_model_step_under_cpu_autocast():
    tt.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.Softmax(-1))
    x = tt.randn(3, 6)
    with tt.autocast("cpu", dtype=tt.bfloat16):
        h = m[0](x)
        y = m(x)
        loss = F.cross_entropy(h, tt.tensor([0, 5, 7]))
    assert h.dtype == tt.bfloat16 and y.dtype == tt.bfloat16 and loss.dtype == tt.float32
    assert_close(y, m(x), "bfloat16", tol=(3e-2, 3e-2))
    (loss + y.float().sum()).backward()
    assert all(p.grad.dtype == tt.float32 for p in m.parameters())


def test_cuda_policy_is_the_schema_column():
    # every nn.functional function the schema gives a policy keeps it on CUDA
    for name, policy in FUNCTIONAL_CUDA_POLICY.items():
        assert policy_of(getattr(F, name), "cuda") == policy, name
    for fn in (G.exp, G.log, G.log1p, G.expm1, G.rsqrt, G.reciprocal, G.pow, G.softmax, G.log_softmax,
               G.layer_norm, G.logsumexp, G.cumsum, G.cumprod, G.norm, G.cdist, tt.Tensor.exp,
               tt.Tensor.__pow__, tt.Tensor.softmax):
        assert policy_of(fn, "cuda") == "fp32", fn
    for fn in (G.matmul, G.mm, G.bmm, G.conv1d, G.conv2d, G.addmm, G.baddbmm, G.einsum, tt.Tensor.__matmul__):
        assert policy_of(fn, "cuda") == "lower", fn
    # CPU-only entries add no CUDA cast (CUDA's binary_cross_entropy is not cast)
    assert policy_of(F.binary_cross_entropy, "cuda") is None and policy_of(F.max_pool3d, "cuda") is None
    assert policy_of(F.relu, "cuda") is None and policy_of(F.relu, "cpu") is None   # not wrapped


def test_cuda_region_leaves_cpu_tensors_and_off_costs_nothing():
    x = tt.randn(3, 4).to(tt.bfloat16)
    with tt.autocast("cuda", dtype=tt.bfloat16):   # another device type: CPU tensors untouched
        assert F.mse_loss(x, x).dtype == tt.bfloat16 and tt.exp(x).dtype == tt.bfloat16
    with tt.autocast("cpu", dtype=tt.bfloat16, enabled=False):
        assert F.mse_loss(x, x).dtype == tt.bfloat16
    assert G.exp._autocast_original(x).dtype == tt.bfloat16


def test_policy_survives_torch_function_wrappers():
    """The first Tensor subclass with ``__torch_function__`` (nn's UninitializedParameter, say) rebinds
    tinytorch.<op> to dispatching wrappers; they keep the autocast policy table of the op they wrap."""
    import tinytorch.nn.parameter   # noqa: F401  (defines such a subclass)

    class Traced(tt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    Traced  # noqa: B018
    assert tt.cumsum is not G.cumsum      # a wrapper is installed
    assert policy_of(tt.cumsum, "cuda") == "fp32" and policy_of(tt.cumsum, "cpu") is None
    assert policy_of(tt.matmul, "cpu") == policy_of(G.matmul, "cpu") == "lower"
