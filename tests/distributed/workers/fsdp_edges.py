"""fully_shard in less common uses, each against single-process training (float32, 1e-5): a block
called twice in one forward (two all-gathers, two freed graphs, two reduce-scatters), a no_grad
forward between steps, a frozen parameter, gradient accumulation with reshard_after_backward off
until the last micro-batch; and the unshard()/reshard() and ignored_params API."""
import tinytorch as tt
import tinytorch.distributed as dist
from tinytorch.distributed.fsdp import fully_shard

from fsdp_common import GPT, batch, global_batch, loss_of, make_model, rel_close

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()


class Twice(GPT):
    def forward(self, idx, seg):
        x = self.tok(idx) + self.seg(seg)
        for b in self.blocks:
            x = b(b(x))
        return self.head(self.ln_f(x))

def run(model, sharded, steps=3, micro=1, eval_between=False, frozen=False, keep_unsharded=False):
    """Losses of ``steps`` AdamW steps of ``micro`` micro-batches each, sharded (this rank's batch)
    or in one process (every rank's batch)."""
    if frozen:
        model.blocks[0].ln.weight.requires_grad_(False)
    if sharded:
        for b in model.blocks:
            fully_shard(b)
        fully_shard(model)
    opt = tt.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    out = []
    for step in range(steps):
        opt.zero_grad()
        total = 0.0
        for k in range(micro):
            data = batch(micro * step + k, rank) if sharded else global_batch(micro * step + k, world)
            if sharded:
                last = k == micro - 1
                model.set_requires_gradient_sync(last)
                if keep_unsharded:        # no all-gather between micro-batches; resharded before the step
                    model.set_reshard_after_backward(last)
            loss = loss_of(model, *data) / micro
            loss.backward()
            total += float(loss.item())
        opt.step()
        if eval_between:
            with tt.no_grad():
                loss_of(model, *(batch(99, rank) if sharded else global_batch(99, world)))
        if sharded:
            t = tt.tensor(total)
            dist.all_reduce(t)
            total = float(t.item()) / world
        out.append(total)
    return out


tt.manual_seed(0)
want = run(Twice(), False)
tt.manual_seed(0)
rel_close(run(Twice(), True), want, 1e-5, "a block called twice in one forward")
for kw in ({"eval_between": True}, {"frozen": True}, {"micro": 3}):
    rel_close(run(make_model(), True, keep_unsharded="micro" in kw, **kw), run(make_model(), False, **kw), 1e-5,
              f"{kw}")

# unshard()/reshard(): the module's attributes are the whole tensors in between
m = make_model()
for b in m.blocks:
    fully_shard(b)
fully_shard(m)
handle = m.blocks[0].unshard(async_op=True)
handle.wait()
assert tuple(m.blocks[0].fc1.weight.shape) == (10, 8), m.blocks[0].fc1.weight.shape
m.blocks[0].reshard()
rows = 5 if world == 2 else (3 if rank < 3 else 1)           # 10 rows, ceil(10 / world) per rank
assert tuple(m.blocks[0].fc1.weight.shape) == (rows, 8), m.blocks[0].fc1.weight.shape
# ignored_params stay whole and unmanaged
m = make_model()
fully_shard(m.blocks[0], ignored_params={m.blocks[0].ln.weight})
assert tuple(m.blocks[0].ln.weight.shape) == (8,) and getattr(m.blocks[0].ln.weight, "_fsdp_param", None) is None
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: fsdp edges OK", flush=True)
