"""The summary protos ``SummaryWriter`` writes (scalars, histograms, text), built as PyTorch's
``torch.utils.tensorboard.summary`` builds them."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from tinytorch._core.dtype import float32
from tinytorch._tensor.tensor import Tensor


def make_np(x: Any) -> np.ndarray:
    """A tensor, numpy array or Python number as a numpy array (reduced-precision floats as float32)."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, Tensor):
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.is_floating_point() and t.element_size() < 4:
            t = t.to(float32)
        return t.numpy()
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    raise NotImplementedError(f"Got {type(x)}, but numpy array or tinytorch tensor are expected.")


def scalar(name: str, value: Any, new_style: bool = False, double_precision: bool = False) -> Summary:
    """A scalar summary (``simple_value``, or a scalars-plugin tensor with ``new_style``)."""
    array = make_np(value).squeeze()
    if array.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). Was given size: {array.size} "
                             f"and {array.ndim} dimensions.")
    v = float(array)
    if new_style:
        proto = TensorProto(double_val=[v], dtype="DT_DOUBLE") if double_precision else \
            TensorProto(float_val=[v], dtype="DT_FLOAT")
        metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
        return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=metadata)])
    return Summary(value=[Summary.Value(tag=name, simple_value=v)])


def make_histogram(values: np.ndarray, bins: Any, max_bins: Optional[int] = None) -> HistogramProto:
    """A histogram proto of ``values`` (numpy's ``histogram`` bins), trimmed to the bins that
    hold values plus one empty bin on the left (TensorBoard shows only right bin edges)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    num_bins = len(counts)
    if max_bins is not None and num_bins > max_bins:
        subsampling = num_bins // max_bins
        remainder = num_bins % subsampling
        if remainder != 0:
            counts = np.pad(counts, pad_width=[[0, subsampling - remainder]], mode="constant", constant_values=0)
        counts = counts.reshape(-1, subsampling).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:subsampling]
        new_limits[-1] = limits[-1]
        limits = new_limits
    cum_counts = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum_counts, [0, cum_counts[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty.")
    return HistogramProto(min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
                          sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist())


def histogram(name: str, values: Any, bins: Any, max_bins: Optional[int] = None) -> Summary:
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def text(tag: str, text_string: str) -> Summary:
    """A text-plugin summary, under the tag ``{tag}/text_summary`` as PyTorch writes it."""
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text_string.encode(encoding="utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata, tensor=proto)])
