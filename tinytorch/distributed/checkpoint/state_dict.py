"""State dicts of sharded models and their optimizers (PyTorch's
``torch.distributed.checkpoint.state_dict``): ``get_model_state_dict``, ``get_optimizer_state_dict``,
``set_model_state_dict``, ``set_optimizer_state_dict`` (and ``get_state_dict`` / ``set_state_dict``).

Sharded (the default): a ``fully_shard``-ed parameter, and each optimizer state tensor shaped like
it, is a :class:`ShardedTensor` over this rank's rows (sharing storage with the parameter or the
state, so ``dcp.load`` fills them in place); everything else is a plain tensor. Full
(``full_state_dict=True``): every sharded value is all-gathered into a normal tensor (a collective);
with ``cpu_offload=True`` only rank 0 keeps them (on the CPU) and the other ranks get ``{}``.
Optimizer state dicts are keyed by parameter names (``{"state": {fqn: {...}}, "param_groups":
[{..., "params": [fqn, ...]}]}``), so they load into another world size or another optimizer
instance. Loading checks names and shapes on every rank and raises on all of them together.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

from tinytorch._tensor.creation import empty
from tinytorch._core.dtype import DTYPES
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributed import collectives as _coll
from tinytorch.distributed.checkpoint._utils import agree, rank_and_world
from tinytorch.distributed.fsdp._fully_shard import FSDPModule
from tinytorch.distributed.fsdp._sharded_tensor import ShardedTensor
from tinytorch.distributed.object_collectives import broadcast_object_list
from tinytorch.nn.modules.module import Module, _IncompatibleKeys
from tinytorch.nn.parameter import Parameter
from tinytorch.optim.optimizer import Optimizer
from tinytorch._tensor.tensor import Tensor

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict", "set_model_state_dict",
           "set_optimizer_state_dict", "get_state_dict", "set_state_dict"]

_BY_NAME = {d.name: d for d in DTYPES}


@dataclass
class StateDictOptions:
    """Options of the state-dict functions (PyTorch's fields and defaults).

    Args:
        full_state_dict (bool): gather normal (unsharded) tensors instead of :class:`ShardedTensor`
            shards; setting with it takes full tensors and keeps each rank's rows.
        cpu_offload (bool): move the values to the CPU; with ``full_state_dict`` only rank 0 gets
            the state dict (the other ranks get ``{}``).
        ignore_frozen_params (bool): leave out parameters with ``requires_grad=False``.
        keep_submodule_prefixes (bool): accepted; names are always full names from the model.
        strict (bool): ``set_model_state_dict`` raises on missing or unexpected names.
        broadcast_from_rank0 (bool): setting: only rank 0's (full) state dict is read; its tensors
            are broadcast to the other ranks (which may pass ``{}``). Needs ``full_state_dict``.
        flatten_optimizer_state_dict (bool): not implemented; must be False.
    """
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False


def _options(options: Optional[StateDictOptions], what: str) -> StateDictOptions:
    opts = options if options is not None else StateDictOptions()
    if not isinstance(opts, StateDictOptions):
        raise TypeError(f"{what}: options must be a StateDictOptions, got {type(opts).__name__}")
    if opts.flatten_optimizer_state_dict:
        raise NotImplementedError(f"{what}: flatten_optimizer_state_dict=True is not implemented")
    if opts.broadcast_from_rank0 and not opts.full_state_dict:
        raise ValueError(f"{what}: broadcast_from_rank0=True needs full_state_dict=True (rank 0 holds a full "
                         "state dict)")
    return opts


def _no_submodules(submodules, what: str) -> None:
    if submodules is not None:
        raise NotImplementedError(f"{what}: submodules= is not implemented (PyTorch deprecates it); pass None")


def _fsdp_param(t):
    return getattr(t, "_fsdp_param", None)


def _model_device(model: Module):
    for p in model.parameters():
        return p.device
    for b in model.buffers():
        return b.device
    return None


def _reshard_all(model: Module) -> None:
    """Drops unsharded copies (they would be stale after the shards change)."""
    for m in model.modules():
        if isinstance(m, FSDPModule) and m._fsdp_state.group is not None:
            m._fsdp_state.group.reshard()
            m._fsdp_state.group.new_iteration()


def _offload_full(sd: dict, opts: StateDictOptions) -> dict:
    if opts.full_state_dict and opts.cpu_offload:
        rank, _ = rank_and_world()
        return _tree(lambda t: t.cpu(), sd) if rank == 0 else {}
    if opts.cpu_offload:
        return _tree(lambda t: t.cpu(), sd)
    return sd


def _tree(fn, obj):
    if isinstance(obj, (Tensor, ShardedTensor)):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: _tree(fn, v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_tree(fn, v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(_tree(fn, v) for v in obj)
    return obj


# ---------------------------------------------------------------------------- model
def get_model_state_dict(model: Module, *, submodules=None,
                         options: Optional[StateDictOptions] = None) -> Dict[str, Any]:
    """The model's state dict: :class:`ShardedTensor` shards for sharded parameters (default), or
    full tensors (``full_state_dict=True``; a collective). Names are the model's own (fully_shard
    adds no prefixes)."""
    opts = _options(options, "get_model_state_dict")
    _no_submodules(submodules, "get_model_state_dict")
    out: Dict[str, Any] = {}
    for name, v in model.state_dict(keep_vars=True).items():
        if opts.ignore_frozen_params and isinstance(v, Parameter) and not v.requires_grad:
            continue
        fp = _fsdp_param(v)
        if fp is not None:
            value = fp.sharded_state(v.detach())
            out[name] = value.full_tensor() if opts.full_state_dict else value
        else:
            out[name] = v.detach()
    return _offload_full(out, opts)


def _check_value(name: str, value, target, fp, errors: list) -> None:
    want = fp.global_shape if fp is not None else tuple(target.shape)
    if not isinstance(value, (Tensor, ShardedTensor)):
        errors.append(f'While copying the parameter named "{name}", expected a tensor, got {type(value).__name__}')
        return
    got = tuple(value.shape)
    if got != want:
        errors.append(f"size mismatch for {name}: copying a param with shape {list(got)} from checkpoint, the shape "
                      f"in current model is {list(want)}.")
    elif isinstance(value, ShardedTensor) and fp is None:
        errors.append(f"{name}: a ShardedTensor for a parameter or buffer that is not sharded (pass a full tensor)")
    elif isinstance(value, ShardedTensor) and (value.start, value.stop) != (fp.start, fp.stop):
        errors.append(f"{name}: the ShardedTensor holds rows [{value.start}, {value.stop}) but this rank's shard "
                      f"is rows [{fp.start}, {fp.stop})")


def _local_rows(value, fp) -> Tensor:
    """This rank's rows of a full tensor or a ShardedTensor, for the sharded parameter ``fp``."""
    if isinstance(value, ShardedTensor):
        return value.to_local()
    return value.narrow(0, fp.start, fp.local_rows)


