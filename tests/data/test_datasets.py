"""tinytorch.datasets: IDX reading (synthetic files), MNIST on the demo test split, transforms."""
from __future__ import annotations

import gzip
import os
import struct

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import transforms as T
from tinytorch.datasets import MNIST, FashionMNIST, read_idx
from tinytorch.utils.data import DataLoader, _random

DEMO = os.path.join(os.path.dirname(__file__), "..", "..", "demo", "data", "mnist")


def write_idx(path, arr, type_code=0x08, gz=False, shape=None):
    shape = arr.shape if shape is None else shape
    data = struct.pack(">BBBB", 0, 0, type_code, len(shape)) + b"".join(struct.pack(">I", d) for d in shape)
    data += arr.astype(arr.dtype.newbyteorder(">")).tobytes()
    with (gzip.open if gz else open)(path, "wb") as f:
        f.write(data)
    return data


def make_mnist(root, n=5, gz=False, train=True):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, n, dtype=np.uint8)
    p = "train" if train else "t10k"
    ext = ".gz" if gz else ""
    os.makedirs(root, exist_ok=True)
    write_idx(os.path.join(root, f"{p}-images-idx3-ubyte{ext}"), images, gz=gz)
    write_idx(os.path.join(root, f"{p}-labels-idx1-ubyte{ext}"), labels, gz=gz)
    return images, labels


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_synthetic_raw_and_gz(tmp_path, gz):
    images, labels = make_mnist(str(tmp_path), gz=gz)
    ds = MNIST(str(tmp_path), train=True)
    assert len(ds) == 5 and ds.data.shape == (5, 28, 28) and ds.data.dtype == tt.uint8
    img, target = ds[3]
    assert isinstance(img, np.ndarray) and img.shape == (28, 28) and isinstance(target, int)
    np.testing.assert_array_equal(img, images[3])
    assert target == labels[3]
    with pytest.raises(RuntimeError, match="t10k-images-idx3-ubyte"):
        MNIST(str(tmp_path), train=False)


def test_mnist_data_and_targets_are_tensors_as_torchvision(tmp_path):
    images, labels = make_mnist(str(tmp_path), n=7)
    ds = MNIST(str(tmp_path), train=True)
    assert isinstance(ds.data, tt.Tensor) and ds.data.dtype == tt.uint8 and ds.data.shape == (7, 28, 28)
    assert isinstance(ds.targets, tt.Tensor) and ds.targets.dtype == tt.int64 and ds.targets.shape == (7,)
    np.testing.assert_array_equal(ds.data.numpy(), images)
    np.testing.assert_array_equal(ds.targets.numpy(), labels.astype(np.int64))
    # the torchvision idiom for a subset: assign sliced tensors back
    ds.data, ds.targets = ds.data[2:5], ds.targets[2:5]
    assert len(ds) == 3
    img, target = ds[0]
    np.testing.assert_array_equal(img, images[2])
    assert target == labels[2]
    ds.data[0, 0, 0] = 7                                    # in-place edits are seen too
    assert ds[0][0][0, 0] == 7


def test_mnist_download_argument(tmp_path):
    make_mnist(str(tmp_path))
    assert len(MNIST(str(tmp_path), train=True, download=True)) == 5      # present: nothing to do
    with pytest.raises(RuntimeError, match=r"download=True was given, but tinytorch downloads nothing.*"
                                           r"t10k-images-idx3-ubyte.*demo.data.mnist"):
        MNIST(str(tmp_path), train=False, download=True)
    with pytest.raises(RuntimeError, match="Dataset not found"):
        MNIST(str(tmp_path / "missing"), download=False)


def test_fashion_mnist_raw_folder_and_transforms(tmp_path):
    images, labels = make_mnist(str(tmp_path / "FashionMNIST" / "raw"), train=False)
    ds = FashionMNIST(str(tmp_path), train=False, transform=T.ToTensor(), target_transform=lambda y: y + 100)
    x, y = ds[0]
    assert x.dtype is tt.float32 and tuple(x.shape) == (1, 28, 28) and y == labels[0] + 100
    np.testing.assert_allclose(x.numpy()[0], images[0] / np.float32(255), rtol=0, atol=0)


