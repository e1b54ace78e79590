"""``tinytorch.backends``: switches of the compute backends (as torch.backends)."""
from tinytorch.backends import cpu, cuda, cudnn  # noqa: F401
from tinytorch.backends import mps  # noqa: F401
