"""The per-function readings of the parameter names whose meaning differs between ``tinytorch.*``
functions and ``Tensor`` methods (``other`` of ``add`` is "the tensor or number to add to input",
of ``eq`` "the tensor or value to compare"): ``CONTEXT[name]`` lists ``(names, (type,
description))``, and the first whose names meet the callable's wins; ``_doc_params.PARAMS`` has
the reading everywhere else. Names are those the callable is exported under (``"add"``,
``"Tensor.view"``); a method or an in-place variant also matches its function's name."""
from __future__ import annotations

from typing import Dict, FrozenSet, List, Tuple

Entry = Tuple[str, str]

_DIM_REDUCE = ("int or tuple of ints, optional", "the dimension or dimensions to reduce. If ``None``, all "
               "dimensions are reduced.")
_DTYPE_CAST = ("dtype, optional", "the desired data type of returned tensor. If specified, the input tensor is "
               "casted to :attr:`dtype` before the operation is performed. This is useful for preventing data type "
               "overflows.")
_MEMBERS = ("str", "the reduction to apply for non-unique indices: ``'sum'``, ``'prod'``, ``'mean'``, ``'amax'`` "
            "or ``'amin'``.")

# readings that depend on the function: name -> [(names the callable is exported under, entry), ...]
CONTEXT: Dict[str, List[Tuple[FrozenSet[str], Entry]]] = {}


def _reading(param: str, owners: str, typ: str, desc: str) -> None:
    CONTEXT.setdefault(param, []).append((frozenset(owners.split()), (typ, desc)))


_SAME_AS = ("Tensor", "the result tensor has the same {} as :attr:`other`.")
for _o, _what in (("Tensor.expand_as Tensor.view_as", "size"), ("Tensor.reshape_as", "shape")):
    _reading("other", _o, _SAME_AS[0], _SAME_AS[1].format(_what))
_reading("other", "Tensor.type_as", "Tensor", "the tensor which has the desired type.")
_reading("other", "add Tensor.add_", "Tensor or Number", "the tensor or number to add to :attr:`input`.")
_reading("other", "sub subtract rsub Tensor.sub_", "Tensor or Number", "the tensor or number to subtract from "
         ":attr:`input`.")
_reading("other", "mul multiply Tensor.mul_", "Tensor or Number", "the tensor or number to multiply input by.")
_reading("other", "div divide true_divide floor_divide fmod remainder Tensor.div_ Tensor.floor_divide_ "
         "Tensor.remainder_", "Tensor or Number", "the divisor.")
_reading("other", "eq ne lt le gt ge greater greater_equal less less_equal not_equal Tensor.eq_ Tensor.ne_ "
         "Tensor.ge_ Tensor.le_ Tensor.greater_ Tensor.less_", "Tensor or float", "the tensor or value to compare.")
_reading("other", "allclose isclose equal is_same_size", "Tensor", "second tensor to compare.")
_reading("other", "matmul dot inner kron cross", "Tensor", "the second tensor to be multiplied.")
_reading("other", "where Tensor.where", "Tensor or Scalar", "value (if :attr:`other` is a scalar) or values "
         "selected at indices where :attr:`condition` is ``False``.")
_reading("other", "copysign", "Tensor or Number", "contains value(s) whose signbit(s) are applied to the magnitudes "
         "in :attr:`input`.")
_reading("other", "max min", "Tensor", "the second input tensor (elementwise maximum or minimum).")
_reading("other", "dist", "Tensor", "the right-hand-side input tensor.")
_reading("alpha", "addmm Tensor.addmm", "Number, optional", "multiplier for :math:`mat1 @ mat2` (:math:`\\alpha`).")
_reading("alpha", "addmv", "Number, optional", "multiplier for :math:`mat @ vec` (:math:`\\alpha`).")
_reading("alpha", "addr", "Number, optional", "multiplier for :math:`\\text{vec1} \\otimes \\text{vec2}` "
         "(:math:`\\alpha`).")
_reading("alpha", "baddbmm Tensor.baddbmm", "Number, optional", "multiplier for :math:`\\text{batch1} \\mathbin{@} "
         "\\text{batch2}` (:math:`\\alpha`).")
