"""``Optimizer``: the base class of every tinytorch optimizer, with PyTorch's semantics.

``param_groups`` is a list of dicts (``"params"`` plus every hyperparameter, defaults filled
in); ``state`` maps each parameter to a dict of its state tensors. ``state_dict()`` replaces
parameters by integer ids and ``load_state_dict`` maps them back, casting floating-point state to
the parameter's dtype/device. Steps run under ``no_grad``; a closure is called with grad enabled.

Subclasses implement ``step``; it is wrapped once per class (``__init_subclass__``) to run the
step pre/post hooks and to disable gradient recording.
"""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain
from typing import Any, Callable, Dict, Iterable, Union

from tinytorch import _C
from tinytorch._core.graph import _set_grad_enabled, is_grad_enabled
from tinytorch._core.dtype import FLOAT32, device as _device
from tinytorch._core.tensor_base import _wrap
from tinytorch.optim._hyperparameters import _as_float
from tinytorch._tensor.tensor import Tensor

# what an optimizer's params may be: tensors, or groups of them with their own options
ParamsT = Union[Iterable[Tensor], Iterable[Dict[str, Any]]]

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    """Singleton marking a hyperparameter a param group must supply (no default)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_CPU = _device("cpu")._impl

# State entries kept as one-element float32 CPU tensors, as PyTorch does.
_SCALAR_STATE_KEYS = ("step", "mu_product")


class _RemovableHandle:
    _next_id = 0

    def __init__(self, hooks: "OrderedDict[int, Callable]") -> None:
        self._hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _wrap_step(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def step(self, *args, **kwargs):
        pre = self.__dict__.get("_step_pre_hooks")
        if pre:
            for hook in list(pre.values()):
                result = hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
        prev = is_grad_enabled()
        _set_grad_enabled(False)
        try:
            out = fn(self, *args, **kwargs)
        finally:
            _set_grad_enabled(prev)
        self._opt_called = True
        post = self.__dict__.get("_step_post_hooks")
        if post:
            for hook in list(post.values()):
                hook(self, args, kwargs)
        return out

    step._tinytorch_step_wrapped = True
    return step


def _typename(o: Any) -> str:
    if isinstance(o, Tensor):
        return "tinytorch.Tensor"
    return type(o).__module__ + "." + type(o).__qualname__ if type(o).__module__ != "builtins" else type(o).__name__


def scalar_state(value: float = 0.0) -> Tensor:
    """A one-element float32 CPU tensor (PyTorch's ``state["step"]``)."""
    return _wrap(_C.full([], float(value), FLOAT32, _CPU))


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of Tensors, of dicts (param groups), or of ``(name, Tensor)`` pairs.
        defaults: default values of the hyperparameters (used where a group does not set them).
    """

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_tinytorch_step_wrapped", False):
            cls.step = _wrap_step(step)

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._step_pre_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._step_post_hooks: OrderedDict[int, Callable] = OrderedDict()
        self._opt_called = False
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        if isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        try:
            param_groups = list(params)
        except TypeError:
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}") from None
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------ groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Adds a param group to the optimizer's ``param_groups`` (e.g. when unfreezing layers)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            params = list(params)
        names = []
        plain = []
        for p in params:
            if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str):
                names.append(p[0])
                p = p[1]
            plain.append(p)
        if names:
            if len(names) != len(plain):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        param_group["params"] = plain
        for p in plain:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}")
            if not self.defaults.get("differentiable", False) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in plain]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error", stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ------------------------------------------------------------------ grads
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Resets the gradients of all optimized tensors (to None, or to zero in place)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    _C.fill_(g._impl, 0.0)
                    g._impl.bump_version()

    # ------------------------------------------------------------------ step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs a single optimization step (parameter update)."""
        raise NotImplementedError

    def _eval_closure(self, closure):
        if closure is None:
            return None
        prev = is_grad_enabled()
        _set_grad_enabled(True)
        try:
            return closure()
        finally:
            _set_grad_enabled(prev)

    def _collect(self, group: dict[str, Any], buffers: tuple[str, ...] = (), *, fill: Any = 0.0,
                 optional: dict[str, bool] | None = None, scalars: dict[str, float] | None = None) -> tuple:
        """Gathers one param group's arguments for a fused ``_C.<name>_step_multi_`` call.

        Parameters without a gradient are skipped. On a parameter's first step its state is
        created: ``step`` (a one-element tensor at 0), each key of ``scalars`` (one-element
        tensors at the given value), then each key of ``buffers`` (tensors like the parameter,
        filled with ``fill``). ``optional`` maps further buffer keys to whether they are in use
        (e.g. amsgrad's ``max_exp_avg_sq``): one in use is created zero-filled when missing, one
        not in use gets an empty list.

        Returns ``(params, grads, *lists, steps)`` of ``_impl`` handles, with one list per key of
        ``buffers``, then of ``optional``, then of ``scalars``.
        """
        optional = optional or {}
        scalars = scalars or {}
        keys = [*buffers, *(k for k, used in optional.items() if used), *scalars]
        lists = {k: [] for k in (*buffers, *optional, *scalars)}
        params, grads, steps = [], [], []
        for p in group["params"]:
            g = p._grad
            if g is None:
                continue
            st = self.state[p]
            if not st:
                st["step"] = scalar_state(0.0)
                for key, value in scalars.items():
                    st[key] = scalar_state(value)
                for key in buffers:
                    st[key] = _full_like(p, fill)
            for key, used in optional.items():
                if used and key not in st:
                    st[key] = _zeros_like(p)
            params.append(p._impl)
            grads.append(g._impl)
            for key in keys:
                lists[key].append(st[key]._impl)
            steps.append(st["step"]._impl)
        return (params, grads, *lists.values(), steps)

    def register_step_pre_hook(self, hook: Callable) -> _RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)``, run before each step."""
        handle = _RemovableHandle(self._step_pre_hooks)
        self._step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> _RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None``, run after each step."""
        handle = _RemovableHandle(self._step_post_hooks)
        self._step_post_hooks[handle.id] = hook
        return handle

    # ------------------------------------------------------------------ (de)serialization
    def state_dict(self) -> dict[str, Any]:
        """The optimizer state: ``{"state": {id: {...}}, "param_groups": [{..., "params": [ids]}]}``.

        Parameters are replaced by integer ids numbered across groups in order; state tensors are
        returned by reference (as in PyTorch): clone them to keep a snapshot."""
        mapping: dict[int, int] = {}
        index = 0
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                if id(p) not in mapping:
                    mapping[id(p)] = index
                    index += 1
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        return {"state": state, "param_groups": groups}

    @staticmethod
    def _cast_state(param: Tensor, key: Any, value: Any) -> Any:
        if isinstance(value, Tensor):
            if key in _SCALAR_STATE_KEYS and value.numel() == 1:
                return scalar_state(value.item())
            if value.is_floating_point():
                out = value.detach().to(dtype=param.dtype, device=param.device, copy=True)
            else:
                out = value.detach().to(device=param.device, copy=True)
            return out.contiguous()
        if key in _SCALAR_STATE_KEYS and isinstance(value, (int, float)) and not isinstance(value, bool):
            return scalar_state(value)
        if isinstance(value, dict):
            return {k: Optimizer._cast_state(param, k, v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast_state(param, key, v) for v in value)
        return value

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Loads optimizer state (from ``state_dict()``); the state is copied, cast to each
        parameter's dtype and device."""
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("optimizer state_dict must be a dict with 'state' and 'param_groups' keys")
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for g, s in zip(groups, saved_groups):
            if len(g["params"]) != len(s["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = {key: self._cast_state(param, key, val) for key, val in v.items()}
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.__setstate__({"state": state, "param_groups": new_groups})

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_step_pre_hooks", OrderedDict())
        self.__dict__.setdefault("_step_post_hooks", OrderedDict())
        self.__dict__.setdefault("_opt_called", False)
        for group in self.param_groups:
            for k, v in self.defaults.items():
                if v is not required:
                    group.setdefault(k, v)

    def __repr__(self) -> str:
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n" + f"Parameter Group {i}"
            for key in sorted(group.keys()):
                if key not in ("params", "param_names"):
                    s += "\n" + f"    {key}: {group[key]}"
        return s + "\n)"


# ---------------------------------------------------------------------------- helpers for subclasses

# How a param group's hyperparameter is passed to a fused kernel (default: float).
_BOOL_ARGS = frozenset({"maximize", "centered", "amsgrad", "decoupled_weight_decay"})


def _kernel_args(group: dict[str, Any], keys: tuple[str, ...]) -> list:
    args: list = []
    for key in keys:
        value = group[key]
        if key == "lr":
            args.append(_as_float(value))
        elif key == "betas":
            beta1, beta2 = value
            args += (_as_float(beta1), _as_float(beta2))
        elif key in _BOOL_ARGS:
            args.append(bool(value))
        else:
            args.append(float(value))
    return args


class _FusedOptimizer(Optimizer):
    """An optimizer whose step is one fused ``_C.<_kernel>`` call per param group.

    Subclasses set ``_kernel`` (the ``_C`` function's name), ``_buffers`` (the state tensors like
    the parameter) and ``_args`` (the group's hyperparameters passed after the state lists, in the
    kernel's order; ``betas`` passes two floats); ``_state_lists`` can be overridden where the state
    is not just ``_buffers`` (see ``Optimizer._collect``).
    """

    _kernel: str = ""
    _buffers: tuple[str, ...] = ()
    _args: tuple[str, ...] = ()
    # True where the kernel's coefficients depend on the step count (bias corrections, lr decay):
    # captured in a CUDA graph, such a step would replay the capture's coefficients forever.
    _step_dependent: bool = True

    def _state_lists(self, group: dict[str, Any]) -> tuple:
        return self._collect(group, self._buffers)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs a single optimization step; ``closure`` re-evaluates the model and returns the loss."""
        loss = self._eval_closure(closure)
        for group in self.param_groups:
            if group.get("capturable"):
                self._capturable_step(group)
                continue
            if self._step_dependent and _capturing(group):
                raise RuntimeError(f"Attempting CUDA graph capture of step() for an instance of {type(self).__name__} "
                                   "but param_groups' capturable is False.")
            lists = self._state_lists(group)
            if lists[0]:
                getattr(_C, self._kernel)(*lists, *_kernel_args(group, self._args))
        return loss

    def _capturable_step(self, group: dict[str, Any]) -> None:
        """``capturable=True``: no host reads or writes of state, so the step can be captured in a
        CUDA graph; ``state["step"]`` lives on the parameter's device and is counted there. Kernels
        whose coefficients don't depend on the step run as they are; step-dependent optimizers
        override this."""
        if self._step_dependent:
            raise NotImplementedError(f"{type(self).__name__}: capturable=True is implemented for Adam, AdamW, "
                                      "Adadelta and RMSprop (SGD captures as it is)")
        lists = self._state_lists(group)
        if not lists[0]:
            return
        scratch = [scalar_state(0.0)._impl for _ in lists[0]]   # the kernel's host step count, unused
        getattr(_C, self._kernel)(*lists[:-1], scratch, *_kernel_args(group, self._args))
        for step in self._device_steps(group):
            step.add_(1)

    def _device_steps(self, group: dict[str, Any]) -> list:
        """Each parameter's ``state["step"]`` (with a gradient), moved to its device if needed."""
        steps = []
        for p in group["params"]:
            if p._grad is None:
                continue
            st = self.state[p]
            if st["step"].device != p.device:
                st["step"] = st["step"].to(p.device)
            steps.append(st["step"])
        return steps


def _capturing(group: dict[str, Any]) -> bool:
    """True while the current CUDA stream is being captured into a graph (asked only for a group
    of CUDA parameters, so CPU training never touches the CUDA runtime)."""
    params = group["params"]
    if not params or not params[0].is_cuda:
        return False
    from tinytorch.cuda.graphs import is_current_stream_capturing
    return is_current_stream_capturing()


def _zeros_like(p: Tensor) -> Tensor:
    return _wrap(_C.full(list(p._impl.shape), 0.0, p._impl.dtype_code, p.device._impl))


def _full_like(p: Tensor, value: float) -> Tensor:
    return _wrap(_C.full(list(p._impl.shape), float(value), p._impl.dtype_code, p.device._impl))

