"""``tinytorch.utils.data``: datasets, samplers and the DataLoader, as ``torch.utils.data``."""
from tinytorch.utils.data.collate import default_collate, default_convert
from tinytorch.utils.data.dataloader import DataLoader
from tinytorch.utils.data.dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split,
)
from tinytorch.utils.data.distributed import DistributedSampler
from tinytorch.utils.data.sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler, WeightedRandomSampler,
)
from tinytorch.utils.data._worker import WorkerInfo, get_worker_info

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "DistributedSampler",
    "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
    "TensorDataset", "WeightedRandomSampler", "WorkerInfo", "default_collate", "default_convert",
    "get_worker_info", "random_split",
]
