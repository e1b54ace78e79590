"""``tinytorch.Tensor``: the user-facing tensor class.

Its fields and autograd surface live in the Cython base (``_core/tensor_base.pyx``), ``backward()`` here
(the engine sits above the base); the op methods come from the op schema
(``tinytorch/_generated/methods.py``), which the package root installs on it."""
from __future__ import annotations

import numpy as np

from tinytorch import _C

from tinytorch._tensor import creation as _creation

from tinytorch._tensor import interop as _interop

from tinytorch._tensor import torch_function as _torch_function
from tinytorch._core.cuda_loader import cuda_backend
from tinytorch._core.dtype import DTYPES, bfloat16, bool_, device as _device, dtype as _dtype_cls, float16, float32, \
    float64, int8, int16, int32, int64, strided, to_dtype, uint8
from tinytorch._core.engine import backward as _engine_backward
from tinytorch._tensor.doc_notes import factory_notes, fill_doc
from tinytorch._tensor.formatting import tensor_repr
from tinytorch._ops import shape as S
from tinytorch._core.tensor_base import TensorBase, _set_tensor_class, _wrap


_DTYPE_NAMES = frozenset(d.name for d in DTYPES)   # dtype names .to() takes positionally


def _cast_method(name: str, dt):
    """``Tensor.<name>()``: ``self.to(dt)``."""
    def cast(self) -> "Tensor":
        return self.to(dt)
    cast.__name__, cast.__qualname__ = name, f"Tensor.{name}"
    cast.__doc__ = f"``self.{name}()`` is equivalent to ``self.to(tinytorch.{dt.name})``."
    return cast


