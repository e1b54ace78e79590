"""PyTorch's one-line summaries of the ``tinytorch.*`` functions and ``Tensor`` methods that carry no
docstring of their own; ``docstrings.py`` puts the summary first, then the Args section from
``params.py``. Keyed by the exported name (``"zeros"``, ``"Tensor.cpu"``)."""
from __future__ import annotations

from typing import Dict


def _like(what: str) -> str:
    return f"Returns a tensor filled with {what}, with the same size as :attr:`input`."


def _new(what: str) -> str:
    return (f"Returns a Tensor of size :attr:`size` filled with {what}. By default, the returned Tensor has the same "
            ":class:`dtype` and :class:`device` as this tensor.")


def _cast(dtype: str) -> str:
    return f"``self.{dtype}()`` is equivalent to ``self.to(tinytorch.{dtype})``."


SUMMARIES: Dict[str, str] = {
    "as_tensor": "Converts :attr:`data` into a tensor, sharing data and preserving autograd history if possible.",
    "can_cast": "Determines if a type conversion is allowed under PyTorch casting rules.",
    "dropout": "During training, randomly zeroes some elements of the input tensor with probability :attr:`p`, "
               "scaling the others by :math:`\\frac{1}{1-p}`.",
    "empty": "Returns a tensor filled with uninitialized data. The shape of the tensor is defined by the variable "
             "argument :attr:`size`.",
    "empty_like": "Returns an uninitialized tensor with the same size as :attr:`input`.",
    "eye": "Returns a 2-D tensor with ones on the diagonal and zeros elsewhere.",
    "full": "Creates a tensor of size :attr:`size` filled with :attr:`fill_value`.",
    "full_like": _like(":attr:`fill_value`"),
    "get_default_dtype": "Get the current default floating point :class:`dtype`.",
    "get_float32_matmul_precision": "Returns the current value of float32 matrix multiplication precision.",
    "get_num_threads": "Returns the number of threads used for parallelizing CPU operations.",
    "get_rng_state": "Returns the random number generator state as a `ByteTensor`.",
    "initial_seed": "Returns the initial seed for generating random numbers as a Python `long`.",
    "is_deterministic_algorithms_warn_only_enabled": "Returns True if the global deterministic flag is set to "
                                                     "warn only.",
    "is_tensor": "Returns True if :attr:`obj` is a tinytorch tensor.",
    "linspace": "Creates a one-dimensional tensor of size :attr:`steps` whose values are evenly spaced from "
                ":attr:`start` to :attr:`end`, inclusive.",
    "normal": "Returns a tensor of random numbers drawn from separate normal distributions whose mean and standard "
              "deviation are given.",
    "ones": "Returns a tensor filled with the scalar value `1`, with the shape defined by the variable argument "
            ":attr:`size`.",
    "ones_like": _like("the scalar value `1`"),
    "rand_like": "Returns a tensor with the same size as :attr:`input` that is filled with random numbers from a "
                 "uniform distribution on the interval :math:`[0, 1)`.",
    "randn_like": "Returns a tensor with the same size as :attr:`input` that is filled with random numbers from a "
                  "normal distribution with mean 0 and variance 1.",
    "seed": "Sets the seed for generating random numbers to a non-deterministic random number.",
    "set_default_dtype": "Sets the default floating point dtype to :attr:`d`.",
    "set_rng_state": "Sets the random number generator state.",
    "zeros": "Returns a tensor filled with the scalar value `0`, with the shape defined by the variable argument "
             ":attr:`size`.",
    "zeros_like": _like("the scalar value `0`"),
    "Tensor.bernoulli": "Returns a result tensor where each :math:`\\texttt{result[i]}` is independently sampled from "
                        ":math:`\\text{Bernoulli}(\\texttt{self[i]})`.",
    "Tensor.bernoulli_": "Fills each location of :attr:`self` with an independent sample from "
                         ":math:`\\text{Bernoulli}(\\texttt{p})`.",
    "Tensor.bfloat16": _cast("bfloat16"),
    "Tensor.bool": _cast("bool"),
    "Tensor.byte": _cast("uint8"),
    "Tensor.cpu": "Returns a copy of this object in CPU memory. If this object is already in CPU memory, then no copy "
                  "is performed and the original object is returned.",
    "Tensor.cuda": "Returns a copy of this object in CUDA memory. If this object is already in CUDA memory and on the "
                   "correct device, then no copy is performed and the original object is returned.",
    "Tensor.double": _cast("float64"),
    "Tensor.float": _cast("float32"),
    "Tensor.half": _cast("float16"),
    "Tensor.int": _cast("int32"),
    "Tensor.long": _cast("int64"),
    "Tensor.is_floating_point": "Returns True if the data type of :attr:`self` is a floating point data type.",
    "Tensor.is_pinned": "Returns true if this tensor resides in pinned memory.",
    "Tensor.new_empty": _new("uninitialized data"),
    "Tensor.new_full": _new(":attr:`fill_value`"),
    "Tensor.new_ones": _new("``1``"),
    "Tensor.new_zeros": _new("``0``"),
    "Tensor.new_tensor": "Returns a new Tensor with :attr:`data` as the tensor data. By default, the returned Tensor "
                         "has the same :class:`dtype` and :class:`device` as this tensor.",
    "Tensor.normal_": "Fills :attr:`self` tensor with elements samples from the normal distribution parameterized by "
                      ":attr:`mean` and :attr:`std`.",
    "Tensor.tolist": "Returns the tensor as a (nested) list. For scalars, a standard Python number is returned, just "
                     "like with :meth:`~Tensor.item`.",
    "Tensor.type_as": "Returns this tensor cast to the type of the given tensor.",
    "Tensor.uniform_": "Fills :attr:`self` tensor with numbers sampled from the continuous uniform distribution: "
                       ":math:`f(x) = \\dfrac{1}{b - a}`.",
    # Cython functions whose docstring is only their embedded signature
    "all": "Tests if all elements in :attr:`input` evaluate to `True` (over :attr:`dim` when given).",
    "any": "Tests if any element in :attr:`input` evaluates to `True` (over :attr:`dim` when given).",
    "amax": "Returns the maximum value of each slice of the :attr:`input` tensor in the given dimension(s) "
            ":attr:`dim`.",
    "amin": "Returns the minimum value of each slice of the :attr:`input` tensor in the given dimension(s) "
            ":attr:`dim`.",
    "argmax": "Returns the indices of the maximum value of all elements in the :attr:`input` tensor (or along "
              ":attr:`dim`).",
    "argmin": "Returns the indices of the minimum value(s) of the flattened tensor or along a dimension.",
    "argsort": "Returns the indices that sort a tensor along a given dimension in ascending order by value.",
    "as_strided": "Create a view of an existing tensor with specified :attr:`size`, :attr:`stride` and "
                  ":attr:`storage_offset`.",
    "bmm": "Performs a batch matrix-matrix product of matrices stored in :attr:`input` and :attr:`mat2`.",
    "broadcast_to": "Broadcasts :attr:`input` to the shape :attr:`size`.",
    "chunk": "Attempts to split a tensor into the specified number of chunks. Each chunk is a view of the input "
             "tensor.",
    "clone": "Returns a copy of :attr:`input`. This function is differentiable, so gradients will flow back from the "
             "result of this operation to :attr:`input`.",
    "cumprod": "Returns the cumulative product of elements of :attr:`input` in the dimension :attr:`dim`.",
    "cumsum": "Returns the cumulative sum of elements of :attr:`input` in the dimension :attr:`dim`.",
    "diagonal": "Returns a partial view of :attr:`input` with the its diagonal elements with respect to :attr:`dim1` "
                "and :attr:`dim2` appended as a dimension at the end of the shape.",
    "flatten": "Flattens :attr:`input` by reshaping it into a one-dimensional tensor. If :attr:`start_dim` or "
               ":attr:`end_dim` are passed, only dimensions starting with :attr:`start_dim` and ending with "
               ":attr:`end_dim` are flattened.",
    "flip": "Reverse the order of an n-D tensor along given axis in dims.",
    "hstack": "Stack tensors in sequence horizontally (column wise).",
    "vstack": "Stack tensors in sequence vertically (row wise).",
    "log_softmax": "Applies a softmax followed by a logarithm.",
    "logsumexp": "Returns the log of summed exponentials of each row of the :attr:`input` tensor in the given "
                 "dimension :attr:`dim`.",
    "masked_select": "Returns a new 1-D tensor which indexes the :attr:`input` tensor according to the boolean mask "
                     ":attr:`mask` which is a `BoolTensor`.",
    "mean": "Returns the mean value of all elements in the :attr:`input` tensor (or of each row over :attr:`dim`).",
    "min": "Returns the minimum value of all elements in the :attr:`input` tensor; with :attr:`dim`, a namedtuple "
           "``(values, indices)``; with :attr:`other`, the elementwise minimum.",
    "mm": "Performs a matrix multiplication of the matrices :attr:`input` and :attr:`mat2`.",
    "movedim": "Moves the dimension(s) of :attr:`input` at the position(s) in :attr:`source` to the position(s) in "
               ":attr:`destination`.",
    "narrow": "Returns a new tensor that is a narrowed version of :attr:`input` tensor.",
    "nonzero": "Returns a tensor containing the indices of all non-zero elements of :attr:`input`.",
    "permute": "Returns a view of the original tensor :attr:`input` with its dimensions permuted.",
    "prod": "Returns the product of all elements in the :attr:`input` tensor (or of each row over :attr:`dim`).",
    "rms_norm": "Apply Root Mean Square Layer Normalization.",
    "roll": "Roll the tensor :attr:`input` along the given dimension(s).",
    "select": "Slices the :attr:`input` tensor along the selected dimension at the given index.",
    "sort": "Sorts the elements of the :attr:`input` tensor along a given dimension in ascending order by value.",
    "squeeze": "Returns a tensor with all specified dimensions of :attr:`input` of size `1` removed.",
    "std": "Calculates the standard deviation over the dimensions specified by :attr:`dim`.",
    "transpose": "Returns a tensor that is a transposed version of :attr:`input`. The given dimensions :attr:`dim0` "
                 "and :attr:`dim1` are swapped.",
    "t": "Expects :attr:`input` to be <= 2-D tensor and transposes dimensions 0 and 1.",
    "topk": "Returns the :attr:`k` largest elements of the given :attr:`input` tensor along a given dimension.",
    "tril": "Returns the lower triangular part of the matrix (2-D tensor) or batch of matrices :attr:`input`, the "
            "other elements of the result tensor are set to 0.",
    "triu": "Returns the upper triangular part of a matrix (2-D tensor) or batch of matrices :attr:`input`, the "
            "other elements of the result tensor are set to 0.",
    "unbind": "Removes a tensor dimension. Returns a tuple of all slices along a given dimension, already without "
              "it.",
    "unflatten": "Expands a dimension of the input tensor over multiple dimensions.",
    "unsqueeze": "Returns a new tensor with a dimension of size one inserted at the specified position.",
    "Tensor.clamp_": "In-place version of :meth:`~Tensor.clamp`.",
    "Tensor.clamp_max": "Clamps all elements of :attr:`self` to at most :attr:`max`.",
    "Tensor.clamp_max_": "In-place version of :meth:`~Tensor.clamp_max`.",
    "Tensor.clamp_min": "Clamps all elements of :attr:`self` to at least :attr:`min`.",
    "Tensor.clamp_min_": "In-place version of :meth:`~Tensor.clamp_min`.",
    "Tensor.div_": "In-place version of :meth:`~Tensor.div`.",
    "Tensor.expand_as": "Expand this tensor to the same size as :attr:`other`.",
    "Tensor.index_put_": "Puts values from the tensor :attr:`values` into the tensor :attr:`self` using the indices "
                         "specified in :attr:`indices` (which is a tuple of Tensors).",
    "Tensor.masked_fill_": "Fills elements of :attr:`self` tensor with :attr:`value` where :attr:`mask` is True.",
    "Tensor.pow_": "In-place version of :meth:`~Tensor.pow`.",
    "Tensor.scatter_": "Writes all values from the tensor :attr:`src` into :attr:`self` at the indices specified in "
                       "the :attr:`index` tensor.",
    "Tensor.scatter_add_": "Adds all values from the tensor :attr:`src` into :attr:`self` at the indices specified in "
                           "the :attr:`index` tensor.",
    "Tensor.unfold": "Returns a view of the original tensor which contains all slices of size :attr:`size` from "
                     ":attr:`self` tensor in the dimension :attr:`dimension`.",
    "Tensor.where": "``self.where(condition, y)`` is equivalent to ``tinytorch.where(condition, self, y)``.",
}
