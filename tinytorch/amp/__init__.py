"""``tinytorch.amp``: automatic mixed precision (``autocast``, ``GradScaler``), as ``torch.amp``."""
from tinytorch.amp.autocast_mode import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: F401
from tinytorch.amp.autocast_mode import custom_bwd, custom_fwd  # noqa: F401
from tinytorch.amp.grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler", "is_autocast_enabled", "get_autocast_dtype", "custom_fwd", "custom_bwd"]
