"""Figures the Prefill/Decode lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ prefill_decode.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/prefill_decode/values.py` to list every name and its value.
"""

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make snippets/ importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prefill_decode.phase_intensity import (
    LENGTHS,
    QWEN25_7B,
    ModelConfig,
    decode_intensity,
    prefill_intensity,
)
from specs import GPU, load_gpus
from specs.models import ModelSpec, load_model

# The lesson's model, as its config.json describes it (snippets/specs/models/).
QWEN25_7B_SPEC = load_model("qwen2.5-7b-instruct")

# The lab's three calls (lesson section 5): a long prompt of about this many tokens, and this many
# new tokens for the decode-heavy call.
LAB_LONG_PROMPT = 2000
LAB_NEW_TOKENS = 256

# Self-test question 3: a request with this prompt length and this many new tokens.
QUIZ_PROMPT = 4000
QUIZ_NEW_TOKENS = 50

# Published measurements, quoted as "what to expect" (this course did not run them).
# Qwen2.5 speed benchmark (QwenLM/Qwen2.5, docs/source/benchmark/speed_benchmark.rst): vLLM 0.6.3,
# one A100 80GB, batch 1, input length 1, 2048 new tokens, Qwen2.5-7B-Instruct.
QWEN_BENCH_BF16_TOK_S = 84.28
QWEN_BENCH_AWQ_TOK_S = 148.10
# gpt-fast README (pytorch-labs/gpt-fast): Llama-2-7B BF16, batch 1, A100 80GB limited to 330 W.
GPT_FAST_TOK_S = 104.9
GPT_FAST_BANDWIDTH_GBS = 1397.31


def kappa_from_config(spec: ModelSpec = QWEN25_7B_SPEC, cfg: ModelConfig = QWEN25_7B) -> float:
    """KV bytes per token: K and V, in every layer, for every KV head: 2 * L * n_kv * d_h * b."""
    return spec.kv_bytes_per_token(cfg.weight_bytes)


def kv_equals_weights_len(cfg: ModelConfig = QWEN25_7B) -> float:
    """Prompt length S at which the KV written (kappa*S) equals the weight bytes (N*b)."""
    return cfg.params * cfg.weight_bytes / cfg.kv_bytes_per_token


def prefill_to_decode_ratio(s: int, cfg: ModelConfig = QWEN25_7B) -> float:
    return prefill_intensity(cfg, s) / decode_intensity(cfg, s)


def embedding_params(spec: ModelSpec = QWEN25_7B_SPEC) -> int:
    """The input embedding table (vocab x hidden): a lookup, so it does no FLOPs."""
    return spec.param_breakdown()["embedding"]


def working_params(spec: ModelSpec = QWEN25_7B_SPEC) -> int:
    """Weights that do multiply-adds for every token: the exact count minus the input embedding.

    The lm_head is untied (tie_word_embeddings false), so it stays in and is read in full.
    """
    return spec.params - embedding_params(spec)


def decode_step_bytes(cfg: ModelConfig = QWEN25_7B, context_len: int = 0) -> float:
    """Bytes a batch-1 decode step must read at least: working weights + the context's KV."""
    return working_params() * cfg.weight_bytes + cfg.kv_bytes_per_token * context_len


def decode_step_floor_s(gpu: GPU, cfg: ModelConfig = QWEN25_7B, context_len: int = 0) -> float:
    """Lower bound on one decode step: its bytes at the GPU's peak bandwidth."""
    return decode_step_bytes(cfg, context_len) / gpu.bandwidth_bytes


def prefill_floor_s(gpu: GPU, prompt_len: int, cfg: ModelConfig = QWEN25_7B) -> float:
    """Lower bound on prefill: the slower of its weight FLOPs at peak and its bytes at bandwidth.

    Attention's own FLOPs are left out, so the compute term is a lower bound.
    """
    compute = 2 * working_params() * prompt_len / gpu.peak_flops
    memory = (decode_step_bytes(cfg) + cfg.kv_bytes_per_token * prompt_len) / gpu.bandwidth_bytes
    return max(compute, memory)


def prefill_ridge_len(gpu: GPU, cfg: ModelConfig = QWEN25_7B) -> float:
    """Prompt length at which prefill intensity 2NS / (Nb + kappa S) reaches the ridge point."""
    ridge = gpu.ridge_point
    return ridge * cfg.params * cfg.weight_bytes / (2 * cfg.params - ridge * cfg.kv_bytes_per_token)


def attention_decode_intensity(
    spec: ModelSpec = QWEN25_7B_SPEC, cfg: ModelConfig = QWEN25_7B
) -> float:
    """FLOPs per KV byte of attention in decode: 4 * heads * d_h FLOPs per 2 * n_kv * d_h * b bytes.

    Each cached token costs QK^T and the weighted sum over V (2 FLOPs each per query-head element)
    against reading its K and V once for a group of query heads (GQA).
    """
    return 2 * spec.num_heads / (spec.num_kv_heads * cfg.weight_bytes)


