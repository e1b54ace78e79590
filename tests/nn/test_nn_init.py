"""nn.init formulas and the default initialisation of layers, checked statistically on ~10^5 samples
(loose tolerances), plus seeding and gains."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.nn import init
from support.numeric import to_numpy

SQ3 = math.sqrt(3.0)


def check_uniform(a, bound, what=""):
    a = np.asarray(a, dtype=np.float64).ravel()
    assert a.size >= 1000, what
    assert np.abs(a).max() <= bound * (1 + 1e-6), what
    assert np.abs(a).max() > 0.98 * bound, what  # reaches the ends
    assert abs(a.mean()) < 0.02 * bound * math.sqrt(1e5 / a.size) + 1e-12, what
    np.testing.assert_allclose(a.std(), bound / SQ3, rtol=0.03, err_msg=what)


def check_normal(a, mean, std, what=""):
    a = np.asarray(a, dtype=np.float64).ravel()
    assert abs(a.mean() - mean) < 0.02 * std * math.sqrt(1e5 / a.size), what
    np.testing.assert_allclose(a.std(), std, rtol=0.03, err_msg=what)
    # a normal, not a uniform: about 4.55% of samples beyond 2 sigma
    assert 0.035 < (np.abs(a - mean) > 2 * std).mean() < 0.056, what


@pytest.fixture(autouse=True)
def _seed():
    tt.manual_seed(1234)


# ------------------------------------------------------------------ functions

def test_calculate_gain_and_fans():
    assert init.calculate_gain("linear") == 1.0
    assert init.calculate_gain("conv2d") == 1.0
    assert init.calculate_gain("sigmoid") == 1.0
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == pytest.approx(math.sqrt(1 / 3))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError):
        init.calculate_gain("swishy")
    assert init._calculate_fan_in_and_fan_out(tt.empty(8, 3, 5, 5)) == (75, 200)
    with pytest.raises(ValueError):
        init._calculate_fan_in_and_fan_out(tt.empty(4))


def test_uniform_normal_constant():
    t = tt.empty(100_000)
    a = to_numpy(init.uniform_(t, -2.0, 4.0))
    assert a.min() >= -2.0 and a.max() <= 4.0
    np.testing.assert_allclose([a.mean(), a.std()], [1.0, 6 / math.sqrt(12)], rtol=0.02)
    check_normal(to_numpy(init.normal_(t, 3.0, 0.5)), 3.0, 0.5)
    assert np.all(to_numpy(init.constant_(t, 2.5)) == 2.5)
    assert np.all(to_numpy(init.zeros_(t)) == 0) and np.all(to_numpy(init.ones_(t)) == 1)
    assert np.array_equal(to_numpy(init.eye_(tt.empty(3, 4))), np.eye(3, 4))


def test_xavier():
    t = tt.empty(300, 400)
    check_uniform(to_numpy(init.xavier_uniform_(t, gain=2.0)), 2.0 * math.sqrt(6 / 700))
    check_normal(to_numpy(init.xavier_normal_(t)), 0.0, math.sqrt(2 / 700))


def test_kaiming():
    t = tt.empty(400, 50, 5)  # fan_in 250, fan_out 2000
    check_uniform(to_numpy(init.kaiming_uniform_(t)), math.sqrt(2.0) * SQ3 / math.sqrt(250))
    check_uniform(to_numpy(init.kaiming_uniform_(t, a=math.sqrt(5))), 1 / math.sqrt(250))
    check_normal(to_numpy(init.kaiming_normal_(t, mode="fan_out", nonlinearity="relu")), 0.0,
                 math.sqrt(2.0 / 2000))
    with pytest.raises(ValueError):
        init.kaiming_uniform_(t, mode="fan_both")


def test_trunc_normal():
    t = tt.empty(100_000)
    a = to_numpy(init.trunc_normal_(t, mean=1.0, std=2.0, a=-1.0, b=4.0))
    assert a.min() >= -1.0 and a.max() <= 4.0
    assert a.min() < -0.95 and a.max() > 3.95
    # moments of N(1, 2^2) truncated to [-1, 4]
    al, be = (-1 - 1) / 2, (4 - 1) / 2
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    Phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    Z = Phi(be) - Phi(al)
    mean = 1 + 2 * (phi(al) - phi(be)) / Z
    var = 4 * (1 + (al * phi(al) - be * phi(be)) / Z - ((phi(al) - phi(be)) / Z) ** 2)
    np.testing.assert_allclose([a.mean(), a.std()], [mean, math.sqrt(var)], rtol=0.02, atol=0.01)
    # the default: N(0, 1) truncated to [-2, 2]
    b = to_numpy(init.trunc_normal_(tt.empty(100_000)))
    assert np.abs(b).max() <= 2.0 and abs(b.mean()) < 0.01
    np.testing.assert_allclose(b.std(), 0.8796, rtol=0.02)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_trunc_normal_vit_init_is_finite_and_normal(dtype):
    # timm/ViT's init: std=0.02 with the default bounds +-2 (absolute, so ~100 sigma): the samples near the
    # ends of the uniform draw go through erfinv near +-1, where a float32 Newton iteration gave NaNs
    tt.manual_seed(0)
    w = to_numpy(init.trunc_normal_(tt.empty(1000, 1000, dtype=getattr(tt, dtype)), std=0.02)).ravel()
    assert np.isfinite(w).all(), f"{np.isnan(w).sum()} NaNs"
    # the sorted samples follow N(0, 0.02^2): Kolmogorov-Smirnov distance to its CDF
    w = np.sort(w.astype(np.float64))
    cdf = 0.5 * (1 + np.vectorize(math.erf)(w / (0.02 * math.sqrt(2))))
    ks = np.max(np.abs(cdf - (np.arange(1, w.size + 1) - 0.5) / w.size))
    assert ks < (0.01 if dtype == "bfloat16" else 0.003), ks
    assert np.abs(w).max() < 0.2   # ~10 sigma at most in 10^6 samples


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 2, 2, 2)])
def test_orthogonal(shape):
    t = tt.empty(*shape)
    q = to_numpy(init.orthogonal_(t, gain=2.0)).reshape(shape[0], -1)
    if q.shape[0] <= q.shape[1]:
        np.testing.assert_allclose(q @ q.T, 4 * np.eye(q.shape[0]), atol=1e-5)
    else:
        np.testing.assert_allclose(q.T @ q, 4 * np.eye(q.shape[1]), atol=1e-5)


def test_seed_reproducible_and_no_grad_on_parameters():
    tt.manual_seed(7)
    a = to_numpy(nn.Linear(10, 10).weight)
    tt.manual_seed(7)
    b = to_numpy(nn.Linear(10, 10).weight)
    np.testing.assert_array_equal(a, b)
    p = nn.Parameter(tt.empty(3, 3))
    init.kaiming_uniform_(p)
    assert p.requires_grad and p.grad_fn is None


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_init_in_low_precision(dtype):
    t = tt.empty(200, 500, dtype=getattr(tt, dtype))
    check_uniform(to_numpy(init.kaiming_uniform_(t, a=math.sqrt(5))), 1 / math.sqrt(500))
    b = to_numpy(init.trunc_normal_(tt.empty(100_000, dtype=getattr(tt, dtype)), std=0.02, a=-0.04, b=0.04))
    assert np.abs(b).max() <= 0.0401
    np.testing.assert_allclose(b.std(), 0.02 * 0.8796, rtol=0.03)


# ------------------------------------------------------------------ default layer initialisation

def test_linear_default_init():
    m = nn.Linear(50, 2000)
    bound = 1 / math.sqrt(50)
    check_uniform(to_numpy(m.weight), bound, "Linear.weight")  # kaiming_uniform(a=sqrt 5)
    check_uniform(to_numpy(m.bias), bound, "Linear.bias")


def test_conv_default_init():
    m = nn.Conv2d(16, 1024, 3)  # fan_in = 144
    bound = 1 / 12
    check_uniform(to_numpy(m.weight), bound, "Conv2d.weight")
    check_uniform(to_numpy(m.bias), bound, "Conv2d.bias")
    c1 = nn.Conv1d(8, 2048, 5, groups=2)  # fan_in = 4 * 5
    check_uniform(to_numpy(c1.weight), 1 / math.sqrt(20), "Conv1d.weight")
    check_uniform(to_numpy(c1.bias), 1 / math.sqrt(20), "Conv1d.bias")


def test_embedding_bilinear_norms_mha_default_init():
    check_normal(to_numpy(nn.Embedding(1000, 100).weight), 0.0, 1.0, "Embedding")
    e = nn.Embedding(1000, 100, padding_idx=3)
    assert np.all(to_numpy(e.weight)[3] == 0)
    bl = nn.Bilinear(20, 30, 200)
    check_uniform(to_numpy(bl.weight), 1 / math.sqrt(20), "Bilinear.weight")
    assert np.abs(to_numpy(bl.bias)).max() <= 1 / math.sqrt(20)
    for m in (nn.LayerNorm(8), nn.GroupNorm(2, 8), nn.BatchNorm2d(8)):
        assert np.all(to_numpy(m.weight) == 1) and np.all(to_numpy(m.bias) == 0)
    assert np.all(to_numpy(nn.RMSNorm(8).weight) == 1)
    bn = nn.BatchNorm1d(8)
    assert np.all(to_numpy(bn.running_mean) == 0) and np.all(to_numpy(bn.running_var) == 1)
    mha = nn.MultiheadAttention(256, 8)  # in_proj: xavier_uniform over (768, 256); biases zero
    check_uniform(to_numpy(mha.in_proj_weight), math.sqrt(6 / (256 + 768)), "in_proj_weight")
    assert np.all(to_numpy(mha.in_proj_bias) == 0) and np.all(to_numpy(mha.out_proj.bias) == 0)
    check_uniform(to_numpy(mha.out_proj.weight), 1 / 16, "out_proj.weight")
