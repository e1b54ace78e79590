"""``Tokenizer``: a ``tokenizers.Tokenizer`` built from a GGUF file's ``tokenizer.ggml.*`` metadata
or read from ``tokenizer.json``, with the special ids and the chat template (rendered with jinja2 as
transformers does).

GGUF vocabularies come in two kinds:

* byte-level BPE (``tokenizer.ggml.model == "gpt2"``): tokens + merges (:func:`byte_level_backend`);
* SentencePiece-style BPE (``"llama"``: llama-2, mistral, gemma; :func:`sentencepiece_backend`):
  tokens with scores and llama.cpp token types, byte-fallback tokens ``<0x00>``..``<0xFF>``, "▁" for
  a space, and usually no merges. It follows transformers' GGUF recipe
  (``integrations/gguf/gguf_tokenizer_mapping.py`` with its ``LlamaTokenizer``/``GemmaTokenizer``): a
  BPE model with ``byte_fallback`` whose merges, when the file lists none, are derived from the
  vocabulary (every split of a token into two vocabulary tokens, best-scored tokens first;
  :func:`derived_merges`).

  - llama/mistral: a ``Metaspace`` pre-tokenizer ("▁" for spaces, one prepended to the first piece
    of the text), decoded by "▁" -> " ", byte fallback, fuse and one leading space stripped.
  - gemma: spaces become "▁" in a ``Replace`` normalizer (nothing prepended); a token of spaces only
    is spelled with "▁"; the merges follow the tokens' order in the file, not their scores (Gemma's
    scores don't follow its merge order)."""
from __future__ import annotations

import ast
import json
import os
import warnings
from datetime import datetime
from typing import Dict, List, Optional, Sequence, Tuple

from tinytorch._tensor.creation import as_tensor
from tinytorch._core.dtype import int64
from tinytorch.models.gguf_loader import LLM_EXTRA, field_value, open_gguf

_LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
                 r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# tokenizer.ggml.pre -> the split regex its merges were learned with (others: GPT-2's byte-level split)
PRE_TOKENIZER_SPLITS = {"llama3": _LLAMA3_SPLIT, "llama-v3": _LLAMA3_SPLIT, "llama-bpe": _LLAMA3_SPLIT,
                        "smaug-bpe": _LLAMA3_SPLIT, "qwen2": _QWEN2_SPLIT, "deepseek-r1-qwen": _QWEN2_SPLIT}
_CONTROL, _USER_DEFINED = 3, 4  # llama.cpp token types
GEMMA_ARCHS = ("gemma", "gemma2", "gemma3")  # their SentencePiece vocabularies: gemma's spelling and merge order
SPACE = "\u2581"   # SentencePiece's "▁"


def _import(name: str):
    try:
        return __import__(name)
    except ImportError:
        raise ImportError(f"the tokenizer needs the `{name}` package: {LLM_EXTRA}") from None


def byte_level_backend(tokens: Sequence[str], merges: Sequence[str], token_types: Sequence[int] = (),
                       pre: Optional[str] = None):
    """A byte-level BPE ``tokenizers.Tokenizer`` (GPT-2 style) from llama.cpp's vocabulary and merges;
    control tokens become special tokens, user-defined ones added tokens (as transformers)."""
    tk = _import("tokenizers")
    from tokenizers import AddedToken, Regex, decoders, models, pre_tokenizers
    alphabet = set(pre_tokenizers.ByteLevel.alphabet())
    spell = {b: c for b, c in enumerate(_bytes_to_unicode())}
    if set("".join(tokens)) <= alphabet:   # the usual case, checked in one pass
        vocab = dict(zip(tokens, range(len(tokens))))
    else:
        vocab = {}
        for i, tok in enumerate(tokens):   # a token outside the byte alphabet is respelled byte by byte
            vocab[tok if set(tok) <= alphabet else "".join(spell[b] for b in tok.encode("utf-8"))] = i
    pairs = [tuple(m.split(" ")) for m in merges]
    backend = tk.Tokenizer(models.BPE(vocab, pairs, dropout=None, continuing_subword_prefix="",
                                      end_of_word_suffix="", fuse_unk=False))
    split = PRE_TOKENIZER_SPLITS.get(pre)
    if split is None:
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        backend.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(split), behavior="isolated"),
                                                         pre_tokenizers.ByteLevel(add_prefix_space=False,
                                                                                  use_regex=False)])
    backend.decoder = decoders.ByteLevel()
    return add_gguf_tokens(backend, tokens, token_types, vocab, alphabet)


