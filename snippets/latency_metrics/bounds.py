"""Roofline lower bounds on TTFT and TPOT for one request (batch 1), for every GPU in the table.

A forward pass can be no faster than its FLOPs at peak compute, nor than its bytes at peak
bandwidth: t >= max(FLOPs / peak FLOP/s, bytes / bandwidth). Anything left out (attention's own
FLOPs, activations, kernel launches, the scheduler) only adds time, so every figure is a LOWER
bound, never a prediction of what a server measures.

Run it: python snippets/latency_metrics/bounds.py
"""

import sys
from dataclasses import dataclass
from pathlib import Path

if "__file__" in globals():  # run as a file; the site build already has snippets/ on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specs import GPU, load_gpus
from specs.models import ModelSpec, load_model

BF16_MODEL = "qwen2.5-7b-instruct"
AWQ_MODEL = "qwen2.5-7b-instruct-awq"
PROMPT_LENGTHS = (128, 1024, 8192)
ACTIVATION_BYTES = 2  # BF16/FP16: unquantized weights, biases, norms and the KV cache


def _require_tokens(name: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def linear_shapes(model: ModelSpec) -> list[tuple[int, int]]:
    """(in, out) of every weight matrix of one decoder layer: q, k, v, o, gate, up, down."""
    h, q, kv, ff = (
        model.hidden_size,
        model.num_heads * model.head_dim,
        model.kv_dim,
        model.intermediate_size,
    )
    return [(h, q), (h, kv), (h, kv), (q, h), (h, ff), (h, ff), (ff, h)]


def layer_matmul_params(model: ModelSpec) -> int:
    """Weights that do a multiply-add for every token, in all decoder layers (no biases, norms)."""
    return model.num_layers * sum(k * n for k, n in linear_shapes(model))


def lm_head_params(model: ModelSpec) -> int:
    """The output projection, vocab x hidden; it is the embedding table when the two are tied."""
    return model.vocab_size * model.hidden_size


def _matrix_bytes(model: ModelSpec, k: int, n: int) -> float:
    """Bytes of one layer weight matrix as stored: 16-bit, or AWQ's packed bits, scales, zeros."""
    quant = model.quantization
    if quant is None:
        return k * n * ACTIVATION_BYTES
    if quant.get("method") != "awq":
        raise ValueError(f"{model.key}: no byte count for quantization {quant.get('method')!r}")
    bits, group = quant["bits"], quant["group_size"]
    if k % group:
        raise ValueError(f"{model.key}: input size {k} is not a multiple of group size {group}")
    groups = k // group
    zeros = groups * n * bits / 8 if quant.get("zero_point") else 0  # packed like the weights
    return k * n * bits / 8 + groups * n * ACTIVATION_BYTES + zeros  # weights + FP16 scales + zeros


def weight_bytes(model: ModelSpec) -> dict[str, float]:
    """Bytes the weights occupy, by part. Embedding and lm_head stay 16-bit under AWQ."""
    parts = model.param_breakdown()
    layers_params = parts["attention"] + parts["mlp"] + parts["norms"]
    other = layers_params - layer_matmul_params(model)  # biases and RMSNorm weights: 16-bit
    matrices = model.num_layers * sum(_matrix_bytes(model, k, n) for k, n in linear_shapes(model))
    return {
        "embedding": parts["embedding"] * ACTIVATION_BYTES,
        "layers": matrices + other * ACTIVATION_BYTES,
        "lm_head": parts["lm_head"] * ACTIVATION_BYTES,
    }


def resident_weight_bytes(model: ModelSpec) -> float:
    """Bytes the weights take in GPU memory (all of them, the embedding table included)."""
    return sum(weight_bytes(model).values())


def streamed_weight_bytes(model: ModelSpec) -> float:
    """Weight bytes one batch-1 forward pass must read: every layer and the lm_head in full,
    but only one row of the input embedding table (a lookup, not a matrix multiply)."""
    parts = weight_bytes(model)
    if model.tie_word_embeddings:  # the lm_head *is* the embedding table: read it all once
        return parts["layers"] + parts["embedding"]
    return parts["layers"] + parts["lm_head"] + model.hidden_size * ACTIVATION_BYTES


def kv_bytes(model: ModelSpec, tokens: int) -> float:
    return model.kv_bytes_per_token(ACTIVATION_BYTES) * tokens


def prefill_flops(model: ModelSpec, prompt_len: int) -> float:
    """Every prompt token goes through every layer; logits only for the last one (as vLLM does)."""
    _require_tokens("prompt_len", prompt_len, 1)
    return 2 * layer_matmul_params(model) * prompt_len + 2 * lm_head_params(model)


def prefill_bytes(model: ModelSpec, prompt_len: int) -> float:
    """The weights, read once for all prompt tokens, plus the KV cache written for each of them."""
    _require_tokens("prompt_len", prompt_len, 1)
    return streamed_weight_bytes(model) + kv_bytes(model, prompt_len)


def decode_flops(model: ModelSpec) -> float:
    """One new token through every layer and the lm_head."""
    return 2 * layer_matmul_params(model) + 2 * lm_head_params(model)


def decode_bytes(model: ModelSpec, context_len: int) -> float:
    """The weights, read again for one token, plus the KV cache of the whole context."""
    _require_tokens("context_len", context_len, 0)
    return streamed_weight_bytes(model) + kv_bytes(model, context_len)


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


def bound(gpu: GPU, flops: float, nbytes: float) -> Bound:
    return Bound(flops / gpu.peak_flops, nbytes / gpu.bandwidth_bytes)


def ttft_bound(gpu: GPU, model: ModelSpec, prompt_len: int) -> Bound:
    """TTFT >= prefill time >= max(prefill FLOPs / peak, prefill bytes / bandwidth)."""
    return bound(gpu, prefill_flops(model, prompt_len), prefill_bytes(model, prompt_len))


def tpot_bound(gpu: GPU, model: ModelSpec, context_len: int) -> Bound:
    """TPOT >= one decode step at this context; contexts only grow, so it holds for every step."""
    return bound(gpu, decode_flops(model), decode_bytes(model, context_len))


def e2e_bound_s(gpu: GPU, model: ModelSpec, prompt_len: int, new_tokens: int) -> float:
    """E2E >= prefill (which emits the first token) + one decode step per further token.

    Decode step i reads the KV of the prompt and of the i - 1 tokens generated before its input.
    """
    _require_tokens("new_tokens", new_tokens, 1)
    steps = sum(tpot_bound(gpu, model, prompt_len + i - 1).seconds for i in range(1, new_tokens))
    return ttft_bound(gpu, model, prompt_len).seconds + steps


def prefill_memory_bound_below(gpu: GPU, model: ModelSpec) -> float:
    """Prompt length below which the prefill bound is set by bandwidth, not compute.

    Solves 2*M*S + 2*V*h = R * (W + kappa*S) for S, with R the ridge point, M the layers' matmul
    weights, W the streamed weight bytes and kappa the KV bytes per token.
    """
    ridge, kappa = gpu.ridge_point, model.kv_bytes_per_token(ACTIVATION_BYTES)
    return (ridge * streamed_weight_bytes(model) - 2 * lm_head_params(model)) / (
        2 * layer_matmul_params(model) - ridge * kappa
    )


def fits(gpu: GPU, model: ModelSpec, context_len: int = 0) -> bool:
    """Do the weights and the KV cache of `context_len` tokens fit in the GPU's memory at all?

    memory_gb is read as 1e9 bytes, the stricter reading (chips hold GiB): a fit holds both ways.
    """
    return resident_weight_bytes(model) + kv_bytes(model, context_len) <= gpu.memory_gb * 1e9


def ms(seconds: float) -> str:
    """Milliseconds with three significant figures."""
    value = seconds * 1e3
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def bounds_table(model: ModelSpec, gpus: dict[str, GPU], lengths=PROMPT_LENGTHS) -> list[str]:
    """A Markdown table: TTFT and TPOT lower bounds (ms) per GPU at each prompt length."""
    for s in lengths:
        _require_tokens("prompt length", s, 1)
    longest = max(lengths)
    head = ["GPU", f"fits (+KV {longest:,})"]
    head += [f"TTFT ≥ S={s:,}" for s in lengths] + [f"TPOT ≥ S={s:,}" for s in lengths]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * 2 * len(lengths)]
    for gpu in gpus.values():
        ttft = [ttft_bound(gpu, model, s) for s in lengths]
        cells = [gpu.name, f"{'✓' if fits(gpu, model, longest) else '✗'} {gpu.memory_gb:g} GB"]
        cells += [ms(b.seconds) + (" †" if b.memory_bound else "") for b in ttft]
        cells += [ms(tpot_bound(gpu, model, s).seconds) for s in lengths]
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    gpus = load_gpus()
    for key in (BF16_MODEL, AWQ_MODEL):
        model = load_model(key)
        print(
            f"{model.name}: weights {resident_weight_bytes(model) / 1e9:.2f} GB, "
            f"read per decode step {streamed_weight_bytes(model) / 1e9:.2f} GB\n"
        )
        print("\n".join(bounds_table(model, gpus)) + "\n")
    print("All times in ms, batch 1. † the memory term is the larger one (memory-bound prefill).")


if __name__ == "__main__":
    main()
