"""tinytorch.distributions, randomness and derivatives: samples follow their distribution
(Kolmogorov-Smirnov against scipy.stats, chi-square for discrete ones, each with a check that a
slightly wrong sampler would fail, fixed seeds), rsample and log_prob/entropy gradients by
finite differences, kl_divergence against Monte Carlo estimates and torch, and transforms
(inverses, log det Jacobians by finite differences, TransformedDistribution)."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import distributions as D
from tinytorch.autograd import gradcheck

from support.numeric import assert_close
from support.sampling_stats import assert_matches

st = pytest.importorskip("scipy.stats")
F64 = tt.float64
N = 20_000


def _t(*v, dtype=F64):
    return tt.tensor(list(v) if len(v) > 1 else v[0], dtype=dtype)


def _ks(samples, frozen, what):
    """The samples pass a KS test against frozen (p > 1e-4, fixed seed), and the same samples
    shifted by 10% of a standard deviation fail it: the test has the power to see a small bias."""
    samples = np.asarray(samples, dtype=np.float64).ravel()
    p = st.kstest(samples, frozen.cdf).pvalue
    assert p > 1e-4, f"{what}: KS p-value {p:.2e}"
    assert st.kstest(samples + 0.1 * frozen.std(), frozen.cdf).pvalue < 1e-4, f"{what}: KS has no power at N={N}"


CONTINUOUS = [
    ("Normal", lambda dt: D.Normal(_t(0.5, dtype=dt), _t(2.0, dtype=dt)), st.norm(0.5, 2.0)),
    ("LogNormal", lambda dt: D.LogNormal(_t(0.2, dtype=dt), _t(0.5, dtype=dt)), st.lognorm(s=0.5, scale=math.exp(0.2))),
    ("Uniform", lambda dt: D.Uniform(_t(-1.0, dtype=dt), _t(3.0, dtype=dt)), st.uniform(-1.0, 4.0)),
    ("Exponential", lambda dt: D.Exponential(_t(1.5, dtype=dt)), st.expon(scale=1 / 1.5)),
    ("Laplace", lambda dt: D.Laplace(_t(1.0, dtype=dt), _t(0.7, dtype=dt)), st.laplace(1.0, 0.7)),
    ("Gamma", lambda dt: D.Gamma(_t(2.5, dtype=dt), _t(2.0, dtype=dt)), st.gamma(2.5, scale=0.5)),
    ("Gamma_small", lambda dt: D.Gamma(_t(0.3, dtype=dt), _t(1.0, dtype=dt)), st.gamma(0.3)),
    ("Beta", lambda dt: D.Beta(_t(2.0, dtype=dt), _t(5.0, dtype=dt)), st.beta(2.0, 5.0)),
    ("Beta_small", lambda dt: D.Beta(_t(0.5, dtype=dt), _t(0.8, dtype=dt)), st.beta(0.5, 0.8)),
    ("Tanh(Normal)", lambda dt: D.TransformedDistribution(D.Normal(_t(0.0, dtype=dt), _t(1.0, dtype=dt)),
                                                          [D.AffineTransform(2.0, -3.0)]), st.norm(2.0, 3.0)),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, build, frozen", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_samples_follow_the_distribution(name, build, frozen, dtype):
    tt.manual_seed(10)
    d = build(getattr(tt, dtype))
    s = d.sample((N,))
    assert s.dtype == getattr(tt, dtype) and tuple(s.shape) == (N,) and not s.requires_grad
    _ks(s.double().numpy(), frozen, name)
    if d.has_rsample:
        tt.manual_seed(11)
        _ks(d.rsample((N,)).detach().double().numpy(), frozen, name + " rsample")


def test_dirichlet_and_mvn_samples():
    tt.manual_seed(12)
    conc = np.array([0.7, 2.0, 3.5])
    s = D.Dirichlet(tt.tensor(conc)).sample((N,)).numpy()
    np.testing.assert_allclose(s.sum(-1), 1.0, rtol=1e-12)
    for k in range(3):      # each marginal is Beta(c_k, sum - c_k)
        _ks(s[:, k], st.beta(conc[k], conc.sum() - conc[k]), f"Dirichlet marginal {k}")
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    loc = np.array([1.0, -1.0, 0.5])
    x = D.MultivariateNormal(tt.tensor(loc), covariance_matrix=tt.tensor(cov)).sample((N,)).numpy()
    for w in (np.array([1.0, 0.0, 0.0]), np.array([0.3, -1.0, 2.0])):     # projections are normal
        _ks(x @ w, st.norm(w @ loc, math.sqrt(w @ cov @ w)), f"MVN projection {w}")


@pytest.mark.parametrize("name, dist, probs", [
    ("Bernoulli", lambda: D.Bernoulli(_t(0.3)), np.array([0.7, 0.3])),
    ("Binomial", lambda: D.Binomial(6, _t(0.35)), st.binom(6, 0.35).pmf(np.arange(7))),
    ("Binomial_logits", lambda: D.Binomial(_t(4.0), logits=_t(-0.5)),
     st.binom(4, 1 / (1 + math.e ** 0.5)).pmf(np.arange(5))),
    ("Categorical", lambda: D.Categorical(_t(0.1, 0.2, 0.3, 0.4)), np.array([0.1, 0.2, 0.3, 0.4])),
])
def test_discrete_samples_follow_the_distribution(name, dist, probs):
    tt.manual_seed(13)
    s = dist().sample((100_000,)).numpy().astype(np.int64)
    assert_matches(np.bincount(s, minlength=len(probs)), probs, name)
    tt.manual_seed(14)
    one_hot = D.OneHotCategorical(_t(0.1, 0.2, 0.3, 0.4)).sample((100_000,)).numpy()
    assert (one_hot.sum(-1) == 1).all()
    assert_matches(one_hot.sum(0).astype(np.int64), np.array([0.1, 0.2, 0.3, 0.4]), "OneHotCategorical")


def test_seed_reproducible():
    for build in (lambda: D.Normal(_t(0.0), _t(1.0)), lambda: D.Gamma(_t(0.5), _t(1.0)),
                  lambda: D.Categorical(_t(0.5, 0.5))):
        tt.manual_seed(3)
        a = build().sample((50,)).numpy()
        tt.manual_seed(3)
        np.testing.assert_array_equal(a, build().sample((50,)).numpy())


# --- gradients --------------------------------------------------------------------------------
def _seeded(fn):
    def run(*args):
        tt.manual_seed(21)          # the same noise on every evaluation of the finite differences
        return fn(*args)
    return run


def _leaf(*v):
    return tt.tensor(list(v), dtype=F64, requires_grad=True)


RSAMPLE = [
    ("Normal", lambda a, b: D.Normal(a, b), (_leaf(0.3, -1.0), _leaf(0.8, 1.5))),
    ("LogNormal", lambda a, b: D.LogNormal(a, b), (_leaf(0.3, -1.0), _leaf(0.8, 1.5))),
    ("Uniform", lambda a, b: D.Uniform(a, a + b), (_leaf(0.3, -1.0), _leaf(0.8, 1.5))),
    ("Exponential", lambda a: D.Exponential(a), (_leaf(0.7, 2.0),)),
    ("Laplace", lambda a, b: D.Laplace(a, b), (_leaf(0.3, -1.0), _leaf(0.8, 1.5))),
    ("Independent", lambda a, b: D.Independent(D.Normal(a, b), 1), (_leaf(0.3, -1.0), _leaf(0.8, 1.5))),
    ("Sigmoid(Normal)", lambda a, b: D.TransformedDistribution(D.Normal(a, b), [D.SigmoidTransform()]),
     (_leaf(0.3, -1.0), _leaf(0.8, 1.5))),
    ("MVN scale_tril", lambda m, l: D.MultivariateNormal(m, scale_tril=l.tril() + 2 * tt.eye(2, dtype=F64)),
     (_leaf(0.3, -1.0), tt.tensor([[0.5, 0.0], [0.4, 0.2]], dtype=F64, requires_grad=True))),
    ("MVN covariance", lambda m, a: D.MultivariateNormal(m, covariance_matrix=a @ a.mT + tt.eye(2, dtype=F64)),
     (_leaf(0.3, -1.0), tt.tensor([[0.5, 0.1], [0.4, 0.2]], dtype=F64, requires_grad=True))),
    ("MVN precision", lambda m, a: D.MultivariateNormal(m, precision_matrix=a @ a.mT + tt.eye(2, dtype=F64)),
     (_leaf(0.3, -1.0), tt.tensor([[0.5, 0.1], [0.4, 0.2]], dtype=F64, requires_grad=True))),
]


@pytest.mark.parametrize("name, build, params", RSAMPLE, ids=[c[0] for c in RSAMPLE])
def test_rsample_gradients_by_finite_differences(name, build, params):
    assert build(*params).has_rsample
    assert gradcheck(_seeded(lambda *p: build(*p).rsample((3,))), params)
    # log_prob of fixed values and the entropy (where it exists) differentiate too
    tt.manual_seed(22)
    value = build(*params).sample((2,))
    assert gradcheck(lambda *p: build(*p).log_prob(value), params)
    if name != "Sigmoid(Normal)":               # a TransformedDistribution has no entropy
        assert gradcheck(lambda *p: build(*p).entropy(), params)


SPECIAL_GRADS = [      # log_prob / entropy through the composite lgamma and digamma
    ("Gamma", lambda a, b: D.Gamma(a, b), (_leaf(0.3, 2.5), _leaf(0.8, 1.5)), _t(0.4, 2.0)),
    ("Beta", lambda a, b: D.Beta(a, b), (_leaf(0.3, 2.5), _leaf(0.8, 1.5)), _t(0.4, 0.9)),
    ("Dirichlet", lambda a: D.Dirichlet(a), (_leaf(0.3, 2.5, 1.2),), _t(0.2, 0.3, 0.5)),
    ("Binomial", lambda p: D.Binomial(5, logits=p), (_leaf(0.3, -1.5),), _t(2.0, 5.0)),
    ("Categorical", lambda p: D.Categorical(logits=p), (_leaf(0.3, -1.5, 0.2),), tt.tensor([0, 2])),
    ("Bernoulli", lambda p: D.Bernoulli(probs=p), (_leaf(0.3, 0.6),), _t(0.0, 1.0)),
]


@pytest.mark.parametrize("name, build, params, value", SPECIAL_GRADS, ids=[c[0] for c in SPECIAL_GRADS])
def test_log_prob_and_entropy_gradients(name, build, params, value):
    assert gradcheck(lambda *p: build(*p).log_prob(value), params)
    assert gradcheck(lambda *p: build(*p).entropy(), params)


@pytest.mark.parametrize("build", [lambda: D.Categorical(_t(0.5, 0.5)), lambda: D.Bernoulli(_t(0.5)),
                                   lambda: D.Binomial(3, _t(0.5)), lambda: D.OneHotCategorical(_t(0.5, 0.5))])
def test_no_rsample_says_so(build):
    d = build()
    assert d.has_rsample is False
    with pytest.raises(NotImplementedError, match="does not support reparameterized sampling"):
        d.rsample()


def test_gamma_implicit_gradient_against_scipy():
    # dx/dalpha at a fixed quantile u: central differences of scipy's inverse incomplete gamma
    sp = pytest.importorskip("scipy.special")
    from tinytorch.distributions._gamma_sampler import standard_gamma_grad
    a = np.array([0.05, 0.3, 1.0, 2.5, 10.0, 50.0, 300.0, 300.0, 5.0])
    x = np.array([1e-5, 0.2, 1.3, 0.7, 12.0, 45.0, 330.0, 260.0, 9.0])
    u, h = sp.gammainc(a, x), 1e-6 * a
    fd = (sp.gammaincinv(a + h, u) - sp.gammaincinv(a - h, u)) / (2 * h)
    np.testing.assert_allclose(standard_gamma_grad(tt.tensor(a), tt.tensor(x)).numpy(), fd, rtol=1e-7)


@pytest.mark.parametrize("name, build, params, expected", [
    # d/dparams of E[x], estimated by the mean of the pathwise gradients of rsample
    ("Gamma", lambda a, r: D.Gamma(a, r), (_leaf(0.4, 3.0), _leaf(2.0, 0.5)), ([0.5, 2.0], [-0.1, -12.0])),
    ("Beta", lambda a, b: D.Beta(a, b), (_leaf(0.4, 3.0), _leaf(2.0, 0.5)),
     ([2.0 / 2.4 ** 2, 0.5 / 3.5 ** 2], [-0.4 / 2.4 ** 2, -3.0 / 3.5 ** 2])),
    ("Dirichlet", lambda a: D.Dirichlet(a), (_leaf(0.4, 3.0, 1.6),), ([4.6 / 25, -0.4 / 25, -0.4 / 25],)),
])
def test_gamma_family_rsample_gradients(name, build, params, expected):
    tt.manual_seed(23)
    d = build(*params)
    assert d.has_rsample
    x = d.rsample((20_000,))
    first = x[..., 0] if name == "Dirichlet" else x          # Dirichlet: d E[x_0] / d alpha
    grads = [g.numpy() for g in tt.autograd.grad(first.mean(0).sum(), params)]
    for g, want in zip(grads, expected):
        np.testing.assert_allclose(g, want, rtol=0.05, atol=2e-3)
    assert not np.allclose(grads[0], np.asarray(expected[0]) * 1.2, rtol=0.05, atol=2e-3)


def test_icdf_and_cdf_gradients():
    # Normal.icdf goes through erfinv, whose derivative is sqrt(pi)/2 exp(erfinv(y)^2)
    q = tt.tensor([0.01, 0.3, 0.5, 0.97], dtype=F64, requires_grad=True)
    assert gradcheck(lambda v: D.Normal(_t(0.5), _t(2.0)).icdf(v), (q,))
    # Gamma.cdf: the incomplete gamma series, differentiable in the value and both parameters
    params = (_leaf(0.3, 2.5, 40.0), _leaf(0.8, 1.5, 2.0), _leaf(0.5, 1.0, 22.0))
    assert gradcheck(lambda a, r, v: D.Gamma(a, r).cdf(v), params)


# --- KL divergence ----------------------------------------------------------------------------
KL_PAIRS = [
    ("Normal", lambda: D.Normal(_t(0.3, -1.0), _t(0.8, 1.5)), lambda: D.Normal(_t(-0.2, 0.5), _t(1.2, 0.7))),
    ("Laplace", lambda: D.Laplace(_t(0.3, -1.0), _t(0.8, 1.5)), lambda: D.Laplace(_t(-0.2, 0.5), _t(1.2, 0.7))),
    ("Exponential", lambda: D.Exponential(_t(0.8, 1.5)), lambda: D.Exponential(_t(1.2, 0.7))),
    ("Gamma", lambda: D.Gamma(_t(2.0, 0.7), _t(0.8, 1.5)), lambda: D.Gamma(_t(1.3, 1.1), _t(1.2, 0.7))),
    ("Beta", lambda: D.Beta(_t(2.0, 0.7), _t(0.8, 1.5)), lambda: D.Beta(_t(1.3, 1.1), _t(1.2, 0.7))),
    ("Uniform", lambda: D.Uniform(_t(0.0, -1.0), _t(1.0, 0.5)), lambda: D.Uniform(_t(-1.0, -2.0), _t(2.0, 1.0))),
    ("Bernoulli", lambda: D.Bernoulli(_t(0.3, 0.9)), lambda: D.Bernoulli(_t(0.6, 0.5))),
    ("Binomial", lambda: D.Binomial(6, _t(0.3, 0.9)), lambda: D.Binomial(6, _t(0.6, 0.5))),
    ("Categorical", lambda: D.Categorical(_t(0.2, 0.3, 0.5)), lambda: D.Categorical(_t(0.4, 0.4, 0.2))),
    ("OneHotCategorical", lambda: D.OneHotCategorical(_t(0.2, 0.3, 0.5)),
     lambda: D.OneHotCategorical(_t(0.4, 0.4, 0.2))),
    ("Dirichlet", lambda: D.Dirichlet(_t(2.0, 0.7, 1.5)), lambda: D.Dirichlet(_t(1.0, 1.3, 0.6))),
    ("MultivariateNormal",
     lambda: D.MultivariateNormal(_t(0.3, -1.0), covariance_matrix=tt.tensor([[1.0, 0.3], [0.3, 0.5]], dtype=F64)),
     lambda: D.MultivariateNormal(_t(0.0, 0.5), scale_tril=tt.tensor([[1.5, 0.0], [-0.4, 0.8]], dtype=F64))),
    ("Independent", lambda: D.Independent(D.Normal(_t(0.3, -1.0), _t(0.8, 1.5)), 1),
     lambda: D.Independent(D.Normal(_t(-0.2, 0.5), _t(1.2, 0.7)), 1)),
    ("LogNormal", lambda: D.LogNormal(_t(0.3, -1.0), _t(0.8, 1.5)), lambda: D.LogNormal(_t(-0.2, 0.5), _t(1.2, 0.7))),
]


@pytest.mark.parametrize("name, p, q", KL_PAIRS, ids=[c[0] for c in KL_PAIRS])
def test_kl_against_monte_carlo(name, p, q):
    p, q = p(), q()
    kl = D.kl_divergence(p, q).numpy()
    tt.manual_seed(30)
    x = p.sample((100_000,))
    ratio = (p.log_prob(x) - q.log_prob(x)).numpy()
    estimate, se = ratio.mean(0), ratio.std(0) / math.sqrt(len(ratio))
    # 1e-9: the summation error of a constant ratio (Uniform)
    assert np.all(np.abs(kl - estimate) < 5 * se + 1e-9), (kl, estimate, se)
    assert np.all(kl >= 0) and kl.shape == tuple(p.batch_shape)
    np.testing.assert_allclose(D.kl_divergence(p, p).numpy(), 0.0, atol=1e-12)


@pytest.mark.parametrize("name, p, q", KL_PAIRS, ids=[c[0] for c in KL_PAIRS])
def test_kl_against_torch(name, p, q):
    torch = pytest.importorskip("torch")
    TD = torch.distributions

    def to_torch(d):
        cls = getattr(TD, type(d).__name__)
        t = lambda v: torch.tensor(v.numpy())               # noqa: E731
        if isinstance(d, D.Independent):
            return TD.Independent(to_torch(d.base_dist), d.reinterpreted_batch_ndims)
        if isinstance(d, D.MultivariateNormal):
            return cls(t(d.loc), scale_tril=t(d.scale_tril))
        if isinstance(d, D.Binomial):
            return cls(t(d.total_count), probs=t(d.probs))
        if isinstance(d, D.OneHotCategorical):
            return cls(probs=t(d.probs))
        names = [k for k in d.arg_constraints if k in d.__dict__ and k != "logits"] or ["loc", "scale"]
        return cls(*[t(getattr(d, k)) for k in names])
    p, q = p(), q()
    assert_close(D.kl_divergence(p, q), TD.kl_divergence(to_torch(p), to_torch(q)).numpy(), what=name)


def test_kl_infinite_and_registry():
    assert np.isinf(D.kl_divergence(D.Uniform(_t(0.0), _t(2.0)), D.Uniform(_t(0.5), _t(3.0))).numpy()).all()
    assert np.isinf(D.kl_divergence(D.Bernoulli(_t(0.5)), D.Bernoulli(_t(0.0))).numpy()).all()
    assert D.kl_divergence(D.Bernoulli(_t(0.0)), D.Bernoulli(_t(0.5))).item() == pytest.approx(math.log(2))
    no_kl = r"No KL\(p \|\| q\) is implemented for p type Normal and q type Gamma"
    with pytest.raises(NotImplementedError, match=no_kl):
        D.kl_divergence(D.Normal(_t(0.0), _t(1.0)), D.Gamma(_t(1.0), _t(1.0)))

    class MyNormal(D.Normal):
        pass
    # a subclass inherits the parent's pair, until a more specific one is registered
    assert D.kl_divergence(MyNormal(_t(0.0), _t(1.0)), D.Normal(_t(1.0), _t(1.0))).item() == pytest.approx(0.5)

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return p.loc * 0 + 42.0
    assert D.kl_divergence(MyNormal(_t(0.0), _t(1.0)), D.Normal(_t(1.0), _t(1.0))).item() == 42.0
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)
    loc = tt.tensor([0.3], dtype=F64, requires_grad=True)         # gradients flow through KL
    assert gradcheck(lambda m: D.kl_divergence(D.Normal(m, _t(0.5)), D.Normal(_t(0.0), _t(1.0))), (loc,))


# --- transforms -------------------------------------------------------------------------------
TRANSFORMS = [
    ("Exp", D.ExpTransform(), (-2.0, 2.0)),
    ("Affine", D.AffineTransform(1.5, -0.7), (-2.0, 2.0)),
    ("AffineTensor", D.AffineTransform(_t(1.0, 2.0, 3.0), _t(0.5, -2.0, 3.0)), (-2.0, 2.0)),
    ("Sigmoid", D.SigmoidTransform(), (-4.0, 4.0)),
    ("Tanh", D.TanhTransform(), (-3.0, 3.0)),
    ("Compose", D.ComposeTransform([D.AffineTransform(0.5, 2.0), D.TanhTransform(), D.AffineTransform(1.0, 3.0)]),
     (-1.0, 1.0)),
]


@pytest.mark.parametrize("name, t, domain", TRANSFORMS, ids=[c[0] for c in TRANSFORMS])
def test_transform_inverse_and_jacobian(name, t, domain):
    x = tt.tensor(np.linspace(domain[0], domain[1], 3), dtype=F64)
    y = t(x)
    assert_close(t.inv(y), x.numpy(), what="inverse")
    assert t.inv.inv is t and t.bijective
    h = 1e-6       # log |dy/dx| by central differences (elementwise transforms)
    fd = np.log(np.abs((t(x + h) - t(x - h)).numpy() / (2 * h)))
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).numpy(), fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(t.inv.log_abs_det_jacobian(y, x).numpy(), -fd, rtol=1e-6, atol=1e-6)


def test_transformed_distribution_log_prob_cdf():
    base = D.Normal(_t(0.2, -0.3), _t(0.9, 0.5))
    d = D.TransformedDistribution(base, [D.AffineTransform(0.5, -2.0), D.TanhTransform()])
    assert d.support.check(_t(0.5, -0.99)).all() and not d.support.check(_t(1.5)).all()
    y = _t(0.3, -0.8)
    # change of variables by hand: y = tanh(0.5 - 2 x)
    x = (0.5 - np.arctanh(y.numpy())) / 2.0
    ref = st.norm([0.2, -0.3], [0.9, 0.5]).logpdf(x) - np.log(2.0 * (1 - y.numpy() ** 2))
    assert_close(d.log_prob(y), ref)
    # a decreasing chain: P(Y <= y) = 1 - P(X <= x)
    assert_close(d.cdf(y), 1 - st.norm([0.2, -0.3], [0.9, 0.5]).cdf(x))
    assert_close(d.icdf(d.cdf(y)), y.numpy())
    soft = D.SoftmaxTransform()(tt.tensor([[1.0, 2.0, 0.5]], dtype=F64))
    np.testing.assert_allclose(soft.sum(-1).numpy(), 1.0)
    with pytest.raises(NotImplementedError):
        D.SoftmaxTransform().log_abs_det_jacobian(soft, soft)
    cached = D.ExpTransform().with_cache(1)
    x = _t(0.5, 1.0)
    assert cached.inv(cached(x)) is x
