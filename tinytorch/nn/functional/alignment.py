"""Post-training objectives of ``nn.functional``: DPO (sigmoid / IPO), GRPO, knowledge
distillation, and the per-token / per-sequence log-prob helpers of causal language models.

All are composed from tensor ops (autograd records their parts). Formulas:

* DPO (Rafailov et al. 2023; conservative DPO label smoothing, Mitchell 2023; IPO, Azar et al.
  2023), as TRL's ``DPOTrainer``: ``h = (π_c - π_r) - (ref_c - ref_r)``; sigmoid loss
  ``-(1-ls)·logσ(βh) - ls·logσ(-βh)``; IPO loss ``(h - 1/(2β))²``; rewards ``β(π - ref)``
  (detached).
* GRPO (Shao et al. 2024, DeepSeekMath): advantages ``(r - mean_g) / (std_g + eps)`` per group;
  per token ``-min(ρA, clip(ρ, 1-ε, 1+ε)A) + β·KL``, ``ρ = exp(logπ - logπ_old)``, KL by the k3
  estimator ``exp(ref - logπ) - (ref - logπ) - 1``; averaged over each sequence's tokens, then
  over sequences.
* Distillation (Hinton et al. 2015): ``α·T²·KL(softmax(t/T) ‖ softmax(s/T)) + (1-α)·CE(s, y)``.
"""
from __future__ import annotations

from tinytorch._ops.elementwise import maximum, minimum, where
from tinytorch.nn.functional.activation import log_softmax, logsigmoid
from tinytorch.nn.functional.loss import cross_entropy
from tinytorch._tensor.tensor import Tensor

__all__ = ["dpo_loss", "grpo_loss", "group_relative_advantages", "distillation_loss", "token_log_probs",
           "sequence_log_probs"]


