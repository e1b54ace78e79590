"""``fully_shard`` and ``FSDPModule`` (PyTorch's FSDP2: ``torch.distributed.fsdp.fully_shard``).

``fully_shard(module)`` shards the parameters of ``module`` that no ``fully_shard``-ed submodule
manages, and changes the module's class to a subclass of ``FSDPModule`` and of its own class
(``FSDPBlock`` for a ``Block``, as PyTorch does), whose ``__call__`` runs the state's
pre-forward (cast inputs, all-gather, record the post-backward node), the module's usual call
(its hooks included), then the post-forward (reshard, pre-backward hooks on the outputs, cast
outputs). Apply it to each block, then to the root; see docs/distributed.md.
"""
from __future__ import annotations

import hashlib
from typing import Any, Optional

from tinytorch._core.graph import _make_node, _set_history, is_grad_enabled
from tinytorch.distributed import process_group as _pg
from tinytorch.distributed._tensor_tree import map_tensors, tensors_in
from tinytorch.distributed.device_mesh import DeviceMesh, init_device_mesh
from tinytorch.distributed.fsdp._api import MixedPrecisionPolicy, OffloadPolicy
from tinytorch.distributed.fsdp._fsdp_param import FSDPParam
from tinytorch.distributed.fsdp._fsdp_param_group import FSDPParamGroup, _ForwardRecord, in_backward
from tinytorch.distributed.object_collectives import all_gather_object
from tinytorch.nn.modules.module import Module

__all__ = ["fully_shard", "FSDPModule", "UnshardHandle"]


# ---------------------------------------------------------------------------- pytrees of arguments
def _cast_floating(obj, dtype):
    return map_tensors(lambda t: t.to(dtype) if t.is_floating_point() and t.dtype != dtype else t, obj)


# ---------------------------------------------------------------------------- the per-module state
class FSDPState:
    """What ``fully_shard`` attaches to a module: its parameter group (None when it manages no
    parameter), its policy, and the root's bookkeeping."""

    def __init__(self, module: Module, group: Optional[FSDPParamGroup], mesh: DeviceMesh,
                 mp_policy: MixedPrecisionPolicy, reshard_after_forward: bool) -> None:
        self.module = module
        self.group = group
        self.mesh = mesh
        self.mp_policy = mp_policy
        self.reshard_after_forward = reshard_after_forward
        self.is_root: Optional[bool] = None       # decided by the first forward (the root's)
        self.root: Optional[FSDPState] = None
        self.tree: list = []                      # root only: every state under it, itself included
        self.forward_order: list = []             # root only: states in the order their forwards ended
        self.forward_prefetch: list = []
        self.backward_prefetch: Optional[list] = None   # None: the state before this one in forward order

    # ---- lazy initialization (as PyTorch: the first module to run forward is the root)
    def _lazy_init(self) -> None:
        self.is_root, self.root = True, self
        self.tree = [m._fsdp_state for m in self.module.modules() if isinstance(m, FSDPModule)]
        for st in self.tree:
            if st is not self:
                st.is_root, st.root = False, self
                if st.group is not None:    # it may have run forward alone (as a root) before
                    st.group.reshard_after_forward = st.reshard_after_forward
        if self.group is not None:
            # the root's backward starts as soon as its forward ends: resharding would only
            # all-gather the same parameters again (PyTorch does not reshard the root either)
            self.group.reshard_after_forward = False

    # ---- forward
    def pre_forward(self, args: tuple, kwargs: dict):
        if self.is_root is None:
            self._lazy_init()
        recompute = in_backward()
        if self.is_root and not recompute:
            self.forward_order = []
            for st in self.tree:
                if st.group is not None:
                    st.group.new_iteration()
        mp = self.mp_policy
        if mp.cast_forward_inputs and mp.param_dtype is not None:
            args, kwargs = _cast_floating(args, mp.param_dtype), _cast_floating(kwargs, mp.param_dtype)
        record = _ForwardRecord()
        seq = None
        if self.group is not None:
            seq = self.group.pre_forward(record)
        for m in self.forward_prefetch:
            g = m._fsdp_state.group
            if g is not None:
                g.unshard(async_op=True)
        if seq is not None and self.group is not None:
            args, kwargs = self._register_post_backward(args, kwargs, record)
        return args, kwargs, (record, seq)

    def _register_post_backward(self, args, kwargs, record: _ForwardRecord):
        """Passes the inputs that require grad through one identity node: its backward runs once
        every node that used them has, i.e. after this module's whole backward (PyTorch's
        RegisterPostBackwardFunction), and reshards."""
        ins = [t for t in tensors_in((args, kwargs)) if t.requires_grad]
        if not ins:
            return args, kwargs
        group = self.group

        def backward(node, *grads):
            group.post_backward(record)
            return grads
        node = _make_node("FSDPPostBackward", backward, tuple(ins), len(ins))
        swap = {}
        for i, t in enumerate(ins):
            if id(t) not in swap:
                o = t.detach()
                _set_history(o, node, i)
                swap[id(t)] = o
        record.has_post_backward = True
        return map_tensors(lambda t: swap.get(id(t), t), (args, kwargs))

    def post_forward(self, output, token):
        record, seq = token
        group = self.group
        recompute = in_backward()
        if group is not None:
            if not is_grad_enabled():
                if group.reshard_after_forward or self.is_root:
                    group.reshard()           # nothing will come back for them
            elif not recompute:
                nodes = [t.grad_fn for t in tensors_in(output) if t.grad_fn is not None]
                if group.reshard_after_forward and not self.is_root and seq is not None:
                    record.segment = group.free_after_forward(nodes, seq)
                root = self.root if self.root is not None else self
                record.position = len(root.forward_order)
                root.forward_order.append(self)
                for t in tensors_in(output):
                    if t.grad_fn is not None:
                        t.register_hook(self._pre_backward_hook(record))
        if self.mp_policy.output_dtype is not None:
            output = _cast_floating(output, self.mp_policy.output_dtype)
        return output

    # ---- backward
    def _pre_backward_hook(self, record: _ForwardRecord):
        def hook(grad):
            if not record.pre_backward_done:
                record.pre_backward_done = True
                self._pre_backward(record)
            return None
        return hook

    def _pre_backward(self, record: _ForwardRecord) -> None:
        if record.segment is not None:
            self.group.restore(record.segment)
        if self.backward_prefetch is not None:
            targets = [m._fsdp_state for m in self.backward_prefetch]
        else:
            order = (self.root or self).forward_order
            targets = [order[record.position - 1]] if record.position > 0 else []
        for st in targets:
            if st.group is not None and st.group.needs_restore:
                st.group.unshard(async_op=True)   # its pre-backward waits for it


