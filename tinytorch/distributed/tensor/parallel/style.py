"""Parallel styles (PyTorch's ``torch.distributed.tensor.parallel`` names and defaults): how
:func:`~tinytorch.distributed.tensor.parallel.parallelize_module` shards one module over a 1-D
device mesh and moves its inputs and outputs between layouts.

* :class:`ColwiseParallel`: ``nn.Linear`` / ``nn.QuantizedLinear`` weight rows (output features)
  and bias split over the ranks; the input is replicated, the output the local slice of the
  features (``output_layouts=Replicate()`` gathers them). ``nn.Embedding``: its embedding dim split.
* :class:`RowwiseParallel`: the weight's columns (input features) split; the input is the local
  slice, the partial outputs are all-reduced (``Replicate``, the default) or reduce-scattered
  (``Shard(d)``), then the (replicated) bias is added. ``nn.Embedding``: a vocabulary-parallel
  embedding, each rank holding a range of rows; tokens outside it give 0 before the all-reduce.
  Packed GGUF weights split at whole quantization blocks.
* :class:`SequenceParallel`: a module (a norm, dropout) runs on the local sequence shard with its
  parameters replicated; their gradients are summed over the ranks.
* :class:`PrepareModuleInput` / :class:`PrepareModuleOutput`: move a module's positional inputs or
  its outputs from one layout to another.

tinytorch has no DTensor: parameters become plain local shards (new ``Parameter`` objects, so make
the optimizer after parallelizing) and every output is a local tensor (``use_local_output`` is
accepted for PyTorch's signatures). The collectives are differentiable (``_functions.py``), so a
parallelized model trains as the single-process one does."""
from __future__ import annotations

from types import MethodType
from typing import Optional, Sequence, Union

from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributed import collectives as C
from tinytorch.distributed.process_group import get_process_group_ranks
from tinytorch.distributed.tensor.parallel import _functions as fn
from tinytorch.distributed.tensor.parallel._functions import MeshGroup
from tinytorch.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard
from tinytorch.nn import functional as F
from tinytorch.nn.modules.linear import Linear
from tinytorch.nn.modules.module import Module
from tinytorch.nn.modules.quantized import SUPPORTED_QTYPES, QuantizedLinear
from tinytorch.nn.modules.sparse import Embedding
from tinytorch.nn.parameter import Parameter
from tinytorch._tensor.tensor import Tensor

__all__ = ["ParallelStyle", "ColwiseParallel", "RowwiseParallel", "SequenceParallel", "PrepareModuleInput",
           "PrepareModuleOutput", "PrepareModuleInputOutput"]

# Weights per quantization block along a row, by GGML type code: a row-wise split must fall on
# block boundaries (each block has its own scale).
QUANT_BLOCK = {2: 32, 3: 32, 8: 32, 12: 256, 14: 256}


class ParallelStyle:
    """The base class of the parallel styles. A subclass implements ``_apply(module, device_mesh)``
    (shard the module in place and return it) and may implement ``_check(fqn, module,
    device_mesh)``, which :func:`parallelize_module` calls for every entry of a plan before it
    changes anything, so that a plan that cannot apply fails without half-sharding the model."""

    src_data_rank: Optional[int] = 0
    # whether the style replaces the module's weights by shards (then a module takes one such style)
    _shards = True

    def _check(self, fqn: str, module: Module, device_mesh) -> None:
        pass

    def _apply(self, module: Module, device_mesh) -> Module:
        raise NotImplementedError(f"{type(self).__name__} must implement _apply(module, device_mesh)")


# ------------------------------------------------------------------------------------ layouts
def _one_layout(value, what: str, default: Placement) -> Placement:
    if value is None:
        return default
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise ValueError(f"{what}: expected one placement, got {tuple(value)}")
        value = value[0]
    if not isinstance(value, Placement):
        raise TypeError(f"{what}: expected a Placement (Shard(d), Replicate() or Partial()), got {value!r}")
    return value


def _same(a: Placement, b: Placement, ndim: int) -> bool:
    if isinstance(a, Shard) and isinstance(b, Shard):
        return a.dim % ndim == b.dim % ndim
    return a == b


