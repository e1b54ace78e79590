"""``LlamaConfig``: the hyperparameters of a Llama-family causal LM (llama, mistral, qwen2, qwen3, gemma,
gemma2), read from a Hugging Face ``config.json`` with its key names."""
from __future__ import annotations

import json
import math
import numbers
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Optional, Union

MODEL_TYPES = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2")
GEMMA_TYPES = ("gemma", "gemma2")
QWEN_TYPES = ("qwen2", "qwen3")
LAYER_TYPES = ("sliding_attention", "full_attention")
# the model types whose transformers class reads ``layer_types`` (MistralForCausalLM windows every layer and
# LlamaForCausalLM/GemmaForCausalLM none, whatever the list says)
PER_LAYER_WINDOW_TYPES = ("gemma2", "qwen2", "qwen3")
# transformers' ACT2FN names of the feed-forward activations tinytorch runs; gemma's legacy "gelu" means
# the tanh approximation (transformers' GemmaConfig rewrites it so)
ACTIVATIONS = {"silu": "silu", "swish": "silu", "gelu_pytorch_tanh": "gelu_tanh", "gelu_new": "gelu_tanh",
               "gelu": "gelu"}


@dataclass
class LlamaConfig:
    """Hyperparameters under Hugging Face ``transformers``' names (``LlamaConfig``, ``MistralConfig``,
    ``Qwen2Config``, ``Qwen3Config``, ``GemmaConfig``, ``Gemma2Config``). ``qkv_bias``/``o_bias`` are
    derived: ``attention_bias`` sets both, qwen2 always has q/k/v biases and no o_proj bias. The
    architecture's other traits are properties of ``model_type``: ``qk_norm`` (qwen3), ``gemma_norm``
    and ``embed_scale`` (gemma, gemma2), ``post_norms`` (gemma2) and :meth:`layer_window` (which layers
    slide: every mistral layer; the ``layer_types`` of gemma2 and of qwen2/qwen3, whose default slides the
    layers from ``max_window_layers`` on when ``use_sliding_window``)."""
    vocab_size: int = 32000
    hidden_size: int = 4096
    intermediate_size: int = 11008
    num_hidden_layers: int = 32
    num_attention_heads: int = 32
    num_key_value_heads: Optional[int] = None
    head_dim: Optional[int] = None
    max_position_embeddings: int = 2048
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    rope_scaling: Optional[dict] = None
    attention_bias: bool = False
    mlp_bias: bool = False
    tie_word_embeddings: bool = False
    hidden_act: Optional[str] = None   # default: "silu", gemma's "gelu_pytorch_tanh"
    hidden_activation: Optional[str] = None   # gemma2's name for it (wins over hidden_act)
    query_pre_attn_scalar: Optional[float] = None   # gemma2: scores scaled by its -1/2 power
    attn_logit_softcapping: Optional[float] = None  # gemma2: scores -> cap * tanh(scores / cap)
    final_logit_softcapping: Optional[float] = None  # gemma2: logits -> cap * tanh(logits / cap)
    layer_types: Optional[list] = None    # gemma2, qwen2, qwen3: "sliding_attention" / "full_attention" per layer
    model_type: str = "llama"
    sliding_window: Optional[int] = None
    use_sliding_window: Optional[bool] = None   # qwen2/qwen3: False (default) drops sliding_window
    max_window_layers: Optional[int] = None     # qwen2/qwen3: default layer_types slide from this layer (28)
    bos_token_id: Optional[int] = None
    eos_token_id: Optional[Union[int, list]] = None
    pad_token_id: Optional[int] = None
    torch_dtype: Optional[str] = None
    rotary_convention: str = "half"     # tinytorch's: "half" (HF weights) or "interleaved" (GPT-J pairs)
    extra: dict = field(default_factory=dict, repr=False)  # keys we read but do not use

    def __post_init__(self) -> None:
        if self.model_type not in MODEL_TYPES:
            raise ValueError(f"LlamaConfig: model_type {self.model_type!r} is not supported "
                             f"(supported: {', '.join(MODEL_TYPES)})")
        if self.num_key_value_heads is None:
            self.num_key_value_heads = self.num_attention_heads
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(f"LlamaConfig: num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                             f"num_key_value_heads ({self.num_key_value_heads})")
        gemma = self.model_type in GEMMA_TYPES
        act = self.hidden_activation if self.model_type == "gemma2" and self.hidden_activation else self.hidden_act
        if act is None or (gemma and act == "gelu"):
            act = "gelu_pytorch_tanh" if gemma else "silu"
        if act not in ACTIVATIONS:
            raise NotImplementedError(f"LlamaConfig: hidden_act {act!r} is not supported "
                                      f"(supported: {', '.join(ACTIVATIONS)})")
        self.hidden_act = act
        if self.model_type == "gemma2":
            if self.query_pre_attn_scalar is None:
                self.query_pre_attn_scalar = self.head_dim
            if self.layer_types is None:   # transformers' default: even layers slide, odd ones see everything
                self.layer_types = ["sliding_attention" if (i + 1) % 2 else "full_attention"
                                    for i in range(self.num_hidden_layers)]
        elif self.attn_logit_softcapping is not None or self.final_logit_softcapping is not None:
            raise NotImplementedError(f"LlamaConfig: logit soft-capping is gemma2's; a {self.model_type} model "
                                      "with it is not supported")
        if self.sliding_window is not None:
            w = self.sliding_window
            if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w <= 0:
                raise ValueError(f"LlamaConfig: sliding_window must be a positive int (or None), got {w!r}")
            self.sliding_window = int(w)
        if self.model_type in QWEN_TYPES:
            self._qwen_defaults()
        if self.model_type in PER_LAYER_WINDOW_TYPES:
            self._check_layer_types()

    def _qwen_defaults(self) -> None:
        """Qwen2Config/Qwen3Config: the window only with ``use_sliding_window``; without ``layer_types``,
        layer i slides when i >= ``max_window_layers`` (and there is a window)."""
        if not self.use_sliding_window:
            self.sliding_window = None   # qwen lists a window it does not use
        n = self.max_window_layers
        if n is None:
            n = self.max_window_layers = 28   # Qwen2Config's/Qwen3Config's default
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(f"LlamaConfig: max_window_layers must be a non-negative int, got {n!r}")
        if self.layer_types is None:
            self.layer_types = ["sliding_attention" if self.sliding_window is not None and i >= n
                                else "full_attention" for i in range(self.num_hidden_layers)]

    def _check_layer_types(self) -> None:
        """``layer_types``: one of :data:`LAYER_TYPES` per layer; a sliding layer needs a window."""
        types = self.layer_types
        if not isinstance(types, (list, tuple)) or len(types) != self.num_hidden_layers:
            got = f"{len(types)} entries" if isinstance(types, (list, tuple)) else repr(types)
            raise ValueError(f"LlamaConfig: layer_types must list one entry per layer "
                             f"(num_hidden_layers={self.num_hidden_layers}), got {got}")
        bad = sorted({repr(t) for t in types if t not in LAYER_TYPES})
        if bad:
            raise ValueError(f"LlamaConfig: layer_types entries must be 'sliding_attention' or 'full_attention', "
                             f"got {', '.join(bad)} in {list(types)!r}")
        self.layer_types = list(types)
        if self.model_type in QWEN_TYPES and self.sliding_window is None and "sliding_attention" in types:
            # transformers fails here too (its sliding mask needs a window)
            raise ValueError(f"LlamaConfig: layer_types of this {self.model_type} model name 'sliding_attention' "
                             "layers but it has no sliding window (use_sliding_window is false or sliding_window "
                             "is null)")

    @property
    def activation(self) -> str:
        """The feed-forward's gate activation: "silu" (SwiGLU), "gelu_tanh" (GeGLU) or "gelu"."""
        return ACTIVATIONS[self.hidden_act]

    @property
    def qk_norm(self) -> bool:
        """qwen3: an RMSNorm over each head's queries and keys before the rotary."""
        return self.model_type == "qwen3"

    @property
    def gemma_norm(self) -> bool:
        """gemma: RMSNorms compute x * (1 + weight) (weights stored around 0)."""
        return self.model_type in GEMMA_TYPES

    @property
    def post_norms(self) -> bool:
        """gemma2: the attention and the feed-forward outputs are normed too, and the feed-forward input
        has its own norm (``pre_feedforward_layernorm``)."""
        return self.model_type == "gemma2"

    @property
    def embed_scale(self) -> Optional[float]:
        """gemma: the embeddings are multiplied by sqrt(hidden_size) (rounded to the model dtype)."""
        return math.sqrt(self.hidden_size) if self.model_type in GEMMA_TYPES else None

    @property
    def attention_scale(self) -> Optional[float]:
        """The factor on the attention scores when it is not 1/sqrt(head_dim) (gemma2's
        ``query_pre_attn_scalar``), else None."""
        return self.query_pre_attn_scalar ** -0.5 if self.model_type == "gemma2" else None

    def layer_window(self, layer_idx: int) -> Optional[int]:
        """The sliding window of layer ``layer_idx`` (every mistral layer; the "sliding_attention" layers
        of gemma2's, qwen2's and qwen3's ``layer_types``: a query at cache index i sees keys j with
        i - window < j <= i, as transformers), or None where it attends to everything before it."""
        if self.sliding_window is None:
            return None
        if self.model_type == "mistral" or (self.model_type in PER_LAYER_WINDOW_TYPES
                                            and self.layer_types[layer_idx] == "sliding_attention"):
            return self.sliding_window
        return None

    @property
    def qkv_bias(self) -> bool:
        return True if self.model_type == "qwen2" else self.attention_bias

    @property
    def o_bias(self) -> bool:
        return False if self.model_type == "qwen2" else self.attention_bias

    @classmethod
    def from_dict(cls, d: dict) -> "LlamaConfig":
        """From a ``config.json`` dict; keys tinytorch does not use go to ``extra``."""
        d = dict(d)
        model_type = d.get("model_type", "llama")
        rope = d.pop("rope_parameters", None)  # transformers 5 keeps rope_theta/rope_type here
        if isinstance(rope, dict):
            d.setdefault("rope_theta", rope.get("rope_theta", 10000.0))
            if rope.get("rope_type", "default") != "default":
                d.setdefault("rope_scaling", {k: v for k, v in rope.items() if k != "rope_theta"})
        if model_type in ("llama", "gemma"):
            d["sliding_window"] = None  # transformers' LlamaConfig/GemmaConfig have no window
        elif model_type in ("mistral", "gemma2"):
            d.setdefault("sliding_window", 4096)   # MistralConfig's/Gemma2Config's default
        if isinstance(d.get("torch_dtype", d.get("dtype")), str):
            d["torch_dtype"] = d.get("torch_dtype", d.get("dtype"))
        names = {f.name for f in fields(cls)} - {"extra"}
        known = {k: v for k, v in d.items() if k in names}
        known["extra"] = {k: v for k, v in d.items() if k not in names}
        return cls(**known)

    @classmethod
    def from_json_file(cls, path: Union[str, os.PathLike]) -> "LlamaConfig":
        with open(path, encoding="utf-8") as f:
            try:
                d = json.load(f)
            except ValueError as e:
                raise ValueError(f"LlamaConfig: {os.fspath(path)} is not valid JSON ({e})") from None
        if not isinstance(d, dict):
            raise ValueError(f"LlamaConfig: {os.fspath(path)} must hold a JSON object")
        return cls.from_dict(d)

    def to_dict(self) -> dict:
        d = asdict(self)
        extra = d.pop("extra")
        d.pop("rotary_convention")
        return {**extra, **d}

    def check_length(self, length: int, what: str) -> None:
        """Raises when ``length`` positions exceed the context (``max_position_embeddings``); sliding
        windows are masked (:meth:`layer_window`), so they set no limit."""
        if length > self.max_position_embeddings:
            raise ValueError(f"{what}: {length} positions exceed the model's context "
                             f"(max_position_embeddings={self.max_position_embeddings})")
