"""FLOPs per token of Qwen2.5-7B-Instruct: the 2N rule, what it really counts, and attention.

Run it: python snippets/transformer_infra/flops_per_token.py
"""

from core.forward import attention_flops_per_token, decode_flops
from core.models import ModelSpec, load_model, params

MODEL = "qwen2.5-7b-instruct"
CONTEXTS = (1024, 4096, 8192, 32768)


def attention_equals_weights_context(spec: ModelSpec) -> float:
    """Context at which attention's FLOPs per token catch up with the weights' FLOPs."""
    return decode_flops(spec) / attention_flops_per_token(spec, 1)


def main() -> None:
    spec = load_model(MODEL)
    weights = decode_flops(spec)  # 2 FLOPs per weight that multiplies the token
    print(f"{spec.name}")
    print(f"2N                     {2 * params(spec) / 1e9:7.2f} GFLOP/token")
    print(f"2 x matmul weights     {weights / 1e9:7.2f} GFLOP/token")
    print(f"attention = weights at context {attention_equals_weights_context(spec):,.0f}\n")
    print(f"{'context':>9}{'weights':>11}{'attention':>11}{'attn/weights':>14}")
    for s in CONTEXTS:
        attention = attention_flops_per_token(spec, s)
        print(f"{s:>9,}{weights / 1e9:>11.2f}{attention / 1e9:>11.2f}{attention / weights:>14.1%}")
    print("(GFLOP per token; attention at the given number of cached tokens)")


if __name__ == "__main__":
    main()
