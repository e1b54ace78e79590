"""``tinytorch.utils``: utilities (``tinytorch.utils.data``, ``tinytorch.utils.checkpoint``, ``tinytorch.utils._pytree``)."""
from tinytorch.utils import _pytree, checkpoint, data  # noqa: F401
