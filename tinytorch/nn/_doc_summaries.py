"""PyTorch's one-paragraph summaries of the ``nn`` modules and ``nn.functional`` functions whose
own docstrings are only an implementation note (or absent); ``_docstrings.py`` puts the summary
first, the note after it, then the Args section from ``_doc_params.py``."""
from __future__ import annotations


def _pool(kind: str, d: int, adaptive: bool = False) -> str:
    return (f"Applies a {d}D {'adaptive ' if adaptive else ''}{kind} pooling over an input signal composed of "
            "several input planes.")


def _pad(how: str) -> str:
    return f"Pads the input tensor {how}."


MODULES = {
    **{f"AdaptiveAvgPool{d}d": _pool("average", d, True) for d in (1, 2, 3)},
    **{f"AdaptiveMaxPool{d}d": _pool("max", d, True) for d in (1, 2, 3)},
    **{f"AvgPool{d}d": _pool("average", d) for d in (1, 2, 3)},
    **{f"MaxPool{d}d": _pool("max", d) for d in (1, 2, 3)},
    "BatchNorm3d": "Applies Batch Normalization over a 5D input (a mini-batch of 3D inputs with additional channel "
                   "dimension).",
    "InstanceNorm3d": "Applies Instance Normalization over a 5D input (a mini-batch of 3D inputs with additional "
                      "channel dimension).",
    "Dropout3d": "Randomly zero out entire channels (a channel is a 3D feature map).",
    "RNNCell": "An Elman RNN cell with tanh or ReLU non-linearity.",
    "LSTMCell": "A long short-term memory (LSTM) cell.",
    "GRUCell": "A gated recurrent unit (GRU) cell.",
    **{f"CircularPad{d}d": _pad("using circular padding of the input boundary") for d in (1, 2, 3)},
    **{f"ConstantPad{d}d": _pad("boundaries with a constant value") for d in (1, 2, 3)},
    **{f"ReflectionPad{d}d": _pad("using the reflection of the input boundary") for d in (1, 2, 3)},
    **{f"ReplicationPad{d}d": _pad("using replication of the input boundary") for d in (1, 2, 3)},
    **{f"ZeroPad{d}d": _pad("boundaries with zero") for d in (1, 2, 3)},
    "BCELoss": "Creates a criterion that measures the Binary Cross Entropy between the target and the input "
               "probabilities.",
    "BCEWithLogitsLoss": "This loss combines a `Sigmoid` layer and the `BCELoss` in one single class. This version "
                         "is more numerically stable than using a plain `Sigmoid` followed by a `BCELoss` as, by "
                         "combining the operations into one layer, we take advantage of the log-sum-exp trick for "
                         "numerical stability.",
    "BatchNorm1d": "Applies Batch Normalization over a 2D or 3D input.",
    "BatchNorm2d": "Applies Batch Normalization over a 4D input (a mini-batch of 2D inputs with additional channel "
                   "dimension).",
    "Bilinear": "Applies a bilinear transformation to the incoming data: :math:`y = x_1^T A x_2 + b`.",
    "CELU": "Applies the CELU function element-wise: "
            ":math:`\\text{CELU}(x) = \\max(0,x) + \\min(0, \\alpha * (\\exp(x/\\alpha) - 1))`.",
    "Conv1d": "Applies a 1D convolution over an input signal composed of several input planes.",
    "Conv2d": "Applies a 2D convolution over an input signal composed of several input planes.",
    "ConvTranspose1d": "Applies a 1D transposed convolution operator over an input image composed of several input "
                       "planes.",
    "ConvTranspose2d": "Applies a 2D transposed convolution operator over an input image composed of several input "
                       "planes.",
    "CosineEmbeddingLoss": "Creates a criterion that measures the loss given input tensors :math:`x_1`, :math:`x_2` "
                           "and a `Tensor` label :math:`y` with values 1 or -1. Use (:math:`y=1`) to maximize the "
                           "cosine similarity of two inputs, and (:math:`y=-1`) otherwise.",
    "CosineSimilarity": "Returns cosine similarity between :math:`x_1` and :math:`x_2`, computed along `dim`.",
    "CrossEntropyLoss": "This criterion computes the cross entropy loss between input logits and target.",
    "Dropout": "During training, randomly zeroes some of the elements of the input tensor with probability "
               ":attr:`p`; the outputs are scaled by a factor of :math:`\\frac{1}{1-p}` during training. During "
               "evaluation the module simply computes an identity function.",
    "Dropout1d": "Randomly zero out entire channels (a channel is a 1D feature map).",
    "Dropout2d": "Randomly zero out entire channels (a channel is a 2D feature map).",
    "ELU": "Applies the Exponential Linear Unit (ELU) function, element-wise.",
    "Embedding": "A simple lookup table that stores embeddings of a fixed dictionary and size.",
    "Flatten": "Flattens a contiguous range of dims into a tensor.",
    "Fold": "Combines an array of sliding local blocks into a large containing tensor.",
    "GELU": "Applies the Gaussian Error Linear Units function: :math:`\\text{GELU}(x) = x * \\Phi(x)`.",
    "GLU": "Applies the gated linear unit function :math:`{GLU}(a, b)= a \\otimes \\sigma(b)` where :math:`a` is the "
           "first half of the input matrices and :math:`b` is the second half.",
    "GaussianNLLLoss": "Gaussian negative log likelihood loss.",
    "GroupNorm": "Applies Group Normalization over a mini-batch of inputs.",
    "Hardshrink": "Applies the Hard Shrinkage (Hardshrink) function element-wise.",
    "Hardsigmoid": "Applies the Hardsigmoid function element-wise.",
    "Hardswish": "Applies the Hardswish function, element-wise.",
    "Hardtanh": "Applies the HardTanh function element-wise.",
    "HingeEmbeddingLoss": "Measures the loss given an input tensor :math:`x` and a labels tensor :math:`y` "
                          "(containing 1 or -1).",
    "HuberLoss": "Creates a criterion that uses a squared term if the absolute element-wise error falls below delta "
                 "and a delta-scaled L1 term otherwise.",
    "Identity": "A placeholder identity operator that is argument-insensitive.",
    "InstanceNorm1d": "Applies Instance Normalization over a 2D (unbatched) or 3D (batched) input.",
    "InstanceNorm2d": "Applies Instance Normalization over a 4D input (a mini-batch of 2D inputs with additional "
                      "channel dimension).",
    "KLDivLoss": "The Kullback-Leibler divergence loss.",
    "L1Loss": "Creates a criterion that measures the mean absolute error (MAE) between each element in the input "
              ":math:`x` and target :math:`y`.",
    "LayerNorm": "Applies Layer Normalization over a mini-batch of inputs.",
    "LeakyReLU": "Applies the LeakyReLU function element-wise.",
    "Linear": "Applies an affine linear transformation to the incoming data: :math:`y = xA^T + b`.",
    "LogSigmoid": "Applies the Logsigmoid function element-wise.",
    "LogSoftmax": "Applies the :math:`\\log(\\text{Softmax}(x))` function to an n-dimensional input Tensor.",
    "MSELoss": "Creates a criterion that measures the mean squared error (squared L2 norm) between each element in "
               "the input :math:`x` and target :math:`y`.",
    "MarginRankingLoss": "Creates a criterion that measures the loss given inputs :math:`x1`, :math:`x2`, two 1D "
                         "mini-batch or 0D `Tensors`, and a label 1D mini-batch or 0D `Tensor` :math:`y` "
                         "(containing 1 or -1).",
    "Mish": "Applies the Mish function, element-wise.",
    "ModuleDict": "Holds submodules in a dictionary.",
    "ModuleList": "Holds submodules in a list.",
    "MultiLabelSoftMarginLoss": "Creates a criterion that optimizes a multi-label one-versus-all loss based on "
                                "max-entropy, between input :math:`x` and target :math:`y` of size :math:`(N, C)`.",
    "MultiMarginLoss": "Creates a criterion that optimizes a multi-class classification hinge loss (margin-based "
                       "loss) between input :math:`x` and output :math:`y`.",
    "MultiheadAttention": "Allows the model to jointly attend to information from different representation "
                          "subspaces.",
    "NLLLoss": "The negative log likelihood loss. It is useful to train a classification problem with `C` classes.",
    "PReLU": "Applies the element-wise PReLU function: :math:`\\text{PReLU}(x) = \\max(0,x) + a * \\min(0,x)`.",
    "PairwiseDistance": "Computes the pairwise distance between input vectors, or between columns of input "
                        "matrices.",
    "ParameterDict": "Holds parameters in a dictionary.",
    "ParameterList": "Holds parameters in a list.",
    "PixelShuffle": "Rearrange elements in a tensor according to an upscaling factor.",
    "PixelUnshuffle": "Reverse the PixelShuffle operation.",
    "PoissonNLLLoss": "Negative log likelihood loss with Poisson distribution of target.",
    "RMSNorm": "Applies Root Mean Square Layer Normalization over a mini-batch of inputs.",
    "ReLU": "Applies the rectified linear unit function element-wise.",
    "ReLU6": "Applies the ReLU6 function element-wise: :math:`\\text{ReLU6}(x) = \\min(\\max(0,x), 6)`.",
    "SELU": "Applies the SELU function element-wise.",
    "Sequential": "A sequential container. Modules will be added to it in the order they are passed in the "
                  "constructor.",
    "SiLU": "Applies the Sigmoid Linear Unit (SiLU) function, element-wise.",
    "Sigmoid": "Applies the Sigmoid function element-wise.",
    "SmoothL1Loss": "Creates a criterion that uses a squared term if the absolute element-wise error falls below "
                    "beta and an L1 term otherwise.",
    "SoftMarginLoss": "Creates a criterion that optimizes a two-class classification logistic loss between input "
                      "tensor :math:`x` and target tensor :math:`y` (containing 1 or -1).",
    "Softmax": "Applies the Softmax function to an n-dimensional input Tensor, rescaling them so that the elements "
               "of the n-dimensional output Tensor lie in the range [0,1] and sum to 1.",
    "Softmin": "Applies the Softmin function to an n-dimensional input Tensor.",
    "Softplus": "Applies the Softplus function element-wise.",
    "Softshrink": "Applies the soft shrinkage function element-wise.",
    "Softsign": "Applies the element-wise Softsign function.",
    "Tanh": "Applies the Hyperbolic Tangent (Tanh) function element-wise.",
    "Tanhshrink": "Applies the element-wise Tanhshrink function.",
    "Threshold": "Thresholds each element of the input Tensor.",
    "TripletMarginLoss": "Creates a criterion that measures the triplet loss given an input tensors :math:`x1`, "
                         ":math:`x2`, :math:`x3` and a margin with a value greater than :math:`0`.",
    "Unflatten": "Unflattens a tensor dim expanding it to a desired shape.",
    "Unfold": "Extracts sliding local blocks from a batched input tensor.",
    "Upsample": "Upsamples a given multi-channel 1D (temporal), 2D (spatial) or 3D (volumetric) data.",
    "UpsamplingBilinear2d": "Applies a 2D bilinear upsampling to an input signal composed of several input channels.",
    "UpsamplingNearest2d": "Applies a 2D nearest neighbor upsampling to an input signal composed of several input "
                           "channels.",
}