_reading("alpha", "index_add Tensor.index_add_", "Number", "the scalar multiplier for :attr:`source`.")
_reading("input", "addmm addr Tensor.addmm", "Tensor", "matrix to be added.")
_reading("input", "addmv", "Tensor", "vector to be added.")
_reading("input", "addcdiv addcmul baddbmm Tensor.baddbmm", "Tensor", "the tensor to be added.")
_reading("input", "div divide true_divide floor_divide fmod remainder", "Tensor", "the dividend.")
_reading("input", "eq ne lt le gt ge greater greater_equal less less_equal not_equal", "Tensor",
         "the tensor to compare.")
_reading("input", "allclose isclose equal is_same_size", "Tensor", "first tensor to compare.")
_reading("input", "matmul dot inner kron cross mm mv bmm", "Tensor", "the first tensor to be multiplied.")
_reading("input", "empty_like full_like ones_like zeros_like rand_like randn_like randint_like", "Tensor",
         "the size of :attr:`input` will determine size of the output tensor.")
_reading("input", "lerp", "Tensor", "the tensor with the starting points.")
_reading("input", "where Tensor.where", "Tensor or Scalar", "value (if :attr:`input` is a scalar) or values "
         "selected at indices where :attr:`condition` is ``True``.")
_reading("input", "bernoulli", "Tensor", "the input tensor of probability values for the Bernoulli distribution.")
_reading("input", "multinomial", "Tensor", "the input tensor containing probabilities.")
_reading("input", "bucketize", "Tensor or Scalar", "N-D tensor or a Scalar containing the search value(s).")
_reading("input", "conv1d", "Tensor", "input tensor of shape :math:`(\\text{minibatch} , \\text{in\\_channels} , "
         "iW)`.")
_reading("input", "conv2d", "Tensor", "input tensor of shape :math:`(\\text{minibatch} , \\text{in\\_channels} , "
         "iH , iW)`.")
_reading("input", "embedding", "Tensor", "tensor containing indices into the embedding matrix.")
_reading("input", "float_power pow", "Tensor or Number", "the base value(s).")
_reading("input", "gather", "Tensor", "the source tensor.")
_reading("input", "bincount", "Tensor", "1-d int tensor.")
_reading("input", "cov corrcoef", "Tensor", "a 2D matrix containing multiple variables and observations, or a "
         "Scalar or 1D vector representing a single variable.")
_reading("input", "save", "object", "saved object.")
_reading("dim", "all amax amin any mean nanmean nansum sum std var std_mean var_mean count_nonzero logsumexp norm "
         "Tensor.logsumexp Tensor.norm", *_DIM_REDUCE)
_reading("dim", "argmax argmin median prod nanquantile quantile max min aminmax kthvalue", "int, optional",
         "the dimension to reduce.")
_reading("dim", "argsort sort topk", "int, optional", "the dimension to sort along.")
_reading("dim", "gather scatter scatter_add scatter_reduce index_add index_select take_along_dim "
         "Tensor.scatter_ Tensor.scatter_add_ Tensor.scatter_reduce_ Tensor.index_add_", "int",
         "the axis along which to index.")
_reading("dim", "cat concat concatenate", "int, optional", "the dimension over which the tensors are "
         "concatenated.")
_reading("dim", "stack", "int, optional", "dimension to insert. Has to be between 0 and the number of dimensions of "
         "concatenated tensors (inclusive).")
_reading("dim", "chunk split tensor_split", "int", "dimension along which to split the tensor.")
_reading("dim", "softmax log_softmax Tensor.softmax Tensor.log_softmax", "int", "a dimension along which softmax "
         "will be computed.")
_reading("dim", "squeeze", "int or tuple of ints, optional", "if given, the input will be squeezed only in the "
         "specified dimensions.")
_reading("dim", "unsqueeze", "int", "the index at which to insert the singleton dimension.")
_reading("dim", "unbind", "int", "dimension to remove.")
_reading("dim", "unflatten", "int", "dimension to be unflattened, specified as an index into ``input.shape``.")
_reading("dim", "narrow", "int", "the dimension along which to narrow.")
_reading("dim", "select", "int", "the dimension to slice.")
_reading("dim", "diff", "int, optional", "the dimension to compute the difference along.")
_reading("dim", "cross", "int, optional", "the dimension to take the cross-product in.")
_reading("dim", "repeat_interleave", "int, optional", "the dimension along which to repeat values. By default, use "
         "the flattened input array, and return a flat output array.")
