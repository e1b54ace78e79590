"""``generate``: autoregressive decoding with a preallocated KV cache (one prefill pass over the
prompt, then one token per step), batched left-padded prompts, greedy or sampled, with
Hugging Face ``generate``'s argument names and processing order (repetition penalty, then
temperature, top-k, top-p). Model classes get it as a method from :class:`GenerationMixin` (as
transformers' ``generation/utils.py``); this module knows models only through that interface."""
from __future__ import annotations

import math
import numbers
from typing import Callable, Optional, Sequence, Union

from tinytorch._tensor.creation import as_tensor, ones, zeros
from tinytorch._core.dtype import bool_, int64
from tinytorch._composites.sampling import multinomial
from tinytorch._ops.elementwise import where
from tinytorch._ops.index import sort, topk
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn import functional as F
from tinytorch._tensor.random import Generator
from tinytorch._tensor.tensor import Tensor


def positions_from_mask(attention_mask: Tensor) -> Tensor:
    """Position ids of left-padded rows, as transformers: cumsum(mask) - 1, pads at 1. (B, S) -> (B, S)."""
    pos = attention_mask.to(dtype=int64).cumsum(-1) - 1
    return pos.masked_fill(attention_mask == 0, 1)


def _validate(input_ids: Tensor, max_new_tokens, do_sample, temperature, top_k, top_p, repetition_penalty) -> None:
    if input_ids.dim() != 2 or input_ids.shape[1] == 0:
        raise ValueError(f"generate: input_ids must be a non-empty (batch, length) tensor of token ids, got shape "
                         f"{list(input_ids.shape)}")
    if input_ids.is_floating_point() or input_ids.is_complex() or input_ids.dtype == bool_:
        raise TypeError(f"generate: input_ids must hold integer token ids, got {input_ids.dtype}")
    if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 0:
        raise ValueError(f"generate: max_new_tokens must be a non-negative int, got {max_new_tokens!r}")
    if not isinstance(temperature, (int, float)) or not math.isfinite(temperature) or temperature < 0:
        raise ValueError(f"generate: temperature must be a finite number >= 0, got {temperature!r}")
    if do_sample and temperature == 0:
        raise ValueError("generate: temperature=0 with do_sample=True; use do_sample=False for greedy decoding")
    if top_p is not None and (not isinstance(top_p, (int, float)) or not 0 < top_p <= 1):
        raise ValueError(f"generate: top_p must be a float in (0, 1], got {top_p!r}")
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k <= 0):
        raise ValueError(f"generate: top_k must be a positive int, got {top_k!r}")
    if not isinstance(repetition_penalty, (int, float)) or not repetition_penalty > 0:
        raise ValueError(f"generate: repetition_penalty must be a number > 0, got {repetition_penalty!r}")


def _is_int(v) -> bool:
    # Python and numpy integers; a bool is no token id (numpy's bool_ is not Integral)
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _prompt_ids(input_ids) -> Tensor:
    """input_ids as a (B, T) tensor: a tensor as it is, a numpy array as a tensor (1-D: one prompt), a
    list of ints one prompt, a list of equally long lists of ints a batch (int64)."""
    if isinstance(input_ids, Tensor):
        return input_ids
    if type(input_ids).__module__ == "numpy" and hasattr(input_ids, "ndim"):     # an ndarray: its dtype is checked
        return as_tensor(input_ids if input_ids.ndim != 1 else input_ids[None])
    if not isinstance(input_ids, (list, tuple)):
        raise TypeError(f"generate: input_ids must be a (batch, length) tensor of token ids or a list of them, got "
                        f"{type(input_ids).__name__}")
    if not input_ids:
        raise ValueError("generate: input_ids is empty; the prompt needs at least one token id")
    rows = input_ids if isinstance(input_ids[0], (list, tuple)) else [input_ids]
    for r, row in enumerate(rows):
        if not isinstance(row, (list, tuple)) or not all(_is_int(t) for t in row):
            bad = row if not isinstance(row, (list, tuple)) else next(t for t in row if not _is_int(t))
            raise TypeError(f"generate: input_ids must hold int token ids, got {type(bad).__name__} {bad!r} in "
                            f"prompt {r}")
        if len(row) != len(rows[0]):
            raise ValueError(f"generate: the prompts in input_ids have different lengths ({len(rows[0])} and "
                             f"{len(row)}); left-pad them and pass attention_mask")
    return as_tensor([[int(t) for t in row] for row in rows], dtype=int64)


