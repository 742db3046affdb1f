"""KV bytes per token, kappa = 2 * L * n_kv * d_h * b, from each model's config.

Run it: python snippets/kv_cache/kappa.py
"""

import sys
from dataclasses import replace
from pathlib import Path

if "__file__" in globals():  # run as a file; the site build already has snippets/ on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specs.models import ModelSpec, load_model

MODELS = ("qwen2.5-7b-instruct", "llama-3.1-8b-instruct", "qwen2.5-72b-instruct")
CONTEXT = 32768  # Qwen2.5's native context (max_position_embeddings)


def kv_bytes_per_token(
    layers: int, kv_heads: int, head_dim: int, bytes_per_value: float = 2
) -> float:
    """K and V (2) for every layer, every KV head and every dimension of a head, b bytes each."""
    for name, v in {"layers": layers, "kv_heads": kv_heads, "head_dim": head_dim}.items():
        if v <= 0:
            raise ValueError(f"{name} must be a positive integer, got {v}")
    if bytes_per_value <= 0:
        raise ValueError(f"bytes_per_value must be positive, got {bytes_per_value}")
    return 2 * layers * kv_heads * head_dim * bytes_per_value


def kappa(spec: ModelSpec, bytes_per_value: float = 2) -> float:
    return kv_bytes_per_token(spec.num_layers, spec.num_kv_heads, spec.head_dim, bytes_per_value)


def as_mha(spec: ModelSpec) -> ModelSpec:
    """The same model with one KV head per query head (multi-head attention, no GQA)."""
    return replace(spec, name=f"{spec.name} as MHA", num_kv_heads=spec.num_heads)


def models() -> list[ModelSpec]:
    qwen, *others = (load_model(key) for key in MODELS)
    return [qwen, as_mha(qwen), *others]


def main() -> None:
    print(
        f"{'model':<30}{'L':>4}{'n_kv':>6}{'d_h':>5}{'kappa, B':>11}{'KiB':>6}"
        f"{f'GiB @ {CONTEXT:,}':>14}{'max context':>13}{'GiB there':>11}"
    )
    for spec in models():
        k = kappa(spec)
        print(
            f"{spec.name:<30}{spec.num_layers:>4}{spec.num_kv_heads:>6}{spec.head_dim:>5}"
            f"{k:>11,.0f}{k / 2**10:>6.0f}{k * CONTEXT / 2**30:>14.2f}"
            f"{spec.max_position_embeddings:>13,}{k * spec.max_position_embeddings / 2**30:>11.2f}"
        )
    print("(BF16/FP16 cache: b = 2 bytes per value; GiB for one sequence)")


if __name__ == "__main__":
    main()
