"""Context length at which a batch's KV cache weighs as much as the model's weights.

Run it: python snippets/kv_cache/crossover.py
"""

from core.formats import BF16, checkpoint_format, resident_weight_bytes
from core.models import kv_bytes_per_token, load_model

BATCHES = (1, 8, 32, 64)


def crossover_context(weight_bytes: float, kappa_bytes: float, batch: int = 1) -> float:
    """Tokens per sequence at which kappa * S * B equals the resident weight bytes:
    S* = W_res / (kappa * B)."""
    if weight_bytes <= 0 or kappa_bytes <= 0:
        raise ValueError("weight bytes and kappa must be positive")
    if batch <= 0:
        raise ValueError(f"batch must be a positive number of sequences, got {batch}")
    return weight_bytes / (kappa_bytes * batch)


def main() -> None:
    spec = load_model("qwen2.5-7b-instruct")
    k = kv_bytes_per_token(spec)
    awq = checkpoint_format(load_model("qwen2.5-7b-instruct-awq"))
    weights = {
        "BF16 weights": resident_weight_bytes(spec, BF16),
        "AWQ weights": resident_weight_bytes(spec, awq),
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
