"""MNIST CNN (demo/mnist.py's Net) trained with DistributedDataParallel.

    tinytorch-run --nproc-per-node 2 demo/ddp_mnist.py                  # NCCL, 2 GPUs
    tinytorch-run --nproc-per-node 2 --backend mpi demo/ddp_mnist.py    # MPI, CPU

Each rank reads its share of the data through a DistributedSampler (set_epoch reshuffles every
epoch); --batch-size is per rank, so the global batch is world_size x batch-size (the learning rate
is not rescaled). Rank 0 evaluates and prints.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tinytorch as torch  # noqa: E402
import tinytorch.distributed as dist  # noqa: E402
import tinytorch.nn.functional as F  # noqa: E402
import tinytorch.optim as optim  # noqa: E402
from tinytorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from tinytorch.optim.lr_scheduler import StepLR  # noqa: E402
from tinytorch.utils.data import DataLoader  # noqa: E402
from tinytorch.utils.data.distributed import DistributedSampler  # noqa: E402

from mnist import HERE, Net, datasets, test  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description="tinytorch MNIST with DistributedDataParallel")
    p.add_argument("--batch-size", type=int, default=64, help="per rank")
    p.add_argument("--test-batch-size", type=int, default=1000, help="batch size of the test pass (default: 1000)")
    p.add_argument("--epochs", type=int, default=1, help="epochs to train (default: 1)")
    p.add_argument("--lr", type=float, default=1.0, help="Adadelta learning rate (default: 1.0)")
    p.add_argument("--gamma", type=float, default=0.7, help="learning rate step gamma per epoch (default: 0.7)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default: 1)")
    p.add_argument("--log-interval", type=int, default=20, help="steps between loss lines (default: 20)")
    p.add_argument("--data", default=os.path.join(HERE, "data", "mnist"),
                   help="directory of the MNIST IDX files (default: demo/data/mnist)")
    p.add_argument("--train-limit", type=int, default=None, help="train on the first N images only (a quick run)")
    p.add_argument("--test-limit", type=int, default=None, help="test on the first N images only")
    p.add_argument("--max-steps", type=int, default=None, help="stop each epoch after this many steps")
    p.add_argument("--save-model", action="store_true", help="rank 0 saves the model to mnist_cnn_ddp.pt")
    p.add_argument("--threads", type=int, default=None, help="CPU threads per rank (default: tinytorch's)")
    args = p.parse_args(argv)

    if args.threads:
        torch.set_num_threads(args.threads)
    use_cuda = torch.cuda.is_available() and os.environ.get("TINYTORCH_BACKEND", "nccl") == "nccl"
    if use_cuda:
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group("nccl" if use_cuda else "mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)

    train_set, test_set = datasets(args)
    sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed)   # rank/world from the group
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=args.test_batch_size)

    model = DDP(Net().to(device), device_ids=[device] if use_cuda else None)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    if rank == 0:
        print(f"world size {world}, backend {dist.get_backend()}, device {device}, "
              f"{len(sampler)} samples per rank per epoch", flush=True)
    start = time.time()
    seen = 0
    for epoch in range(1, args.epochs + 1):
        sampler.set_epoch(epoch)
        model.train()
        for step, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            seen += data.shape[0] * world
            if rank == 0 and step % args.log_interval == 0:
                print(f"epoch {epoch} step {step}/{len(train_loader)} loss {loss.item():.4f}", flush=True)
            if args.max_steps and step + 1 >= args.max_steps:
                break
        if rank == 0:
            test(model.module, device, test_loader)
        dist.barrier()
        scheduler.step()
    if rank == 0:
        secs = time.time() - start
        print(f"{args.epochs} epoch(s) on {world} x {device.type} in {secs:.1f} s ({seen / secs:.0f} samples/s)",
              flush=True)
        if args.save_model:
            torch.save(model.module.state_dict(), "mnist_cnn_ddp.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