def redistribute_input(x, src: Placement, dst: Placement, mg: MeshGroup, partial_grad: bool, what: str):
    """x (a local tensor laid out as ``src``) laid out as ``dst``, for a consumer whose input
    gradient is a partial sum over the ranks (``partial_grad``: a column-parallel layer) or exact."""
    if not isinstance(x, Tensor) or src is None or dst is None:
        return x
    differentiable = x.is_floating_point()
    if _same(src, dst, x.dim()):
        if isinstance(dst, Replicate) and partial_grad and differentiable:
            return fn.copy_to_parallel(x, mg)
        return x
    if isinstance(src, Shard) and isinstance(dst, Replicate):
        if not differentiable:
            return fn.all_gather(x, src.dim, mg)
        gather = fn.gather_for_parallel if partial_grad else fn.gather_from_parallel
        return gather(x, src.dim, mg)
    if isinstance(src, Replicate) and isinstance(dst, Shard) and not partial_grad:
        return fn.scatter_to_parallel(x, dst.dim, mg) if differentiable else fn.chunk(x, dst.dim, mg)
    raise NotImplementedError(f"{what}: moving an input from {src} to {dst} is not supported")


def redistribute_output(x, src: Placement, dst: Placement, mg: MeshGroup, what: str, fresh: bool = False):
    """x (a local output laid out as ``src``: Shard, Replicate or Partial) laid out as ``dst``;
    ``fresh``: x is the layer's own new tensor, which a no-grad all-reduce may overwrite."""
    if not isinstance(x, Tensor) or src is None or dst is None or _same(src, dst, x.dim()):
        return x
    if isinstance(src, Partial):
        if isinstance(dst, Replicate):
            return fn.reduce_from_parallel(x, mg, inplace=fresh)
        if isinstance(dst, Shard):
            return fn.reduce_scatter_to_parallel(x, dst.dim, mg)
    elif isinstance(src, Shard) and isinstance(dst, Replicate):
        return fn.gather_from_parallel(x, src.dim, mg)
    elif isinstance(src, Replicate) and isinstance(dst, Shard):
        return fn.scatter_to_parallel(x, dst.dim, mg)
    raise NotImplementedError(f"{what}: moving an output from {src} to {dst} is not supported")


# ---------------------------------------------------------------------------------- sharding
def _shard(module: Module, name: str, dim: Optional[int], mg: MeshGroup, src_data_rank: Optional[int],
           where: str) -> None:
    """Replaces the parameter or buffer ``name`` of module by this rank's chunk along ``dim`` (None:
    kept whole, replicated), taken from the values of the mesh rank ``src_data_rank`` (broadcast
    first; None: each rank's own). A tensor shared by several layers (a tied embedding and LM head)
    is sharded once, so the layers keep sharing it."""
    t = getattr(module, name)
    if t is None:
        return
    key = (dim, tuple(get_process_group_ranks(mg.group)))
    done = getattr(t, "_tp_shard", None)
    if done is not None:
        if done[0] != key:
            raise ValueError(f"{where}: {name} is shared with a layer that split it along dim {done[0][0]} "
                             f"(this one splits it along dim {dim}); tied weights must be split alike")
        setattr(module, name, done[1])
        return
    with no_grad():
        full = t.detach()
        if src_data_rank is not None and mg.size > 1:
            buf = full.contiguous()
            C.broadcast(buf, group=mg.group, group_src=src_data_rank)
            if buf.data_ptr() != full.data_ptr():
                full.copy_(buf)
            full = buf
        local = full if dim is None else fn.chunk(full, dim, mg)
    if dim is None:
        return                                   # the same tensor, now equal on every rank
    new = Parameter(local, requires_grad=t.requires_grad) if isinstance(t, Parameter) else local
    t._tp_shard = (key, new)
    setattr(module, name, new)


