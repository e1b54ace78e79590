"""``tinytorch._inductor``: where PyTorch keeps its code generator (TorchInductor) and its
``config``. The settings are accepted and have no effect: ``tinytorch.compile`` is a
pass-through and tinytorch runs eagerly, generating no kernels."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from tinytorch._inductor import config  # noqa: F401

_MODE_OPTIONS: Dict[str, Dict[str, Any]] = {   # what each torch.compile mode sets, in PyTorch
    "default": {},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
    "max-autotune": {"max_autotune": True, "triton.cudagraphs": True, "coordinate_descent_tuning": True},
}


def list_mode_options(mode: Optional[str] = None, dynamic: Optional[bool] = None) -> Dict[str, Any]:
    """The config settings a ``torch.compile`` mode stands for (all modes without ``mode``)."""
    if mode is None:
        return {k: dict(v) for k, v in _MODE_OPTIONS.items()}
    if mode not in _MODE_OPTIONS:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODE_OPTIONS)}")
    return dict(_MODE_OPTIONS[mode])


def list_options() -> List[str]:
    """Every config setting's name (dotted for groups such as ``triton.cudagraphs``)."""
    return list(config.get_config_copy())


__all__ = ["config", "list_mode_options", "list_options"]
