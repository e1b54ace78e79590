"""MNIST CNN, as pytorch/examples mnist/main.py, on tinytorch.

    python demo/mnist.py                 # 1 epoch on CPU (or CUDA when available): >= 98% test accuracy
    python demo/mnist.py --epochs 14 --save-model --plot loss.png
    python demo/mnist.py --no-progress   # plain log lines instead of a progress bar

Data: the MNIST database (LeCun, Cortes, Burges; CC BY-SA 3.0), read from demo/data/mnist/.
"""
from __future__ import annotations

import argparse
import os
import time

import tinytorch as torch
import tinytorch.nn as nn
import tinytorch.nn.functional as F
import tinytorch.optim as optim
from tinytorch.datasets import MNIST, transforms
from tinytorch.optim.lr_scheduler import StepLR
from tinytorch.utils.data import DataLoader

HERE = os.path.dirname(os.path.abspath(__file__))


def net_class(nn, F, flatten):
    """The CNN of pytorch/examples' mnist, built from a library's ``nn``, ``nn.functional`` and
    ``flatten`` (tinytorch's here; bench/ builds the same network from PyTorch's too)."""

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.dropout2(x)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    Net.__qualname__ = "Net"
    return Net


Net = net_class(nn, F, torch.flatten)


def datasets(args):
    """The MNIST train and test sets (normalized as pytorch/examples does) from ``args.data``, cut to
    ``args.train_limit`` / ``args.test_limit`` images when those are set."""
    transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    train_set = MNIST(args.data, train=True, transform=transform)
    test_set = MNIST(args.data, train=False, transform=transform)
    if args.train_limit:
        train_set = torch.utils.data.Subset(train_set, range(args.train_limit))
    if args.test_limit:
        test_set = torch.utils.data.Subset(test_set, range(args.test_limit))
    return train_set, test_set


def train(args, model, device, train_loader, optimizer, epoch, losses):
    model.train()
    if args.no_progress:
        batches = train_loader
    else:
        from tqdm import tqdm
        batches = tqdm(train_loader, desc=f"epoch {epoch}", unit="batch", dynamic_ncols=True)
    for batch_idx, (data, target) in enumerate(batches):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            losses.append((epoch - 1 + batch_idx / len(train_loader), loss.item()))
            if args.no_progress:
                print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)} "
                      f"({100. * batch_idx / len(train_loader):.0f}%)]\tLoss: {loss:.6f}")
            else:
                batches.set_postfix(loss=f"{loss:.4f}")
            if args.dry_run:
                break


def test(model, device, test_loader):
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    n = len(test_loader.dataset)
    test_loss /= n
    print(f"\nTest set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{n} ({100. * correct / n:.2f}%)\n")
    return correct / n


def plot(losses, path):
    import matplotlib   # main() checked that it is installed before training
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs, ys = zip(*losses)
    plt.figure(figsize=(6, 3.5))
    plt.plot(xs, ys)
    plt.xlabel("epoch")
    plt.ylabel("training loss (nll)")
    plt.title("tinytorch MNIST CNN")
    plt.tight_layout()
    plt.savefig(path, dpi=120)
    print(f"wrote {path}")


def build_parser() -> argparse.ArgumentParser:
    """The command line (every option with help text, as pytorch/examples' mnist)."""
    parser = argparse.ArgumentParser(description="tinytorch MNIST Example")
    parser.add_argument("--batch-size", type=int, default=64, metavar="N",
                        help="input batch size for training (default: 64)")
    parser.add_argument("--test-batch-size", type=int, default=1000, metavar="N",
                        help="input batch size for testing (default: 1000)")
    parser.add_argument("--epochs", type=int, default=1, metavar="N", help="number of epochs to train (default: 1)")
    parser.add_argument("--lr", type=float, default=1.0, metavar="LR", help="learning rate (default: 1.0)")
    parser.add_argument("--gamma", type=float, default=0.7, metavar="M", help="learning rate step gamma (default: 0.7)")
    parser.add_argument("--dry-run", action="store_true", default=False, help="quickly check a single pass")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default: 1)")
    parser.add_argument("--log-interval", type=int, default=10, metavar="N",
                        help="how many batches to wait before logging training status (default: 10)")
    parser.add_argument("--save-model", action="store_true", default=False,
                        help="save the trained model to mnist_cnn.pt")
    parser.add_argument("--device", default=None, help="cpu or cuda[:N] (default: cuda when available)")
    parser.add_argument("--data", default=os.path.join(HERE, "data", "mnist"),
                        help="directory of the MNIST IDX files (default: demo/data/mnist)")
    parser.add_argument("--plot", default=None, metavar="PNG",
                        help="write the training-loss curve here (needs matplotlib)")
    parser.add_argument("--no-progress", action="store_true", default=False,
                        help="no progress bar (print the loss at each log interval instead)")
    parser.add_argument("--train-limit", type=int, default=None, metavar="N",
                        help="train on the first N training images only (a quick run; default: all 60000)")
    parser.add_argument("--test-limit", type=int, default=None, metavar="N",
                        help="test on the first N test images only (default: all 10000)")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="CPU threads (default: tinytorch's, the number of cores)")
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.plot:
        try:    # checked before training, not after it
            import matplotlib  # noqa: F401
        except ImportError:
            parser.error("--plot needs matplotlib: pip install matplotlib")

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(args.device)
    torch.manual_seed(args.seed)

    train_set, test_set = datasets(args)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=args.test_batch_size)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    losses: list[tuple[float, float]] = []
    start = time.time()
    accuracy = 0.0
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch, losses)
        accuracy = test(model, device, test_loader)
        scheduler.step()
    print(f"{args.epochs} epoch(s) on {device} in {time.time() - start:.1f} s")
    if args.save_model:
        torch.save(model.state_dict(), "mnist_cnn.pt")
    if args.plot:
        plot(losses, args.plot)
    return accuracy


if __name__ == "__main__":
    main()