def test_idx_format_errors(tmp_path):
    arr = np.zeros((2, 3, 3), np.uint8)
    p = str(tmp_path / "x.idx")
    data = write_idx(p, arr)
    open(p, "wb").write(b"\x01\x00" + data[2:])
    with pytest.raises(ValueError, match="x.idx.*magic"):
        read_idx(p)
    open(p, "wb").write(data[:-1])
    with pytest.raises(ValueError, match="x.idx.*size mismatch"):
        read_idx(p)
    open(p, "wb").write(data + b"\x00")
    with pytest.raises(ValueError, match="size mismatch"):
        read_idx(p)
    open(p, "wb").write(data[:2])
    with pytest.raises(ValueError, match="x.idx"):
        read_idx(p)
    open(p, "wb").write(data[:4] + data[4:9])  # header cut inside the dims
    with pytest.raises(ValueError, match="truncated IDX header"):
        read_idx(p)
    open(p, "wb").write(b"\x00\x00\x07\x01" + data[4:])
    with pytest.raises(ValueError, match="type code"):
        read_idx(p)
    gzp = str(tmp_path / "y.idx.gz")
    open(gzp, "wb").write(b"not gzip at all")
    with pytest.raises(ValueError, match="y.idx.gz"):
        read_idx(gzp)
    # other IDX types decode big-endian correctly
    write_idx(p, np.array([1, -2, 70000], dtype=np.int32), type_code=0x0C)
    assert read_idx(p).tolist() == [1, -2, 70000]


def test_mnist_checks_dims_and_counts(tmp_path):
    make_mnist(str(tmp_path), n=4)
    write_idx(str(tmp_path / "train-labels-idx1-ubyte"), np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match="4 images but 3 labels"):
        MNIST(str(tmp_path))
    write_idx(str(tmp_path / "train-labels-idx1-ubyte"), np.zeros((4, 1), np.uint8))
    with pytest.raises(ValueError, match="train-labels-idx1-ubyte.*1-d"):
        MNIST(str(tmp_path))


@pytest.mark.skipif(not os.path.exists(os.path.join(DEMO, "t10k-images-idx3-ubyte.gz")), reason="no demo data")
def test_real_mnist_test_split_through_loader():
    ds = MNIST(DEMO, train=False, transform=T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))]))
    assert len(ds) == 10000 and ds.data.shape == (10000, 28, 28)
    assert sorted(set(ds.targets.tolist())) == list(range(10))
    x, y = next(iter(DataLoader(ds, batch_size=64)))
    assert tuple(x.shape) == (64, 1, 28, 28) and x.dtype is tt.float32 and y.dtype is tt.int64
    assert y.tolist()[:3] == [7, 2, 1]


def test_transforms():
    img = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)  # HxWxC
    t = T.ToTensor()(img)
    assert tuple(t.shape) == (3, 2, 4)
    np.testing.assert_array_equal(t.numpy(), img.transpose(2, 0, 1) / np.float32(255))
    n = T.Normalize([0.5, 0.25, 0.0], [0.5, 0.5, 2.0])(t)
    ref = (img.transpose(2, 0, 1) / np.float32(255) - np.array([0.5, 0.25, 0.0], np.float32)[:, None, None]) \
        / np.array([0.5, 0.5, 2.0], np.float32)[:, None, None]
    np.testing.assert_allclose(n.numpy(), ref, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError):
        T.Normalize([0.0], [0.0])
    assert T.Lambda(lambda v: v * 2)(3) == 6
    flipped = T.RandomHorizontalFlip(p=1.0)(img)
    np.testing.assert_array_equal(flipped, img[:, ::-1])
    assert T.RandomHorizontalFlip(p=0.0)(img) is img
    tf = T.RandomHorizontalFlip(p=1.0)(t)
    np.testing.assert_array_equal(tf.numpy(), t.numpy()[:, :, ::-1])


def test_random_crop_covers_padded_positions():
    img = np.arange(16, dtype=np.uint8).reshape(4, 4) + 1
    crop = T.RandomCrop(4, padding=1)
    _random.manual_seed(0)
    seen = set()
    for _ in range(200):
        c = crop(img)
        assert c.shape == (4, 4)
        r, col = np.argwhere(c == 1)[0] if (c == 1).any() else (None, None)
        seen.add((r, col))
    assert {(0, 0), (1, 1), (0, 1), (1, 0)} <= seen  # every offset of the 6x6 padded image happens
    t = T.ToTensor()(np.ones((5, 6, 3), np.uint8))
    assert tuple(T.RandomCrop((3, 2))(t).shape) == (3, 3, 2)
    assert T.RandomCrop(8, pad_if_needed=True)(img).shape == (8, 8)
    with pytest.raises(ValueError):
        T.RandomCrop(5)(img)
