"""Prefill vs decode arithmetic intensity (FLOPs per byte moved), CPU-only and offline.

Run it: python snippets/prefill_decode/phase_intensity.py
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelConfig:
    name: str
    params: int  # N: total parameter count
    kv_bytes_per_token: int  # kappa = 2 * L * n_kv * d_h * b (K and V, every layer)
    weight_bytes: int = 2  # b: bytes per weight, 2 for BF16/FP16

    def __post_init__(self) -> None:
        for field in ("params", "kv_bytes_per_token", "weight_bytes"):
            if getattr(self, field) <= 0:
                raise ValueError(f"{field} must be a positive integer, got {getattr(self, field)}")


def _require_positive(name: str, value: int) -> None:
    if value <= 0:
        raise ValueError(f"{name} must be a positive number of tokens, got {value}")


def prefill_intensity(cfg: ModelConfig, prompt_len: int) -> float:
    """FLOPs per byte for one forward pass over a prompt of `prompt_len` tokens."""
    _require_positive("prompt_len", prompt_len)
    flops = 2 * cfg.params * prompt_len  # ~2N FLOPs per token, S tokens at once
    # Weights are read once and reused by all S tokens; the KV of all S tokens is written.
    bytes_moved = cfg.params * cfg.weight_bytes + cfg.kv_bytes_per_token * prompt_len
    return flops / bytes_moved


def decode_intensity(cfg: ModelConfig, context_len: int) -> float:
    """FLOPs per byte for one decode step that attends over `context_len` cached tokens."""
    _require_positive("context_len", context_len)
    flops = 2 * cfg.params  # one new token
    # Every step re-reads all weights and the whole KV cache of the context.
    bytes_moved = cfg.params * cfg.weight_bytes + cfg.kv_bytes_per_token * context_len
    return flops / bytes_moved


# The seed lesson's inputs: N rounded to 7.615e9 (exact count: the Transformer lesson);
# kappa = 2 * 28 layers * 4 KV heads * 128 head dim * 2 bytes = 57344 (the KV-cache lesson).
QWEN25_7B = ModelConfig("Qwen2.5-7B-Instruct", params=7_615_000_000, kv_bytes_per_token=57344)
LENGTHS = (128, 1024, 8192)


def main() -> None:
    for s in LENGTHS:
        print(f"prefill S={s:>5}: intensity ~= {prefill_intensity(QWEN25_7B, s):8.1f} FLOP/byte")
    for s in LENGTHS:
        print(f"decode  ctx={s:>5}: intensity ~= {decode_intensity(QWEN25_7B, s):8.2f} FLOP/byte")


if __name__ == "__main__":
    main()