class Tensor(TensorBase):
    """A multi-dimensional array with autograd, as ``torch.Tensor``."""

    __module__ = "tinytorch"   # as torch.Tensor's: users see tinytorch.Tensor, not the file defining it
    __array_priority__ = 1000  # numpy defers to our reflected operators

    # ------------------------------------------------------------ subclasses (__torch_function__)
    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        _torch_function.install(cls, Tensor)  # op methods of the subclass dispatch; Tensor's own never do

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """Runs ``func`` and returns its tensors as ``cls`` (PyTorch's default); override to intercept ops."""
        return _torch_function.default_torch_function(cls, func, types, args, kwargs)

    def as_subclass(self, cls) -> "Tensor":
        """Makes a ``cls`` instance with the same data pointer as ``self``, attached to the same autograd graph.

        Args:
            cls (type): the Tensor subclass to view the tensor as."""
        return _torch_function.as_subclass(self, cls, Tensor, S.as_strided)

    def __init__(self, *args, **kwargs) -> None:
        """``Tensor(data)`` copies data as float32; ``Tensor(d0, d1, ...)`` is uninitialized (legacy
        constructor, as torch.Tensor); prefer tinytorch.tensor / tinytorch.empty."""
        if kwargs:
            raise TypeError(f"Tensor() got unexpected keyword arguments {list(kwargs)}")
        if len(args) == 1 and not isinstance(args[0], int):
            t = _creation.tensor(args[0], dtype=float32)
        else:
            t = _creation.empty(*args)
        self._impl = t._impl

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Computes the gradient of current tensor w.r.t. graph leaves.

        Args:
            gradient (Tensor, optional): the gradient of the function being differentiated w.r.t. ``self``.
                This argument can be omitted if ``self`` is a scalar. Default: ``None``
            retain_graph (bool, optional): if ``False``, the graph used to compute the grads will be freed;
                if ``None``, the value is inferred from ``create_graph``. Default: ``None``
            create_graph (bool, optional): if ``True``, graph of the derivative will be constructed,
                allowing to compute higher order derivative products. Default: ``False``
            inputs (sequence of Tensor, optional): inputs w.r.t. which the gradient will be accumulated into
                ``.grad``. All other tensors will be ignored. Default: ``None``"""
        _engine_backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph, inputs)

    # ------------------------------------------------------------ conversions
    def numpy(self, force: bool = False) -> np.ndarray:
        """Returns the tensor as a NumPy ndarray sharing its memory (CPU tensors).

        Args:
            force (bool): if ``True``, the ndarray may be a copy of the tensor instead of always sharing
                memory. Default: ``False``"""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if force and not self.is_cpu:
            return self.cpu().numpy()
        return self._impl.numpy()

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        return _interop.to_array(self, dtype, copy)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _interop.array_ufunc(self, ufunc, method, *inputs, **kwargs)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """Creates a DLPack capsule of the current tensor to be exported to other libraries."""
        return _interop.to_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self):
        return _interop.dlpack_device(self)

    @property
    def __cuda_array_interface__(self) -> dict:
        """Array view description for CUDA tensors (CUDA Array Interface version 3)."""
        return _interop.cuda_array_interface(self)

    def tolist(self):
        """Returns the tensor as a (nested) list. For scalars, a standard Python number is returned, just like
        with :meth:`~Tensor.item`."""
        if self.dtype._np is None:   # bfloat16, float8: no numpy type to go through
            return self.detach().float().cpu()._impl.numpy().tolist()
        return self.detach().cpu()._impl.numpy().tolist()

    def __repr__(self) -> str:
        return tensor_repr(self)

    def __format__(self, format_spec: str) -> str:
        # As PyTorch: a 0-d Tensor formats as its Python scalar (f"{loss:.4f}"); anything else
        # takes only the empty spec (its repr), a Parameter or other subclass included.
        if self.dim() == 0 and type(self) is Tensor:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __reduce_ex__(self, protocol):
        return _interop.reduce_tensor(self)

    def __copy__(self) -> "Tensor":
        return _interop.copy_tensor(self)

    def __deepcopy__(self, memo) -> "Tensor":
        """A copy of a graph leaf with its own storage, requires_grad and .grad (what
        copy.deepcopy(model.state_dict()) needs), as PyTorch's."""
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               f"protocol; this one was made by {self.grad_fn.name()} (deepcopy a .detach()ed one)")
        if id(self) in memo:
            return memo[id(self)]
        out = self.detach().clone()
        out.requires_grad_(self.requires_grad)
        if self.grad is not None:
            out.grad = self.grad.detach().clone()
        memo[id(self)] = out
        return out

    @property
    def data(self) -> "Tensor":
        return self.detach()

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._impl = value._impl

    @property
    def T(self) -> "Tensor":
        return self.permute(*reversed(range(self.dim())))

    @property
    def mT(self) -> "Tensor":
        return self.transpose(-2, -1)

    def to(self, *args, **kwargs) -> "Tensor":
        """Performs Tensor dtype and/or device conversion: ``to(dtype)``, ``to(device)``,
        ``to(device, dtype)``, ``to(other)``; ``non_blocking`` and ``copy`` as PyTorch.

        Args:
            args (dtype, device or Tensor...): ``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or
                ``to(other)`` (the dtype and device of the tensor :attr:`other`)."""
        dtype = kwargs.pop("dtype", None)
        device = kwargs.pop("device", None)
        non_blocking = kwargs.pop("non_blocking", False)
        copy = kwargs.pop("copy", False)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {list(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (_dtype_cls, type)) or (isinstance(a, str) and a in _DTYPE_NAMES):
                dtype = a
            elif isinstance(a, (str, _device, int)):
                device = a
            else:
                raise TypeError(f"to() received an invalid argument {a!r}")
        out = self
        if device is not None:
            dev = _device(device)
            if str(dev) != self._impl.device_str or copy:
                out = S.to_device(out, dev._impl, non_blocking, copy)
                copy = False
        if dtype is not None:
            code = dtype if isinstance(dtype, int) else to_dtype(dtype).code
            out = S.cast(out, code, copy)
        elif copy and out is self:
            out = S.clone(out)
        return out

    def type_as(self, other: "Tensor") -> "Tensor":
        """Returns this tensor cast to the type of the given tensor.

        Args:
            other (Tensor): the tensor which has the desired type."""
        return self.to(other.dtype)

    float, double, half, bfloat16 = (_cast_method(n, d) for n, d in
                                     (("float", float32), ("double", float64), ("half", float16), ("bfloat16", bfloat16)))
    long, int, short, char, bool, byte = (_cast_method(n, d) for n, d in (
        ("long", int64), ("int", int32), ("short", int16), ("char", int8), ("bool", bool_), ("byte", uint8)))

    def cpu(self) -> "Tensor":
        """Returns a copy of this object in CPU memory. If this object is already in CPU memory, then no copy
        is performed and the original object is returned."""
        return self.to("cpu")

    def cuda(self, device=None, non_blocking: bool = False) -> "Tensor":
        """Returns a copy of this object in CUDA memory. If this object is already in CUDA memory and on the
        correct device, then no copy is performed and the original object is returned.

        Args:
            device (device, optional): the destination GPU device. Default: ``None``
            non_blocking (bool): if ``True`` and the source is in pinned memory, the copy will be
                asynchronous with respect to the host. Default: ``False``"""
        return self.to("cuda" if device is None else _device(device), non_blocking=non_blocking)

    def pin_memory(self, device=None) -> "Tensor":
        """A copy of this CPU tensor in page-locked memory (fast, asynchronous GPU copies).

        Args:
            device (str or torch.device, optional): deprecated in PyTorch and ignored: the memory is
                pinned for the CUDA devices."""
        backend = cuda_backend()
        if backend is None:
            raise RuntimeError("pin_memory: tinytorch was built without the CUDA backend")
        return _wrap(backend.pin_memory(self._impl))

    def is_pinned(self, device=None) -> bool:
        """Returns true if this tensor resides in pinned memory.

        Args:
            device (str or torch.device, optional): deprecated in PyTorch and ignored."""
        backend = cuda_backend()
        return bool(backend is not None and backend.is_pinned(self._impl))

    def record_stream(self, s) -> None:
        """Marks this tensor's memory as used by stream ``s`` (the allocator waits for it before reuse).

        Args:
            s (Stream): the stream the tensor's memory is used on."""
        cuda_backend().record_stream(self._impl, s._impl)

    # ------------------------------------------------------------ attributes and queries
    def is_floating_point(self) -> bool:
        """Returns True if the data type of :attr:`self` is a floating point data type.

        Returns True if the data type of ``self`` is a floating point data type."""
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        """Returns True if the data type of ``self`` is a complex data type."""
        return self.dtype.is_complex

    def is_signed(self) -> bool:
        """Returns True if the data type of ``self`` is a signed data type."""
        return self.dtype.is_signed

    @property
    def real(self) -> "Tensor":
        """The real values of a complex tensor (a view: writing to it writes the tensor); a real
        tensor itself."""
        return S.view_as_real(self).select(-1, 0) if self.dtype.is_complex else self

    @real.setter
    def real(self, value) -> None:
        self.real.copy_(value) if isinstance(value, Tensor) else self.real.fill_(value)

    @property
    def imag(self) -> "Tensor":
        """The imaginary values of a complex tensor (a view: writing to it writes the tensor)."""
        if not self.dtype.is_complex:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return S.view_as_real(self).select(-1, 1)

    @imag.setter
    def imag(self, value) -> None:
        self.imag.copy_(value) if isinstance(value, Tensor) else self.imag.fill_(value)

    def is_distributed(self) -> bool:
        """Returns False: tinytorch tensors are never distributed tensors."""
        return False

    def get_device(self) -> int:
        """For CUDA tensors, returns the device ordinal of the GPU the tensor lives on; for CPU tensors, -1."""
        return -1 if self.device.type == "cpu" else (self.device.index or 0)

    def is_same_size(self, other: "Tensor") -> bool:
        """Returns True if ``self`` and ``other`` have the same shape.

        Args:
            other (Tensor): the tensor to compare with."""
        return tuple(self.shape) == tuple(other.shape)

    def is_nonzero(self) -> bool:
        """Returns True if the single element of ``self`` is not zero after type conversions."""
        if self.numel() != 1:
            if self.numel() == 0:
                raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item() != 0)

    @property
    def nbytes(self) -> int:
        """Total bytes of the tensor's elements (``numel() * element_size()``)."""
        return self.numel() * self.element_size()

    @property
    def itemsize(self) -> int:
        """Size in bytes of one element (``element_size()``)."""
        return self.element_size()

    @property
    def layout(self):
        """The memory layout: always ``tinytorch.strided``."""
        return strided

    @property
    def H(self) -> "Tensor":
        """A view of a 2-D tensor transposed (no complex dtypes: no conjugation)."""
        if self.dim() not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.")
        return self.t() if self.dim() == 2 else self

    @property
    def mH(self) -> "Tensor":
        """A view with the last two dimensions transposed (no conjugation)."""
        if self.dim() < 2:
            raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. "
                               f"Got {self.dim()}-D tensor.")
        return self.transpose(-2, -1)

    def adjoint(self) -> "Tensor":
        """Returns a view of ``self`` with its last two dimensions transposed (no complex dtypes: no conjugation)."""
        if self.dim() < 2:
            raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. "
                               f"Got {self.dim()}-D tensor.")
        return self.transpose(-2, -1)

    # backends tinytorch doesn't have: honestly False
    is_mps = is_xpu = is_ipu = is_mtia = is_maia = is_nested = is_mkldnn = is_xla = property(
        lambda self: False, doc="False: tinytorch has no such backend.")

    # ------------------------------------------------------------ new tensors like this one
    def new(self, *args) -> "Tensor":
        """Legacy constructor: ``x.new()`` is an empty tensor, ``x.new(2, 3)`` an uninitialized one of that size,
        ``x.new(data)`` a tensor of ``data``; all with ``self``'s dtype and device.

        Args:
            args (ints or sequence or Tensor): a size, or data."""
        if not args:
            return self.new_empty((0,))
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].to(self.dtype).detach()
        if all(isinstance(a, int) for a in args):
            return self.new_empty(args)
        if len(args) == 1 and isinstance(args[0], (tuple, list)) and all(isinstance(a, int) for a in args[0]) \
                and type(args[0]).__name__ == "Size":
            return self.new_empty(tuple(args[0]))
        return self.new_tensor(args[0] if len(args) == 1 else list(args))

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        """Returns an uninitialized tensor of ``size`` and ``stride`` with ``self``'s dtype and device by default.

        Args:
            size (tuple of int): the shape of the output tensor.
            stride (tuple of int): the strides of the output tensor.
            dtype (tinytorch.dtype, optional): the desired type of returned tensor.
            device (tinytorch.device, optional): the desired device of returned tensor.
            requires_grad (bool, optional): if autograd should record operations on the returned tensor."""
        return _creation.empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                                       requires_grad=requires_grad)

    new_zeros = _creation.new_form(_creation.zeros, "new_zeros", "filled with ``0``")
    new_ones = _creation.new_form(_creation.ones, "new_ones", "filled with ``1``")

    @fill_doc(factory_notes)
    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        """Returns a Tensor of size :attr:`size` filled with :attr:`fill_value`. By default, the returned
        Tensor has the same :class:`dtype` and :class:`device` as this tensor.

        Args:
            {size_sequence}
            fill_value (Scalar): the value to fill the output tensor with.
            {new_kwargs}"""
        return _creation.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    new_empty = _creation.new_form(_creation.empty, "new_empty", "filled with uninitialized data")

    @fill_doc(factory_notes)
    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        """Returns a new Tensor with :attr:`data` as the tensor data. By default, the returned Tensor has the
        same :class:`dtype` and :class:`device` as this tensor.

        Args:
            data (array_like): the returned Tensor copies :attr:`data`.
            {new_kwargs}"""
        return _creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)


_set_tensor_class(Tensor, DTYPES)
_torch_function._tensor_class[0] = Tensor


def is_tensor(obj) -> bool:
    """Returns True if :attr:`obj` is a tinytorch tensor.

    Args:
        obj (object): the object to test."""
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:  # noqa: A002  (PyTorch's parameter name)
    """The total number of elements in input.

    Args:
        input (Tensor): the input tensor."""
    return input.numel()