def _token_ids(eos_token_id, pad_token_id, vocab_size: int) -> tuple:
    """(eos ids as a list, the pad id), each checked: ints (not bools, floats or strings), >= 0, the pad
    id inside the vocabulary (finished rows feed it to the model)."""
    if eos_token_id is None:
        eos = []
    elif _is_int(eos_token_id):
        eos = [int(eos_token_id)]
    elif isinstance(eos_token_id, (list, tuple)) and all(_is_int(e) for e in eos_token_id):
        eos = [int(e) for e in eos_token_id]
    else:
        raise TypeError(f"generate: eos_token_id must be an int or a list of ints, got {eos_token_id!r} "
                        f"({type(eos_token_id).__name__})")
    if any(e < 0 for e in eos):
        raise ValueError(f"generate: eos_token_id must be >= 0, got {eos_token_id!r}")
    if pad_token_id is not None:
        if not _is_int(pad_token_id):
            raise TypeError(f"generate: pad_token_id must be an int, got {pad_token_id!r} "
                            f"({type(pad_token_id).__name__})")
        if not 0 <= pad_token_id < vocab_size:
            raise ValueError(f"generate: pad_token_id must be a token id in [0, {vocab_size}), got {pad_token_id}")
    return eos, int(pad_token_id) if pad_token_id is not None else (eos[0] if eos else 0)


def _checked_mask(attention_mask, B: int, T: int) -> Tensor:
    """attention_mask (B, T) of 0 (padding) and 1 (tokens), each row with a token: a float mask of
    other values (0.5, -1) would otherwise be truncated or read as attended."""
    if not isinstance(attention_mask, Tensor):
        if not isinstance(attention_mask, (list, tuple)):
            raise TypeError(f"generate: attention_mask must be a (batch, length) tensor of 0 and 1, got "
                            f"{type(attention_mask).__name__}")
        attention_mask = as_tensor(attention_mask)
    if tuple(attention_mask.shape) != (B, T):
        raise ValueError(f"generate: attention_mask must have input_ids' shape {[B, T]}, got "
                         f"{list(attention_mask.shape)}")
    if attention_mask.is_complex() or not bool(((attention_mask == 0) | (attention_mask == 1)).all()):
        bad = attention_mask[(attention_mask != 0) & (attention_mask != 1)] if not attention_mask.is_complex() \
            else attention_mask.flatten()
        raise ValueError(f"generate: attention_mask must hold only 0 (padding) and 1 (tokens), got "
                         f"{bad.flatten()[0].item()!r} ({attention_mask.dtype})")
    empty = (attention_mask == 0).all(-1)
    if bool(empty.any()):
        raise ValueError(f"generate: attention_mask row {int(empty.to(dtype=int64).argmax().item())} is all 0: "
                         "each prompt needs at least one token")
    return attention_mask


def apply_repetition_penalty(scores: Tensor, seen: Tensor, penalty: float) -> Tensor:
    """Makes tokens in ``seen`` (B, S) less likely: their scores (B, V) are divided by penalty where
    positive, multiplied where negative (as transformers' RepetitionPenaltyLogitsProcessor)."""
    picked = scores.gather(1, seen)
    picked = where(picked < 0, picked * penalty, picked / penalty)
    return scores.scatter(1, seen, picked)


def apply_top_k(scores: Tensor, k: int) -> Tensor:
    """Keeps the k highest scores per row (ties at the k-th kept), the rest -inf."""
    k = min(k, scores.shape[-1])
    kth = topk(scores, k, -1).values[..., -1:]
    return scores.masked_fill(scores < kth, float("-inf"))


def apply_top_p(scores: Tensor, top_p: float) -> Tensor:
    """Nucleus filtering: keeps the smallest set of highest-probability tokens whose probabilities
    sum to at least top_p (at least one token), the rest -inf (as transformers' TopPLogitsWarper)."""
    if top_p >= 1.0:
        return scores
    ascending, order = sort(scores, -1, descending=False)
    cumulative = F.softmax(ascending, -1).cumsum(-1)
    drop = cumulative <= (1 - top_p)
    drop[..., -1] = False
    return scores.masked_fill(drop.scatter(1, order, drop), float("-inf"))


def _stream(streamer, tokens: Tensor) -> None:
    if hasattr(streamer, "put"):  # transformers' BaseStreamer protocol
        streamer.put(tokens)
    else:
        streamer(tokens)