def add_gguf_tokens(backend, tokens: Sequence[str], token_types: Sequence[int], vocab, alphabet=None):
    """Adds llama.cpp's control tokens as special tokens and its user-defined ones (those in ``vocab``)
    as added tokens, so the text never splits them (as transformers); in a byte-level vocabulary
    (``alphabet``) a control token spelled outside the byte alphabet is skipped (a mislabel)."""
    from tokenizers import AddedToken
    types = list(token_types)
    special = [AddedToken(t, normalized=False, special=True) for t, ty in zip(tokens, types)
               if ty == _CONTROL and (alphabet is None or set(t) <= alphabet)]
    if special:
        backend.add_special_tokens(special)
    user = [AddedToken(t, normalized=False, special=False) for t, ty in zip(tokens, types)
            if ty == _USER_DEFINED and t in vocab]
    if user:
        backend.add_tokens(user)
    return backend


def _bytes_to_unicode() -> List[str]:
    """GPT-2's printable spelling of the 256 bytes, indexed by byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs))
    return [chr(table[b]) for b in range(256)]


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


def _strings(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _integers(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)


def _describe(v) -> str:
    if isinstance(v, list):
        kinds = sorted({type(x).__name__ for x in v})
        return f"an array of {len(v)} ({', '.join(kinds) or 'empty'})"
    return f"{type(v).__name__} {v!r}"[:120]


class Tokenizer:
    """Text <-> token ids, with the model's special tokens and chat template.

    Build with :meth:`from_gguf` or :meth:`from_file`; ``encode``/``decode`` as transformers'
    tokenizers, :meth:`apply_chat_template` renders a conversation."""

    def __init__(self, backend, bos_token_id: Optional[int] = None, eos_token_id: Optional[int] = None,
                 pad_token_id: Optional[int] = None, add_bos_token: bool = False, add_eos_token: bool = False,
                 chat_template: Optional[str] = None) -> None:
        self.backend = backend
        self.bos_token_id, self.eos_token_id, self.pad_token_id = bos_token_id, eos_token_id, pad_token_id
        self.add_bos_token, self.add_eos_token = add_bos_token, add_eos_token
        self.chat_template = chat_template

    @property
    def bos_token(self) -> Optional[str]:
        return None if self.bos_token_id is None else self.backend.id_to_token(self.bos_token_id)

    @property
    def eos_token(self) -> Optional[str]:
        return None if self.eos_token_id is None else self.backend.id_to_token(self.eos_token_id)

    @property
    def vocab_size(self) -> int:
        return self.backend.get_vocab_size(with_added_tokens=True)

    @classmethod
    def from_gguf(cls, path) -> "Tokenizer":
        """From the ``tokenizer.ggml.*`` and ``tokenizer.chat_template`` metadata of a GGUF file. Each
        value is checked for its type (tokens and merges arrays of strings, token types integers, one
        per token, special ids non-negative integers, flags booleans, the template a string): an error
        names the file and the key. A special id outside the vocabulary is dropped with a warning (as
        llama.cpp does)."""
        reader = open_gguf(path)
        where = os.fspath(path)
        get = lambda k, d=None: field_value(reader, "tokenizer.ggml." + k, d)  # noqa: E731

        def fail(key: str, what: str, got) -> ValueError:
            return ValueError(f"Tokenizer.from_gguf: {where}: metadata key {key} must be {what}, got "
                              f"{_describe(got)}")

        kind = get("model")
        if kind not in ("gpt2", "llama"):
            raise NotImplementedError(f"Tokenizer.from_gguf: {where} has a {kind!r} tokenizer; "
                                      "byte-level BPE ('gpt2') and SentencePiece-style BPE ('llama') are built "
                                      "from GGUF metadata (use tokenizer.json)")
        tokens, merges = get("tokens"), get("merges")
        if tokens is None or (kind == "gpt2" and merges is None):
            need = "tokens" if kind == "llama" else "tokens/merges"
            raise ValueError(f"Tokenizer.from_gguf: {where} lacks tokenizer.ggml.{need}")
        if not _strings(tokens) or not tokens:
            raise fail("tokenizer.ggml.tokens", "a non-empty array of strings", tokens)
        if merges is not None:
            if not _strings(merges):
                raise fail("tokenizer.ggml.merges", "an array of strings", merges)
            bad = next((m for m in merges if len(m.split(" ")) != 2 or not all(m.split(" "))), None)
            if bad is not None:
                raise ValueError(f"Tokenizer.from_gguf: {where}: metadata key tokenizer.ggml.merges: each merge must "
                                 f"be two tokens separated by one space, got {bad!r}")
        types = get("token_type", [])
        if not _integers(types) or (types and len(types) != len(tokens)):
            raise fail("tokenizer.ggml.token_type", f"an array of {len(tokens)} integers (one per token)", types)
        scores = get("scores")
        if scores is not None and (not isinstance(scores, list) or len(scores) != len(tokens) or
                                   not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in scores)):
            raise fail("tokenizer.ggml.scores", f"an array of {len(tokens)} numbers (one per token)", scores)
        ids = {}
        for name in ("bos_token_id", "eos_token_id", "padding_token_id", "unknown_token_id"):
            v = get(name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise fail("tokenizer.ggml." + name, "a non-negative integer token id", v)
            if v is not None and v >= len(tokens):
                warnings.warn(f"Tokenizer.from_gguf: {where}: tokenizer.ggml.{name} {v} is outside the vocabulary of "
                              f"{len(tokens)} tokens; ignored")
                v = None
            ids[name] = v
        flags = {}
        for name, default in (("add_bos_token", kind == "llama"), ("add_eos_token", False)):
            v = get(name, default)
            if not isinstance(v, bool):
                raise fail("tokenizer.ggml." + name, "a BOOL", v)
            flags[name] = v
        template = field_value(reader, "tokenizer.chat_template")
        if template is not None and not isinstance(template, str):
            raise fail("tokenizer.chat_template", "a string", template)
        try:
            if kind == "gpt2":
                backend = byte_level_backend(tokens, merges, types, get("pre"))
            else:
                backend = sentencepiece_backend(tokens, scores, types, merges,
                                                gemma=field_value(reader, "general.architecture") in GEMMA_ARCHS,
                                                unk_token_id=ids["unknown_token_id"])
        except ImportError:
            raise
        except Exception as e:  # noqa: BLE001 - the tokenizers library raises plain Exception
            raise ValueError(f"Tokenizer.from_gguf: {where}: the vocabulary and merges do not make a tokenizer "
                             f"({type(e).__name__}: {e})") from None
        # llama.cpp adds BOS to a SentencePiece vocabulary whose file does not say otherwise (as transformers)
        return cls(backend, ids["bos_token_id"], ids["eos_token_id"], ids["padding_token_id"],
                   flags["add_bos_token"], flags["add_eos_token"], template)

    @classmethod
    def from_file(cls, path) -> "Tokenizer":
        """From a ``tokenizer.json`` (or a directory holding it), with ``tokenizer_config.json``
        beside it for the special tokens and chat template when present."""
        tk = _import("tokenizers")
        path = os.fspath(path)
        folder = path if os.path.isdir(path) else os.path.dirname(path)
        file = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
        backend = tk.Tokenizer.from_file(file)
        cfg = {}
        cfg_file = os.path.join(folder, "tokenizer_config.json")
        if os.path.exists(cfg_file):
            with open(cfg_file, encoding="utf-8") as f:
                cfg = json.load(f)
        def token_id(key):
            tok = cfg.get(key)
            tok = tok.get("content") if isinstance(tok, dict) else tok
            return None if tok is None else backend.token_to_id(tok)
        return cls(backend, token_id("bos_token"), token_id("eos_token"), token_id("pad_token"),
                   bool(cfg.get("add_bos_token", False)), bool(cfg.get("add_eos_token", False)),
                   cfg.get("chat_template"))

    def encode(self, text: str, add_special_tokens: bool = True) -> List[int]:
        ids = self.backend.encode(text, add_special_tokens=add_special_tokens).ids
        if add_special_tokens and self.add_bos_token and self.bos_token_id is not None:
            ids = [self.bos_token_id] + ids
        if add_special_tokens and self.add_eos_token and self.eos_token_id is not None:
            ids = ids + [self.eos_token_id]
        return ids

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        return self.backend.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def batch_encode(self, texts: Sequence[str], add_special_tokens: bool = True) -> Tuple:
        """(input_ids, attention_mask), both (B, T) int64, left-padded with the pad (else eos) id."""
        rows = [self.encode(t, add_special_tokens) for t in texts]
        T = max(len(r) for r in rows)
        pad = self.pad_token_id if self.pad_token_id is not None else (self.eos_token_id or 0)
        ids = [[pad] * (T - len(r)) + r for r in rows]
        mask = [[0] * (T - len(r)) + [1] * len(r) for r in rows]
        return as_tensor(ids, dtype=int64), as_tensor(mask, dtype=int64)

    def apply_chat_template(self, messages: Sequence[dict], add_generation_prompt: bool = True,
                            tokenize: bool = False, chat_template: Optional[str] = None, **kwargs):
        """Renders ``messages`` ([{"role": ..., "content": ...}, ...]) with the chat template, as
        transformers (sandboxed jinja2, ``raise_exception``, ``bos_token``/``eos_token``); returns
        the text, or its token ids (no extra special tokens) with ``tokenize=True``."""
        template = chat_template or self.chat_template
        if template is None:
            raise ValueError("apply_chat_template: this tokenizer has no chat template; pass chat_template=")
        text = render_chat_template(template, messages, add_generation_prompt=add_generation_prompt,
                                    bos_token=self.bos_token or "", eos_token=self.eos_token or "", **kwargs)
        return self.encode(text, add_special_tokens=False) if tokenize else text


# A chat template is code from the model file: a rendering may take at most this many steps (loop
# iterations, range elements, macro calls), and build no value (string, list) and no output longer than
# CHAT_TEMPLATE_MAX_SIZE, so a hostile template fails at once instead of running for hours.
CHAT_TEMPLATE_MAX_STEPS = 100_000
CHAT_TEMPLATE_MAX_SIZE = 1 << 24


def render_chat_template(template: str, messages: Sequence[dict], **kwargs) -> str:
    """``template`` rendered with ``messages`` and kwargs in a sandboxed jinja2 environment (as
    transformers), within a budget: more than ``CHAT_TEMPLATE_MAX_STEPS`` loop iterations, range
    elements and macro calls, or a value or output longer than ``CHAT_TEMPLATE_MAX_SIZE``, raises
    ``jinja2.exceptions.SecurityError``; a Python error inside the template (``-[]``, ``1 / 0``) raises
    ``jinja2.exceptions.TemplateRuntimeError`` naming it."""
    jinja2 = _import("jinja2")

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = _budgeted_sandbox(jinja2)
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    out, size = [], 0
    try:
        for piece in env.from_string(template).generate(messages=list(messages), **kwargs):
            size += len(piece)
            if size > CHAT_TEMPLATE_MAX_SIZE:
                env.over_budget(f"an output longer than {CHAT_TEMPLATE_MAX_SIZE} characters")
            out.append(piece)
    except jinja2.exceptions.TemplateError:
        raise
    except (TypeError, ValueError, ArithmeticError, LookupError, AttributeError, RecursionError) as e:
        # the template's own bug (-[] , 1/0, x[99]): one error type for whatever a template does wrong
        raise jinja2.exceptions.TemplateRuntimeError(
            f"apply_chat_template: the chat template failed: {type(e).__name__}: {e}") from e
    return "".join(out)


class _Metered(ast.NodeTransformer):
    """Rewrites a compiled template's Python: every ``for`` loop and comprehension iterates through
    ``environment.metered_iter``, every function (a macro, a block) starts by charging one step, and
    every ``~`` concatenation (``str_join``/``markup_join``) is size-checked."""

    @staticmethod
    def _call(method: str, arg):
        return ast.Call(ast.Attribute(ast.Name("environment", ast.Load()), method, ast.Load()), [arg], [])

    def visit_For(self, node):
        self.generic_visit(node)
        node.iter = self._call("metered_iter", node.iter)
        return node

    def visit_comprehension(self, node):
        self.generic_visit(node)
        node.iter = self._call("metered_iter", node.iter)
        return node

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        node.body.insert(0, ast.Expr(self._call("charge", ast.Constant(1))))
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ("str_join", "markup_join"):
            return self._call("sized", node)
        return node


def _budgeted_sandbox(jinja2):
    """A fresh ImmutableSandboxedEnvironment (trim_blocks, lstrip_blocks, loopcontrols) that meters one
    rendering: see :data:`CHAT_TEMPLATE_MAX_STEPS`."""
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class BudgetedSandbox(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset(["*", "**", "+"])

        def __init__(self) -> None:
            super().__init__(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
            self.steps_left = CHAT_TEMPLATE_MAX_STEPS
            self.globals["range"] = self.metered_range

        def over_budget(self, what: str):
            raise jinja2.exceptions.SecurityError(
                f"apply_chat_template: the chat template needs {what}; a rendering may take at most "
                f"{CHAT_TEMPLATE_MAX_STEPS} steps (loop iterations, range elements, macro calls) and build values "
                f"and output of at most {CHAT_TEMPLATE_MAX_SIZE} characters")

        def charge(self, n: int) -> None:
            self.steps_left -= n
            if self.steps_left < 0:
                self.over_budget(f"more than {CHAT_TEMPLATE_MAX_STEPS} steps")

        def metered_iter(self, iterable):
            if type(iterable) is range:       # made by metered_range: its elements are paid for
                yield from iterable
                return
            for item in iterable:
                self.charge(1)
                yield item

        def metered_range(self, *args):
            r = range(*args)
            self.charge(max(0, (r.stop - r.start + r.step - (1 if r.step > 0 else -1)) // r.step))  # len(): <= 2^63
            return r

        def sized(self, value):
            if hasattr(value, "__len__") and len(value) > CHAT_TEMPLATE_MAX_SIZE:
                self.over_budget(f"a value of {len(value)} characters")
            return value

        def call_binop(self, context, operator, left, right):
            if operator == "*":
                for seq, n in ((left, right), (right, left)):
                    if isinstance(seq, (str, bytes, list, tuple)) and isinstance(n, int) and \
                            len(seq) * max(n, 0) > CHAT_TEMPLATE_MAX_SIZE:
                        self.over_budget(f"a value of {len(seq)} x {n} items")
            if operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1 and \
                    right * abs(left).bit_length() > 1 << 16:
                self.over_budget(f"{left} ** {right}, a number of about {right * abs(left).bit_length()} bits")
            return self.sized(super().call_binop(context, operator, left, right))

        def _compile(self, source: str, filename: str):
            tree = ast.fix_missing_locations(_Metered().visit(ast.parse(source, filename)))
            return compile(tree, filename, "exec")

    return BudgetedSandbox()
