"""``tinytorch.distributed.checkpoint`` (``dcp``): distributed checkpoints, as PyTorch's.

``dcp.save(state_dict, checkpoint_id=dir)``: every rank writes the shards it owns (safetensors),
rank 0 an index (JSON); ``dcp.load(state_dict, checkpoint_id=dir)`` fills a state dict in place
on any world size, each rank reading only the rows it needs. The state dicts come from
``tinytorch.distributed.checkpoint.state_dict`` (``get_model_state_dict`` ...). No pickle anywhere.
See ``_format.py`` for the layout and docs/distributed.md."""
from tinytorch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,  # noqa: F401
                                                         get_optimizer_state_dict, get_state_dict,
                                                         set_model_state_dict, set_optimizer_state_dict,
                                                         set_state_dict)
from tinytorch.distributed.checkpoint.state_dict_loader import load
from tinytorch.distributed.checkpoint.state_dict_saver import save
from tinytorch.distributed.fsdp._sharded_tensor import ShardedTensor

__all__ = ["save", "load", "ShardedTensor", "StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict",
           "set_model_state_dict", "set_optimizer_state_dict", "get_state_dict", "set_state_dict"]