def generate(model, input_ids: Union[Tensor, Sequence], max_new_tokens: int = 20, do_sample: bool = False,
             temperature: float = 1.0, top_k: Optional[int] = None, top_p: Optional[float] = None,
             repetition_penalty: float = 1.0, eos_token_id: Union[int, Sequence[int], None] = None,
             pad_token_id: Optional[int] = None, attention_mask: Optional[Tensor] = None,
             streamer: Optional[Callable] = None, generator=None, cuda_graph: bool = False) -> Tensor:
    """Extends each prompt of ``input_ids`` (B, T) by up to ``max_new_tokens`` tokens.

    Args:
        input_ids: token ids (B, T) (a list of ints is one prompt); prompts of different lengths are
            left-padded, with ``attention_mask`` (B, T) of 0 on the padding.
        do_sample: sample from the processed distribution (else greedy argmax).
        temperature, top_k, top_p: sampling's processing of the logits (used when ``do_sample``).
        repetition_penalty: > 1 discourages tokens already in the sequence (greedy and sampled).
        eos_token_id: an id or ids that end a sequence; finished rows continue with ``pad_token_id``
            (default: the first eos id) and generation stops when every row has finished.
        streamer: called with each step's new tokens (B,) (or an object with ``put``/``end``, as
            transformers' streamers).
        generator: a ``tinytorch.Generator`` for sampling.
        cuda_graph: replay each decode step from a CUDA graph (the model on a GPU; greedy decoding
            without repetition_penalty or padding): see docs/cuda_graphs.md. The captured step stays
            on the model (``model.decode_graphs``): later calls with the same batch size, length
            bucket (64 positions) and number of eos ids replay it without capturing again.

    Returns:
        (B, T + n) token ids: the prompts followed by the n <= max_new_tokens generated tokens.
    """
    weight = model.model.embed_tokens.weight
    device = weight.device
    input_ids = _prompt_ids(input_ids)
    _validate(input_ids, max_new_tokens, do_sample, temperature, top_k, top_p, repetition_penalty)
    B, T = input_ids.shape[0], input_ids.shape[1]
    config = model.config
    if T > config.max_position_embeddings:
        raise ValueError(f"generate: the prompt (input_ids of length {T}) is longer than the model's context "
                         f"(max_position_embeddings={config.max_position_embeddings})")
    config.check_length(T + max_new_tokens, f"generate: prompt length {T} + max_new_tokens {max_new_tokens}")
    vocab = config.vocab_size
    low, high = int(input_ids.min().item()), int(input_ids.max().item())
    if low < 0 or high >= vocab:
        raise ValueError(f"generate: input_ids must be token ids in [0, {vocab}), got {low if low < 0 else high}")
    eos, pad = _token_ids(eos_token_id, pad_token_id, vocab)
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"generate: generator must be a tinytorch.Generator, got {type(generator).__name__}")
    if streamer is not None and not (callable(streamer) or hasattr(streamer, "put")):
        raise TypeError(f"generate: streamer must be callable or have put(), got {type(streamer).__name__}")
    if attention_mask is not None:
        attention_mask = _checked_mask(attention_mask, B, T)
    ids = input_ids.to(device=device, dtype=int64)
    total = T + max_new_tokens
    if cuda_graph:
        _check_graphable(device, do_sample, repetition_penalty, attention_mask)
        with no_grad():
            return _generate_graphed(model, ids, max_new_tokens, eos, pad, streamer)

    with no_grad():
        out = zeros(B, total, dtype=int64, device=device)        # prompt + generated ids
        out[:, :T] = ids
        full_mask = positions = None
        if attention_mask is not None:
            attention_mask = attention_mask.to(device=device, dtype=int64)
            if not bool((attention_mask != 0).all()):           # padded: masks and positions per row
                full_mask = ones(B, total, dtype=int64, device=device)
                full_mask[:, :T] = attention_mask
                positions = positions_from_mask(attention_mask)[:, -1:] + 1   # (B, 1): next position
        cache = model.make_cache(B, total)
        logits = model(ids, attention_mask=None if full_mask is None else full_mask[:, :T],
                       past_key_values=cache, logits_to_keep=1)[:, -1]       # (B, V)
        eos_ids = as_tensor(eos, dtype=int64, device=device) if eos else None
        unfinished = ones(B, dtype=bool_, device=device) if eos else None
        n = 0
        for step in range(max_new_tokens):
            scores = logits.float()
            if repetition_penalty != 1.0:
                scores = apply_repetition_penalty(scores, out[:, :T + step], repetition_penalty)
            if do_sample:
                if temperature != 1.0:
                    scores = scores / temperature
                if top_k is not None:
                    scores = apply_top_k(scores, top_k)
                if top_p is not None:
                    scores = apply_top_p(scores, top_p)
                nxt = multinomial(F.softmax(scores, -1), 1, generator=generator)[:, 0]
            else:
                nxt = scores.argmax(-1)
            if unfinished is not None:
                nxt = where(unfinished, nxt, pad)
            out[:, T + step] = nxt
            n = step + 1
            if streamer is not None:
                _stream(streamer, nxt)
            if unfinished is not None:
                unfinished = unfinished.logical_and((nxt[:, None] == eos_ids).any(-1).logical_not())
                if not bool(unfinished.any()):
                    break
            if step + 1 == max_new_tokens:
                break
            logits = model(nxt[:, None], attention_mask=None if full_mask is None else full_mask[:, :T + step + 1],
                           position_ids=positions, past_key_values=cache)[:, -1]
            if positions is not None:
                positions = positions + 1
        if streamer is not None and hasattr(streamer, "end"):
            streamer.end()
    return out[:, :T + n]


