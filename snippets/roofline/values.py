"""Figures the roofline lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ roofline.<name> }}; coursesite.values fills them in.
Run `python snippets/roofline/values.py` to list every name and its value.
"""

from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.models import load_model
from core.roofline import attainable_flops, critical_batch, decode_intensity, prefill_intensity
from roofline.chart import DECODE_CONTEXT, GPU_KEY, MODEL_KEY, PREFILL_LENGTHS
from roofline.gemm_intensity import SHAPE, gemm_intensity, intensity_limit, tokens_to_reach


def longest_context_compute_bound(gpu, model, batch: int) -> int:
    """The longest context at which a decode step of `batch` sequences is still compute-bound (its
    critical batch, which grows with the context, is at most `batch`)."""
    fmt, context = checkpoint_format(model), 0
    while (b := critical_batch(gpu, model, context + 1, fmt)) is not None and b <= batch:
        context += 1
    return context


def values() -> dict[str, str]:
    gpus = load_gpus()
    gpu, model = gpus[GPU_KEY], load_model(MODEL_KEY)
    by_ridge = sorted(gpus.values(), key=lambda g: g.ridge_point)
    low, high = by_ridge[0], by_ridge[-1]
    h100 = gpus["h100_sxm"]
    decode_i = decode_intensity(model, DECODE_CONTEXT)
    prefill_i = {s: prefill_intensity(model, s) for s in PREFILL_LENGTHS}
    short, long_ = PREFILL_LENGTHS[1], PREFILL_LENGTHS[-1]
    decode_perf = attainable_flops(gpu, decode_i)
    d_in, d_out = SHAPE
    batch = tokens_to_reach(gpu.ridge_point, d_in, d_out)  # the self-test's batch
    return {
        # the GPU on the chart
        "gpu_name": gpu.name,
        "gpu_tflops": f"{gpu.bf16_dense_tflops:g}",
        "gpu_bandwidth_gbs": f"{gpu.memory_bandwidth_gbs:,.0f}",
        "ridge": f"{gpu.ridge_point:.0f}",
        # the table
        "gpu_count": f"{len(gpus)}",
        "lowest_ridge_name": low.name,
        "lowest_ridge": f"{low.ridge_point:.0f}",
        "highest_ridge_name": high.name,
        "highest_ridge": f"{high.ridge_point:.0f}",
        "h100_name": h100.name,
        "h100_ridge": f"{h100.ridge_point:.0f}",
        # Qwen2.5-7B-Instruct on the chart
        "model_name": model.name,
        "decode_context": f"{DECODE_CONTEXT:,}",
        "decode_intensity": f"{decode_i:.2f}",
        "decode_tflops": f"{decode_perf / 1e12:.2f}",
        "decode_peak_share": f"{decode_perf / gpu.peak_flops:.1%}",
        "shortest_prefill": f"{PREFILL_LENGTHS[0]:,}",
        "short_prefill": f"{short:,}",
        "short_prefill_intensity": f"{prefill_i[short]:.0f}",
        "long_prefill": f"{long_:,}",
        "long_prefill_intensity": f"{prefill_i[long_]:,.0f}",
        # one linear layer, T tokens at a time
        "gemm_d_in": f"{d_in:,}",
        "gemm_d_out": f"{d_out:,}",
        "gemm_one_token": f"{gemm_intensity(1, d_in, d_out):.2f}",
        "gemm_limit": f"{intensity_limit(d_in, d_out):,.0f}",
        "gemm_tokens_to_ridge": f"{tokens_to_reach(gpu.ridge_point, d_in, d_out):,}",
        "gemm_batch_context_limit": f"{longest_context_compute_bound(gpu, model, batch):,}",
        "gemm_tokens_to_ridge_low": f"{tokens_to_reach(low.ridge_point, d_in, d_out):,}",
        "gemm_tokens_to_ridge_high": f"{tokens_to_reach(high.ridge_point, d_in, d_out):,}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
