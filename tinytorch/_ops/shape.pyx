# cython: language_level=3
"""Views, shape ops, copies and casts, with their derivatives.

Views alias their input's storage (the C++ core makes them); their backward formulas map the
gradient back to the input's shape."""
import builtins
import weakref

from tinytorch import _C
from tinytorch._core.dtype import INT64, is_floating_code, to_dtype
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap, requires_grad
from tinytorch._core.graph cimport Node, make_node, init_node, should_record, set_history, is_grad_enabled_c
from tinytorch._ops._common cimport view_positions, record as _record, wrap_dim
from tinytorch._ops._common import positions_back
from tinytorch._core.graph import sum_to_shape  # noqa: F401  (expand's backward; the engine's reduction too)


cdef class ViewRefs:
    """Weak references to a tensor's live views; dead ones are dropped whenever the list doubles."""
    cdef public list refs
    cdef Py_ssize_t limit

    def __cinit__(self):
        self.refs = []
        self.limit = 16

    cdef void add(self, Tensor view):
        self.refs.append(weakref.ref(view))
        if len(self.refs) >= self.limit:
            self.refs = [r for r in self.refs if r() is not None]
            self.limit = max(16, 2 * len(self.refs))

    def alive(self):
        return [v for v in (r() for r in self.refs) if v is not None]


cdef void _track_view(Tensor x, Tensor out):
    """out aliases x's storage: remember the tensor that owns it, and let that tensor know its views,
    so that an in-place op through one view updates the owner's history and the other views'
    (rebase_inplace in _common.pyx)."""
    root = x._base if x._base is not None else x
    out._base = root
    if (<Tensor>root)._views is None:
        (<Tensor>root)._views = ViewRefs()
    (<ViewRefs>(<Tensor>root)._views).add(out)


cdef class ViewNode(Node):
    """Node of a view op: the input's shape as a C field (extras such as dims go to the
    attribute dict). In-place ops through views rebase their base's history (CopySlices)."""
    _is_view = True
    cdef public tuple in_shape


cdef Tensor _record_view(str name, Tensor x, object impl, object backward, dict attrs=None):
    cdef Tensor out = wrap(impl)
    if impl.storage_ptr == x._impl.storage_ptr:
        _track_view(x, out)
    if not should_record((x,)):
        return out
    cdef ViewNode n = <ViewNode>init_node(ViewNode.__new__(ViewNode), name, backward, (x,))
    n.in_shape = x._impl.shape
    if attrs:
        for k, v in attrs.items():
            setattr(n, k, v)
    set_history(out, n, 0)
    return out


def _reshape_back(Node n, g):
    return (reshape(g, n.in_shape),)


cdef list _as_shape(tuple args):
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return list(args[0])
    return list(args)


def view(Tensor self, *shape, size=None, dtype=None):
    """Returns a new tensor with the same data as the self tensor but of a different shape
    (``view(2, 3)``, ``view((2, 3))``, ``view(size=(2, 3))``), or ``view(dtype)``.

    Args:
        shape (Size or int...): the desired size.

    Keyword args:
        size (Size or tuple, optional): the desired size, as a keyword. Default: ``None``
        dtype (dtype): the desired dtype (a view of the same bytes). Default: ``None``"""
    if size is not None or dtype is not None:
        shape = (size if size is not None else dtype,)
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int)):
        if shape[0] is None:
            return self
        # the same bytes as another dtype: not differentiable, as PyTorch's
        return wrap(self._impl.view_dtype(to_dtype(shape[0]).code))
    return _record_view("ViewBackward0", self, self._impl.view(_as_shape(shape)), _reshape_back)


