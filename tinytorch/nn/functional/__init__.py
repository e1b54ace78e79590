"""``nn.functional``: stateless layers, activations and losses (PyTorch's names and defaults).

One module per concern; this package re-exports their public functions:

* ``activation``: relu ... hardsigmoid, softmax / log_softmax / softmin (``inplace=`` honoured)
* ``linear``: linear and the convolutions (kernels in ``tinytorch._ops.linalg`` and ``_ops.conv``)
* ``pooling``: max / avg / adaptive / power-average pooling and max_unpool, 1-D to 3-D (with indices)
* ``linear_cross_entropy``: linear_cross_entropy (chunked over the batch with LinearCrossEntropyOptions)
* ``grouped_mm``: grouped_mm (Mixture-of-Experts grouped matrix multiply)
* ``overrides``: has_torch_function*, handle_torch_function, boolean_dispatch, assert_int_or_pair
* ``fractional_pooling``: fractional_max_pool2d/3d (and their ``_with_indices`` forms)
* ``normalization``: batch_norm, instance_norm, group_norm, layer_norm, rms_norm
* ``dropout``: dropout, dropout1d, dropout2d
* ``embedding``: embedding, one_hot
* ``distance``: normalize, cosine_similarity, pairwise_distance
* ``loss``: every loss, with PyTorch's reductions and legacy size_average / reduce flags
* ``padding``: pad (constant, reflect, replicate, circular)
* ``vision``: interpolate, pixel_shuffle / pixel_unshuffle, unfold / fold
* ``attention``: scaled_dot_product_attention
* ``multi_head_attention``: multi_head_attention_forward (nn.MultiheadAttention's computation)
* ``grid``: affine_grid, grid_sample
* ``ctc``: ctc_loss
* ``alignment``: dpo_loss, grpo_loss, distillation_loss, token/sequence log-probs of causal LMs
"""
from __future__ import annotations

from tinytorch._tensor.tensor import Tensor  # noqa: F401
from tinytorch.nn.functional.activation import (  # noqa: F401
    celu, elu, gelu, glu, hardshrink, hardsigmoid, hardswish, hardtanh, leaky_relu, log_softmax, logsigmoid, mish,
    prelu, relu, relu6, relu_, selu, sigmoid, silu, softmax, softmin, softplus, softshrink, softsign, tanh,
    tanhshrink, threshold,
)
from tinytorch.nn.functional.linear import conv1d, conv2d, conv_transpose1d, conv_transpose2d, linear  # noqa: F401
from tinytorch.nn.functional.pooling import (  # noqa: F401
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_max_pool1d, adaptive_max_pool2d, avg_pool1d, avg_pool2d,
    max_pool1d, max_pool2d,
)
from tinytorch.nn.functional.normalization import (  # noqa: F401
    batch_norm, group_norm, instance_norm, layer_norm, rms_norm,
)
from tinytorch.nn.functional.dropout import dropout, dropout1d, dropout2d  # noqa: F401
from tinytorch.nn.functional.embedding import embedding, one_hot  # noqa: F401
from tinytorch.nn.functional.distance import cosine_similarity, normalize, pairwise_distance  # noqa: F401
from tinytorch.nn.functional.loss import (  # noqa: F401
    binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss, cross_entropy, gaussian_nll_loss,
    hinge_embedding_loss, huber_loss, kl_div, l1_loss, margin_ranking_loss, mse_loss, multi_margin_loss,
    multilabel_soft_margin_loss, nll_loss, poisson_nll_loss, smooth_l1_loss, soft_margin_loss, triplet_margin_loss,
)
from tinytorch.nn.functional.padding import pad  # noqa: F401
from tinytorch.nn.functional.vision import fold, interpolate, pixel_shuffle, pixel_unshuffle, unfold  # noqa: F401
from tinytorch.nn.functional.attention import scaled_dot_product_attention  # noqa: F401
from tinytorch.nn.functional.alignment import (  # noqa: F401
    distillation_loss, dpo_loss, group_relative_advantages, grpo_loss, sequence_log_probs, token_log_probs,
)

from tinytorch.nn.functional.activation import (  # noqa: F401
    celu_, elu_, gumbel_softmax, hardtanh_, leaky_relu_, rrelu, rrelu_, selu_, threshold_,
)
from tinytorch.nn.functional.linear import bilinear  # noqa: F401
from tinytorch.nn.functional.pooling import (  # noqa: F401
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices, lp_pool1d, lp_pool2d, max_pool1d_with_indices,
    max_pool2d_with_indices, max_unpool1d, max_unpool2d,
)
from tinytorch.nn.functional.normalization import local_response_norm  # noqa: F401
from tinytorch.nn.functional.dropout import alpha_dropout, feature_alpha_dropout  # noqa: F401
from tinytorch.nn.functional.distance import pdist  # noqa: F401
from tinytorch.nn.functional.loss import multilabel_margin_loss, triplet_margin_with_distance_loss  # noqa: F401
from tinytorch.nn.functional.ctc import ctc_loss  # noqa: F401
from tinytorch.nn.functional.vision import (  # noqa: F401
    channel_shuffle, upsample, upsample_bilinear, upsample_nearest,
)
from tinytorch.nn.functional.grid import affine_grid, grid_sample  # noqa: F401
from tinytorch.nn.functional.pooling import (  # noqa: F401
    adaptive_avg_pool3d, adaptive_max_pool3d, avg_pool3d, max_pool3d,
)
from tinytorch.nn.functional.dropout import dropout3d  # noqa: F401
from tinytorch.nn.functional.linear import conv3d, conv_transpose3d  # noqa: F401
from tinytorch.nn.functional.embedding import embedding_bag  # noqa: F401
from tinytorch.nn.functional.multi_head_attention import multi_head_attention_forward  # noqa: F401
from tinytorch.nn.functional.linear_cross_entropy import linear_cross_entropy  # noqa: F401
from tinytorch.nn.functional.grouped_mm import grouped_mm  # noqa: F401
from tinytorch.nn.functional.overrides import (  # noqa: F401
    assert_int_or_pair, boolean_dispatch, handle_torch_function, has_torch_function, has_torch_function_unary,
    has_torch_function_variadic,
)
from tinytorch.nn.functional.fractional_pooling import (  # noqa: F401
    fractional_max_pool2d, fractional_max_pool2d_with_indices, fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from tinytorch.nn.functional.pooling import (  # noqa: F401
    adaptive_max_pool3d_with_indices, lp_pool3d, max_pool3d_with_indices, max_unpool3d,
)

# Autocast: the functions the op schema (codegen/ops.py) gives a policy cast their arguments
# inside tinytorch.amp.autocast regions.
from tinytorch._tensor import autocast as _autocast  # noqa: E402
from tinytorch.nn.functional._autocast_policy import POLICY as _AUTOCAST_POLICY  # noqa: E402

_autocast.wrap_namespace(globals(), _AUTOCAST_POLICY)