_reading("dim", "trapezoid trapz", "int", "the dimension along which to compute the trapezoidal rule.")
_reading("dim", "unique", "int, optional", "the dimension to operate upon. If ``None``, the unique of the flattened "
         "input is returned.")
_reading("dim", "Tensor.size", "int, optional", "the dimension for which to retrieve the size.")
_reading("dim", "Tensor.stride", "int, optional", "the desired dimension in which stride is required.")
_reading("keepdim", "norm Tensor.norm", "bool, optional", "whether the output tensors have :attr:`dim` retained or "
         "not.")
_reading("dtype", "sum mean nanmean nansum prod cumsum cumprod softmax log_softmax norm Tensor.cumsum "
         "Tensor.cumprod Tensor.softmax Tensor.log_softmax Tensor.norm", *_DTYPE_CAST)
_reading("dtype", "empty_like full_like ones_like zeros_like rand_like randn_like randint_like", "dtype, optional",
         "the desired data type of returned Tensor. If ``None``, defaults to the dtype of :attr:`input`.")
_reading("dtype", "Tensor.new_empty Tensor.new_full Tensor.new_ones Tensor.new_zeros Tensor.new_tensor",
         "dtype, optional", "the desired type of returned tensor. If ``None``, same dtype as this tensor.")
_reading("dtype", "randint randperm", "dtype, optional", "the desired data type of returned tensor. Default: "
         "``int64``.")
_reading("dtype", "tril_indices triu_indices", "dtype, optional", "the desired data type of returned tensor, only "
         "support ``int``, ``long``. Default: ``long``.")
_reading("dtype", "as_tensor tensor", "dtype, optional", "the desired data type of returned tensor. If ``None``, "
         "infers data type from :attr:`data`.")
_reading("dtype", "Tensor.type", "dtype or string", "the desired type.")
_reading("dtype", "Tensor.view", "dtype", "the desired dtype (a view of the same bytes).")
_reading("device", "empty_like full_like ones_like zeros_like rand_like randn_like randint_like", "device, optional",
         "the desired device of returned tensor. If ``None``, defaults to the device of :attr:`input`.")
_reading("device", "Tensor.new_empty Tensor.new_full Tensor.new_ones Tensor.new_zeros Tensor.new_tensor",
         "device, optional", "the desired device of returned tensor. If ``None``, same device as this tensor.")
_reading("device", "as_tensor tensor", "device, optional", "the device of the constructed tensor. If None and data "
         "is a tensor then the device of data is used.")
_reading("device", "Tensor.cuda", "device, optional", "the destination GPU device.")
_reading("size", "full Tensor.new_empty Tensor.new_full Tensor.new_ones Tensor.new_zeros", "int...",
         "a list, tuple, or :class:`Size` of integers defining the shape of the output tensor.")
_reading("size", "as_strided", "tuple or ints", "the shape of the output tensor.")
_reading("size", "broadcast_to Tensor.expand", "Size or int...", "the new shape.")
_reading("size", "randint normal", "tuple", "a tuple defining the shape of the output tensor.")
_reading("size", "Tensor.unfold", "int", "the size of each slice that is unfolded.")
_reading("size", "Tensor.view", "Size or tuple, optional", "the desired size, as a keyword.")
_reading("sizes", "unflatten", "tuple of ints", "new shape of the unflattened dimension. One of its elements can be "
         "`-1` in which case the corresponding output dimension is inferred.")
_reading("sizes", "Tensor.repeat", "Size or int...", "the number of times to repeat this tensor along each "
         "dimension.")
_reading("shape", "Tensor.view", "Size or int...", "the desired size.")
_reading("shape", "unravel_index", "int, sequence of ints, or Size", "the shape of the arbitrary tensor. All "
         "elements must be non-negative.")