def reshape(Tensor input, *sizes, shape=None):
    """Returns a tensor with the same data and number of elements as input, but with the
    specified shape (``reshape(2, 3)``, ``reshape((2, 3))``, ``reshape(shape=(2, 3))``): a view
    when possible, otherwise a copy.

    Args:
        input (Tensor): the input tensor.
        sizes (torch.Size or int...): the desired size: separate ints or one tuple.

    Keyword args:
        shape (tuple of int): the new shape: separate ints or one tuple. Default: ``None``"""
    impl = input._impl.reshape(_as_shape(sizes) if shape is None else list(shape))
    return _record_view("ReshapeAliasBackward0" if impl.storage_ptr == input._impl.storage_ptr else "ViewBackward0",
                        input, impl, _reshape_back)


def _transpose_back(Node n, g):
    return (transpose(g, n.d0, n.d1),)


def transpose(Tensor input, int dim0, int dim1):
    """Returns a tensor that is a transposed version of :attr:`input`. The given dimensions :attr:`dim0`
    and :attr:`dim1` are swapped.

    Args:
        input (Tensor): the input tensor.
        dim0 (int): the first dimension to be swapped.
        dim1 (int): the second dimension to be swapped."""
    return _record_view("TransposeBackward0", input, input._impl.transpose(dim0, dim1), _transpose_back,
                        {"d0": dim0, "d1": dim1})


def t(Tensor input):
    """Expects :attr:`input` to be <= 2-D tensor and transposes dimensions 0 and 1.

    Args:
        input (Tensor): the input tensor."""
    if input._impl.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input._impl.ndim}D")
    if input._impl.ndim < 2:
        return input
    return transpose(input, 0, 1)


def _permute_back(Node n, g):
    inv = [0] * len(n.dims)
    for i, d in enumerate(n.dims):
        inv[d] = i
    return (permute(g, *inv),)


def permute(Tensor input, *args, dims=None):
    """Returns a view of the original tensor :attr:`input` with its dimensions permuted.

    ``permute(1, 0)``, ``permute((1, 0))`` or ``permute(dims=(1, 0))``.

    Args:
        input (Tensor): the input tensor.
        args (int...): the desired ordering of dimensions, as separate ints or one tuple.

    Keyword args:
        dims (tuple of int): the desired ordering of dimensions. Default: ``None``"""
    dims = _as_shape(args) if dims is None else list(dims)
    nd = input._impl.ndim
    wrapped = [d + nd if d < 0 else d for d in dims]
    return _record_view("PermuteBackward0", input, input._impl.permute(dims), _permute_back, {"dims": wrapped})


def movedim(Tensor input, source, destination):
    """Moves the dimension(s) of :attr:`input` at the position(s) in :attr:`source` to the position(s) in
    :attr:`destination`.

    Args:
        input (Tensor): the input tensor.
        source (int or tuple of ints): original positions of the dims to move. These must be unique.
        destination (int or tuple of ints): destination positions for each of the original dims. These
            must also be unique."""
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain "
                           f"the same number of dims as destination ({dst} dims)")
    nd = input._impl.ndim
    src = [wrap_dim(s, nd if nd else 1) for s in src]    # a 0-dim tensor takes 0 and -1, as a scalar's dim
    dst = [wrap_dim(d, nd if nd else 1) for d in dst]
    for name, ds in (("source", src), ("destination", dst)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(source if name == 'source' else destination)})")
    if nd == 0:
        return permute(input, [])
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    order = [o if o is not None else next(rest) for o in order]
    return permute(input, order)


def _expand_back(Node n, g):
    return (sum_to_shape(g, n.in_shape),)


def expand(Tensor self, *sizes, size=None, implicit=False):
    """``expand(2, 3)``, ``expand((2, 3))`` or ``expand(size=(2, 3))``.

    Args:
        sizes (torch.Size or int...): the desired size: separate ints or one tuple.

    Keyword args:
        size (Size or int...): the new shape. Default: ``None``
        implicit (bool): ignored (PyTorch's tracer sets it). Default: ``False``"""
    return _record_view("ExpandBackward0", self, self._impl.expand(_as_shape(sizes) if size is None else list(size)),
                        _expand_back)


