"""``nn.modules.dropout``: PyTorch's module path of the dropout layers (defined in misc.py)."""
from tinytorch.nn.modules.misc import Dropout, Dropout1d, Dropout2d, _DropoutNd  # noqa: F401

__all__ = ["Dropout", "Dropout1d", "Dropout2d"]
