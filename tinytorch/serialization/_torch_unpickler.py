"""A restricted unpickler for PyTorch checkpoints: rebuilds tensors, never runs the file's code.

PyTorch pickles a checkpoint's structure (``data.pkl`` in its zip, or the body of the legacy
format) with references to functions that rebuild tensors from storages. Loading such a pickle
with ``pickle.load`` would import and call whatever the file names, so this module follows the
allow-list of ``torch.load(weights_only=True)`` instead, with its own code:

* ``find_class`` resolves only the allowed names (``_allowed_globals``: tensor rebuild functions,
  storage types, dtypes, ``torch.Size``/``torch.device``, ``collections.OrderedDict``/``Counter``,
  ``set``/``frozenset``/``complex``/``bytearray``, ``_codecs.encode`` for bytes) to tinytorch's
  own stand-ins (``_torch_pickle_globals.py``); nothing is ever imported. Any other name raises
  ``UnpicklingError`` naming it.
* The opcodes that call or mutate objects are checked before anything runs: ``REDUCE`` calls
  only the stand-ins above, ``NEWOBJ``/``BUILD`` apply only to ``OrderedDict``/``Counter``,
  ``APPEND``/``SETITEM``/``ADDITEMS`` only to lists/dicts/sets, and the protocol-0/1 object
  opcodes (``INST``, ``OBJ``) and the copyreg extension codes (``EXT1/2/4``) are refused.
* ``persistent_load`` accepts only ``("storage", <storage type>, key, location, numel)`` ids;
  the container (zip or legacy file, ``_torch_zip.py``) supplies each storage's bytes.

It subclasses the pure-Python ``pickle._Unpickler`` (the reference implementation of
``pickle.Unpickler``) because only that one lets us check each opcode; the C unpickler calls
``__setstate__``/``append``/``__setitem__`` on whatever is on its stack. Its loop is iterative,
so deep nesting cannot overflow the C stack.
"""
from __future__ import annotations

import collections
import ctypes
import pickle
import struct
from typing import Any, Callable, Dict, Optional

import numpy as np

from tinytorch._tensor.creation import empty
from tinytorch._core.dtype import DTYPES, bool_, device as _device
from tinytorch.serialization._safe_globals import user_allowed_globals
from tinytorch._ops import shape as S
from tinytorch.serialization._torch_pickle_globals import (
    _BY_NAME, _PARAMETER, _STORAGE_DTYPES, _TENSOR, _TORCH_DTYPE_NAMES, _UNSUPPORTED, LoadedStorage, StorageType,
    TorchDtype, _Marker, _bytearray, _codecs_encode, _int_tuple, _is_int, _size, _torch_device,
)
from tinytorch._tensor.tensor import Tensor

UnpicklingError = pickle.UnpicklingError
_INT64_MAX = 2 ** 63 - 1

_parameter_cls: Optional[type] = None  # nn.Parameter, registered by tinytorch/nn/parameter.py


def normalize_bool_bytes(flat: Tensor) -> None:
    """Each nonzero byte of a bool storage read from a file becomes 1 (True), in place: the kernels
    read a bool byte as 0 or 1, so a byte of 2 would count 2 in a sum and differ from True."""
    impl = flat._impl
    if flat.dtype is bool_ and impl.numel:
        raw = np.ctypeslib.as_array((ctypes.c_uint8 * impl.numel).from_address(impl.data_ptr))
        np.minimum(raw, 1, out=raw)


def _set_parameter_class(cls: type) -> None:
    global _parameter_cls
    _parameter_cls = cls


def _copy_bytes(src: LoadedStorage, dst: LoadedStorage) -> None:
    """``src``'s bytes into ``dst`` (a storage read as another dtype), bools normalised."""
    nbytes = dst.numel * dst.dtype.itemsize
    if nbytes:
        ctypes.memmove(dst.flat._impl.data_ptr, src.flat._impl.data_ptr, nbytes)
    normalize_bool_bytes(dst.flat)


def _set_state(obj: Any, state: Any, what: str) -> None:
    """Python attributes a tensor was pickled with (``_rebuild_*_with_state``): plain data only, and
    never a name the class defines (which would run a property setter)."""
    if state is None or state == {}:
        return
    if isinstance(state, tuple) and len(state) == 2:  # (dict state, slot state)
        for part in state:
            _set_state(obj, part, what)
        return
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise UnpicklingError(f"tinytorch.load: {what}: tensor state must be a dict of attributes, got "
                              f"{type(state).__name__}")
    for k, v in state.items():
        if hasattr(type(obj), k) or k.startswith("__"):
            raise UnpicklingError(f"tinytorch.load: {what}: refusing to set attribute {k!r} of {type(obj).__name__} "
                                  "from the file")
        obj.__dict__[k] = v


