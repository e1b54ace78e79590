"""Loads the optional CUDA backend (``tinytorch._cuda``) on first use."""
from __future__ import annotations

_module = False  # not looked for yet


def cuda_backend():
    """tinytorch._cuda when this build has the CUDA backend and it loads, else None. Importing
    it registers the GPU kernels and the caching allocator."""
    global _module
    if _module is False:
        try:
            # lazily: the backend registers kernels and an allocator, only wanted once CUDA is used
            from tinytorch import _cuda as module
        except ImportError:
            module = None
        _module = module
    return _module
