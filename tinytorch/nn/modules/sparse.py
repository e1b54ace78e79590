"""``nn.modules.sparse``: PyTorch's module path of ``Embedding`` (defined in misc.py)."""
from tinytorch.nn.modules.misc import Embedding  # noqa: F401

__all__ = ["Embedding"]
