"""``tinytorch.backends``: switches of the compute backends (as torch.backends)."""
from tinytorch.backends import cuda, cudnn  # noqa: F401
