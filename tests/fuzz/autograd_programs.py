"""Autograd misuse fuzzing: short random programs over a leaf tensor (ops, in-place changes to
saved and leaf tensors, hooks returning wrong things, detach, backward twice with and without
retain_graph, autograd.grad). The same program runs in tinytorch and, in the long tier, in torch;
both must raise, or both succeed with the same gradients. Nothing may crash or hang.
Child usage: python autograd_programs.py PROGRAMS.json numpy|torch START"""
from __future__ import annotations

import json
import os
import sys

import numpy as np
from hypothesis import strategies as st

STEPS = ["mul2", "exp", "sin", "square", "add_leaf", "view", "inplace_add", "inplace_after_exp", "inplace_leaf",
         "detach", "hook_scale", "hook_none", "hook_int", "hook_shape", "hook_dtype", "retain_grad", "clone"]
ENDS = ["backward", "backward_twice", "backward_twice_retain", "grad", "grad_create_graph", "backward_nonscalar"]


@st.composite
def program(draw):
    return {"steps": draw(st.lists(st.sampled_from(STEPS), min_size=1, max_size=6)),
            "end": draw(st.sampled_from(ENDS)), "seed": draw(st.integers(0, 2 ** 31 - 1)),
            "dtype": draw(st.sampled_from(["float32", "float64"]))}


def execute(p: dict, mod) -> list:
    """Runs the program; returns the leaf's gradient(s) as float64 arrays."""
    rng = np.random.default_rng(p["seed"])
    x = mod.tensor(rng.uniform(-1, 1, (2, 3)), dtype=getattr(mod, p["dtype"])).requires_grad_(True)
    v = x
    for step in p["steps"]:
        if step == "mul2":
            v = v * 2
        elif step == "exp":
            v = v.exp()
        elif step == "sin":
            v = v.sin()
        elif step == "square":
            v = v * v
        elif step == "add_leaf":
            v = v + x
        elif step == "view":
            v = v.reshape(3, 2).reshape(2, 3)
        elif step == "inplace_add":
            v.add_(1)
        elif step == "inplace_after_exp":          # modifies a tensor exp saved for backward
            y = v.exp()
            v.mul_(2)
            v = y + v
        elif step == "inplace_leaf":
            x.add_(1)
        elif step == "detach":
            v = v.detach()
        elif step == "hook_scale" and v.requires_grad:
            v.register_hook(lambda g: g * 3)
        elif step == "hook_none" and v.requires_grad:
            v.register_hook(lambda g: None)
        elif step == "hook_int" and v.requires_grad:
            v.register_hook(lambda g: 3)
        elif step == "hook_shape" and v.requires_grad:
            v.register_hook(lambda g: g.sum())
        elif step == "hook_dtype" and v.requires_grad:
            v.register_hook(lambda g: g.to(mod.float16))
        elif step == "retain_grad" and v.requires_grad:
            v.retain_grad()
        elif step == "clone":
            v = v.clone()
    loss = v.sum() if p["end"] != "backward_nonscalar" else v
    if p["end"] in ("backward", "backward_nonscalar"):
        loss.backward()
    elif p["end"] == "backward_twice":
        loss.backward()
        loss.backward()
    elif p["end"] == "backward_twice_retain":
        loss.backward(retain_graph=True)
        loss.backward()
    else:
        g, = mod.autograd.grad(loss, x, create_graph=p["end"] == "grad_create_graph")
        return [g.detach().double().numpy()]
    return [x.grad.detach().double().numpy()] if x.grad is not None else []


def main() -> None:
    import faulthandler

    import tinytorch as tt
    programs = json.load(open(sys.argv[1]))
    tier = sys.argv[2]
    clean = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError)
    seconds = int(os.environ.get("TINYTORCH_FUZZ_CASE_SECONDS", 20))
    for i in range(int(sys.argv[3]), len(programs)):
        faulthandler.dump_traceback_later(seconds, exit=True)
        p = programs[i]
        try:
            mine, mine_err = execute(p, tt), None
        except clean as e:
            mine, mine_err = None, e
        except Exception as e:  # noqa: BLE001 - any other type is the finding
            r = {"status": "bad_error", "detail": f"{type(e).__name__}: {e}"[:300]}
            mine = mine_err = None
        else:
            r = None
        if mine_err is not None or mine is not None:
            r = {"status": "agree"} if tier != "torch" else _against_torch(p, mine, mine_err)
        faulthandler.cancel_dump_traceback_later()
        r["i"] = i
        print(json.dumps(r), flush=True)


def _against_torch(p, mine, mine_err) -> dict:
    import torch
    try:
        ref, ref_err = execute(p, torch), None
    except Exception as e:  # noqa: BLE001
        ref, ref_err = None, e
    if (mine_err is None) != (ref_err is None):
        what = "rejects" if mine_err is not None else "lenient"
        return {"status": what, "detail": f"{type(mine_err or ref_err).__name__}: {mine_err or ref_err}"[:200]}
    if mine_err is not None:
        return {"status": "agree_error"}
    if len(mine) != len(ref) or any(a.shape != b.shape or not np.allclose(a, b, rtol=1e-5, atol=1e-6)
                                    for a, b in zip(mine, ref)):
        return {"status": "mismatch", "detail": f"grads {[a.tolist() for a in mine]} vs {[b.tolist() for b in ref]}"[:300]}
    return {"status": "agree"}


if __name__ == "__main__":
    main()
