"""``tinytorch.utils``: utilities (``tinytorch.utils.data``, ``tinytorch.utils.checkpoint``)."""
from tinytorch.utils import checkpoint, data  # noqa: F401
