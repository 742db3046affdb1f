"""The weight-format lab's settings and the floors it is checked against (labs/weight_quantization).

The lab runs the same model in BF16, FP8 (quantized at load) and AWQ on one GPU: batches of
LAB_BATCHES requests with LAB_DECODE_PROMPT-token prompts, each decoding LAB_NEW_TOKENS tokens,
all prefilled in one step so that every decode step carries the whole batch; and single
LAB_PREFILL_PROMPT-token prompts for TTFT. Each median is checked against the bound of the
format as vLLM 0.26.0 runs it on that card (core.quantization.as_run_on): TPOT at the batch size
and the shortest context of the decode (contexts only grow), TTFT of the whole prompt.

Run it: python snippets/weight_quantization/lab_floors.py
"""

from core.formats import BF16, FP8, WeightFormat, checkpoint_format
from core.gpus import GPU, load_gpus
from core.models import ModelSpec, load_model
from core.quantization import as_run_on
from core.roofline import tpot_bound, ttft_bound
from weight_quantization.format_bounds import PROMPT

LAB_FORMATS = ("bf16", "fp8", "awq")  # as the labs name them (labkit.format_key)
LAB_BATCHES = (1, 16, 64)
LAB_DECODE_PROMPT = 128  # short: a batch of 64 prefills in one 8,192-token step
LAB_NEW_TOKENS = 64
LAB_PREFILL_PROMPT = PROMPT  # the lesson's prefill prompt, 2,048 tokens
AWQ_MODEL = "qwen2.5-7b-instruct-awq"  # the AWQ checkpoint's layout (4 bit, group 128, zeros)


def requested_format(key: str, model: ModelSpec | None = None) -> WeightFormat:
    """The core's format for a lab format name: the AWQ checkpoint's own layout for "awq"."""
    if key == "bf16":
        return BF16
    if key == "fp8":
        return FP8
    if key == "awq":
        awq = model if model is not None and model.quantization else load_model(AWQ_MODEL)
        return checkpoint_format(awq)
    raise ValueError(f"unknown lab format {key!r} (known: {', '.join(LAB_FORMATS)})")


def tpot_floor_s(gpu: GPU, model: ModelSpec, key: str, batch: int) -> float:
    """A decode step of `batch` sequences at the decode's shortest context, as run on `gpu`."""
    fmt = as_run_on(gpu, requested_format(key, model))
    return tpot_bound(gpu, model, LAB_DECODE_PROMPT, fmt, batch).seconds


def ttft_floor_s(gpu: GPU, model: ModelSpec, key: str, prompt: int = LAB_PREFILL_PROMPT) -> float:
    """The prefill of one `prompt`-token prompt, as run on `gpu`."""
    return ttft_bound(gpu, model, prompt, as_run_on(gpu, requested_format(key, model))).seconds


def main() -> None:
    gpu, model = load_gpus()["rtx_4090"], load_model("qwen2.5-7b-instruct")
    print(f"{gpu.name}, {model.name}: floors of the weight-format lab (ms)")
    head = "".join(f"{f'TPOT B={b}':>12}" for b in LAB_BATCHES)
    print(f"{'format':<8}{head}{f'TTFT {LAB_PREFILL_PROMPT}':>12}")
    for key in LAB_FORMATS:
        tpots = "".join(f"{tpot_floor_s(gpu, model, key, b) * 1e3:>12.2f}" for b in LAB_BATCHES)
        print(f"{key:<8}{tpots}{ttft_floor_s(gpu, model, key) * 1e3:>12.1f}")


if __name__ == "__main__":
    main()
