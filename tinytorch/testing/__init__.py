"""``tinytorch.testing``: PyTorch's test helpers (``torch.testing``): ``assert_close`` compares
tensors, scalars and their sequences and mappings with PyTorch's default tolerances and error
messages; ``make_tensor`` makes random test tensors."""
from tinytorch.testing._comparison import assert_allclose, assert_close
from tinytorch.testing._creation import make_tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]
