# cython: language_level=3
"""The Python tensor type's core: storage handle, autograd state and the autograd surface.

``tinytorch.Tensor`` (tinytorch/_tensor/tensor.py) subclasses ``TensorBase`` and adds ``backward()``
(the graph, ``_autograd``, and the engine, ``_engine``, sit above this module); the op methods
come from the op schema (``tinytorch/_generated/methods.py``), installed on it by the package root.
"""
import weakref

from tinytorch import _C
from tinytorch._core.dtype import device as _device, is_floating_code
from tinytorch._core.size import Size

cdef object _tensor_cls = None     # tinytorch.Tensor, set by tinytorch/_tensor/tensor.py


cdef tuple _DTYPES = ()           # tinytorch dtype objects by code, set with the tensor class


def _set_tensor_class(cls, dtypes):
    global _tensor_cls, _DTYPES
    _tensor_cls = cls
    _DTYPES = tuple(dtypes)


cdef TensorBase wrap(object impl):
    """A new tinytorch.Tensor around a _C.TensorImpl, with no autograd history."""
    cdef TensorBase t = <TensorBase>TensorBase.__new__(_tensor_cls)
    t._impl = impl
    return t


def _wrap(impl):
    return wrap(impl)


cdef bint requires_grad(TensorBase t):
    return t._requires_grad or t._grad_fn is not None


class _RemovableHandle:
    """What register_hook returns: ``remove()`` takes the hook out of its list."""
    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


cdef class TensorBase:
    # ---------------------------------------------------------------- metadata
    @property
    def shape(self):
        return Size(self._impl.shape)

    def size(self, dim=None):
        """Returns the size of the tensor, or of dimension ``dim``.

        Args:
            dim (int, optional): the dimension for which to retrieve the size. Default: ``None``"""
        if dim is None:
            return self.shape
        return self._impl.size(dim)

    def dim(self):
        """Returns the number of dimensions of :attr:`self` tensor."""
        return self._impl.ndim

    @property
    def ndim(self):
        return self._impl.ndim

    def ndimension(self):
        """Alias for :meth:`~Tensor.dim()`"""
        return self._impl.ndim

    def numel(self):
        """Returns the total number of elements in the input tensor."""
        return self._impl.numel

    def nelement(self):
        """Alias for :meth:`~Tensor.numel`"""
        return self._impl.numel

    def element_size(self):
        """Returns the size in bytes of an individual element."""
        return self._impl.itemsize

    def stride(self, dim=None):
        """Returns the stride of :attr:`self` tensor.

        Args:
            dim (int, optional): the desired dimension in which stride is required. Default: ``None``"""
        s = self._impl.stride()
        if dim is None:
            return s
        return s[dim]

    def storage_offset(self):
        """Returns :attr:`self` tensor's offset in the underlying storage in terms of number of storage
        elements (not bytes)."""
        return self._impl.storage_offset

    def is_contiguous(self, memory_format=None):
        """Returns True if :attr:`self` tensor is contiguous in memory in the order specified by memory format.

        Args:
            memory_format (memory_format, optional): the desired memory format of returned tensor. Default:
                ``None``"""
        return self._impl.is_contiguous()

    def data_ptr(self):
        """Returns the address of the first element of :attr:`self` tensor."""
        return self._impl.data_ptr

    @property
    def dtype(self):
        return _DTYPES[self._impl.dtype_code]

    @property
    def device(self):
        return _device(self._impl.device_str)

    @property
    def is_cuda(self):
        return self._impl.device_str.startswith("cuda")

    @property
    def is_cpu(self):
        return self._impl.device_str == "cpu"

    @property
    def is_meta(self):
        """True if the tensor is on the meta device: a shape and a dtype, no storage."""
        return self._impl.device_str == "meta"

    @property
    def _version(self):
        return self._impl.version

    # ---------------------------------------------------------------- autograd surface
    @property
    def requires_grad(self):
        return self._requires_grad or self._grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, bint value):
        if self._grad_fn is not None:
            if not value:
                raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                                   "computed variable in a subgraph that doesn't require differentiation use "
                                   "var_no_grad = var.detach().")
            return
        if value and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError(f"only Tensors of floating point and complex dtype can require gradients (got "
                               f"{self.dtype})")
        self._requires_grad = value

    def requires_grad_(self, bint requires_grad=True):
        """Change if autograd should record operations on this tensor: sets requires_grad in place.

        Args:
            requires_grad (bool): if autograd should record operations on this tensor. Default: ``True``"""
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def grad_fn(self):
        return self._grad_fn

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        cdef TensorBase g
        if value is not None:
            if not isinstance(value, TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(value).__name__}")
            g = <TensorBase>value
            if g._impl.shape != self._impl.shape:
                raise RuntimeError(f"assigned grad has data of a different size: expected {list(self._impl.shape)}, "
                                   f"got {list(g._impl.shape)}")
            if g._impl.dtype_code != self._impl.dtype_code:
                raise RuntimeError("assigned grad has data of a different type")
            if g._impl.device_str != self._impl.device_str:
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    def detach(self):
        """Returns a new Tensor, detached from the current graph, sharing storage."""
        return wrap(self._impl.alias())

    def detach_(self):
        """Detaches the Tensor from the graph that created it, making it a leaf."""
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    def retain_grad(self):
        """Enables this non-leaf Tensor to have its .grad populated during backward()."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        ref = weakref.ref(self)

        def retain(grad):
            t = ref()
            if t is not None:
                t._grad = grad.detach().clone() if t._grad is None else t._grad + grad
        self._grad_fn._add_output_hook(self._output_nr, retain)

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        """Registers a backward hook: ``hook(grad) -> Tensor or None``, called with the gradient
        of this tensor; a returned tensor replaces the gradient. Returns a handle with remove().

        Args:
            hook (Callable): the function to call with the gradient: ``hook(grad) -> Tensor or None``."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._add_output_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Registers ``hook(tensor)`` run after the gradient has been accumulated into .grad.

        Args:
            hook (Callable): the function to call with the gradient: ``hook(grad) -> Tensor or None``."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_hooks is None:
            self._post_accumulate_hooks = []
        self._post_accumulate_hooks.append(hook)
        return _RemovableHandle(self._post_accumulate_hooks, hook)

    # ---------------------------------------------------------------- python protocol
    def __len__(self):
        if self._impl.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._impl.shape[0]

    def __hash__(self):
        return id(self)

    def item(self):
        """Returns the value of this tensor as a standard Python number."""
        return self._impl.item()

    def __float__(self):
        return float(self._impl.item())

    def __int__(self):
        return int(self._impl.item())

    def __index__(self):
        if is_floating_code(self._impl.dtype_code) or self._impl.numel != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._impl.item())

    def __bool__(self):
        if self._impl.numel != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._impl.item())
