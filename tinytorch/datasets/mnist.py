"""MNIST and Fashion-MNIST read from IDX files (the format of the original distributions)."""
from __future__ import annotations

import gzip
import os
from typing import Any, Callable, Optional, Tuple

import numpy as np

from tinytorch._tensor.creation import from_numpy
from tinytorch._tensor.tensor import Tensor
from tinytorch.utils.data.dataset import Dataset

# where this repository ships the MNIST files (demo/data/mnist), named in "not found" errors
_SHIPPED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "demo", "data", "mnist")

# IDX type codes -> numpy dtypes (big-endian, as the format stores them)
_IDX_TYPES = {0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
              0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def read_idx(path: str) -> np.ndarray:
    """Reads an IDX file (optionally gzip-compressed) into a numpy array, checking its header.

    Raises ``ValueError`` naming the file on a bad magic number, an unknown type code or a size
    that doesn't match the file length."""
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError) as e:  # gzip raises these on a damaged stream
        raise ValueError(f"{path}: can't read IDX file ({e})") from e
    if len(data) < 4:
        raise ValueError(f"{path}: not an IDX file: {len(data)} bytes, shorter than the 4-byte magic number")
    if data[0] != 0 or data[1] != 0:
        raise ValueError(f"{path}: not an IDX file: bad magic number 0x{data[:4].hex()} "
                         "(expected two zero bytes, a type code and the number of dimensions)")
    type_code, ndim = data[2], data[3]
    if type_code not in _IDX_TYPES:
        raise ValueError(f"{path}: unknown IDX type code 0x{type_code:02x}")
    if ndim == 0:
        raise ValueError(f"{path}: IDX file declares 0 dimensions")
    head = 4 + 4 * ndim
    if len(data) < head:
        raise ValueError(f"{path}: truncated IDX header: {ndim} dimensions need {head} bytes, file has {len(data)}")
    shape = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dt = _IDX_TYPES[type_code]
    expect = head + int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    if len(data) != expect:
        raise ValueError(f"{path}: IDX size mismatch: header says shape {shape} of {dt.itemsize}-byte items "
                         f"({expect} bytes with the header) but the file has {len(data)} bytes")
    arr = np.frombuffer(data, dtype=dt, offset=head).reshape(shape)
    return arr.astype(dt.newbyteorder("="))  # native byte order, writable, owns its memory


class MNIST(Dataset):
    """`MNIST <http://yann.lecun.com/exdb/mnist/>`_ Dataset.

    Args:
        root (str): Root directory of the dataset: the IDX files (``train-images-idx3-ubyte[.gz]``
            ...) directly in it, or in ``root/MNIST/raw`` (``root/FashionMNIST/raw`` ...), as
            torchvision lays them out.
        train (bool, optional): If True, creates dataset from the training files, otherwise from
            the ``t10k`` test files.
        transform (callable, optional): A function/transform that takes in a 28x28 uint8 numpy
            image and returns a transformed version. E.g, ``transforms.ToTensor()``.
        target_transform (callable, optional): A function/transform that takes in the target and
            transforms it.
        download (bool, optional): accepted for torchvision's signature, but nothing is ever
            downloaded (no network access): with the files present it does nothing, with them
            missing the error says where to put them (this repository ships MNIST in
            ``demo/data/mnist``).

    :attr:`data` is a uint8 tensor of shape (N, 28, 28) and :attr:`targets` an int64 tensor of
    shape (N,), as torchvision's; assigning to them (``ds.data = ds.data[:1000]``) changes what
    the dataset returns. Without a transform an image is returned as a (28, 28) uint8 numpy array
    (torchvision returns a PIL image)."""

    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root: str, train: bool = True, transform: Optional[Callable] = None,
                 target_transform: Optional[Callable] = None, download: bool = False) -> None:
        self.root = os.fspath(root)
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        prefix = "train" if train else "t10k"
        images = read_idx(self._find(f"{prefix}-images-idx3-ubyte", download))
        labels = read_idx(self._find(f"{prefix}-labels-idx1-ubyte", download))
        if images.ndim != 3 or images.dtype != np.uint8:
            raise ValueError(f"{self._find(f'{prefix}-images-idx3-ubyte', download)}: expected a 3-d uint8 "
                             f"IDX image file, got {images.ndim}-d {images.dtype}")
        if labels.ndim != 1 or labels.dtype != np.uint8:
            raise ValueError(f"{self._find(f'{prefix}-labels-idx1-ubyte', download)}: expected a 1-d uint8 "
                             f"IDX label file, got {labels.ndim}-d {labels.dtype}")
        if len(images) != len(labels):
            raise ValueError(f"{self.__class__.__name__} in {self.root}: {len(images)} images but "
                             f"{len(labels)} labels")
        self.data = from_numpy(images)
        self.targets = from_numpy(labels.astype(np.int64))

    # The tensors are the public face (torchvision's); __getitem__ reads numpy views of the same
    # memory, which keeps per-sample indexing cheap for the DataLoader.
    @property
    def data(self) -> Tensor:
        return self._data

    @data.setter
    def data(self, value) -> None:
        self._data = value if isinstance(value, Tensor) else from_numpy(np.ascontiguousarray(value))
        self._data_np = self._data.numpy()

    @property
    def targets(self) -> Tensor:
        return self._targets

    @targets.setter
    def targets(self, value) -> None:
        self._targets = value if isinstance(value, Tensor) else from_numpy(np.asarray(value, dtype=np.int64))
        self._targets_np = self._targets.numpy()

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "raw")

    def _find(self, base: str, download: bool = False) -> str:
        for folder in (self.root, self.raw_folder):
            for name in (base, base + ".gz"):
                p = os.path.join(folder, name)
                if os.path.isfile(p):
                    return p
        why = ("download=True was given, but tinytorch downloads nothing" if download else
               "Dataset not found")
        raise RuntimeError(f"{self.__class__.__name__}: {why}: {base}[.gz] is in neither {self.root} nor "
                           f"{self.raw_folder}. Place the IDX files in one of them (this repository ships "
                           f"MNIST in {_SHIPPED}).")

    def __getitem__(self, index: int) -> Tuple[Any, Any]:
        """Returns (image, target) where target is index of the target class."""
        img, target = self._data_np[index], int(self._targets_np[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self._data_np)

    @property
    def class_to_idx(self) -> dict:
        return {c: i for i, c in enumerate(self.classes)}

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"

    def __repr__(self) -> str:
        return (f"Dataset {self.__class__.__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {self.root}\n    {self.extra_repr()}")


class FashionMNIST(MNIST):
    """`Fashion-MNIST <https://github.com/zalandoresearch/fashion-mnist>`_ Dataset: the same
    layout and arguments as :class:`MNIST`."""

    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]
