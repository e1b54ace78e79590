"""``tinytorch.cuda``: device queries, streams and events, memory statistics and the caching
allocator. Works on every build: without the CUDA backend or a GPU, ``is_available()`` is False
and calls that need a GPU raise a clear RuntimeError."""
from __future__ import annotations

from tinytorch.cuda._device import (
    current_device, device, device_count, get_device_capability, get_device_name,
    is_available, is_bf16_supported, set_device, synchronize,
)
from tinytorch.cuda.graphs import (
    CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing, make_graphed_callables,
)
from tinytorch.cuda.memory import (
    empty_cache, max_memory_allocated, max_memory_reserved, mem_get_info, memory_allocated, memory_reserved,
    memory_stats, reset_peak_memory_stats,
)
from tinytorch.cuda.streams import Event, Stream, current_stream, default_stream, set_stream, stream
from tinytorch.random import manual_seed as _seed
from tinytorch._tensor.legacy import CUDA_TYPES as _LEGACY_TYPES

globals().update(_LEGACY_TYPES)   # cuda.FloatTensor, cuda.LongTensor, ...: legacy types (tinytorch._tensor.legacy)


def manual_seed(seed: int) -> None:
    """Seeds the GPU generators (tinytorch.manual_seed seeds every device)."""
    _seed(seed)


manual_seed_all = manual_seed


def __getattr__(name: str):
    # tinytorch.cuda.amp (deprecated spellings of tinytorch.amp) loads on first use, as amp
    # imports the optimizer-facing code that `import tinytorch.cuda` doesn't need.
    if name == "amp":
        import importlib
        return importlib.import_module("tinytorch.cuda.amp")
    raise AttributeError(f"module 'tinytorch.cuda' has no attribute '{name}'")
