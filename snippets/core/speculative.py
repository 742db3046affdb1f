"""Speculative decoding's arithmetic: the verification step's bound, expected tokens, speed-up.

A draft proposes gamma tokens; the target model checks all of them, plus the position after the
last, in one forward pass of gamma + 1 tokens per sequence (Leviathan, Kalman and Matias, 2023;
Chen et al., 2023). alpha is the chance that the target accepts a draft token, taken as the same
at every position and independent of the others (the papers' model; a simulator shows what a
mix of easy and hard text does to it). Every time is a LOWER bound from core.roofline.
"""

from core.formats import WeightFormat
from core.forward import require_count
from core.gpus import GPU
from core.models import ModelSpec
from core.roofline import Bound, StepCost, bound, ridge_point, tpot_bound


def verify_step_bound(
    gpu: GPU,
    model: ModelSpec,
    *,
    batch: int,
    context: int,
    draft_tokens: int,
    fmt: WeightFormat | None = None,
) -> Bound:
    """One target pass over `draft_tokens` + 1 tokens for each of `batch` sequences.

    Every token goes through every layer and the lm_head (each position's logits decide whether
    its draft token is kept); the weights are read once for the whole step; each sequence reads
    its `context` cached tokens once and writes the KV of its `draft_tokens` extra tokens. With
    draft_tokens = 0 this is tpot_bound(batch=batch): a plain decode step.
    """
    require_count("batch", batch, 1)
    require_count("context", context, 0)
    require_count("draft_tokens", draft_tokens, 0)
    cost = StepCost.of(gpu, model, fmt)
    tokens = batch * (draft_tokens + 1)
    flops = 2 * (cost.layer_matmul_params + cost.lm_head_params) * tokens
    kv_tokens = batch * (context + draft_tokens)
    return bound(gpu, flops, cost.weight_bytes + cost.kv_bytes_per_token * kv_tokens, fmt)


def expected_tokens(alpha: float, draft_tokens: int) -> float:
    """tau = (1 - alpha^(gamma+1)) / (1 - alpha): tokens one verification step emits on average.

    The accepted prefix of the gamma drafts, plus one token the target always adds (the
    correction at the first rejection, or a bonus token after gamma acceptances).
    """
    _require_alpha(alpha)
    require_count("draft_tokens", draft_tokens, 0)
    if alpha == 1:
        return float(draft_tokens + 1)
    return (1 - alpha ** (draft_tokens + 1)) / (1 - alpha)


def speedup(alpha: float, draft_tokens: int, draft_cost: float) -> float:
    """Tokens per unit of time against plain decoding while the verification costs one decode
    step (memory-bound): tau / (gamma * c + 1), c = a draft step's time over a target step's."""
    if draft_cost < 0:
        raise ValueError(f"draft cost must be >= 0, got {draft_cost!r}")
    return expected_tokens(alpha, draft_tokens) / (draft_tokens * draft_cost + 1)


def best_draft_tokens(alpha: float, draft_cost: float, most: int = 16) -> int:
    """The gamma in 1..most with the largest speed-up (the first of equals)."""
    require_count("most", most, 1)
    return max(range(1, most + 1), key=lambda g: (speedup(alpha, g, draft_cost), -g))


def alpha_from_mean_length(mean_length: float, draft_tokens: int) -> float:
    """Solve tau(alpha, gamma) = mean_length for alpha by bisection (tau grows with alpha)."""
    require_count("draft_tokens", draft_tokens, 1)
    if not 1 <= mean_length <= draft_tokens + 1:
        raise ValueError(f"mean length must lie in [1, {draft_tokens + 1}], got {mean_length!r}")
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if expected_tokens(middle, draft_tokens) < mean_length:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def batched_speedup(
    gpu: GPU,
    model: ModelSpec,
    *,
    batch: int,
    context: int,
    alpha: float,
    draft_tokens: int,
    draft_step_s: float = 0.0,
    fmt: WeightFormat | None = None,
) -> float:
    """Tokens per second with speculation over tokens per second without, at the same batch.

    Without: one token per sequence per decode step (tpot_bound). With: tau tokens per sequence
    per round of gamma draft steps (draft_step_s each, 0 for n-gram lookup) and one verification
    step. Both times are lower bounds, so this is the ratio of the two best cases.
    """
    plain = tpot_bound(gpu, model, context, fmt, batch).seconds
    verify = verify_step_bound(
        gpu, model, batch=batch, context=context, draft_tokens=draft_tokens, fmt=fmt
    ).seconds
    round_s = draft_tokens * draft_step_s + verify
    return expected_tokens(alpha, draft_tokens) * plain / round_s


def break_even_batch(
    gpu: GPU,
    model: ModelSpec,
    *,
    context: int,
    alpha: float,
    draft_tokens: int,
    fmt: WeightFormat | None = None,
    largest: int = 4096,
) -> int | None:
    """The smallest batch at which speculation with a free draft (n-gram) no longer pays:
    batched_speedup < 1. None if it still pays at `largest`."""
    for batch in range(1, largest + 1):
        args = dict(batch=batch, context=context, alpha=alpha, draft_tokens=draft_tokens, fmt=fmt)
        if batched_speedup(gpu, model, **args) < 1:
            return batch
    return None


def _require_alpha(alpha: float) -> None:
    if not 0 <= alpha <= 1:
        raise ValueError(f"acceptance rate must lie in [0, 1], got {alpha!r}")


def verify_critical_batch(
    gpu: GPU,
    model: ModelSpec,
    *,
    context: int,
    draft_tokens: int,
    fmt: WeightFormat | None = None,
) -> float | None:
    """The batch at which the verification step's compute time meets its memory time.

    Solves 2*B*(g+1)*M' / P = (W + B*kappa*(S+g)) / BW for B, with M' the layers' and lm_head's
    weights: B = R*W / (2*(g+1)*M' - R*kappa*(S+g)), R the ridge point. None when the KV term
    grows as fast as the compute. With g = 0 it is core.roofline.critical_batch.
    """
    require_count("context", context, 0)
    require_count("draft_tokens", draft_tokens, 0)
    cost = StepCost.of(gpu, model, fmt)
    ridge = ridge_point(gpu, fmt)
    per_token = 2 * (cost.layer_matmul_params + cost.lm_head_params)
    denominator = (draft_tokens + 1) * per_token - ridge * cost.kv_bytes_per_token * (
        context + draft_tokens
    )
    if denominator <= 0:
        return None
    return ridge * cost.weight_bytes / denominator
