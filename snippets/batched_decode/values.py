"""Figures the batched-decode lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ batched_decode.<name> }}; coursesite.values fills them in.
Run `python snippets/batched_decode/values.py` to list every name and its value.
"""

from batched_decode.batch_bound import (
    BATCHES,
    CONTEXT,
    batch_for_kv_ceiling_share,
    compute_ceiling_tokens_per_s,
    configurations,
    kv_ceiling_share,
    kv_ceiling_tokens_per_s,
    max_batch,
    mfu_ceiling,
    step,
    vanishing_context,
)
from batched_decode.lab_results import (
    LAB_BATCHES,
    LAB_NEW_TOKENS,
    LAB_PROMPT_TOKENS,
    LAB_SHORT_NEW_TOKENS,
)
from core.engine import MAX_NUM_BATCHED_TOKENS, MAX_NUM_SEQS
from core.formats import checkpoint_format, streamed_weight_bytes
from core.forward import decode_flops, kv_cache_bytes
from core.gpus import load_gpus
from core.models import kv_bytes_per_token, load_model
from core.published import closest_published
from core.reference import BF16_MODEL, QWEN_BENCH_BF16_TOK_S, QWEN_BENCH_GPU  # published, batch 1
from core.roofline import critical_batch, decode_intensity_limit, flops_utilization, ridge_point

QUIZ_CONTEXT = 512  # the numeric self-test: the critical batch at a shorter context
TRANSFER_MODEL = "llama-3.1-8b-instruct"
TRANSFER_GPU = "h200_sxm"
TRANSFER_CONTEXTS = (512, 1024)
NEAR_KV_CEILING = 0.9  # what "approaches the KV ceiling" would have to mean
# vLLM 0.26.0's defaults for the LLM class on GPUs under 70 GiB (and on an A100)
VLLM_MAX_NUM_SEQS_DEFAULT = MAX_NUM_SEQS
VLLM_MAX_NUM_BATCHED_TOKENS_DEFAULT = MAX_NUM_BATCHED_TOKENS