# ---------------------------------------------------------------------------- the module class
class UnshardHandle:
    """What ``FSDPModule.unshard(async_op=True)`` returns: ``wait()`` completes the all-gather."""

    def __init__(self, state: Optional[FSDPState]) -> None:
        self._state = state

    def wait(self) -> None:
        if self._state is not None and self._state.group is not None:
            g = self._state.group
            g.wait_for_unshard()
            g._install(g._raw)
        self._state = None


class FSDPModule:
    """The class ``fully_shard`` mixes into a module's class (``isinstance(m, FSDPModule)``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        state = self._fsdp_state
        args, kwargs, token = state.pre_forward(args, kwargs)
        out = super().__call__(*args, **kwargs)
        return state.post_forward(out, token)

    def _states(self, recurse: bool) -> list:
        if not recurse:
            return [self._fsdp_state]
        return [m._fsdp_state for m in self.modules() if isinstance(m, FSDPModule)]

    def reshard(self) -> None:
        """Frees the unsharded parameters (all-gathered by ``unshard`` or a forward); the module's
        parameters are its shards again."""
        if self._fsdp_state.group is not None:
            self._fsdp_state.group.reshard()

    def unshard(self, async_op: bool = False) -> Optional[UnshardHandle]:
        """All-gathers the parameters; with ``async_op=True`` returns a handle whose ``wait()``
        completes it. Until ``reshard()``, the module's attributes are the unsharded tensors."""
        state = self._fsdp_state
        if state.group is not None:
            state.group.unshard(async_op=True)
        handle = UnshardHandle(state)
        if async_op:
            return handle
        handle.wait()
        return None

    def set_requires_gradient_sync(self, requires_gradient_sync: bool, *, recurse: bool = True) -> None:
        """With False, backward accumulates unsharded gradients locally, without communication
        (gradient accumulation); the next backward with True adds them and reduce-scatters."""
        for st in self._states(recurse):
            if st.group is not None:
                st.group.requires_gradient_sync = bool(requires_gradient_sync)

    def set_reshard_after_backward(self, reshard_after_backward: bool, *, recurse: bool = True) -> None:
        """With False, parameters stay unsharded after backward (saves the next forward's
        all-gather during gradient accumulation; the optimizer step does not reach them, so set it
        back to True for the last micro-batch, as in PyTorch)."""
        for st in self._states(recurse):
            if st.group is not None:
                st.group.reshard_after_backward = bool(reshard_after_backward)

    def set_reshard_after_forward(self, reshard_after_forward: bool, recurse: bool = True) -> None:
        """Whether the parameters are freed after forward and all-gathered again for backward
        (never for the root module)."""
        if not isinstance(reshard_after_forward, bool):
            raise TypeError(f"set_reshard_after_forward: reshard_after_forward must be a bool, got "
                            f"{type(reshard_after_forward).__name__}")
        for st in self._states(recurse):
            st.reshard_after_forward = reshard_after_forward
            if st.group is not None and not st.is_root:
                st.group.reshard_after_forward = reshard_after_forward

    def set_modules_to_forward_prefetch(self, modules: list) -> None:
        """The modules whose all-gather is issued as soon as this module's own is done, before its
        forward computes (explicit forward prefetching)."""
        self._fsdp_state.forward_prefetch = _check_fsdp_modules(modules, "set_modules_to_forward_prefetch")

    def set_modules_to_backward_prefetch(self, modules: list) -> None:
        """The modules whose all-gather is issued when this module's backward begins (default:
        the module that ran forward just before this one)."""
        self._fsdp_state.backward_prefetch = _check_fsdp_modules(modules, "set_modules_to_backward_prefetch")

    def set_gradient_divide_factor(self, factor: float) -> None:
        """Divides the summed gradients by ``factor`` instead of averaging over the ranks."""
        if not factor > 0:
            raise ValueError(f"set_gradient_divide_factor: factor must be positive, got {factor}")
        for st in self._states(True):
            if st.group is not None:
                st.group.gradient_divide_factor = float(factor)


