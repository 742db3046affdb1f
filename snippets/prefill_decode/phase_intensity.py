"""Prefill vs decode arithmetic intensity (FLOPs per byte moved), CPU-only and offline.

The simple model this lesson teaches: ~2N FLOPs per token, the weights (N * b bytes) read once per
forward pass, kappa bytes of KV per token. N and kappa come from the course's core, computed from
Qwen2.5-7B-Instruct's config.json. Run it: python snippets/prefill_decode/phase_intensity.py
"""

from core.models import ModelSpec, kv_bytes_per_token, load_model, params

MODEL = load_model("qwen2.5-7b-instruct")
BYTES_PER_WEIGHT = 2  # b: BF16/FP16
LENGTHS = (128, 1024, 8192)


def _require_positive(name: str, value: int) -> None:
    if value <= 0:
        raise ValueError(f"{name} must be a positive number of tokens, got {value}")


def prefill_intensity(model: ModelSpec, prompt_len: int, b: int = BYTES_PER_WEIGHT) -> float:
    """FLOPs per byte for one forward pass over a prompt of `prompt_len` tokens."""
    _require_positive("prompt_len", prompt_len)
    n, kappa = params(model), kv_bytes_per_token(model)
    flops = 2 * n * prompt_len  # ~2N FLOPs per token, S tokens at once
    # Weights are read once and reused by all S tokens; the KV of all S tokens is written.
    bytes_moved = n * b + kappa * prompt_len
    return flops / bytes_moved


def decode_intensity(model: ModelSpec, context_len: int, b: int = BYTES_PER_WEIGHT) -> float:
    """FLOPs per byte for one decode step that attends over `context_len` cached tokens."""
    _require_positive("context_len", context_len)
    n, kappa = params(model), kv_bytes_per_token(model)
    flops = 2 * n  # one new token
    # Every step re-reads all weights and the whole KV cache of the context.
    bytes_moved = n * b + kappa * context_len
    return flops / bytes_moved


def main() -> None:
    for s in LENGTHS:
        print(f"prefill S={s:>5}: intensity ~= {prefill_intensity(MODEL, s):8.1f} FLOP/byte")
    for s in LENGTHS:
        print(f"decode  ctx={s:>5}: intensity ~= {decode_intensity(MODEL, s):8.2f} FLOP/byte")


if __name__ == "__main__":
    main()
