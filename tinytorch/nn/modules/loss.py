"""Loss modules over nn.functional (reduction='none'|'mean'|'sum'); PyTorch's constructor signatures,
including the deprecated size_average/reduce flags. LinearCrossEntropyLoss holds the Linear layer
to logits as well (``F.linear_cross_entropy``, chunked over the batch when ``options`` is given)."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Tuple

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn import functional as F
from tinytorch.nn.common_types import _device_t, _dtype_t
from tinytorch.nn.functional.linear_cross_entropy import LinearCrossEntropyOptions
from tinytorch.nn.functional.loss import _legacy_reduction
from tinytorch.nn.modules._doc_notes import fill_doc, loss_notes
from tinytorch.nn.modules.linear import Linear
from tinytorch.nn.modules.module import Module


class _Loss(Module):
    _reductions = ("none", "mean", "sum")

    def __init__(self, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                 reduction: str = "mean") -> None:
        super().__init__()
        reduction = _legacy_reduction(size_average, reduce, reduction)
        if reduction not in self._reductions:
            raise ValueError(f"{reduction} is not a valid value for reduction")
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
                 reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class _MarginLoss(_Loss):
    """The losses whose one hyperparameter is a ``margin`` (PyTorch's default 0, HingeEmbeddingLoss's 1)."""

    def __init__(self, margin: float = 0.0, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


@fill_doc(loss_notes)
class MSELoss(_Loss):
    """Creates a criterion that measures the mean squared error (squared L2 norm) between each element in
    the input :math:`x` and target :math:`y`.

    Args:
        {reduction_args}"""
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


@fill_doc(loss_notes)
class L1Loss(_Loss):
    """Creates a criterion that measures the mean absolute error (MAE) between each element in the input
    :math:`x` and target :math:`y`.

    Args:
        {reduction_args}"""
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


@fill_doc(loss_notes)
class SmoothL1Loss(_Loss):
    """Creates a criterion that uses a squared term if the absolute element-wise error falls below beta and
    an L1 term otherwise.

    Args:
        {reduction_args}
        {beta}"""
    def __init__(self, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


@fill_doc(loss_notes)
class HuberLoss(_Loss):
    """Creates a criterion that uses a squared term if the absolute element-wise error falls below delta
    and a delta-scaled L1 term otherwise.

    Args:
        {reduction}
        {delta}"""
    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


@fill_doc(loss_notes)
class NLLLoss(_WeightedLoss):
    """The negative log likelihood loss. It is useful to train a classification problem with `C` classes.

    Args:
        {class_index_args}"""
    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100,
                 reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


@fill_doc(loss_notes)
class CrossEntropyLoss(_WeightedLoss):
    """This criterion computes the cross entropy loss between input logits and target.

    Args:
        {class_index_args}
        {label_smoothing}"""
    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None, ignore_index: int = -100,
                 reduce: Optional[bool] = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


@fill_doc(loss_notes)
class BCELoss(_WeightedLoss):
    """Creates a criterion that measures the Binary Cross Entropy between the target and the input
    probabilities.

    Args:
        {weighted_reduction_args}"""
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


@fill_doc(loss_notes)
class BCEWithLogitsLoss(_Loss):
    """This loss combines a `Sigmoid` layer and the `BCELoss` in one single class. This version is more
    numerically stable than using a plain `Sigmoid` followed by a `BCELoss` as, by combining the
    operations into one layer, we take advantage of the log-sum-exp trick for numerical stability.

    Args:
        {weighted_reduction_args}
        {pos_weight}"""
    def __init__(self, weight: Optional[Tensor] = None, size_average: Optional[bool] = None,
                 reduce: Optional[bool] = None, reduction: str = "mean", pos_weight: Optional[Tensor] = None) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


@fill_doc(loss_notes)
class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence loss.

    Args:
        {reduction_args}
        {log_target}"""
    _reductions = ("none", "mean", "sum", "batchmean")

    def __init__(self, size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


@fill_doc(loss_notes)
class CosineEmbeddingLoss(_MarginLoss):
    """Creates a criterion that measures the loss given input tensors :math:`x_1`, :math:`x_2` and a
    `Tensor` label :math:`y` with values 1 or -1. Use (:math:`y=1`) to maximize the cosine similarity of
    two inputs, and (:math:`y=-1`) otherwise.

    Args:
        {margin_zero}
        {reduction_args}"""
    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)


