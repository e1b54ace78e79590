"""PyTorch's top-level names for functional ops tinytorch has in ``nn.functional`` (``torch.selu``,
``torch.max_pool2d``, ``torch.batch_norm``, ...), with torch's top-level signatures: they differ from
F's in places (losses take an int ``reduction`` whose top-level default is 0, no reduction, batch_norm and
embedding order their arguments differently, adaptive_max_pool1d always returns indices). The package
root resolves them lazily so that ``import tinytorch`` does not load nn."""
from __future__ import annotations

import functools
import inspect
from typing import Callable, Optional, Sequence

from tinytorch._tensor.tensor import Tensor


class _LazyFunctional:
    """tinytorch.nn.functional, imported on first use (this module is imported by the package root's
    __getattr__, which must work while nn itself is still importing)."""
    def __getattr__(self, name: str):
        from tinytorch.nn import functional
        return getattr(functional, name)


F = _LazyFunctional()

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(op: str, reduction) -> str:
    if isinstance(reduction, str):
        return reduction
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction!r}")
    return _REDUCTIONS[reduction]


def _int_reduction(signature: Callable) -> Callable:
    """torch's top-level form of the loss F.<name>: ``signature`` declares its arguments (torch's
    top-level order, int ``reduction`` defaulting to 0) and docstring; they are passed to F by name."""
    name = signature.__name__
    params = inspect.signature(signature)

    @functools.wraps(signature)
    def loss(*args, **kwargs) -> Tensor:
        bound = params.bind(*args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments["reduction"] = _reduction(name, arguments["reduction"])
        return getattr(F, name)(**arguments)
    return loss


def _inplace(fn: Callable, name: str) -> Callable:
    def op(input: Tensor, *args, **kwargs) -> Tensor:
        return input.copy_(fn(input, *args, **kwargs))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"In-place version of :func:`tinytorch.{name[:-1]}`.\n\nArgs:\n    input (Tensor): the input tensor, overwritten."
    return op


def selu(input: Tensor) -> Tensor:
    """Applies ``scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))`` element-wise.

    Args:
        input (Tensor): the input tensor."""
    return F.selu(input)


def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """Applies ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` element-wise.

    Args:
        input (Tensor): the input tensor.
        alpha (float): the alpha value. Default: ``1.0``."""
    return F.celu(input, alpha)


def threshold(input: Tensor, threshold: float, value: float) -> Tensor:
    """Replaces each element of ``input`` not greater than ``threshold`` by ``value``.

    Args:
        input (Tensor): the input tensor.
        threshold (float): the value to threshold at.
        value (float): the value to replace with."""
    return F.threshold(input, threshold, value)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    """Randomized leaky ReLU: negative slopes drawn from U(``lower``, ``upper``) in training, their mean otherwise.

    Args:
        input (Tensor): the input tensor.
        lower (float): lower bound of the uniform distribution. Default: ``1/8``.
        upper (float): upper bound of the uniform distribution. Default: ``1/3``.
        training (bool): whether slopes are random. Default: ``False``.
        generator (tinytorch.Generator, optional): unsupported; must be None."""
    if generator is not None:
        raise NotImplementedError("rrelu: the generator argument is not supported; seed with tinytorch.manual_seed")
    return F.rrelu(input, lower, upper, training)


def max_pool1d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """1-D max pooling (see :func:`tinytorch.nn.functional.max_pool1d`); an empty ``stride`` means ``kernel_size``.

    Args:
        input (Tensor): input of shape (N, C, L) or (C, L).
        kernel_size (int or tuple): size of the pooling window.
        stride (int or tuple): stride of the window. Default: ``kernel_size``.
        padding (int or tuple): implicit negative-infinity padding on both sides. Default: ``0``.
        dilation (int or tuple): stride between window elements. Default: ``1``.
        ceil_mode (bool): use ceil instead of floor for the output shape. Default: ``False``."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):
    """Like :func:`max_pool1d`, also returning the argmax indices.

    Args:
        input (Tensor): input of shape (N, C, L) or (C, L).
        kernel_size (int or tuple): size of the pooling window.
        stride (int or tuple): stride of the window. Default: ``kernel_size``.
        padding (int or tuple): implicit negative-infinity padding on both sides. Default: ``0``.
        dilation (int or tuple): stride between window elements. Default: ``1``.
        ceil_mode (bool): use ceil instead of floor for the output shape. Default: ``False``."""
    return F.max_pool1d(input, kernel_size, stride or None, padding, dilation, ceil_mode, return_indices=True)


def max_pool2d(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False) -> Tensor:
    """2-D max pooling (see :func:`tinytorch.nn.functional.max_pool2d`); an empty ``stride`` means ``kernel_size``.

    Args:
        input (Tensor): input of shape (N, C, H, W) or (C, H, W).
        kernel_size (int or tuple): size of the pooling window.
        stride (int or tuple): stride of the window. Default: ``kernel_size``.
        padding (int or tuple): implicit negative-infinity padding on both sides. Default: ``0``.
        dilation (int or tuple): stride between window elements. Default: ``1``.
        ceil_mode (bool): use ceil instead of floor for the output shape. Default: ``False``."""
    return F.max_pool2d(input, kernel_size, stride or None, padding, dilation, ceil_mode)


def adaptive_max_pool1d(input: Tensor, output_size):
    """1-D adaptive max pooling; returns ``(output, indices)`` as PyTorch's top-level function does.

    Args:
        input (Tensor): input of shape (N, C, L) or (C, L).
        output_size (int): the target output length."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Alpha dropout (keeps the self-normalizing mean and variance) when ``train``.

    Args:
        input (Tensor): the input tensor.
        p (float): probability of an element to be dropped.
        train (bool): apply dropout if True."""
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Alpha dropout of whole channels when ``train``.

    Args:
        input (Tensor): the input tensor, (N, C, ...).
        p (float): probability of a channel to be dropped.
        train (bool): apply dropout if True."""
    return F.feature_alpha_dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """In-place dropout when ``train``.

    Args:
        input (Tensor): the input tensor, overwritten.
        p (float): probability of an element to be zeroed.
        train (bool): apply dropout if True."""
    return input.copy_(F.dropout(input, p, train)) if train else input


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """The rows of ``weight`` at ``indices``, PyTorch's top-level form (weight first; see
    :func:`tinytorch.nn.functional.embedding`, which takes ``(input, weight)``).

    Args:
        weight (Tensor): the embedding matrix, one row per index.
        indices (Tensor): tensor containing indices into the embedding matrix.
        padding_idx (int): the row whose gradient stays zero; negative: none. Default: ``-1``.
        scale_grad_by_freq (bool): scale each row's gradient by the inverse of its frequency in the
            mini-batch. Default: ``False``.
        sparse (bool): sparse gradient of ``weight``; not supported (no sparse tensors). Default: ``False``."""
    if sparse:
        raise NotImplementedError("embedding: sparse=True (sparse gradients) is not supported: tinytorch has no "
                                  "sparse tensors")
    return F.embedding(indices, weight, None if padding_idx < 0 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq)


def batch_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Optional[Tensor],
               running_var: Optional[Tensor], training: bool, momentum: float, eps: float,
               cudnn_enabled: bool = True) -> Tensor:
    """Batch normalization with PyTorch's top-level argument order (weight and bias first).

    Args:
        input (Tensor): input of shape (N, C, ...).
        weight (Tensor, optional): per-channel scale.
        bias (Tensor, optional): per-channel shift.
        running_mean (Tensor, optional): running mean, updated in training.
        running_var (Tensor, optional): running variance, updated in training.
        training (bool): use batch statistics (and update the running ones).
        momentum (float): the running-statistics momentum.
        eps (float): added to the variance for numerical stability.
        cudnn_enabled (bool): ignored."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Optional[Tensor],
                  running_var: Optional[Tensor], use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool = True) -> Tensor:
    """Instance normalization with PyTorch's top-level argument order.

    Args:
        input (Tensor): input of shape (N, C, ...).
        weight (Tensor, optional): per-channel scale.
        bias (Tensor, optional): per-channel shift.
        running_mean (Tensor, optional): running mean.
        running_var (Tensor, optional): running variance.
        use_input_stats (bool): normalize with each instance's statistics.
        momentum (float): the running-statistics momentum.
        eps (float): added to the variance for numerical stability.
        cudnn_enabled (bool): ignored."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)


