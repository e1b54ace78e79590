"""The parameter glossary of ``nn``: each constructor/function parameter name with its type and
PyTorch's description, from which ``_docstrings.py`` writes every module's and function's Args
section (the default comes from the signature). A name that means different things in different
places has its readings in ``CONTEXT``, keyed by owner (``"Conv2d"``, ``"F.dropout"``); owners that
are families share a reading through ``FAMILIES``. Tests check that every parameter of every public
module and function is described here (tests/cpu/test_docstrings.py)."""
from __future__ import annotations

from tinytorch._docs.params import PARAMS as _SHARED

_RED = ("Specifies the reduction to apply to the output: ``'none'`` | ``'mean'`` | ``'sum'``. "
        "``'none'``: no reduction will be applied, ``'mean'``: the sum of the output will be divided by the "
        "number of elements in the output, ``'sum'``: the output will be summed.")
_SIZE_AVG = ("Deprecated (see :attr:`reduction`). By default, the losses are averaged over each loss element "
             "in the batch.")
_REDUCE = ("Deprecated (see :attr:`reduction`). By default, the losses are averaged or summed over "
           "observations for each minibatch depending on :attr:`size_average`.")

# name -> (type, description): the rows that read as in tinytorch.*'s glossary come from it; the
# others mean something else in nn (``dim``, ``p``, ``device``, ...)
PARAMS = {
    **{name: _SHARED[name] for name in ("input", "weight", "bias", "scale_grad_by_freq", "generator")},
    "target": ("Tensor", "the target tensor, same shape as the input unless stated."),
    "inplace": ("bool", "can optionally do the operation in-place."),
    "reduction": ("str, optional", _RED),
    "size_average": ("bool, optional", _SIZE_AVG),
    "reduce": ("bool, optional", _REDUCE),
    "device": ("device, optional", "the device of the parameters and buffers."),
    "dtype": ("dtype, optional", "the dtype of the parameters and buffers."),
    "dim": ("int", "a dimension along which the function is computed."),
    "eps": ("float", "a value added for numerical stability."),
    "training": ("bool", "apply the training-mode behaviour if ``True``."),
    "kernel_size": ("int or tuple", "the size of the window (or of the convolving kernel)."),
    "stride": ("int or tuple, optional", "the stride of the window (or of the convolution)."),
    "padding": ("int or tuple, optional", "implicit padding added on the sides of the input."),
    "dilation": ("int or tuple, optional", "spacing between kernel elements."),
    "groups": ("int, optional", "number of blocked connections from input channels to output channels."),
    "output_padding": ("int or tuple, optional",
                       "additional size added to one side of each dimension in the output shape."),
    "padding_mode": ("str, optional", "``'zeros'``, ``'reflect'``, ``'replicate'`` or ``'circular'``."),
    "in_channels": ("int", "number of channels in the input image."),
    "out_channels": ("int", "number of channels produced by the convolution."),
    "in_features": ("int", "size of each input sample."),
    "out_features": ("int", "size of each output sample."),
    "in1_features": ("int", "size of each first input sample."),
    "in2_features": ("int", "size of each second input sample."),
    "ceil_mode": ("bool", "when True, will use `ceil` instead of `floor` to compute the output shape."),
    "count_include_pad": ("bool", "when True, will include the zero-padding in the averaging calculation."),
    "divisor_override": ("int, optional", "if specified, it will be used as divisor, otherwise size of the "
                         "pooling region will be used."),
    "return_indices": ("bool", "if ``True``, will return the max indices along with the outputs."),
    "output_size": ("int or tuple", "the target output size."),
    "num_features": ("int", "number of features or channels :math:`C` of the input."),
    "momentum": ("float, optional", "the value used for the running_mean and running_var computation. Can be "
                 "set to ``None`` for cumulative moving average (i.e. simple average)."),
    "affine": ("bool", "a boolean value that when set to ``True``, this module has learnable affine parameters."),
    "track_running_stats": ("bool", "a boolean value that when set to ``True``, this module tracks the running "
                            "mean and variance, and when set to ``False``, this module does not track such "
                            "statistics and uses batch statistics instead in both training and eval modes."),
    "running_mean": ("Tensor, optional", "the running mean, updated in place in training."),
    "running_var": ("Tensor, optional", "the running variance, updated in place in training."),
    "use_input_stats": ("bool", "normalize with the input's statistics (else with the running ones)."),
    "normalized_shape": ("int or list or Size", "input shape from an expected input of size "
                         ":math:`[* \\times \\text{normalized\\_shape}[0] \\times \\dots]`; the normalization is "
                         "over the last dimensions of that shape."),
    "elementwise_affine": ("bool", "a boolean value that when set to ``True``, this module has learnable "
                           "per-element affine parameters."),
    "num_groups": ("int", "number of groups to separate the channels into."),
    "num_channels": ("int", "number of channels expected in input."),
    "num_embeddings": ("int", "size of the dictionary of embeddings."),
    "embedding_dim": ("int", "the size of each embedding vector."),
    "padding_idx": ("int, optional", "if specified, the entries at :attr:`padding_idx` do not contribute to the "
                    "gradient."),
    "max_norm": ("float, optional", "if given, each embedding vector with norm larger than :attr:`max_norm` is "
                 "renormalized to have norm :attr:`max_norm`."),
    "norm_type": ("float, optional", "the p of the p-norm to compute for the :attr:`max_norm` option."),
    "sparse": ("bool, optional", "if ``True``, gradient w.r.t. :attr:`weight` matrix will be a sparse tensor "
               "(not supported: raises NotImplementedError)."),
    "_weight": ("Tensor, optional", "an initial weight (PyTorch's private argument)."),
    "_freeze": ("bool, optional", "whether that initial weight is frozen (PyTorch's private argument)."),
    "p": ("float", "probability of an element to be zeroed."),
    "negative_slope": ("float", "controls the angle of the negative slope (which is used for negative input "
                       "values)."),
    "alpha": ("float", "the :math:`\\alpha` value for the formula."),
    "beta": ("float", "the :math:`\\beta` value for the formula."),
    "threshold": ("float", "the value to threshold at."),
    "value": ("float", "the value to replace with."),
    "min_val": ("float", "minimum value of the linear region range."),
    "max_val": ("float", "maximum value of the linear region range."),
    "lambd": ("float", "the :math:`\\lambda` value for the shrinkage formulation."),
    "approximate": ("str, optional", "the gelu approximation algorithm to use: ``'none'`` | ``'tanh'``."),
    "num_parameters": ("int", "number of :math:`a` to learn. Although it takes an int as input, there is only "
                       "two values are legitimate: 1, or the number of channels at input."),
    "init": ("float", "the initial value of :math:`a`."),
    "lower": ("float", "lower bound of the uniform distribution."),
    "upper": ("float", "upper bound of the uniform distribution."),
    "start_dim": ("int", "first dim to flatten."),
    "end_dim": ("int", "last dim to flatten."),
    "unflattened_size": ("tuple or Size", "new shape of the unflattened dimension."),
    "upscale_factor": ("int", "factor to increase spatial resolution by."),
    "downscale_factor": ("int", "factor to decrease spatial resolution by."),
    "size": ("int or tuple, optional", "output spatial sizes."),
    "scale_factor": ("float or tuple, optional", "multiplier for spatial size."),
    "mode": ("str, optional", "the upsampling algorithm: one of ``'nearest'``, ``'linear'``, ``'bilinear'``, "
             "``'nearest-exact'`` and ``'area'``."),
    "align_corners": ("bool, optional", "if ``True``, the corner pixels of the input and output tensors are "
                      "aligned, and thus preserving the values at those pixels."),
    "recompute_scale_factor": ("bool, optional", "recompute the scale_factor for use in the interpolation "
                               "calculation."),
    "antialias": ("bool, optional", "flag to apply anti-aliasing (not supported: raises NotImplementedError)."),
    "margin": ("float, optional", "the margin of the loss."),
    "swap": ("bool, optional", "the distance swap is described in detail in the paper `Learning shallow "
             "convolutional feature descriptors with triplet losses` by V. Balntas, E. Riba et al."),
    "ignore_index": ("int, optional", "specifies a target value that is ignored and does not contribute to the "
                     "input gradient."),
    "label_smoothing": ("float, optional", "a float in [0.0, 1.0]. Specifies the amount of smoothing when "
                        "computing the loss, where 0.0 means no smoothing."),
    "log_target": ("bool, optional", "specifies whether `target` is the log space."),
    "pos_weight": ("Tensor, optional", "a weight of positive examples to be broadcasted with target."),
    "log_input": ("bool, optional", "if ``True`` the loss is computed as :math:`\\exp(\\text{input}) - "
                  "\\text{target}*\\text{input}`, if ``False`` the loss is :math:`\\text{input} - "
                  "\\text{target}*\\log(\\text{input}+\\text{eps})`."),
    "full": ("bool, optional", "whether to compute full loss, i. e. to add the Stirling approximation term "
             "(or the constant of the Gaussian)."),
    "var": ("Tensor or float", "tensor of positive variance(s), one for each of the expectations in the input "
            "(heteroscedastic), or a single one (homoscedastic)."),
    "delta": ("float, optional", "specifies the threshold at which to change between delta-scaled L1 and L2 "
              "loss. The value must be positive."),
    "input1": ("Tensor", "the first input."),
    "input2": ("Tensor", "the second input."),
    "x1": ("Tensor", "first input."),
    "x2": ("Tensor", "second input."),
    "anchor": ("Tensor", "the anchor input tensor."),
    "positive": ("Tensor", "the positive input tensor."),
    "negative": ("Tensor", "the negative input tensor."),
    "distance_function": ("Callable, optional", "a nonnegative, real-valued function that quantifies the "
                          "closeness of two tensors. If not specified, `nn.PairwiseDistance` will be used."),
    "keepdim": ("bool, optional", "determines whether or not to keep the vector dimension."),
    "pad": ("tuple", "m-elements tuple, where :math:`\\frac{m}{2} \\leq` input dimensions and :math:`m` is even: "
            "the padding sizes, starting from the last dimension."),
    "num_classes": ("int", "total number of classes. If set to -1, the number of classes will be inferred as "
                    "one greater than the largest class value in the input tensor."),
    "embed_dim": ("int", "total dimension of the model."),
    "num_heads": ("int", "number of parallel attention heads. Note that ``embed_dim`` will be split across "
                  "``num_heads`` (i.e. each head will have dimension ``embed_dim // num_heads``)."),
    "dropout": ("float", "dropout probability."),
    "add_bias_kv": ("bool", "if specified, adds bias to the key and value sequences at dim=0."),
    "add_zero_attn": ("bool", "if specified, adds a new batch of zeros to the key and value sequences at dim=1."),
    "kdim": ("int, optional", "total number of features for keys. Default: ``None`` (uses ``kdim=embed_dim``)."),
    "vdim": ("int, optional", "total number of features for values. Default: ``None`` (uses ``vdim=embed_dim``)."),
    "batch_first": ("bool", "if ``True``, then the input and output tensors are provided as (batch, seq, feature)."),
    "d_model": ("int", "the number of expected features in the encoder/decoder inputs."),
    "nhead": ("int", "the number of heads in the multiheadattention models."),
    "num_encoder_layers": ("int", "the number of sub-encoder-layers in the encoder."),
    "num_decoder_layers": ("int", "the number of sub-decoder-layers in the decoder."),
    "dim_feedforward": ("int", "the dimension of the feedforward network model."),
    "activation": ("str or Callable", "the activation function of the intermediate layer, can be a string "
                   "(\"relu\" or \"gelu\") or a unary callable."),
    "custom_encoder": ("Module, optional", "custom encoder."),
    "custom_decoder": ("Module, optional", "custom decoder."),
    "layer_norm_eps": ("float", "the eps value in layer normalization components."),
    "norm_first": ("bool", "if ``True``, layer norm is done prior to attention and feedforward operations, "
                   "respectively. Otherwise it's done after."),
    "encoder_layer": ("Module", "an instance of the TransformerEncoderLayer() class."),
    "decoder_layer": ("Module", "an instance of the TransformerDecoderLayer() class."),
    "num_layers": ("int", "the number of sub-layers in the stack."),
    "input_size": ("int", "the number of expected features in the input ``x``."),
    "hidden_size": ("int", "the number of features in the hidden state ``h``."),
    "nonlinearity": ("str", "the non-linearity to use. Can be either ``'tanh'`` or ``'relu'``."),
    "bidirectional": ("bool", "if ``True``, becomes a bidirectional RNN."),
    "proj_size": ("int", "if ``> 0``, will use LSTM with projections of corresponding size (not supported "
                  "yet: raises NotImplementedError)."),
    "norm": ("Module, optional", "the layer normalization component."),
    "enable_nested_tensor": ("bool", "accepted for PyTorch compatibility (tinytorch has no nested tensors)."),
    "mask_check": ("bool", "accepted for PyTorch compatibility."),
    "modules": ("iterable or dict, optional", "the modules to add."),
    "values": ("iterable, optional", "an iterable of Parameters to add to the list."),
    "parameters": ("iterable, optional", "a mapping (dictionary) of (string : Parameter) or an iterable of "
                   "key-value pairs of type (string, Parameter)."),
    "query": ("Tensor", "query tensor; shape :math:`(N, ..., L, E)`."),
    "key": ("Tensor", "key tensor; shape :math:`(N, ..., S, E)`."),
    "attn_mask": ("Tensor, optional", "attention mask; shape must be broadcastable to the shape of attention "
                  "weights, :math:`(N,..., L, S)`. Two types of masks are supported: a boolean mask where a value "
                  "of True indicates that the element *should* take part in attention, or a float mask of the "
                  "same type as query, key, value that is added to the attention score."),
    "dropout_p": ("float", "dropout probability; if greater than 0.0, dropout is applied."),
    "is_causal": ("bool", "if set to true, the attention masking is a lower triangular matrix when the mask is a "
                  "square matrix."),
    "scale": ("float, optional", "scaling factor applied prior to softmax. If None, the default value is set to "
              ":math:`\\frac{1}{\\sqrt{E}}`."),
    "enable_gqa": ("bool", "if set to True, Grouped Query Attention (GQA) is enabled."),
    "theta": ("Tensor", "input batch of affine matrices with shape (:math:`N \\times 2 \\times 3`) for 2D or "
              "(:math:`N \\times 3 \\times 4`) for 3D."),
    "grid": ("Tensor", "flow-field of shape :math:`(N, H_\\text{out}, W_\\text{out}, 2)`."),
    "indices": ("Tensor", "the indices given out by the max pooling with ``return_indices=True``."),
    "log_probs": ("Tensor", ":math:`(T, N, C)` or :math:`(T, C)`: the logarithmized probabilities of the outputs."),
    "targets": ("Tensor", ":math:`(N, S)` or `(sum(target_lengths))`: the targets (cannot be blank)."),
    "input_lengths": ("Tensor or tuple", ":math:`(N)` or :math:`()`: lengths of the inputs (each :math:`\\leq T`)."),
    "target_lengths": ("Tensor or tuple", ":math:`(N)` or :math:`()`: lengths of the targets."),
    "blank": ("int, optional", "blank label."),
    "zero_infinity": ("bool, optional", "whether to zero infinite losses and the associated gradients."),
    "logits": ("Tensor", "``[..., num_features]`` unnormalized log probabilities."),
    "tau": ("float", "non-negative scalar temperature."),
    "hard": ("bool", "if ``True``, the returned samples will be discretized as one-hot vectors, but will be "
             "differentiated as if it is the soft sample in autograd."),
    "k": ("float", "additive factor."),
    # tinytorch's own modules and alignment losses (docs/training.md, docs/quantization.md)
    "packed": ("Tensor", "the ternary weight packed at 2 bits per weight (uint8)."),
    "weight_scale": ("float", "the scale of the ternary weight."),
    "input_norm": ("bool", "normalize the input (RMS) before quantizing it, as BitNet b1.58."),
    "qtype": ("str", "the GGUF quantization type of the packed weight."),
    "student_logits": ("Tensor", "the student's logits, :math:`(*, V)`."),
    "teacher_logits": ("Tensor", "the teacher's logits, :math:`(*, V)`."),
    "labels": ("Tensor, optional", "the class indices (token ids)."),
    "temperature": ("float", "the softmax temperature :math:`T`."),
    "policy_chosen_logps": ("Tensor", "the policy's log-probabilities of the chosen responses, :math:`(B,)`."),
    "policy_rejected_logps": ("Tensor", "the policy's log-probabilities of the rejected responses, :math:`(B,)`."),
    "ref_chosen_logps": ("Tensor", "the reference model's log-probabilities of the chosen responses."),
    "ref_rejected_logps": ("Tensor", "the reference model's log-probabilities of the rejected responses."),
    "loss_type": ("str", "``'sigmoid'`` (DPO), ``'hinge'`` or ``'ipo'``."),
    "logps": ("Tensor", "the policy's per-token log-probabilities, :math:`(B, T)`."),
    "old_logps": ("Tensor, optional", "the sampling policy's per-token log-probabilities (default: ``logps`` "
                  "detached)."),
    "ref_logps": ("Tensor, optional", "the reference policy's per-token log-probabilities (for the KL term)."),
    "rewards": ("Tensor", "one reward per completion, :math:`(B,)`, in consecutive groups."),
    "group_size": ("int", "the number of completions per prompt."),
    "mask": ("Tensor, optional", "1 for the positions that count, 0 elsewhere."),
    "epsilon": ("float", "the clipping range of the probability ratio."),
    "shift": ("bool", "predict token t + 1 from position t (causal LMs)."),
    "average": ("bool", "average over the counted positions instead of summing."),
}

