"""Figures the calibration lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ calibration.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/calibration/values.py` to list every name and its value.
"""

from calibration.reference_run import comparisons, model_of, recorded_runs
from core.formats import streamed_weight_bytes
from core.gpus import load_gpus
from core.models import kv_bytes_per_token, load_model
from core.published import FORMATS, Calibrated, calibrated, closest_published

QWEN_7B = "qwen2.5-7b-instruct"
VLLM, TRANSFORMERS = "vLLM", "Hugging Face Transformers"
LLAMA_31 = "llama-3.1-8b-instruct"
# The transfer question: a setting with no row of its own, answered by the closest published one.
FORMAT_NAMES = {"bf16": "BF16", "int8": "GPTQ-Int8", "int4": "GPTQ-Int4", "awq": "AWQ"}
LONG_INPUT = 30720  # the longest prompt of Qwen's rows within the model's 32,768 positions
# TensorRT-LLM's (input, output) settings the prose compares: short, prefill-heavy, decode-heavy
SHORT, PREFILL_HEAVY, DECODE_HEAVY = (128, 128), (2048, 128), (128, 4096)
TRANSFER = {"model": QWEN_7B, "gpu": "rtx_4090", "fmt": "AWQ", "phase": "decode"}


def pick(**fields) -> Calibrated:
    """The one row whose fields equal these (an error if none or several do)."""
    found = [c for c in calibrated() if all(getattr(c.row, k) == v for k, v in fields.items())]
    if len(found) != 1:
        raise ValueError(f"{len(found)} rows match {fields}, expected exactly one")
    return found[0]


def excess_ms(c: Calibrated) -> float:
    """Measured time per token minus the floor's, in ms: what the engine adds to the roofline."""
    return 1e3 * (1 / c.row.value - 1 / c.floor_tok_s)


def pct(share: float) -> str:
    return f"{share:.0%}"


def values() -> dict[str, str]:
    rows = calibrated()
    gpus = load_gpus()
    shares = [c.share for c in rows]
    qwen = {
        (engine, fmt, n): pick(model=QWEN_7B, engine=engine, format=fmt, input_len=n)
        for engine in (VLLM, TRANSFORMERS)
        for fmt in FORMAT_NAMES.values()
        for n in (1, LONG_INPUT)
    }
    bf16, awq = qwen[VLLM, "BF16", 1], qwen[VLLM, "AWQ", 1]
    gpt_fast = {c.row.gpus: c for c in rows if c.row.model == "llama-2-7b"}
    trt = {
        (c.row.gpu, c.row.input_len, c.row.output_len): c for c in rows if c.row.model == LLAMA_31
    }
    h100, h200 = gpus["h100_sxm"], gpus["h200_sxm"]
    long_in, long_out = 20000, 2000
    llama = load_model(LLAMA_31)
    kv_long_gb = kv_bytes_per_token(llama) * (long_in + long_out) / 1e9
    llama_fp8_gb = streamed_weight_bytes(llama, FORMATS["FP8"]) / 1e9
    transfer = closest_published(**TRANSFER)
    return {
        # the data set
        "row_count": f"{len(rows)}",
        "publisher_count": f"{len({c.row.publisher for c in rows})}",
        "share_min": pct(min(shares)),
        "share_max": pct(max(shares)),
        # the hardware as the Qwen page names it (no SXM or PCIe; the floor takes the SXM card)
        "vllm_bf16_hardware": bf16.row.hardware,
        # by format: vLLM 0.6.3, Qwen2.5-7B, one A100, a one-token prompt
        **{
            f"vllm_{short}_{kind}": text
            for short, fmt in FORMAT_NAMES.items()
            for kind, text in (
                ("share", pct(qwen[VLLM, fmt, 1].share)),
                ("excess_ms", f"{excess_ms(qwen[VLLM, fmt, 1]):.1f}"),
            )
        },
        "vllm_bf16_tok_s": f"{qwen[VLLM, 'BF16', 1].row.value:g}",
        "vllm_bf16_floor_tok_s": f"{qwen[VLLM, 'BF16', 1].floor_tok_s:.0f}",
        "vllm_awq_tok_s": f"{qwen[VLLM, 'AWQ', 1].row.value:g}",
        "vllm_awq_floor_tok_s": f"{qwen[VLLM, 'AWQ', 1].floor_tok_s:.0f}",
        "vllm_bf16_floor_ms": f"{1e3 / qwen[VLLM, 'BF16', 1].floor_tok_s:.2f}",
        "vllm_awq_floor_ms": f"{1e3 / qwen[VLLM, 'AWQ', 1].floor_tok_s:.2f}",
        "vllm_bf16_measured_ms": f"{1e3 / qwen[VLLM, 'BF16', 1].row.value:.1f}",
        "bf16_over_awq_floor": f"{awq.floor_tok_s / bf16.floor_tok_s:.1f}",
        "gpt_fast_max_gpus": f"{max(gpt_fast)}",
        # by context length
        "vllm_bf16_long_share": pct(qwen[VLLM, "BF16", LONG_INPUT].share),
        "vllm_awq_long_share": pct(qwen[VLLM, "AWQ", LONG_INPUT].share),
        "hf_bf16_share": pct(qwen[TRANSFORMERS, "BF16", 1].share),
        "hf_bf16_long_share": pct(qwen[TRANSFORMERS, "BF16", LONG_INPUT].share),
        "hf_bf16_tok_s": f"{qwen[TRANSFORMERS, 'BF16', 1].row.value:g}",
        "hf_bf16_excess_ms": f"{excess_ms(qwen[TRANSFORMERS, 'BF16', 1]):.1f}",
        "long_input": f"{LONG_INPUT:,}",
        # by engine and GPU count
        "gpt_fast_share_1": pct(gpt_fast[1].share),
        "gpt_fast_share_8": pct(gpt_fast[8].share),
        "gpt_fast_speedup_8": f"{gpt_fast[8].row.value / gpt_fast[1].row.value:.1f}",
        # under maximum load (TensorRT-LLM, Llama-3.1-8B FP8)
        "trt_short_mfu_h100": pct(trt["h100_sxm", *SHORT].share),
        "trt_prefill_mfu_h100": pct(trt["h100_sxm", *PREFILL_HEAVY].share),
        "trt_long_mfu_h100": pct(trt["h100_sxm", long_in, long_out].share),
        "trt_short_h200_over_h100": f"{_ratio(trt, *SHORT):.2f}",
        "trt_long_h200_over_h100": f"{_ratio(trt, long_in, long_out):.2f}",
        "trt_decode_h200_over_h100": f"{_ratio(trt, *DECODE_HEAVY):.2f}",
        "h200_over_h100_bandwidth": f"{h200.memory_bandwidth_gbs / h100.memory_bandwidth_gbs:.2f}",
        "h100_name": h100.name,
        "trt_model": llama.name.removesuffix("-Instruct"),
        "trt_short": f"{SHORT[0]:,}/{SHORT[1]:,}",
        "trt_short_in": f"{SHORT[0]:,}",
        "trt_short_out": f"{SHORT[1]:,}",
        "trt_prefill_in": f"{PREFILL_HEAVY[0]:,}",
        "trt_prefill_out": f"{PREFILL_HEAVY[1]:,}",
        "trt_decode": f"{DECODE_HEAVY[0]:,}/{DECODE_HEAVY[1]:,}",
        "h200_name": h200.name,
        "trt_long_in": f"{long_in:,}",
        "trt_long_out": f"{long_out:,}",
        "llama_kv_long_gb": f"{kv_long_gb:.2f}",
        "llama_fp8_weights_gb": f"{llama_fp8_gb:.1f}",
        "llama_kv_over_weights": pct(kv_long_gb / llama_fp8_gb),
        # the transfer question
        "transfer_gpu_name": gpus[TRANSFER["gpu"]].name,
        "transfer_row_engine": transfer.row.engine,
        "transfer_row_version": transfer.row.engine_version,
        "transfer_row_gpu": gpus[transfer.row.gpu].name,
        "transfer_row_share": pct(transfer.share),
        "transfer_row_input": f"{transfer.row.input_len:,}",
    } | reference_values()


