"""``FSDPParamGroup``: the parameters one ``fully_shard`` call manages, and their communication.

Forward: ``unshard`` copies every parameter's padded shard (cast to ``param_dtype``) into one flat
buffer and all-gathers it (one collective per group; ``async_op`` so it can be issued early, see
"Prefetching" in docs/distributed.md); ``wait_for_unshard`` copies each parameter's rows out of the
gathered buffer. ``pre_forward`` then records one autograd node, ``FSDPAllGatherBackward``, whose
inputs are the sharded parameters and whose outputs are the unsharded tensors the module computes
with (set as instance attributes over the registered shards, so ``module.parameters()`` stays the
shards). Its backward receives every unsharded gradient once all their consumers have run (the
engine's dependency count), reduce-scatters them (one collective, averaged, in ``reduce_dtype``)
and returns each rank's rows as the shards' gradients, which autograd accumulates into ``.grad``.

Resharding after forward: tinytorch storages cannot be resized in place, and the graph saves the
unsharded tensors for backward, so freeing them means taking them out of the graph:
``free_after_forward`` walks the nodes the forward recorded (sequence numbers after the
all-gather node's), replaces every saved reference to an unsharded storage (or a view of one) with
an empty placeholder, and remembers where; ``restore`` (the pre-backward hook) all-gathers again
and puts the new storage, with each view's geometry, back into those places before the first of
those nodes runs. A reference held outside the graph (a module keeping a weight in an attribute)
is not found and merely keeps that storage alive: memory, never correctness.
"""
from __future__ import annotations

from typing import Optional

from tinytorch._core.graph import _make_node, _set_history, is_grad_enabled
from tinytorch._tensor.creation import empty, zeros
from tinytorch._ops.shape import cat
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributed import collectives as _coll
from tinytorch.distributed.collectives import ReduceOp

_MARK = None   # a leaf whose nodes only mark a sequence number (a forward of frozen parameters)


def _mark_seq() -> int:
    """The sequence number of a node made now: every node recorded later has a larger one."""
    global _MARK
    if _MARK is None:
        _MARK = zeros(1).requires_grad_(True)
    return _make_node("FSDPMark", None, (_MARK,))._seq


class _ForwardRecord:
    """What one forward call of a group left for its backward."""
    __slots__ = ("has_post_backward", "post_backward_done", "segment", "position", "pre_backward_done")

    def __init__(self) -> None:
        self.has_post_backward = False
        self.post_backward_done = False
        self.segment: Optional[_FreedSegment] = None
        self.position = -1
        self.pre_backward_done = False


class _FreedSegment:
    """The saved-tensor slots of one forward's graph that held an unsharded parameter, emptied by
    ``free_after_forward`` and refilled by ``restore``."""
    __slots__ = ("records", "wrappers", "restored")

    def __init__(self, records: list, wrappers: list) -> None:
        self.records = records
        self.wrappers = wrappers
        self.restored = False