def _b(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def values() -> dict[str, str]:
    gpus = load_gpus()
    (rtx, bf16, f_bf16), (_, awq, f_awq), (h100, _, _), _ = configurations()
    ha1 = step(h100, awq, f_awq, CONTEXT, BATCHES[0])
    ha_last = step(h100, awq, f_awq, CONTEXT, BATCHES[-1])
    first, last = BATCHES[0], BATCHES[-1]
    s1 = step(rtx, bf16, f_bf16, CONTEXT, first)
    s_last = step(rtx, bf16, f_bf16, CONTEXT, last)
    a1 = step(rtx, awq, f_awq, CONTEXT, first)
    a_last = step(rtx, awq, f_awq, CONTEXT, last)
    h1 = step(h100, bf16, f_bf16, CONTEXT, first)
    h_last = step(h100, bf16, f_bf16, CONTEXT, last)
    fits_bf16 = max_batch(rtx, bf16, f_bf16, CONTEXT)
    s_at_fits = step(rtx, bf16, f_bf16, CONTEXT, fits_bf16)
    # the batch at which a step reads as many KV bytes as weight bytes: W = B * kappa * S
    kv_as_weights = streamed_weight_bytes(bf16, f_bf16) / kv_cache_bytes(bf16, CONTEXT)
    h100_fits = max_batch(h100, bf16, f_bf16, CONTEXT)
    s_fit = step(rtx, bf16, f_bf16, CONTEXT, max(b for b in BATCHES if b <= fits_bf16))
    a100 = gpus[QWEN_BENCH_GPU]
    bench_mfu = flops_utilization(a100, decode_flops(bf16, 1), 1 / QWEN_BENCH_BF16_TOK_S)
    llama, tgpu = load_model(TRANSFER_MODEL), gpus[TRANSFER_GPU]
    f_llama = checkpoint_format(llama)
    t_short, t_long = TRANSFER_CONTEXTS
    return {
        # the page's setting
        "model_name": bf16.name,
        "gpu_name": rtx.name,
        "h100_name": h100.name,
        "context": f"{CONTEXT:,}",
        "first_batch": f"{first}",
        "last_batch": f"{last}",
        "m_params": f"{decode_flops(bf16, 1) / 2 / 1e9:.2f}",
        "rtx_ridge": f"{rtx.ridge_point:.0f}",
        "h100_ridge": f"{h100.ridge_point:.0f}",
        # the RTX 4090 sweep, BF16
        "bf16_tpot_first_ms": f"{s1.tpot_s * 1e3:.2f}",
        "bf16_tpot_last_ms": f"{s_last.tpot_s * 1e3:.2f}",
        "bf16_tps_first": f"{s1.tokens_per_s:,.0f}",
        "bf16_tps_last": f"{s_last.tokens_per_s:,.0f}",
        "bf16_tps_gain": f"{s_last.tokens_per_s / s1.tokens_per_s:.0f}",
        "bf16_tpot_growth": f"{s_last.tpot_s / s1.tpot_s:.2f}",
        "bf16_intensity_last": f"{s_last.intensity:.0f}",
        "bf16_fits": f"{fits_bf16:,}",
        "bf16_fit_batch": f"{s_fit.batch}",
        "bf16_fit_tps": f"{s_fit.tokens_per_s:,.0f}",
        "bf16_kv_as_weights_batch": f"{kv_as_weights:,.0f}",
        "bf16_tpot_growth_at_fits": f"{s_at_fits.tpot_s / s1.tpot_s:.2f}",
        "bf16_mfu_first": f"{mfu_ceiling(rtx, bf16, f_bf16, s1):.1%}",
        "bf16_mfu_last": f"{mfu_ceiling(rtx, bf16, f_bf16, s_last):.0%}",
        # the RTX 4090 sweep, AWQ
        "awq_tpot_first_ms": f"{a1.tpot_s * 1e3:.2f}",
        "awq_tpot_last_ms": f"{a_last.tpot_s * 1e3:.2f}",
        "awq_tps_last": f"{a_last.tokens_per_s:,.0f}",
        "awq_fits": f"{max_batch(rtx, awq, f_awq, CONTEXT):,}",
        # the H100, BF16
        "h100_tpot_first_ms": f"{h1.tpot_s * 1e3:.2f}",
        "h100_tpot_last_ms": f"{h_last.tpot_s * 1e3:.2f}",
        "h100_tps_last": f"{h_last.tokens_per_s:,.0f}",
        "h100_awq_tpot_first_ms": f"{ha1.tpot_s * 1e3:.2f}",
        "h100_awq_tpot_last_ms": f"{ha_last.tpot_s * 1e3:.2f}",
        "h100_fits": f"{h100_fits:,}",
        # critical batch
        "b0_bf16": _b(critical_batch(rtx, bf16, 0, f_bf16)),
        "b0_awq": _b(critical_batch(rtx, awq, 0, f_awq)),
        "b0_h100_bf16": _b(critical_batch(h100, bf16, 0, f_bf16)),
        "bstar_bf16": _b(critical_batch(rtx, bf16, CONTEXT, f_bf16)),
        "bstar_awq": _b(critical_batch(rtx, awq, CONTEXT, f_awq)),
        "intensity_limit": f"{decode_intensity_limit(bf16, CONTEXT):.0f}",
        "intensity_limit_double": f"{decode_intensity_limit(bf16, 2 * CONTEXT):.0f}",
        "double_context": f"{2 * CONTEXT:,}",
        "rtx_vanishing_context": f"{vanishing_context(rtx, bf16, f_bf16):,.0f}",
        "h100_vanishing_context": f"{vanishing_context(h100, bf16, f_bf16):,.0f}",
        "compute_ceiling_rtx": f"{compute_ceiling_tokens_per_s(rtx, bf16, f_bf16):,.0f}",
        "compute_ceiling_h100": f"{compute_ceiling_tokens_per_s(h100, bf16, f_bf16):,.0f}",
        "kv_ceiling_rtx": f"{kv_ceiling_tokens_per_s(rtx, bf16, CONTEXT):,.0f}",
        "kv_ceiling_h100": f"{kv_ceiling_tokens_per_s(h100, bf16, CONTEXT):,.0f}",
        # how close the H100 (BF16) gets to its KV ceiling: at the sweep's end, at what fits
        "h100_kv_share_last": f"{kv_ceiling_share(h100, bf16, f_bf16, CONTEXT, last):.0%}",
        "near_kv_ceiling": f"{NEAR_KV_CEILING:.0%}",
        "near_kv_ceiling_factor": f"{NEAR_KV_CEILING / (1 - NEAR_KV_CEILING):.0f}",
        "h100_batch_near_kv_ceiling": (
            f"{batch_for_kv_ceiling_share(bf16, f_bf16, CONTEXT, NEAR_KV_CEILING):,.0f}"
        ),
        "h100_kv_share_at_fits": f"{kv_ceiling_share(h100, bf16, f_bf16, CONTEXT, h100_fits):.0%}",
        # MBU and MFU of a published batch-1 run (latency_metrics states its MBU)
        # as the Qwen page names it (no SXM or PCIe; latency_metrics takes the SXM bandwidth)
        "bench_gpu": closest_published(BF16_MODEL, QWEN_BENCH_GPU, "BF16", "decode").row.hardware,
        "bench_mfu": f"{bench_mfu:.1%}",
        # self-test
        "quiz_context": f"{QUIZ_CONTEXT:,}",
        "quiz_bstar_awq": _b(critical_batch(rtx, awq, QUIZ_CONTEXT, f_awq)),
        "quiz_bstar_bf16": _b(critical_batch(rtx, bf16, QUIZ_CONTEXT, f_bf16)),
        "quiz_fits_bf16": f"{max_batch(rtx, bf16, f_bf16, QUIZ_CONTEXT):,}",
        "transfer_model": llama.name,
        "transfer_gpu": tgpu.name,
        "transfer_kappa": f"{kv_bytes_per_token(llama):,.0f}",
        "transfer_ridge": f"{ridge_point(tgpu, f_llama):.0f}",
        "transfer_short": f"{t_short:,}",
        "transfer_long": f"{t_long:,}",
        "transfer_limit_short": f"{decode_intensity_limit(llama, t_short):.0f}",
        "transfer_limit_long": f"{decode_intensity_limit(llama, t_long):.0f}",
        "transfer_bstar_short": _b(critical_batch(tgpu, llama, t_short, f_llama)),
        "transfer_bstar_long": _b(critical_batch(tgpu, llama, t_long, f_llama)),
        "transfer_fits_short": f"{max_batch(tgpu, llama, f_llama, t_short):,}",
        "transfer_vanishing": f"{vanishing_context(tgpu, llama, f_llama):,.0f}",
        # the lab
        "vllm_max_num_seqs_default": f"{VLLM_MAX_NUM_SEQS_DEFAULT}",
        "vllm_batched_tokens_default": f"{VLLM_MAX_NUM_BATCHED_TOKENS_DEFAULT:,}",
        "lab_one_step_batch": f"{VLLM_MAX_NUM_BATCHED_TOKENS_DEFAULT // LAB_PROMPT_TOKENS}",
        "lab_short_new": f"{LAB_SHORT_NEW_TOKENS:,}",
        "lab_extra_steps": f"{LAB_NEW_TOKENS - LAB_SHORT_NEW_TOKENS:,}",
        "lab_prompt": f"{LAB_PROMPT_TOKENS:,}",
        "lab_new": f"{LAB_NEW_TOKENS:,}",
        "lab_batches": ", ".join(f"{b}" for b in LAB_BATCHES),
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
