"""conv2d and batch_norm on the CPU, tinytorch vs PyTorch in one process, alternating runs;
medians and ratios (tinytorch time / torch time, < 1 means tinytorch is faster).

    python bench/conv_bench.py [--threads 2] [--rounds 7] [--batch 16] [--mnist] [--resnet] [--all]
        [--dtype float32|bfloat16] [--r32] [--models] [--only NAME] [--conv3d]

Default: a short list of ResNet-18/50 layer shapes (3x3 and 1x1, stride 1 and 2, 64-512 channels)
at --batch, forward, grad_input and grad_weight separately, then batch_norm forward and
forward+backward. --all adds batch 1 and 64; --mnist the MNIST CNN's two layers and max_pool2d;
--r32 the layer shapes of
the --resnet step instead; --resnet a whole ResNet-18 training step (3x32x32 by default) (forward, cross entropy, backward, SGD), defined once
against a module ``m`` and run with m=tinytorch and m=torch. Only NCHW: tinytorch has no
channels_last memory format. --conv3d: F.conv3d and F.conv_transpose3d (3-D U-Net / video shapes),
forward and forward+backward.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from _harness import compare, try_import_torch  # noqa: E402
from _resnet import resnet18_sequential  # noqa: E402
import tinytorch as tt  # noqa: E402

C = tt._C

# (name, C_in, C_out, H=W of the input, kernel, stride, padding): ResNet-18/50 layers at 224x224 / 4
# (56 -> 14 etc. scaled to keep the 2-core run short; the channel counts are the real ones).
RESNET_CONVS = [
    ("r18 l1 3x3 64", 64, 64, 28, 3, 1, 1),
    ("r18 l2 3x3 s2 64->128", 64, 128, 28, 3, 2, 1),
    ("r18 l3 3x3 256", 256, 256, 7, 3, 1, 1),
    ("r18 l4 3x3 512", 512, 512, 4, 3, 1, 1),
    ("r50 1x1 64->256", 64, 256, 28, 1, 1, 0),
    ("r50 1x1 256->64", 256, 64, 28, 1, 1, 0),
    ("r50 1x1 s2 256->512", 256, 512, 14, 1, 2, 0),
]
# The convolutions of the --resnet step at its default 3x32x32 input (spatial 16 -> 1).
RESNET32_CONVS = [
    ("r18@32 conv1 7x7 s2 3->64", 3, 64, 32, 7, 2, 3),
    ("r18@32 l1 3x3 64", 64, 64, 8, 3, 1, 1),
    ("r18@32 l2 3x3 s2 64->128", 64, 128, 8, 3, 2, 1),
    ("r18@32 l2 3x3 128", 128, 128, 4, 3, 1, 1),
    ("r18@32 l2 1x1 s2 64->128", 64, 128, 8, 1, 2, 0),
    ("r18@32 l3 3x3 256", 256, 256, 2, 3, 1, 1),
    ("r18@32 l4 3x3 512", 512, 512, 1, 3, 1, 1),
]
# The convolutions of bench/models_bench.py's ResNet-18 (3x3 stride-1 stem, no max-pool: 32 -> 4).
MODELS_CONVS = [
    ("models stem 3x3 3->64", 3, 64, 32, 3, 1, 1),
    ("models l1 3x3 64", 64, 64, 32, 3, 1, 1),
    ("models l2 3x3 s2 64->128", 64, 128, 32, 3, 2, 1),
    ("models l2 3x3 128", 128, 128, 16, 3, 1, 1),
    ("models l2 1x1 s2 64->128", 64, 128, 32, 1, 2, 0),
    ("models l3 3x3 s2 128->256", 128, 256, 16, 3, 2, 1),
    ("models l3 3x3 256", 256, 256, 8, 3, 1, 1),
    ("models l3 1x1 s2 128->256", 128, 256, 16, 1, 2, 0),
    ("models l4 3x3 s2 256->512", 256, 512, 8, 3, 2, 1),
    ("models l4 3x3 512", 512, 512, 4, 3, 1, 1),
    ("models l4 1x1 s2 256->512", 256, 512, 8, 1, 2, 0),
]
BN_SHAPES = [(64, 28), (256, 7), (512, 4)]  # (channels, H=W)
MODELS_BN_SHAPES = [(64, 32), (128, 16), (256, 8), (512, 4)]


def conv_case(torch, rng, kw, batch, name, cin, cout, hw, k, s, p, dtype, mnist_pairs=False):
    tdt, rdt = getattr(tt, dtype), getattr(torch, dtype)
    x = rng.standard_normal((batch, cin, hw, hw), dtype=np.float32)
    w = rng.standard_normal((cout, cin, k, k), dtype=np.float32) * 0.1
    b = rng.standard_normal(cout, dtype=np.float32)
    tx, tw, tb = (tt.tensor(a).to(tdt)._impl for a in (x, w, b))
    rx, rw, rb = (torch.from_numpy(a).to(rdt) for a in (x, w, b))
    st, pd, one = (s, s), (p, p), (1, 1)
    ro = torch.nn.functional.conv2d(rx, rw, rb, s, p)
    go = rng.standard_normal(tuple(ro.shape), dtype=np.float32)
    tg, rg = tt.tensor(go).to(tdt)._impl, torch.from_numpy(go).to(rdt)
    # correctness guard: forward and all grads agree with torch
    tol = 1e-3 if dtype == "float32" else 5e-2
    out = tt._core.tensor_base._wrap(C.conv2d(tx, tw, tb, st, pd, one, 1)).float().numpy()
    np.testing.assert_allclose(out, ro.float().numpy(), rtol=tol, atol=tol * 10)
    rgrads = torch.ops.aten.convolution_backward(rg, rx, rw, [cout], [s, s], [p, p], [1, 1], False, [0, 0], 1,
                                                 [True, True, True])
    tgrads = C.conv2d_backward(tg, tx, tw, st, pd, one, 1, (True, True, True))
    for t_, r_ in zip(tgrads, rgrads):
        np.testing.assert_allclose(tt._core.tensor_base._wrap(t_).float().numpy(), r_.float().numpy(), rtol=tol,
                                   atol=tol * 20 * max(1.0, float(r_.float().abs().max()) / 100))
    label = f"{name} b{batch} {dtype}"
    res = [compare(f"{label} forward", lambda: C.conv2d(tx, tw, tb, st, pd, one, 1),
                   lambda: torch.nn.functional.conv2d(rx, rw, rb, s, p), **kw)]
    masks = [("grad_input", (True, False, False)), ("grad_weight", (False, True, False))]
    if mnist_pairs:
        masks += [("grad_bias", (False, False, True)), ("backward all", (True, True, True))]
    for lab, mask in masks:
        if name.startswith("conv1") and mask[0]:
            continue  # the MNIST CNN never needs conv1's grad_input
        res.append(compare(f"{label} {lab}", lambda m=mask: C.conv2d_backward(tg, tx, tw, st, pd, one, 1, m),
                           lambda m=list(mask): torch.ops.aten.convolution_backward(
                               rg, rx, rw, [cout], [s, s], [p, p], [1, 1], False, [0, 0], 1, m), **kw))
    return res


def bn_case(torch, rng, kw, batch, c, hw, dtype):
    tdt, rdt = getattr(tt, dtype), getattr(torch, dtype)
    x = rng.standard_normal((batch, c, hw, hw), dtype=np.float32)
    g = rng.standard_normal((batch, c, hw, hw), dtype=np.float32)
    res = []
    for lib, dt in ((tt, tdt), (torch, rdt)):
        lib._bn = (lib.tensor(x).to(dt).requires_grad_(True), lib.tensor(g).to(dt),
                   lib.ones(c, dtype=dt, requires_grad=True), lib.zeros(c, dtype=dt, requires_grad=True),
                   lib.zeros(c, dtype=dt), lib.ones(c, dtype=dt))

    def fwd(lib):
        xx, _, w, b, rm, rv = lib._bn
        with lib.no_grad():
            return lib.nn.functional.batch_norm(xx, rm, rv, w, b, True, 0.1, 1e-5)

    def fwd_bwd(lib):
        xx, gg, w, b, rm, rv = lib._bn
        y = lib.nn.functional.batch_norm(xx, rm, rv, w, b, True, 0.1, 1e-5)
        return lib.autograd.grad(y, (xx, w, b), gg)

    label = f"batch_norm ({batch},{c},{hw},{hw}) {dtype}"
    res.append(compare(f"{label} forward", lambda: fwd(tt), lambda: fwd(torch), **kw))
    res.append(compare(f"{label} fwd+bwd", lambda: fwd_bwd(tt), lambda: fwd_bwd(torch), **kw))
    return res


def resnet18(m, num_classes: int = 10):
    """torchvision's ResNet-18 (BasicBlock, [2, 2, 2, 2]) written against module ``m``."""
    nn = m.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = m.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return m.relu(y + (x if self.down is None else self.down(x)))

    stem = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    return resnet18_sequential(nn, Block, stem, num_classes)


