"""A SentencePiece-style BPE ``tokenizers.Tokenizer`` from a GGUF vocabulary (``tokenizer.ggml.model ==
"llama"``: llama-2, mistral, gemma): tokens with scores and llama.cpp token types, byte-fallback
tokens ``<0x00>``..``<0xFF>``, "▁" for a space, and usually no merges.

It follows transformers' GGUF recipe (``integrations/gguf/gguf_tokenizer_mapping.py`` with its
``LlamaTokenizer``/``GemmaTokenizer``): a BPE model with ``byte_fallback`` whose merges, when the file
lists none, are derived from the vocabulary (every split of a token into two vocabulary tokens,
best-scored tokens first; :func:`derived_merges`).

* llama/mistral: a ``Metaspace`` pre-tokenizer ("▁" for spaces, one prepended to the first piece of
  the text), decoded by "▁" -> " ", byte fallback, fuse and one leading space stripped.
* gemma: spaces become "▁" in a ``Replace`` normalizer (nothing prepended); a token of spaces only is
  spelled with "▁"; the merges follow the tokens' order in the file, not their scores (Gemma's scores
  don't follow its merge order)."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

SPACE = "\u2581"   # SentencePiece's "▁"


def derived_merges(tokens: Sequence[str], scores: Optional[Dict[str, float]] = None) -> List[Tuple[str, str]]:
    """The BPE merges a vocabulary implies (transformers' ``generate_merges``): each token's splits
    into two vocabulary tokens, ordered by the token's score (best first, ties: the longer left part);
    without ``scores``, by the token's id (lowest first, ties: the shorter left part)."""
    vocab = {t: i for i, t in enumerate(tokens)}
    reverse = scores is not None
    ranked = dict(scores) if reverse else vocab
    merges = []
    for piece, score in ranked.items():
        local = [(piece[:k], piece[k:], score) for k in range(1, len(piece))
                 if piece[:k] in vocab and piece[k:] in vocab]
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        merges.extend(local)
    merges.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=reverse)   # stable: ties keep their order
    return [(left, right) for left, right, _ in merges]


def sentencepiece_backend(tokens: Sequence[str], scores: Optional[Sequence[float]], token_types: Sequence[int] = (),
                          merges: Optional[Sequence[str]] = None, gemma: bool = False,
                          unk_token_id: Optional[int] = None):
    """The ``tokenizers.Tokenizer`` of a SentencePiece-style GGUF vocabulary: ``tokens`` (id order),
    their ``scores`` (``tokenizer.ggml.scores``), llama.cpp ``token_types`` (control tokens become
    special tokens, user-defined ones added tokens), the file's ``merges`` ("a b" strings) if it has
    them, ``gemma`` for gemma's spelling and merge order (see the module docstring)."""
    from tinytorch.models.tokenizer import _import, add_gguf_tokens
    tk = _import("tokenizers")
    from tokenizers import decoders, models, normalizers, pre_tokenizers
    tokens = list(tokens)
    if gemma:   # a token of spaces only is stored with real spaces; the model looks it up as "▁"s
        tokens = [SPACE * len(t) if " " in t and not t.strip() else t for t in tokens]
    if merges is not None:
        pairs = [tuple(m.split(" ")) for m in merges]
    elif gemma:
        pairs = derived_merges(tokens, {t: -i for i, t in enumerate(tokens)})
    else:
        if scores is None or len(scores) != len(tokens):
            got = "none" if scores is None else len(scores)
            raise ValueError(f"sentencepiece_backend: the vocabulary has no merges, so each of its {len(tokens)} "
                             f"tokens needs a score (tokenizer.ggml.scores), got {got}")
        pairs = derived_merges(tokens, dict(zip(tokens, (float(s) for s in scores))))
    vocab = {t: i for i, t in enumerate(tokens)}
    unk = tokens[unk_token_id] if unk_token_id is not None and 0 <= unk_token_id < len(tokens) else None
    if unk is None and gemma and "<unk>" in vocab:
        unk = "<unk>"
    backend = tk.Tokenizer(models.BPE(vocab, pairs, unk_token=unk, fuse_unk=True, byte_fallback=True, dropout=None))
    steps = [decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
    if gemma:
        backend.normalizer = normalizers.Replace(" ", SPACE)
        backend.pre_tokenizer = pre_tokenizers.Split(pattern=" ", behavior="merged_with_previous", invert=False)
    else:
        backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement=SPACE, prepend_scheme="first", split=False)
        steps.append(decoders.Strip(content=" ", left=1))
    backend.decoder = decoders.Sequence(steps)
    return add_gguf_tokens(backend, tokens, token_types, vocab)
