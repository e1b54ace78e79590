# cython: language_level=3
"""Fused scaled-dot-product attention (FlashAttention-2 kernels: no (Lq, Lk) matrix) with its
derivative: the fused backward kernel, which recomputes the scores per tile from the saved
output and logsumexp; under create_graph, the composite formula below (matmul and softmax ops,
which materialize the scores) so that higher derivatives work."""
from tinytorch import _C
from tinytorch._core.dtype import BOOL
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap
from tinytorch._core.graph cimport Node, make_node, set_history, save_tensors, is_grad_enabled_c
from tinytorch._ops._common cimport fused_result
from tinytorch._ops.elementwise import logical_not
from tinytorch._ops.index import masked_fill
from tinytorch._ops.linalg import matmul
from tinytorch._ops.norm import softmax
from tinytorch._ops.reduce import sum

_NAME = "ScaledDotProductFlashAttentionBackward0"


def _repeat_heads(Tensor kv, int group):
    """(B, Hkv, L, E) -> (B, Hkv * group, L, E): kv head j serves query heads j*group ... j*group+group-1."""
    if group == 1:
        return kv
    B, Hkv, L, E = kv._impl.shape
    return kv.unsqueeze(2).expand(B, Hkv, group, L, E).reshape(B, Hkv * group, L, E)


def _sum_heads(Tensor g, int group):
    """The adjoint of _repeat_heads: (B, Hkv * group, L, E) -> (B, Hkv, L, E)."""
    if group == 1:
        return g
    B, H, L, E = g._impl.shape
    return sum(g.reshape(B, H // group, group, L, E), 2)


def _composite_grads(Node n, Tensor g, Tensor q, Tensor k, Tensor v):
    """The attention gradients from differentiable ops (for create_graph): with S = q k^T scale +
    mask, P = softmax(S), Pd = P * keep / (1 - p): dv = Pd^T g, dP = (g v^T) * keep / (1 - p),
    dS = P (dP - rowsum(dP P)), dq = dS k scale, dk = dS^T q scale (summed over a kv head's group)."""
    B, H, Lq, E = q._impl.shape
    Lk = k._impl.shape[2]
    group = H // k._impl.shape[1]
    kr, vr = _repeat_heads(k, group), _repeat_heads(v, group)
    s = matmul(q, kr.transpose(-2, -1)) * n.scale
    if n.is_causal:
        s = masked_fill(s, wrap(_C.triu(_C.full([Lq, Lk], 1.0, BOOL, q._impl.device), 1)), float("-inf"))
    elif n.attn_mask is not None:
        m = <Tensor>n.attn_mask
        s = masked_fill(s, logical_not(m), float("-inf")) if m._impl.dtype_code == BOOL else s + m
    p = softmax(s, -1)
    keep = None
    if n.dropout_p > 0.0:
        keep = wrap(_C.attention_dropout_mask([B, H, Lq, Lk], n.dropout_p, n.seed, n.offset, q._impl.device))
        keep = keep.to(q.dtype) * (0.0 if n.dropout_p >= 1.0 else 1.0 / (1.0 - n.dropout_p))
    pd = p if keep is None else p * keep
    dv = matmul(pd.transpose(-2, -1), g)
    dp = matmul(g, vr.transpose(-2, -1))
    if keep is not None:
        dp = dp * keep
    ds = p * (dp - sum(dp * p, -1, keepdim=True))
    dq = matmul(ds, kr) * n.scale
    dk = matmul(ds.transpose(-2, -1), q) * n.scale
    return dq, _sum_heads(dk, group), _sum_heads(dv, group)


def _attention_back(Node n, g):
    q, k, v, out, lse = n.saved_tensors
    if is_grad_enabled_c():
        return _composite_grads(n, g, q, k, v)
    m = n.attn_mask
    gq, gk, gv = _C.scaled_dot_product_attention_backward(
        (<Tensor>g)._impl, (<Tensor>q)._impl, (<Tensor>k)._impl, (<Tensor>v)._impl,
        None if m is None else (<Tensor>m)._impl, (<Tensor>out)._impl, (<Tensor>lse)._impl, n.is_causal, n.scale,
        n.dropout_p, n.seed, n.offset)
    return (fused_result(_NAME, gq, (g,)), fused_result(_NAME, gk, (g,)), fused_result(_NAME, gv, (g,)))


def scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, attn_mask=None, double dropout_p=0.0,
                                 bint is_causal=False, scale=None, generator=None):
    """The fused kernels on 4-D inputs: query (B, H, Lq, E), key (B, Hkv, Lk, E), value (B, Hkv, Lk, Ev)
    with H a multiple of Hkv; attn_mask bool (True = take part) or additive float, broadcastable to
    (B, H, Lq, Lk), never differentiated. Returns (B, H, Lq, Ev)."""
    if scale is None:
        scale = 1.0 / float(query._impl.shape[3]) ** 0.5
    out, lse, seed, offset = _C.scaled_dot_product_attention(
        query._impl, key._impl, value._impl, None if attn_mask is None else (<Tensor>attn_mask)._impl, is_causal,
        float(scale), dropout_p, None if generator is None else generator._impl)
    cdef Tensor result = wrap(out)
    cdef Node n = make_node(_NAME, _attention_back, (query, key, value))
    if n is not None:
        n.attn_mask, n.is_causal, n.scale, n.dropout_p, n.seed, n.offset = (attn_mask, is_causal, float(scale),
                                                                             dropout_p, seed, offset)
        save_tensors(n, (query, key, value, result, wrap(lse)))
        set_history(result, n, 0)
    return result
