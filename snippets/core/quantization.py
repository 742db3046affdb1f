"""Weight formats as vLLM 0.26.0 runs them on a given GPU, and what each does to a forward pass.

core.formats says how a checkpoint stores its weights (the bytes); this module says which kernel
path a format takes on a card and what that changes in the roofline bounds:
- FP8 (quantization="fp8"): W8A8 on compute capability 8.9 or newer (Ada, Hopper), where the FP8
  tensor cores run the matmuls at twice the 16-bit peak; below 8.9 (an A100) vLLM runs the same
  8-bit weights through Marlin as weight-only W8A16, so only the bytes shrink.
- INT4 with group scales (AWQ, GPTQ): weight-only W4A16 everywhere; the matmuls run at the
  16-bit peak after the weights are dequantized, work the bounds leave out.
"""

from dataclasses import dataclass

from core.formats import BF16, FP8, WeightFormat, resident_weight_bytes, streamed_weight_bytes
from core.gpus import GPU
from core.memory import MemoryBudget
from core.models import ModelSpec
from core.roofline import Bound, critical_batch, ridge_point, tpot_bound, ttft_bound

FP8_W8A8_MIN_SM = (8, 9)  # vLLM 0.26.0: Cutlass FP8 W8A8 from sm89; Marlin W8A16 below
FP8_W8A16 = WeightFormat("FP8 W8A16", bits=8, tensor_scale_bytes=4, activation_bits=16)
# AWQ's and GPTQ's 4-bit checkpoints: a 4-bit weight, and per group of 128 an FP16 scale and a
# 4-bit zero (Qwen's AWQ checkpoint; GPTQ checkpoints store qzeros too)
INT4_G128 = WeightFormat("INT4 g128", bits=4, group_size=128, zero_point=True)
FORMATS = (BF16, FP8, INT4_G128)  # what the lessons compare, as requested; as_run_on says as run


def bits_per_weight(fmt: WeightFormat, scale_bits: int = 16) -> float:
    """Stored bits per weight of a quantized matrix whose inputs divide into whole groups:
    b + s/g (a scale per group) + b/g (a zero per group). AWQ 4-bit g128: 4 + 16/128 + 4/128."""
    if fmt.group_size is None:
        return float(fmt.bits)  # a per-tensor scale is a few bytes per matrix: under 1e-6 bit
    zero = fmt.bits if fmt.zero_point else 0
    return fmt.bits + (scale_bits + zero) / fmt.group_size


def fp8_w8a8_supported(gpu: GPU) -> bool:
    """Does vLLM run FP8 weights with FP8 activations (W8A8) on this card? sm >= 8.9."""
    if gpu.sm is None:
        raise ValueError(f"{gpu.name}: no compute_capability in gpus.toml")
    return gpu.sm >= FP8_W8A8_MIN_SM


def as_run_on(gpu: GPU, fmt: WeightFormat) -> WeightFormat:
    """The format vLLM actually runs: FP8 W8A8 falls back to weight-only W8A16 below sm 8.9."""
    if fmt.activation_bits == 8 and not fp8_w8a8_supported(gpu):
        return FP8_W8A16
    return fmt


@dataclass(frozen=True)
class FormatCost:
    """One (GPU, model, format as run): the bytes and the bounds that follow from them."""

    fmt: WeightFormat  # as run on the GPU
    resident_bytes: float  # in GPU memory
    streamed_bytes: float  # read by every forward pass
    decode: Bound  # one decode step, batch 1, at `context`
    prefill: Bound  # one prompt of `prompt_len` tokens
    ridge: float  # FLOPs per byte where the format's roofline turns compute-bound
    critical_batch_weights: float  # B*_0: weights only (context 0)
    critical_batch_context: float | None  # B* with every sequence at `context`

    @property
    def decode_tokens_per_s(self) -> float:
        return 1 / self.decode.seconds


def format_cost(
    gpu: GPU, model: ModelSpec, fmt: WeightFormat, context: int, prompt_len: int
) -> FormatCost:
    run = as_run_on(gpu, fmt)
    b0 = critical_batch(gpu, model, 0, run)
    assert b0 is not None  # with no KV the denominator is 2M' > 0
    return FormatCost(
        run,
        resident_weight_bytes(model, run),
        streamed_weight_bytes(model, run),
        tpot_bound(gpu, model, context, run),
        ttft_bound(gpu, model, prompt_len, run),
        ridge_point(gpu, run),
        b0,
        critical_batch(gpu, model, context, run),
    )


def kv_room_bytes(gpu: GPU, model: ModelSpec, fmt: WeightFormat) -> float:
    """What the engine's budget leaves for the KV cache after the weights: negative when the
    weights alone do not fit (vLLM's defaults, core.memory's assumed reserve)."""
    budget = MemoryBudget.for_gpu(gpu)
    return budget.usable_bytes - resident_weight_bytes(model, fmt) - budget.reserve_bytes