@fill_doc(loss_notes)
class MarginRankingLoss(_MarginLoss):
    """Creates a criterion that measures the loss given inputs :math:`x1`, :math:`x2`, two 1D mini-batch or
    0D `Tensors`, and a label 1D mini-batch or 0D `Tensor` :math:`y` (containing 1 or -1).

    Args:
        {margin_zero}
        {reduction_args}"""
    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


@fill_doc(loss_notes)
class HingeEmbeddingLoss(_MarginLoss):
    """Measures the loss given an input tensor :math:`x` and a labels tensor :math:`y` (containing 1 or
    -1).

    Args:
        {margin_one}
        {reduction_args}"""
    def __init__(self, margin: float = 1.0, size_average: Optional[bool] = None, reduce: Optional[bool] = None,
                 reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


@fill_doc(loss_notes)
class SoftMarginLoss(_Loss):
    """Creates a criterion that optimizes a two-class classification logistic loss between input tensor
    :math:`x` and target tensor :math:`y` (containing 1 or -1).

    Args:
        {reduction_args}"""
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.soft_margin_loss(input, target, reduction=self.reduction)


@fill_doc(loss_notes)
class TripletMarginLoss(_Loss):
    """Creates a criterion that measures the triplet loss given an input tensors :math:`x1`, :math:`x2`,
    :math:`x3` and a margin with a value greater than :math:`0`.

    Args:
        {triplet_margin_args}"""
    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                     reduction=self.reduction)


@fill_doc(loss_notes)
class PoissonNLLLoss(_Loss):
    r"""Negative log likelihood loss with Poisson distribution of target.

    Args:
        {poisson_nll_args}"""
    def __init__(self, log_input: bool = True, full: bool = False, size_average: Optional[bool] = None,
                 eps: float = 1e-8, reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction)


@fill_doc(loss_notes)
class GaussianNLLLoss(_Loss):
    """Gaussian negative log likelihood loss.

    Args:
        {gaussian_nll_args}"""
    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)


