"""Args entries that several nn modules and nn.functional functions share, in PyTorch's words.

A docstring names an entry (or a run of entries) as a ``{placeholder}`` on a line of its own, and
:func:`fill_doc` on the class or function fills it with ``.format(**notes)`` where it is defined,
as PyTorch fills its conv modules' docstrings from ``reproducibility_notes``: ``__doc__`` and
help() read the full text. Literal braces in such a docstring (LaTeX) are doubled. An entry is
written as it stands in the docstring of a class or of a module-level function: its first line
goes where the placeholder is, its continuation lines carry their own 12-space indent. This module
imports nothing from tinytorch: nn.functional reads it while nn.modules is being imported."""
from __future__ import annotations

from typing import Callable, TypeVar

_F = TypeVar("_F", bound=Callable)


def entries(*texts: str) -> str:
    """Several entries as the text of one placeholder (one an Args line, as the docstring's own)."""
    return "\n        ".join(texts)


def fill_doc(*notes: dict) -> Callable[[_F], _F]:
    """Decorator: the class's or function's docstring with its ``{placeholders}`` filled from ``notes``."""
    merged = {k: v for n in notes for k, v in n.items()}

    def fill(fn: _F) -> _F:
        fn.__doc__ = fn.__doc__.format(**merged)
        return fn
    return fill


# arguments that many layers take
common_notes = {
    "bias": "bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``True``",
    "device": "device (device, optional): the device of the parameters and buffers. Default: ``None``",
    "dtype": "dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``",
    "inplace": "inplace (bool): can optionally do the operation in-place. Default: ``False``",
}

# the sliding windows of convolution, pooling and unfold / fold
window_notes = {
    "kernel_size": "kernel_size (int or tuple): the size of the window (or of the convolving kernel).",
    "stride": """stride (int or tuple, optional): the stride of the window (or of the convolution). Default:
            ``1``""",
    "pool_stride": """stride (int or tuple, optional): the stride of the window (or of the convolution). Default:
            ``None``""",
    "padding": """padding (int or tuple, optional): implicit padding added on the sides of the input. Default:
            ``0``""",
    "dilation": "dilation (int or tuple, optional): spacing between kernel elements. Default: ``1``",
}

_ceil_mode = """ceil_mode (bool): when True, will use `ceil` instead of `floor` to compute the output shape.
            Default: ``False``"""
_return_indices = """return_indices (bool): if ``True``, will return the max indices along with the outputs. Default:
            ``False``"""
_count_include_pad = """count_include_pad (bool): when True, will include the zero-padding in the averaging calculation.
            Default: ``True``"""

pooling_notes = {
    "ceil_mode": _ceil_mode,
    "adaptive_output_size": "output_size (int or tuple): the target output size.",
    "max_pool_window": entries(window_notes["kernel_size"], window_notes["pool_stride"], window_notes["padding"],
                               window_notes["dilation"]),
    # MaxPool1d/2d/3d
    "max_pool_args": entries(window_notes["kernel_size"], window_notes["pool_stride"], window_notes["padding"],
                             window_notes["dilation"], _return_indices, _ceil_mode),
    # max_pool1d, max_pool1d_with_indices and max_pool2d_with_indices (after their input)
    "max_pool_fn_args": entries(window_notes["kernel_size"], window_notes["pool_stride"], window_notes["padding"],
                                window_notes["dilation"], _ceil_mode, _return_indices),
    # AdaptiveMaxPool1d/2d/3d and adaptive_max_pool1d/2d and their _with_indices forms (after their input)
    "adaptive_max_args": entries("output_size (int or tuple): the target output size.", _return_indices),
    # AvgPool1d/2d/3d and avg_pool1d
    "avg_pool_args": entries(window_notes["kernel_size"], window_notes["pool_stride"], window_notes["padding"],
                             _ceil_mode, _count_include_pad),
    "divisor_override": """divisor_override (int, optional): if specified, it will be used as divisor, otherwise size of
            the pooling region will be used. Default: ``None``""",
    # FractionalMaxPool2d/3d and fractional_max_pool2d/3d (after their input)
    "fractional_args": entries(
        window_notes["kernel_size"],
        "output_size (int or tuple): the target output size. Default: ``None``",
        """output_ratio (float or tuple, optional): If one wants to have an output size as a ratio of the
            input size, this option can be given. This has to be a number or tuple in the range (0, 1).
            Default: ``None``""",
        _return_indices,
        """_random_samples (Tensor, optional): the pseudo-random samples in [0, 1) that place the pooling
            windows, :math:`(N, C, 2)` (2-D) or :math:`(N, C, 3)` (3-D); drawn on each call when
            ``None``. Default: ``None``"""),
}

