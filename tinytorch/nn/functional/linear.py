"""Linear and convolution layers of ``nn.functional``: their kernels and backward formulas live in
``tinytorch._ops.linalg`` and ``tinytorch._ops.conv``; this module names them where ``nn.functional``
gathers its functions, with ``bilinear`` composed from a matmul."""
from __future__ import annotations

from typing import Optional

from tinytorch._ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d  # noqa: F401
from tinytorch._ops.linalg import linear  # noqa: F401
from tinytorch._composites.conv3d import conv3d, conv_transpose3d  # noqa: F401
from tinytorch._tensor.tensor import Tensor


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """Applies a bilinear transformation to the incoming data: :math:`y = x_1^T A x_2 + b`.

    Args:
        input1 (Tensor): :math:`(N, *, H_{in1})` where :math:`H_{in1}=\\text{in1\\_features}`
        input2 (Tensor): :math:`(N, *, H_{in2})` where :math:`H_{in2}=\\text{in2\\_features}`
        weight (Tensor): :math:`(\\text{out\\_features}, \\text{in1\\_features}, \\text{in2\\_features})`
        bias (Tensor, optional): :math:`(\\text{out\\_features})`

    Returns:
        :math:`(N, *, H_{out})` where :math:`H_{out}=\\text{out\\_features}`
    """
    if weight.dim() != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-D (out, in1, in2), got {list(weight.shape)}")
    out_f, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2 or input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input1 {list(input1.shape)} and input2 {list(input2.shape)} must agree "
                           f"except in their last dims, which must be {in1} and {in2} (weight {list(weight.shape)})")
    # (..., in1) x (out, in1, in2) x (..., in2): contract in1 with a matmul, then in2
    lead = input1.shape[:-1]
    a = input1.reshape(-1, in1)                                  # (N, in1)
    b = input2.reshape(-1, in2)                                  # (N, in2)
    w = weight.permute(1, 0, 2).reshape(in1, -1)                 # (in1, out*in2)
    y = ((a @ w).reshape(-1, out_f, in2) * b.unsqueeze(1)).sum(-1)  # (N, out)
    if bias is not None:
        y = y + bias
    return y.reshape(*lead, out_f)


__all__ = ["linear", "bilinear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "conv3d", "conv_transpose3d"]