_reading("dims", "permute", "tuple of int", "the desired ordering of dimensions.")
_reading("dims", "flip", "a list or tuple", "axis to flip on.")
_reading("dims", "roll", "int or tuple of ints", "axis along which to roll.")
_reading("dims", "rot90", "a list or tuple", "axis to rotate.")
_reading("dims", "tile", "tuple", "the number of repetitions per dimension.")
_reading("dims", "tensordot", "int or tuple of two lists of ints", "number of dimensions to contract or explicit "
         "lists of dimensions for :attr:`a` and :attr:`b` respectively.")
_reading("dim0", "swapaxes swapdims", "int", "the first dimension to be swapped.")
_reading("dim1", "swapaxes swapdims", "int", "the second dimension to be swapped.")
_reading("dim1", "diagonal diag_embed", "int, optional", "first dimension with respect to which to take diagonal.")
_reading("offset", "tril_indices triu_indices", "int", "diagonal offset from the main diagonal.")
_reading("value", "addcdiv", "Number, optional", "multiplier for :math:`\\text{tensor1} / \\text{tensor2}`.")
_reading("value", "addcmul", "Number, optional", "multiplier for :math:`tensor1 .* tensor2`.")
_reading("value", "scatter Tensor.scatter_", "Scalar", "the value to scatter (instead of :attr:`src`).")
_reading("values", "heaviside", "Tensor", "the values to use where :attr:`input` is zero.")
_reading("values", "searchsorted", "Tensor or Scalar", "N-D tensor or a Scalar containing the search value(s).")
_reading("indices", "take_along_dim", "LongTensor", "the indices into :attr:`input`. Must have long dtype.")
_reading("indices", "unravel_index", "Tensor", "an integer tensor containing indices into the flattened version of "
         "an arbitrary tensor of shape :attr:`shape`.")
_reading("index", "index_select", "IntTensor or LongTensor", "the 1-D tensor containing the indices to index.")
_reading("index", "select", "int", "the index to select with.")
_reading("index", "take", "LongTensor", "the indices into tensor.")
_reading("index", "index_add Tensor.index_add_", "Tensor", "indices of :attr:`source` to select from.")
_reading("index", "scatter scatter_add scatter_reduce Tensor.scatter_ Tensor.scatter_add_ Tensor.scatter_reduce_",
         "LongTensor", "the indices of elements to scatter.")
_reading("src", "Tensor.copy_", "Tensor", "the source tensor to copy from.")
_reading("source", "index_add Tensor.index_add_", "Tensor", "the tensor containing values to add.")
_reading("reduce", "scatter_reduce Tensor.scatter_reduce_", *_MEMBERS)
_reading("tensors", "atleast_1d atleast_2d atleast_3d", "Tensor...", "the input tensors (or one sequence of them).")
_reading("tensors", "block_diag", "Tensor...", "one or more tensors with 0, 1, or 2 dimensions.")
_reading("tensors", "broadcast_tensors", "Tensor...", "any number of tensors of the same type.")
_reading("tensors", "cartesian_prod", "Tensor...", "any number of 1 dimensional tensors.")
_reading("tensors", "column_stack dstack hstack vstack stack", "sequence of Tensors", "sequence of tensors to "
         "concatenate.")
_reading("tensors", "meshgrid", "Tensor...", "scalars or 1 dimensional tensors. Scalars will be treated as tensors "
         "of size :math:`(1,)` automatically.")
_reading("p", "dist", "float, optional", "the norm to be computed.")
_reading("p", "cdist", "float", "p value for the p-norm distance to calculate between each vector pair "
         ":math:`\\in [0, \\infty]`.")
_reading("p", "norm Tensor.norm", "float or str, optional", "the order of norm: a number, ``inf``, ``-inf``, "
         "``'fro'`` or ``'nuc'``.")
_reading("p", "dropout", "float", "probability of an element to be zeroed.")
_reading("p", "Tensor.bernoulli Tensor.bernoulli_", "float or Tensor, optional", "the probability of drawing 1 "
         "(default: the values of this tensor).")
_reading("min", "histc", "Scalar", "lower end of the range (inclusive).")
_reading("max", "histc", "Scalar", "upper end of the range (inclusive).")
_reading("min", "Tensor.clamp_min Tensor.clamp_min_", "Number or Tensor", "lower-bound of the range to be clamped "
         "to.")