def set_model_state_dict(model: Module, model_state_dict: Dict[str, Any], *,
                         options: Optional[StateDictOptions] = None) -> _IncompatibleKeys:
    """Loads a state dict from :func:`get_model_state_dict` (sharded or full) into the model, in
    place: each sharded parameter takes its rows. Names and shapes are checked on every rank, and
    a mismatch anywhere raises on all ranks (``RuntimeError``, as ``Module.load_state_dict``).

    Returns:
        ``(missing_keys, unexpected_keys)`` (non-empty only with ``strict=False``)."""
    opts = _options(options, "set_model_state_dict")
    if opts.broadcast_from_rank0:
        model_state_dict = _broadcast_from_rank0(model_state_dict, _model_device(model), "set_model_state_dict")
    if not isinstance(model_state_dict, dict):
        raise TypeError(f"set_model_state_dict: model_state_dict must be a dict, got {type(model_state_dict).__name__}")
    targets = model.state_dict(keep_vars=True)
    if opts.ignore_frozen_params:
        targets = {k: v for k, v in targets.items() if not (isinstance(v, Parameter) and not v.requires_grad)}
    missing = [k for k in targets if k not in model_state_dict]
    unexpected = [k for k in model_state_dict if k not in targets]
    errors: list = []
    for k, v in model_state_dict.items():
        if k in targets:
            _check_value(k, v, targets[k], _fsdp_param(targets[k]), errors)
    if opts.strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
    err = None
    if errors:
        err = RuntimeError(f"Error(s) in loading state_dict for {type(model).__name__}:\n\t" + "\n\t".join(errors))
    agree(err)
    with no_grad():
        for k, v in model_state_dict.items():
            if k not in targets:
                continue
            t, fp = targets[k], _fsdp_param(targets[k])
            src = _local_rows(v, fp) if fp is not None else v
            if t.numel():
                t.copy_(src.to(t.device))
    _reshard_all(model)
    return _IncompatibleKeys(missing, unexpected)


# ---------------------------------------------------------------------------- optimizer
def _optimizers(optimizers, what: str) -> list:
    opts = [optimizers] if isinstance(optimizers, Optimizer) else list(optimizers)
    if not opts or not all(isinstance(o, Optimizer) for o in opts):
        raise TypeError(f"{what}: optimizers must be an Optimizer or a list of them")
    return opts


