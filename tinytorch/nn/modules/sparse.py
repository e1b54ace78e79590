"""``nn.modules.sparse``: PyTorch's module path of ``Embedding`` (defined in misc.py) and
``EmbeddingBag`` (embedding_bag.py)."""
from tinytorch.nn.modules.misc import Embedding  # noqa: F401
from tinytorch.nn.modules.embedding_bag import EmbeddingBag  # noqa: F401

__all__ = ["Embedding", "EmbeddingBag"]