def expand_as(Tensor self, Tensor other):
    """Expand this tensor to the same size as :attr:`other`.

    Args:
        other (Tensor): the result tensor has the same size as :attr:`other`."""
    return expand(self, other._impl.shape)


def broadcast_to(Tensor input, size):
    """Broadcasts :attr:`input` to the shape :attr:`size`.

    Args:
        input (Tensor): the input tensor.
        size (Size or int...): the new shape."""
    return expand(input, size)


def squeeze(Tensor input, dim=None):
    """Returns a tensor with all specified dimensions of :attr:`input` of size `1` removed.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints, optional): if given, the input will be squeezed only in the specified
            dimensions. Default: ``None``"""
    if dim is None:
        impl = input._impl.squeeze()
    else:
        impl = input._impl.squeeze([dim] if isinstance(dim, int) else list(dim))
    return _record_view("SqueezeBackward0", input, impl, _reshape_back)


def unsqueeze(Tensor input, int dim):
    """Returns a new tensor with a dimension of size one inserted at the specified position.

    Args:
        input (Tensor): the input tensor.
        dim (int): the index at which to insert the singleton dimension."""
    return _record_view("UnsqueezeBackward0", input, input._impl.unsqueeze(dim), _reshape_back)


def flatten(Tensor input, int start_dim=0, int end_dim=-1):
    """Flattens :attr:`input` by reshaping it into a one-dimensional tensor. If :attr:`start_dim` or
    :attr:`end_dim` are passed, only dimensions starting with :attr:`start_dim` and ending with
    :attr:`end_dim` are flattened.

    Args:
        input (Tensor): the input tensor.
        start_dim (int): the first dim to flatten. Default: ``0``
        end_dim (int): the last dim to flatten. Default: ``-1``"""
    impl = input._impl.flatten(start_dim, end_dim)
    return _record_view("ViewBackward0", input, impl, _reshape_back)


def unflatten(Tensor input, int dim, sizes):
    """Expands a dimension of the input tensor over multiple dimensions.

    Args:
        input (Tensor): the input tensor.
        dim (int): dimension to be unflattened, specified as an index into ``input.shape``.
        sizes (tuple of ints): new shape of the unflattened dimension. One of its elements can be `-1`
            in which case the corresponding output dimension is inferred."""
    shape = list(input._impl.shape)
    nd = len(shape)
    dim = dim + nd if dim < 0 else dim
    return reshape(input, shape[:dim] + list(sizes) + shape[dim + 1:])


def _slice_back(Node n, g):
    return (_slice_scatter(g, n.in_shape, n.dim, n.start, n.stop, n.step),)


def slice(Tensor x, int dim, start, stop, Py_ssize_t step=1):
    return _record_view("SliceBackward0", x, x._impl.slice(dim, start, stop, step), _slice_back,
                        {"dim": dim, "start": start, "stop": stop, "step": step})


def _slice_scatter_back(Node n, g):
    return (slice(g, n.dim, n.start, n.stop, n.step),)


def _slice_scatter(Tensor g, shape, int dim, start, stop, Py_ssize_t step):
    """Zeros of ``shape`` with ``g`` written at [start:stop:step] along dim (slice's backward)."""
    shape = list(shape)
    cdef int d = dim + len(shape) if dim < 0 else dim
    if step == 1:  # g's positions are written once, only the rest is zeroed (split's backward)
        lo, hi, _ = builtins.slice(start, stop, 1).indices(shape[d])
        hi = max(lo, hi)
        impl = _C.empty(shape, g._impl.dtype_code, g._impl.device)
        impl.slice(d, lo, hi, 1).copy_(g._impl)
        if lo > 0:
            _C.fill_(impl.slice(d, 0, lo, 1), 0.0)
        if hi < shape[d]:
            _C.fill_(impl.slice(d, hi, shape[d], 1), 0.0)
    else:
        impl = _C.full(shape, 0.0, g._impl.dtype_code, g._impl.device)
        impl.slice(dim, start, stop, step).copy_(g._impl)
    cdef Tensor out = wrap(impl)
    cdef Node n = make_node("SliceBackwardBackward0", _slice_scatter_back, (g,))
    if n is not None:
        n.dim, n.start, n.stop, n.step = dim, start, stop, step
        set_history(out, n, 0)
    return out