# Embedding / EmbeddingBag and embedding / embedding_bag
embedding_notes = {
    "padding_idx": """padding_idx (int, optional): If specified, the entries at :attr:`padding_idx` do not contribute
            to the gradient; therefore, the embedding vector at :attr:`padding_idx` is not updated
            during training, i.e. it remains as a fixed "pad". For a newly constructed EmbeddingBag, the
            embedding vector at :attr:`padding_idx` will default to all zeros. Note that the embedding
            vector at :attr:`padding_idx` is excluded from the reduction. Default: ``None``""",
    "max_norm": """max_norm (float, optional): If given, each embedding vector with norm larger than
            :attr:`max_norm` is renormalized to have norm :attr:`max_norm`. Default: ``None``""",
    "scale_grad_by_freq": """scale_grad_by_freq (bool, optional): if given, this will scale gradients by the inverse of
            frequency of the words in the mini-batch. Default: ``False``""",
    "sparse": """sparse (bool, optional): if ``True``, gradient w.r.t. :attr:`weight` matrix will be a sparse
            tensor (not supported by tinytorch: raises NotImplementedError). Default: ``False``""",
    "bag_mode": """mode (str, optional): ``"sum"``, ``"mean"`` or ``"max"``. Specifies the way to reduce the bag.
            ``"sum"`` computes the weighted sum, taking :attr:`per_sample_weights` into consideration.
            ``"mean"`` computes the average of the values in the bag, ``"max"`` computes the max value
            over each bag. Default: ``'mean'``""",
    "include_last_offset": """include_last_offset (bool, optional): if ``True``, the size of offsets is equal to the number of
            bags + 1. The last element is the size of the input, or the ending index position of the
            last bag (sequence). Default: ``False``""",
    "norm_type": """norm_type (float, optional): The p of the p-norm to compute for the :attr:`max_norm` option.
            Default: ``2.0``""",
    "weight_matrix": """weight (Tensor): the embedding matrix with number of rows equal to the maximum possible index +
            1, and number of columns equal to the embedding size.""",
}
embedding_notes["max_norm_args"] = entries(embedding_notes["max_norm"], embedding_notes["norm_type"],
                                           embedding_notes["scale_grad_by_freq"])

# Upsample and interpolate
interpolate_notes = {
    "interpolate_args": entries(
        "size (int or tuple, optional): output spatial sizes. Default: ``None``",
        "scale_factor (float or tuple, optional): multiplier for spatial size. Default: ``None``",
        """mode (str, optional): the upsampling algorithm: one of ``'nearest'``, ``'linear'``,
            ``'bilinear'``, ``'nearest-exact'`` and ``'area'``. Default: ``'nearest'``""",
        """align_corners (bool, optional): if ``True``, the corner pixels of the input and output tensors
            are aligned, and thus preserving the values at those pixels. Default: ``None``""",
        """recompute_scale_factor (bool, optional): recompute the scale_factor for use in the interpolation
            calculation. Default: ``None``"""),
}

# Unfold / Fold and unfold / fold (after their input, and fold's output_size)
fold_notes = {
    "fold_output_size": """output_size (int or tuple): the shape of the spatial dimensions of the output (i.e.,
            ``output.sizes()[2:]``).""",
    "unfold_window": entries(window_notes["kernel_size"], window_notes["dilation"], window_notes["padding"],
                             window_notes["stride"]),
}

