"""``DistributedDataParallel`` (PyTorch's name, arguments and semantics, simplified).

* Construction: checks that every rank has the same parameter shapes, then broadcasts parameters
  and buffers from rank 0 (coalesced per dtype).
* Buckets: parameters in reverse registration order (roughly the order backward produces their
  gradients), split at ``bucket_cap_mb`` (the first bucket at 1 MiB, as PyTorch), one flat
  buffer per bucket. Buckets are not rebuilt from the observed order after the first iteration.
* Backward: a post-accumulate-grad hook on each parameter copies its gradient into its bucket;
  when a bucket is complete its all-reduce is launched asynchronously (pre-divided by the world
  size, so the result is the average), in bucket order on every rank, overlapping with the rest of
  backward. The hook of the last parameter to become ready waits for all buckets and writes the
  averaged gradients back into ``param.grad`` (so no autograd-engine callback is needed).
* ``no_sync()``: gradients accumulate locally; the first backward outside it reduces the sum.
* ``find_unused_parameters=True``: after the forward, parameters unreachable from the outputs'
  graph are marked ready with zero gradients; a per-parameter "used" count is all-reduced so
  parameters unused on every rank keep their ``.grad`` (None), as PyTorch. Without it, a
  parameter that gets no gradient leaves the reduction unfinished and the next forward raises.
* ``gradient_as_bucket_view=True``: after the reduction ``param.grad`` is a view into its bucket
  (saves a copy per step).
* ``broadcast_buffers``: buffers are broadcast from rank 0 before each forward.
"""
from __future__ import annotations

import contextlib
import hashlib

from tinytorch import distributed as dist
from tinytorch._core.graph import is_grad_enabled
from tinytorch.distributed._tensor_tree import map_tensors, tensors_in
from tinytorch._tensor.creation import tensor, zeros
from tinytorch._core.dtype import device as _device, int32
from tinytorch._ops.shape import cat
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn.modules.module import Module

_FIRST_BUCKET_BYTES = 1024 * 1024


class _Bucket:
    def __init__(self, index: int, params: list, dtype, device) -> None:
        self.index = index
        self.params = params                      # indices into DDP._params
        self.dtype, self.device = dtype, device
        self.flat = None
        self.views: list = []
        self.pending = 0
        self.work = None


