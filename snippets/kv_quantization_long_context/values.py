"""Figures the KV-quantization and long-context lesson quotes in its prose, computed here.

Pages refer to them as {{ kv_quantization_long_context.<name> }}; scripts/hooks/values.py fills
them in. Every name starts with kvq_ so that no other lesson defines it. Run
`python snippets/kv_quantization_long_context/values.py` to list every name and its value.
"""

from core.formats import checkpoint_format
from core.gpus import GIB, load_gpus
from core.links import load_link
from core.long_context import (
    attention_flops_share,
    kv_bytes_share,
    kv_reload_seconds,
    kv_tokens,
    kv_value_bytes,
    sequence_kv_bytes,
    sequences_that_fit,
    weight_offload_step_seconds,
    yarn_hf_overrides,
    yarn_max_model_len,
)
from core.models import kv_bytes_per_token, load_model
from core.roofline import critical_batch, tpot_bound, ttft_bound
from kv_quantization_long_context.lab_floors import (
    LAB_CONTEXTS,
    LAB_DTYPES,
    LAB_MODEL,
    LAB_NEW_TOKENS,
    tpot_floor_s,
)
from kv_quantization_long_context.long_context import (
    AWQ_MODEL,
    BATCH,
    MODEL,
    OFFLOAD_GIB,
    YARN_FACTOR,
    rope_theta,
)

SHORT, LONG, LONGEST = 4096, 32768, 131072
BSTAR_CONTEXT = 2048  # where an FP8 cache brings back the AWQ critical batch on the RTX 4090
QUIZ_MODEL = "llama-3.1-8b-instruct"  # the transfer question


