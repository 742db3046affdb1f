"""Figures the Prefill/Decode lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ prefill_decode.<name> }}; coursesite.values fills them in.
Run `python snippets/prefill_decode/values.py` to list every name and its value.
"""

from core import roofline
from core.formats import checkpoint_format
from core.forward import attention_flops_per_token
from core.gpus import load_gpus
from core.models import kv_bytes_per_token, load_model, params
from core.reference import (  # published measurements, quoted as "what to expect"
    AWQ_MODEL,
    GPT_FAST_BANDWIDTH_GBS,
    GPT_FAST_TOK_S,
    QWEN_BENCH_AWQ_TOK_S,
    QWEN_BENCH_BF16_TOK_S,
    QWEN_BENCH_NEW_TOKENS,
)
from core.roofline import decode_steps_bound_s, ttft_bound
from prefill_decode.phase_intensity import (
    BYTES_PER_WEIGHT,
    LENGTHS,
    MODEL,
    decode_intensity,
    prefill_intensity,
)

# The lab's three calls (lesson section 5, labs/prefill_decode/phases.py defaults): a short and a
# long prompt, few and many new tokens. The lab loads the AWQ checkpoint by default.
LAB_MODEL = AWQ_MODEL
LAB_SHORT_PROMPT = 8
LAB_LONG_PROMPT = 2000
LAB_NEW_TOKENS = 256

# Self-test question 3: a request with this prompt length and this many new tokens (BF16).
QUIZ_PROMPT = 4000
QUIZ_NEW_TOKENS = 50


def prefill_to_decode_ratio(s: int) -> float:
    return prefill_intensity(MODEL, s) / decode_intensity(MODEL, s)


def exact_prefill_to_decode_ratio(s: int) -> float:
    """The same ratio counted exactly by the core (lm_head once per prompt, embedding looked up)."""
    return roofline.prefill_intensity(MODEL, s) / roofline.decode_intensity(MODEL, s)


def attention_decode_intensity() -> float:
    """FLOPs per KV byte of attention in decode: 4 L n_h d_h FLOPs per cached token over its kappa
    bytes, i.e. 2 n_h / (n_kv b_kv) as the page writes it.

    Each cached token costs QK^T and the weighted sum over V (2 FLOPs each per query-head element)
    against reading its K and V once for a group of query heads (GQA); kappa counts the KV cache's
    own bytes per value, not the weights'.
    """
    return attention_flops_per_token(MODEL, context=1) / kv_bytes_per_token(MODEL)


def values() -> dict[str, str]:
    gpu = load_gpus()["rtx_4090"]
    ridge = gpu.ridge_point
    decode_max = 2 / BYTES_PER_WEIGHT  # upper bound of decode intensity: 2N / (N b)
    shortest, longest = LENGTHS[0], LENGTHS[-1]
    n, kappa = params(MODEL), kv_bytes_per_token(MODEL)
    context = MODEL.max_position_embeddings  # native context, without YaRN
    # floors for the weights the lab loads (AWQ) and for the quiz's BF16 weights, from the core
    awq = load_model(LAB_MODEL)
    awq_fmt = checkpoint_format(awq)
    lab_prefill_s = ttft_bound(gpu, awq, LAB_LONG_PROMPT, awq_fmt).seconds
    lab_decode_s = decode_steps_bound_s(gpu, awq, LAB_SHORT_PROMPT, LAB_NEW_TOKENS, awq_fmt)
    lab_step_s = lab_decode_s / (LAB_NEW_TOKENS - 1)
    quiz_prefill_s = ttft_bound(gpu, MODEL, QUIZ_PROMPT).seconds
    quiz_decode_s = decode_steps_bound_s(gpu, MODEL, QUIZ_PROMPT, QUIZ_NEW_TOKENS)
    # the same floors from this lesson's plain model (2N FLOPs per token, N b + kappa S bytes per
    # step): what a reader can work out with section 3 alone, a self-test answer in its own right
    plain_prefill_s = 2 * n * QUIZ_PROMPT / gpu.peak_flops
    plain_step_s = (n * BYTES_PER_WEIGHT + kappa * QUIZ_PROMPT) / gpu.bandwidth_bytes
    plain_decode_s = (QUIZ_NEW_TOKENS - 1) * plain_step_s
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
        # the model (exact N: transformer_infra.params; kappa: kv_cache.kappa)
        "context_len": f"{context:,}",
        "attention_decode_intensity": f"{attention_decode_intensity():g}",
        # the intensity formulas (the simple model of this lesson)
        "kv_share_at_context": f"{kappa * context / (n * BYTES_PER_WEIGHT):.1%}",
        "prefill_saturation": f"{2 * n / kappa:,.0f}",
        "prefill_at_context": f"{prefill_intensity(MODEL, context):,.0f}",
        "shortest_len": f"{shortest:,}",
        "longest_len": f"{longest:,}",
        "ratio_shortest": f"{prefill_to_decode_ratio(shortest):,.0f}",
        "ratio_longest": f"{prefill_to_decode_ratio(longest):,.0f}",
        "exact_ratio_shortest": f"{exact_prefill_to_decode_ratio(shortest):,.0f}",
        "exact_ratio_longest": f"{exact_prefill_to_decode_ratio(longest):,.0f}",
        "exact_ratio_shortfall": f"{1 - exact_prefill_to_decode_ratio(longest) / longest:.0%}",
        # the lab on the RTX 4090: AWQ weights (the lab's default), batch 1, lower bounds
        "lab_long_prompt": f"{LAB_LONG_PROMPT:,}",
        "lab_new_tokens": f"{LAB_NEW_TOKENS:,}",
        "lab_decode_steps": f"{LAB_NEW_TOKENS - 1:,}",
        "lab_prefill_floor_ms": f"{lab_prefill_s * 1e3:.0f}",
        "lab_prefill_in_steps": f"{lab_prefill_s / lab_step_s:.0f}",
        "lab_decode_floor_s": f"{lab_decode_s:.2f}",
        # self-test question 3: BF16 weights, batch 1
        "quiz_prompt": f"{QUIZ_PROMPT:,}",
        "quiz_new_tokens": f"{QUIZ_NEW_TOKENS:,}",
        "quiz_prefill_floor_ms": f"{quiz_prefill_s * 1e3:.0f}",
        "quiz_decode_steps": f"{QUIZ_NEW_TOKENS - 1:,}",
        "quiz_decode_floor_ms": f"{quiz_decode_s * 1e3:.0f}",
        "quiz_prefill_plain_ms": f"{plain_prefill_s * 1e3:.0f}",
        "quiz_step_plain_ms": f"{plain_step_s * 1e3:.1f}",
        "quiz_decode_plain_ms": f"{plain_decode_s * 1e3:.0f}",
        "quiz_prefill_plain_over": f"{plain_prefill_s / quiz_prefill_s - 1:.0%}",
        "quiz_decode_plain_over": f"{plain_decode_s / quiz_decode_s - 1:.0%}",
        # published measurements (the comparison with the bound: latency_metrics)
        "qwen_bench_bf16_tok_s": f"{QWEN_BENCH_BF16_TOK_S:.2f}",
        "qwen_bench_awq_tok_s": f"{QWEN_BENCH_AWQ_TOK_S:.2f}",
        "qwen_bench_new_tokens": f"{QWEN_BENCH_NEW_TOKENS:,}",
        "gpt_fast_tok_s": f"{GPT_FAST_TOK_S:g}",
        "gpt_fast_bandwidth_gbs": f"{GPT_FAST_BANDWIDTH_GBS:,.0f}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
