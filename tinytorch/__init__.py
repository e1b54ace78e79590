"""tinytorch: a lightweight, PyTorch-style deep-learning framework.

C++/CUDA kernels (``tinytorch._C``), a Cython autograd graph, and a Python nn/optim/data API
that reads like PyTorch."""
from __future__ import annotations

from tinytorch import _C
from tinytorch._dtype import (
    bfloat16, can_cast, device, dtype, float16, float32, float64, get_default_dtype, int32, int64,
    promote_types, set_default_dtype, uint8,
)
from tinytorch._dtype import bool_ as bool  # noqa: A001  (torch.bool)
from tinytorch._size import Size
from tinytorch.tensor import Tensor
from tinytorch._creation import (
    arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like, linspace, ones, ones_like,
    tensor, zeros, zeros_like,
)
from tinytorch.autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from tinytorch._autograd import is_grad_enabled
from tinytorch._functional import *  # noqa: F401,F403  (tinytorch.exp, tinytorch.cat, ...)
from tinytorch import autograd
from tinytorch.serialization import load, save  # noqa: E402  (safetensors layout, no pickle)

half = float16
float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001

__version__ = "0.1.0"


def set_num_threads(n: int) -> None:
    """Sets the number of threads used for intra-op parallelism on CPU (and by BLAS)."""
    _C.set_num_threads(n)


def get_num_threads() -> int:
    return _C.get_num_threads()


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(t: Tensor) -> int:
    return t.numel()