def narrow(Tensor input, int dim, Py_ssize_t start, Py_ssize_t length):
    """Returns a new tensor that is a narrowed version of :attr:`input` tensor.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension along which to narrow.
        start (int or Tensor): index of the element to start the narrowed dimension from. Can be
            negative, which means indexing from the end of `dim`.
        length (int): length of the narrowed dimension, must be weakly positive."""
    input._impl.narrow(dim, start, length)   # validates
    n = input._impl.shape[dim]
    start = start + n if start < 0 else start
    return slice(input, dim, start, start + length, 1)


def _select_back(Node n, g):
    return (_slice_scatter(unsqueeze(g, n.dim), n.in_shape, n.dim, n.index, n.index + 1, 1),)


def select(Tensor input, int dim, Py_ssize_t index):
    """Slices the :attr:`input` tensor along the selected dimension at the given index.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension to slice.
        index (int): the index to select with."""
    impl = input._impl.select(dim, index)
    nd = input._impl.ndim
    d = dim + nd if dim < 0 else dim
    size = input._impl.shape[d]
    i = index + size if index < 0 else index
    return _record_view("SelectBackward0", input, impl, _select_back, {"dim": d, "index": i})


def unbind(Tensor input, int dim=0):
    """Removes a tensor dimension. Returns a tuple of all slices along a given dimension, already without
    it.

    Args:
        input (Tensor): the input tensor.
        dim (int): dimension to remove. Default: ``0``"""
    cdef int d = wrap_dim(dim, input._impl.ndim)
    return _record_pieces("UnbindBackward0", input, d, [(i, i + 1) for i in range(input._impl.size(d))], True)


# -- split / chunk / unbind: one node for all the pieces (PyTorch's SplitBackward0), whose backward
# writes every piece's gradient into one tensor (zeros where a piece got none): one pass over the
# input's size, where a node per piece would build a zero-padded full-size gradient per piece and sum them.

cdef tuple _record_pieces(str name, Tensor x, int dim, list bounds, bint squeeze):
    """Views x[lo:hi] along dim for each (lo, hi) in bounds (x[lo] when squeeze), one node."""
    outs = []
    cdef Tensor out
    for lo, hi in bounds:
        impl = x._impl.select(dim, lo) if squeeze else x._impl.slice(dim, lo, hi, 1)
        out = wrap(impl)
        if impl.storage_ptr == x._impl.storage_ptr:
            _track_view(x, out)
        outs.append(out)
    if outs and should_record((x,)):
        n = <ViewNode>init_node(ViewNode.__new__(ViewNode), name, _pieces_back, (x,), len(outs))
        n.in_shape = x._impl.shape
        n.dim, n.bounds, n.squeeze = dim, bounds, squeeze
        for i, out in enumerate(outs):
            set_history(out, n, i)
    return tuple(outs)


def _pieces_back(Node n, *grads):
    cdef Tensor g, like = next(g for g in grads if g is not None)  # the engine runs a node that got one
    cdef int d = n.dim
    impl = _C.empty(list(n.in_shape), like._impl.dtype_code, like._impl.device)
    present = []
    for (lo, hi), g_obj in zip(n.bounds, grads):
        piece = impl.slice(d, lo, hi, 1)
        if g_obj is None:
            _C.fill_(piece, 0.0)
        else:
            g = <Tensor>g_obj
            piece.copy_(g._impl.unsqueeze(d) if n.squeeze else g._impl)
            present.append((lo, hi))
    cdef Tensor out = wrap(impl)
    cdef Node b = make_node(n._name.replace("Backward0", "BackwardBackward0"), _pieces_back_back,
                            tuple(g for g in grads if g is not None))
    if b is not None:
        b.dim, b.bounds, b.squeeze = d, present, n.squeeze
        set_history(out, b, 0)
    return (out,)