def _check_tensor(fn: str, name: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: {name} must be a Tensor, got {type(x).__name__}")


def _check_same_shapes(fn: str, **tensors: Tensor) -> None:
    for name, t in tensors.items():
        _check_tensor(fn, name, t)
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{n}={list(s)}" for n, s in shapes.items())
        raise ValueError(f"{fn}: the inputs must have the same shape, got {listed}")


# ---------------------------------------------------------------------------- log-prob helpers
def token_log_probs(logits: Tensor, labels: Tensor, ignore_index: int = -100) -> Tensor:
    """``log p(labels[..., t] | logits[..., t, :])`` for every position: ``(*, T, V), (*, T) -> (*, T)``.

    Positions whose label is ``ignore_index`` get 0 (their label is replaced by 0 for the gather).
    Computed in float32 at least (log_softmax of half logits loses the small probabilities).

    Args:
        logits (Tensor): ``[..., num_features]`` unnormalized log probabilities.
        labels (Tensor): the token ids, :math:`(*, T)`.
        ignore_index (int, optional): Specifies a target value that is ignored and does not contribute
            to the input gradient. Default: ``-100``"""
    _check_tensor("token_log_probs", "logits", logits)
    _check_tensor("token_log_probs", "labels", labels)
    if logits.dim() < 1 or tuple(labels.shape) != tuple(logits.shape[:-1]):
        raise ValueError(f"token_log_probs: labels must have logits' shape without the last (vocabulary) dim, "
                         f"got logits {list(logits.shape)} and labels {list(labels.shape)}")
    if labels.dtype.is_floating_point:
        raise TypeError(f"token_log_probs: labels must be integer class indices, got {labels.dtype}")
    if logits.dtype.itemsize < 4:
        logits = logits.float()
    valid = labels != ignore_index
    safe = where(valid, labels, 0).long()
    logp = log_softmax(logits, dim=-1).gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    return where(valid, logp, 0.0)


def sequence_log_probs(logits: Tensor, labels: Tensor, mask: Tensor | None = None, *, shift: bool = True,
                       average: bool = False, ignore_index: int = -100) -> Tensor:
    """Sum (or mean, ``average=True``) of the label tokens' log-probs per sequence, for causal LMs.

    Args:
        logits: ``(B, T, V)`` model outputs.
        labels: ``(B, T)`` token ids; ``ignore_index`` marks positions not scored (e.g. the prompt).
        mask: optional ``(B, T)`` bool/0-1 mask of the positions to score (aligned with ``labels``).
        shift: the logits at position ``t`` predict the label at ``t + 1`` (a causal LM's outputs
            next to its own input ids, as TRL's ``get_batch_logps``); ``False`` when already aligned.
        average: return the mean log-probability per scored token instead of the sum.
        ignore_index: the label value of positions that are not scored. Default: -100

    Returns:
        ``(B,)`` log-probabilities (the sequence's log-likelihood, or its per-token mean).
    """
    _check_tensor("sequence_log_probs", "logits", logits)
    _check_tensor("sequence_log_probs", "labels", labels)
    if logits.dim() != 3 or labels.dim() != 2 or tuple(logits.shape[:2]) != tuple(labels.shape):
        raise ValueError(f"sequence_log_probs: expected logits (B, T, V) and labels (B, T), got logits "
                         f"{list(logits.shape)} and labels {list(labels.shape)}")
    if mask is not None:
        _check_tensor("sequence_log_probs", "mask", mask)
        if tuple(mask.shape) != tuple(labels.shape):
            raise ValueError(f"sequence_log_probs: mask must have labels' shape {list(labels.shape)}, got "
                             f"{list(mask.shape)}")
    if shift:
        logits, labels = logits[:, :-1], labels[:, 1:]
        mask = mask[:, 1:] if mask is not None else None
    valid = labels != ignore_index
    if mask is not None:
        valid = valid & mask.bool()
    labels = where(valid, labels, ignore_index)
    logp = token_log_probs(logits, labels, ignore_index=ignore_index)
    total = logp.sum(-1)
    if average:
        return total / valid.sum(-1).clamp(min=1).to(total.dtype)
    return total


# ---------------------------------------------------------------------------- DPO
def dpo_loss(policy_chosen_logps: Tensor, policy_rejected_logps: Tensor, ref_chosen_logps: Tensor,
             ref_rejected_logps: Tensor, beta: float = 0.1, label_smoothing: float = 0.0,
             loss_type: str = "sigmoid") -> tuple[Tensor, Tensor, Tensor]:
    """Direct Preference Optimization loss from sequence log-probs, as TRL's ``DPOTrainer``.

    Args:
        policy_chosen_logps: ``(B,)`` log-probs of the chosen responses under the policy (e.g.
            from :func:`sequence_log_probs`).
        policy_rejected_logps: ``(B,)`` log-probs of the rejected responses under the policy.
        ref_chosen_logps: the same as ``policy_chosen_logps`` under the frozen reference model.
        ref_rejected_logps: the same as ``policy_rejected_logps`` under the frozen reference model.
        beta: the KL-penalty temperature β.
        label_smoothing: the probability that a preference label is flipped (conservative DPO;
            sigmoid only).
        loss_type: ``"sigmoid"`` (DPO) or ``"ipo"``.

    Returns:
        ``(losses, chosen_rewards, rejected_rewards)``, each ``(B,)``: the per-pair losses (take
        ``.mean()`` to train) and the implicit rewards ``β·(logπ - logπ_ref)``, detached.
    """
    _check_same_shapes("dpo_loss", policy_chosen_logps=policy_chosen_logps,
                       policy_rejected_logps=policy_rejected_logps, ref_chosen_logps=ref_chosen_logps,
                       ref_rejected_logps=ref_rejected_logps)
    if not beta > 0:
        raise ValueError(f"dpo_loss: beta must be > 0, got {beta}")
    if not 0.0 <= label_smoothing < 0.5:
        raise ValueError(f"dpo_loss: label_smoothing must be in [0, 0.5), got {label_smoothing}")
    h = (policy_chosen_logps - policy_rejected_logps) - (ref_chosen_logps - ref_rejected_logps)
    if loss_type == "sigmoid":
        losses = -logsigmoid(beta * h) * (1.0 - label_smoothing)
        if label_smoothing:
            losses = losses - logsigmoid(-beta * h) * label_smoothing
    elif loss_type == "ipo":
        if label_smoothing:
            raise ValueError("dpo_loss: label_smoothing is not used by loss_type='ipo'; pass 0")
        losses = (h - 1.0 / (2.0 * beta)) ** 2
    else:
        raise ValueError(f"dpo_loss: loss_type must be 'sigmoid' or 'ipo', got {loss_type!r}")
    chosen_rewards = beta * (policy_chosen_logps - ref_chosen_logps).detach()
    rejected_rewards = beta * (policy_rejected_logps - ref_rejected_logps).detach()
    return losses, chosen_rewards, rejected_rewards


# ---------------------------------------------------------------------------- GRPO
def group_relative_advantages(rewards: Tensor, group_size: int, eps: float = 1e-4) -> Tensor:
    """``(r - mean) / (std + eps)`` within consecutive groups of ``group_size`` rewards (``(B,)``,
    ``B = groups × group_size``; the unbiased std, as TRL's ``GRPOTrainer``).

    Args:
        rewards (Tensor): one reward per completion, :math:`(B,)`, in consecutive groups.
        group_size (int): the number of completions per prompt.
        eps (float): a value added for numerical stability. Default: ``0.0001``"""
    _check_tensor("group_relative_advantages", "rewards", rewards)
    if rewards.dim() != 1:
        raise ValueError(f"grpo: rewards must be 1-D (B,), got shape {list(rewards.shape)}")
    if not isinstance(group_size, int) or group_size < 2:
        raise ValueError(f"grpo: group_size must be an int >= 2 (advantages are relative to the other completions "
                         f"of the same prompt), got {group_size!r}")
    if rewards.shape[0] % group_size:
        raise ValueError(f"grpo: the number of rewards ({rewards.shape[0]}) is not a multiple of group_size "
                         f"({group_size})")
    r = rewards.detach().reshape(-1, group_size)
    adv = (r - r.mean(-1, keepdim=True)) / (r.std(-1, keepdim=True) + eps)
    return adv.reshape(-1)


def grpo_loss(logps: Tensor, rewards: Tensor, group_size: int, old_logps: Tensor | None = None,
              ref_logps: Tensor | None = None, mask: Tensor | None = None, epsilon: float = 0.2,
              beta: float = 0.04, eps: float = 1e-4) -> Tensor:
    """The GRPO objective (DeepSeekMath) for ``B = groups × group_size`` sampled completions.

    Args:
        logps: ``(B, T)`` per-token log-probs of the completions under the policy being trained
            (e.g. :func:`token_log_probs`).
        rewards: ``(B,)`` scalar rewards, consecutive ``group_size`` completions per prompt.
        group_size: completions per prompt (>= 2).
        old_logps: ``(B, T)`` log-probs under the policy that sampled them; ``None`` uses
            ``logps.detach()`` (one update per sample: ratio 1, the gradient is REINFORCE's).
        ref_logps: ``(B, T)`` log-probs under the frozen reference; needed when ``beta > 0``.
        mask: ``(B, T)`` 1 for completion tokens, 0 for padding (default: all ones).
        epsilon: the clipping range of the importance ratio.
        beta: weight of the KL penalty (k3 estimator) to the reference.
        eps: added to the group std.

    Returns:
        The scalar loss to minimise.
    """
    _check_tensor("grpo_loss", "logps", logps)
    if logps.dim() != 2:
        raise ValueError(f"grpo_loss: logps must be (B, T), got shape {list(logps.shape)}")
    shapes = {"logps": logps}
    if old_logps is not None:
        shapes["old_logps"] = old_logps
    if ref_logps is not None:
        shapes["ref_logps"] = ref_logps
    if mask is not None:
        shapes["mask"] = mask
    _check_same_shapes("grpo_loss", **shapes)
    _check_tensor("grpo_loss", "rewards", rewards)
    if tuple(rewards.shape) != (logps.shape[0],):
        raise ValueError(f"grpo_loss: rewards must be ({logps.shape[0]},) (one per completion), got "
                         f"{list(rewards.shape)}")
    if beta > 0 and ref_logps is None:
        raise ValueError("grpo_loss: ref_logps is required when beta > 0 (pass beta=0 to train without the KL "
                         "penalty)")
    adv = group_relative_advantages(rewards, group_size, eps).to(logps.dtype).unsqueeze(-1)
    old = logps.detach() if old_logps is None else old_logps.detach()
    ratio = (logps - old).exp()
    per_token = -minimum(ratio * adv, ratio.clamp(1.0 - epsilon, 1.0 + epsilon) * adv)
    if beta > 0:
        diff = ref_logps.detach() - logps
        per_token = per_token + beta * (diff.exp() - diff - 1.0)
    m = mask.to(per_token.dtype) if mask is not None else None
    if m is None:
        return per_token.mean(-1).mean()
    return ((per_token * m).sum(-1) / maximum(m.sum(-1), m.new_ones(()))).mean()


# ---------------------------------------------------------------------------- distillation
def distillation_loss(student_logits: Tensor, teacher_logits: Tensor, labels: Tensor | None = None,
                      temperature: float = 2.0, alpha: float = 0.5, ignore_index: int = -100) -> Tensor:
    """Knowledge distillation: ``α·T²·KL(p_teacher^T ‖ p_student^T) + (1 - α)·CE(student, labels)``.

    ``p^T = softmax(logits / T)``; the KL is summed over classes and averaged over the scored
    positions (``F.kl_div(..., reduction="batchmean")`` over those rows); the ``T²`` keeps its
    gradient's scale independent of ``T``. Logits are ``(N, C)`` or ``(B, T, C)`` (labels ``(N,)`` /
    ``(B, T)``); positions whose label is ``ignore_index`` are left out of both terms. With
    ``labels=None`` only the soft term is computed (``alpha`` must be 1).

    Args:
        student_logits (Tensor): the student's logits, :math:`(*, V)`.
        teacher_logits (Tensor): the teacher's logits, :math:`(*, V)`.
        labels (Tensor, optional): the class indices (token ids). Default: ``None``
        temperature (float): the softmax temperature :math:`T`. Default: ``2.0``
        alpha (float): the weight of the distillation term (1 - alpha weighs the cross entropy).
            Default: ``0.5``
        ignore_index (int, optional): Specifies a target value that is ignored and does not contribute
            to the input gradient. Default: ``-100``"""
    _check_same_shapes("distillation_loss", student_logits=student_logits, teacher_logits=teacher_logits)
    if not temperature > 0:
        raise ValueError(f"distillation_loss: temperature must be > 0, got {temperature}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"distillation_loss: alpha must be in [0, 1], got {alpha}")
    c = student_logits.shape[-1]
    s = student_logits.reshape(-1, c)
    t = teacher_logits.detach().reshape(-1, c)
    if labels is None:
        if alpha != 1.0:
            raise ValueError("distillation_loss: labels are needed for the hard-target term (alpha < 1)")
        keep = None
    else:
        _check_tensor("distillation_loss", "labels", labels)
        if tuple(labels.shape) != tuple(student_logits.shape[:-1]):
            raise ValueError(f"distillation_loss: labels must have the logits' shape without the class dim, got "
                             f"logits {list(student_logits.shape)} and labels {list(labels.shape)}")
        keep = (labels.reshape(-1) != ignore_index).to(s.dtype)
    log_ps = log_softmax(s / temperature, dim=-1)
    log_pt = log_softmax(t / temperature, dim=-1)
    kl_rows = (log_pt.exp() * (log_pt - log_ps)).sum(-1)
    if keep is None:
        soft = kl_rows.mean()
    else:
        soft = (kl_rows * keep).sum() / maximum(keep.sum(), keep.new_ones(()))
    loss = alpha * temperature ** 2 * soft
    if alpha < 1.0:
        loss = loss + (1.0 - alpha) * cross_entropy(s, labels.reshape(-1), ignore_index=ignore_index)
    return loss
