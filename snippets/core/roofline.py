"""Roofline lower bounds for a (model, weight format, GPU, lengths, batch).

A forward pass can be no faster than its FLOPs at peak compute, nor than its bytes at peak
bandwidth: t >= max(FLOPs / peak FLOP/s, bytes / bandwidth) (Williams, Waterman and Patterson,
2009). Anything left out (attention's own FLOPs, activations, kernel launches, the scheduler) only
adds time, so every figure here is a LOWER bound, never a prediction of a measurement.
"""

from dataclasses import dataclass

from core.formats import SIXTEEN_BIT, WeightFormat, streamed_weight_bytes
from core.forward import (
    decode_bytes,
    decode_flops,
    decode_matmul_params,
    prefill_bytes,
    prefill_flops,
    require_count,
)
from core.gpus import GPU
from core.models import ModelSpec, kv_bytes_per_token, layer_matmul_params, lm_head_params


def attainable_flops(gpu: GPU, intensity: float, fmt: WeightFormat | None = None) -> float:
    """The roofline: min(peak FLOP/s for the format, intensity x bandwidth), in FLOP/s."""
    if not intensity > 0:
        raise ValueError(f"arithmetic intensity must be positive, got {intensity!r}")
    return min(compute_peak(gpu, fmt), intensity * gpu.bandwidth_bytes)


@dataclass(frozen=True)
class Bound:
    """max(compute time, memory time): the lower bound, and which of the two sets it."""

    compute_s: float
    memory_s: float

    @property
    def seconds(self) -> float:
        return max(self.compute_s, self.memory_s)

    @property
    def memory_bound(self) -> bool:
        return self.memory_s >= self.compute_s


def compute_peak(gpu: GPU, fmt: WeightFormat | None = None) -> float:
    """Peak FLOP/s for a format's matrix multiplies: the FP8 tensor cores when the format quantizes
    activations too (W8A8) and the GPU has them, the 16-bit peak otherwise (BF16, weight-only AWQ,
    FP8 weights on a GPU without FP8 tensor cores). Every FLOP of the step is counted at this peak,
    the lm_head's 16-bit ones too, so the time stays a lower bound."""
    if fmt is not None and fmt.activation_bits == 8 and gpu.fp8_dense_tflops:
        return gpu.fp8_dense_tflops * 1e12
    return gpu.peak_flops


def ridge_point(gpu: GPU, fmt: WeightFormat | None = None) -> float:
    """FLOPs per byte where the format's roofline turns compute-bound (16-bit: GPU.ridge_point)."""
    return compute_peak(gpu, fmt) / gpu.bandwidth_bytes


def bound(gpu: GPU, flops: float, nbytes: float, fmt: WeightFormat | None = None) -> Bound:
    return Bound(flops / compute_peak(gpu, fmt), nbytes / gpu.bandwidth_bytes)


def prefill_intensity(model: ModelSpec, prompt_len: int, fmt: WeightFormat | None = None) -> float:
    """FLOPs per byte of one prefill pass (batch 1)."""
    return prefill_flops(model, prompt_len) / prefill_bytes(model, prompt_len, fmt)


def decode_intensity(
    model: ModelSpec, context: int, fmt: WeightFormat | None = None, batch: int = 1
) -> float:
    """FLOPs per byte of one decode step for `batch` sequences at `context` cached tokens each."""
    return decode_flops(model, batch) / decode_bytes(model, context, fmt, batch)


def ttft_bound(
    gpu: GPU, model: ModelSpec, prompt_len: int, fmt: WeightFormat | None = None, batch: int = 1
) -> Bound:
    """TTFT >= prefill time >= max(prefill FLOPs / peak, prefill bytes / bandwidth)."""
    return bound(
        gpu,
        prefill_flops(model, prompt_len, batch),
        prefill_bytes(model, prompt_len, fmt, batch),
        fmt,
    )


def tpot_bound(
    gpu: GPU,
    model: ModelSpec,
    context: int,
    fmt: WeightFormat | None = None,
    batch: int = 1,
    *,
    kv_bytes: float = SIXTEEN_BIT,
) -> Bound:
    """TPOT >= one decode step at this context; contexts only grow, so it holds for every step.
    kv_bytes: bytes per cached value (1 with an FP8 KV cache)."""
    nbytes = decode_bytes(model, context, fmt, batch, kv_bytes=kv_bytes)
    return bound(gpu, decode_flops(model, batch), nbytes, fmt)