@fill_doc(loss_notes)
class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Creates a criterion that optimizes a multi-label one-versus-all loss based on max-entropy, between
    input :math:`x` and target :math:`y` of size :math:`(N, C)`.

    Args:
        {weighted_reduction_args}"""
    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)


@fill_doc(loss_notes)
class MultiMarginLoss(_WeightedLoss):
    """Creates a criterion that optimizes a multi-class classification hinge loss (margin-based loss)
    between input :math:`x` and output :math:`y`.

    Args:
        {multi_margin_args}"""
    def __init__(self, p: int = 1, margin: float = 1.0, weight: Optional[Tensor] = None,
                 size_average: Optional[bool] = None, reduce: Optional[bool] = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.p, self.margin = p, margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(input, target, self.p, self.margin, self.weight, reduction=self.reduction)


@fill_doc(loss_notes)
class MultiLabelMarginLoss(_Loss):
    r"""Creates a criterion that optimizes a multi-class multi-classification hinge loss
    (margin-based loss) between input :math:`x` (a 2D mini-batch `Tensor`) and output :math:`y`
    (a 2D `Tensor` of target class indices, ended by the first ``-1``).

    Args:
        {short_reduction_args}

    Shape:
        - Input: :math:`(C)` or :math:`(N, C)` where `N` is the batch size and `C` is the number of classes.
        - Target: :math:`(C)` or :math:`(N, C)`, label targets padded by -1 ensuring same shape as the input.
        - Output: scalar. If :attr:`reduction` is ``'none'``, then :math:`(N)`.
    """

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


@fill_doc(loss_notes)
class TripletMarginWithDistanceLoss(_Loss):
    r"""Creates a criterion that measures the triplet loss given input tensors :math:`a`,
    :math:`p`, and :math:`n` (anchor, positive and negative examples) and a nonnegative,
    real-valued "distance function": :math:`\max\{{d(a, p) - d(a, n) + {{\rm margin}}, 0\}}`.

    Args:
        {distance_function}
        {distance_margin}
        swap (bool, optional): Whether to use the distance swap. Default: ``False``.
        {short_reduction}
    """

    def __init__(self, *, distance_function: Optional[Callable[[Tensor, Tensor], Tensor]] = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean") -> None:
        super().__init__(reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             "instead")
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    r"""The Connectionist Temporal Classification loss: the negative log-likelihood of the
    target over all alignments of it to a continuous (unsegmented) time series.

    Args:
        blank (int, optional): blank label. Default :math:`0`.
        reduction (str, optional): Specifies the reduction to apply to the output:
            ``'none'`` | ``'mean'`` | ``'sum'``. ``'mean'``: the output losses will be divided by
            the target lengths and then the mean over the batch is taken. Default: ``'mean'``
        zero_infinity (bool, optional): Whether to zero infinite losses and the associated
            gradients. Default: ``False``

    Shape:
        - Log_probs: Tensor of size :math:`(T, N, C)` or :math:`(T, C)` (e.g. from :func:`log_softmax`).
        - Targets: Tensor of size :math:`(N, S)` or :math:`(\operatorname{sum}(\text{target\_lengths}))`.
        - Input_lengths: Tuple or tensor of size :math:`(N)` or :math:`()`.
        - Target_lengths: Tuple or tensor of size :math:`(N)` or :math:`()`.
        - Output: scalar if :attr:`reduction` is ``'mean'`` (default) or ``'sum'``; :math:`(N)`
          with ``'none'``.
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


@fill_doc(loss_notes)
class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated name of :class:`NLLLoss` for (N, C, H, W) input (NLLLoss takes it).

    Args:
        weight (Tensor, optional): a manual rescaling weight given to each class.
        size_average (bool, optional): Deprecated (see :attr:`reduction`).
        ignore_index (int, optional): Specifies a target value that is ignored. Default: -100
        reduce (bool, optional): Deprecated (see :attr:`reduction`).
        {short_reduction}
    """


@fill_doc(loss_notes)
class LinearCrossEntropyLoss(_WeightedLoss):
    """This criterion computes the cross entropy loss between input, linearly transformed to logits, and
    target.

    Cross entropy between ``target`` and the logits of ``input`` through an internal Linear
    (weight stored flat, (C * prod(out_features), in_features), as PyTorch's).

    Args:
        in_features (int): size of each input sample.
        num_classes (int): Number of classes, :math:`C`.
        out_features (tuple[int], optional): specifies dimensions :math:`(d_1, d_2, ..., d_K)` for
            K-dimensional loss. Default: ``()``
        bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``False``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``
        {reduction}
        {linear_cross_entropy_weight}
        {linear_cross_entropy_args}"""

    def __init__(self, in_features: int, num_classes: int, *, out_features: Tuple[int, ...] = (), bias: bool = False,
                 device: _device_t = None, dtype: _dtype_t = None, reduction: str = "mean",
                 weight: Optional[Tensor] = None, ignore_index: Optional[int] = None, label_smoothing: float = 0.0,
                 options: Optional[LinearCrossEntropyOptions] = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight, None, None, reduction)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        self.linear = Linear(in_features, math.prod(self.out_features) * num_classes, bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        w = self.linear.weight.reshape(self.num_classes, *self.out_features, self.linear.in_features)
        b = None if self.linear.bias is None else self.linear.bias.reshape(self.num_classes, *self.out_features)
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
