"""``tinytorch.distributed.tensor.parallel``: tensor parallelism with PyTorch's API:
:func:`parallelize_module` and the parallel styles (:class:`ColwiseParallel`,
:class:`RowwiseParallel`, :class:`SequenceParallel`, :class:`PrepareModuleInput`,
:class:`PrepareModuleOutput`, :class:`PrepareModuleInputOutput`). Layers hold their local shards as plain tensors (no DTensor); the
collectives between them are ``tinytorch.distributed``'s (MPI on CPU, NCCL on CUDA) and are
differentiable. ``tinytorch.models.tensor_parallel_plan`` gives the plan of a Llama-family model.
See docs/distributed.md."""
from tinytorch.distributed.tensor.parallel.api import parallelize_module
from tinytorch.distributed.tensor.parallel.style import (ColwiseParallel, ParallelStyle, PrepareModuleInput,
                                                         PrepareModuleInputOutput, PrepareModuleOutput, RowwiseParallel,
                                                         SequenceParallel)

__all__ = ["parallelize_module", "ParallelStyle", "ColwiseParallel", "RowwiseParallel", "SequenceParallel",
           "PrepareModuleInput", "PrepareModuleOutput", "PrepareModuleInputOutput"]