def e2e_bound_s(
    gpu: GPU,
    model: ModelSpec,
    prompt_len: int,
    new_tokens: int,
    fmt: WeightFormat | None = None,
    batch: int = 1,
) -> float:
    """E2E >= prefill (which emits the first token) + one decode step per further token.

    Decode step i reads the KV of the prompt and of the i - 1 tokens generated before its input.
    """
    require_count("new_tokens", new_tokens, 1)
    steps = sum(
        tpot_bound(gpu, model, prompt_len + i - 1, fmt, batch).seconds for i in range(1, new_tokens)
    )
    return ttft_bound(gpu, model, prompt_len, fmt, batch).seconds + steps


def decode_steps_bound_s(
    gpu: GPU, model: ModelSpec, prompt_len: int, new_tokens: int, fmt: WeightFormat | None = None
) -> float:
    """The decode part of E2E: the new_tokens - 1 steps after the first token (batch 1)."""
    require_count("new_tokens", new_tokens, 1)
    return e2e_bound_s(gpu, model, prompt_len, new_tokens, fmt) - (
        ttft_bound(gpu, model, prompt_len, fmt).seconds
    )


def prefill_crossover_len(gpu: GPU, model: ModelSpec, fmt: WeightFormat | None = None) -> float:
    """Prompt length from which the prefill bound is set by compute rather than bandwidth.

    Solves 2*M*S + 2*V*d = R * (W + kappa*S) for S, with R the ridge point, M the layers' matmul
    weights, V*d the lm_head, W the streamed weight bytes and kappa the KV bytes per token.
    """
    ridge, kappa = ridge_point(gpu, fmt), kv_bytes_per_token(model, SIXTEEN_BIT)
    denominator = 2 * layer_matmul_params(model) - ridge * kappa
    if denominator <= 0:
        raise ValueError(
            f"{model.name} on the {gpu.name}: the KV written per token outweighs its FLOPs at the "
            "ridge point, so prefill never becomes compute-bound"
        )
    weights = streamed_weight_bytes(model, fmt)
    return (ridge * weights - 2 * lm_head_params(model)) / denominator


def critical_batch(
    gpu: GPU,
    model: ModelSpec,
    context: int,
    fmt: WeightFormat | None = None,
    *,
    kv_bytes: float = SIXTEEN_BIT,
) -> float | None:
    """Batch size at which a decode step's compute time meets its memory time.

    Solves 2*B*M' / P = (W + B*kappa*S) / BW for B: B* = R*W / (2*M' - R*kappa*S). None when the
    KV term grows as fast as the compute, so no batch size ever makes the step compute-bound.
    kv_bytes: bytes per cached value (1 with an FP8 KV cache).
    """
    require_count("context", context, 0)
    ridge, kappa = ridge_point(gpu, fmt), kv_bytes_per_token(model, kv_bytes)
    denominator = 2 * decode_matmul_params(model) - ridge * kappa * context
    if denominator <= 0:
        return None
    return ridge * streamed_weight_bytes(model, fmt) / denominator


def decode_intensity_limit(model: ModelSpec, context: int) -> float:
    """What decode intensity approaches as the batch grows: 2*M' / (kappa * S)."""
    require_count("context", context, 1)
    return 2 * decode_matmul_params(model) / (kv_bytes_per_token(model, SIXTEEN_BIT) * context)


def bandwidth_utilization(gpu: GPU, nbytes: float, seconds: float) -> float:
    """MBU: the bytes a step must move over its measured time, as a share of peak bandwidth."""
    return nbytes / seconds / gpu.bandwidth_bytes


def flops_utilization(
    gpu: GPU, flops: float, seconds: float, fmt: WeightFormat | None = None
) -> float:
    """MFU: the FLOPs a step must do over its measured time, as a share of the peak compute the
    format's matmuls run at (compute_peak: the FP8 peak for W8A8, the 16-bit peak otherwise)."""
    return flops / seconds / compute_peak(gpu, fmt)


