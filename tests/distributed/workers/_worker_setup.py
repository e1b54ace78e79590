"""The start the worker scripts share: the device named by argv[1] ("cpu", the default, or "cuda":
this rank's GPU, LOCAL_RANK) and the default process group, on the backend the launcher chose."""
import os
import sys

import tinytorch as tt
import tinytorch.distributed as dist


def init_worker():
    """Makes this rank's GPU current (for "cuda") and initializes the default process group;
    returns (the device's name, the device, rank, world size)."""
    device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    if device == "cuda":
        tt.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        dev = tt.device("cuda", int(os.environ["LOCAL_RANK"]))
    else:
        dev = tt.device("cpu")
    dist.init_process_group()
    return device, dev, dist.get_rank(), dist.get_world_size()