def _param_names(model: Module) -> dict:
    return {id(p): n for n, p in model.named_parameters()}


def _name_of(names: dict, p, what: str) -> str:
    n = names.get(id(p))
    if n is None:
        raise ValueError(f"{what}: the optimizer holds a parameter of shape {list(p.shape)} that is not one of the "
                         "model's parameters (build the optimizer from model.parameters() after fully_shard)")
    return n


def _init_optim_state(optim: Optimizer) -> None:
    """Creates the optimizer's state where it has none yet (PyTorch's _init_optim_state: one step
    with zero gradients at learning rate 0), so that a fresh optimizer has tensors to load into."""
    if optim.state:
        return
    params = [p for g in optim.param_groups for p in g["params"]]
    if any(p.grad is not None for p in params):
        return
    with no_grad():
        for p in params:
            if p.requires_grad:
                p.grad = p.detach().new_zeros(tuple(p.shape))
        saved = []
        for g in optim.param_groups:
            lr = g.get("lr")
            saved.append(lr)
            if isinstance(lr, Tensor):
                g["lr"] = lr.clone().fill_(0.0)
            elif lr is not None:
                g["lr"] = 0.0
        try:
            optim.step()
        finally:
            for g, lr in zip(optim.param_groups, saved):
                if lr is not None:
                    g["lr"] = lr
            for p in params:
                p.grad = None


def get_optimizer_state_dict(model: Module, optimizers, *, submodules=None,
                             options: Optional[StateDictOptions] = None) -> Dict[str, Any]:
    """The optimizers' state keyed by parameter name: ``{"state": {fqn: {key: value}},
    "param_groups": [{..., "params": [fqn, ...]}]}``. A state tensor shaped like its sharded
    parameter is a :class:`ShardedTensor` (or gathered, ``full_state_dict=True``); scalars such
    as ``step`` stay plain. An optimizer without state gets it first (a zero step)."""
    opts = _options(options, "get_optimizer_state_dict")
    _no_submodules(submodules, "get_optimizer_state_dict")
    names = _param_names(model)
    state: Dict[str, Any] = {}
    groups: list = []
    for optim in _optimizers(optimizers, "get_optimizer_state_dict"):
        _init_optim_state(optim)
        for g in optim.param_groups:
            fqns = []
            for p in g["params"]:
                fqn = _name_of(names, p, "get_optimizer_state_dict")
                fqns.append(fqn)
                st = optim.state.get(p)
                if st:
                    state[fqn] = {k: _export(v, p, opts) for k, v in st.items()}
            packed = {k: v for k, v in g.items() if k != "params"}
            packed["params"] = fqns
            groups.append(packed)
    return _offload_full({"state": state, "param_groups": groups}, opts)


def _export(v, p, opts: StateDictOptions):
    fp = _fsdp_param(p)
    if isinstance(v, Tensor) and fp is not None and v.dim() > 0 and tuple(v.shape) == tuple(p.shape):
        value = fp.sharded_state(v)
        return value.full_tensor() if opts.full_state_dict else value
    return v


def _import(v, p, where: str, errors: list):
    fp = _fsdp_param(p)
    if fp is None:
        if isinstance(v, ShardedTensor):
            errors.append(f"{where}: a ShardedTensor for a parameter that is not sharded")
        return v
    if isinstance(v, ShardedTensor):
        if v.shape != fp.global_shape or (v.start, v.stop) != (fp.start, fp.stop):
            errors.append(f"{where}: ShardedTensor {list(v.shape)} rows [{v.start}, {v.stop}) does not match the "
                          f"parameter {list(fp.global_shape)} rows [{fp.start}, {fp.stop})")
            return v
        return v.to_local()
    if isinstance(v, Tensor) and v.dim() > 0:
        if tuple(v.shape) == fp.global_shape:
            return v.narrow(0, fp.start, fp.local_rows)
        errors.append(f"{where}: shape {list(v.shape)} does not match the parameter's {list(fp.global_shape)}")
    return v


