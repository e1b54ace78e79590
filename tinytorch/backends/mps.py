"""``tinytorch.backends.mps``: Apple's Metal backend, which tinytorch does not have (as
``torch.backends.mps`` on a machine or build without it)."""


def is_available() -> bool:
    """False: tinytorch has no MPS backend."""
    return False


def is_built() -> bool:
    """False: tinytorch is never built with MPS."""
    return False


def is_macos13_or_newer(minor: int = 0) -> bool:
    """False: answered only where MPS is built, as PyTorch without MPS."""
    return False