FUNCTIONS = {
    **{f"adaptive_avg_pool{d}d": _pool("average", d, True) for d in (1, 2)},
    **{f"adaptive_max_pool{d}d": _pool("max", d, True) for d in (1, 2)},
    **{f"avg_pool{d}d": _pool("average", d) for d in (1, 2)},
    **{f"max_pool{d}d": _pool("max", d) for d in (1, 2)},
    "batch_norm": "Apply Batch Normalization for each channel across a batch of data.",
    "binary_cross_entropy": "Compute Binary Cross Entropy between the target and input probabilities.",
    "binary_cross_entropy_with_logits": "Compute Binary Cross Entropy between target and input logits.",
    "celu": "Applies element-wise, :math:`\\text{CELU}(x) = \\max(0,x) + \\min(0, \\alpha * (\\exp(x/\\alpha) - 1))`.",
    "conv1d": "Applies a 1D convolution over an input signal composed of several input planes.",
    "conv2d": "Applies a 2D convolution over an input image composed of several input planes.",
    "conv_transpose1d": "Applies a 1D transposed convolution operator over an input signal composed of several input "
                        "planes, sometimes also called \"deconvolution\".",
    "conv_transpose2d": "Applies a 2D transposed convolution operator over an input image composed of several input "
                        "planes, sometimes also called \"deconvolution\".",
    "cosine_embedding_loss": "Compute the cosine embedding loss.",
    "cosine_similarity": "Returns cosine similarity between ``x1`` and ``x2``, computed along dim.",
    "cross_entropy": "Compute the cross entropy loss between input logits and target.",
    "dropout": "During training, randomly zeroes some elements of the input tensor with probability :attr:`p`, "
               "scaling the others by :math:`\\frac{1}{1-p}`.",
    "dropout1d": "Randomly zero out entire channels (a channel is a 1D feature map).",
    "dropout2d": "Randomly zero out entire channels (a channel is a 2D feature map).",
    "dropout3d": "Randomly zero out entire channels (a channel is a 3D feature map).",
    "elu": "Apply the Exponential Linear Unit (ELU) function element-wise.",
    "embedding": "Generate a simple lookup table that looks up embeddings in a fixed dictionary and size.",
    "fold": "Combine an array of sliding local blocks into a large containing tensor.",
    "gaussian_nll_loss": "Gaussian negative log likelihood loss.",
    "gelu": "When the approximate argument is 'none', it applies element-wise the function "
            ":math:`\\text{GELU}(x) = x * \\Phi(x)` where :math:`\\Phi(x)` is the Cumulative Distribution Function for "
            "Gaussian Distribution. When the approximate argument is 'tanh', Gelu is estimated with tanh.",
    "glu": "The gated linear unit. Computes :math:`\\text{GLU}(a, b) = a \\otimes \\sigma(b)` where `input` is split "
           "in half along `dim` to form `a` and `b`.",
    "group_norm": "Apply Group Normalization for last certain number of dimensions.",
    "hardshrink": "Apply the hard shrinkage function element-wise.",
    "hardsigmoid": "Apply the Hardsigmoid function element-wise.",
    "hardswish": "Apply hardswish function, element-wise.",
    "hardtanh": "Apply the HardTanh function element-wise.",
    "hinge_embedding_loss": "Compute the hinge embedding loss.",
    "huber_loss": "Compute the Huber loss, with optional weighting.",
    "instance_norm": "Apply Instance Normalization independently for each channel in every data sample within a "
                     "batch.",
    "kl_div": "Compute the KL Divergence loss.",
    "l1_loss": "Function that takes the mean element-wise absolute value difference.",
    "layer_norm": "Apply Layer Normalization for last certain number of dimensions.",
    "leaky_relu": "Applies element-wise, "
                  ":math:`\\text{LeakyReLU}(x) = \\max(0, x) + \\text{negative\\_slope} * \\min(0, x)`.",
    "linear": "Applies a linear transformation to the incoming data: :math:`y = xA^T + b`.",
    "log_softmax": "Apply a softmax followed by a logarithm.",
    "logsigmoid": "Applies element-wise :math:`\\text{LogSigmoid}(x_i) = \\log \\left(\\frac{1}{1 + \\exp(-x_i)}\\right)`.",
    "margin_ranking_loss": "Compute the margin ranking loss.",
    "mish": "Apply the Mish function, element-wise.",
    "mse_loss": "Compute the element-wise mean squared error, with optional weighting.",
    "multi_margin_loss": "Compute the multi margin loss, with optional weighting.",
    "multilabel_soft_margin_loss": "Compute the multilabel soft margin loss.",
    "nll_loss": "Compute the negative log likelihood loss.",
    "normalize": "Perform :math:`L_p` normalization of inputs over specified dimension.",
    "one_hot": "Takes LongTensor with index values of shape ``(*)`` and returns a tensor of shape ``(*, "
               "num_classes)`` that have zeros everywhere except where the index of last dimension matches the "
               "corresponding value of the input tensor, in which case it will be 1.",
    "pad": "Pads tensor.",
    "pairwise_distance": "Computes the pairwise distance between input vectors, or between columns of input "
                         "matrices: :math:`\\|x_1 - x_2 + \\epsilon\\|_p` over the last dimension.",
    "pixel_shuffle": "Rearranges elements in a tensor of shape :math:`(*, C \\times r^2, H, W)` to a tensor of "
                     "shape :math:`(*, C, H \\times r, W \\times r)`, where r is the :attr:`upscale_factor`.",
    "pixel_unshuffle": "Reverses the :class:`~nn.PixelShuffle` operation by rearranging elements in a tensor of "
                       "shape :math:`(*, C, H \\times r, W \\times r)` to a tensor of shape "
                       ":math:`(*, C \\times r^2, H, W)`, where r is the :attr:`downscale_factor`.",
    "poisson_nll_loss": "Compute the Poisson negative log likelihood loss.",
    "prelu": "Applies element-wise the function :math:`\\text{PReLU}(x) = \\max(0,x) + \\text{weight} * \\min(0,x)` "
             "where weight is a learnable parameter.",
    "relu": "Applies the rectified linear unit function element-wise.",
    "relu6": "Applies the element-wise function :math:`\\text{ReLU6}(x) = \\min(\\max(0,x), 6)`.",
    "relu_": "In-place version of :func:`relu`.",
    "rms_norm": "Apply Root Mean Square Layer Normalization.",
    "selu": "Applies element-wise, :math:`\\text{SELU}(x) = scale * (\\max(0,x) + \\min(0, \\alpha * (\\exp(x) - 1)))`, "
            "with :math:`\\alpha=1.6732632423543772848170429916717` and "
            ":math:`scale=1.0507009873554804934193349852946`.",
    "sigmoid": "Applies the element-wise function :math:`\\text{Sigmoid}(x) = \\frac{1}{1 + \\exp(-x)}`.",
    "silu": "Apply the Sigmoid Linear Unit (SiLU) function, element-wise.",
    "smooth_l1_loss": "Compute the Smooth L1 loss.",
    "soft_margin_loss": "Compute the soft margin loss.",
    "softmax": "Apply a softmax function: :math:`\\text{Softmax}(x_{i}) = \\frac{\\exp(x_i)}{\\sum_j \\exp(x_j)}`, "
               "along dim, so every slice along dim will sum to 1.",
    "softmin": "Apply a softmin function: :math:`\\text{Softmin}(x_{i}) = \\frac{\\exp(-x_i)}{\\sum_j \\exp(-x_j)}`.",
    "softplus": "Applies element-wise, the function "
                ":math:`\\text{Softplus}(x) = \\frac{1}{\\beta} * \\log(1 + \\exp(\\beta * x))`.",
    "softshrink": "Applies the soft shrinkage function elementwise.",
    "softsign": "Applies element-wise, the function :math:`\\text{SoftSign}(x) = \\frac{x}{1 + |x|}`.",
    "tanh": "Applies element-wise, :math:`\\text{Tanh}(x) = \\tanh(x)`.",
    "tanhshrink": "Applies element-wise, :math:`\\text{Tanhshrink}(x) = x - \\text{Tanh}(x)`.",
    "threshold": "Apply a threshold to each element of the input Tensor.",
    "triplet_margin_loss": "Compute the triplet loss between given input tensors and a margin greater than 0.",
    "unfold": "Extract sliding local blocks from a batched input tensor.",
}

