"""``tinytorch.transforms``: an alias of :mod:`tinytorch.datasets.transforms`."""
from tinytorch.datasets.transforms import *  # noqa: F401,F403
from tinytorch.datasets.transforms import __all__  # noqa: F401
