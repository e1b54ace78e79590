"""SyncBatchNorm across ranks (different batch sizes per rank) vs BatchNorm on the concatenated
global batch in one process: outputs, input gradients (of the sum of all ranks' losses), weight
and bias gradients (summed over ranks), running statistics; float64 and float32."""
import numpy as np

import tinytorch as tt
import tinytorch.distributed as dist
import tinytorch.nn as nn

from _worker_setup import init_worker

device, dev, rank, ws = init_worker()
C = 3


def rank_data(r, dtype):
    """Rank r's input (3 + r, C, 4) (shifted and scaled per channel) and output gradient."""
    rng = np.random.default_rng(100 + r)
    x = rng.standard_normal((3 + r, C, 4)) * np.array([1.0, 3.0, 0.5])[:, None] + np.array([0.0, 5.0, -2.0])[:, None]
    g = rng.standard_normal((3 + r, C, 4))
    return tt.tensor(x, dtype=dtype), tt.tensor(g, dtype=dtype)


def check(dtype, tol):
    tt.manual_seed(0)
    sbn = nn.SyncBatchNorm(C, momentum=0.3, dtype=dtype).to(dev)
    with tt.no_grad():
        sbn.weight.copy_(tt.tensor([1.5, -0.5, 2.0], dtype=dtype))
        sbn.bias.copy_(tt.tensor([0.1, 0.2, -0.3], dtype=dtype))
    ref = nn.BatchNorm1d(C, momentum=0.3, dtype=tt.float64)
    ref.load_state_dict({k: v.cpu().double() for k, v in sbn.state_dict().items()})
    x, g = rank_data(rank, dtype)
    x = x.to(dev).requires_grad_(True)
    y = sbn(x)
    y.backward(g.to(dev))
    # the reference: every rank's data, concatenated, through one BatchNorm1d in float64
    parts = [rank_data(r, tt.float64) for r in range(ws)]
    xa = tt.cat([p[0] for p in parts]).requires_grad_(True)
    ya = ref(xa)
    ya.backward(tt.cat([p[1] for p in parts]))
    lo = sum(3 + r for r in range(rank))
    mine = slice(lo, lo + 3 + rank)
    np.testing.assert_allclose(y.detach().cpu().double().numpy(), ya.detach().numpy()[mine], *tol)
    np.testing.assert_allclose(x.grad.cpu().double().numpy(), xa.grad.numpy()[mine], *tol)
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(sbn, name).cpu().double().numpy(), getattr(ref, name).numpy(), *tol)
    for p, rp in ((sbn.weight, ref.weight), (sbn.bias, ref.bias)):
        total = p.grad.clone()
        dist.all_reduce(total)
        np.testing.assert_allclose(total.cpu().double().numpy(), rp.grad.numpy(), *tol)
    # eval mode: the running statistics, no communication
    sbn.eval()
    ref.eval()
    with tt.no_grad():
        np.testing.assert_allclose(sbn(x.detach()).cpu().double().numpy(), ref(x.detach().cpu().double()).numpy(),
                                   *tol)


check(tt.float64, (1e-10, 1e-12))
check(tt.float32, (1e-4, 1e-5))
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: SyncBatchNorm OK", flush=True)
