"""The parameter glossary of ``tinytorch.*`` functions and ``Tensor`` methods, in PyTorch's words:
each parameter name with its type and description, from which ``docstrings.py`` writes their
Args sections (the default comes from the signature). A name that means different things in
different functions has its readings in ``readings.py``, keyed by the names a callable is
exported under (``"add"``, ``"Tensor.view"``; a method or in-place variant also matches its
function's name: ``Tensor.addcdiv_`` reads as ``addcdiv``). A new function needs rows here only
for parameter names the glossary lacks (tests/cpu/test_docstrings.py lists them). ``nn`` has its
own glossary (``tinytorch/nn/_doc_params.py``)."""
from __future__ import annotations

from typing import Dict, FrozenSet, Optional

from tinytorch._docs.readings import CONTEXT, Entry

_SIZE = ("int...", "a sequence of integers defining the shape of the output tensor. Can be a variable number of "
         "arguments or a collection like a list or tuple.")
# name -> (type, description)
PARAMS: Dict[str, Entry] = {
    "input": ("Tensor", "the input tensor."),
    "maxnorm": ("float", "the maximum norm to keep each sub-tensor under."),
    "lambd": ("float", "the :math:`\\lambda` value for the Hardshrink formulation."),
    "other": ("Tensor", "the second input tensor."),
    "dim": ("int", "the dimension to do the operation over."),
    "keepdim": ("bool", "whether the output tensor has :attr:`dim` retained or not."),
    "dtype": ("dtype, optional", "the desired data type of returned tensor. If ``None``, uses a global default "
              "(see :func:`set_default_dtype`)."),
    "device": ("device, optional", "the desired device of returned tensor. If ``None``, uses the current device "
               "for the default tensor type (the CPU)."),
    "requires_grad": ("bool, optional", "if autograd should record operations on the returned tensor."),
    "pin_memory": ("bool, optional", "if set, returned tensor would be allocated in the pinned memory. Works only "
                   "for CPU tensors."),
    "layout": ("layout, optional", "the desired layout of returned Tensor (only ``strided``)."),
    "generator": ("Generator, optional", "a pseudorandom number generator for sampling."),
    "memory_format": ("memory_format, optional", "the desired memory format of returned tensor."),
    "alpha": ("Number", "the multiplier for :attr:`other`."),
    "beta": ("Number, optional", "multiplier for :attr:`input` (:math:`\\beta`)."),
    "index": ("LongTensor", "the indices of elements to gather."),
    "src": ("Tensor", "the source element(s) to scatter."),
    "value": ("Number", "the value to fill with."),
    "values": ("Tensor", "the values to put at the given indices."),
    "indices": ("tuple of LongTensor", "tensors used to index into :attr:`input`."),
    "accumulate": ("bool", "whether to accumulate into :attr:`input` (add the values) instead of replacing."),
    "include_self": ("bool", "whether elements from the :attr:`input` tensor are included in the reduction."),
    "reduce": ("str, optional", "reduction operation to apply, can be either ``'add'`` or ``'multiply'``."),
    "mask": ("BoolTensor", "the boolean mask."),
    "tensors": ("sequence of Tensors", "sequence of tensors to concatenate. Non-empty tensors provided must have "
                "the same shape, except in the cat dimension."),
    "size": _SIZE,
    "sizes": ("torch.Size or int...", "the desired size: separate ints or one tuple."),
    "shape": ("tuple of int", "the new shape: separate ints or one tuple."),
    "dims": ("tuple of int", "the dimensions to operate on."),
    "dim0": ("int", "the first dimension to be transposed."),
    "dim1": ("int", "the second dimension to be transposed."),
    "dim2": ("int, optional", "second dimension with respect to which to take diagonal."),
    "offset": ("int, optional", "which diagonal to consider: 0 is the main diagonal, positive above it, negative "
               "below."),
    "diagonal": ("int, optional", "the diagonal to consider."),
    "start_dim": ("int", "the first dim to flatten."),
    "end_dim": ("int", "the last dim to flatten."),
    "source": ("int or tuple of ints", "original positions of the dims to move. These must be unique."),
    "destination": ("int or tuple of ints", "destination positions for each of the original dims. These must also "
                    "be unique."),
    "correction": ("int", "difference between the sample size and sample degrees of freedom (Bessel's correction "
                   "is ``correction=1``)."),
    "unbiased": ("bool, optional", "whether to use Bessel's correction (deprecated; use :attr:`correction`)."),
    "rounding_mode": ("str, optional", "type of rounding applied to the result: ``None`` (true division), "
                      "``'trunc'`` (rounds towards zero) or ``'floor'`` (rounds down)."),
    "exponent": ("Tensor or Number", "the exponent value(s)."),
    "min": ("Number or Tensor, optional", "lower-bound of the range to be clamped to."),
    "max": ("Number or Tensor, optional", "upper-bound of the range to be clamped to."),
    "p": ("float", "the exponent value in the norm formulation."),
    "tensor1": ("Tensor", "the tensor to be multiplied."),
    "tensor2": ("Tensor", "the tensor to be multiplied."),
    "mat": ("Tensor", "matrix to be matrix multiplied."),
    "mat1": ("Tensor", "the first matrix to be matrix multiplied."),
    "mat2": ("Tensor", "the second matrix to be matrix multiplied."),
    "vec": ("Tensor", "vector to be multiplied."),
    "vec1": ("Tensor", "the first vector of the outer product."),
    "vec2": ("Tensor", "the second vector of the outer product."),
    "batch1": ("Tensor", "the first batch of matrices to be multiplied."),
    "batch2": ("Tensor", "the second batch of matrices to be multiplied."),
    "rtol": ("float, optional", "relative tolerance."),
    "atol": ("float, optional", "absolute tolerance."),
    "equal_nan": ("bool, optional", "if ``True``, then two ``NaN`` s will be considered equal."),
    "descending": ("bool, optional", "controls the sorting order (ascending or descending)."),
    "stable": ("bool, optional", "makes the sorting routine stable, which guarantees that the order of equivalent "
               "elements is preserved."),
    "k": ("int", "the k in \"top-k\"."),
    "largest": ("bool, optional", "controls whether to return largest or smallest elements."),
    "sorted": ("bool, optional", "controls whether to return the elements in sorted order."),
    "return_inverse": ("bool", "whether to also return the indices for where elements in the original input ended "
                       "up in the returned unique list."),
    "return_counts": ("bool", "whether to also return the counts for each unique element."),
    "q": ("float or Tensor", "a scalar or 1D tensor of quantile values in the range [0, 1]."),
    "interpolation": ("str, optional", "interpolation method to use when the desired quantile lies between two data "
                      "points. Can be ``linear``, ``lower``, ``higher``, ``midpoint`` and ``nearest``."),
    "start": ("Number", "the starting value for the set of points."),
    "end": ("Number", "the ending value for the set of points."),
    "step": ("Number, optional", "the gap between each pair of adjacent points."),
    "steps": ("int", "size of the constructed tensor."),
    "n": ("int", "the number of rows."),
    "m": ("int, optional", "the number of columns with default being :attr:`n`."),
    "fill_value": ("Scalar", "the value to fill the output tensor with."),
    "data": ("array_like", "initial data for the tensor. Can be a list, tuple, NumPy ``ndarray``, scalar, and "
             "other types."),
    "low": ("int, optional", "lowest integer to be drawn from the distribution."),
    "high": ("int", "one above the highest integer to be drawn from the distribution."),
    "mean": ("float or Tensor", "the mean (of each element's distribution)."),
    "std": ("float or Tensor", "the standard deviation (of each element's distribution)."),
    "num_samples": ("int", "number of samples to draw."),
    "replacement": ("bool, optional", "whether to draw with replacement or not."),
    "seed": ("int", "the desired seed."),
    "state": ("ByteTensor", "the desired state."),
    "chunks": ("int", "number of chunks to return."),
    "sections": ("int or list of ints", "the number of equal parts, or the indices at which to split."),
    "indices_or_sections": ("Tensor, int or list or tuple of ints", "if an int ``n``, :attr:`input` is split into "
                            "``n`` sections along :attr:`dim` (as equal as possible); if a list of indices, it is "
                            "split at each of them."),
    "split_size_or_sections": ("int or list(int)", "size of a single chunk or list of sizes for each chunk."),
    "tensor": ("Tensor", "tensor to split."),
    "length": ("int", "length of the narrowed dimension, must be weakly positive."),
    "repeats": ("Tensor or int", "the number of repetitions for each element."),
    "output_size": ("int, optional", "total output size for the given axis (e.g. sum of repeats)."),
    "shifts": ("int or tuple of ints", "the number of places by which the elements of the tensor are shifted. If "
               "shifts is a tuple, dims must be a tuple of the same size, and each dimension will be rolled by the "
               "corresponding value."),
    "condition": ("BoolTensor", "when True (nonzero), yield input, otherwise yield other."),
    "as_tuple": ("bool", "return a tuple of 1-D index tensors, one per dimension, instead of a 2-D tensor."),
    "nan": ("Number, optional", "the value to replace :literal:`NaN`\\s with."),
    "posinf": ("Number, optional", "if a Number, the value to replace positive infinity values with. If None, "
               "positive infinity values are replaced with the greatest finite value representable by "
               ":attr:`input`'s dtype."),
    "neginf": ("Number, optional", "if a Number, the value to replace negative infinity values with. If None, "
               "negative infinity values are replaced with the lowest finite value representable by :attr:`input`'s "
               "dtype."),
    "weights": ("Tensor, optional", "weight for each value in the input tensor. Should be of same size as input "
                "tensor."),
    "minlength": ("int", "minimum number of bins. Should be non-negative."),
    "bins": ("int", "number of histogram bins."),
    "boundaries": ("Tensor", "1-D tensor, must contain a strictly increasing sequence."),
    "sorted_sequence": ("Tensor", "N-D or 1-D tensor, containing monotonically increasing sequence on the "
                        "*innermost* dimension unless :attr:`sorter` is provided."),
    "sorter": ("LongTensor, optional", "if provided, a tensor matching the shape of the unsorted "
               ":attr:`sorted_sequence` containing a sequence of indices that sort it in the ascending order on the "
               "innermost dimension."),
    "side": ("str, optional", "the same as :attr:`right` but preferred: ``'left'`` or ``'right'``."),
    "right": ("bool, optional", "if False, return the first suitable location that is found. If True, return the "
              "last such index."),
    "out_int32": ("bool, optional", "indicate the output data type: int32 if True, int64 otherwise."),
    "elements": ("Tensor or Scalar", "input elements."),
    "test_elements": ("Tensor or Scalar", "values against which to test for each input element."),
    "assume_unique": ("bool, optional", "if True, assumes both :attr:`elements` and :attr:`test_elements` contain "
                      "unique elements, which can speed up the calculation."),
    "invert": ("bool, optional", "if True, inverts the boolean return tensor, resulting in True values for elements "
               "*not* in :attr:`test_elements`."),
    "equation": ("str", "the subscripts for the Einstein summation."),
    "operands": ("Tensor...", "the tensors to compute the Einstein summation of."),
    "a": ("Tensor", "left tensor to contract."),
    "b": ("Tensor", "right tensor to contract."),
    "x": ("Tensor", "the points at which the function is evaluated."),
    "y": ("Tensor", "values to use when computing the trapezoidal rule."),
    "dx": ("float", "constant spacing between values."),
    "prepend": ("Tensor, optional", "values to prepend to :attr:`input` along :attr:`dim` before computing the "
                "difference."),
    "append": ("Tensor, optional", "values to append to :attr:`input` along :attr:`dim` before computing the "
               "difference."),
    "fweights": ("tensor, optional", "a Scalar or 1D tensor of observation vector frequencies representing the "
                 "number of times each observation should be repeated."),
    "aweights": ("tensor, optional", "a Scalar or 1D array of observation vector weights."),
    "upper": ("bool, optional", "flag that indicates whether to return a upper or lower triangular matrix."),
    "some": ("bool, optional", "controls whether to compute the reduced or full decomposition."),
    "compute_uv": ("bool, optional", "controls whether to compute `U` and `V`."),
    "rcond": ("float", "a floating-point value to determine the cutoff for small singular values."),
    "LU_data": ("Tensor", "the packed LU factorization data."),
    "LU_pivots": ("Tensor", "the packed LU factorization pivots."),
    "unpack_data": ("bool", "flag indicating if the data should be unpacked. If ``False``, then the returned ``L`` "
                    "and ``U`` are empty tensors."),
    "unpack_pivots": ("bool", "flag indicating if the pivots should be unpacked into a permutation matrix ``P``. If "
                      "``False``, then the returned ``P`` is an empty tensor."),
    "x1": ("Tensor", "input tensor of shape :math:`B \\times P \\times M`."),
    "x2": ("Tensor", "input tensor of shape :math:`B \\times R \\times M`."),
    "compute_mode": ("str", "``'use_mm_for_euclid_dist_if_necessary'``, ``'use_mm_for_euclid_dist'`` or "
                     "``'donot_use_mm_for_euclid_dist'``: whether the Euclidean distance uses a matrix "
                     "multiplication."),
    "N": ("int, optional", "number of columns in the output. If N is not specified, a square array is returned "
          ":math:`(N = len(x))`."),
    "increasing": ("bool, optional", "order of the powers of the columns. If True, the powers increase from left to "
                   "right, if False (the default) they are reversed."),
    "row": ("int", "number of rows in the 2-D matrix."),
    "col": ("int", "number of columns in the 2-D matrix."),
    "storage_offset": ("int, optional", "the offset in the underlying storage of the output tensor. If ``None``, the "
                       "storage_offset of the output tensor will match the input tensor."),
    "stride": ("tuple or ints", "the stride of the output tensor."),
    "padding": ("int or tuple, optional", "implicit paddings on both sides of the input. Can be a single number or a "
                "tuple."),
    "dilation": ("int or tuple, optional", "the spacing between kernel elements. Can be a single number or a "
                 "tuple."),
    "groups": ("int, optional", "split input into groups, :math:`\\text{in\\_channels}` should be divisible by the "
               "number of groups."),
    "weight": ("Tensor", "the weight tensor."),
    "bias": ("Tensor, optional", "the optional bias tensor."),
    "eps": ("float", "a value added to the denominator for numerical stability."),
    "normalized_shape": ("int or list or Size", "the shape of the trailing dimensions normalized over."),
    "padding_idx": ("int, optional", "if specified, the entries at :attr:`padding_idx` do not contribute to the "
                    "gradient."),
    "scale_grad_by_freq": ("bool, optional", "if given, this will scale gradients by the inverse of frequency of "
                           "the words in the mini-batch."),
    "training": ("bool", "apply dropout if is ``True``."),
    "inplace": ("bool", "if set to ``True``, will do this operation in-place."),
    "obj": ("object", "the object to test."),
    "f": ("str, PathLike or file-like", "a file name, or a file-like object (with ``read``/``write``)."),
    "map_location": ("str, device or dict, optional", "how to remap storage locations (the device to load the "
                     "tensors onto)."),
    "weights_only": ("bool, optional", "accepted for PyTorch compatibility: tinytorch's loader never unpickles "
                     "arbitrary objects."),
    "format": ("str, optional", "the file layout to write."),
    "digest": ("bool, optional", "also write a checksum of the payload."),
    "model": ("Callable", "module/function to optimize."),
    "fullgraph": ("bool", "accepted for PyTorch compatibility (tinytorch runs eagerly)."),
    "dynamic": ("bool or None", "accepted for PyTorch compatibility (tinytorch runs eagerly)."),
    "backend": ("str or Callable", "accepted for PyTorch compatibility (tinytorch runs eagerly)."),
    "mode": ("str", "accepted for PyTorch compatibility (tinytorch runs eagerly)."),
    "options": ("dict, optional", "accepted for PyTorch compatibility (tinytorch runs eagerly)."),
    "name": ("str, optional", "accepted for PyTorch compatibility (tinytorch runs eagerly)."),
    "disable": ("bool", "turn compile() into a no-op for testing."),
    "warn_only": ("bool, optional", "if True, operations that do not have a deterministic implementation will throw "
                  "a warning instead of an error."),
    "precision": ("str", "can be set to ``'highest'`` (default), ``'high'``, or ``'medium'``."),
    "threshold": ("int, optional", "total number of array elements which trigger summarization rather than full "
                  "`repr` (default = 1000)."),
    "edgeitems": ("int, optional", "number of array items in summary at beginning and end of each dimension "
                  "(default = 3)."),
    "linewidth": ("int, optional", "the number of characters per line for the purpose of inserting line breaks "
                  "(default = 80)."),
    "profile": ("str, optional", "sane defaults for pretty printing: ``'default'``, ``'short'`` or ``'full'``."),
    "sci_mode": ("bool, optional", "enable (True) or disable (False) scientific notation. If None (default) is "
                 "specified, the value is chosen by the framework."),
    "d": ("dtype", "the floating point dtype to make the default."),
    "type1": ("dtype", "the first dtype."),
    "type2": ("dtype", "the second dtype."),
    "from_": ("dtype", "the original dtype."),
    "to": ("dtype", "the target dtype."),
    "s": ("Number", "the value of the 0-dimensional tensor."),
    "arr": ("numpy.ndarray", "the array whose memory the tensor shares."),
    "ext_tensor": ("object with ``__dlpack__``, or a DLPack capsule", "the tensor or DLPack capsule to convert."),
    "indexing": ("str, optional", "the indexing mode, either ``'xy'`` or ``'ij'``."),
    "shapes": ("int or tuple of ints...", "the shapes to broadcast."),
    "gradient": ("Tensor, optional", "the gradient of the function being differentiated w.r.t. ``self``. This "
                 "argument can be omitted if ``self`` is a scalar."),
    "retain_graph": ("bool, optional", "if ``False``, the graph used to compute the grads will be freed; if "
                     "``None``, the value is inferred from ``create_graph``."),
    "create_graph": ("bool, optional", "if ``True``, graph of the derivative will be constructed, allowing to "
                     "compute higher order derivative products."),
    "inputs": ("sequence of Tensor, optional", "inputs w.r.t. which the gradient will be accumulated into ``.grad``. "
               "All other tensors will be ignored."),
    "hook": ("Callable", "the function to call with the gradient: ``hook(grad) -> Tensor or None``."),
    "non_blocking": ("bool, optional", "if ``True`` and the copy is between CPU and GPU, the copy may occur "
                     "asynchronously with respect to the host."),
    "force": ("bool", "if ``True``, the ndarray may be a copy of the tensor instead of always sharing memory."),
    "stream": ("Stream", "the stream the tensor's memory is used on."),
    "cls": ("type", "the Tensor subclass to view the tensor as."),
    "dimension": ("int", "dimension in which unfolding happens."),
    # matrix_exp, Tensor.swapaxes_
    "A": ("Tensor", "tensor of shape `(*, n, n)` where `*` is zero or more batch dimensions."),
    "axis0": ("int", "the first dimension to be swapped."),
    "axis1": ("int", "the second dimension to be swapped."),
}


def lookup(owners: FrozenSet[str], name: str) -> Optional[Entry]:
    """(type, description) of parameter ``name`` of the callable exported as ``owners``, or None
    when the glossary lacks it."""
    for names, entry in CONTEXT.get(name, ()):
        if owners & names:
            return entry
    return PARAMS.get(name)