class FSDPParamGroup:
    """The ``FSDPParam`` s of one ``fully_shard`` call over one process group."""

    def __init__(self, fsdp_params: list, process_group, mp_policy) -> None:
        self.fsdp_params = fsdp_params
        self.process_group = process_group
        self.mp_policy = mp_policy
        fp0 = fsdp_params[0]
        self.world, self.device = fp0.world, fp0.device
        self.orig_dtype = fp0.orig_dtype
        self.param_dtype = mp_policy.param_dtype or self.orig_dtype
        self.reduce_dtype = mp_policy.reduce_dtype or mp_policy.param_dtype
        self.offsets = []
        total = 0
        for fp in fsdp_params:
            self.offsets.append(total)
            total += fp.padded_numel
        self.total = total                        # elements per rank in the flat all-gather input
        self.reshard_after_forward = True
        self.reshard_after_backward = True
        self.requires_gradient_sync = True
        self.gradient_divide_factor: Optional[float] = None
        self._raw: Optional[list] = None          # unsharded tensors (no autograd history)
        self._wrappers: Optional[list] = None     # what the current forward computes with
        self._inflight = None                     # (Work, output, input) of an issued all-gather
        self._installed = False
        self._accum: Optional[list] = None        # unsharded gradients kept while sync is off
        self._pending: list = []                  # freed segments whose backward has not begun

    # ------------------------------------------------------------ unshard / reshard
    @property
    def is_unsharded(self) -> bool:
        return self._raw is not None

    def unshard(self, async_op: bool = False) -> None:
        """Issues the all-gather (unless the parameters are unsharded or one is in flight); with
        ``async_op=False`` also waits for it."""
        if self._raw is None and self._inflight is None:
            with no_grad():
                parts = [fp.padded_local().reshape(-1) for fp in self.fsdp_params]
                inp = cat(parts) if len(parts) > 1 else parts[0]
                if inp.dtype != self.param_dtype:
                    inp = inp.to(self.param_dtype)
                out = empty(self.world * self.total, dtype=self.param_dtype, device=self.device)
                work = _coll.all_gather_into_tensor(out, inp, group=self.process_group, async_op=True)
            self._inflight = (work, out, inp)
        if not async_op:
            self.wait_for_unshard()

    def wait_for_unshard(self) -> None:
        """Makes the unsharded tensors available (all-gathering now if nothing was issued)."""
        if self._raw is not None:
            return
        if self._inflight is None:
            self.unshard(async_op=True)
        work, out, _ = self._inflight
        self._inflight = None
        work.wait()
        gathered = out.view(self.world, self.total)
        raw = []
        with no_grad():
            for fp, off in zip(self.fsdp_params, self.offsets):
                t = fp.unsharded_from(gathered, off)
                if len(self.fsdp_params) > 1 and t._impl.storage_ptr == out._impl.storage_ptr:
                    t = t.clone()    # one storage per parameter: restore() finds them by storage
                raw.append(t)
        self._raw = raw

    def reshard(self) -> None:
        """Drops the unsharded tensors (an all-gather in flight is completed first)."""
        if self._inflight is not None:
            self._inflight[0].wait()
            self._inflight = None
        self._uninstall()
        self._raw = None
        self._wrappers = None

    def new_iteration(self) -> None:
        """At the root's forward: all-gathers prefetched for a backward that never came, and the
        graphs of earlier forwards, are dropped (the shards may have been stepped since)."""
        if self._inflight is not None:
            self._inflight[0].wait()
            self._inflight = None
        self._pending = []

    def _install(self, tensors: list) -> None:
        for fp, t in zip(self.fsdp_params, tensors):
            for module, name in fp.locations:
                module.__dict__[name] = t           # found before Module.__getattr__ looks in _parameters
        self._installed = True

    def _uninstall(self) -> None:
        if self._installed:
            for fp in self.fsdp_params:
                for module, name in fp.locations:
                    module.__dict__.pop(name, None)
            self._installed = False

    # ------------------------------------------------------------ forward
    def pre_forward(self, record: _ForwardRecord) -> Optional[int]:
        """Unshards and installs the tensors the forward uses; with grad enabled they are outputs
        of one all-gather node over the shards. Returns the sequence number the forward's nodes
        come after (None without grad)."""
        self.wait_for_unshard()
        if not is_grad_enabled():
            self._wrappers = list(self._raw)
            self._install(self._wrappers)
            return None
        shards = tuple(fp.sharded_param for fp in self.fsdp_params)

        def backward(node, *grads):
            return self._all_gather_backward(record, grads)
        node = _make_node("FSDPAllGatherBackward", backward, shards, len(shards))
        wrappers = []
        for i, (fp, t) in enumerate(zip(self.fsdp_params, self._raw)):
            w = t.detach()
            if node is not None and fp.requires_grad:
                _set_history(w, node, i)
            wrappers.append(w)
        self._wrappers = wrappers
        self._install(wrappers)
        return node._seq if node is not None else _mark_seq()

    def free_after_forward(self, output_nodes: list, seq_start: int) -> _FreedSegment:
        """Empties every slot of the forward's graph (nodes after ``seq_start``, reached from
        ``output_nodes``) that saved an unsharded storage, and drops the unsharded tensors."""
        owner = {t._impl.storage_ptr: i for i, t in enumerate(self._raw)}
        records, seen, stack = [], set(), list(output_nodes)
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen or node._seq <= seq_start:
                continue
            seen.add(id(node))
            saved = node._saved
            if saved:
                for idx, (t, impl, _version, is_output) in enumerate(saved):
                    if impl is not None and impl.storage_ptr in owner:
                        records.append((node, idx, owner[impl.storage_ptr], impl.shape, tuple(impl.stride()),
                                        impl.storage_offset, t, is_output))
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        placeholder = empty(0, dtype=self.param_dtype, device=self.device)._impl
        for node, idx, _, _, _, _, t, is_output in records:
            node._saved[idx] = (t, placeholder, placeholder.version, is_output)
            if t is not None:
                t._impl = placeholder
        for w in self._wrappers:
            w._impl = placeholder
        segment = _FreedSegment(records, self._wrappers)
        self._pending.append(segment)
        self._uninstall()
        self._raw = None
        self._wrappers = None
        return segment

    def restore(self, segment: _FreedSegment) -> None:
        """All-gathers again and refills the slots ``free_after_forward`` emptied."""
        if segment.restored:
            return
        self.wait_for_unshard()
        fresh: dict = {}                     # id(saved tensor) -> its new TensorImpl
        for node, idx, i, shape, stride, offset, t, is_output in segment.records:
            impl = fresh.get(id(t)) if t is not None else None
            if impl is None:
                base = self._raw[i]._impl
                impl = base.alias() if (shape, stride, offset) == (base.shape, tuple(base.stride()),
                                                                   base.storage_offset) \
                    else base.as_strided(shape, stride, offset)
                if t is not None:
                    fresh[id(t)] = impl
                    t._impl = impl
            if node._saved is not None:
                node._saved[idx] = (t, impl, impl.version, is_output)
        for i, w in enumerate(segment.wrappers):
            if id(w) not in fresh:
                w._impl = self._raw[i]._impl.alias()
        segment.restored = True
        if segment in self._pending:
            self._pending.remove(segment)
        self._wrappers = segment.wrappers
        self._install(segment.wrappers)       # a checkpointed forward run again in backward uses them

    @property
    def needs_restore(self) -> bool:
        return bool(self._pending) and self._raw is None and self._inflight is None

    # ------------------------------------------------------------ backward
    def _all_gather_backward(self, record: _ForwardRecord, grads: tuple) -> tuple:
        out = self.reduce_grads(grads)
        if not record.has_post_backward and not _nested_backward():
            # no input required grad, so no post-backward node: this node is the group's last
            self.post_backward(record)
        return out

    def post_backward(self, record: _ForwardRecord) -> None:
        if record.post_backward_done:
            return
        record.post_backward_done = True
        if self.reshard_after_backward:
            self.reshard()

    def reduce_grads(self, grads: tuple) -> tuple:
        """Reduce-scatters the unsharded gradients (averaged over the group, or divided by the
        gradient divide factor) and returns each shard's rows in its dtype; with gradient sync
        off, accumulates them unsharded instead and returns no gradients."""
        n = len(self.fsdp_params)
        with no_grad():
            rdtype = self.reduce_dtype
            if not self.requires_gradient_sync:
                if self._accum is None:
                    self._accum = [None] * n
                for i, g in enumerate(grads):
                    if g is None:
                        continue
                    g = g.to(rdtype or g.dtype)
                    self._accum[i] = g.clone() if self._accum[i] is None else self._accum[i].add_(g)
                return (None,) * n
            accum, self._accum = self._accum, None
            parts = []
            for i, fp in enumerate(self.fsdp_params):
                g = grads[i]
                dt = rdtype or (g.dtype if g is not None else self.param_dtype)
                if accum is not None and accum[i] is not None:
                    g = accum[i] if g is None else accum[i].add_(g.to(accum[i].dtype))
                parts.append(fp.padded_grad_2d(g, dt))
            dt = parts[0].dtype
            parts = [p if p.dtype == dt else p.to(dt) for p in parts]
            flat = (cat(parts, 1) if n > 1 else parts[0]).reshape(-1)
            out = empty(self.total, dtype=dt, device=self.device)
            if self.gradient_divide_factor is None:
                op = ReduceOp.AVG
            else:
                flat.mul_(1.0 / self.gradient_divide_factor)
                op = ReduceOp.SUM
            _coll.reduce_scatter_tensor(out, flat, op=op, group=self.process_group)
            result = []
            for fp, off in zip(self.fsdp_params, self.offsets):
                if not fp.requires_grad:
                    result.append(None)
                    continue
                g = out.narrow(0, off, fp.local_rows * fp.inner_numel).view((fp.local_rows,) + fp.inner)
                result.append(g.to(fp.orig_dtype) if g.dtype != fp.orig_dtype else g.clone())
            return tuple(result)


def _nested_backward() -> bool:
    """Inside a backward run started from another one's node (a reentrant checkpoint's)."""
    from tinytorch._core import engine
    return len(getattr(engine._engine_state, "runs", None) or ()) > 1


def in_backward() -> bool:
    """Inside a backward run (a forward now is a checkpoint's recomputation)."""
    from tinytorch._core import engine
    return bool(getattr(engine._engine_state, "runs", None))
