"""``tinytorch.utils``: utilities (``tinytorch.utils.data``)."""
from tinytorch.utils import data  # noqa: F401