# readings that depend on the owner: name -> [(owners, (type, description)), ...]
CONTEXT = {
    "input": [({"F.conv1d", "F.conv_transpose1d"}, ("Tensor", "input tensor of shape "
                                                     ":math:`(\\text{minibatch} , \\text{in\\_channels} , iW)`.")),
              ({"F.conv2d", "F.conv_transpose2d"}, ("Tensor", "input tensor of shape "
                                                    ":math:`(\\text{minibatch} , \\text{in\\_channels} , iH , iW)`.")),
              ({"F.linear", "F.bilinear"}, ("Tensor", "input of shape :math:`(*, \\text{in\\_features})`.")),
              ({"F.cross_entropy"}, ("Tensor", "predicted unnormalized logits, :math:`(C)`, :math:`(N, C)` or "
                                     ":math:`(N, C, d_1, ..., d_K)`.")),
              ({"F.nll_loss"}, ("Tensor", "log-probabilities, :math:`(N, C)` where `C = number of classes`, "
                                ":math:`(C)`, or :math:`(N, C, d_1, ..., d_K)` in case of K-dimensional loss.")),
              ({"F.embedding"}, ("Tensor", "tensor containing indices into the embedding matrix.")),
              ({"F.one_hot"}, ("Tensor", "class values of any shape (int64)."))],
    "target": [({"F.cross_entropy"}, ("Tensor", "ground truth class indices (:math:`(N)` or :math:`(N, d_1, ..., "
                                      "d_K)`, values in :math:`[0, C)`) or class probabilities (the input's shape).")),
               ({"F.nll_loss"}, ("Tensor", ":math:`(N)` where each value is :math:`0 \\leq \\text{targets}[i] "
                                 "\\leq C-1`, or :math:`(N, d_1, ..., d_K)` for K-dimensional loss."))],
    "dtype": [({"F.softmax", "F.log_softmax", "F.softmin"}, ("dtype, optional", "the desired data type of returned "
                                                            "tensor. If specified, the input tensor is cast to "
                                                            ":attr:`dtype` before the operation is performed."))],
    "bias": [({"F.conv1d", "F.conv2d", "F.conv_transpose1d", "F.conv_transpose2d"},
              ("Tensor, optional", "optional bias of shape :math:`(\\text{out\\_channels})`.")),
             ({"F.linear", "F.bilinear"}, ("Tensor, optional", "optional bias of shape :math:`(\\text{out\\_features})`.")),
             ("modules", ("bool", "if set to ``False``, the layer will not learn an additive bias."))],
    "weight": [({"F.conv1d"}, ("Tensor", "filters of shape :math:`(\\text{out\\_channels} , "
                                 "\\frac{\\text{in\\_channels}}{\\text{groups}} , kW)`.")),
               ({"F.conv2d"}, ("Tensor", "filters of shape :math:`(\\text{out\\_channels} , "
                               "\\frac{\\text{in\\_channels}}{\\text{groups}} , kH , kW)`.")),
               ({"F.conv_transpose1d", "F.conv_transpose2d"}, ("Tensor", "filters of shape :math:`(\\text{in\\_channels} "
                                                               ", \\frac{\\text{out\\_channels}}{\\text{groups}} , *kernel)`.")),
               ({"F.linear"}, ("Tensor", "weight of shape :math:`(\\text{out\\_features}, \\text{in\\_features})`.")),
               ({"F.embedding"}, ("Tensor", "the embedding matrix with number of rows equal to the maximum possible "
                                  "index + 1, and number of columns equal to the embedding size.")),
               ({"NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss", "MultiMarginLoss",
                 "MultiLabelSoftMarginLoss", "NLLLoss2d", "F.nll_loss", "F.cross_entropy", "F.binary_cross_entropy",
                 "F.binary_cross_entropy_with_logits", "F.multi_margin_loss", "F.multilabel_soft_margin_loss",
                 "F.huber_loss", "F.mse_loss", "F.l1_loss", "F.smooth_l1_loss"},
                ("Tensor, optional", "a manual rescaling weight given to each class (or element)."))],
    "p": [({"PairwiseDistance", "F.pairwise_distance", "F.pdist", "TripletMarginLoss", "F.triplet_margin_loss",
            "F.normalize"}, ("float", "the norm degree.")),
          ({"MultiMarginLoss", "F.multi_margin_loss"}, ("int", "the exponent of the hinge: 1 or 2."))],
    "dim": [({"Softmax", "LogSoftmax", "Softmin", "F.softmax", "F.log_softmax", "F.softmin"},
             ("int", "a dimension along which the softmax will be computed (so every slice along dim will sum to 1).")),
            ({"CosineSimilarity", "F.cosine_similarity"}, ("int", "dimension where cosine similarity is computed.")),
            ({"Unflatten"}, ("int", "dimension to be unflattened.")),
            ({"F.normalize"}, ("int or tuple", "the dimension to reduce.")),
            ({"GLU", "F.glu"}, ("int", "the dimension on which to split the input."))],
    "eps": [({"RMSNorm", "F.rms_norm"}, ("float, optional", "a value added to the denominator for numerical "
                                         "stability (default: the dtype's machine epsilon).")),
            ({"PairwiseDistance", "F.pairwise_distance", "TripletMarginLoss", "F.triplet_margin_loss"},
             ("float", "small value to avoid division by zero.")),
            ({"F.gumbel_softmax"}, ("float", "deprecated, has no effect."))],
    "size": [({"LocalResponseNorm", "F.local_response_norm"}, ("int", "amount of neighbouring channels used for "
                                                                "normalization."))],
    "alpha": [({"LocalResponseNorm", "F.local_response_norm"}, ("float", "multiplicative factor.")),
              ({"F.distillation_loss"}, ("float", "the weight of the distillation term (1 - alpha weighs the "
                                                  "cross entropy)."))],
    "beta": [({"LocalResponseNorm", "F.local_response_norm"}, ("float", "exponent.")),
             ({"SmoothL1Loss", "F.smooth_l1_loss"}, ("float, optional", "specifies the threshold at which to change "
                                                    "between L1 and L2 loss. The value must be non-negative.")),
             ({"F.dpo_loss"}, ("float", "the temperature of the DPO objective.")),
             ({"F.grpo_loss"}, ("float", "the weight of the KL penalty to the reference policy."))],
    "value": [({"ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "F.pad"},
               ("float", "fill value for ``'constant'`` padding.")),
              ({"F.scaled_dot_product_attention"}, ("Tensor", "value tensor; shape :math:`(N, ..., S, Ev)`."))],
    "padding": [({"ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
                  "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
                  "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d"},
                 ("int or tuple", "the size of the padding. If is `int`, uses the same padding in all boundaries."))],
    "mode": [({"F.pad"}, ("str", "``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.")),
             ({"F.grid_sample"}, ("str", "interpolation mode to calculate output values ``'bilinear'`` | "
                                  "``'nearest'``."))],
    "training": [({"F.dropout", "F.dropout1d", "F.dropout2d", "F.alpha_dropout", "F.feature_alpha_dropout"},
                  ("bool", "apply dropout if is ``True``.")),
                 ({"F.batch_norm"}, ("bool", "normalize with the batch statistics and update the running ones."))],
    "margin": [({"TripletMarginLoss", "F.triplet_margin_loss"}, ("float, optional", "the margin; must be "
                                                                  "greater than 0."))],
    "threshold": [({"Softplus", "F.softplus"}, ("float", "values above this revert to a linear function."))],
    "output_size": [({"Fold", "F.fold"}, ("int or tuple", "the shape of the spatial dimensions of the output "
                                          "(i.e., ``output.sizes()[2:]``)."))],
    "labels": [({"F.token_log_probs", "F.sequence_log_probs"}, ("Tensor", "the token ids, :math:`(*, T)`."))],
    "norm_type": [({"LPPool1d", "LPPool2d", "F.lp_pool1d", "F.lp_pool2d"}, ("float", "the power :math:`p`."))],
    "groups": [({"ChannelShuffle", "F.channel_shuffle"}, ("int", "number of groups to divide channels in."))],
    "num_layers": [({"RNN", "LSTM", "GRU"}, ("int", "number of recurrent layers. E.g., setting "
                    "``num_layers=2`` would mean stacking two RNNs together to form a stacked RNN, with the second "
                    "RNN taking in outputs of the first RNN and computing the final results."))],
    "dropout": [({"RNN", "LSTM", "GRU"}, ("float", "if non-zero, introduces a Dropout layer on the outputs of "
                 "each RNN layer except the last layer, with dropout probability equal to :attr:`dropout`."))],
}


def lookup(owner: str, name: str, is_module: bool):
    """(type, description) of parameter ``name`` of ``owner``, or None when the glossary lacks it."""
    for owners, entry in CONTEXT.get(name, ()):
        if owner in owners or (owners == "modules" and is_module):
            return entry
    return PARAMS.get(name)


# 3-D convolutions, EmbeddingBag, lazy modules, SyncBatchNorm (tinytorch layers3d)
CONTEXT["input"] += [({"F.conv3d", "F.conv_transpose3d"}, ("Tensor", "input tensor of shape "
                                                           ":math:`(\\text{minibatch} , \\text{in\\_channels} , iT , "
                                                           "iH , iW)`.")),
                     ({"F.embedding_bag"}, ("Tensor", "tensor containing bags of indices into the embedding "
                                            "matrix."))]
CONTEXT["bias"][0][0].update({"F.conv3d", "F.conv_transpose3d"})
CONTEXT["weight"] += [({"F.conv3d"}, ("Tensor", "filters of shape :math:`(\\text{out\\_channels} , "
                                      "\\frac{\\text{in\\_channels}}{\\text{groups}} , kT , kH , kW)`.")),
                      ({"F.conv_transpose3d"}, ("Tensor", "filters of shape :math:`(\\text{in\\_channels} , "
                                                "\\frac{\\text{out\\_channels}}{\\text{groups}} , kT , kH , kW)`.")),
                      ({"F.embedding_bag"}, ("Tensor", "the embedding matrix with number of rows equal to the "
                                             "maximum possible index + 1, and number of columns equal to the "
                                             "embedding size."))]
PARAMS.update({
    "num_embeddings": ("int", "size of the dictionary of embeddings."),
    "embedding_dim": ("int", "the size of each embedding vector."),
    "max_norm": ("float, optional", "If given, each embedding vector with norm larger than :attr:`max_norm` is "
                 "renormalized to have norm :attr:`max_norm`."),
    "norm_type": ("float, optional", "The p of the p-norm to compute for the :attr:`max_norm` option."),
    "sparse": ("bool, optional", "if ``True``, gradient w.r.t. :attr:`weight` matrix will be a sparse tensor "
               "(not supported by tinytorch: raises NotImplementedError)."),
    "offsets": ("Tensor, optional", "only used when :attr:`input` is 1D. :attr:`offsets` determines the starting "
                "index position of each bag (sequence) in :attr:`input`."),
    "per_sample_weights": ("Tensor, optional", "a tensor of float / double weights, or None to indicate all "
                           "weights should be taken to be 1. If specified, :attr:`per_sample_weights` must have "
                           "exactly the same shape as input and is treated as having the same :attr:`offsets`, if "
                           "those are not None. Only supported for ``mode='sum'``."),
    "include_last_offset": ("bool, optional", "if ``True``, the size of offsets is equal to the number of bags + 1. "
                            "The last element is the size of the input, or the ending index position of the last "
                            "bag (sequence)."),
    "padding_idx": ("int, optional", "If specified, the entries at :attr:`padding_idx` do not contribute to the "
                    "gradient; therefore, the embedding vector at :attr:`padding_idx` is not updated during "
                    "training, i.e. it remains as a fixed \"pad\". For a newly constructed EmbeddingBag, the "
                    "embedding vector at :attr:`padding_idx` will default to all zeros. Note that the embedding "
                    "vector at :attr:`padding_idx` is excluded from the reduction."),
    "_weight": ("Tensor, optional", "an initial weight matrix of shape (num_embeddings, embedding_dim) (used by "
                ":meth:`from_pretrained`)."),
    "num_chunks": ("int", "the number of gates whose weights are stacked by rows: 1 (RNNCell), 4 (LSTMCell) "
                   "or 3 (GRUCell)."),
    "process_group": ("ProcessGroup, optional", "synchronization of stats happen within each process group "
                      "individually. Default behavior is synchronization across the whole world."),
})
CONTEXT.setdefault("mode", []).append(({"EmbeddingBag", "F.embedding_bag"}, (
    "str, optional", "``\"sum\"``, ``\"mean\"`` or ``\"max\"``. Specifies the way to reduce the bag. ``\"sum\"`` "
    "computes the weighted sum, taking :attr:`per_sample_weights` into consideration. ``\"mean\"`` computes the "
    "average of the values in the bag, ``\"max\"`` computes the max value over each bag.")))
PARAMS.update({   # F.multi_head_attention_forward (PyTorch's words)
    "embed_dim_to_check": ("int", "total dimension of the model."),
    "in_proj_weight": ("Tensor", "input projection weight, :math:`(3E, E)`."),
    "in_proj_bias": ("Tensor", "input projection bias, :math:`(3E)`."),
    "bias_k": ("Tensor", "bias of the key sequence to be added at dim=0, :math:`(1, 1, E)`."),
    "bias_v": ("Tensor", "bias of the value sequence to be added at dim=0, :math:`(1, 1, E)`."),
    "out_proj_weight": ("Tensor", "the output projection weight, :math:`(E, E)`."),
    "out_proj_bias": ("Tensor", "the output projection bias, :math:`(E)`."),
    "key_padding_mask": ("Tensor, optional", "if provided, specified padding elements in the key will be ignored "
                         "by the attention (bool: ``True`` is ignored; float: added to the scores), :math:`(N, S)`."),
    "need_weights": ("bool", "output attn_output_weights."),
    "use_separate_proj_weight": ("bool", "the function accept the proj. weights for query, key, and value in "
                                 "different forms. If false, in_proj_weight will be used, which is a combination of "
                                 "q_proj_weight, k_proj_weight, v_proj_weight."),
    "q_proj_weight": ("Tensor, optional", "input projection weight of the query, :math:`(E, E)`."),
    "k_proj_weight": ("Tensor, optional", "input projection weight of the key, :math:`(E, kdim)`."),
    "v_proj_weight": ("Tensor, optional", "input projection weight of the value, :math:`(E, vdim)`."),
    "static_k": ("Tensor, optional", "static key used for attention operators, :math:`(N*num\\_heads, S, "
                 "E/num\\_heads)`."),
    "static_v": ("Tensor, optional", "static value used for attention operators, :math:`(N*num\\_heads, S, "
                 "E/num\\_heads)`."),
    "average_attn_weights": ("bool", "if ``True``, the returned ``attn_weights`` are averaged across heads; "
                             "otherwise given per head."),
})
PARAMS.update({   # fractional max pooling (PyTorch's words)
    "output_ratio": ("float or tuple, optional", "If one wants to have an output size as a ratio of the input size, "
                     "this option can be given. This has to be a number or tuple in the range (0, 1)."),
    "_random_samples": ("Tensor, optional", "the pseudo-random samples in [0, 1) that place the pooling windows, "
                        ":math:`(N, C, 2)` (2-D) or :math:`(N, C, 3)` (3-D); drawn on each call when ``None``."),
})
PARAMS.update({   # AdaptiveLogSoftmaxWithLoss (PyTorch's words)
    "n_classes": ("int", "Number of classes in the dataset."),
    "cutoffs": ("Sequence", "Cutoffs used to assign targets to their buckets."),
    "div_value": ("float, optional", "value used as an exponent to compute sizes of the clusters."),
    "head_bias": ("bool, optional", "If ``True``, adds a bias term to the 'head' of the adaptive softmax."),
})
PARAMS.update({   # linear_cross_entropy / LinearCrossEntropyLoss (PyTorch's words)
    "linear_weight": ("Tensor", "linear weight, :math:`(C, in\\_features)` or :math:`(C, d_1, ..., d_K, "
                      "in\\_features)`."),
    "linear_bias": ("Tensor, optional", "bias added to the linear projection (shape ``(C,)`` or ``(C, d_1, ..., "
                    "d_K)``, matching :attr:`linear_weight`)."),
    "ignore_index": ("int, optional", "Specifies a target value that is ignored and does not contribute to the "
                     "input gradient."),
    "label_smoothing": ("float, optional", "A float in [0.0, 1.0]. Specifies the amount of smoothing when computing "
                        "the loss, where 0.0 means no smoothing."),
    "options": ("LinearCrossEntropyOptions, optional", "chunking options; ``None`` computes the full logits "
                "(the reference implementation)."),
    "num_classes": ("int", "Number of classes, :math:`C`."),
})
CONTEXT.setdefault("out_features", []).append(({"LinearCrossEntropyLoss"}, (
    "tuple[int], optional", "specifies dimensions :math:`(d_1, d_2, ..., d_K)` for K-dimensional loss.")))
CONTEXT["weight"].append(({"LinearCrossEntropyLoss", "F.linear_cross_entropy"}, (
    "Tensor, optional", "a manual rescaling weight given to each class. If given, has to be a Tensor of size `C`.")))
PARAMS.update({   # nn.functional's __torch_function__ helpers (torch.overrides' words)
    "relevant_args": ("iterable", "Iterable of arguments to check for __torch_function__ methods."),
    "public_api": ("function", "Function exposed by the public torch API originally called like "
                   "``public_api(*args, **kwargs)`` on which arguments are now being checked."),
    "arg_name": ("str", "the name of the argument."),
    "arg_index": ("int", "the position of the boolean argument."),
    "default": ("bool", "the value of the flag when the argument is not passed."),
    "if_true": ("callable", "the function called when the flag is true."),
    "if_false": ("callable", "the function called when the flag is false."),
    "module_name": ("str, optional", "the ``__module__`` of the returned function."),
    "func_name": ("str, optional", "the ``__name__`` of the returned function."),
    "arg": ("int or tuple", "the value to check."),
    "message": ("str", "the assertion message, formatted with ``arg_name``."),
})
CONTEXT["size"].append(({"CrossMapLRN2d"}, ("int", "amount of neighbouring channels used for normalization.")))
CONTEXT["alpha"].append(({"CrossMapLRN2d"}, ("float", "multiplicative factor.")))
CONTEXT["beta"].append(({"CrossMapLRN2d"}, ("float", "exponent.")))
PARAMS.update({   # F.grouped_mm (PyTorch's words)
    "mat_a": ("Tensor", "Left operand. When 2D, its leading dimension is sliced into groups according to ``offs``. "
              "When 3D, its first dimension enumerates the groups directly."),
    "mat_b": ("Tensor", "Right operand: 3D ``(num_groups, K, N)``, or 2D with its jagged dimension sliced by "
              "``offs``."),
    "offs": ("Tensor, optional", "1D tensor of monotonically increasing ``int32`` offsets that delimit the jagged "
             "dimension of any 2D operand; ``offs[i]`` marks the end of group ``i``."),
    "out_dtype": ("dtype, optional", "the output dtype (must be ``mat_a``'s)."),
})
CONTEXT["bias"].append(({"F.grouped_mm"}, ("Tensor, optional", "not supported yet (as PyTorch's): raises "
                                          "NotImplementedError.")))
