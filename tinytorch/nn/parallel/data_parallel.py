"""``nn.DataParallel``: without a GPU it runs the module; with one device it moves the module and
the inputs there and runs it. Splitting a batch over several GPUs in one process (PyTorch's
replicate / scatter / gather) is not implemented: use ``DistributedDataParallel``, one process per
GPU (``tinytorch-run``), which PyTorch recommends over DataParallel too."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from tinytorch.nn.modules.module import Module
from tinytorch._tensor.tensor import Tensor

__all__ = ["DataParallel"]


def _device_index(d: Any) -> int:
    if isinstance(d, int):
        return d
    index = getattr(d, "index", None)
    if index is None and isinstance(d, str) and ":" in d:
        index = int(d.split(":")[1])
    return 0 if index is None else int(index)


def _to(obj: Any, device: Any) -> Any:
    """Tensors in obj (nested in tuples, lists, dicts) moved to device."""
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to(v, device) for k, v in obj.items()}
    return obj


class DataParallel(Module):
    """Implements data parallelism at the module level (here: one device at most).

    Without a GPU, the module runs as it is; with one device, the module is moved there and each
    call's tensors (in tuples, lists and dicts too) are moved there before it runs. More than one
    device raises NotImplementedError: use ``DistributedDataParallel``.

    Args:
        module (Module): module to be parallelized.
        device_ids (list of int or torch.device): CUDA devices (default: all devices).
        output_device (int or torch.device): device location of output (default: device_ids[0]).
        dim (int): the dimension a batch would be split along. Default: ``0``
    """

    def __init__(self, module: Module, device_ids: Optional[Sequence[Any]] = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        from tinytorch import cuda
        self.module = module
        if not cuda.is_available():
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if not device_ids:
            raise RuntimeError("no available devices were found")
        self.device_ids = [_device_index(d) for d in device_ids]
        if len(self.device_ids) > 1:
            raise NotImplementedError(
                f"DataParallel over {len(self.device_ids)} devices is not implemented in tinytorch (no single-process "
                f"replicate/scatter/gather): use torch.nn.parallel.DistributedDataParallel with one process per GPU "
                f"(tinytorch-run --nproc-per-node {len(self.device_ids)} script.py), or "
                f"DataParallel with device_ids=[{self.device_ids[0]}]")
        self.dim = dim
        self.output_device = self.device_ids[0] if output_device is None else _device_index(output_device)
        self.src_device_obj = f"cuda:{self.device_ids[0]}"
        self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if str(t.device) != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device {self.src_device_obj} "
                                   f"(device_ids[0]) but found one of them on device: {t.device}")
        return self.module(*_to(inputs, self.src_device_obj), **_to(kwargs, self.src_device_obj))
