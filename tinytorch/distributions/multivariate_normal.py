"""The multivariate normal distribution."""
from __future__ import annotations

import math

from tinytorch._core.size import Size
from tinytorch.distributions import constraints
from tinytorch.distributions._linalg import cholesky, inverse_lower, solve_lower
from tinytorch.distributions._sampling import standard_normal
from tinytorch.distributions.distribution import Distribution, as_size
from tinytorch.distributions.utils import broadcast_shape, lazy_property
from tinytorch._tensor.tensor import Tensor

__all__ = ["MultivariateNormal"]


def batch_mahalanobis(l: Tensor, x: Tensor) -> Tensor:
    """x^T (L L^T)^-1 x over the last dim, batch dims of l (..., n, n) and x (..., n) broadcast."""
    return solve_lower(l, x.unsqueeze(-1)).pow(2).sum((-2, -1))


def precision_to_scale_tril(p: Tensor) -> Tensor:
    # P = U U^T with U upper (the Cholesky factor of P with rows and columns reversed, flipped
    # back); then L = U^-T is lower-triangular with L L^T = P^-1
    lf = cholesky(p.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    return inverse_lower(l_inv)


class MultivariateNormal(Distribution):
    """Multivariate normal distribution parameterized by a mean vector ``loc`` and exactly one of
    ``covariance_matrix`` (positive-definite), ``precision_matrix`` (its inverse) or
    ``scale_tril`` (lower-triangular with a positive diagonal, covariance = L @ L.mT).

    Args:
        loc (Tensor): mean of the distribution (..., n).
        covariance_matrix (Tensor): positive-definite covariance matrix (..., n, n).
        precision_matrix (Tensor): positive-definite precision matrix (..., n, n).
        scale_tril (Tensor): lower-triangular factor of the covariance (..., n, n).

    The Cholesky factorization and triangular solves are composed from tensor ops (O(n) steps,
    differentiable), so ``rsample`` and ``log_prob`` differentiate with respect to ``loc`` and
    the matrix parameter whichever was given.
    """
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril), ("covariance_matrix", covariance_matrix),
                                                 ("precision_matrix", precision_matrix)) if m is not None)
        if matrix.dim() < 2:
            raise ValueError(f"{name} matrix must be at least two-dimensional, with optional leading batch dimensions")
        if matrix.shape[-1] != matrix.shape[-2] or matrix.shape[-1] != loc.shape[-1]:
            raise ValueError(f"{name} of shape {tuple(matrix.shape)} does not match loc of shape {tuple(loc.shape)}: "
                             "expected (..., n, n) with n = loc.shape[-1]")
        batch_shape = broadcast_shape(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = as_size(batch_shape)
        n = self._event_shape[0]
        new.loc = self.loc.expand(tuple(batch_shape) + (n,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(tuple(batch_shape) + (n, n)))
        return self._init_expanded(new, batch_shape)

    def _matrix_shape(self) -> tuple:
        return tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        l = self._unbroadcasted_scale_tril
        return (l @ l.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        l_inv = inverse_lower(self._unbroadcasted_scale_tril)
        return (l_inv.mT @ l_inv).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    mode = mean

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        eps = standard_normal(self._extended_shape(sample_shape), self.loc)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(0, -2, -1).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)