def set_optimizer_state_dict(model: Module, optimizers, optim_state_dict: Dict[str, Any], *,
                             options: Optional[StateDictOptions] = None) -> None:
    """Loads an optimizer state dict from :func:`get_optimizer_state_dict` (sharded or full, any
    world size for full ones) into ``optimizers`` (``Optimizer.load_state_dict`` casts it to each
    parameter). Every rank checks it; a mismatch raises on all ranks."""
    opts = _options(options, "set_optimizer_state_dict")
    if opts.broadcast_from_rank0:
        optim_state_dict = _broadcast_from_rank0(optim_state_dict, _model_device(model), "set_optimizer_state_dict")
    errors: list = []
    loads = []
    if not isinstance(optim_state_dict, dict) or not {"state", "param_groups"} <= set(optim_state_dict):
        errors.append("set_optimizer_state_dict: optim_state_dict must be a dict with 'state' and 'param_groups' "
                      "(from get_optimizer_state_dict)")
    else:
        names = _param_names(model)
        saved_groups = list(optim_state_dict["param_groups"])
        saved_state = optim_state_dict["state"]
        used = set()
        for optim in _optimizers(optimizers, "set_optimizer_state_dict"):
            groups, state, index = [], {}, 0
            for g in optim.param_groups:
                fqns = [_name_of(names, p, "set_optimizer_state_dict") for p in g["params"]]
                match = [i for i, s in enumerate(saved_groups)
                         if i not in used and set(s.get("params", ())) == set(fqns)]
                if not match:
                    errors.append(f"set_optimizer_state_dict: no saved param group holds exactly the parameters "
                                  f"{fqns} (saved groups: {[s.get('params') for s in saved_groups]})")
                    continue
                used.add(match[0])
                packed = {k: v for k, v in saved_groups[match[0]].items() if k != "params"}
                packed["params"] = list(range(index, index + len(fqns)))
                for j, (p, fqn) in enumerate(zip(g["params"], fqns)):
                    if fqn in saved_state:
                        state[index + j] = {k: _import(v, p, f"state of {fqn}[{k!r}]", errors)
                                            for k, v in saved_state[fqn].items()}
                index += len(fqns)
                groups.append(packed)
            loads.append((optim, {"state": state, "param_groups": groups}))
    agree(ValueError("\n".join(errors)) if errors else None)
    for optim, sd in loads:
        optim.load_state_dict(sd)


# ---------------------------------------------------------------------------- both
def get_state_dict(model: Module, optimizers, *, submodules=None, options: Optional[StateDictOptions] = None):
    """``(get_model_state_dict(model), get_optimizer_state_dict(model, optimizers))``."""
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options))


def set_state_dict(model: Module, optimizers, *, model_state_dict: Dict[str, Any],
                   optim_state_dict: Dict[str, Any], options: Optional[StateDictOptions] = None) -> _IncompatibleKeys:
    """``set_model_state_dict`` then ``set_optimizer_state_dict``."""
    keys = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys


# ---------------------------------------------------------------------------- broadcast_from_rank0
def _broadcast_from_rank0(obj, device, what: str):
    """Rank 0's nested state dict on every rank: the structure as JSON (broadcast_object_list),
    then each tensor broadcast on the model's device."""
    rank, world = rank_and_world()
    if world == 1:
        return obj
    tensors: list = []

    def skeleton(o):
        if isinstance(o, ShardedTensor):
            raise ValueError(f"{what}: broadcast_from_rank0 takes a full state dict, got a ShardedTensor")
        if isinstance(o, Tensor):
            tensors.append(o)
            return {"$tensor": len(tensors) - 1, "shape": list(o.shape), "dtype": o.dtype.name}
        if isinstance(o, dict):
            return {"$dict": [[k, skeleton(v)] for k, v in o.items()]}
        if isinstance(o, (list, tuple)):
            return {"$list" if isinstance(o, list) else "$tuple": [skeleton(v) for v in o]}
        return o
    payload = [None]
    err = None
    if rank == 0:
        try:
            payload[0] = skeleton(obj)
        except (ValueError, TypeError) as e:
            err = e
    agree(err)
    broadcast_object_list(payload, src=0)
    got: list = []

    def collect(node):
        if isinstance(node, dict):
            if "$tensor" in node:
                got.append(node)
            for v in node.get("$dict", ()):
                collect(v[1])
            for key in ("$list", "$tuple"):
                for v in node.get(key, ()):
                    collect(v)
    collect(payload[0])
    values = {}
    with no_grad():
        for node in got:
            if rank == 0:
                t = tensors[node["$tensor"]].detach()
                t = (t.to(device) if device is not None else t).contiguous()
                if t._impl.storage_ptr == tensors[node["$tensor"]]._impl.storage_ptr:
                    t = t.clone()
            else:
                t = empty(tuple(node["shape"]), dtype=_BY_NAME[node["dtype"]], device=device)
            _coll.broadcast(t, 0)
            values[node["$tensor"]] = t

    def build(node):
        if isinstance(node, dict):
            if "$tensor" in node:
                return values[node["$tensor"]]
            if "$dict" in node:
                return {k: build(v) for k, v in node["$dict"]}
            if "$list" in node:
                return [build(v) for v in node["$list"]]
            if "$tuple" in node:
                return tuple(build(v) for v in node["$tuple"])
        return node
    return build(payload[0])
