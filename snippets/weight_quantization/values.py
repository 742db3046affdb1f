"""Figures the weight-quantization lesson quotes in its prose, computed here (never in Markdown).

Pages refer to them as {{ weight_quantization.<name> }}; coursesite.values fills them in.
Every name starts with wq_ so that no other lesson defines it. Run
`python snippets/weight_quantization/values.py` to list every name and its value.
"""

from core.formats import BF16, FP8
from core.gpus import GIB, load_gpus
from core.models import load_model
from core.quantization import (
    FP8_W8A8_MIN_SM,
    INT4_G128,
    as_run_on,
    bits_per_weight,
    format_cost,
    kv_room_bytes,
)
from weight_quantization.accuracy import QWEN2_7B, QWEN25_7B_FP8
from weight_quantization.format_bounds import CONTEXT, MODEL, PROMPT
from weight_quantization.lab_floors import (
    LAB_BATCHES,
    LAB_DECODE_PROMPT,
    LAB_FORMATS,
    LAB_NEW_TOKENS,
    tpot_floor_s,
    ttft_floor_s,
)

TRANSFER_MODEL = "qwen2.5-72b-instruct"  # the self-test's transfer question
TRY_CONTEXT = 256  # the first exercise: a context short enough for W8A8 to get a critical batch


