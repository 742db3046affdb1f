"""Context length at which a batch's KV cache weighs as much as the model's weights.

Run it: python snippets/kv_cache/crossover.py
"""

import sys
from pathlib import Path

if "__file__" in globals():  # run as a file; the site build already has snippets/ on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kv_cache.kappa import kappa
from specs.models import load_model
from transformer_infra.weight_bytes import BF16, awq_format, total_bytes

BATCHES = (1, 8, 32, 64)


def crossover_context(weight_bytes: float, kappa_bytes: float, batch: int = 1) -> float:
    """Tokens per sequence at which kappa * S * B equals the weight bytes: S* = W / (kappa * B)."""
    if weight_bytes <= 0 or kappa_bytes <= 0:
        raise ValueError("weight bytes and kappa must be positive")
    if batch <= 0:
        raise ValueError(f"batch must be a positive number of sequences, got {batch}")
    return weight_bytes / (kappa_bytes * batch)


def main() -> None:
    spec = load_model("qwen2.5-7b-instruct")
    k = kappa(spec)
    weights = {
        "BF16 weights": total_bytes(spec, BF16),
        "AWQ weights": total_bytes(spec, awq_format()),
    }
    print(f"{spec.name}: context per sequence at which KV bytes = weight bytes\n")
    print(f"{'batch':>6}" + "".join(f"{name:>15}" for name in weights))
    for b in BATCHES:
        print(
            f"{b:>6}" + "".join(f"{crossover_context(w, k, b):>15,.0f}" for w in weights.values())
        )
    print(f"(native context: {spec.max_position_embeddings:,} tokens)")


if __name__ == "__main__":
    main()
