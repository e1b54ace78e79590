"""Shared by the fused attention tests (CPU and CUDA): a float64 numpy reference of
scaled-dot-product attention with its gradients, random inputs in several layouts, and a
search of the autograd graph for the fused node."""
from __future__ import annotations

import numpy as np

import tinytorch as tt
from support.numeric import GRAD_TOL, assert_close

FUSED_NODE = "ScaledDotProductFlashAttentionBackward0"


def reference(q, k, v, g, bias=None, scale=None):
    """Forward and (dq, dk, dv) in float64 for q (B, H, L, E), k/v (B, Hkv, S, E/Ev), bias additive
    (-inf = masked) broadcastable to (B, H, L, S), g the output gradient. Rows with no key give 0."""
    B, H, L, E = q.shape
    group = H // k.shape[1]
    kr, vr = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = 1.0 / np.sqrt(E) if scale is None else scale
    s = q @ np.swapaxes(kr, -1, -2) * scale
    if bias is not None:
        s = s + bias
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    tot = e.sum(-1, keepdims=True)
    p = np.where(tot > 0, e / np.where(tot > 0, tot, 1.0), 0.0)
    out = p @ vr
    dv = np.swapaxes(p, -1, -2) @ g
    dp = g @ np.swapaxes(vr, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    dq = ds @ kr * scale
    dk = np.swapaxes(ds, -1, -2) @ q * scale
    fold = lambda t: t.reshape(B, H // group, group, *t.shape[2:]).sum(2)
    return out, dq, fold(dk), fold(dv)


def causal_bias(L, S):
    return np.where(np.tril(np.ones((L, S), dtype=bool)), 0.0, -np.inf)


def tensor(shape, dtype, device="cpu", layout="contiguous", seed=0, low=-1.0, high=1.0):
    """A leaf requiring grad with the given logical shape (B, H, L, E) and layout: 'contiguous',
    'heads_inner' (a (B, L, H, E) tensor transposed, as attention modules make them) or 'sliced'
    (every other element of the last dim). Returns (tensor, float64 values it holds)."""
    rng = np.random.default_rng(seed)
    B, H, L, E = shape
    if layout == "heads_inner":
        base = rng.uniform(low, high, (B, L, H, E))
        t = tt.tensor(base, dtype=getattr(tt, dtype), device=device).transpose(1, 2)
    elif layout == "sliced":
        base = rng.uniform(low, high, (B, H, L, 2 * E))
        t = tt.tensor(base, dtype=getattr(tt, dtype), device=device)[..., ::2]
    else:
        t = tt.tensor(rng.uniform(low, high, shape), dtype=getattr(tt, dtype), device=device)
    t.requires_grad_(True)
    return t, t.detach().cpu().double().numpy()


def graph_names(t):
    """Names of every node reachable from t.grad_fn."""
    seen, todo, names = set(), [t.grad_fn], set()
    while todo:
        n = todo.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.add(n.name())
        todo.extend(f for f, _ in n.next_functions)
    return names


# ---------------------------------------------------------------- checks both test files run

def _grad_tol(dtype):
    return GRAD_TOL[dtype]


def check_against_reference(device, dtype, B, H, Hkv, L, S, E, Ev, mask_kind, layout="contiguous", scale=None):
    """Fused forward and gradients vs the float64 reference; the fused node must be the one recorded."""
    F = tt.nn.functional
    q, qn = tensor((B, H, L, E), dtype, device, layout, seed=1)
    k, kn = tensor((B, Hkv, S, E), dtype, device, layout, seed=2)
    v, vn = tensor((B, Hkv, S, Ev), dtype, device, layout, seed=3)
    rng = np.random.default_rng(4)
    mask, bias, causal = None, None, False
    if mask_kind == "causal":
        causal, bias = True, causal_bias(L, S)
    elif mask_kind == "bool":            # (L, S), broadcast over batch and heads; key 0 always kept
        keep = rng.uniform(size=(L, S)) < 0.7
        keep[:, 0] = True
        mask, bias = tt.tensor(keep, device=device), np.where(keep, 0.0, -np.inf)
    elif mask_kind == "bool_rows":       # (B, 1, 1, S): a key-padding mask
        keep = rng.uniform(size=(B, 1, 1, S)) < 0.6
        keep[..., 0] = True
        mask, bias = tt.tensor(keep, device=device), np.where(keep, 0.0, -np.inf)
    elif mask_kind == "float":           # (B, H, L, S) additive, with some -inf
        add = rng.uniform(-2, 2, (B, H, L, S))
        add[..., 1::3] = -np.inf
        add[..., 0] = 0.0
        mask = tt.tensor(add, dtype=getattr(tt, dtype), device=device)
        bias = mask.cpu().double().numpy()
    elif mask_kind == "float_heads":     # (H, 1, S) float32 mask broadcast over batch and rows
        add = rng.uniform(-3, 3, (H, 1, S))
        mask = tt.tensor(add, dtype=tt.float32, device=device)
        bias = mask.cpu().double().numpy()
    g = np.random.default_rng(5).uniform(-1, 1, (B, H, L, Ev))
    gt = tt.tensor(g, dtype=getattr(tt, dtype), device=device)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale,
                                         enable_gqa=H != Hkv)
    assert FUSED_NODE in graph_names(out)
    assert out.dtype == q.dtype and tuple(out.shape) == (B, H, L, Ev) and out.device == q.device
    ref, dq, dk, dv = reference(qn, kn, vn, gt.cpu().double().numpy(), bias, scale)
    assert_close(out, ref, dtype, what="out")
    out.backward(gt)
    for t, r, name in ((q, dq, "q"), (k, dk, "k"), (v, dv, "v")):
        assert t.grad.dtype == t.dtype and tuple(t.grad.shape) == tuple(t.shape)
        assert_close(t.grad, r, dtype, tol=_grad_tol(dtype), what=f"grad {name}")
    if layout == "heads_inner":  # out laid out as q: transposing back to (B, L, H, E) is free
        assert out.transpose(1, 2).is_contiguous()


def check_matches_composed(device, dtype, causal):
    """The fused and the composed path agree (forward and gradients) on the same inputs."""
    from tinytorch.nn.functional.attention import _composed_scaled_dot_product_attention as composed
    F = tt.nn.functional
    q, _ = tensor((2, 4, 33, 32), dtype, device, seed=1)
    k, _ = tensor((2, 2, 47, 32), dtype, device, seed=2)
    v, _ = tensor((2, 2, 47, 32), dtype, device, seed=3)
    g = tt.tensor(np.random.default_rng(5).uniform(-1, 1, (2, 4, 33, 32)), dtype=getattr(tt, dtype), device=device)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    ga = tt.autograd.grad(a, (q, k, v), g)
    b = composed(q, k, v, is_causal=causal, enable_gqa=True)
    gb = tt.autograd.grad(b, (q, k, v), g)
    assert_close(a, b.detach().cpu().double().numpy(), dtype)
    for x, y in zip(ga, gb):
        assert_close(x, y.cpu().double().numpy(), dtype, tol=_grad_tol(dtype))


def check_dropout(device, dtype):
    """Same seed -> same output; the mask the forward drew is the one the backward uses (checked
    against the composed formula with that mask) and equals _C.attention_dropout_mask."""
    F = tt.nn.functional
    B, H, L, S, p = 2, 3, 29, 40, 0.3   # head dims E = Ev = S: the tensor-core kernels on CUDA
    q, qn = tensor((B, H, L, S), dtype, device, seed=1)
    k, kn = tensor((B, H, S, S), dtype, device, seed=2)
    ident = tt.eye(S, dtype=getattr(tt, dtype), device=device).expand(B, H, S, S)
    tt.manual_seed(7)
    a = F.scaled_dot_product_attention(q, k, ident, dropout_p=p)
    tt.manual_seed(7)
    b = F.scaled_dot_product_attention(q, k, ident, dropout_p=p)
    c = F.scaled_dot_product_attention(q, k, ident, dropout_p=p)
    assert np.array_equal(a.detach().cpu().double().numpy(), b.detach().cpu().double().numpy())
    assert not np.array_equal(b.detach().cpu().double().numpy(), c.detach().cpu().double().numpy())
    # with v = identity the output is the dropped probability matrix: its zeros are the mask
    pd = a.detach().cpu().double().numpy()
    keep = pd != 0
    frac = keep.mean()
    assert abs(frac - (1 - p)) < 0.03, frac
    probs, *_ = reference(qn, kn, np.broadcast_to(np.eye(S), (B, H, S, S)), np.zeros((B, H, L, S)))
    assert_close(pd, np.where(keep, probs / (1 - p), 0.0), dtype)
    # the same mask again, with a real value tensor, and its gradients vs the composed formula
    v, vn = tensor((B, H, S, S), dtype, device, seed=3)
    g = np.random.default_rng(5).uniform(-1, 1, (B, H, L, S))
    gt = tt.tensor(g, dtype=getattr(tt, dtype), device=device)
    tt.manual_seed(7)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
    out.backward(gt)
    kd = keep / (1 - p)
    pr = probs
    ref_out = (pr * kd) @ vn
    assert_close(out, ref_out, dtype)
    g64 = gt.cpu().double().numpy()
    dv = np.swapaxes(pr * kd, -1, -2) @ g64
    dp = (g64 @ np.swapaxes(vn, -1, -2)) * kd
    ds = pr * (dp - (dp * pr).sum(-1, keepdims=True))
    sc = 1 / np.sqrt(S)
    for t, r in ((q, ds @ kn * sc), (k, np.swapaxes(ds, -1, -2) @ qn * sc), (v, dv)):
        assert_close(t.grad, r, dtype, tol=_grad_tol(dtype))


def check_double_backward(device):
    """create_graph=True through the fused node: the second derivative equals the composed path's."""
    from tinytorch.nn.functional.attention import _composed_scaled_dot_product_attention as composed
    F = tt.nn.functional
    res = []
    for fn in (F.scaled_dot_product_attention, composed):
        q, _ = tensor((1, 2, 9, 8), "float64", device, seed=1)
        k, _ = tensor((1, 1, 11, 8), "float64", device, seed=2)
        v, _ = tensor((1, 1, 11, 8), "float64", device, seed=3)
        out = fn(q, k, v, is_causal=True, enable_gqa=True)
        gq, gk, gv = tt.autograd.grad((out * out).sum(), (q, k, v), create_graph=True)
        h = tt.autograd.grad((gq * gq).sum() + (gk * gv).sum(), (q, k, v))
        res.append([x.detach().cpu().double().numpy() for x in (out, gq, gk, gv, *h)])
    for a, b in zip(*res):
        assert_close(a, b, "float64", tol=(1e-9, 1e-11))
