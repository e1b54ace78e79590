"""Type aliases shared by the annotations of the ``nn`` modules, as PyTorch's
``torch.nn.common_types``: a size given as one int or one per spatial dimension (``_size_2_t``),
ratios, optional sizes, and tinytorch's device/dtype/shape arguments."""
from __future__ import annotations

from typing import List, Optional, Tuple, TypeVar, Union

from tinytorch._core.dtype import device, dtype
from tinytorch._core.size import Size
from tinytorch._tensor.tensor import Tensor

T = TypeVar("T")
_scalar_or_tuple_any_t = Union[T, Tuple[T, ...]]
_scalar_or_tuple_1_t = Union[T, Tuple[T]]
_scalar_or_tuple_2_t = Union[T, Tuple[T, T]]
_scalar_or_tuple_3_t = Union[T, Tuple[T, T, T]]

# sizes: kernel_size, stride, padding, dilation, output_size of 1-, 2-, 3- or n-d layers
_size_any_t = _scalar_or_tuple_any_t[int]
_size_1_t = _scalar_or_tuple_1_t[int]
_size_2_t = _scalar_or_tuple_2_t[int]
_size_3_t = _scalar_or_tuple_3_t[int]
# None in an adaptive pooling's output_size keeps that input size
_size_any_opt_t = _scalar_or_tuple_any_t[Optional[int]]
_size_2_opt_t = _scalar_or_tuple_2_t[Optional[int]]
_size_3_opt_t = _scalar_or_tuple_3_t[Optional[int]]
# scale factors
_ratio_2_t = _scalar_or_tuple_2_t[float]
_ratio_3_t = _scalar_or_tuple_3_t[float]
_ratio_any_t = _scalar_or_tuple_any_t[float]

_tensor_list_t = _scalar_or_tuple_any_t[Tensor]
_maybe_indices_t = _scalar_or_tuple_2_t[Tensor]

# tinytorch's: the factory arguments of parameters and buffers, and a normalized shape
_device_t = Union[device, str, int, None]
_dtype_t = Optional[dtype]
_shape_t = Union[int, List[int], Tuple[int, ...], Size]
# a convolution's padding: sizes, or 'same' / 'valid'
_padding_t = Union[str, _size_any_t]