def step_bound(
    gpu: GPU,
    model: ModelSpec,
    *,
    prefill_tokens: int = 0,
    prefill_cached: int = 0,
    last_chunk: bool = True,
    decode_batch: int = 0,
    decode_context: int = 0,
    fmt: WeightFormat | None = None,
) -> Bound:
    """One engine step that mixes a prefill chunk with running decodes (chunked prefill).

    The chunk's `prefill_tokens` go through every layer after `prefill_cached` tokens of the same
    prompt computed by earlier steps (their KV is read, the chunk's is written); each of the
    `decode_batch` decodes adds one token and reads `decode_context` cached tokens. The weights are
    read once for the whole step. Logits: one per decode, plus one if the chunk ends its prompt.
    With only a whole prompt this is ttft_bound; with only decodes it is tpot_bound(batch=...).
    """
    require_count("prefill_tokens", prefill_tokens, 0)
    require_count("prefill_cached", prefill_cached, 0)
    require_count("decode_batch", decode_batch, 0)
    require_count("decode_context", decode_context, 0)
    if prefill_tokens + decode_batch == 0:
        raise ValueError("a step needs at least one prefill token or one decode")
    logits = decode_batch + (1 if prefill_tokens and last_chunk else 0)
    flops = (
        2 * layer_matmul_params(model) * (prefill_tokens + decode_batch)
        + 2 * lm_head_params(model) * logits
    )
    kappa = kv_bytes_per_token(model, SIXTEEN_BIT)
    kv_tokens = prefill_cached + prefill_tokens + decode_batch * decode_context
    return bound(gpu, flops, streamed_weight_bytes(model, fmt) + kappa * kv_tokens, fmt)


@dataclass(frozen=True)
class StepCost:
    """The per-token and per-step constants of step_bound for one (GPU, model, format), computed
    once: a simulator that prices many thousands of steps calls StepCost.bound for each."""

    gpu: GPU
    layer_matmul_params: int
    lm_head_params: int
    kv_bytes_per_token: int
    weight_bytes: float
    fmt: WeightFormat | None = None

    @classmethod
    def of(cls, gpu: GPU, model: ModelSpec, fmt: WeightFormat | None = None) -> "StepCost":
        return cls(
            gpu,
            layer_matmul_params(model),
            lm_head_params(model),
            kv_bytes_per_token(model, SIXTEEN_BIT),
            streamed_weight_bytes(model, fmt),
            fmt,
        )

    def bound(
        self, chunks: tuple[tuple[int, int, bool], ...] = (), decode_contexts: tuple[int, ...] = ()
    ) -> Bound:
        """step_bound generalized: each chunk is (tokens, cached, last) as step_bound's
        prefill_tokens, prefill_cached and last_chunk; each decode reads its own context. The
        weights are read once for the whole step."""
        for tokens, cached, _ in chunks:
            require_count("chunk tokens", tokens, 1)
            require_count("chunk cached", cached, 0)
        for context in decode_contexts:
            require_count("decode context", context, 0)
        if not chunks and not decode_contexts:
            raise ValueError("a step needs at least one prefill chunk or one decode")
        tokens = sum(c[0] for c in chunks) + len(decode_contexts)
        logits = len(decode_contexts) + sum(1 for c in chunks if c[2])
        flops = 2 * self.layer_matmul_params * tokens + 2 * self.lm_head_params * logits
        kv_tokens = sum(c[0] + c[1] for c in chunks) + sum(decode_contexts)
        return bound(
            self.gpu, flops, self.weight_bytes + self.kv_bytes_per_token * kv_tokens, self.fmt
        )


def batch_step_bound(
    gpu: GPU,
    model: ModelSpec,
    *,
    chunks: tuple[tuple[int, int, bool], ...] = (),
    decode_contexts: tuple[int, ...] = (),
    fmt: WeightFormat | None = None,
) -> Bound:
    """One engine step with any number of prefill chunks and decodes of different contexts."""
    return StepCost.of(gpu, model, fmt).bound(chunks, decode_contexts)


def batch_tpot_bound_s(
    gpu: GPU,
    spec: ModelSpec,
    fmt: WeightFormat,
    prompt: int,
    new: int,
    batch: int,
    after: int = 1,
) -> float:
    """Mean lower bound of a batch's decode steps that generate tokens after+1 .. new, every
    sequence in step (after=1: every step after the prefill's first token)."""
    steps = [tpot_bound(gpu, spec, prompt + i - 1, fmt, batch).seconds for i in range(after, new)]
    return sum(steps) / len(steps)
