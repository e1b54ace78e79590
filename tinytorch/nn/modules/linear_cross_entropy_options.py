"""``nn.modules.linear_cross_entropy_options``: PyTorch's module path of ``LinearCrossEntropyOptions``
(defined in nn/functional/linear_cross_entropy.py)."""
from tinytorch.nn.functional.linear_cross_entropy import LinearCrossEntropyOptions  # noqa: F401

__all__ = ["LinearCrossEntropyOptions"]