# Softmax / LogSoftmax / Softmin and softmax / log_softmax / softmin
softmax_notes = {
    "softmax_dim": """dim (int): a dimension along which the softmax will be computed (so every slice along dim will
            sum to 1). Default: ``None``""",
    "softmax_dtype": """dtype (dtype, optional): the desired data type of returned tensor. If specified, the input
            tensor is cast to :attr:`dtype` before the operation is performed. Default: ``None``""",
}


def _norm_stats_args(default: bool) -> str:
    """eps ... track_running_stats of BatchNorm (affine and statistics on by default) or InstanceNorm (off)."""
    return entries(
        "eps (float): a value added for numerical stability. Default: ``1e-05``",
        """momentum (float, optional): the value used for the running_mean and running_var computation. Can
            be set to ``None`` for cumulative moving average (i.e. simple average). Default: ``0.1``""",
        f"""affine (bool): a boolean value that when set to ``True``, this module has learnable affine
            parameters. Default: ``{default}``""",
        f"""track_running_stats (bool): a boolean value that when set to ``True``, this module tracks the
            running mean and variance, and when set to ``False``, this module does not track such
            statistics and uses batch statistics instead in both training and eval modes. Default:
            ``{default}``""")


_num_features = "num_features (int): number of features or channels :math:`C` of the input."

# BatchNorm*, SyncBatchNorm and InstanceNorm* and their lazy forms (which read num_features from the input)
norm_notes = {
    "num_features": _num_features,
    "batch_norm_stats_args": _norm_stats_args(True),
    "batch_norm_args": entries(_num_features, _norm_stats_args(True), common_notes["device"],
                               common_notes["dtype"], common_notes["bias"]),
    "lazy_norm_args": entries(_norm_stats_args(True), common_notes["device"], common_notes["dtype"],
                              common_notes["bias"]),
    "instance_norm_args": entries(_num_features, _norm_stats_args(False), common_notes["device"],
                                  common_notes["dtype"]),
}

_size_average = """size_average (bool, optional): Deprecated (see :attr:`reduction`). By default, the losses are
            averaged over each loss element in the batch. Default: ``None``"""
_reduce = """reduce (bool, optional): Deprecated (see :attr:`reduction`). By default, the losses are averaged
            or summed over observations for each minibatch depending on :attr:`size_average`. Default:
            ``None``"""
_reduction = """reduction (str, optional): Specifies the reduction to apply to the output: ``'none'`` |
            ``'mean'`` | ``'sum'``. ``'none'``: no reduction will be applied, ``'mean'``: the sum of the
            output will be divided by the number of elements in the output, ``'sum'``: the output will
            be summed. Default: ``'mean'``"""
_class_weight = """weight (Tensor, optional): a manual rescaling weight given to each class (or element). Default:
            ``None``"""
_label_smoothing = """label_smoothing (float, optional): A float in [0.0, 1.0]. Specifies the amount of smoothing when
            computing the loss, where 0.0 means no smoothing. Default: ``0.0``"""
_full = """full (bool, optional): whether to compute full loss, i. e. to add the Stirling approximation
            term (or the constant of the Gaussian). Default: ``False``"""
_weight_of_size_c = """weight (Tensor, optional): a manual rescaling weight given to each class. If given, has to be a
            Tensor of size `C`. Default: ``None``"""
_margin_one = "margin (float, optional): the margin of the loss. Default: ``1.0``"