def _b(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def values() -> dict[str, str]:
    gpus, qwen = load_gpus(), load_model(MODEL)
    rtx, a100, h100, h200 = (gpus[k] for k in ("rtx_4090", "a100_80gb_sxm", "h100_sxm", "h200_sxm"))

    def cost(gpu, fmt):
        return format_cost(gpu, qwen, fmt, CONTEXT, PROMPT)

    r_bf16, r_fp8, r_int4 = cost(rtx, BF16), cost(rtx, FP8), cost(rtx, INT4_G128)
    a_bf16, a_fp8, a_int4 = cost(a100, BF16), cost(a100, FP8), cost(a100, INT4_G128)
    h_bf16, h_fp8 = cost(h100, BF16), cost(h100, FP8)
    q72 = load_model(TRANSFER_MODEL)
    q72_bf16 = format_cost(h100, q72, BF16, CONTEXT, PROMPT)
    q72_int4 = format_cost(h100, q72, INT4_G128, CONTEXT, PROMPT)
    v = {
        "wq_model": qwen.name,
        "wq_rtx": rtx.name,
        "wq_rtx_sm": rtx.compute_capability,
        "wq_a100": a100.name,
        "wq_a100_sm": a100.compute_capability,
        "wq_h100": h100.name,
        "wq_min_sm": ".".join(map(str, FP8_W8A8_MIN_SM)),
        "wq_context": f"{CONTEXT:,}",
        "wq_try_context": f"{TRY_CONTEXT:,}",
        "wq_prompt": f"{PROMPT:,}",
        "wq_group": f"{INT4_G128.group_size}",
        "wq_int4_bits": f"{bits_per_weight(INT4_G128):.3f}",
        "wq_a100_fp8_name": as_run_on(a100, FP8).name,
        # bytes
        "wq_bf16_gib": f"{r_bf16.resident_bytes / GIB:.2f}",
        "wq_fp8_gib": f"{r_fp8.resident_bytes / GIB:.2f}",
        "wq_int4_gib": f"{r_int4.resident_bytes / GIB:.2f}",
        "wq_bf16_read_gb": f"{r_bf16.streamed_bytes / 1e9:.2f}",
        "wq_fp8_read_gb": f"{r_fp8.streamed_bytes / 1e9:.2f}",
        "wq_int4_read_gb": f"{r_int4.streamed_bytes / 1e9:.2f}",
        "wq_int4_read_ratio": f"{r_bf16.streamed_bytes / r_int4.streamed_bytes:.2f}",
        "wq_fp8_read_ratio": f"{r_bf16.streamed_bytes / r_fp8.streamed_bytes:.2f}",
        # decode, batch 1
        "wq_rtx_bf16_tpot_ms": f"{r_bf16.decode.seconds * 1e3:.2f}",
        "wq_rtx_fp8_tpot_ms": f"{r_fp8.decode.seconds * 1e3:.2f}",
        "wq_rtx_int4_tpot_ms": f"{r_int4.decode.seconds * 1e3:.2f}",
        "wq_rtx_bf16_tps": f"{r_bf16.decode_tokens_per_s:,.0f}",
        "wq_rtx_fp8_tps": f"{r_fp8.decode_tokens_per_s:,.0f}",
        "wq_rtx_int4_tps": f"{r_int4.decode_tokens_per_s:,.0f}",
        "wq_a100_fp8_tpot_ms": f"{a_fp8.decode.seconds * 1e3:.2f}",
        # prefill
        "wq_rtx_bf16_ttft_ms": f"{r_bf16.prefill.seconds * 1e3:.1f}",
        "wq_rtx_fp8_ttft_ms": f"{r_fp8.prefill.seconds * 1e3:.1f}",
        "wq_rtx_int4_ttft_ms": f"{r_int4.prefill.seconds * 1e3:.1f}",
        "wq_a100_bf16_ttft_ms": f"{a_bf16.prefill.seconds * 1e3:.1f}",
        "wq_a100_fp8_ttft_ms": f"{a_fp8.prefill.seconds * 1e3:.1f}",
        "wq_h100_bf16_ttft_ms": f"{h_bf16.prefill.seconds * 1e3:.1f}",
        "wq_h100_fp8_ttft_ms": f"{h_fp8.prefill.seconds * 1e3:.1f}",
        # ridge and critical batch
        "wq_rtx_ridge": f"{r_bf16.ridge:.0f}",
        "wq_rtx_fp8_ridge": f"{r_fp8.ridge:.0f}",
        "wq_rtx_bf16_b0": _b(r_bf16.critical_batch_weights),
        "wq_rtx_fp8_b0": _b(r_fp8.critical_batch_weights),
        "wq_rtx_int4_b0": _b(r_int4.critical_batch_weights),
        "wq_int4_b0_ratio": f"{r_bf16.critical_batch_weights / r_int4.critical_batch_weights:.2f}",
        "wq_int4_bits_ratio": f"{16 / bits_per_weight(INT4_G128):.2f}",  # if lm_head were 4-bit too
        "wq_rtx_bf16_bstar": _b(r_bf16.critical_batch_context),
        "wq_rtx_fp8_bstar": _b(r_fp8.critical_batch_context),
        "wq_rtx_int4_bstar": _b(r_int4.critical_batch_context),
        "wq_a100_fp8_b0": _b(a_fp8.critical_batch_weights),
        "wq_a100_bf16_b0": _b(a_bf16.critical_batch_weights),
        "wq_a100_int4_bstar": _b(a_int4.critical_batch_context),
        # fits
        "wq_rtx_bf16_room_gib": f"{kv_room_bytes(rtx, qwen, BF16) / GIB:.1f}",
        "wq_rtx_fp8_room_gib": f"{kv_room_bytes(rtx, qwen, FP8) / GIB:.1f}",
        "wq_rtx_int4_room_gib": f"{kv_room_bytes(rtx, qwen, INT4_G128) / GIB:.1f}",
        "wq_q72": q72.name,
        "wq_q72_h100_fp8_room_gib": f"{kv_room_bytes(h100, q72, FP8) / GIB:.1f}",
        "wq_q72_h100_int4_room_gib": f"{kv_room_bytes(h100, q72, INT4_G128) / GIB:.1f}",
        "wq_q72_h200_fp8_room_gib": f"{kv_room_bytes(h200, q72, FP8) / GIB:.1f}",
        "wq_q72_bf16_gib": f"{q72_bf16.resident_bytes / GIB:.0f}",
        "wq_q72_h100_int4_tpot_ms": f"{q72_int4.decode.seconds * 1e3:.2f}",
        "wq_h200": h200.name,
        # published accuracy (quoted from accuracy.py)
        "wq_acc_url": QWEN2_7B.url,
        "wq_acc_read": QWEN2_7B.read_on,
        "wq_acc_model": QWEN2_7B.model,
        "wq_fp8_acc_url": QWEN25_7B_FP8.url,
        "wq_fp8_acc_read": QWEN25_7B_FP8.read_on,
        "wq_fp8_acc_released": QWEN25_7B_FP8.released_on,
        "wq_fp8_acc_bf16": f"{QWEN25_7B_FP8.scores['BF16'][0]:.2f}",
        "wq_fp8_acc_fp8": f"{QWEN25_7B_FP8.scores['FP8 dynamic'][0]:.2f}",
    }
    # the lab's floors on the RTX 4090 (labs/weight_quantization/formats.py)
    v["wq_lab_decode_prompt"] = f"{LAB_DECODE_PROMPT:,}"
    v["wq_lab_new_tokens"] = f"{LAB_NEW_TOKENS:,}"
    v["wq_lab_batched_tokens"] = f"{max(LAB_BATCHES) * LAB_DECODE_PROMPT:,}"
    for i, b in enumerate(LAB_BATCHES):
        v[f"wq_lab_batch_{i}"] = f"{b}"
    for key in LAB_FORMATS:
        for i, b in enumerate(LAB_BATCHES):
            v[f"wq_lab_{key}_tpot_{i}_ms"] = f"{tpot_floor_s(rtx, qwen, key, b) * 1e3:.2f}"
        v[f"wq_lab_{key}_ttft_ms"] = f"{ttft_floor_s(rtx, qwen, key) * 1e3:.1f}"
    base = QWEN2_7B.scores["BF16"]

    def drops(fmt: str) -> list[float]:
        return [b - s for b, s in zip(base, QWEN2_7B.scores[fmt], strict=True)]

    four_bit = drops("GPTQ-Int4") + drops("AWQ")
    v["wq_acc_int8_max_drop"] = f"{max(drops('GPTQ-Int8')):.1f}"
    v["wq_acc_int4_min_drop"] = f"{min(four_bit):.1f}"
    v["wq_acc_int4_max_drop"] = f"{max(four_bit):.1f}"
    for fmt, scores in QWEN2_7B.scores.items():
        key = fmt.lower().replace("-", "_")
        for bench, score in zip(QWEN2_7B.benchmarks, scores, strict=True):
            v[f"wq_acc_{key}_{bench.lower().replace('-', '')}"] = f"{score:.1f}"
    return v


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
