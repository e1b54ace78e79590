"""Writes the PyTorch checkpoints tests/cpu/test_torch_checkpoint.py reads (run with a torch install:
``python tests/data/torch_checkpoints/make_checkpoints.py``). The tensors come from numpy's seeded
generator (``expected_arrays`` below), so the test rebuilds the expected values without torch."""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def expected_arrays() -> dict:
    """The values the checkpoints hold, as numpy arrays (bfloat16 as float32 values exact in bf16)."""
    rng = np.random.default_rng(1234)
    w = rng.standard_normal((4, 6)).astype(np.float32)
    return {
        "w": w,
        "p": rng.standard_normal(3).astype(np.float32),
        "bf": np.array([0.5, -1.25, 3.0], np.float32),
        "h": rng.standard_normal(5).astype(np.float16),
        "d": rng.standard_normal((2, 3)),
        "i": np.arange(-3, 4, dtype=np.int64),
        "i32": np.array([7, -8, 9], np.int32),
        "u8": np.array([0, 200, 255], np.uint8),
        "b": np.array([True, False, True]),
        "s": np.array(2.5, np.float32),
        "lin_w": rng.standard_normal((2, 3)).astype(np.float32),
        "lin_b": rng.standard_normal(2).astype(np.float32),
    }


def build(torch):
    e = expected_arrays()
    t = {k: torch.from_numpy(v.copy()) for k, v in e.items()}
    w = t["w"]
    sd = torch.nn.Linear(3, 2)
    with torch.no_grad():
        sd.weight.copy_(t["lin_w"])
        sd.bias.copy_(t["lin_b"])
    state = torch.nn.ModuleDict({"fc": sd}).state_dict()  # an OrderedDict with _metadata
    model = {
        "w": w, "wt": w.t(), "sl": w[1:3, ::2], "row": w[2],
        "p": torch.nn.Parameter(t["p"]), "bf": t["bf"].bfloat16(), "h": t["h"], "d": t["d"],
        "i": t["i"], "i32": t["i32"], "u8": t["u8"], "b": t["b"], "s": t["s"], "e": torch.empty(0, 3),
        "rg": t["d"].clone().requires_grad_(True),
    }
    return {
        "model": model, "state": state,
        "optimizer": {"state": {0: {"step": torch.tensor(3.0), "exp_avg": w * 0 + 1}},
                      "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0]}]},
        "epoch": 7, "name": "ckpt", "big": 2 ** 70, "neg": -5, "none": None, "flag": True,
        "tup": (1, 2.5), "blob": b"\x00\xffab", "cplx": 1 + 2j, "set": {1, 2}, "dtype": torch.float16,
        "size": torch.Size([2, 3]), "device": torch.device("cpu"),
    }


def main() -> None:
    import torch
    obj = build(torch)
    torch.save(obj, os.path.join(HERE, "zip_format.pt"))
    torch.save(obj, os.path.join(HERE, "legacy_format.pt"), _use_new_zipfile_serialization=False)
    torch.save({"q": torch.arange(4, dtype=torch.int8)}, os.path.join(HERE, "int8.pt"))
    torch.save(torch.nn.Linear(2, 2), os.path.join(HERE, "full_module.pt"))  # a pickled Module: refused


if __name__ == "__main__":
    main()
