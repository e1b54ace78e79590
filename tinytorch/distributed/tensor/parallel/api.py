"""``parallelize_module``: applies parallel styles to a module and its submodules by a plan keyed by
their fully qualified names (PyTorch's ``torch.distributed.tensor.parallel.parallelize_module``)."""
from __future__ import annotations

import fnmatch
import warnings
from typing import Dict, List, Optional, Tuple, Union

from tinytorch.distributed import process_group as _pg
from tinytorch.distributed.device_mesh import DeviceMesh, init_device_mesh
from tinytorch.distributed.tensor.parallel.style import ParallelStyle
from tinytorch.nn.modules.module import Module

__all__ = ["parallelize_module"]


def _resolve(module: Module, path: str) -> List[Tuple[str, Module]]:
    """The (fully qualified name, submodule) pairs that ``path`` names under module; each of its
    dot-separated parts may be an ``fnmatch`` pattern (``layers.*.attention.wq``)."""
    atoms = path.split(".")
    if not path or any(not a for a in atoms):
        raise ValueError(f"parallelize_module: the plan's key {path!r} is not a module path (parts separated by "
                         "single dots, such as 'layers.*.attention.wq')")
    frontier = [("", module)]
    for atom in atoms:
        found = [(f"{fqn}.{name}" if fqn else name, child) for fqn, m in frontier
                 for name, child in m.named_children() if fnmatch.fnmatchcase(name, atom)]
        if not found:
            fqn, m = frontier[0]
            children = ", ".join(name for name, _ in m.named_children()) or "none"
            where = f"{fqn!r}" if fqn else f"the {type(module).__name__}"
            more = f" (and {len(frontier) - 1} more matches of the path so far)" if len(frontier) > 1 else ""
            raise ValueError(f"parallelize_module: the plan names {path!r}, which matches no submodule: "
                             f"{where}{more} has no child matching {atom!r} (its children: {children})")
        frontier = found
    return frontier


def parallelize_module(module: Module, device_mesh: Optional[DeviceMesh] = None,
                       parallelize_plan: Union[ParallelStyle, Dict[str, ParallelStyle], None] = None, *,
                       src_data_rank: Optional[int] = 0) -> Module:
    """Applies tensor parallelism to ``module`` in place and returns it.

    Args:
        module (Module): the module to parallelize.
        device_mesh (DeviceMesh, optional): a 1-D mesh of the ranks that share the work (``mesh["tp"]``
            of a 2-D mesh); default: every rank of the default group.
        parallelize_plan (ParallelStyle or dict): a style for ``module`` itself, or a dict from
            submodule paths to styles, applied in the dict's order. A path's parts may be
            ``fnmatch`` patterns (``"layers.*.self_attn.q_proj"``); a path that matches no submodule
            raises ValueError naming it. Every entry is checked (module types, sizes that must split
            evenly over the mesh) before any module changes.
        src_data_rank (int or None): the mesh rank whose weights every rank takes its shards from
            (broadcast; default 0, as PyTorch); None: each rank shards its own weights.

    Returns:
        The parallelized module. Its parameters are new local shards: build the optimizer after.
    """
    if device_mesh is None:
        device_type = "cuda" if _pg.get_backend() == "nccl" else "cpu"
        device_mesh = init_device_mesh(device_type, (_pg.get_world_size(),))
    if not isinstance(device_mesh, DeviceMesh):
        raise TypeError(f"parallelize_module: device_mesh must be a DeviceMesh, got {type(device_mesh).__name__}")
    if device_mesh.ndim != 1:
        raise ValueError(f"parallelize_module: tensor parallelism runs over a 1-D mesh, got a {device_mesh.ndim}-D "
                         f"mesh of shape {device_mesh.shape}; pass the tensor-parallel dimension, e.g. mesh['tp']")
    if src_data_rank is not None and not 0 <= src_data_rank < device_mesh.size():
        raise ValueError(f"parallelize_module: src_data_rank {src_data_rank} is not a rank of the mesh of size "
                         f"{device_mesh.size()}")
    if parallelize_plan is None:
        warnings.warn("parallelize_module: no parallelize_plan given; the module is left as it is")
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        entries = [("", module, parallelize_plan)]
    elif isinstance(parallelize_plan, dict):
        entries = []
        for path, style in parallelize_plan.items():
            if not isinstance(style, ParallelStyle):
                raise TypeError(f"parallelize_module: the plan maps {path!r} to a {type(style).__name__}, not a "
                                "ParallelStyle")
            entries += [(fqn, sub, style) for fqn, sub in _resolve(module, path)]
    else:
        raise TypeError(f"parallelize_module: parallelize_plan must be a ParallelStyle or a dict of them, got "
                        f"{type(parallelize_plan).__name__}")
    seen: Dict[int, str] = {}
    for fqn, sub, style in entries:
        name = fqn or type(module).__name__
        if style._shards:      # a module's weights are sharded once (the Prepare* styles only add hooks)
            if id(sub) in seen:
                raise ValueError(f"parallelize_module: the plan names {name} twice (as {seen[id(sub)]} and "
                                 f"{type(style).__name__})")
            seen[id(sub)] = type(style).__name__
            done = getattr(sub, "_tp_style", None)
            if done is not None:
                raise ValueError(f"parallelize_module: {name} is already parallelized ({done})")
        style._check(fqn, sub, device_mesh)
    # every check above is the same on every rank and touches no process group, so a bad plan
    # raises on each rank before any collective (none is left waiting for the others)
    device_mesh.get_local_rank()              # raises when this rank is not in the mesh
    for fqn, sub, style in entries:
        style.src_data_rank = src_data_rank
        style._apply(sub, device_mesh)
        if style._shards:
            object.__setattr__(sub, "_tp_style", f"{type(style).__name__} over {device_mesh.size()} ranks")
    return module