def _check_fsdp_modules(modules, what: str) -> list:
    modules = list(modules)
    for m in modules:
        if not isinstance(m, FSDPModule):
            raise ValueError(f"{what}: every module must have been passed to fully_shard, got "
                             f"{type(m).__name__}")
    return modules


_CLASSES: dict = {}


def _fsdp_class(cls: type) -> type:
    if cls not in _CLASSES:
        _CLASSES[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {"__module__": cls.__module__})
    return _CLASSES[cls]


# ---------------------------------------------------------------------------- fully_shard
_DEFAULT_MESH: dict = {}


def _default_mesh(device_type: str) -> DeviceMesh:
    key = (device_type, _pg.get_world_size(), id(_pg.group.WORLD))
    if key not in _DEFAULT_MESH:
        _DEFAULT_MESH.clear()
        _DEFAULT_MESH[key] = init_device_mesh(device_type, (_pg.get_world_size(),))
    return _DEFAULT_MESH[key]


def _managed_parameters(module: Module, ignored: set) -> list:
    """``[(param, [(owner module, name), ...])]`` of the parameters of ``module``'s tree outside
    ``fully_shard``-ed submodules, in registration order (a shared parameter once)."""
    found: dict = {}
    order: list = []

    def visit(m: Module) -> None:
        for name, p in m._parameters.items():
            if p is None or id(p) in ignored:
                continue
            if id(p) not in found:
                found[id(p)] = (p, [])
                order.append(id(p))
            found[id(p)][1].append((m, name))
        for child in m._modules.values():
            if child is not None and not isinstance(child, FSDPModule):
                visit(child)
    visit(module)
    return [found[i] for i in order]