def _module_kind(style: str, fqn: str, module: Module) -> str:
    if isinstance(module, QuantizedLinear):
        return "quantized"
    if isinstance(module, Linear):
        return "linear"
    if isinstance(module, Embedding):
        return "embedding"
    raise NotImplementedError(f"{style}: {fqn or 'the module'} is a {type(module).__name__}; {style} supports "
                              "nn.Linear, nn.QuantizedLinear and nn.Embedding")


def _divides(style: str, fqn: str, what: str, size: int, n: int) -> None:
    if size % n:
        raise ValueError(f"{style}: {fqn or 'the module'} has {what}={size}, which does not split evenly over "
                         f"the mesh's {n} ranks")


def _forward_without_bias(self, *args, **kwargs):
    """The layer's own forward with its bias left out (a row-parallel layer adds it after the
    reduction of the partial outputs, once)."""
    store = self._parameters if "bias" in self._parameters else self._buffers
    bias = store["bias"]
    store["bias"] = None
    try:
        return type(self).forward(self, *args, **kwargs)
    finally:
        store["bias"] = bias


def _vocab_parallel_forward(self, ids: Tensor) -> Tensor:
    """Embedding rows of the local vocabulary range [start, start + num_embeddings); other tokens
    give zeros (another rank's range holds them: the partial outputs are then summed)."""
    start, n = self._tp_vocab_start, self.num_embeddings
    outside = (ids < start).logical_or(ids >= start + n)
    local = (ids - start).masked_fill(outside, 0)
    pad = self.padding_idx
    pad = pad - start if pad is not None and start <= pad < start + n else None
    out = F.embedding(local, self.weight, pad)
    return out.masked_fill(outside.unsqueeze(-1), 0.0)


def _input_hook(src: Placement, dst: Placement, mg: MeshGroup, partial_grad: bool, what: str):
    def hook(module, args):
        if not args:
            return None
        return (redistribute_input(args[0], src, dst, mg, partial_grad, what),) + tuple(args[1:])
    return hook


class _LayerSplit(ParallelStyle):
    """What ColwiseParallel and RowwiseParallel share: one input and one output layout (neither
    ``Partial``), each by default the subclass's ``_default_layouts`` entry."""

    _default_layouts: tuple      # (input_layouts, output_layouts)

    def __init__(self, *, input_layouts: Optional[Placement] = None, output_layouts: Optional[Placement] = None,
                 use_local_output: bool = True) -> None:
        name = type(self).__name__
        default_in, default_out = self._default_layouts
        self.input_layouts = _one_layout(input_layouts, f"{name}: input_layouts", default_in)
        self.output_layouts = _one_layout(output_layouts, f"{name}: output_layouts", default_out)
        self.use_local_output = use_local_output
        for p, what in ((self.input_layouts, "input"), (self.output_layouts, "output")):
            if isinstance(p, Partial):
                raise ValueError(f"{name}: a Partial {what} layout is not supported")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(input_layouts={self.input_layouts}, output_layouts={self.output_layouts})"


class ColwiseParallel(_LayerSplit):
    """Partitions a compatible module column-wise: an ``nn.Linear`` or ``nn.QuantizedLinear``'s
    weight rows (its output features) and bias, or an ``nn.Embedding``'s embedding dimension,
    split into one equal chunk per mesh rank.

    Keyword Args:
        input_layouts (Placement, optional): the layout of the input; default ``Replicate()``
            (``Shard(1)``: sequence-parallel input, gathered before the layer).
        output_layouts (Placement, optional): the layout of the output; default ``Shard(-1)``
            (the local features); ``Replicate()`` all-gathers them (a vocabulary-parallel LM head
            whose logits every rank gets whole).
        use_local_output (bool): accepted for PyTorch's signature; outputs are always local tensors.

    Example::

        >>> parallelize_module(model.mlp, tp_mesh, {"up_proj": ColwiseParallel(),
        ...                                         "down_proj": RowwiseParallel()})
    """

    _default_layouts = (Replicate(), Shard(-1))
    desired_input_layouts = Replicate()

    def _check(self, fqn: str, module: Module, device_mesh) -> None:
        kind = _module_kind("ColwiseParallel", fqn, module)
        n = device_mesh.size()
        if kind == "embedding":
            _divides("ColwiseParallel", fqn, "embedding_dim", module.embedding_dim, n)
        else:
            _divides("ColwiseParallel", fqn, "out_features", module.out_features, n)

    def _apply(self, module: Module, device_mesh) -> Module:
        mg = MeshGroup(device_mesh)
        src = self.src_data_rank
        what = f"ColwiseParallel({type(module).__name__})"
        if isinstance(module, Embedding):
            _shard(module, "weight", 1, mg, src, what)
            module.embedding_dim //= mg.size
        else:
            _shard(module, "qweight" if isinstance(module, QuantizedLinear) else "weight", 0, mg, src, what)
            _shard(module, "bias", 0, mg, src, what)
            module.out_features //= mg.size
            # a linear layer's input gradient is partial (each rank's rows give part of it)
            module.register_forward_pre_hook(_input_hook(self.input_layouts, self.desired_input_layouts, mg, True,
                                                         what))
        out_src, out_dst = Shard(-1), self.output_layouts
        if out_dst != out_src:
            module.register_forward_hook(lambda m, args, out: redistribute_output(out, out_src, out_dst, mg, what))
        return module


