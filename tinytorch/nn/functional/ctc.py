"""The Connectionist Temporal Classification loss (``nn.functional.ctc_loss``): the forward
algorithm over the blank-extended target, in log space, one step per time frame and vectorized
over the batch and the label positions; autograd differentiates it (the backward is the
forward-backward algorithm's gradient, derived by the engine)."""
from __future__ import annotations

from typing import Sequence, Union

from tinytorch._tensor.creation import full, tensor
from tinytorch._core.dtype import int64
from tinytorch._ops.elementwise import where
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch._tensor.tensor import Tensor

# a finite "log 0": impossible alignments keep logsumexp's gradient finite (exp(-inf - -inf) is nan)
_LOG_ZERO = -1e30


def _as_lengths(v: Union[Tensor, Sequence[int]], n: int, name: str) -> list:
    vals = [int(x) for x in (v.tolist() if isinstance(v, Tensor) else v)]
    if len(vals) != n:
        raise RuntimeError(f"ctc_loss: {name} must have one entry per batch element ({n}), got {len(vals)}")
    return vals


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Computes the Connectionist Temporal Classification loss.

    Args:
        log_probs (Tensor): :math:`(T, N, C)` or :math:`(T, C)` where `C = number of characters in
            alphabet including blank`, `T = input length`, and `N = batch size`. The logarithmized
            probabilities of the outputs (e.g. obtained with :func:`log_softmax`).
        targets (Tensor): :math:`(N, S)` or `(sum(target_lengths))`. Targets cannot be blank. In
            the second form, the targets are assumed to be concatenated.
        input_lengths (Tensor or tuple): :math:`(N)` or :math:`()`. Lengths of the inputs (must each be :math:`\\leq T`)
        target_lengths (Tensor or tuple): :math:`(N)` or :math:`()`. Lengths of the targets
        blank (int, optional): Blank label. Default :math:`0`.
        reduction (str, optional): Specifies the reduction to apply to the output:
            ``'none'`` | ``'mean'`` | ``'sum'``. ``'mean'``: the output losses will be divided by
            the target lengths and then the mean over the batch is taken. Default: ``'mean'``
        zero_infinity (bool, optional): Whether to zero infinite losses and the associated
            gradients. Default: ``False``. Infinite losses mainly occur when the inputs are too
            short to be aligned to the targets.
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not log_probs.dtype.is_floating_point:
        raise RuntimeError(f"ctc_loss: log_probs must be a floating point tensor, got {log_probs.dtype}")
    unbatched = log_probs.dim() == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs         # (T, N, C)
    if lp.dim() != 3:
        raise RuntimeError(f"ctc_loss: log_probs must be (T, N, C) or (T, C), got {list(log_probs.shape)}")
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError(f"ctc_loss: blank must be in label range [0, {c}), got {blank}")
    in_len = _as_lengths(input_lengths.reshape(-1) if isinstance(input_lengths, Tensor) else
                         ([input_lengths] if isinstance(input_lengths, int) else input_lengths), n, "input_lengths")
    tg_len = _as_lengths(target_lengths.reshape(-1) if isinstance(target_lengths, Tensor) else
                         ([target_lengths] if isinstance(target_lengths, int) else target_lengths), n,
                         "target_lengths")
    if any(not 0 <= L <= t_max for L in in_len):
        raise RuntimeError(f"ctc_loss: input_lengths {in_len} must be in [0, {t_max}] (log_probs has {t_max} steps)")
    if any(L < 0 for L in tg_len):
        raise RuntimeError(f"ctc_loss: target_lengths {tg_len} must be non-negative")
    # targets as a Python list of label sequences
    tg = targets.tolist()
    if unbatched or targets.dim() == 1:
        flat = tg if isinstance(tg, list) else [tg]
        if targets.dim() == 1 and not unbatched:
            if sum(tg_len) > len(flat):
                raise RuntimeError(f"ctc_loss: concatenated targets hold {len(flat)} labels, target_lengths sum to "
                                   f"{sum(tg_len)}")
            seqs, pos = [], 0
            for L in tg_len:
                seqs.append(flat[pos:pos + L])
                pos += L
        else:
            seqs = [flat[:tg_len[0]]]
    else:
        if targets.dim() != 2 or targets.shape[0] != n:
            raise RuntimeError(f"ctc_loss: targets must be (N, S) or 1-D, got {list(targets.shape)} for batch {n}")
        if any(L > targets.shape[1] for L in tg_len):
            raise RuntimeError(f"ctc_loss: target_lengths {tg_len} exceed the targets' length {targets.shape[1]}")
        seqs = [row[:L] for row, L in zip(tg, tg_len)]
    for s in seqs:
        if any(not 0 <= v < c or v == blank for v in s):
            raise RuntimeError(f"ctc_loss: targets must be labels in [0, {c}) other than blank={blank}, got {s}")

    work = lp.float() if lp.dtype.itemsize == 2 else lp   # the 16-bit floats accumulate in float32
    s_max = 2 * max(tg_len + [0]) + 1
    # the blank-extended targets l' (blank, l1, blank, l2, ..., blank), padded with blanks: (N, S')
    ext = [[blank] * s_max for _ in range(n)]
    skip = [[False] * s_max for _ in range(n)]   # may alpha(s) come from alpha(s - 2)?
    for b, s in enumerate(seqs):
        for k, v in enumerate(s):
            ext[b][2 * k + 1] = v
            if k > 0 and s[k - 1] != v:
                skip[b][2 * k + 1] = True
    ext_t = tensor(ext, dtype=int64, device=lp.device)
    skip_t = tensor(skip, device=lp.device)
    valid = tensor([[j < 2 * L + 1 for j in range(s_max)] for L in tg_len], device=lp.device)
    emit = work.gather(2, ext_t.unsqueeze(0).expand(t_max, n, s_max))       # (T, N, S'): log p_t(l'_s)
    neg = full([n, 1], _LOG_ZERO, dtype=work.dtype, device=lp.device)
    neg2 = full([n, 2], _LOG_ZERO, dtype=work.dtype, device=lp.device)
    start = tensor([[j < 2 for j in range(s_max)] for _ in range(n)], device=lp.device)
    alpha = where(start & valid, emit[0], emit[0] * 0.0 + _LOG_ZERO)  # t = 0: blank or the first label
    alphas = [alpha]
    for t in range(1, t_max):
        prev1 = cat([neg, alpha[:, :-1]], 1)
        prev2 = where(skip_t, cat([neg2, alpha[:, :-2]], 1), alpha * 0.0 + _LOG_ZERO)
        new = stack([alpha, prev1, prev2], 0).logsumexp(0) + emit[t]
        alpha = where(valid, new, new * 0.0 + _LOG_ZERO)
        alphas.append(alpha)
    losses = []
    for b in range(n):
        if in_len[b] == 0:
            ll = (alphas[0][b, 0] * 0.0 + (0.0 if tg_len[b] == 0 else _LOG_ZERO))
        else:
            a = alphas[in_len[b] - 1][b]
            end = 2 * tg_len[b]
            ll = a[end] if end == 0 else stack([a[end], a[end - 1]]).logsumexp(0)
        losses.append(-ll)
    loss = stack(losses)                                                     # (N,)
    impossible = loss > -_LOG_ZERO / 2
    loss = where(impossible, loss * 0.0 + (0.0 if zero_infinity else float("inf")), loss)
    loss = loss.to(log_probs.dtype)
    if reduction == "none":
        return loss.squeeze(0) if unbatched else loss
    if reduction == "sum":
        return loss.sum()
    lengths = tensor([max(L, 1) for L in tg_len], dtype=loss.dtype, device=lp.device)
    return (loss / lengths).mean()
