"""The KV cache's precision and long contexts: capacity, attention's share, YaRN, offloading.

- kv_cache_dtype (vLLM 0.26.0, CacheConfig.cache_dtype): "auto" keeps the model's 16-bit dtype;
  "fp8" stores K and V in one byte (e4m3 on CUDA), so kappa halves.
- YaRN: vLLM derives max_model_len as original_max_position_embeddings x factor.
- Offloading: KV blocks moved to CPU memory come back over the host link; weights offloaded with
  cpu_offload_gb are read over it in every forward pass. Times over a link are lower bounds.
"""

from core.formats import SIXTEEN_BIT, WeightFormat, resident_weight_bytes
from core.forward import attention_flops_per_token, decode_bytes, decode_flops, kv_cache_bytes
from core.gpus import GIB, GPU
from core.links import Link, transfer_seconds
from core.memory import MemoryBudget
from core.models import ModelSpec, kv_bytes_per_token

# bytes per cached value for the kv_cache_dtype values a 16-bit model can use on CUDA
KV_CACHE_DTYPE_BYTES = {
    "auto": SIXTEEN_BIT,
    "bfloat16": 2,
    "float16": 2,
    "fp8": 1,  # e4m3 on CUDA
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
}


def kv_value_bytes(kv_cache_dtype: str) -> int:
    if kv_cache_dtype not in KV_CACHE_DTYPE_BYTES:
        known = ", ".join(KV_CACHE_DTYPE_BYTES)
        raise ValueError(f"no byte size for kv_cache_dtype {kv_cache_dtype!r} (known: {known})")
    return KV_CACHE_DTYPE_BYTES[kv_cache_dtype]


def sequence_kv_bytes(model: ModelSpec, context: int, kv_cache_dtype: str = "auto") -> float:
    """One sequence's KV cache at `context` tokens: kappa * S."""
    return kv_cache_bytes(model, context, 1, kv_value_bytes(kv_cache_dtype))


def kv_tokens(gpu: GPU, model: ModelSpec, fmt: WeightFormat, kv_cache_dtype: str = "auto") -> int:
    """Tokens of KV cache the engine's budget holds next to the weights; 0 if they do not fit."""
    budget = MemoryBudget.for_gpu(gpu)
    weights = resident_weight_bytes(model, fmt)
    if budget.usable_bytes - weights - budget.reserve_bytes <= 0:
        return 0
    return budget.tokens(weights, kv_bytes_per_token(model, kv_value_bytes(kv_cache_dtype)))


def sequences_that_fit(
    gpu: GPU, model: ModelSpec, fmt: WeightFormat, context: int, kv_cache_dtype: str = "auto"
) -> int:
    """Sequences of `context` tokens whose KV caches fit at once."""
    if context < 1:
        raise ValueError(f"context must be at least 1 token, got {context}")
    return kv_tokens(gpu, model, fmt, kv_cache_dtype) // context


def attention_flops_share(model: ModelSpec, context: int) -> float:
    """Of one decode token's FLOPs, the share attention itself does (scores and the sum over V)
    at `context` cached tokens; the rest are the weights' multiply-adds."""
    attention = attention_flops_per_token(model, context)
    return attention / (attention + decode_flops(model))


def kv_bytes_share(
    model: ModelSpec,
    context: int,
    fmt: WeightFormat | None = None,
    batch: int = 1,
    kv_cache_dtype: str = "auto",
) -> float:
    """Of one decode step's bytes, the share that is KV cache read (the rest: weights)."""
    kv_bytes = kv_value_bytes(kv_cache_dtype)
    kv = kv_cache_bytes(model, context, batch, kv_bytes)
    return kv / decode_bytes(model, context, fmt, batch, kv_bytes=kv_bytes)


def yarn_max_model_len(original_max_position_embeddings: int, factor: float) -> int:
    """The max_model_len vLLM derives for YaRN: original x factor (llama3, su and longrope
    scaling are not multiplied)."""
    if original_max_position_embeddings < 1 or not factor >= 1:
        raise ValueError("YaRN needs a positive original length and a factor of at least 1")
    return int(original_max_position_embeddings * factor)


def yarn_hf_overrides(model: ModelSpec, target_len: int, rope_theta: float) -> dict:
    """hf_overrides for LLM(...) that extend `model` to `target_len` tokens with YaRN (the
    transformers-5 name rope_parameters, which vLLM 0.26.0 reads)."""
    original = model.max_position_embeddings
    if target_len <= original or target_len % original:
        raise ValueError(f"target_len must be a multiple of {original} above it, got {target_len}")
    factor = target_len / original
    return {
        "rope_parameters": {
            "rope_type": "yarn",
            "factor": factor,
            "original_max_position_embeddings": original,
            "rope_theta": rope_theta,
        }
    }


def kv_reload_seconds(
    link: Link, model: ModelSpec, tokens: int, kv_cache_dtype: str = "auto"
) -> float:
    """Lower bound on bringing `tokens` tokens of one sequence's KV back from CPU memory."""
    return transfer_seconds(link, sequence_kv_bytes(model, tokens, kv_cache_dtype))


def weight_offload_step_seconds(link: Link, cpu_offload_gb: float) -> float:
    """What cpu_offload_gb adds to EVERY forward pass at least: the offloaded weights cross the
    host link each time (vLLM's option is in GiB, despite its name)."""
    if cpu_offload_gb < 0:
        raise ValueError(f"cpu_offload_gb must be non-negative, got {cpu_offload_gb}")
    return transfer_seconds(link, cpu_offload_gb * GIB)