class RowwiseParallel(_LayerSplit):
    """Partitions a compatible module row-wise: an ``nn.Linear`` or ``nn.QuantizedLinear``'s
    weight columns (its input features) split into one equal chunk per mesh rank (packed GGUF
    rows at whole quantization blocks: 32 weights for Q4_0/Q4_1/Q8_0, 256 for Q4_K/Q6_K), the
    bias replicated and added once after the partial outputs are summed; or an ``nn.Embedding``'s
    rows (a vocabulary-parallel embedding: rank i holds tokens [i V/N, (i + 1) V/N), other
    tokens give 0 before the sum).

    Keyword Args:
        input_layouts (Placement, optional): the layout of the input; default ``Shard(-1)`` (the
            local features of a ColwiseParallel layer before it). An embedding's token ids
            should be ``Replicate()``.
        output_layouts (Placement, optional): the layout of the output; default ``Replicate()``
            (all-reduce); ``Shard(1)`` reduce-scatters along the sequence (sequence parallelism).
        use_local_output (bool): accepted for PyTorch's signature; outputs are always local tensors.
    """

    _default_layouts = (Shard(-1), Replicate())

    def _check(self, fqn: str, module: Module, device_mesh) -> None:
        kind = _module_kind("RowwiseParallel", fqn, module)
        n = device_mesh.size()
        name = fqn or "the module"
        if kind == "embedding":
            _divides("RowwiseParallel", fqn, "num_embeddings", module.num_embeddings, n)
            if module.max_norm is not None or module.scale_grad_by_freq:
                raise NotImplementedError(f"RowwiseParallel: {name}: a vocabulary-parallel embedding with "
                                          "max_norm or scale_grad_by_freq is not supported")
            return
        _divides("RowwiseParallel", fqn, "in_features", module.in_features, n)
        if kind == "quantized":
            block = QUANT_BLOCK.get(module.qtype)
            fmt = SUPPORTED_QTYPES.get(module.qtype, str(module.qtype))
            if block is None:
                raise NotImplementedError(f"RowwiseParallel: {name} holds {fmt} weights, whose rows tinytorch "
                                          "cannot split by columns")
            if (module.in_features // n) % block:
                raise NotImplementedError(
                    f"RowwiseParallel: {name} holds {fmt} weights packed in blocks of {block} along its "
                    f"in_features={module.in_features}; split over {n} ranks a shard would hold "
                    f"{module.in_features // n} columns, not a whole number of blocks (a {fmt} row splits "
                    f"only at multiples of {block} columns)")

    def _apply(self, module: Module, device_mesh) -> Module:
        mg = MeshGroup(device_mesh)
        src = self.src_data_rank
        what = f"RowwiseParallel({type(module).__name__})"
        out_dst = self.output_layouts
        if isinstance(module, Embedding):
            _shard(module, "weight", 0, mg, src, what)
            module.num_embeddings //= mg.size
            module._tp_vocab_start = mg.rank * module.num_embeddings
            object.__setattr__(module, "forward", MethodType(_vocab_parallel_forward, module))
            module.register_forward_pre_hook(_input_hook(self.input_layouts, Replicate(), mg, False, what))
            module.register_forward_hook(
                lambda m, args, out: redistribute_output(out, Partial(), out_dst, mg, what, fresh=True))
            return module
        _shard(module, "qweight" if isinstance(module, QuantizedLinear) else "weight", 1, mg, src, what)
        _shard(module, "bias", None, mg, src, what)
        module.in_features //= mg.size
        module.register_forward_pre_hook(_input_hook(self.input_layouts, Shard(-1), mg, False, what))
        if module.bias is None:
            module.register_forward_hook(
                lambda m, args, out: redistribute_output(out, Partial(), out_dst, mg, what, fresh=True))
        else:
            object.__setattr__(module, "forward", MethodType(_forward_without_bias, module))

            def reduce_then_bias(m, args, out):
                out = redistribute_output(out, Partial(), out_dst, mg, what, fresh=True)
                bias = m.bias
                return out + (bias if bias.dtype == out.dtype else bias.to(out.dtype))
            module.register_forward_hook(reduce_then_bias)
        return module


class SequenceParallel(ParallelStyle):
    """Runs a module (a norm, dropout: one that treats each position alone) on the local shard
    of the sequence, its input and output ``Shard(sequence_dim)``; its parameters stay whole
    (replicated from ``src_data_rank``) and their gradients, each rank's from its own positions,
    are summed over the ranks.

    Keyword Args:
        sequence_dim (int): the sequence dimension of the input; default 1.
        use_local_output (bool): accepted for PyTorch's signature; outputs are always local tensors.
    """

    def __init__(self, *, sequence_dim: int = 1, use_local_output: bool = False) -> None:
        self.sequence_sharding = Shard(sequence_dim)
        self.use_local_output = use_local_output

    def _apply(self, module: Module, device_mesh) -> Module:
        mg = MeshGroup(device_mesh)
        for sub in module.modules():
            for name in list(sub._parameters):
                _shard(sub, name, None, mg, self.src_data_rank, "SequenceParallel")
                p = sub._parameters[name]
                if p is not None and p.requires_grad:
                    p.register_hook(lambda g: fn.all_reduce(g, mg))
        return module

    def __repr__(self) -> str:
        return f"SequenceParallel(sequence_dim={self.sequence_sharding.dim})"


def _layouts(value, what: str) -> Optional[tuple]:
    if value is None:
        return None
    seq = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    for p in seq:
        if p is not None and not isinstance(p, Placement):
            raise TypeError(f"{what}: expected Placements (or None for a non-tensor), got {p!r}")
    return seq


class PrepareModuleInput(ParallelStyle):
    """Moves a module's positional inputs from ``input_layouts`` to ``desired_input_layouts``
    before its forward (one placement per input, None for inputs left alone): ``Shard(d)`` to
    ``Replicate()`` all-gathers, ``Replicate()`` to ``Shard(d)`` keeps the local chunk.

    Keyword Args:
        input_layouts, desired_input_layouts (tuple of Placement or None): per positional input.
        input_kwarg_layouts, desired_input_kwarg_layouts (dict): keyword inputs; not supported
            (tinytorch's forward pre-hooks see the positional inputs only).
        use_local_output (bool): accepted for PyTorch's signature; inputs stay local tensors.
    """

    def __init__(self, *, input_layouts=None, desired_input_layouts=None, input_kwarg_layouts=None,
                 desired_input_kwarg_layouts=None, use_local_output: bool = False) -> None:
        self._shards = False
        self.input_layouts = _layouts(input_layouts, "PrepareModuleInput: input_layouts")
        self.desired_input_layouts = _layouts(desired_input_layouts, "PrepareModuleInput: desired_input_layouts")
        if (self.input_layouts is None) != (self.desired_input_layouts is None) or (
                self.input_layouts is not None and len(self.input_layouts) != len(self.desired_input_layouts)):
            raise ValueError("PrepareModuleInput: input_layouts and desired_input_layouts must have the same length, "
                             f"got {self.input_layouts} and {self.desired_input_layouts}")
        if input_kwarg_layouts or desired_input_kwarg_layouts:
            raise NotImplementedError("PrepareModuleInput: keyword-input layouts are not supported (pass the "
                                      "inputs positionally)")
        self.use_local_output = use_local_output

    def _apply(self, module: Module, device_mesh) -> Module:
        if self.input_layouts is None:
            return module
        mg = MeshGroup(device_mesh)
        layouts = list(zip(self.input_layouts, self.desired_input_layouts))

        def hook(m, args):
            if len(args) < len(layouts):
                raise ValueError(f"PrepareModuleInput: {type(m).__name__} got {len(args)} positional inputs, the "
                                 f"style describes {len(layouts)}")
            moved = tuple(redistribute_input(a, s, d, mg, False, "PrepareModuleInput")
                          for a, (s, d) in zip(args, layouts))
            return moved + tuple(args[len(layouts):])
        module.register_forward_pre_hook(hook)
        return module


class PrepareModuleOutput(ParallelStyle):
    """Moves a module's outputs (a tensor or a tuple of them) from ``output_layouts`` to
    ``desired_output_layouts`` after its forward (one placement per output, None to leave it):
    ``Partial()`` to ``Replicate()`` all-reduces, ``Shard(d)`` to ``Replicate()`` all-gathers.

    Keyword Args:
        output_layouts, desired_output_layouts (Placement or tuple of them).
        use_local_output (bool): accepted for PyTorch's signature; outputs are local tensors.
    """

    def __init__(self, *, output_layouts, desired_output_layouts, use_local_output: bool = True) -> None:
        self._shards = False
        self.output_layouts = _layouts(output_layouts, "PrepareModuleOutput: output_layouts")
        self.desired_output_layouts = _layouts(desired_output_layouts, "PrepareModuleOutput: desired_output_layouts")
        if len(self.output_layouts) != len(self.desired_output_layouts):
            raise ValueError("PrepareModuleOutput: output_layouts and desired_output_layouts must have the same "
                             f"length, got {self.output_layouts} and {self.desired_output_layouts}")
        self.use_local_output = use_local_output

    def _apply(self, module: Module, device_mesh) -> Module:
        mg = MeshGroup(device_mesh)
        layouts = list(zip(self.output_layouts, self.desired_output_layouts))

        def hook(m, args, out):
            single = not isinstance(out, tuple)
            outs = (out,) if single else out
            if len(outs) != len(layouts):
                raise ValueError(f"PrepareModuleOutput: {type(m).__name__} returned {len(outs)} outputs, the style "
                                 f"describes {len(layouts)}")
            moved = tuple(redistribute_output(o, s, d, mg, "PrepareModuleOutput") for o, (s, d) in zip(outs, layouts))
            return moved[0] if single else moved
        module.register_forward_hook(hook)
        return module


class PrepareModuleInputOutput(ParallelStyle):
    """:class:`PrepareModuleInput` and :class:`PrepareModuleOutput` on one module (their keyword
    arguments, ``use_local_input`` for the former's ``use_local_output``)."""

    def __init__(self, *, input_layouts=None, desired_input_layouts=None, input_kwarg_layouts=None,
                 desired_input_kwarg_layouts=None, use_local_input: bool = False, output_layouts,
                 desired_output_layouts, use_local_output: bool = True) -> None:
        self._shards = False
        self.prepare_input = PrepareModuleInput(input_layouts=input_layouts, desired_input_layouts=desired_input_layouts,
                                                input_kwarg_layouts=input_kwarg_layouts,
                                                desired_input_kwarg_layouts=desired_input_kwarg_layouts,
                                                use_local_output=use_local_input)
        self.prepare_output = PrepareModuleOutput(output_layouts=output_layouts,
                                                  desired_output_layouts=desired_output_layouts,
                                                  use_local_output=use_local_output)

    def _apply(self, module: Module, device_mesh) -> Module:
        self.prepare_input._apply(module, device_mesh)
        return self.prepare_output._apply(module, device_mesh)