_reading("max", "Tensor.clamp_max Tensor.clamp_max_", "Number or Tensor", "upper-bound of the range to be clamped "
         "to.")
_reading("weight", "lerp", "float or tensor", "the weight for the interpolation formula.")
_reading("weight", "conv1d", "Tensor", "filters of shape :math:`(\\text{out\\_channels} , "
         "\\frac{\\text{in\\_channels}}{\\text{groups}} , kW)`.")
_reading("weight", "conv2d", "Tensor", "filters of shape :math:`(\\text{out\\_channels} , "
         "\\frac{\\text{in\\_channels}}{\\text{groups}} , kH , kW)`.")
_reading("weight", "embedding", "Tensor", "the embedding matrix with number of rows equal to the maximum possible "
         "index + 1, and number of columns equal to the embedding size.")
_reading("weight", "layer_norm rms_norm", "Tensor, optional", "the elementwise affine weight, of shape "
         ":attr:`normalized_shape`.")
_reading("bias", "conv1d conv2d", "Tensor, optional", "optional bias tensor of shape "
         ":math:`(\\text{out\\_channels})`.")
_reading("stride", "conv1d conv2d", "int or tuple, optional", "the stride of the convolving kernel. Can be a single "
         "number or a tuple.")
_reading("eps", "logit", "float, optional", "the epsilon for input clamp bound. If ``None``, inputs outside [0, 1] "
         "give NaN.")
_reading("eps", "rms_norm", "float, optional", "a value added to the denominator for numerical stability (default: "
         "the dtype's machine epsilon).")
_reading("end", "lerp", "Tensor", "the tensor with the ending points.")
_reading("start", "linspace", "float or Tensor", "the starting value for the set of points.")
_reading("end", "linspace", "float or Tensor", "the ending value for the set of points.")
_reading("start", "narrow", "int or Tensor", "index of the element to start the narrowed dimension from. Can be "
         "negative, which means indexing from the end of `dim`.")
_reading("step", "Tensor.unfold", "int", "the step between each slice.")
_reading("n", "diff", "int, optional", "the number of times to recursively compute the difference.")
_reading("n", "randperm", "int", "the upper bound (exclusive).")
_reading("n", "matrix_power", "int", "the power to raise the matrix to.")
_reading("n", "set_num_threads", "int", "the number of threads used for intraop parallelism on CPU.")
_reading("k", "kthvalue", "int", "k for the k-th smallest element.")
_reading("k", "rot90", "int", "number of times to rotate.")
_reading("x", "trapezoid trapz", "Tensor, optional", "if specified, defines spacing between values as specified "
         "above.")
_reading("x", "vander", "Tensor", "1-D input tensor.")
_reading("data", "Tensor.new_tensor", "array_like", "the returned Tensor copies :attr:`data`.")
_reading("mask", "masked_select", "BoolTensor", "the tensor containing the binary mask to index with.")
_reading("mean", "Tensor.normal_", "float", "the mean of the normal distribution.")
_reading("std", "Tensor.normal_", "float", "the standard deviation of the normal distribution.")
_reading("a", "Tensor.uniform_", "float", "the lower bound of the uniform distribution.")
_reading("b", "Tensor.uniform_", "float", "the upper bound of the uniform distribution.")
_reading("from_", "Tensor.random_", "int", "the lowest integer to draw (the only bound when :attr:`to` is ``None``: "
         "then the draw is on [0, from_)).")
_reading("to", "Tensor.random_", "int, optional", "one above the highest integer to draw.")
_reading("obj", "save", "object", "saved object.")
_reading("obj", "typename", "object", "the object whose type to represent.")
_reading("f", "load", "str, PathLike or file-like", "a file name, or a file-like object (has to implement "
         ":meth:`read`, :meth:`readline`, :meth:`tell`, and :meth:`seek`).")
_reading("mode", "use_deterministic_algorithms", "bool", "if True, makes potentially nondeterministic operations "
         "switch to a deterministic algorithm or throw a runtime error. If False, allows nondeterministic "
         "operations.")
_reading("precision", "set_printoptions", "int, optional", "number of digits of precision for floating point "
         "output (default = 4).")
