"""``tinytorch._functorch``: where PyTorch keeps AOTAutograd's ``config``. Its settings are
accepted and have no effect: ``tinytorch.compile`` is a pass-through and tinytorch runs eagerly."""
from tinytorch._functorch import config  # noqa: F401

__all__ = ["config"]
