"""DDP vs single-process training on the concatenated batch; no_sync; unused parameters."""
import copy

import numpy as np

import tinytorch as tt
import tinytorch.distributed as dist
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.nn.parallel import DistributedDataParallel as DDP

from _worker_setup import init_worker

device, dev, rank, ws = init_worker()
if device == "cuda":
    tt.backends.cudnn.allow_tf32 = False        # compared with single-process training at float32 tolerance


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc1 = nn.Linear(4 * 6 * 6, 16)
        self.register_buffer("counter", tt.zeros(3))
        self.fc2 = nn.Linear(16, 5)
        self.extra = nn.Linear(5, 5)      # used only when use_extra
        self.never = nn.Linear(5, 5)      # never used

    def forward(self, x, use_extra=False):
        x = F.relu(self.conv(x)).flatten(1)
        x = self.fc2(F.relu(self.fc1(x)))
        return self.extra(x) if use_extra else x


def batch(step, r, n=4):
    rng = np.random.default_rng(1000 * step + r)
    return (tt.tensor(rng.standard_normal((n, 1, 8, 8)), dtype=tt.float32),
            tt.tensor(rng.integers(0, 5, n), dtype=tt.int64))


def flat_params(m):
    return np.concatenate([p.detach().cpu().numpy().reshape(-1) for p in m.parameters()])


def check_same_everywhere(m, what):
    mine = tt.tensor(flat_params(m), device=dev)
    allp = tt.zeros(ws * mine.numel(), device=dev)
    dist.all_gather_into_tensor(allp, mine)
    a = allp.cpu().numpy().reshape(ws, -1)
    for r in range(1, ws):
        np.testing.assert_array_equal(a[r], a[0], err_msg=f"{what}: params differ between rank 0 and {r}")


def run(kind, steps=3, **ddp_kw):
    tt.manual_seed(1234 + rank)                     # different init per rank: DDP must broadcast rank 0's
    model = Net().to(dev)
    if kind != "unused":
        del model.extra, model.never           # every parameter gets a gradient
    ddp = DDP(model, bucket_cap_mb=ddp_kw.pop("bucket_cap_mb", 0.001), **ddp_kw)
    ref = copy.deepcopy(model)                      # after the broadcast: rank 0's weights
    opt = tt.optim.SGD(ddp.parameters(), lr=0.1)
    ropt = tt.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(steps):
        micro = 2 if kind == "no_sync" else 1
        opt.zero_grad()
        ropt.zero_grad()
        for k in range(micro):
            x, y = batch(10 * step + k, rank)
            use_extra = kind == "unused" and rank == 0 and step % 2 == 0
            if k < micro - 1:
                with ddp.no_sync():
                    F.cross_entropy(ddp(x.to(dev), use_extra=use_extra), y.to(dev)).backward()
            else:
                F.cross_entropy(ddp(x.to(dev), use_extra=use_extra), y.to(dev)).backward()
            # reference: every rank's micro-batch concatenated, one process; the loss of a rank
            # that used the extra layer differs, so the reference sums per-rank losses / ws
            if kind == "unused":
                tot = None
                for r in range(ws):
                    xr, yr = batch(10 * step + k, r)
                    ue = r == 0 and step % 2 == 0
                    lr_ = F.cross_entropy(ref(xr.to(dev), use_extra=ue), yr.to(dev)) / ws
                    tot = lr_ if tot is None else tot + lr_
                tot.backward()
            else:
                xs, ys = zip(*[batch(10 * step + k, r) for r in range(ws)])
                F.cross_entropy(ref(tt.cat(list(xs)).to(dev)), tt.cat(list(ys)).to(dev)).backward()
        if kind == "unused":
            assert model.never.weight.grad is None, "a parameter unused on every rank keeps grad None"
            if step % 2 == 0:
                assert model.extra.weight.grad is not None
        opt.step()
        ropt.step()
        check_same_everywhere(model, kind)
    np.testing.assert_allclose(flat_params(model), flat_params(ref), rtol=2e-4, atol=2e-5,
                               err_msg=f"{kind}: DDP differs from single-process training")
    assert all(k.startswith("module.") for k in ddp.state_dict())
    return ddp


run("plain")
run("plain", gradient_as_bucket_view=True)
run("no_sync")
run("unused", find_unused_parameters=True)
# buffers are broadcast from rank 0 before each forward
tt.manual_seed(0)
d = DDP(Net().to(dev))
d.module.counter.fill_(float(rank + 7))
with tt.no_grad():
    d(batch(0, rank)[0].to(dev))
assert d.module.counter.cpu().tolist() == [7.0, 7.0, 7.0], d.module.counter
# without find_unused_parameters, a parameter without a gradient leaves the reduction unfinished
tt.manual_seed(0)
d = DDP(Net().to(dev))                 # extra and never get no gradient
x, y = batch(0, rank)
F.cross_entropy(d(x.to(dev)), y.to(dev)).backward()
try:
    d(x.to(dev))
    raise AssertionError("expected the unfinished-reduction error")
except RuntimeError as e:
    assert "find_unused_parameters=True" in str(e)
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: DDP OK", flush=True)
