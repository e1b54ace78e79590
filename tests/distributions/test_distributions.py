"""tinytorch.distributions, values: log_prob / cdf / icdf / entropy / mean / mode / variance of
every distribution against scipy.stats (float64 and float32; parameters in transposed, sliced
and expanded layouts, values broadcast against the batch), shapes (batch/event/sample, expand),
and argument/sample validation (PyTorch's ValueErrors). Sampling, gradients, KL divergences and
transforms are in test_distributions_sampling.py."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import distributions as D

from support.numeric import TOL, assert_close, make

st = pytest.importorskip("scipy.stats")

BATCH = (2, 3)
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]


def _values(case, p, rng):
    """Values in the support, shape (4,) + BATCH (sample dims in front of the batch)."""
    return CASES[case]["values"](p, rng, (4,) + BATCH)


# name: params (name -> (low, high) of a uniform draw), build(params) -> distribution,
# ref(params) -> scipy frozen distribution, values(params, rng, shape), what to compare
CASES = {
    "Normal": dict(params={"loc": (-2, 2), "scale": (0.5, 2)}, build=lambda p: D.Normal(p["loc"], p["scale"]),
                   ref=lambda p: st.norm(p["loc"], p["scale"]),
                   values=lambda p, r, s: r.normal(0, 2, s), cdf=True, icdf=True, mode=lambda p: p["loc"]),
    "LogNormal": dict(params={"loc": (-1, 1), "scale": (0.3, 1)}, build=lambda p: D.LogNormal(p["loc"], p["scale"]),
                      ref=lambda p: st.lognorm(s=p["scale"], scale=np.exp(p["loc"])),
                      values=lambda p, r, s: r.uniform(0.1, 5, s), cdf=True, icdf=True,
                      mode=lambda p: np.exp(p["loc"] - p["scale"] ** 2)),
    "Uniform": dict(params={"low": (-2, 0), "high": (0.5, 3)}, build=lambda p: D.Uniform(p["low"], p["high"]),
                    ref=lambda p: st.uniform(p["low"], p["high"] - p["low"]),
                    values=lambda p, r, s: r.uniform(0, 1, s) * (p["high"] - p["low"]) + p["low"], cdf=True, icdf=True),
    "Exponential": dict(params={"rate": (0.5, 3)}, build=lambda p: D.Exponential(p["rate"]),
                        ref=lambda p: st.expon(scale=1 / p["rate"]), values=lambda p, r, s: r.uniform(0, 4, s),
                        cdf=True, icdf=True, mode=lambda p: 0 * p["rate"]),
    "Laplace": dict(params={"loc": (-2, 2), "scale": (0.5, 2)}, build=lambda p: D.Laplace(p["loc"], p["scale"]),
                    ref=lambda p: st.laplace(p["loc"], p["scale"]), values=lambda p, r, s: r.normal(0, 3, s),
                    cdf=True, icdf=True, mode=lambda p: p["loc"]),
    "Gamma": dict(params={"concentration": (0.3, 5), "rate": (0.5, 3)},
                  build=lambda p: D.Gamma(p["concentration"], p["rate"]),
                  ref=lambda p: st.gamma(p["concentration"], scale=1 / p["rate"]),
                  values=lambda p, r, s: r.uniform(0.05, 6, s), cdf=True,
                  mode=lambda p: np.maximum((p["concentration"] - 1) / p["rate"], 0)),
    "Beta": dict(params={"concentration1": (0.3, 4), "concentration0": (0.3, 4)},
                 build=lambda p: D.Beta(p["concentration1"], p["concentration0"]),
                 ref=lambda p: st.beta(p["concentration1"], p["concentration0"]),
                 values=lambda p, r, s: r.uniform(0.02, 0.98, s)),
    "Bernoulli": dict(params={"probs": (0.05, 0.95)}, build=lambda p: D.Bernoulli(probs=p["probs"]),
                      ref=lambda p: st.bernoulli(p["probs"]), values=lambda p, r, s: r.integers(0, 2, s).astype(float),
                      discrete=True),
    "Bernoulli_logits": dict(params={"logits": (-3, 3)}, build=lambda p: D.Bernoulli(logits=p["logits"]),
                             ref=lambda p: st.bernoulli(1 / (1 + np.exp(-p["logits"]))),
                             values=lambda p, r, s: r.integers(0, 2, s).astype(float), discrete=True),
    "Binomial": dict(params={"probs": (0.05, 0.95)}, build=lambda p: D.Binomial(7, probs=p["probs"]),
                     ref=lambda p: st.binom(7, p["probs"]), values=lambda p, r, s: r.integers(0, 8, s).astype(float),
                     discrete=True, mode=lambda p: np.minimum(np.floor(8 * p["probs"]), 7)),
}


def _params(case, dtype, layout, seed=0):
    spec = CASES[case]["params"]
    tensors, refs = {}, {}
    for i, (name, (lo, hi)) in enumerate(spec.items()):
        tensors[name], refs[name] = make(BATCH, dtype, layout, lo, hi, seed=seed + i)
    return tensors, refs


def _logpdf(frozen, x, discrete):
    return frozen.logpmf(x) if discrete else frozen.logpdf(x)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", list(CASES))
def test_values_against_scipy(case, dtype, layout):
    c = CASES[case]
    params, ref_params = _params(case, dtype, layout)
    d = c["build"](params)
    frozen = c["ref"](ref_params)
    rng = np.random.default_rng(1)
    x = _values(case, ref_params, rng)
    xt = tt.tensor(x, dtype=getattr(tt, dtype))
    x = xt.double().numpy()                       # the values really held in dtype
    assert d.batch_shape == tt.Size(BATCH) and d.event_shape == tt.Size([])
    lp = d.log_prob(xt)
    assert lp.dtype == getattr(tt, dtype) and tuple(lp.shape) == (4,) + BATCH
    assert_close(lp, _logpdf(frozen, x, c.get("discrete", False)), what=f"{case} log_prob")
    assert_close(d.entropy(), frozen.entropy(), what=f"{case} entropy")
    assert_close(d.mean, frozen.mean(), what=f"{case} mean")
    assert_close(d.variance, frozen.var(), what=f"{case} variance")
    assert_close(d.stddev, frozen.std(), what=f"{case} stddev")
    if "mode" in c:
        assert_close(d.mode, c["mode"](ref_params), what=f"{case} mode")
    if c.get("cdf"):
        assert_close(d.cdf(xt), frozen.cdf(x), what=f"{case} cdf")
    if c.get("icdf"):
        q = np.linspace(0.02, 0.98, 4)[:, None, None] * np.ones(BATCH)
        assert_close(d.icdf(tt.tensor(q, dtype=getattr(tt, dtype))), frozen.ppf(q), what=f"{case} icdf")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("by", ["probs", "logits"])
def test_categorical_against_numpy(dtype, by):
    rng = np.random.default_rng(2)
    raw = rng.uniform(0.1, 2.0, (2, 3, 5))
    probs = raw / raw.sum(-1, keepdims=True)
    p = tt.tensor(raw if by == "probs" else np.log(raw) + 3.0, dtype=getattr(tt, dtype))
    probs = (p.double().numpy() / p.double().numpy().sum(-1, keepdims=True) if by == "probs"
             else np.exp(p.double().numpy()) / np.exp(p.double().numpy()).sum(-1, keepdims=True))
    d = D.Categorical(**{by: p})
    assert d.batch_shape == tt.Size([2, 3]) and d.event_shape == tt.Size([])
    value = rng.integers(0, 5, (4, 2, 3))
    lp = d.log_prob(tt.tensor(value))
    assert_close(lp, np.log(np.take_along_axis(np.broadcast_to(probs, (4, 2, 3, 5)), value[..., None], -1)[..., 0]),
                 dtype=dtype)
    assert_close(d.entropy(), -(probs * np.log(probs)).sum(-1), dtype=dtype)
    assert_close(d.probs, probs, dtype=dtype)
    assert_close(d.logits, np.log(probs), dtype=dtype)
    np.testing.assert_array_equal(d.mode.numpy(), probs.argmax(-1))
    assert np.isnan(d.mean.double().numpy()).all()
    support = d.enumerate_support()
    assert tuple(support.shape) == (5, 2, 3)
    one_hot = D.OneHotCategorical(**{by: p})
    assert one_hot.event_shape == tt.Size([5])
    onehot_value = np.eye(5)[value]
    assert_close(one_hot.log_prob(tt.tensor(onehot_value, dtype=getattr(tt, dtype))), lp.double().numpy(), dtype=dtype)
    assert_close(one_hot.variance, probs * (1 - probs), dtype=dtype)
    assert tuple(one_hot.enumerate_support().shape) == (5, 2, 3, 5)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_dirichlet_against_scipy(dtype):
    rng = np.random.default_rng(3)
    conc_t, conc = make((2, 4), dtype, "transposed", 0.4, 3.0, seed=4)
    d = D.Dirichlet(conc_t)
    assert d.batch_shape == tt.Size([2]) and d.event_shape == tt.Size([4])
    x = rng.dirichlet(np.ones(4), (3, 2))
    xt = tt.tensor(x, dtype=getattr(tt, dtype))
    x = xt.double().numpy()
    x = x / x.sum(-1, keepdims=True)              # scipy wants the simplex to 1e-10: renormalized in float64
    ref = np.array([[st.dirichlet(conc[b]).logpdf(x[s, b]) for b in range(2)] for s in range(3)])
    assert_close(d.log_prob(xt), ref, what="log_prob")
    assert_close(d.entropy(), [st.dirichlet(conc[b]).entropy() for b in range(2)], what="entropy")
    assert_close(d.mean, [st.dirichlet(conc[b]).mean() for b in range(2)], what="mean")
    assert_close(d.variance, [st.dirichlet(conc[b]).var() for b in range(2)], what="variance")
    mode = D.Dirichlet(tt.tensor([[2.0, 3.0, 5.0], [0.5, 0.7, 0.2]], dtype=tt.float64)).mode.numpy()
    np.testing.assert_allclose(mode, [[1 / 7, 2 / 7, 4 / 7], [0, 1, 0]])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("param", ["scale_tril", "covariance_matrix", "precision_matrix"])
def test_multivariate_normal_against_scipy(dtype, param):
    rng = np.random.default_rng(5)
    a = rng.normal(size=(2, 3, 3))
    cov = a @ a.transpose(0, 2, 1) + 0.5 * np.eye(3)
    mats = {"scale_tril": np.linalg.cholesky(cov), "covariance_matrix": cov, "precision_matrix": np.linalg.inv(cov)}
    loc = rng.normal(size=(3,))                         # broadcast against the batch of matrices
    dt = getattr(tt, dtype)
    d = D.MultivariateNormal(tt.tensor(loc, dtype=dt), **{param: tt.tensor(mats[param], dtype=dt)})
    assert d.batch_shape == tt.Size([2]) and d.event_shape == tt.Size([3])
    cov = tt.tensor(mats[param], dtype=dt).double().numpy()
    cov = {"scale_tril": cov @ cov.transpose(0, 2, 1), "covariance_matrix": cov,
           "precision_matrix": np.linalg.inv(cov)}[param]
    loc = tt.tensor(loc, dtype=dt).double().numpy()
    x = rng.normal(size=(4, 2, 3))
    xt = tt.tensor(x, dtype=dt)
    x = xt.double().numpy()
    ref = np.array([[st.multivariate_normal(loc, cov[b]).logpdf(x[s, b]) for b in range(2)] for s in range(4)])
    tol = TOL[dtype] if dtype == "float64" else (1e-4, 1e-5)   # float32: a Cholesky and a solve in float32
    assert_close(d.log_prob(xt), ref, tol=tol, what="log_prob")
    assert_close(d.entropy(), [st.multivariate_normal(loc, cov[b]).entropy() for b in range(2)], tol=tol)
    assert_close(d.covariance_matrix, cov, tol=tol, what="covariance_matrix")
    assert_close(d.precision_matrix, np.linalg.inv(cov), tol=(tol[0] * 10, tol[1] * 10), what="precision_matrix")
    assert_close(d.scale_tril, np.linalg.cholesky(cov), tol=tol, what="scale_tril")
    assert_close(d.variance, np.diagonal(cov, 0, -2, -1), tol=tol)
    assert_close(d.mean, np.broadcast_to(loc, (2, 3)))


# --- shapes -----------------------------------------------------------------------------------
def _shape_cases():
    f = tt.float64
    z23, o23 = tt.zeros(2, 3, dtype=f), tt.ones(2, 3, dtype=f)
    return [
        ("Normal", D.Normal(z23, o23), (2, 3), ()),
        ("Uniform", D.Uniform(z23, o23), (2, 3), ()),
        ("Gamma", D.Gamma(o23, o23), (2, 3), ()),
        ("Beta", D.Beta(o23, o23), (2, 3), ()),
        ("Bernoulli", D.Bernoulli(o23 * 0.5), (2, 3), ()),
        ("Binomial", D.Binomial(4, o23 * 0.5), (2, 3), ()),
        ("Categorical", D.Categorical(tt.ones(2, 3, 4, dtype=f)), (2, 3), ()),
        ("OneHotCategorical", D.OneHotCategorical(tt.ones(2, 3, 4, dtype=f)), (2, 3), (4,)),
        ("Dirichlet", D.Dirichlet(tt.ones(2, 3, 4, dtype=f)), (2, 3), (4,)),
        ("MultivariateNormal", D.MultivariateNormal(tt.zeros(2, 3, 4, dtype=f), scale_tril=tt.eye(4, dtype=f)),
         (2, 3), (4,)),
        ("Independent", D.Independent(D.Normal(z23, o23), 1), (2,), (3,)),
        ("LogNormal", D.LogNormal(z23, o23), (2, 3), ()),
        ("Affine", D.TransformedDistribution(D.Normal(z23, o23), [D.AffineTransform(1.0, 2.0)]), (2, 3), ()),
    ]


@pytest.mark.parametrize("name, dist, batch, event", _shape_cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_shapes_sample_and_expand(name, dist, batch, event):
    assert tuple(dist.batch_shape) == batch and tuple(dist.event_shape) == event
    tt.manual_seed(0)
    s = dist.sample()
    assert tuple(s.shape) == batch + event
    s = dist.sample((5, 1))
    assert tuple(s.shape) == (5, 1) + batch + event
    assert tuple(dist.log_prob(s).shape) == (5, 1) + batch
    bigger = (7,) + batch
    e = dist.expand(bigger)
    assert tuple(e.batch_shape) == bigger and tuple(e.event_shape) == event and type(e) is type(dist)
    assert tuple(e.sample((2,)).shape) == (2,) + bigger + event
    # an expanded distribution gives the broadcast log_prob of the original
    np.testing.assert_allclose(e.log_prob(s).numpy(), np.broadcast_to(dist.log_prob(s).numpy(), (5, 7) + batch))
    if dist.has_rsample:
        assert tuple(dist.rsample((3,)).shape) == (3,) + batch + event


def test_scalar_parameters_give_empty_batch():
    d = D.Normal(0.0, 1.0)
    assert d.batch_shape == tt.Size([]) and tuple(d.sample((4,)).shape) == (4,)
    assert d.loc.dtype == tt.get_default_dtype()
    d = D.Normal(tt.zeros(3, dtype=tt.float64), 2.0)      # a number takes the tensor's dtype
    assert d.scale.dtype == tt.float64 and tuple(d.batch_shape) == (3,)


# --- validation -------------------------------------------------------------------------------
def _t(*v):
    return tt.tensor(list(v), dtype=tt.float64)


@pytest.mark.parametrize("build, match", [
    (lambda: D.Normal(_t(0.0), _t(-1.0)), r"Expected parameter scale .* to satisfy the constraint GreaterThan"),
    (lambda: D.Normal(_t(float("nan")), _t(1.0)), r"Expected parameter loc .*Real\(\)"),
    (lambda: D.Exponential(_t(0.0)), "Expected parameter rate"),
    (lambda: D.Gamma(_t(-1.0), _t(1.0)), "Expected parameter concentration"),
    (lambda: D.Beta(_t(1.0), _t(0.0)), "Expected parameter concentration0"),
    (lambda: D.Bernoulli(_t(1.5)), r"Expected parameter probs .*Interval\(lower_bound=0.0, upper_bound=1.0\)"),
    (lambda: D.Bernoulli(_t(0.5), _t(0.1)), "Either `probs` or `logits` must be specified, but not both."),
    (lambda: D.Bernoulli(), "Either `probs` or `logits` must be specified"),
    (lambda: D.Binomial(_t(2.5), _t(0.5)), "Expected parameter total_count"),
    (lambda: D.Categorical(_t(0.5, -0.5)), "Expected parameter probs"),
    (lambda: D.Categorical(tt.tensor(1.0)), "`probs` parameter must be at least one-dimensional."),
    (lambda: D.Dirichlet(_t(1.0, -1.0)), "Expected parameter concentration"),
    (lambda: D.Uniform(_t(1.0), _t(0.0)), "Uniform is not defined when low>= high"),
    (lambda: D.Laplace(_t(0.0), _t(0.0)), "Expected parameter scale"),
    (lambda: D.MultivariateNormal(_t(0.0, 0.0), covariance_matrix=tt.tensor([[1.0, 2.0], [2.0, 1.0]],
                                                                               dtype=tt.float64)),
     "Expected parameter covariance_matrix .*PositiveDefinite"),
    (lambda: D.MultivariateNormal(_t(0.0, 0.0), scale_tril=tt.tensor([[1.0, 1.0], [0.0, 1.0]], dtype=tt.float64)),
     "Expected parameter scale_tril .*LowerCholesky"),
    (lambda: D.MultivariateNormal(_t(0.0, 0.0)), "Exactly one of covariance_matrix or precision_matrix or scale_tril"),
    (lambda: D.MultivariateNormal(tt.tensor(0.0), scale_tril=tt.eye(1)), "loc must be at least one-dimensional."),
    (lambda: D.Independent(D.Normal(_t(0.0), _t(1.0)), 2), "Expected reinterpreted_batch_ndims <= len"),
])
def test_invalid_arguments_raise(build, match):
    with pytest.raises(ValueError, match=match):
        build()


@pytest.mark.parametrize("dist, value, match", [
    (lambda: D.Exponential(_t(1.0, 2.0)), _t(-1.0, 1.0), r"Expected value argument .* to be within the support"),
    (lambda: D.Bernoulli(_t(0.5)), _t(0.5), "within the support"),
    (lambda: D.Binomial(3, _t(0.5)), _t(4.0), "within the support"),
    (lambda: D.Categorical(_t(0.5, 0.5)), tt.tensor([2]), "within the support"),
    (lambda: D.Uniform(_t(0.0), _t(1.0)), _t(1.5), "within the support"),
    (lambda: D.Dirichlet(_t(1.0, 1.0)), _t(0.3, 0.3), "within the support"),
    (lambda: D.Normal(_t(0.0, 0.0), _t(1.0, 1.0)), _t(0.0, 0.0, 0.0), "Value is not broadcastable"),
    (lambda: D.Dirichlet(_t(1.0, 1.0, 1.0)), _t(0.5, 0.5), "The right-most size of value must match event_shape"),
    (lambda: D.Normal(_t(0.0), _t(1.0)), 0.5, "The value argument to log_prob must be a Tensor"),
])
def test_invalid_samples_raise(dist, value, match):
    with pytest.raises(ValueError, match=match):
        dist().log_prob(value)


def test_validation_can_be_turned_off():
    d = D.Normal(_t(0.0), _t(-1.0), validate_args=False)       # no error; log of a negative scale is NaN
    assert np.isnan(d.log_prob(_t(0.0)).numpy()).all()
    assert np.isfinite(D.Exponential(_t(1.0), validate_args=False).log_prob(_t(-1.0)).numpy()).all()
    D.Distribution.set_default_validate_args(False)
    try:
        D.Gamma(_t(-1.0), _t(1.0))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Gamma(_t(-1.0), _t(1.0))


def test_against_torch():
    torch = pytest.importorskip("torch")
    TD = torch.distributions
    rng = np.random.default_rng(6)
    loc, scale, x = rng.normal(size=3), rng.uniform(0.5, 2, 3), rng.uniform(0.1, 0.9, 3)
    pairs = [
        (lambda m, t: m.Normal(t(loc), t(scale)), "log_prob"), (lambda m, t: m.Gamma(t(scale), t(scale)), "log_prob"),
        (lambda m, t: m.Beta(t(scale), t(scale + 1)), "entropy"),
        (lambda m, t: m.Binomial(5, t(x)), "entropy"), (lambda m, t: m.LogNormal(t(loc), t(scale)), "log_prob"),
        (lambda m, t: m.Dirichlet(t(scale)), "entropy"),
    ]
    for build, what in pairs:
        ours = build(D, lambda a: tt.tensor(a, dtype=tt.float64))
        theirs = build(TD, lambda a: torch.tensor(a, dtype=torch.float64))
        arg = () if what == "entropy" else (x,)
        a = getattr(ours, what)(*(tt.tensor(v, dtype=tt.float64) for v in arg))
        b = getattr(theirs, what)(*(torch.tensor(v, dtype=torch.float64) for v in arg))
        assert_close(a, b.numpy(), what=f"{type(ours).__name__}.{what}")
        if not isinstance(ours, D.Beta):     # torch's Beta keeps its parameters in an inner Dirichlet: "Beta()"
            assert repr(ours).replace("tinytorch", "torch") == repr(theirs)
