"""ResNet-18's stage layout, shared by the benches that build one (conv_bench.py --resnet with
torchvision's 7x7 stem, models_bench.py with a 3x3 CIFAR stem), each with its own BasicBlock."""
from __future__ import annotations


def resnet18_sequential(nn, block, stem: list, num_classes: int):
    """``nn.Sequential`` of ``stem`` (ending in 64 channels), ResNet-18's four stages of two
    ``block(cin, cout, stride)`` each (64, 128, 256, 512 channels; stride 2 into the last three),
    global average pooling and a ``num_classes`` linear classifier; ``nn`` is the library's
    ``nn`` module."""
    layers = list(stem)
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [block(cin, cout, stride), block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, num_classes)]
    return nn.Sequential(*layers)
