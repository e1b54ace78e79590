"""``tinytorch.datasets``: ready-made datasets (MNIST, FashionMNIST) and image transforms."""
from tinytorch.datasets import transforms  # noqa: F401
from tinytorch.datasets.mnist import MNIST, FashionMNIST, read_idx

__all__ = ["MNIST", "FashionMNIST", "read_idx", "transforms"]
