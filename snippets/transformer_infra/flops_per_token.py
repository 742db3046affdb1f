"""FLOPs per token of Qwen2.5-7B-Instruct: the 2N rule, what it really counts, and attention.

Run it: python snippets/transformer_infra/flops_per_token.py
"""

import sys
from pathlib import Path

if "__file__" in globals():  # run as a file; the site build already has snippets/ on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from specs.models import ModelSpec, load_model

MODEL = "qwen2.5-7b-instruct"
CONTEXTS = (1024, 4096, 8192, 32768)


def matmul_weights(spec: ModelSpec) -> int:
    """Weights that multiply every token: the layers' 7 matrices and the lm_head.

    Left out: the input embedding (a row lookup, no arithmetic), biases and norm scales (one
    add or multiply per element, not a multiply-add per weight per input).
    """
    h, kv, ff, q = (
        spec.hidden_size,
        spec.kv_dim,
        spec.intermediate_size,
        spec.num_heads * spec.head_dim,
    )
    per_layer = h * q + 2 * h * kv + q * h + 3 * h * ff
    return spec.num_layers * per_layer + spec.vocab_size * h


def weight_flops_per_token(spec: ModelSpec) -> int:
    """One multiply and one add per weight that multiplies the token: 2 FLOPs each."""
    return 2 * matmul_weights(spec)


def attention_flops_per_token(spec: ModelSpec, context: int) -> int:
    """Q.K^T over `context` cached tokens, then the weighted sum of V: 2 * 2 * d each, per layer.

    d = query heads * head dim: every query head scores every cached key, even when several heads
    share one KV head (GQA changes the bytes, not these FLOPs).
    """
    if context <= 0:
        raise ValueError(f"context must be a positive number of tokens, got {context}")
    return 4 * spec.num_layers * context * spec.num_heads * spec.head_dim


def attention_equals_weights_context(spec: ModelSpec) -> float:
    """Context at which attention's FLOPs per token catch up with the weights' FLOPs."""
    return weight_flops_per_token(spec) / attention_flops_per_token(spec, 1)


def main() -> None:
    spec = load_model(MODEL)
    weights = weight_flops_per_token(spec)
    print(f"{spec.name}")
    print(f"2N                     {2 * spec.params / 1e9:7.2f} GFLOP/token")
    print(f"2 x matmul weights     {weights / 1e9:7.2f} GFLOP/token")
    print(f"attention = weights at context {attention_equals_weights_context(spec):,.0f}\n")
    print(f"{'context':>9}{'weights':>11}{'attention':>11}{'attn/weights':>14}")
    for s in CONTEXTS:
        attention = attention_flops_per_token(spec, s)
        print(f"{s:>9,}{weights / 1e9:>11.2f}{attention / 1e9:>11.2f}{attention / weights:>14.1%}")
    print("(GFLOP per token; attention at the given number of cached tokens)")


if __name__ == "__main__":
    main()
