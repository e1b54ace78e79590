"""Launcher checks: prints the env; 'fail' makes rank 1 exit 3 while the others sleep; 'hang' makes
rank 1 sleep while rank 0 waits in an all_reduce with a 2 s timeout; 'raise' makes rank 1 raise
(an uncaught exception, with a live communicator) while rank 0 waits in an all_reduce."""
import json
import os
import sys
import time

mode = sys.argv[1]
keys = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TINYTORCH_BACKEND"]
print("ENV " + json.dumps({k: os.environ.get(k) for k in keys}), flush=True)
rank = int(os.environ["RANK"])
if mode == "fail":
    if rank == 1:
        print("rank 1 about to fail: the last words", flush=True)
        sys.exit(3)
    time.sleep(60)
elif mode == "hang":
    from datetime import timedelta
    import tinytorch as tt
    import tinytorch.distributed as dist
    dist.init_process_group(timeout=timedelta(seconds=2))
    if rank == 1:
        time.sleep(60)
    dist.all_reduce(tt.ones(4, device="cuda" if dist.get_backend() == "nccl" else "cpu"))
    print("unreachable", flush=True)
elif mode == "raise":
    import tinytorch as tt
    import tinytorch.distributed as dist
    dist.init_process_group()
    device = f"cuda:{os.environ['LOCAL_RANK']}" if dist.get_backend() == "nccl" else "cpu"
    if device != "cpu":
        tt.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    x = tt.ones(4, device=device)
    dist.all_reduce(x)
    x.cpu()
    if rank == 1:
        raise RuntimeError("rank 1 fails on purpose")
    dist.all_reduce(x)
    x.cpu()
    print("unreachable", flush=True)