class RestrictedUnpickler(pickle._Unpickler):  # type: ignore[name-defined,misc]
    """Unpickles a PyTorch checkpoint's structure, rebuilding tensors as tinytorch tensors.

    ``storage_loader(key, dtype, numel, location) -> flat CPU tensor`` supplies each storage's
    elements; ``what`` names the file in errors."""

    def __init__(self, file, storage_loader: Callable[[str, Any, int, str], Tensor], what: str) -> None:
        super().__init__(file, encoding="utf-8")
        self._storage_loader = storage_loader
        self._what = what
        self.storages: Dict[Any, LoadedStorage] = {}
        self.tensor_storage: Dict[int, tuple] = {}  # id(tensor) -> (tensor, LoadedStorage), for placement
        self._allowed = self._allowed_globals()
        self._callables = {id(v) for v in self._allowed.values() if callable(v) and not isinstance(v, _Marker)}
        # the user's allow-list (serialization.add_safe_globals / safe_globals), as it is when loading starts
        self._user = user_allowed_globals()
        self._user_ids = {id(v) for v in self._user.values()}

    def _fail(self, msg: str):
        raise UnpicklingError(f"tinytorch.load: {self._what}: {msg}")

    # ------------------------------------------------------------------ globals
    def _allowed_globals(self) -> Dict[str, Any]:
        g: Dict[str, Any] = {
            "collections.OrderedDict": collections.OrderedDict,
            "collections.Counter": collections.Counter,
            "builtins.set": set, "builtins.frozenset": frozenset, "builtins.complex": complex,
            "builtins.bytearray": _bytearray,
            "_codecs.encode": _codecs_encode,
            "torch._utils._rebuild_tensor": self._rebuild_tensor,
            "torch._utils._rebuild_tensor_v2": self._rebuild_tensor_v2,
            "torch._utils._rebuild_tensor_v3": self._rebuild_tensor_v3,
            "torch._utils._rebuild_parameter": self._rebuild_parameter,
            "torch._utils._rebuild_parameter_with_state": self._rebuild_parameter_with_state,
            "torch._utils._rebuild_device_tensor_from_cpu_tensor": self._rebuild_device_tensor_from_cpu_tensor,
            "torch._tensor._rebuild_from_type_v2": self._rebuild_from_type_v2,
            "torch.Size": _size, "torch.device": _torch_device,
            "torch.Tensor": _TENSOR, "torch.nn.parameter.Parameter": _PARAMETER,
        }
        for name, dt in _STORAGE_DTYPES.items():
            g[f"torch.{name}"] = StorageType(name, dt)
            g[f"torch.cuda.{name}"] = StorageType(name, dt)  # very old files name the CUDA classes
        for mod in ("torch", "torch.storage"):
            g[f"{mod}.UntypedStorage"] = StorageType("UntypedStorage", "uint8")
            g[f"{mod}._UntypedStorage"] = StorageType("UntypedStorage", "uint8")
        for name in _TORCH_DTYPE_NAMES:  # tinytorch's dtype where it has one, else a marker refused when used
            g[f"torch.{name}"] = _BY_NAME.get(name) or TorchDtype(name)
        return g

    def find_class(self, module: str, name: str) -> Any:
        module = {"__builtin__": "builtins", "copy_reg": "copyreg"}.get(module, module)
        full = f"{module}.{name}"
        if full in self._allowed:
            return self._allowed[full]
        if full in self._user:
            return self._user[full]
        if full in _UNSUPPORTED:
            self._fail(f"the file holds {_UNSUPPORTED[full]} (GLOBAL {full}), which tinytorch does not support")
        self._fail(f"Unsupported global: GLOBAL {full} was not an allowed global by default (it is not allowed: "
                   "tinytorch reads only tensors, storages, dtypes, OrderedDicts and plain containers/scalars, the "
                   "allow-list of torch.load(weights_only=True), and never imports or runs what a file names). "
                   f"Please use `tinytorch.serialization.add_safe_globals([{name}])` or the "
                   f"`tinytorch.serialization.safe_globals([{name}])` context manager to allowlist this global "
                   "if you trust this class/function.")

    # ------------------------------------------------------------------ storages
    def persistent_load(self, pid: Any) -> LoadedStorage:
        if not isinstance(pid, tuple) or len(pid) < 5:
            self._fail(f"unsupported persistent id {pid!r}: only storages ('storage', type, key, location, "
                       "numel) are allowed")
        kind = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
        if kind != "storage":
            self._fail(f"unsupported persistent id of kind {kind!r}: only storages are allowed")
        stype, key, location, numel = pid[1:5]
        if isinstance(location, bytes):
            location = location.decode("ascii")
        if not isinstance(stype, StorageType):
            self._fail(f"storage type must be a torch storage class, got {stype!r}")
        if not isinstance(key, (str, int)) or not isinstance(location, str) or not _is_int(numel) or numel < 0:
            self._fail(f"malformed storage id {pid!r}")
        key = str(key)
        dt = TorchDtype(stype.dtype_name).resolve(f"{self._what}: storage {key!r}")
        st = self.storages.get(key)
        if st is None:
            flat = self._storage_loader(key, dt, numel, location)
            st = LoadedStorage(key, dt, numel, location, flat)
            self.storages[key] = st
        elif st.dtype is not dt or st.numel != numel:
            self._fail(f"storage {key!r} is referenced as {numel} x {dt.name} and as {st.numel} x {st.dtype.name}")
        if len(pid) > 5 and pid[5] is not None:  # legacy format: a view (view_key, offset, size) of the root storage
            view = pid[5]
            if not (isinstance(view, tuple) and len(view) == 3 and _is_int(view[1]) and _is_int(view[2])):
                self._fail(f"malformed storage view metadata {view!r}")
            vkey, off, size = str(view[0]), view[1], view[2]
            if off < 0 or size < 0 or off + size > st.numel:
                self._fail(f"storage view [{off}, {off + size}) runs outside storage {key!r} of {st.numel} elements")
            if vkey not in self.storages:
                flat = S.as_strided(st.flat, (size,), (1,), off)
                self.storages[vkey] = LoadedStorage(vkey, dt, size, location, flat)
            return self.storages[vkey]
        return st

    # ------------------------------------------------------------------ tensor rebuild functions
    def _view(self, storage: Any, offset: Any, size: Any, stride: Any, dtype=None) -> Tensor:
        what = "tensor"
        if not isinstance(storage, LoadedStorage):
            self._fail(f"{what}: expected a storage, got {type(storage).__name__}")
        size, stride = _int_tuple(size, "tensor size"), _int_tuple(stride, "tensor stride")
        if len(size) != len(stride) or not _is_int(offset) or offset < 0:
            self._fail(f"tensor geometry size={size} stride={stride} offset={offset!r} is malformed")
        if any(s < 0 for s in size) or any(s < 0 for s in stride):
            self._fail(f"tensor geometry size={size} stride={stride}: negative sizes/strides are not allowed")
        if any(v > _INT64_MAX for v in size + stride + (offset,)):
            self._fail(f"tensor geometry size={size} stride={stride} offset={offset}: each must fit in int64")
        if dtype is not None and dtype is not storage.dtype:
            # _rebuild_tensor_v3 on an untyped (byte) storage: reinterpret its bytes (a copy per dtype)
            storage = self._retyped(storage, dtype)
        numel = 1
        for s in size:
            numel *= s
        if numel > _INT64_MAX:     # a stride-0 view may be huge, but its element count is an int64
            self._fail(f"tensor of size {size} has {numel} elements, more than int64 can count")
        if numel and offset + sum((n - 1) * st for n, st in zip(size, stride)) >= storage.numel:
            self._fail(f"tensor of size {size}, stride {stride}, offset {offset} reads past the end of storage "
                       f"{storage.key!r} ({storage.numel} elements)")
        t = S.as_strided(storage.flat, size, stride, offset if numel else 0)
        self.tensor_storage[id(t)] = (t, storage)
        return t

    def _retyped(self, storage: LoadedStorage, dtype) -> LoadedStorage:
        key = (storage.key, dtype.name)
        if key not in self.storages:
            nbytes = storage.numel * storage.dtype.itemsize
            if nbytes % dtype.itemsize:
                self._fail(f"storage {storage.key!r} of {nbytes} bytes is not a whole number of {dtype.name} elements")
            flat = empty(nbytes // dtype.itemsize, dtype=dtype)
            self.storages[key] = LoadedStorage(storage.key, dtype, nbytes // dtype.itemsize, storage.location, flat)
            _copy_bytes(storage, self.storages[key])
        return self.storages[key]

    def refill_retyped(self) -> None:
        """Copies each reinterpreted storage's bytes again from the storage it retypes: in the legacy
        format the storages' data follows the pickle, so at unpickling time they were still empty."""
        for key, st in self.storages.items():
            if isinstance(key, tuple):
                _copy_bytes(self.storages[key[0]], st)

    def _finish(self, t: Tensor, requires_grad: Any, backward_hooks: Any, metadata: Any = None) -> Tensor:
        if not isinstance(requires_grad, bool):
            self._fail(f"requires_grad must be a bool, got {requires_grad!r}")
        if backward_hooks is not None and not (isinstance(backward_hooks, dict) and not backward_hooks):
            self._fail("tensors with backward hooks can't be loaded (hooks are code)")
        if metadata:
            self._fail(f"tensor metadata {metadata!r} (conjugate/negative bits) is not supported")
        if requires_grad:
            if not t.dtype.is_floating_point:
                self._fail(f"a {t.dtype.name} tensor can't require grad")
            t.requires_grad_(True)
        return t

    def _rebuild_tensor(self, storage, storage_offset, size, stride):
        return self._view(storage, storage_offset, size, stride)

    def _rebuild_tensor_v2(self, storage, storage_offset, size, stride, requires_grad, backward_hooks,
                           metadata=None):
        return self._finish(self._view(storage, storage_offset, size, stride), requires_grad, backward_hooks, metadata)

    def _rebuild_tensor_v3(self, storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype,
                           metadata=None):
        if isinstance(dtype, TorchDtype):
            dtype = dtype.resolve(self._what)
        if dtype not in DTYPES:
            self._fail(f"_rebuild_tensor_v3: dtype must be a torch dtype, got {dtype!r}")
        dt = dtype
        return self._finish(self._view(storage, storage_offset, size, stride, dt), requires_grad, backward_hooks,
                            metadata)

    def _as_parameter(self, data: Any, requires_grad: Any) -> Tensor:
        if not isinstance(data, Tensor) or not isinstance(requires_grad, bool):
            self._fail("_rebuild_parameter expects (tensor, bool, hooks)")
        if _parameter_cls is None:  # tinytorch.nn not imported: a tensor that requires grad
            return data.requires_grad_(requires_grad) if requires_grad else data
        p = _parameter_cls(data, requires_grad)
        entry = self.tensor_storage.get(id(data))
        if entry is not None:
            self.tensor_storage[id(p)] = (p, entry[1])
        return p

    def _rebuild_parameter(self, data, requires_grad, backward_hooks):
        if backward_hooks is not None and not (isinstance(backward_hooks, dict) and not backward_hooks):
            self._fail("parameters with backward hooks can't be loaded (hooks are code)")
        return self._as_parameter(data, requires_grad)

    def _rebuild_parameter_with_state(self, data, requires_grad, backward_hooks, state):
        p = self._rebuild_parameter(data, requires_grad, backward_hooks)
        _set_state(p, state, self._what)
        return p

    def _rebuild_device_tensor_from_cpu_tensor(self, data, dtype, device, requires_grad):
        if not isinstance(data, Tensor) or not isinstance(device, (str, _device)):
            self._fail("_rebuild_device_tensor_from_cpu_tensor expects (tensor, dtype, device, bool)")
        entry = self.tensor_storage.get(id(data))
        if entry is not None:
            entry[1].location = str(device)
        return self._finish(data, requires_grad, None)

    def _rebuild_from_type_v2(self, func, new_type, args, state):
        rebuilds = (self._rebuild_tensor, self._rebuild_tensor_v2, self._rebuild_tensor_v3, self._rebuild_parameter,
                    self._rebuild_parameter_with_state, self._rebuild_device_tensor_from_cpu_tensor)
        if func not in rebuilds:
            self._fail(f"_rebuild_from_type_v2 with function {func!r} is not allowed (tensor rebuild functions only)")
        if new_type is not _TENSOR and new_type is not _PARAMETER:
            self._fail(f"tensor subclass {new_type!r} is not allowed")
        if not isinstance(args, tuple):
            self._fail("_rebuild_from_type_v2: args must be a tuple")
        t = func(*args)
        if new_type is _PARAMETER and _parameter_cls is not None and not isinstance(t, _parameter_cls):
            t = self._as_parameter(t, t.requires_grad)
        _set_state(t, state, self._what)
        return t

    # ------------------------------------------------------------------ checked opcodes
    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def _load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if id(func) not in self._callables and id(func) not in self._user_ids:
            self._fail(f"REDUCE would call {func!r}, which is not an allowed function (allow a trusted one with "
                       "tinytorch.serialization.add_safe_globals)")
        if not isinstance(args, tuple):
            self._fail(f"REDUCE arguments must be a tuple, got {type(args).__name__}")
        self.stack[-1] = func(*args)

    def _load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        user_cls = id(cls) in self._user_ids and isinstance(cls, type)
        if (cls not in (collections.OrderedDict, collections.Counter) and not user_cls) or not isinstance(args, tuple):
            self._fail(f"NEWOBJ may create only OrderedDict/Counter or classes allowlisted with "
                       f"tinytorch.serialization.add_safe_globals, not {cls!r}")
        self.append(cls.__new__(cls, *args))

    def _load_newobj_ex(self):
        kwargs = self.stack.pop()
        self.stack.pop()
        cls = self.stack.pop()
        self._fail(f"NEWOBJ_EX of {cls!r} is not allowed" + (" (with keyword arguments)" if kwargs else ""))

    def _load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if id(type(inst)) in self._user_ids:  # a class the user trusts: pickle's own BUILD
            return self._build_user_object(inst, state)
        if type(inst) not in (collections.OrderedDict, collections.Counter):
            self._fail(f"BUILD (setting object state) is allowed only on OrderedDict, not {type(inst).__name__}")
        if not isinstance(state, dict):
            self._fail(f"BUILD state of an OrderedDict must be a dict of attributes, got {type(state).__name__}")
        _set_state(inst, state, self._what)  # e.g. a state dict's _metadata

    def _build_user_object(self, inst: Any, state: Any) -> None:
        setstate = getattr(inst, "__setstate__", None)
        if setstate is not None:
            setstate(state)
            return
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slotstate = state
        if state:
            inst.__dict__.update(state)
        if slotstate:
            for k, v in slotstate.items():
                setattr(inst, k, v)

    def _load_append(self):
        value = self.stack.pop()
        if type(self.stack[-1]) is not list:
            self._fail(f"APPEND to a {type(self.stack[-1]).__name__} is not allowed (lists only)")
        self.stack[-1].append(value)

    def _load_appends(self):
        items = self.pop_mark()
        if type(self.stack[-1]) is not list:
            self._fail(f"APPENDS to a {type(self.stack[-1]).__name__} is not allowed (lists only)")
        self.stack[-1].extend(items)

    def _check_dict(self, op: str):
        if type(self.stack[-1]) not in (dict, collections.OrderedDict, collections.Counter):
            self._fail(f"{op} on a {type(self.stack[-1]).__name__} is not allowed (dicts only)")

    def _load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        self._check_dict("SETITEM")
        self.stack[-1][key] = value

    def _load_setitems(self):
        items = self.pop_mark()
        self._check_dict("SETITEMS")
        d = self.stack[-1]
        for i in range(0, len(items) - 1, 2):
            d[items[i]] = items[i + 1]

    def _load_bytearray8(self):
        # pickle's own BYTEARRAY8 allocates the length it reads before reading: a flipped byte is a
        # many-GiB bytearray. Read first; a length past the data is a truncated pickle.
        (n,) = struct.unpack("<Q", self.read(8))
        data = self.read(n) if n <= _INT64_MAX else b""
        if len(data) != n:
            self._fail(f"BYTEARRAY8 claims {n} bytes, the pickle has {len(data)} left (truncated or corrupt)")
        self.append(bytearray(data))

    def _load_additems(self):
        items = self.pop_mark()
        if type(self.stack[-1]) is not set:
            self._fail(f"ADDITEMS to a {type(self.stack[-1]).__name__} is not allowed (sets only)")
        self.stack[-1].update(items)


def _install_checked_opcodes() -> None:
    d = RestrictedUnpickler.dispatch
    d[pickle.REDUCE[0]] = RestrictedUnpickler._load_reduce
    d[pickle.NEWOBJ[0]] = RestrictedUnpickler._load_newobj
    d[pickle.NEWOBJ_EX[0]] = RestrictedUnpickler._load_newobj_ex
    d[pickle.BUILD[0]] = RestrictedUnpickler._load_build
    d[pickle.APPEND[0]] = RestrictedUnpickler._load_append
    d[pickle.APPENDS[0]] = RestrictedUnpickler._load_appends
    d[pickle.SETITEM[0]] = RestrictedUnpickler._load_setitem
    d[pickle.SETITEMS[0]] = RestrictedUnpickler._load_setitems
    d[pickle.ADDITEMS[0]] = RestrictedUnpickler._load_additems
    d[pickle.BYTEARRAY8[0]] = RestrictedUnpickler._load_bytearray8
    for op in ("INST", "OBJ", "EXT1", "EXT2", "EXT4"):
        d[getattr(pickle, op)[0]] = _refusing(op)


def _refusing(opname: str):
    def load(self):
        self._fail(f"pickle opcode {opname} (creates arbitrary objects) is not allowed")
    return load


_install_checked_opcodes()
