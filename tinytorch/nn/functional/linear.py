"""Linear and convolution layers of ``nn.functional``: their kernels and backward formulas live in
``tinytorch._ops.linalg`` and ``tinytorch._ops.conv``; this module names them where ``nn.functional``
gathers its functions."""
from tinytorch._ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d  # noqa: F401
from tinytorch._ops.linalg import linear  # noqa: F401

__all__ = ["linear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]