# the losses of nn.functional and their modules (a module's Args are its function's, less the inputs)
loss_notes = {
    "input_target": entries("input (Tensor): the input tensor.",
                            "target (Tensor): the target tensor, same shape as the input unless stated."),
    "pair_input_target": entries("input1 (Tensor): the first input.", "input2 (Tensor): the second input.",
                                 "target (Tensor): the target tensor, same shape as the input unless stated."),
    "reduction": _reduction,
    # size_average, reduce and reduction, in PyTorch's order
    "reduction_args": entries(_size_average, _reduce, _reduction),
    "weight": _class_weight,
    "weighted_reduction_args": entries(_class_weight, _size_average, _reduce, _reduction),
    # NLLLoss and CrossEntropyLoss
    "class_index_args": entries(
        _class_weight, _size_average,
        """ignore_index (int, optional): Specifies a target value that is ignored and does not contribute
            to the input gradient. Default: ``-100``""",
        _reduce, _reduction),
    "label_smoothing": _label_smoothing,
    "beta": """beta (float, optional): specifies the threshold at which to change between L1 and L2 loss. The
            value must be non-negative. Default: ``1.0``""",
    "delta": """delta (float, optional): specifies the threshold at which to change between delta-scaled L1 and
            L2 loss. The value must be positive. Default: ``1.0``""",
    "poisson_nll_args": entries(
        r"""log_input (bool, optional): if ``True`` the loss is computed as :math:`\exp(\text{input}) -
            \text{target}*\text{input}`, if ``False`` the loss is :math:`\text{input} -
            \text{target}*\log(\text{input}+\text{eps})`. Default: ``True``""",
        _full, _size_average, "eps (float): a value added for numerical stability. Default: ``1e-08``", _reduce,
        _reduction),
    "gaussian_nll_args": entries(_full, "eps (float): a value added for numerical stability. Default: ``1e-06``",
                                 _reduction),
    "pos_weight": """pos_weight (Tensor, optional): a weight of positive examples to be broadcasted with target.
            Default: ``None``""",
    "log_target": "log_target (bool, optional): specifies whether `target` is the log space. Default: ``False``",
    "multi_margin_args": entries("p (int): the exponent of the hinge: 1 or 2. Default: ``1``", _margin_one,
                                 _class_weight, _size_average, _reduce, _reduction),
    "margin_zero": "margin (float, optional): the margin of the loss. Default: ``0.0``",
    "margin_one": _margin_one,
    "triplet_margin_args": entries(
        "margin (float, optional): the margin; must be greater than 0. Default: ``1.0``",
        "p (float): the norm degree. Default: ``2.0``",
        "eps (float): small value to avoid division by zero. Default: ``1e-06``",
        """swap (bool, optional): the distance swap is described in detail in the paper `Learning shallow
            convolutional feature descriptors with triplet losses` by V. Balntas, E. Riba et al.
            Default: ``False``""",
        _size_average, _reduce, _reduction),
    # MultiLabelMarginLoss and multilabel_margin_loss
    "short_reduction_args": entries(
        "size_average (bool, optional): Deprecated (see :attr:`reduction`).",
        "reduce (bool, optional): Deprecated (see :attr:`reduction`).",
        """reduction (str, optional): Specifies the reduction to apply to the output:
            ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``"""),
    # TripletMarginWithDistanceLoss and triplet_margin_with_distance_loss
    "distance_function": """distance_function (Callable, optional): A nonnegative, real-valued function that
            quantifies the closeness of two tensors. If not specified,
            `nn.PairwiseDistance` will be used.  Default: ``None``""",
    "distance_margin": """margin (float, optional): A nonnegative margin representing the minimum difference
            between the positive and negative distances required for the loss to be 0. Default: :math:`1`.""",
    "short_reduction": "reduction (str, optional): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``",
    # LinearCrossEntropyLoss and linear_cross_entropy
    "linear_cross_entropy_weight": _weight_of_size_c,
    "linear_cross_entropy_args": entries(    # ignore_index, label_smoothing and options
        """ignore_index (int, optional): Specifies a target value that is ignored and does not contribute
            to the input gradient. Default: ``None``""",
        _label_smoothing,
        """options (LinearCrossEntropyOptions, optional): chunking options; ``None`` computes the full
            logits (the reference implementation). Default: ``None``"""),
}
