"""What one forward pass costs: FLOPs and bytes moved, for prefill and for a decode step.

Conventions, used by every lesson and lab:
- weight FLOPs: one multiply and one add (2 FLOPs) per weight that multiplies a token;
- prefill computes logits for the LAST prompt token only (vLLM samples from that one), so the
  lm_head runs once per sequence, not once per prompt token;
- attention's own FLOPs (scores and the weighted sum over V) are counted separately;
- bytes: the weights are read once per forward pass however many tokens share it, the input
  embedding is a lookup (one row, not the table), the KV cache is written in prefill and read in
  decode; activations are left out. Leaving things out only lowers a bound.
"""

from core.formats import SIXTEEN_BIT, WeightFormat, streamed_weight_bytes
from core.models import ModelSpec, kv_bytes_per_token, layer_matmul_params, lm_head_params


def require_count(name: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def decode_matmul_params(model: ModelSpec) -> int:
    """Weights that multiply every generated token: all layers' matrices and the lm_head."""
    return layer_matmul_params(model) + lm_head_params(model)


def prefill_flops(model: ModelSpec, prompt_len: int, batch: int = 1) -> int:
    """Every prompt token through every layer; logits only for each sequence's last token."""
    require_count("prompt_len", prompt_len, 1)
    require_count("batch", batch, 1)
    return batch * (2 * layer_matmul_params(model) * prompt_len + 2 * lm_head_params(model))


def decode_flops(model: ModelSpec, batch: int = 1) -> int:
    """One new token per sequence through every layer and the lm_head."""
    require_count("batch", batch, 1)
    return batch * 2 * decode_matmul_params(model)


def attention_flops_per_token(model: ModelSpec, context: int) -> int:
    """Q.K^T over `context` cached tokens, then the weighted sum of V: 2 * 2 * d each, per layer.

    d = query heads * head dim: every query head scores every cached key, even when several heads
    share one KV head (GQA changes the bytes, not these FLOPs).
    """
    require_count("context", context, 1)
    return 4 * model.num_layers * context * model.q_dim


def prefill_attention_flops(model: ModelSpec, prompt_len: int) -> int:
    """Causal attention over a prompt: token i attends to i tokens (itself and those before)."""
    require_count("prompt_len", prompt_len, 1)
    return 4 * model.num_layers * model.q_dim * prompt_len * (prompt_len + 1) // 2


def kv_cache_bytes(model: ModelSpec, tokens: int, batch: int = 1, kv_bytes: float = 2) -> float:
    """KV cache of `batch` sequences holding `tokens` tokens each: kappa * tokens * batch."""
    require_count("tokens", tokens, 0)
    require_count("batch", batch, 1)
    return kv_bytes_per_token(model, kv_bytes) * tokens * batch


def prefill_bytes(
    model: ModelSpec, prompt_len: int, fmt: WeightFormat | None = None, batch: int = 1
) -> float:
    """The weights, read once for all prompt tokens, plus the KV cache written for each of them."""
    require_count("prompt_len", prompt_len, 1)
    return streamed_weight_bytes(model, fmt) + kv_cache_bytes(model, prompt_len, batch, SIXTEEN_BIT)


def decode_bytes(
    model: ModelSpec,
    context: int,
    fmt: WeightFormat | None = None,
    batch: int = 1,
    *,
    kv_bytes: float = SIXTEEN_BIT,
) -> float:
    """The weights, read again for one token per sequence, plus every sequence's cached KV
    (kv_bytes per value: 2 for a 16-bit cache, 1 for vLLM's kv_cache_dtype="fp8")."""
    require_count("context", context, 0)
    return streamed_weight_bytes(model, fmt) + kv_cache_bytes(model, context, batch, kv_bytes)
