"""``tinytorch.autograd.profiler``: PyTorch's older profiler API, the same recorder as
``tinytorch.profiler`` (imported on its own: ``import tinytorch.autograd.profiler``)."""
from tinytorch.profiler.legacy import (  # noqa: F401
    EventList, FunctionEvent, FunctionEventAvg, emit_nvtx, kineto_available, profile, record_function,
)