def reference_values() -> dict[str, str]:
    """The course's own recorded run of the reference loop (the latest), beside its floors."""
    runs = recorded_runs()
    if not runs:
        raise ValueError("no recorded run of labs/calibration/machine_roofline.py in labs/results/")
    _, doc = runs[-1]
    rows = comparisons(doc)
    prefill = [c for c in rows if c.phase == "prefill"]
    decode = sorted((c for c in rows if c.phase == "decode"), key=lambda c: c.batch)
    first, last = decode[0], decode[-1]
    moved = first.floor.memory_s * doc["machine"]["bandwidth_gbs"] / first.measured_s
    return {
        "ref_device": doc["device"]["name"],
        "ref_cores": f"{doc['device']['cores']}",
        "ref_threads": f"{doc['parameters']['threads']}",
        "ref_model": model_of(doc).name,
        "ref_triad_gbs": f"{doc['machine']['bandwidth_gbs']:.1f}",
        "ref_matmul_gflops": f"{doc['machine']['bf16_tflops'] * 1e3:.0f}",
        "ref_prefill_share_min": pct(min(c.share for c in prefill)),
        "ref_prefill_share_max": pct(max(c.share for c in prefill)),
        "ref_decode_context": f"{first.tokens:,}",
        "ref_decode_b1_share": pct(first.share),
        "ref_decode_b1_ms": f"{first.measured_s * 1e3:.1f}",
        "ref_decode_b1_floor_ms": f"{first.floor.seconds * 1e3:.1f}",
        "ref_decode_b1_gbs": f"{moved:.1f}",
        "ref_decode_last_batch": f"{last.batch}",
        "ref_decode_last_share": pct(last.share),
    }


def _ratio(trt: dict, isl: int, osl: int) -> float:
    return trt["h200_sxm", isl, osl].row.value / trt["h100_sxm", isl, osl].row.value


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
