"""Linear and convolution layers of ``nn.functional``: their kernels and backward formulas live in
``tinytorch._ops.nn``; this module names them where ``nn.functional`` gathers its functions."""
from tinytorch._ops.nn import conv1d, conv2d, conv_transpose1d, conv_transpose2d, linear  # noqa: F401

__all__ = ["linear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]