def _pieces_back_back(Node n, g):
    if n.squeeze:
        return tuple(select(g, n.dim, lo) for lo, _ in n.bounds)
    return tuple(slice(g, n.dim, lo, hi, 1) for lo, hi in n.bounds)


def split(Tensor tensor, split_size_or_sections, int dim=0):
    """Splits the tensor into chunks (views).

    Args:
        tensor (Tensor): tensor to split.
        split_size_or_sections (int or list(int)): size of a single chunk or list of sizes for each
            chunk.
        dim (int): dimension along which to split the tensor. Default: ``0``"""
    size = tensor._impl.size(dim)
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0:
            raise ValueError(f"split expects split_size be positive, but got split_size={step}")
        bounds = [(s, min(s + step, size)) for s in range(0, max(size, 1), step)]
        if size == 0:
            bounds = [(0, 0)]
    else:
        sections = list(split_size_or_sections)
        if sum(sections) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                               f"at dimension {dim}), but got split_sizes={sections}")
        bounds, s = [], 0
        for n in sections:
            bounds.append((s, s + n))
            s += n
    name = "SplitBackward0" if isinstance(split_size_or_sections, int) else "SplitWithSizesBackward0"
    return _record_pieces(name, tensor, wrap_dim(dim, tensor._impl.ndim), bounds, False)


