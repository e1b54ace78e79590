"""``tinytorch.models``: Llama-family causal language models (llama, mistral, qwen2, qwen3, gemma,
gemma2) loadable from Hugging Face safetensors checkpoints and llama.cpp GGUF files, a tokenizer and
generation.

The GGUF reader (``gguf``), the tokenizer (``tokenizers``) and chat templates (``jinja2``) are optional
dependencies (``pip install '.[llm]'``), imported only where they are used."""
from tinytorch.models.config import LlamaConfig
from tinytorch.models.kv_cache import KVCache
from tinytorch.models.layers import LlamaAttention, LlamaDecoderLayer, LlamaMLP, swiglu
from tinytorch.models.llama import LlamaForCausalLM, LlamaModel, tensor_parallel_plan
from tinytorch.models.rotary import RotaryEmbedding, apply_rotary_pos_emb, rope_inv_freq
from tinytorch.models.tokenizer import Tokenizer
from tinytorch.models.variant_blocks import GemmaRMSNorm, soft_cap

__all__ = ["LlamaConfig", "LlamaForCausalLM", "LlamaModel", "LlamaAttention", "LlamaDecoderLayer", "LlamaMLP",
           "KVCache", "RotaryEmbedding", "apply_rotary_pos_emb", "rope_inv_freq", "swiglu", "Tokenizer",
           "GemmaRMSNorm", "soft_cap", "tensor_parallel_plan"]
