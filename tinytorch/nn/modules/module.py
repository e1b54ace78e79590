"""``nn.Module``: the base class of every layer and model."""
from __future__ import annotations

import copy
import itertools
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator, Mapping

from tinytorch._tensor.creation import empty_like
from tinytorch._tensor.interop import as_tensor
from tinytorch._core.dtype import bfloat16 as _bfloat16, dtype as dtype_cls, float16, float32, float64
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn.parameter import Buffer, Parameter
from tinytorch._tensor.tensor import Tensor

_IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])
_hook_ids = itertools.count()

# the hooks of every module (register_module_full_backward_hook / _pre_hook), run before each module's own
_global_backward_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_backward_pre_hooks: "OrderedDict[int, Callable]" = OrderedDict()
# set by the first registration of any backward hook: until then a call checks only the forward hooks
_backward_hooks_used = False


class _RemovableHandle:
    """Returned by the register_*_hook methods; ``remove()`` unregisters the hook."""

    def __init__(self, store: dict, key: int) -> None:
        self._store, self._key = store, key
        self.id = key

    def remove(self) -> None:
        self._store.pop(self._key, None)

    def __enter__(self) -> "_RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def _check_hook(hook: Any, nargs: int, method: str, call: str) -> None:
    """A TypeError now, not in the middle of backward or loading, for a hook that is not callable
    or can't take the ``nargs`` positional arguments it will be called with."""
    if not callable(hook):
        raise TypeError(f"{method}: hook must be callable, got {type(hook).__name__}")
    import inspect
    try:
        sig = inspect.signature(hook)
    except (TypeError, ValueError):   # builtins and other callables without a signature
        return
    try:
        sig.bind(*range(nargs))
    except TypeError:
        raise TypeError(f"{method}: hook{sig} can't be called as {call}") from None


def _add_backward_hook(store: "OrderedDict[int, Any]", hook: Any, prepend: bool = False) -> _RemovableHandle:
    global _backward_hooks_used
    _backward_hooks_used = True
    return _add_hook(store, hook, prepend)


def _add_hook(store: "OrderedDict[int, Any]", hook: Any, prepend: bool = False) -> _RemovableHandle:
    key = next(_hook_ids)
    store[key] = hook
    if prepend:
        store.move_to_end(key, last=False)
    return _RemovableHandle(store, key)


def register_module_full_backward_hook(hook: Callable) -> _RemovableHandle:
    """Register a backward hook common to all the modules: ``hook(module, grad_input, grad_output)
    -> tuple(Tensor) or None``, called before each module's own (see
    :meth:`Module.register_full_backward_hook`).

    Returns:
        a handle that can be used to remove the added hook by calling ``handle.remove()``"""
    _check_hook(hook, 3, "register_module_full_backward_hook", "hook(module, grad_input, grad_output)")
    return _add_backward_hook(_global_backward_hooks, hook)


def register_module_full_backward_pre_hook(hook: Callable) -> _RemovableHandle:
    """Register a backward pre-hook common to all the modules: ``hook(module, grad_output) ->
    tuple(Tensor) or None``, called before each module's own (see
    :meth:`Module.register_full_backward_pre_hook`).

    Returns:
        a handle that can be used to remove the added hook by calling ``handle.remove()``"""
    _check_hook(hook, 2, "register_module_full_backward_pre_hook", "hook(module, grad_output)")
    return _add_backward_hook(_global_backward_pre_hooks, hook)


class _WithModule:
    """A load_state_dict pre-hook as stored: called with the module first or not (``with_module``)."""
    __slots__ = ("hook", "with_module")

    def __init__(self, hook: Callable, with_module: bool) -> None:
        self.hook, self.with_module = hook, with_module

    def __call__(self, module: "Module", *args: Any) -> Any:
        return self.hook(module, *args) if self.with_module else self.hook(*args)


class _PublicPostHook:
    """A state_dict post-hook registered with ``register_state_dict_post_hook``: it must return None
    (one from ``_register_state_dict_hook`` may return a new state dict)."""
    __slots__ = ("hook",)

    def __init__(self, hook: Callable) -> None:
        self.hook = hook

    def __call__(self, *args: Any) -> Any:
        return self.hook(*args)


_HOOK_STORES = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
                "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                "_load_state_dict_post_hooks")