def chunk(Tensor input, Py_ssize_t chunks, int dim=0):
    """Attempts to split a tensor into the specified number of chunks. Each chunk is a view of the input
    tensor.

    Args:
        input (Tensor): the input tensor.
        chunks (int): number of chunks to return.
        dim (int): dimension along which to split the tensor. Default: ``0``"""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input._impl.size(dim)
    if size == 0:                       # PyTorch: `chunks` empty pieces of an empty dim
        return tuple(narrow(input, dim, 0, 0) for _ in range(chunks))
    step = max(-(-size // chunks), 1)
    return split(input, step, dim)


def _strided_view_back(Node n, g):
    return (_view_scatter(g, n.in_shape, n.view_fn),)


def _view_scatter_back(Node n, g):
    return (n.view_fn(g),)


def _view_scatter(Tensor g, shape, view_fn):
    """Backward of a view that may overlap itself (unfold, as_strided, diagonal): accumulate g
    into zeros of ``shape`` at the element positions the view reads."""
    numel = 1
    for s in shape:
        numel *= s
    positions = view_fn(view(wrap(_C.arange(0, numel, 1, INT64, g._impl.device)), *shape))
    flat = wrap(_C.full([numel], 0.0, g._impl.dtype_code, g._impl.device))
    flat.index_put_((positions.reshape(-1),), g.reshape(-1), accumulate=True)
    cdef Tensor out = flat.view(*shape)
    cdef Node n = make_node("ViewScatterBackward0", _view_scatter_back, (g,))
    if n is not None:
        n.view_fn = view_fn
        set_history(out, n, 0)
    return out


def unfold(Tensor self, int dimension, Py_ssize_t size, Py_ssize_t step):
    """Returns a view of the original tensor which contains all slices of size :attr:`size` from
    :attr:`self` tensor in the dimension :attr:`dimension`.

    Args:
        dimension (int): dimension in which unfolding happens.
        size (int): the size of each slice that is unfolded.
        step (int): the step between each slice."""
    fn = lambda t: unfold(t, dimension, size, step)
    return _record_view("UnfoldBackward0", self, self._impl.unfold(dimension, size, step), _strided_view_back,
                        {"view_fn": fn})


def view_as_real(Tensor input):
    """Returns a view of :attr:`input` as a real tensor: a complex tensor of size (..., n) is seen as a
    real tensor of size (..., n, 2) whose last dimension holds the real and imaginary parts.

    Args:
        input (Tensor): the input tensor (complex64 or complex128)."""
    return _record_view("ViewAsRealBackward0", input, input._impl.view_as_real(), _view_as_real_back)


def _view_as_real_back(Node n, g):
    return (view_as_complex(g.contiguous()),)


def view_as_complex(Tensor input):
    """Returns a view of :attr:`input` as a complex tensor: a real tensor of size (..., n, 2) (last
    dimension of size 2 and stride 1, other strides even) is seen as a complex tensor of size (..., n).

    Args:
        input (Tensor): the input tensor (float32 or float64)."""
    return _record_view("ViewAsComplexBackward0", input, input._impl.view_as_complex(), _view_as_complex_back)


def _view_as_complex_back(Node n, g):
    return (view_as_real(g),)


def diagonal(Tensor input, Py_ssize_t offset=0, int dim1=0, int dim2=1):
    """Returns a partial view of :attr:`input` with the its diagonal elements with respect to :attr:`dim1`
    and :attr:`dim2` appended as a dimension at the end of the shape.

    Args:
        input (Tensor): the input tensor.
        offset (int, optional): which diagonal to consider: 0 is the main diagonal, positive above it,
            negative below. Default: ``0``
        dim1 (int, optional): first dimension with respect to which to take diagonal. Default: ``0``
        dim2 (int, optional): second dimension with respect to which to take diagonal. Default: ``1``"""
    fn = lambda t: diagonal(t, offset, dim1, dim2)
    return _record_view("DiagonalBackward0", input, input._impl.diagonal(offset, dim1, dim2), _strided_view_back,
                        {"view_fn": fn})


def as_strided(Tensor input, size, stride, storage_offset=None):
    """Create a view of an existing tensor with specified :attr:`size`, :attr:`stride` and
    :attr:`storage_offset`.

    Args:
        input (Tensor): the input tensor.
        size (tuple or ints): the shape of the output tensor.
        stride (tuple or ints): the stride of the output tensor.
        storage_offset (int, optional): the offset in the underlying storage of the output tensor. If
            ``None``, the storage_offset of the output tensor will match the input tensor. Default:
            ``None``"""
    if requires_grad(input) and not input._impl.is_contiguous() and is_grad_enabled_c():
        # the gradient goes to the input elements at the positions the view reads (by geometry)
        out = wrap(input._impl.as_strided(list(size), list(stride), storage_offset))
        _track_view(input, out)
        positions = view_positions(input, out)
        if bool((positions < 0).any()):
            raise NotImplementedError("as_strided: this view of a non-contiguous input reads storage outside the "
                                      "input, which has no gradient; call .contiguous() first")
        n = make_node("AsStridedBackward0", positions_back, (input,))
        n.positions, n.numel, n.base_shape = positions, input._impl.numel, input._impl.shape
        set_history(out, n, 0)
        return out
    base = input._impl.storage_offset
    rel = None if storage_offset is None else storage_offset - base
    fn = lambda t: as_strided(t, size, stride, None if rel is None else t._impl.storage_offset + rel)
    return _record_view("AsStridedBackward0", input, input._impl.as_strided(list(size), list(stride), storage_offset),
                        _strided_view_back, {"view_fn": fn})


# ------------------------------------------------------------------ copies and casts

def _identity_back(Node n, g):
    return (g,)


def contiguous(Tensor self, memory_format=None):
    """Returns a contiguous tensor containing the same data (self if already contiguous).

    Args:
        memory_format (memory_format, optional): the desired memory format of returned tensor. Default:
            ``None``"""
    if self._impl.is_contiguous():
        return self
    return clone(self)


def clone(Tensor input, memory_format=None):
    """Returns a copy of :attr:`input`. This function is differentiable, so gradients will flow back from
    the result of this operation to :attr:`input`.

    Args:
        input (Tensor): the input tensor.
        memory_format (memory_format, optional): the desired memory format of returned tensor. Default:
            ``None``"""
    cdef Tensor out = wrap(input._impl.clone())
    cdef Node n = make_node("CloneBackward0", _identity_back, (input,))
    if n is not None:
        set_history(out, n, 0)
    return out


def _cast_back(Node n, g):
    return (cast(g, n.src_code),)


def cast(Tensor x, int code, bint copy=False):
    """x converted to the dtype with C++ code ``code``; the gradient is cast back."""
    if code == x._impl.dtype_code and not copy:
        return x
    cdef Tensor out = wrap(x._impl.to_dtype(code, copy))
    if is_floating_code(code):   # only floating results carry gradients
        n = make_node("ToCopyBackward0", _cast_back, (x,))
        if n is not None:
            n.src_code = x._impl.dtype_code
            set_history(out, n, 0)
    return out


def _to_device_back(Node n, g):
    return (to_device(g, n.src_device),)


def to_device(Tensor x, device_impl, bint non_blocking=False, bint copy=False):
    cdef Tensor out = wrap(x._impl.to_device(device_impl, copy, non_blocking))
    if out._impl is not x._impl:
        n = make_node("ToCopyBackward0", _to_device_back, (x,))
        if n is not None:
            n.src_device = x._impl.device
            set_history(out, n, 0)
    return out


def view_as(Tensor self, Tensor other):
    """View this tensor as the same size as other.

    Args:
        other (Tensor): the result tensor has the same size as :attr:`other`."""
    return view(self, other._impl.shape)


def reshape_as(Tensor self, Tensor other):
    """Returns this tensor as the same shape as other.

    Args:
        other (Tensor): the result tensor has the same shape as :attr:`other`."""
    return reshape(self, other._impl.shape)


# ------------------------------------------------------------------ joining and reordering
# (here, below the reductions, because prod's and cumprod's derivatives use them)

def _cat_back(Node n, g):
    # a legacy empty (0,) input took no part: its gradient is empty, of its own shape
    return tuple(wrap(_C.empty([0], (<Tensor>g)._impl.dtype_code, (<Tensor>g)._impl.device)) if b is None
                 else slice(g, n.dim, b[0], b[1], 1) for b in n.bounds)


def cat(tensors, int dim=0):
    """Concatenates the given sequence of tensors in the given dimension.

    Args:
        tensors (sequence of Tensors): sequence of tensors to concatenate. Non-empty tensors provided
            must have the same shape, except in the cat dimension.
        dim (int, optional): the dimension over which the tensors are concatenated. Default: ``0``"""
    tensors = list(tensors)
    out_impl = _C.cat([(<Tensor>t)._impl for t in tensors], dim)
    nd = out_impl.ndim
    d = dim % nd if nd else 0
    bounds, s = [], 0
    for t in tensors:
        tshape = (<Tensor>t)._impl.shape
        if len(tshape) != nd:           # legacy empty (0,) tensors are skipped
            bounds.append(None)
            continue
        bounds.append((s, s + tshape[d]))
        s += tshape[d]
    return _record("CatBackward0", _cat_back, tuple(tensors), out_impl, {"dim": d, "bounds": bounds})


def _flip_back(Node n, g):
    return (flip(g, n.dims),)


def flip(Tensor input, dims):
    """Reverse the order of an n-D tensor along given axis in dims.

    Args:
        input (Tensor): the input tensor.
        dims (a list or tuple): axis to flip on."""
    dims = [dims] if isinstance(dims, int) else list(dims)
    return _record("FlipBackward0", _flip_back, (input,), _C.flip(input._impl, dims), {"dims": dims})