def fully_shard(module: Module, *, mesh: Optional[DeviceMesh] = None, reshard_after_forward: bool = True,
                shard_placement_fn=None, mp_policy: MixedPrecisionPolicy = MixedPrecisionPolicy(),
                offload_policy: OffloadPolicy = OffloadPolicy(), ignored_params: Optional[set] = None) -> Module:
    """Shards ``module``'s parameters across the ranks of ``mesh`` (PyTorch's FSDP2).

    Each parameter is split on dim 0: every rank stores ``ceil(n / world)`` rows (zero padding
    where ``n`` is not divisible) and owns its part, which becomes the module's registered
    parameter, so ``module.parameters()`` and any optimizer see only the local shards. Before the
    module's forward the shards are all-gathered; after it they are freed when
    ``reshard_after_forward`` (and all-gathered again for backward); gradients are reduce-scattered
    (averaged over the ranks, as DDP's) into the shards' ``.grad``. Parameters of submodules that
    were passed to ``fully_shard`` before are theirs: call it on each block first, then on the
    root. Every rank must call it with the same module structure.

    Args:
        module (Module): the module to shard; its class becomes an ``FSDPModule`` subclass.
        mesh (DeviceMesh, optional): a 1-D mesh of every rank (default: ``init_device_mesh`` over
            the world, on the parameters' device type).
        reshard_after_forward (bool): free the unsharded parameters after forward (default True;
            the root module's are always kept for its backward).
        shard_placement_fn: not implemented (dim-0 sharding only); must be None.
        mp_policy (MixedPrecisionPolicy): parameter / gradient-reduction / output dtypes.
        offload_policy (OffloadPolicy): only the default (no CPU offload).
        ignored_params (set of Parameter, optional): parameters left unsharded and unmanaged.

    Returns:
        ``module``, now an instance of ``FSDPModule``.
    """
    if not isinstance(module, Module):
        raise TypeError(f"fully_shard: module must be a tinytorch.nn.Module, got {type(module).__name__}")
    if isinstance(module, FSDPModule):
        raise ValueError(f"fully_shard: module ({type(module).__name__}) is already sharded (an FSDPModule); "
                         "call fully_shard once per module")
    if not _pg.is_initialized():
        raise RuntimeError("fully_shard: call tinytorch.distributed.init_process_group() first")
    if not isinstance(reshard_after_forward, bool):
        raise NotImplementedError(f"fully_shard: reshard_after_forward must be a bool (resharding to a smaller "
                                  f"world, an int, is not implemented), got {reshard_after_forward!r}")
    if shard_placement_fn is not None:
        raise NotImplementedError("fully_shard: shard_placement_fn is not implemented (parameters are sharded on "
                                  "dim 0)")
    if type(offload_policy) is not OffloadPolicy:
        raise NotImplementedError(f"fully_shard: offload_policy={offload_policy!r} is not implemented "
                                  "(only the default OffloadPolicy(), no CPU offload)")
    if not isinstance(mp_policy, MixedPrecisionPolicy):
        raise TypeError(f"fully_shard: mp_policy must be a MixedPrecisionPolicy, got {type(mp_policy).__name__}")
    ignored = {id(p) for p in (ignored_params or ())}
    managed = _managed_parameters(module, ignored)
    for p, where in managed:
        if getattr(p, "_fsdp_param", None) is not None:
            m, name = where[0]
            raise ValueError(f"fully_shard: parameter '{name}' of {type(m).__name__} is already sharded by the "
                             "fully_shard of an enclosing module; apply fully_shard bottom-up (each block first, "
                             "then the root)")
        if p.dim() == 0:
            m, name = where[0]
            raise ValueError(f"fully_shard: parameter '{name}' of {type(m).__name__} is 0-dimensional; FSDP shards "
                             "on dim 0 (make it shape [1] or pass it in ignored_params)")
    devices = {str(p.device) for p, _ in managed}
    if len(devices) > 1:
        raise ValueError(f"fully_shard: the module's parameters are on several devices ({sorted(devices)}); "
                         "move the module to one device first")
    device_type = managed[0][0].device.type if managed else ("cuda" if _pg.get_backend() == "nccl" else "cpu")
    world = _pg.get_world_size()
    if mesh is None:
        mesh = _default_mesh(device_type)
    elif not isinstance(mesh, DeviceMesh):
        raise TypeError(f"fully_shard: mesh must be a DeviceMesh, got {type(mesh).__name__}")
    if mesh.ndim != 1:
        raise NotImplementedError(f"fully_shard: mesh must be 1-D (shards over one dimension of ranks), got a "
                                  f"{mesh.ndim}-D mesh {mesh.shape}; HSDP (2-D meshes) is not implemented")
    if mesh.get_coordinate() is None:
        raise ValueError(f"fully_shard: rank {_pg.get_rank()} is not in the mesh {mesh.mesh.tolist()}; pass this "
                         "rank's line of a mesh (mesh['dp'] of a 2-D mesh)")
    if mesh.device_type != device_type:
        raise ValueError(f"fully_shard: the module's parameters are on {device_type} but mesh.device_type is "
                         f"'{mesh.device_type}'; move the module to the mesh's device first")
    dtypes = {p.dtype for p, _ in managed}
    if len(dtypes) > 1 and mp_policy.param_dtype is None:
        raise ValueError(f"fully_shard: the managed parameters have several dtypes ({sorted(d.name for d in dtypes)}); "
                         "FSDP all-gathers them in one dtype: convert the module or set mp_policy.param_dtype")
    pg = mesh.get_group()
    # A collective decision: every rank must shard the same structure (raised on every rank).
    names = {id(p): n for n, p in module.named_parameters()}
    sig = ";".join(f"{names.get(id(p), '?')}:{tuple(p.shape)}:{p.dtype.name}" for p, _ in managed)
    everyone: list = [None] * world
    all_gather_object(everyone, [hashlib.sha1(sig.encode()).hexdigest()[:16], len(managed)])
    if any(e != everyone[0] for e in everyone):
        raise RuntimeError(f"fully_shard: the parameters of {type(module).__name__} differ across ranks (digest, "
                           f"count per rank: {everyone}); every rank must build the same model")
    rank = _pg.get_rank(pg)
    shards = mesh.size()
    group = None
    if managed:
        fsdp_params = []
        for p, where in managed:
            fp = FSDPParam(p, where, pg, shards, rank)
            fp.fqn = names.get(id(p), where[0][1])
            fsdp_params.append(fp)
        group = FSDPParamGroup(fsdp_params, pg, mp_policy)
        group.reshard_after_forward = reshard_after_forward
    state = FSDPState(module, group, mesh, mp_policy, reshard_after_forward)
    object.__setattr__(module, "_fsdp_state", state)
    module.__class__ = _fsdp_class(type(module))
    return module
