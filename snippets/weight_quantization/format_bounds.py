"""BF16, FP8 and INT4 (AWQ/GPTQ g128) weights as vLLM 0.26.0 runs them: bytes and bounds per card.

For each format: the bits per weight, the weights resident in memory and read by every forward
pass, the batch-1 decode floor, the prefill floor, the ridge point and the critical batch. FP8 is
W8A8 (FP8 tensor cores, twice the 16-bit peak) from compute capability 8.9 and weight-only W8A16
below it; INT4 is weight-only W4A16 everywhere. Every quantity comes from the course's core
(core.quantization, core.roofline, core.formats); this file only lays them out. Times are lower
bounds: dequantization, attention's own FLOPs and the scheduler only add time.

Run it: python snippets/weight_quantization/format_bounds.py
"""

from core.formats import WeightFormat
from core.gpus import GIB, GPU, load_gpus
from core.models import ModelSpec, load_model
from core.quantization import FORMATS, as_run_on, bits_per_weight, format_cost, kv_room_bytes

MODEL = "qwen2.5-7b-instruct"
GPU_KEYS = ("rtx_4090", "a100_80gb_sxm", "h100_sxm")
CONTEXT = 1024  # tokens cached per sequence in a decode step (the batching lessons' context)
PROMPT = 2048  # tokens of one prompt for the prefill floor
FIT_MODELS = ("qwen2.5-7b-instruct", "llama-3.1-8b-instruct", "qwen2.5-72b-instruct")
FIT_GPUS = ("rtx_4090", "l40s", "a100_80gb_sxm", "h100_sxm", "h200_sxm")


def short(fmt: WeightFormat) -> str:
    return fmt.name.split(" ")[0]


def format_table(gpu: GPU, model: ModelSpec) -> list[str]:
    lines = [
        f"{gpu.name} (sm {gpu.compute_capability}), {model.name}: decode at context {CONTEXT:,}, "
        f"prefill of {PROMPT:,} tokens",
        f"{'format as run':<14}{'bits/w':>7}{'resident GiB':>13}{'read GB':>8}{'TPOT >= ms':>11}"
        f"{'tok/s <=':>9}{'TTFT >= ms':>11}{'ridge':>6}{'B*0':>5}{'B*':>6}",
    ]
    for fmt in FORMATS:
        c = format_cost(gpu, model, fmt, CONTEXT, PROMPT)
        b_star = "-" if c.critical_batch_context is None else f"{c.critical_batch_context:,.0f}"
        lines.append(
            f"{c.fmt.name:<14}{bits_per_weight(c.fmt):>7.3f}{c.resident_bytes / GIB:>13.2f}"
            f"{c.streamed_bytes / 1e9:>8.2f}{c.decode.seconds * 1e3:>11.2f}"
            f"{c.decode_tokens_per_s:>9,.0f}{c.prefill.seconds * 1e3:>11.1f}{c.ridge:>6.0f}"
            f"{c.critical_batch_weights:>5.0f}{b_star:>6}"
        )
    return lines


def fit_table() -> list[str]:
    """GiB the engine's budget leaves for KV after the weights; '-': the weights do not fit."""
    gpus, models = load_gpus(), [load_model(k) for k in FIT_MODELS]
    head = f"{'model, format':<34}" + "".join(f"{gpus[k].name:>14}" for k in FIT_GPUS)
    lines = ["KV room after the weights (GiB, vLLM defaults); '-': the weights do not fit", head]
    for model in models:
        for fmt in FORMATS:
            cells = []
            for key in FIT_GPUS:
                room = kv_room_bytes(gpus[key], model, as_run_on(gpus[key], fmt))
                cells.append(f"{room / GIB:>14.1f}" if room > 0 else f"{'-':>14}")
            lines.append(f"{model.name + ', ' + short(fmt):<34}" + "".join(cells))
    return lines


def main() -> None:
    gpus, model = load_gpus(), load_model(MODEL)
    for key in GPU_KEYS:
        print("\n".join(format_table(gpus[key], model)))
        print()
    print("\n".join(fit_table()))


if __name__ == "__main__":
    main()
