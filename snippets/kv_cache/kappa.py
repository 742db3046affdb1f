"""KV bytes per token, kappa = 2 * L * n_kv * d_h * b, from each model's config.

Run it: python snippets/kv_cache/kappa.py
"""

from core.models import ModelSpec, kv_bytes_per_token, load_model

MODELS = ("qwen2.5-7b-instruct", "llama-3.1-8b-instruct", "qwen2.5-72b-instruct")
CONTEXT = 32768  # Qwen2.5's native context (max_position_embeddings)


def models() -> list[ModelSpec]:
    """Qwen2.5-7B, the same model without GQA (one KV head per query head), and two others."""
    qwen, *others = (load_model(key) for key in MODELS)
    return [qwen, qwen.as_mha(), *others]


def main() -> None:
    print(
        f"{'model':<30}{'L':>4}{'n_kv':>6}{'d_h':>5}{'kappa, B':>11}{'KiB':>6}"
        f"{f'GiB @ {CONTEXT:,}':>14}{'max context':>13}{'GiB there':>11}"
    )
    for spec in models():
        k = kv_bytes_per_token(spec)
        print(
            f"{spec.name:<30}{spec.num_layers:>4}{spec.num_kv_heads:>6}{spec.head_dim:>5}"
            f"{k:>11,.0f}{k / 2**10:>6.0f}{k * CONTEXT / 2**30:>14.2f}"
            f"{spec.max_position_embeddings:>13,}{k * spec.max_position_embeddings / 2**30:>11.2f}"
        )
    print("(BF16/FP16 cache: b = 2 bytes per value; GiB for one sequence)")


if __name__ == "__main__":
    main()