def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               eps: float = 1e-5, cudnn_enabled: bool = True) -> Tensor:
    """Group normalization over ``num_groups`` groups of channels.

    Args:
        input (Tensor): input of shape (N, C, ...).
        num_groups (int): number of groups to separate the channels into.
        weight (Tensor, optional): per-channel scale.
        bias (Tensor, optional): per-channel shift.
        eps (float): added to the variance for numerical stability. Default: ``1e-5``.
        cudnn_enabled (bool): ignored."""
    return F.group_norm(input, num_groups, weight, bias, eps)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: float = 0) -> Tensor:
    """Pads ``input`` with the constant ``value`` (``pad`` as in :func:`tinytorch.nn.functional.pad`).

    Args:
        input (Tensor): the input tensor.
        pad (tuple of int): (left, right) pad sizes, last dimension first.
        value (float): the fill value. Default: ``0``."""
    return F.pad(input, list(pad), mode="constant", value=value)


@_int_reduction
def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *, log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence loss, PyTorch's top-level form (int ``reduction``: 0 none, 1 mean, 2 sum).

    Args:
        input (Tensor): log-probabilities.
        target (Tensor): probabilities (log-probabilities if ``log_target``).
        reduction (int): 0 none, 1 mean, 2 sum. Default: ``0`` (torch's top-level default).
        log_target (bool): whether ``target`` is in log space. Default: ``False``."""


@_int_reduction
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                     pos_weight: Optional[Tensor] = None, reduction: int = 0) -> Tensor:
    """Binary cross entropy on logits, PyTorch's top-level form (int ``reduction``).

    Args:
        input (Tensor): logits.
        target (Tensor): targets in [0, 1].
        weight (Tensor, optional): rescaling weight per element.
        pos_weight (Tensor, optional): weight of positive examples per class.
        reduction (int): 0 none, 1 mean, 2 sum. Default: ``0`` (torch's top-level default)."""


def _pair_loss(name: str, summary: str) -> Callable:
    """The top-level form of a loss over pairs with a 1 or -1 target per pair and a margin
    (margin_ranking_loss, cosine_embedding_loss: one signature)."""
    def signature(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, reduction: int = 0) -> Tensor:
        """{summary}, PyTorch's top-level form (int ``reduction``).

        Args:
            input1 (Tensor): the first input.
            input2 (Tensor): the second input.
            target (Tensor): 1 or -1 per pair.
            margin (float): the margin. Default: ``0``.
            reduction (int): 0 none, 1 mean, 2 sum. Default: ``0`` (torch's top-level default)."""
    signature.__name__ = signature.__qualname__ = name
    signature.__doc__ = signature.__doc__.format(summary=summary)
    return _int_reduction(signature)


margin_ranking_loss = _pair_loss("margin_ranking_loss", "Margin ranking loss")
cosine_embedding_loss = _pair_loss("cosine_embedding_loss", "Cosine embedding loss")


@_int_reduction
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 0) -> Tensor:
    """Hinge embedding loss, PyTorch's top-level form (int ``reduction``).

    Args:
        input (Tensor): the input distances.
        target (Tensor): 1 or -1 per element.
        margin (float): the margin. Default: ``1``.
        reduction (int): 0 none, 1 mean, 2 sum. Default: ``0`` (torch's top-level default)."""


@_int_reduction
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, reduction: int = 0) -> Tensor:
    """Triplet margin loss, PyTorch's top-level form (int ``reduction``).

    Args:
        anchor (Tensor): the anchors.
        positive (Tensor): the positive examples.
        negative (Tensor): the negative examples.
        margin (float): the margin. Default: ``1``.
        p (float): the norm degree for the pairwise distance. Default: ``2``.
        eps (float): small constant for numerical stability. Default: ``1e-6``.
        swap (bool): use the distance swap. Default: ``False``.
        reduction (int): 0 none, 1 mean, 2 sum. Default: ``0`` (torch's top-level default)."""