def values() -> dict[str, str]:
    gpus = load_gpus()
    rtx, h100 = gpus["rtx_4090"], gpus["h100_sxm"]
    qwen, awq = load_model(MODEL), load_model(AWQ_MODEL)
    f_bf16, f_awq = checkpoint_format(qwen), checkpoint_format(awq)
    pcie4, pcie5 = load_link("pcie4_x16"), load_link("pcie5_x16")
    fp8 = kv_value_bytes("fp8")

    def step(s: int, dtype: str, batch: int = BATCH):
        return tpot_bound(h100, qwen, s, None, batch, kv_bytes=kv_value_bytes(dtype)).seconds

    def fit(gpu, model, fmt, s, dtype):
        return f"{sequences_that_fit(gpu, model, fmt, s, dtype):,}"

    yarn = yarn_hf_overrides(qwen, LONGEST, rope_theta(qwen))["rope_parameters"]
    b_rtx_auto = critical_batch(rtx, awq, BSTAR_CONTEXT, f_awq)
    b_rtx_fp8 = critical_batch(rtx, awq, BSTAR_CONTEXT, f_awq, kv_bytes=fp8)
    prefill_long_s = ttft_bound(rtx, qwen, LONG).seconds
    llama = load_model(QUIZ_MODEL)
    lab_model = load_model(LAB_MODEL)
    lab = {  # the lab's floors on the RTX 4090 (labs/kv_quantization_long_context/kv_fp8.py)
        f"kvq_lab_{d}_{i}_ms": f"{tpot_floor_s(rtx, lab_model, s, d) * 1e3:.2f}"
        for d in LAB_DTYPES
        for i, s in enumerate(LAB_CONTEXTS)
    }
    lab |= {f"kvq_lab_context_{i}": f"{s:,}" for i, s in enumerate(LAB_CONTEXTS)}
    lab["kvq_lab_new_tokens"] = f"{LAB_NEW_TOKENS}"
    lab["kvq_lab_shortest"] = f"{min(LAB_CONTEXTS):,}"
    lab["kvq_lab_longest"] = f"{max(LAB_CONTEXTS):,}"
    return lab | {
        "kvq_model": qwen.name,
        "kvq_rtx": rtx.name,
        "kvq_h100": h100.name,
        "kvq_kappa_fp8": f"{kv_bytes_per_token(qwen, fp8):,.0f}",
        "kvq_short": f"{SHORT:,}",
        "kvq_long": f"{LONG:,}",
        "kvq_longest": f"{LONGEST:,}",
        "kvq_seq_long_fp8_gib": f"{sequence_kv_bytes(qwen, LONG, 'fp8') / GIB:.3f}",
        "kvq_seq_longest_gib": f"{sequence_kv_bytes(qwen, LONGEST) / GIB:.2f}",
        "kvq_seq_longest_fp8_gib": f"{sequence_kv_bytes(qwen, LONGEST, 'fp8') / GIB:.2f}",
        # capacity
        "kvq_rtx_awq_tokens": f"{kv_tokens(rtx, awq, f_awq):,}",
        "kvq_rtx_awq_tokens_fp8": f"{kv_tokens(rtx, awq, f_awq, 'fp8'):,}",
        "kvq_rtx_bf16_long": fit(rtx, qwen, f_bf16, LONG, "auto"),
        "kvq_rtx_bf16_long_fp8": fit(rtx, qwen, f_bf16, LONG, "fp8"),
        "kvq_rtx_awq_long": fit(rtx, awq, f_awq, LONG, "auto"),
        "kvq_rtx_awq_long_fp8": fit(rtx, awq, f_awq, LONG, "fp8"),
        "kvq_rtx_bf16_longest": fit(rtx, qwen, f_bf16, LONGEST, "auto"),
        "kvq_rtx_bf16_longest_fp8": fit(rtx, qwen, f_bf16, LONGEST, "fp8"),
        "kvq_rtx_awq_longest": fit(rtx, awq, f_awq, LONGEST, "auto"),
        "kvq_rtx_awq_longest_fp8": fit(rtx, awq, f_awq, LONGEST, "fp8"),
        "kvq_h100_longest": fit(h100, qwen, f_bf16, LONGEST, "auto"),
        "kvq_h100_longest_fp8": fit(h100, qwen, f_bf16, LONGEST, "fp8"),
        # decode bound, H100, batch BATCH
        "kvq_batch": f"{BATCH}",
        "kvq_h100_short_ms": f"{step(SHORT, 'auto') * 1e3:.2f}",
        "kvq_h100_short_fp8_ms": f"{step(SHORT, 'fp8') * 1e3:.2f}",
        "kvq_h100_short_gain": f"{step(SHORT, 'auto') / step(SHORT, 'fp8'):.2f}",
        "kvq_h100_longest_ms": f"{step(LONGEST, 'auto') * 1e3:.2f}",
        "kvq_h100_longest_fp8_ms": f"{step(LONGEST, 'fp8') * 1e3:.2f}",
        "kvq_h100_longest_gain": f"{step(LONGEST, 'auto') / step(LONGEST, 'fp8'):.2f}",
        "kvq_h100_batch1_short_gain": f"{step(SHORT, 'auto', 1) / step(SHORT, 'fp8', 1):.3f}",
        "kvq_kv_share_short": f"{kv_bytes_share(qwen, SHORT, None, BATCH):.0%}",
        "kvq_kv_share_long": f"{kv_bytes_share(qwen, LONG, None, BATCH):.0%}",
        "kvq_kv_share_longest": f"{kv_bytes_share(qwen, LONGEST, None, BATCH):.0%}",
        # the critical batch moves too
        "kvq_bstar_context": f"{BSTAR_CONTEXT:,}",
        "kvq_rtx_awq_bstar": "—" if b_rtx_auto is None else f"{b_rtx_auto:,.0f}",
        "kvq_rtx_awq_bstar_fp8": "—" if b_rtx_fp8 is None else f"{b_rtx_fp8:,.0f}",
        # attention's share
        "kvq_attn_flops_short": f"{attention_flops_share(qwen, SHORT):.1%}",
        "kvq_attn_flops_long": f"{attention_flops_share(qwen, LONG):.1%}",
        "kvq_attn_flops_longest": f"{attention_flops_share(qwen, LONGEST):.1%}",
        "kvq_kv_bytes_long_b1": f"{kv_bytes_share(qwen, LONG):.1%}",
        "kvq_kv_bytes_longest_b1": f"{kv_bytes_share(qwen, LONGEST):.1%}",
        # YaRN
        "kvq_original_len": f"{qwen.max_position_embeddings:,}",
        "kvq_yarn_factor": f"{yarn['factor']:g}",
        "kvq_yarn_len": f"{yarn_max_model_len(qwen.max_position_embeddings, YARN_FACTOR):,}",
        # offloading
        "kvq_pcie4": pcie4.name,
        "kvq_pcie4_gbs": f"{pcie4.bandwidth_gbs:.1f}",
        "kvq_pcie5": pcie5.name,
        "kvq_reload_long_ms": f"{kv_reload_seconds(pcie4, qwen, LONG) * 1e3:.1f}",
        "kvq_reload_long_fp8_ms": f"{kv_reload_seconds(pcie4, qwen, LONG, 'fp8') * 1e3:.1f}",
        "kvq_reload_long_pcie5_ms": f"{kv_reload_seconds(pcie5, qwen, LONG) * 1e3:.1f}",
        "kvq_prefill_long_ms": f"{prefill_long_s * 1e3:,.0f}",
        "kvq_reload_vs_prefill": f"{prefill_long_s / kv_reload_seconds(pcie4, qwen, LONG):.0f}",
        "kvq_offload_gib": f"{OFFLOAD_GIB}",
        "kvq_offload_step_ms": f"{weight_offload_step_seconds(pcie4, OFFLOAD_GIB) * 1e3:.1f}",
        "kvq_rtx_floor_ms": f"{tpot_bound(rtx, qwen, 1024).seconds * 1e3:.2f}",
        # self-test transfer: Llama-3.1-8B at 128k on the H100
        "kvq_quiz_model": llama.name,
        "kvq_quiz_layers": f"{llama.num_layers}",
        "kvq_quiz_kv_heads": f"{llama.num_kv_heads}",
        "kvq_quiz_kappa_ratio": f"{kv_bytes_per_token(llama) / kv_bytes_per_token(qwen):.2f}",
        "kvq_quiz_kappa": f"{kv_bytes_per_token(llama):,.0f}",
        "kvq_quiz_seq_gib": f"{sequence_kv_bytes(llama, LONGEST) / GIB:.1f}",
        "kvq_quiz_fit": fit(h100, llama, checkpoint_format(llama), LONGEST, "auto"),
        "kvq_quiz_fit_fp8": fit(h100, llama, checkpoint_format(llama), LONGEST, "fp8"),
        "kvq_quiz_reload_ms": f"{kv_reload_seconds(pcie5, llama, LONGEST) * 1e3:.0f}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