def resnet_step(m, batch: int, size: int, seed: int = 0):
    """A closure running one ResNet-18 training step of module ``m`` (SGD momentum)."""
    m.manual_seed(seed)
    net = resnet18(m)
    net.train()
    opt = m.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = m.randn(batch, 3, size, size)
    y = m.randint(0, 10, (batch,))

    def step():
        opt.zero_grad()
        loss = m.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


# (name, C_in, C_out, D, H=W, kernel, stride, padding): 3-D U-Net / video-network layers, scaled down
CONV3D_CASES = [
    ("unet3d 3x3x3 16->32", 16, 32, 16, 32, 3, 1, 1),
    ("unet3d 3x3x3 s2 32->64", 32, 64, 16, 32, 3, 2, 1),
    ("video 1x3x3 64", 64, 64, 8, 28, (1, 3, 3), 1, (0, 1, 1)),
    ("video 3x1x1 64", 64, 64, 8, 28, (3, 1, 1), 1, (1, 0, 0)),
]


def conv3d_cases(torch, rng, kw, batch, dtype, only):
    tdt, rdt = getattr(tt, dtype), getattr(torch, dtype)
    for name, cin, cout, d, hw, k, s, p in CONV3D_CASES:
        if only not in name:
            continue
        kk = (k,) * 3 if isinstance(k, int) else k
        x = rng.standard_normal((batch, cin, d, hw, hw), dtype=np.float32)
        w = rng.standard_normal((cout, cin, *kk), dtype=np.float32) * 0.05
        wt = rng.standard_normal((cout, cin, *kk), dtype=np.float32) * 0.05   # transpose: cout -> cin
        tx, tw, twt = (tt.tensor(a).to(tdt) for a in (x, w, wt))
        rx, rw, rwt = (torch.from_numpy(a).to(rdt) for a in (x, w, wt))
        ro = torch.nn.functional.conv3d(rx, rw, None, s, p)
        tol = 1e-3 if dtype == "float32" else 5e-2
        np.testing.assert_allclose(tt.nn.functional.conv3d(tx, tw, None, s, p).float().numpy(), ro.float().numpy(),
                                   rtol=tol, atol=tol * 10)
        label = f"{name} b{batch} {dtype}"
        with tt.no_grad(), torch.no_grad():
            compare(f"conv3d {label} forward", lambda: tt.nn.functional.conv3d(tx, tw, None, s, p),
                    lambda: torch.nn.functional.conv3d(rx, rw, None, s, p), **kw)
        to = tt.tensor(ro.float().numpy()).to(tdt)
        rt = ro.detach()
        with tt.no_grad(), torch.no_grad():
            compare(f"conv_transpose3d {label} forward",
                    lambda: tt.nn.functional.conv_transpose3d(to, twt, None, s, p, s - 1 if s > 1 else 0),
                    lambda: torch.nn.functional.conv_transpose3d(rt, rwt, None, s, p, s - 1 if s > 1 else 0), **kw)
        txg, rxg = tx.detach().requires_grad_(True), rx.detach().requires_grad_(True)
        twg, rwg = tw.detach().requires_grad_(True), rw.detach().requires_grad_(True)
        compare(f"conv3d {label} fwd+bwd", lambda: tt.nn.functional.conv3d(txg, twg, None, s, p).sum().backward(),
                lambda: torch.nn.functional.conv3d(rxg, rwg, None, s, p).sum().backward(), **kw)