class DistributedDataParallel(Module):
    """Data parallelism across processes: wraps ``module`` and averages gradients across ranks."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb: float = 25,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False) -> None:
        super().__init__()
        if not dist.is_initialized():
            raise RuntimeError("DistributedDataParallel: call tinytorch.distributed.init_process_group() first")
        self.module = module
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.world_size = dist.get_world_size(self.process_group)
        self.device_ids = list(device_ids) if device_ids is not None else None
        self.device = _device(self.device_ids[0]) if self.device_ids else None
        if self.device is not None and self.device.type == "cuda" and self.device.index is None:
            self.device = _device("cuda", 0)
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        object.__setattr__(self, "_params", [p for p in module.parameters() if p.requires_grad])
        self._index = {id(p): i for i, p in enumerate(self._params)}
        self._verify_shapes()
        self._sync_module_states()
        self._build_buckets()
        self._expect = False
        self._ready = [False] * len(self._params)
        self._used_work = None
        self._used = None
        self._next_bucket = 0
        self._handles = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(self._params)]

    # ------------------------------------------------------------ construction
    def _verify_shapes(self) -> None:
        sig = ";".join(f"{tuple(p.shape)}:{p.dtype.name}" for p in self.module.parameters())
        digest = hashlib.sha1(sig.encode()).hexdigest()[:16]
        mine = [len(self._params), digest]
        everyone: list = [None] * self.world_size
        dist.all_gather_object(everyone, mine, group=self.process_group)
        if any(e != everyone[0] for e in everyone):
            raise RuntimeError("DistributedDataParallel: the model's parameters differ across ranks "
                               f"(count, shape digest per rank: {everyone}); every rank must build the same model")

    def _coalesced_broadcast(self, tensors: list) -> None:
        src = dist.get_global_rank(self.process_group, 0) if self.process_group is not dist.group.WORLD else 0
        by_kind: dict = {}
        for t in tensors:
            by_kind.setdefault((t.dtype.name, str(t.device)), []).append(t)
        with no_grad():
            for ts in by_kind.values():
                flat = cat([t.detach().reshape(-1) for t in ts]) if len(ts) > 1 else ts[0].detach().reshape(-1).clone()
                dist.broadcast(flat, src, group=self.process_group)
                off = 0
                for t in ts:
                    n = t.numel()
                    t._impl.copy_(flat.narrow(0, off, n).view(tuple(t.shape))._impl, False)
                    off += n

    def _sync_module_states(self) -> None:
        ts = list(self.module.parameters()) + [b for b in self.module.buffers()]
        if ts and self.world_size > 1:
            self._coalesced_broadcast(ts)

    def _build_buckets(self) -> None:
        self._buckets: list[_Bucket] = []
        self._where: list = [None] * len(self._params)
        cur: list = []
        cur_bytes = 0
        cap = _FIRST_BUCKET_BYTES
        order = list(range(len(self._params)))[::-1]

        def close():
            nonlocal cur, cur_bytes, cap
            if cur:
                p0 = self._params[cur[0]]
                self._buckets.append(_Bucket(len(self._buckets), cur, p0.dtype, p0.device))
                cur, cur_bytes, cap = [], 0, self.bucket_bytes_cap
        for i in order:
            p = self._params[i]
            if cur:
                p0 = self._params[cur[0]]
                if p.dtype != p0.dtype or str(p.device) != str(p0.device):
                    close()
            cur.append(i)
            cur_bytes += p.numel() * p.element_size()
            if cur_bytes >= cap:
                close()
        close()
        for b in self._buckets:
            total = sum(self._params[i].numel() for i in b.params)
            b.flat = zeros(total, dtype=b.dtype, device=b.device)
            off = 0
            for j, i in enumerate(b.params):
                p = self._params[i]
                n = p.numel()
                b.views.append(b.flat.narrow(0, off, n).view(tuple(p.shape)))
                self._where[i] = (b, j)
                off += n

    # ------------------------------------------------------------ forward
    def forward(self, *inputs, **kwargs):
        if self._expect:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This "
                "error indicates that your module has parameters that were not used in producing loss (or "
                "backward was not called after the previous forward). Pass find_unused_parameters=True to "
                "DistributedDataParallel, and make sure all forward outputs participate in the loss.")
        if self.broadcast_buffers and self.world_size > 1 and self.require_forward_param_sync:
            bufs = list(self.module.buffers())
            if bufs:
                self._coalesced_broadcast(bufs)
        if self.device is not None:
            inputs = map_tensors(lambda t: t.to(self.device), inputs)
            kwargs = map_tensors(lambda t: t.to(self.device), kwargs)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync and self._params:
            self._prepare_for_backward(out)
        return out

    def _prepare_for_backward(self, out) -> None:
        self._expect = True
        self._next_bucket = 0
        self._ready = [False] * len(self._params)
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._used_work = None
        if not self.find_unused_parameters:
            return
        reached = set()
        seen = set()
        stack = [t.grad_fn for t in tensors_in(out) if t.grad_fn is not None]
        for t in tensors_in(out):
            if t.grad_fn is None and t.requires_grad:
                reached.add(id(t))
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            var = getattr(node, "variable", None)
            if var is not None:
                reached.add(id(var))
            for nxt, _ in node.next_functions:
                if nxt is not None and id(nxt) not in seen:
                    stack.append(nxt)
        used = [1 if id(p) in reached else 0 for p in self._params]
        dev = self._buckets[0].device if self._buckets else None
        self._used = tensor(used, dtype=int32, device=dev)
        # launched before any bucket so every rank issues collectives in the same order
        self._used_work = dist.all_reduce(self._used, group=self.process_group, async_op=True)
        for i, u in enumerate(used):
            if not u:
                b, j = self._where[i]
                with no_grad():
                    b.views[j].fill_(0)
                self._mark_ready(i)

    # ------------------------------------------------------------ backward
    def _make_hook(self, i: int):
        def hook(param):
            if not self._expect or self._ready[i]:
                return
            b, j = self._where[i]
            g = param.grad
            view = b.views[j]
            if g is not None and g._impl.data_ptr != view._impl.data_ptr:
                view._impl.copy_(g.detach()._impl, False)
            self._mark_ready(i)
        return hook

    def _mark_ready(self, i: int) -> None:
        self._ready[i] = True
        b, _ = self._where[i]
        b.pending -= 1
        if b.pending == 0:
            self._launch_ready()

    def _launch_ready(self) -> None:
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            b = self._buckets[self._next_bucket]
            with no_grad():
                if self.world_size > 1 and b.dtype.is_floating_point:
                    b.flat.mul_(1.0 / self.world_size)
                b.work = dist.all_reduce(b.flat, group=self.process_group, async_op=True)
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finalize()

    def _finalize(self) -> None:
        for b in self._buckets:
            b.work.wait()
        used = None
        if self._used_work is not None:
            self._used_work.wait()
            used = self._used.cpu().tolist()
        with no_grad():
            for b in self._buckets:
                for j, i in enumerate(b.params):
                    p = self._params[i]
                    view = b.views[j]
                    if used is not None and used[i] == 0:
                        continue           # unused on every rank: leave .grad as it is
                    if self.gradient_as_bucket_view:
                        if p.grad is None or p.grad._impl.data_ptr != view._impl.data_ptr:
                            p.grad = view
                    elif p.grad is None:
                        p.grad = view.clone()
                    else:
                        p.grad._impl.copy_(view._impl, False)
        self._expect = False

    # ------------------------------------------------------------ API
    @contextlib.contextmanager
    def no_sync(self):
        """Context manager disabling gradient synchronization: grads accumulate locally until the
        first forward/backward outside it."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def __getstate__(self):
        raise TypeError("DistributedDataParallel is not picklable; save .module.state_dict() instead")

    def extra_repr(self) -> str:
        return f"world_size={self.world_size}, buckets={len(self._buckets)}"
