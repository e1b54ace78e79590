"""``tinytorch.cuda``: device queries. This build's CUDA backend status is reported by
``is_available()``; without it every call that needs a GPU raises a clear RuntimeError."""
from __future__ import annotations


def _backend():
    from tinytorch import _C
    return getattr(_C, "cuda", None)


def is_available() -> bool:
    """True when tinytorch was built with CUDA and a GPU and driver are present."""
    b = _backend()
    return bool(b is not None and b.device_count() > 0)


def device_count() -> int:
    b = _backend()
    return b.device_count() if b is not None else 0


def _require(what: str):
    b = _backend()
    if b is None:
        raise RuntimeError(f"tinytorch.cuda.{what}: tinytorch was built without the CUDA backend "
                           "(rebuild where nvcc and cuBLAS are found, TINYTORCH_CUDA=AUTO|ON)")
    if b.device_count() == 0:
        raise RuntimeError(f"tinytorch.cuda.{what}: no CUDA GPU is available on this machine")
    return b


def current_device() -> int:
    return _require("current_device").current_device()


def set_device(device) -> None:
    _require("set_device").set_device(int(str(device).split(":")[-1]) if not isinstance(device, int) else device)


def synchronize(device=None) -> None:
    _require("synchronize").synchronize()


def get_device_name(device=None) -> str:
    return _require("get_device_name").get_device_name(0 if device is None else int(str(device).split(":")[-1]))


def manual_seed(seed: int) -> None:
    """Seeds the GPU generators (the default CPU seed call already covers them)."""
    from tinytorch.random import manual_seed as _seed
    _seed(seed)


def manual_seed_all(seed: int) -> None:
    manual_seed(seed)