def mnist_cases(torch, rng, kw, batch):
    for name, cin, cout, hw in (("conv1", 1, 32, 28), ("conv2", 32, 64, 26)):
        conv_case(torch, rng, kw, batch, name, cin, cout, hw, 3, 1, 0, "float32", mnist_pairs=True)
    y = rng.standard_normal((batch, 64, 24, 24), dtype=np.float32)
    ty, ry = tt.tensor(y), torch.from_numpy(y)
    compare("max_pool2d 2x2 forward", lambda: tt.nn.functional.max_pool2d(ty, 2),
            lambda: torch.nn.functional.max_pool2d(ry, 2), **kw)
    ty.requires_grad_(True)
    ry.requires_grad_(True)
    gp = rng.standard_normal((batch, 64, 12, 12), dtype=np.float32)
    tgp, rgp = tt.tensor(gp), torch.from_numpy(gp)
    compare("max_pool2d 2x2 forward+backward", lambda: tt.nn.functional.max_pool2d(ty, 2).backward(tgp),
            lambda: torch.nn.functional.max_pool2d(ry, 2).backward(rgp), **kw)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--inner", type=int, default=2)
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    p.add_argument("--all", action="store_true", help="batch 1, --batch and 64")
    p.add_argument("--mnist", action="store_true", help="the MNIST CNN's layers (batch 64)")
    p.add_argument("--resnet", action="store_true", help="only a whole ResNet-18 training step")
    p.add_argument("--size", type=int, default=32, help="ResNet input height and width")
    p.add_argument("--r32", action="store_true", help="the convolutions of the --resnet step at 32x32")
    p.add_argument("--models", action="store_true", help="the convolutions of models_bench.py's ResNet-18")
    p.add_argument("--only", default="", help="run only cases whose name contains this")
    p.add_argument("--conv3d", action="store_true", help="only conv3d / conv_transpose3d layers")
    args = p.parse_args()
    torch = try_import_torch()
    if torch is None:
        return
    tt.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    kw = dict(rounds=args.rounds, inner=args.inner, ref_name="torch")
    if args.resnet:
        t_step, r_step = resnet_step(tt, args.batch, args.size), resnet_step(torch, args.batch, args.size)
        compare(f"ResNet-18 train step b{args.batch} 3x{args.size}x{args.size}", t_step, r_step,
                **dict(kw, inner=1))
        return
    if args.mnist:
        mnist_cases(torch, rng, kw, 64)
        return
    if args.conv3d:
        conv3d_cases(torch, rng, kw, args.batch, args.dtype, args.only)
        return
    batches = [1, args.batch, 64] if args.all else [args.batch]
    for batch in batches:
        for case in MODELS_CONVS if args.models else RESNET32_CONVS if args.r32 else RESNET_CONVS:
            if args.only in case[0]:
                conv_case(torch, rng, kw, batch, *case, args.dtype)
        for c, hw in MODELS_BN_SHAPES if args.models else BN_SHAPES:
            if args.only in "batch_norm":
                bn_case(torch, rng, kw, batch, c, hw, args.dtype)


if __name__ == "__main__":
    main()