@_int_reduction
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """Poisson negative log likelihood loss, PyTorch's top-level form (all arguments required, int ``reduction``).

    Args:
        input (Tensor): expectation of the Poisson distribution (its log if ``log_input``).
        target (Tensor): random samples.
        log_input (bool): whether ``input`` is a log-rate.
        full (bool): add the Stirling term.
        eps (float): avoids log(0) when not ``log_input``.
        reduction (int): 0 none, 1 mean, 2 sum."""


_SAME_AS_F = ("cosine_similarity", "pairwise_distance", "pdist", "pixel_shuffle",
              "pixel_unshuffle", "channel_shuffle", "avg_pool1d", "adaptive_avg_pool1d", "conv_transpose1d",
              "conv_transpose2d", "bilinear")   # torch's top-level signature is F's

_OWN = {fn.__name__: fn for fn in (
    selu, celu, threshold, rrelu, max_pool1d, max_pool1d_with_indices, max_pool2d, adaptive_max_pool1d,
    alpha_dropout, feature_alpha_dropout, dropout_, embedding, batch_norm, instance_norm, group_norm, constant_pad_nd,
    kl_div, binary_cross_entropy_with_logits, margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss,
    triplet_margin_loss, poisson_nll_loss)}
_OWN.update({name: _inplace(_OWN[name[:-1]], name) for name in (
    "selu_", "celu_", "threshold_", "rrelu_", "alpha_dropout_", "feature_alpha_dropout_")})

NAMES = frozenset(_SAME_AS_F) | frozenset(_OWN)


def resolve(name: str) -> Callable:
    """The function behind tinytorch.<name>, for name in NAMES."""
    return _OWN[name] if name in _OWN else getattr(F, name)