# 3-D convolutions, EmbeddingBag, lazy modules, SyncBatchNorm (tinytorch layers3d)
MODULES.update({
    "Conv3d": "Applies a 3D convolution over an input signal composed of several input planes.",
    "ConvTranspose3d": "Applies a 3D transposed convolution operator over an input image composed of several input "
                       "planes.",
    "EmbeddingBag": "Compute sums or means of 'bags' of embeddings, without instantiating the intermediate "
                    "embeddings.",
    "LazyLinear": "A :class:`torch.nn.Linear` module where `in_features` is inferred.",
    **{f"LazyConv{n}d": f"A :class:`torch.nn.Conv{n}d` module with lazy initialization of the ``in_channels`` "
                        f"argument." for n in (1, 2, 3)},
    **{f"LazyConvTranspose{n}d": f"A :class:`torch.nn.ConvTranspose{n}d` module with lazy initialization of the "
                                 f"``in_channels`` argument." for n in (1, 2, 3)},
    **{f"LazyBatchNorm{n}d": f"A :class:`torch.nn.BatchNorm{n}d` module with lazy initialization."
       for n in (1, 2, 3)},
    **{f"LazyInstanceNorm{n}d": f"A :class:`torch.nn.InstanceNorm{n}d` module with lazy initialization of the "
                                f"``num_features`` argument." for n in (1, 2, 3)},
    "SyncBatchNorm": "Applies Batch Normalization over a N-Dimensional input.",
    "RNNCellBase": "The base class of RNNCell, LSTMCell and GRUCell.",
    "AdaptiveLogSoftmaxWithLoss": "Efficient softmax approximation.",
    "CrossMapLRN2d": "Applies local response normalization across the channels of a 4D input (PyTorch's legacy "
                     "CrossMapLRN2d).",
    "LinearCrossEntropyLoss": "This criterion computes the cross entropy loss between input, linearly transformed "
                              "to logits, and target.",
    "MaxUnpool3d": "Computes a partial inverse of :class:`MaxPool3d`.",
    "LPPool3d": "Applies a 3D power-average pooling over an input signal composed of several input planes.",
    "FractionalMaxPool2d": "Applies a 2D fractional max pooling over an input signal composed of several input "
                           "planes.",
    "FractionalMaxPool3d": "Applies a 3D fractional max pooling over an input signal composed of several input "
                           "planes.",
})
FUNCTIONS.update({
    "conv3d": "Applies a 3D convolution over an input image composed of several input planes.",
    "conv_transpose3d": "Applies a 3D transposed convolution operator over an input image composed of several input "
                        "planes, sometimes also called \"deconvolution\".",
    "embedding_bag": "Compute sums, means or maxes of `bags` of embeddings.",
    "max_unpool3d": "Compute a partial inverse of :class:`MaxPool3d`.",
    "lp_pool3d": "Apply a 3D power-average pooling over an input signal composed of several input planes.",
    "multi_head_attention_forward": "Forward method for MultiHeadAttention.",
    "has_torch_function": "Check for __torch_function__ implementations in the elements of an iterable.",
    "has_torch_function_unary": "Special case of `has_torch_function` for single inputs.",
    "has_torch_function_variadic": "Special case of `has_torch_function` that skips tuple creation.",
    "handle_torch_function": "Implement a function with checks for ``__torch_function__`` overrides.",
    "boolean_dispatch": "Dispatches to either of 2 functions based on a boolean argument.",
    "assert_int_or_pair": "Asserts that an argument is an int or a pair.",
    "grouped_mm": "Computes a grouped matrix multiply that shares weight shapes across experts but allows jagged "
                  "token counts per expert, which is common in Mixture-of-Experts (MoE) layers.",
    "linear_cross_entropy": "Compute the cross entropy loss between inputs, transformed linearly, and target.",
    **{f"fractional_max_pool{n}d{suffix}": f"Applies {n}D fractional max pooling over an input signal composed of "
                                           f"several input planes." for n in (2, 3) for suffix in ("", "_with_indices")},
    "adaptive_max_pool3d_with_indices": "Applies a 3D adaptive max pooling over an input signal composed of "
                                        "several input planes, returning the indices of the maxima too.",
    "max_pool3d_with_indices": "Applies a 3D max pooling over an input signal composed of several input planes, "
                               "returning the indices of the maxima too.",
})