class GenerationMixin:
    """Gives a causal language model :meth:`generate`. The model provides ``config``
    (``max_position_embeddings``, ``check_length``), ``model.embed_tokens.weight`` (its device),
    ``make_cache(batch_size, max_length)`` and a forward taking ``attention_mask``, ``position_ids``,
    ``past_key_values`` and ``logits_to_keep``; ``cuda_graph=True`` also uses ``decode_graphs``."""

    def generate(self, input_ids, max_new_tokens: int = 20, **kwargs) -> Tensor:
        """Generates up to ``max_new_tokens`` tokens after ``input_ids``; see
        :func:`tinytorch.models.generation.generate` for the arguments."""
        return generate(self, input_ids, max_new_tokens, **kwargs)


def _check_graphable(device, do_sample: bool, repetition_penalty: float, attention_mask) -> None:
    if device.type != "cuda":
        raise ValueError(f"generate: cuda_graph=True needs the model on a CUDA device, got {device}")
    if do_sample or repetition_penalty != 1.0:
        raise NotImplementedError("generate: cuda_graph=True supports greedy decoding only (do_sample=False, "
                                  "repetition_penalty=1.0)")
    if attention_mask is not None and not bool((attention_mask != 0).all()):
        raise NotImplementedError("generate: cuda_graph=True does not support padded prompts (attention_mask "
                                  "with zeros)")


def _generate_graphed(model, ids: Tensor, max_new_tokens: int, eos, pad: int, streamer) -> Tensor:
    """generate() with each decode step replayed from a CUDA graph (tinytorch/models/graph_decode.py):
    the prompt ids (B, T) are prefilled eagerly into the cache of the model's decoder for this batch
    and length (captured on its first use, replayed by later calls)."""
    B, T = ids.shape[0], ids.shape[1]
    if max_new_tokens == 0:
        return ids.clone()
    dec = model.decode_graphs.decoder(model, B, T + max_new_tokens, len(eos))
    dec.cache.reset()
    dec.out.narrow(1, 0, T).copy_(ids)
    logits = model(ids, past_key_values=dec.cache, logits_to_keep=1)[:, -1]    # (B, V)
    nxt = logits.float().argmax(-1)                                   # (B,) the first new token
    unfinished = None
    if eos:
        eos_ids = as_tensor(eos, dtype=int64, device=ids.device)
        unfinished = (nxt[:, None] == eos_ids).any(-1).logical_not()
    dec.out[:, T] = nxt
    n = 1
    if streamer is not None:
        _stream(streamer, nxt)
    done = unfinished is not None and not bool(unfinished.any())
    if max_new_tokens > 1 and not done:
        dec.start(nxt, T, eos, pad, unfinished)
        for step in range(1, max_new_tokens):
            dec.step()                         # the step for position T + step - 1
            n = step + 1
            if streamer is not None:
                _stream(streamer, dec.out[:, T + step].clone())
            if dec.finished():
                break
    if streamer is not None and hasattr(streamer, "end"):
        streamer.end()
    return dec.out[:, :T + n].clone()          # the buffer is the next call's
