"""tinytorch.distributions: parameterizable probability distributions and sampling functions
(PyTorch's ``torch.distributions``). See docs/distributions.md for what exists and what not."""
from tinytorch.distributions import constraints, transforms
from tinytorch.distributions.bernoulli import Bernoulli
from tinytorch.distributions.binomial import Binomial
from tinytorch.distributions.categorical import Categorical, OneHotCategorical
from tinytorch.distributions.dirichlet import Beta, Dirichlet
from tinytorch.distributions.distribution import Distribution
from tinytorch.distributions.exponential import Exponential
from tinytorch.distributions.gamma import Gamma
from tinytorch.distributions.independent import Independent
from tinytorch.distributions.kl import kl_divergence, register_kl
from tinytorch.distributions.laplace import Laplace
from tinytorch.distributions.log_normal import LogNormal
from tinytorch.distributions.multivariate_normal import MultivariateNormal
from tinytorch.distributions.normal import Normal
from tinytorch.distributions.transformed_distribution import TransformedDistribution
from tinytorch.distributions.transforms import (AffineTransform, ComposeTransform, ExpTransform, SigmoidTransform,
                                               SoftmaxTransform, TanhTransform, Transform)
from tinytorch.distributions.uniform import Uniform

__all__ = ["AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "ComposeTransform", "Dirichlet",
           "Distribution", "ExpTransform", "Exponential", "Gamma", "Independent", "Laplace", "LogNormal",
           "MultivariateNormal", "Normal", "OneHotCategorical", "SigmoidTransform", "SoftmaxTransform",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "constraints", "kl_divergence",
           "register_kl", "transforms"]
