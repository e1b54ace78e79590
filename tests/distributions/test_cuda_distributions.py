"""tinytorch.distributions on CUDA: parameters on the GPU give samples, log_probs, entropies and
KL divergences on the GPU equal to the CPU's (the same composite ops; samples come from the
same Philox streams, so seeded draws agree up to last-ulp differences of log/exp)."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import distributions as D

from support.cuda_helpers import seeded_on_both

pytestmark = pytest.mark.cuda
F64 = tt.float64


def _pair(build, seed=5):
    """build(device) evaluated on the CPU and on the GPU after the same seed, as numpy arrays."""
    cpu, gpu = seeded_on_both(build, seed)
    return cpu.detach().numpy(), gpu.detach().cpu().numpy()


def _t(v, device):
    return tt.tensor(v, dtype=F64, device=device)


CASES = [
    ("Normal", lambda d: D.Normal(_t([0.3, -1.0], d), _t([0.8, 1.5], d))),
    ("Laplace", lambda d: D.Laplace(_t([0.3, -1.0], d), _t([0.8, 1.5], d))),
    ("Exponential", lambda d: D.Exponential(_t([0.8, 1.5], d))),
    ("Uniform", lambda d: D.Uniform(_t([0.3, -1.0], d), _t([0.8, 1.5], d))),
    ("LogNormal", lambda d: D.LogNormal(_t([0.3, -1.0], d), _t([0.8, 1.5], d))),
    ("MultivariateNormal", lambda d: D.MultivariateNormal(_t([0.3, -1.0], d),
                                                          covariance_matrix=_t([[1.0, 0.3], [0.3, 0.5]], d))),
]


@pytest.mark.parametrize("name, build", CASES, ids=[c[0] for c in CASES])
def test_rsample_log_prob_match_cpu(name, build):
    c, g = _pair(lambda dev: build(dev).rsample((1000,)))
    np.testing.assert_allclose(g, c, rtol=1e-9, atol=1e-12)
    c, g = _pair(lambda dev: build(dev).log_prob(tt.tensor(c, device=dev)))
    np.testing.assert_allclose(g, c, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("build, mean", [
    (lambda d: D.Gamma(_t([0.3, 2.5], d), _t([1.0, 2.0], d)), [0.3, 1.25]),
    (lambda d: D.Dirichlet(_t([0.5, 1.0, 4.0], d)), [0.5 / 5.5, 1.0 / 5.5, 4.0 / 5.5]),
    (lambda d: D.Categorical(_t([0.1, 0.2, 0.7], d)), 1.6),          # E[index] = 0.2 + 2 * 0.7
    (lambda d: D.Binomial(5, _t([0.3, 0.8], d)), [1.5, 4.0]),
    (lambda d: D.Bernoulli(_t([0.3, 0.8], d)), [0.3, 0.8]),
])
def test_samplers_on_gpu(build, mean):
    tt.manual_seed(1)
    s = build("cuda").sample((20000,))
    assert s.device.type == "cuda"
    np.testing.assert_allclose(s.double().cpu().numpy().mean(0), mean, rtol=0.05)


def test_kl_and_entropy_match_cpu():
    def build(d):
        return D.Beta(_t([2.0, 0.7], d), _t([0.8, 1.5], d)), D.Beta(_t([1.3, 1.1], d), _t([1.2, 0.7], d))
    c, g = _pair(lambda dev: D.kl_divergence(*build(dev)))
    np.testing.assert_allclose(g, c, rtol=1e-12)
    c, g = _pair(lambda dev: build(dev)[0].entropy())
    np.testing.assert_allclose(g, c, rtol=1e-12)