def values() -> dict[str, str]:
    if kappa_from_config() != QWEN25_7B.kv_bytes_per_token:
        raise ValueError("kappa in phase_intensity.py disagrees with the Qwen2.5-7B config")
    gpus = load_gpus()
    gpu, a100 = gpus["rtx_4090"], gpus["a100_80gb_sxm"]
    ridge = gpu.ridge_point
    decode_max = 2 / QWEN25_7B.weight_bytes  # upper bound of decode intensity: 2N / (N b)
    shortest, longest = LENGTHS[0], LENGTHS[-1]
    step_s = decode_step_floor_s(gpu)
    lab_prefill_s = prefill_floor_s(gpu, LAB_LONG_PROMPT)
    a100_ceiling = 1 / decode_step_floor_s(a100)
    context = QWEN25_7B_SPEC.max_position_embeddings  # native context, without YaRN
    kv_at_context = QWEN25_7B.kv_bytes_per_token * context
    return {
        # the GPU and its roofline
        "gpu_name": gpu.name,
        "gpu_memory_gb": f"{gpu.memory_gb:g}",
        "gpu_memory_type": gpu.memory_type,
        "gpu_tflops": f"{gpu.bf16_dense_tflops:g}",
        "gpu_bandwidth_gbs": f"{gpu.memory_bandwidth_gbs:,.0f}",
        "ridge_4090": f"{ridge:.0f}",
        "idle_share_at_decode": f"{1 - decode_max / ridge:.1%}",
        "decode_below_ridge": f"{ridge / decode_max:.0f}",
        "decode_max_intensity": f"{decode_max:g}",
        "prefill_ridge_len": f"{prefill_ridge_len(gpu):.0f}",
        # the model
        "params": f"{QWEN25_7B.params:,}",
        "params_billion": f"{QWEN25_7B.params / 1e9:.2f}",
        "kappa": f"{QWEN25_7B.kv_bytes_per_token:,}",
        "context_len": f"{context:,}",
        "embedding_share": f"{embedding_params() / QWEN25_7B_SPEC.params:.1%}",
        "attention_decode_intensity": f"{attention_decode_intensity():g}",
        # the intensity formulas
        "kv_equals_weights_len": f"{kv_equals_weights_len():,.0f}",
        "kv_share_at_context": f"{kv_at_context / (QWEN25_7B.params * QWEN25_7B.weight_bytes):.1%}",
        "prefill_saturation": f"{2 * QWEN25_7B.params / QWEN25_7B.kv_bytes_per_token:,.0f}",
        "prefill_at_context": f"{prefill_intensity(QWEN25_7B, context):,.0f}",
        "shortest_len": f"{shortest:,}",
        "longest_len": f"{longest:,}",
        "ratio_shortest": f"{prefill_to_decode_ratio(shortest):,.0f}",
        "ratio_longest": f"{prefill_to_decode_ratio(longest):,.0f}",
        # lower bounds on the RTX 4090, BF16 weights, batch 1
        "decode_step_gb": f"{decode_step_bytes() / 1e9:.2f}",
        "tpot_floor_ms": f"{step_s * 1e3:.1f}",
        "decode_ceiling_tok_s": f"{1 / step_s:.0f}",
        "lab_long_prompt": f"{LAB_LONG_PROMPT:,}",
        "lab_new_tokens": f"{LAB_NEW_TOKENS:,}",
        "lab_prefill_floor_ms": f"{lab_prefill_s * 1e3:.0f}",
        "lab_prefill_in_steps": f"{lab_prefill_s / step_s:.0f}",
        # the first new token comes out of prefill; each of the others needs one decode step
        "lab_decode_floor_s": f"{(LAB_NEW_TOKENS - 1) * step_s:.1f}",
        "quiz_prompt": f"{QUIZ_PROMPT:,}",
        "quiz_new_tokens": f"{QUIZ_NEW_TOKENS:,}",
        "quiz_prefill_floor_ms": f"{prefill_floor_s(gpu, QUIZ_PROMPT) * 1e3:.0f}",
        "quiz_decode_steps": f"{QUIZ_NEW_TOKENS - 1:,}",
        "quiz_decode_floor_ms": f"{(QUIZ_NEW_TOKENS - 1) * step_s * 1e3:.0f}",
        # published measurements, set against the same bound on an A100
        "a100_bandwidth_gbs": f"{a100.memory_bandwidth_gbs:,.0f}",
        "decode_ceiling_a100_tok_s": f"{a100_ceiling:.0f}",
        "qwen_bench_bf16_tok_s": f"{QWEN_BENCH_BF16_TOK_S:.2f}",
        "qwen_bench_awq_tok_s": f"{QWEN_BENCH_AWQ_TOK_S:.2f}",
        "qwen_bench_bf16_share": f"{QWEN_BENCH_BF16_TOK_S / a100_ceiling:.0%}",
        "gpt_fast_tok_s": f"{GPT_FAST_TOK_S:g}",
        "gpt_fast_bandwidth_gbs": f"{GPT_FAST_BANDWIDTH_GBS:,.0f}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
