"""Image transforms, as ``torchvision.transforms``, for numpy images and tinytorch tensors.

Images are numpy arrays (HxW or HxWxC, as datasets here return them: PIL isn't a dependency) until
:class:`ToTensor` turns them into CxHxW float tensors. Random transforms draw from tinytorch's
global RNG (through ``tinytorch.utils.data._random``), which DataLoader workers seed per worker."""
from __future__ import annotations

import numbers
from typing import Any, Callable, List, Sequence, Tuple, Union

import numpy as np

from tinytorch._tensor.creation import from_numpy, tensor as _new_tensor  # (the transforms' argument is named tensor)
from tinytorch._tensor.raw_bits import from_bits, to_bits
from tinytorch._tensor.tensor import Tensor
from tinytorch.utils.data import _random

__all__ = ["Compose", "Lambda", "Normalize", "RandomCrop", "RandomHorizontalFlip", "ToTensor"]


class Compose:
    """Composes several transforms together.

    Args:
        transforms (list of ``Transform`` objects): list of transforms to compose."""

    def __init__(self, transforms: Sequence[Callable]) -> None:
        self.transforms = list(transforms)

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({body}\n)"


class ToTensor:
    """Convert a numpy.ndarray (H x W x C, or H x W) to a tensor of shape (C x H x W).

    A ``uint8`` array in the range [0, 255] becomes a float32 tensor in the range [0.0, 1.0]; arrays
    of other dtypes are converted without scaling, as torchvision does."""

    def __call__(self, pic: np.ndarray) -> Tensor:
        if isinstance(pic, Tensor):
            raise TypeError("ToTensor: input is already a tensor")
        pic = np.asarray(pic)
        if pic.ndim not in (2, 3):
            raise ValueError(f"ToTensor: pic should be 2 or 3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic[:, :, None]
        chw = pic.transpose(2, 0, 1)
        if pic.dtype == np.uint8:
            out = np.divide(chw, np.float32(255.0), dtype=np.float32)  # x / 255 in float32, as torchvision
        else:
            out = np.array(chw, order="C")
        return from_numpy(np.ascontiguousarray(out))

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class Normalize:
    """Normalize a tensor image with mean and standard deviation.

    Given mean: ``(mean[1],...,mean[n])`` and std: ``(std[1],..,std[n])`` for ``n`` channels, this
    transform will normalize each channel of the input tensor i.e.,
    ``output[channel] = (input[channel] - mean[channel]) / std[channel]``.

    Args:
        mean (sequence): Sequence of means for each channel.
        std (sequence): Sequence of standard deviations for each channel.
        inplace(bool,optional): Bool to make this operation in-place."""

    def __init__(self, mean: Union[float, Sequence[float]], std: Union[float, Sequence[float]],
                 inplace: bool = False) -> None:
        self.mean = [float(mean)] if isinstance(mean, numbers.Number) else [float(m) for m in mean]
        self.std = [float(std)] if isinstance(std, numbers.Number) else [float(s) for s in std]
        if any(s == 0 for s in self.std):
            raise ValueError(f"std evaluated to zero after conversion to float, leading to division by zero: {self.std}")
        self.inplace = inplace

    def __call__(self, tensor: Tensor) -> Tensor:
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Normalize: input should be a tensor, got {type(tensor).__name__}; apply ToTensor first")
        if not tensor.is_floating_point():
            raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
        if tensor.dim() < 3:
            raise ValueError(f"Expected tensor to be a tensor image of size (..., C, H, W). Got {tuple(tensor.shape)}.")
        c = tensor.shape[-3]
        if len(self.mean) not in (1, c) or len(self.std) not in (1, c):
            raise ValueError(f"Normalize: {len(self.mean)} means / {len(self.std)} stds for {c} channels")
        mean = _new_tensor(self.mean, dtype=tensor.dtype).view(-1, 1, 1)
        std = _new_tensor(self.std, dtype=tensor.dtype).view(-1, 1, 1)
        if self.inplace:
            return tensor.sub_(mean).div_(std)
        return (tensor - mean) / std

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Lambda:
    """Apply a user-defined lambda as a transform.

    Args:
        lambd (function): Lambda/function to be used for transform."""

    def __init__(self, lambd: Callable[[Any], Any]) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


def _as_hw_array(img) -> Tuple[np.ndarray, Callable[[np.ndarray], Any], int]:
    """(numpy view, function turning a result back into img's type, index of the H axis)."""
    if isinstance(img, Tensor):
        dtype = img.dtype
        return to_bits(img), (lambda a: from_bits(np.ascontiguousarray(a), dtype)), img.dim() - 2
    arr = np.asarray(img)
    if arr.ndim not in (2, 3):
        raise ValueError(f"expected an HxW or HxWxC image, got shape {arr.shape}")
    return arr, (lambda a: np.ascontiguousarray(a)), 0


def _pad_width(padding, ndim: int, h_axis: int) -> List[Tuple[int, int]]:
    if isinstance(padding, numbers.Integral):
        left = right = top = bottom = int(padding)
    elif len(padding) == 2:
        left = right = int(padding[0])
        top = bottom = int(padding[1])
    elif len(padding) == 4:
        left, top, right, bottom = (int(p) for p in padding)
    else:
        raise ValueError(f"Padding must be an int or a 1, 2, or 4 element tuple, not a {len(padding)} element tuple")
    width = [(0, 0)] * ndim
    width[h_axis] = (top, bottom)
    width[h_axis + 1] = (left, right)
    return width


class RandomCrop:
    """Crop the given image at a random location.

    Args:
        size (sequence or int): Desired output size of the crop. If size is an int instead of
            sequence like (h, w), a square crop (size, size) is made.
        padding (int or sequence, optional): Optional padding on each border of the image. If a
            single int is provided this is used to pad all borders. If sequence of length 2 is
            provided this is the padding on left/right and top/bottom respectively. If a sequence of
            length 4 is provided this is the padding for the left, top, right and bottom borders.
        pad_if_needed (boolean): It will pad the image if smaller than the desired size.
        fill (number): Pixel fill value for constant fill.
        padding_mode (str): one of constant, edge, reflect or symmetric."""

    def __init__(self, size: Union[int, Sequence[int]], padding=None, pad_if_needed: bool = False,
                 fill: float = 0, padding_mode: str = "constant") -> None:
        self.size = (int(size), int(size)) if isinstance(size, numbers.Integral) else tuple(int(s) for s in size)
        if len(self.size) == 1:
            self.size = (self.size[0], self.size[0])
        if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def _pad(self, arr: np.ndarray, width) -> np.ndarray:
        if self.padding_mode == "constant":
            return np.pad(arr, width, mode="constant", constant_values=self.fill)
        return np.pad(arr, width, mode=self.padding_mode)

    def __call__(self, img):
        arr, back, h = _as_hw_array(img)
        if self.padding is not None:
            arr = self._pad(arr, _pad_width(self.padding, arr.ndim, h))
        th, tw = self.size
        if self.pad_if_needed and arr.shape[h + 1] < tw:
            arr = self._pad(arr, _pad_width((tw - arr.shape[h + 1], 0), arr.ndim, h))
        if self.pad_if_needed and arr.shape[h] < th:
            arr = self._pad(arr, _pad_width((0, th - arr.shape[h]), arr.ndim, h))
        H, W = arr.shape[h], arr.shape[h + 1]
        if H < th or W < tw:
            raise ValueError(f"Required crop size {(th, tw)} is larger than input image size {(H, W)}")
        i = _random.randint(H - th + 1, 1)[0]
        j = _random.randint(W - tw + 1, 1)[0]
        index = [slice(None)] * arr.ndim
        index[h], index[h + 1] = slice(i, i + th), slice(j, j + tw)
        return back(arr[tuple(index)])

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Horizontally flip the given image randomly with a given probability.

    Args:
        p (float): probability of the image being flipped. Default value is 0.5"""

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def __call__(self, img):
        if _random.uniform() < self.p:
            arr, back, h = _as_hw_array(img)
            return back(np.flip(arr, axis=h + 1))
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"