def _clone_tensor(t: Tensor) -> Tensor:
    """A deep copy of a plain tensor (tensors refuse pickling, so copy.deepcopy can't do it)."""
    c = t.detach().clone()
    if t.requires_grad:
        c.requires_grad_(True)
    return c


def _post_order(m: "Module") -> Iterator["Module"]:
    """The module tree children first (as load_state_dict's post-hooks run), shared modules once per place."""
    for c in m._modules.values():
        if c is not None:
            yield from _post_order(c)
    yield m


class Module:
    """Base class for all neural network modules. Submodules, Parameters and buffers assigned as
    attributes are registered automatically."""

    _version: int = 1
    training: bool

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        for store in _HOOK_STORES:
            object.__setattr__(self, store, OrderedDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------ calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_pre_hooks or self._forward_hooks or (_backward_hooks_used and (
                self._backward_hooks or self._backward_pre_hooks
                or _global_backward_hooks or _global_backward_pre_hooks))):
            return self.forward(*args, **kwargs)
        for hook in list(self._forward_pre_hooks.values()):
            r = hook(self, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        bw_hook = None
        full = [*_global_backward_hooks.values(), *self._backward_hooks.values()]
        pre = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        if full or pre:
            from tinytorch.nn.modules._backward_hooks import BackwardHook
            bw_hook = BackwardHook(self, full, pre)
            args = bw_hook.setup_input_hook(args)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            r = hook(self, args, out)
            if r is not None:
                out = r
        if bw_hook is not None:
            out = bw_hook.setup_output_hook(out)
        return out

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False) -> _RemovableHandle:
        """hook(module, args) -> None or modified args (a single value is wrapped in a tuple)."""
        return _add_hook(self._forward_pre_hooks, hook, prepend)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False) -> _RemovableHandle:
        """hook(module, args, output) -> None or a replacement output."""
        return _add_hook(self._forward_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> _RemovableHandle:
        """Register a backward hook on the module.

        The hook will be called every time the gradients with respect to a module are computed,
        with the signature ``hook(module, grad_input, grad_output) -> tuple(Tensor) or None``.
        ``grad_input`` and ``grad_output`` are tuples that contain the gradients with respect to
        the inputs and outputs respectively. The hook should not modify its arguments, but it can
        optionally return a new gradient with respect to the input that will be used in place of
        ``grad_input`` in subsequent computations. ``grad_input`` will only correspond to the
        inputs given as positional arguments and all kwarg arguments are ignored. Entries in
        ``grad_input`` and ``grad_output`` will be ``None`` for all non-Tensor arguments.

        Args:
            hook (Callable): The user-defined hook to be registered.
            prepend (bool): If true, the provided ``hook`` will be fired before all existing
                ``backward`` hooks on this module; otherwise after them.

        Returns:
            a handle that can be used to remove the added hook by calling ``handle.remove()``"""
        _check_hook(hook, 3, "register_full_backward_hook", "hook(module, grad_input, grad_output)")
        return _add_backward_hook(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> _RemovableHandle:
        """Register a backward pre-hook on the module.

        The hook will be called every time the gradients for the module are computed, with the
        signature ``hook(module, grad_output) -> tuple[Tensor] or None``. ``grad_output`` is a
        tuple. The hook should not modify its arguments, but it can optionally return a new
        gradient with respect to the output that will be used in place of ``grad_output`` in
        subsequent computations. Entries in ``grad_output`` will be ``None`` for all non-Tensor
        arguments.

        Args:
            hook (Callable): The user-defined hook to be registered.
            prepend (bool): If true, the provided ``hook`` will be fired before all existing
                ``backward_pre`` hooks on this module; otherwise after them.

        Returns:
            a handle that can be used to remove the added hook by calling ``handle.remove()``"""
        _check_hook(hook, 2, "register_full_backward_pre_hook", "hook(module, grad_output)")
        return _add_backward_hook(self._backward_pre_hooks, hook, prepend)

    def register_state_dict_pre_hook(self, hook: Callable) -> _RemovableHandle:
        """Register a pre-hook for the :meth:`state_dict` method, called as
        ``hook(module, prefix, keep_vars) -> None`` before ``state_dict`` is made (on each module,
        with its prefix). The hooks can be used to perform pre-processing before the
        ``state_dict`` call is made.

        Returns:
            a handle that can be used to remove the added hook by calling ``handle.remove()``"""
        _check_hook(hook, 3, "register_state_dict_pre_hook", "hook(module, prefix, keep_vars)")
        return _add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable) -> _RemovableHandle:
        """Register a post-hook for the :meth:`state_dict` method, called as
        ``hook(module, state_dict, prefix, local_metadata) -> None`` after this module and its
        submodules have added their entries. The registered hooks can modify the ``state_dict``
        inplace.

        Returns:
            a handle that can be used to remove the added hook by calling ``handle.remove()``"""
        _check_hook(hook, 4, "register_state_dict_post_hook", "hook(module, state_dict, prefix, local_metadata)")
        return _add_hook(self._state_dict_hooks, _PublicPostHook(hook))

    def _register_state_dict_hook(self, hook: Callable) -> _RemovableHandle:
        """Register a post-hook for :meth:`state_dict`: ``hook(module, state_dict, prefix,
        local_metadata) -> None or state_dict``; a returned dict replaces the root's result (as
        PyTorch's private form; :meth:`register_state_dict_post_hook` is the public one)."""
        _check_hook(hook, 4, "_register_state_dict_hook", "hook(module, state_dict, prefix, local_metadata)")
        return _add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> _RemovableHandle:
        """Register a pre-hook to be run before module's :meth:`load_state_dict` is called.

        It should have the following signature::
            hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs) -> None

        It is called on each module, with its prefix, before its entries are loaded; it may
        change ``state_dict`` in place (rename or convert entries) and append to
        ``missing_keys``, ``unexpected_keys`` and ``error_msgs``.

        Args:
            hook (Callable): Callable hook that will be invoked before loading the state dict.

        Returns:
            a handle that can be used to remove the added hook by calling ``handle.remove()``"""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False) -> _RemovableHandle:
        """As :meth:`register_load_state_dict_pre_hook`; without ``with_module`` the hook is called
        without the module: ``hook(state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)``."""
        args = "state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs"
        name = "register_load_state_dict_pre_hook" if with_module else "_register_load_state_dict_pre_hook"
        _check_hook(hook, 8 if with_module else 7, name, f"hook({'module, ' if with_module else ''}{args})")
        return _add_hook(self._load_state_dict_pre_hooks, _WithModule(hook, with_module))

    def register_load_state_dict_post_hook(self, hook: Callable) -> _RemovableHandle:
        """Register a post-hook to be run after module's :meth:`load_state_dict` is called.

        It should have the following signature::
            hook(module, incompatible_keys) -> None

        The ``module`` argument is the current module that this hook is registered on, and the
        ``incompatible_keys`` argument is a ``NamedTuple`` consisting of attributes
        ``missing_keys`` and ``unexpected_keys``: lists of ``str`` with the missing keys and
        the unexpected keys. The given incompatible_keys can be modified inplace if needed; the
        checks of ``strict=True`` see the changes.

        Returns:
            a handle that can be used to remove the added hook by calling ``handle.remove()``"""
        _check_hook(hook, 2, "register_load_state_dict_post_hook", "hook(module, incompatible_keys)")
        return _add_hook(self._load_state_dict_post_hooks, hook)

    # ------------------------------------------------------------ registration
    def __setattr__(self, name: str, value: Any) -> None:
        # As PyTorch: a name assigned again keeps its place in its store (so children(),
        # parameters() and state_dict() order do not change); it leaves the other stores.
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_name(name, self.__dict__, self._buffers, self._modules)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_name(name, self.__dict__, self._parameters, self._buffers)
            self._modules[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self._modules[name] = None
        elif isinstance(value, Buffer) or (params is not None and name in self._buffers):
            if params is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            persistent = value.persistent if isinstance(value, Buffer) \
                else name not in self._non_persistent_buffers
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def _remove_name(self, name: str, *stores: dict) -> None:
        for d in stores:
            d.pop(name, None)
        if name not in self._buffers:
            self._non_persistent_buffers.discard(name)

    def _check_new_name(self, kind: str, name: str, store: dict) -> None:
        """PyTorch's checks for register_parameter/register_buffer/add_module: a dotted, empty
        or non-str name, or a name taken by a plain attribute or another store, is a KeyError."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
        if not name:
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if name not in store and (hasattr(self, name) or any(
                name in s for s in (self._parameters, self._buffers, self._modules))):
            raise KeyError(f"attribute '{name}' already exists")

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_new_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' (Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_new_name("module", name, self._modules)
        self._modules[name] = module

    register_module = add_module

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """Does nothing (``tinytorch.compile``'s in-place form): tinytorch runs eagerly and has no
        compiler; PyTorch's arguments are accepted and ignored."""

    def get_submodule(self, target: str) -> "Module":
        mod = self
        for part in target.split(".") if target else []:
            if part not in mod._modules:
                raise AttributeError(f"{type(mod).__name__} has no attribute `{part}`")
            mod = mod._modules[part]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    # ------------------------------------------------------------ traversal
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        if memo is None:
            memo = set()
        if self in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, m in self._modules.items():
            if m is not None and m not in seen:
                seen.add(m)
                yield name, m

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, getter, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for k, v in getter(mod):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ------------------------------------------------------------ state
    def _local_state(self) -> Iterator[tuple[str, Tensor]]:
        """This module's own parameters and persistent buffers (no submodules), by name."""
        for name, p in self._parameters.items():
            if p is not None:
                yield name, p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers:
                yield name, b

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """Saves module state to ``destination``: this module's own parameters and persistent
        buffers, not its submodules' (called by :meth:`state_dict` on every module)."""
        for name, t in self._local_state():
            destination[prefix + name] = t if keep_vars else t.detach()

    def state_dict(self, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """A dictionary of the module's parameters and persistent buffers, by dotted name."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]  # per-module versions, as torch's
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination, prefix + name + ".", keep_vars)
        for hook in list(self._state_dict_hooks.values()):
            r = hook(self, destination, prefix, local_metadata)
            if isinstance(hook, _PublicPostHook):
                if r is not None:
                    raise RuntimeError("state_dict post-hook must return None")
            elif r is not None:   # as torch: only the root's result is what state_dict() returns
                destination = r
        return destination

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False) -> Any:
        """Copies parameters and buffers from state_dict; returns (missing_keys, unexpected_keys).
        With strict=True any missing/unexpected key or shape mismatch raises, listing all of them.
        Hooks registered with :meth:`register_load_state_dict_pre_hook` run first (on each module,
        parents before children), those of :meth:`register_load_state_dict_post_hook` after loading
        (children before parents) and before the ``strict`` checks."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        metadata = getattr(state_dict, "_metadata", None)
        # torch tensors, numpy arrays, anything with __dlpack__/__array__ -> tinytorch tensors
        state_dict = OrderedDict((k, as_tensor(v, f"load_state_dict: {k!r}")) for k, v in state_dict.items())
        missing: list = []
        unexpected: list = []
        error_msgs: list = []
        hooked = False
        for name, m in self.named_modules(remove_duplicate=False):
            prefix = name + "." if name else ""
            if hasattr(m, "_lazy_load_hook"):   # lazy modules materialize from the checkpoint's shapes
                m._lazy_load_hook(state_dict, prefix)
            if m._load_state_dict_pre_hooks:
                hooked = True
                local_metadata = dict(metadata.get(name, {})) if isinstance(metadata, Mapping) else {}
                if assign:
                    local_metadata["assign_to_params_buffers"] = assign
                for hook in list(m._load_state_dict_pre_hooks.values()):
                    hook(m, state_dict, prefix, local_metadata, True, missing, unexpected, error_msgs)
        if hooked:   # entries the hooks added or replaced
            for k, v in state_dict.items():
                if not isinstance(v, Tensor):
                    state_dict[k] = as_tensor(v, f"load_state_dict: {k!r}")
        # the module's entries, without running state_dict's hooks
        own = OrderedDict((f"{name}.{k}" if name else k, t) for name, m in self.named_modules(remove_duplicate=False)
                          for k, t in m._local_state())
        missing.extend(k for k in own if k not in state_dict)
        unexpected.extend(k for k in state_dict if k not in own)
        mismatched = []
        for k, v in state_dict.items():
            if k in own and tuple(own[k].shape) != tuple(v.shape):
                mismatched.append(f"size mismatch for {k}: copying a param with shape {tuple(v.shape)} from "
                                  f"checkpoint, the shape in current model is {tuple(own[k].shape)}.")

        def fail_if(errors: list) -> None:
            if strict:
                if missing:
                    errors.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
                if unexpected:
                    errors.insert(0, "Unexpected key(s) in state_dict: " +
                                  ", ".join(f'"{k}"' for k in unexpected) + ".")
            if errors:
                raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" +
                                   "\n\t".join(errors))

        post = [m for m in _post_order(self) if m._load_state_dict_post_hooks]
        if error_msgs or mismatched or not post:
            fail_if(error_msgs + mismatched)   # before anything is copied
        with no_grad():
            for k, v in state_dict.items():
                if k not in own:
                    continue
                if assign:  # take the checkpoint's tensors themselves (keeping requires_grad of the module's)
                    mod_path, _, name = k.rpartition(".")
                    mod = self.get_submodule(mod_path)
                    if name in mod._parameters:
                        mod._parameters[name] = v if isinstance(v, Parameter) else \
                            Parameter(v, own[k].requires_grad)
                    else:
                        mod._buffers[name] = v
                else:
                    own[k].copy_(v)
        if post:   # the hooks may change the key lists in place; strict judges what they leave
            incompatible = _IncompatibleKeys(missing, unexpected)
            for m in post:
                for hook in list(m._load_state_dict_post_hooks.values()):
                    if hook(m, incompatible) is not None:
                        raise RuntimeError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                           "expected to return new values, if incompatible_keys need to be modified,"
                                           " it should be done inplace.")
            fail_if([])
        return _IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------ modes and conversion
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        object.__setattr__(self, "training", mode)
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    p.grad = p.grad.detach()
                    p.grad.zero_()

    # ------------------------------------------------------------ copying
    def __deepcopy__(self, memo: dict) -> "Module":
        """copy.deepcopy: independent parameters and buffers (shared ones stay shared in the copy)."""
        if id(self) in memo:
            return memo[id(self)]
        cls = type(self)
        new = cls.__new__(cls)
        memo[id(self)] = new
        for store in ("_parameters", "_buffers"):
            for t in self.__dict__.get(store, {}).values():
                if t is not None and id(t) not in memo:
                    memo[id(t)] = copy.deepcopy(t, memo) if isinstance(t, Parameter) else _clone_tensor(t)
        for k, v in self.__dict__.items():
            if isinstance(v, Tensor) and not isinstance(v, Parameter) and id(v) not in memo:
                memo[id(v)] = _clone_tensor(v)
            object.__setattr__(new, k, copy.deepcopy(v, memo))
        return new

    def __getstate__(self) -> dict:
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for store in _HOOK_STORES:   # a module pickled before this store existed
            if store not in self.__dict__:
                object.__setattr__(self, store, OrderedDict())

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """Applies fn to every parameter and buffer (of this module only unless ``recurse``), in place
        (parameters keep their identity)."""
        for m in (self.modules() if recurse else [self]):
            for k, p in m._parameters.items():
                if p is not None:
                    new = fn(p.detach())
                    p._impl = new._impl
                    if p.grad is not None:
                        p.grad = fn(p.grad)
            for k, b in m._buffers.items():
                if b is not None:
                    m._buffers[k] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """Moves and/or casts parameters and buffers: ``to(device)``, ``to(dtype)``, ``to(tensor)``.
        Only floating-point tensors change dtype."""
        dtype = kwargs.get("dtype")
        device = kwargs.get("device")
        for a in args:
            if isinstance(a, dtype_cls):
                dtype = a
            elif isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            else:
                device = a
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")

        def convert(t: Tensor) -> Tensor:
            if device is not None:
                t = t.to(device)
            if dtype is not None and t.dtype.is_floating_point:
                t = t.to(dtype)
            return t
        return self._apply(convert)

    def to_empty(self, *, device: Any, recurse: bool = True) -> "Module":
        """Moves the parameters and buffers to the specified device without copying storage, as
        ``torch.nn.Module.to_empty``: their values are uninitialised afterwards (call
        ``reset_parameters()`` or an ``nn.init`` function).

        Args:
            device (device): the desired device of the parameters and buffers in this module.
            recurse (bool): whether parameters and buffers of submodules should be recursively moved
                to the specified device. Default: ``True``"""
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cuda(self, device: Any = None) -> "Module":
        return self.to("cuda" if device is None else device)

    def cpu(self) -> "Module":
        return self.to("cpu")

    def float(self) -> "Module":
        return self.to(float32)

    def double(self) -> "Module":
        return self.to(float64)

    def half(self) -> "Module":
        return self.to(float16)

    def bfloat16(self) -> "Module":
        return self.to(_bfloat16)

    # ------------------------------------------------------------ repr
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, m in self._modules.items():
            mod = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {mod}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self) -> list:
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers) | set(self._modules))