_reading("tensor1", "addcdiv", "Tensor", "the numerator tensor.")
_reading("tensor2", "addcdiv", "Tensor", "the denominator tensor.")
_reading("tensor1", "result_type", "Tensor or Number", "an input tensor or number.")
_reading("tensor2", "result_type", "Tensor or Number", "an input tensor or number.")
_reading("vec2", "outer ger", "Tensor", "1-D input vector.")
_reading("vec", "addmv", "Tensor", "vector to be matrix multiplied.")
_reading("mat2", "bmm Tensor.bmm", "Tensor", "the second batch of matrices to be multiplied.")
_reading("some", "qr", "bool, optional", "set to ``True`` for reduced QR decomposition and ``False`` for complete QR "
         "decomposition.")
_reading("sorted", "unique", "bool", "whether to sort the unique elements in ascending order before returning as "
         "output.")
_reading("output_size", "repeat_interleave", "int, optional", "total output size for the given axis (e.g. sum of "
         "repeats). If given, it will avoid the synchronization needed to calculate the output shape.")
_reading("repeats", "Tensor.repeat", "Size or int..., optional", "the number of times to repeat this tensor along "
         "each dimension, as a keyword.")
_reading("non_blocking", "Tensor.cuda Tensor.type", "bool", "if ``True`` and the source is in pinned memory, the "
         "copy will be asynchronous with respect to the host.")
_reading("training", "dropout", "bool", "apply dropout if is ``True``.")
_reading("args", "permute", "int...", "the desired ordering of dimensions, as separate ints or one tuple.")
_reading("args", "randint", "int...", "positional ``(high, size)`` or ``(low, high, size)``, as PyTorch.")
_reading("args", "Tensor.to", "dtype, device or Tensor...", "``to(dtype)``, ``to(device)``, ``to(device, dtype)`` "
         "or ``to(other)`` (the dtype and device of the tensor :attr:`other`).")
_reading("requires_grad", "Tensor.requires_grad_", "bool", "if autograd should record operations on this tensor.")
# 3-D convolutions and embedding_bag at the top level (tinytorch layers3d)
_reading("input", "conv3d conv_transpose3d", "Tensor", "input tensor of shape :math:`(\\text{minibatch} , "
         "\\text{in\\_channels} , iT , iH , iW)`.")
_reading("weight", "conv3d", "Tensor", "filters of shape :math:`(\\text{out\\_channels} , "
         "\\frac{\\text{in\\_channels}}{\\text{groups}} , kT , kH , kW)`.")
_reading("weight", "conv_transpose3d", "Tensor", "filters of shape :math:`(\\text{in\\_channels} , "
         "\\frac{\\text{out\\_channels}}{\\text{groups}} , kT , kH , kW)`.")
_reading("bias", "conv3d conv_transpose3d", "Tensor, optional", "optional bias tensor of shape "
         ":math:`(\\text{out\\_channels})`.")
_reading("stride", "conv3d conv_transpose3d", "int or tuple, optional", "the stride of the convolving kernel. Can "
         "be a single number or a tuple ``(sT, sH, sW)``.")
_reading("output_padding", "conv_transpose3d", "int or tuple, optional", "additional size added to one side of each "
         "dimension in the output shape.")
_reading("weight", "embedding_bag", "Tensor", "the embedding matrix (num_embeddings, embedding_dim).")
_reading("indices", "embedding_bag", "Tensor", "1-D tensor of indices into the embedding matrix, cut into bags at "
         ":attr:`offsets`.")
_reading("offsets", "embedding_bag", "Tensor", "the starting position of each bag in :attr:`indices`.")
_reading("scale_grad_by_freq", "embedding_bag", "bool", "scale gradients by the inverse of frequency of the words "
         "in the mini-batch.")
_reading("mode", "embedding_bag", "int", "0 (sum), 1 (mean) or 2 (max).")
_reading("sparse", "embedding_bag", "bool", "sparse gradients (not supported: raises NotImplementedError).")
_reading("per_sample_weights", "embedding_bag", "Tensor, optional", "a weight per index, multiplying its row (sum "
         "mode).")
_reading("include_last_offset", "embedding_bag", "bool", "if ``True``, offsets has one more element, the end of the "
         "last bag (CSR format).")
_reading("padding_idx", "embedding_bag", "int, optional", "an index left out of every bag.")
