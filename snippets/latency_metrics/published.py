"""Published batch-1 decode measurements set against this lesson's lower bound (what to expect).

The measurements are other people's (cited on the page); only the bounds are computed here.
Run it: python snippets/latency_metrics/published.py
"""

from core.forward import decode_bytes
from core.gpus import load_gpus
from core.models import load_model
from core.reference import (  # the measurements and the Qwen2.5 benchmark's setting
    AWQ_MODEL,
    BF16_MODEL,
    GPT_FAST_BANDWIDTH_GBS,
    GPT_FAST_TOK_S,
    QWEN_BENCH_AWQ_TOK_S,
    QWEN_BENCH_BF16_TOK_S,
    QWEN_BENCH_GPU,
    QWEN_BENCH_INPUT_LEN,
    QWEN_BENCH_NEW_TOKENS,
)
from core.roofline import bandwidth_utilization, e2e_bound_s


def bound_per_token_s(model_key: str) -> float:
    """Lower bound on the benchmark's average time per generated token (prefill included)."""
    gpu, model = load_gpus()[QWEN_BENCH_GPU], load_model(model_key)
    total = e2e_bound_s(gpu, model, QWEN_BENCH_INPUT_LEN, QWEN_BENCH_NEW_TOKENS)
    return total / QWEN_BENCH_NEW_TOKENS


def mean_step_bytes(model_key: str) -> float:
    """Bytes an average decode step of the benchmark reads (context from 1 to 2048 tokens)."""
    model = load_model(model_key)
    contexts = range(QWEN_BENCH_INPUT_LEN, QWEN_BENCH_INPUT_LEN + QWEN_BENCH_NEW_TOKENS)
    return sum(decode_bytes(model, c) for c in contexts) / len(contexts)


def implied_bandwidth_gbs(model_key: str, tok_s: float) -> float:
    """The bandwidth a run would need to move each step's bytes at the measured speed."""
    return mean_step_bytes(model_key) * tok_s / 1e9


def main() -> None:
    a100 = load_gpus()[QWEN_BENCH_GPU]
    print(
        f"Qwen2.5 speed benchmark: {a100.name}, vLLM 0.6.3, batch 1, "
        f"{QWEN_BENCH_INPUT_LEN} prompt token, {QWEN_BENCH_NEW_TOKENS} new tokens"
    )
    columns = f"{'tok/s':>8}{'ms/token':>10}{'bound ms':>10}{'ratio':>7}{'implied GB/s (MBU)':>20}"
    print(f"{'weights':<8}{columns}")
    for label, key, tok_s in (
        ("BF16", BF16_MODEL, QWEN_BENCH_BF16_TOK_S),
        ("AWQ", AWQ_MODEL, QWEN_BENCH_AWQ_TOK_S),
    ):
        floor = bound_per_token_s(key)
        bw = implied_bandwidth_gbs(key, tok_s)
        mbu = bandwidth_utilization(a100, mean_step_bytes(key), 1 / tok_s)
        print(
            f"{label:<8}{tok_s:>8.2f}{1e3 / tok_s:>10.2f}{floor * 1e3:>10.2f}"
            f"{1 / tok_s / floor:>6.2f}x{bw:>13,.0f} ({mbu:.0%})"
        )
    qwen_at_gpt_fast = mean_step_bytes(BF16_MODEL) / (GPT_FAST_BANDWIDTH_GBS * 1e9)
    share = GPT_FAST_BANDWIDTH_GBS / a100.memory_bandwidth_gbs
    print(
        f"\ngpt-fast, Llama-2-7B BF16, A100 80GB at 330 W: {GPT_FAST_TOK_S:g} tok/s, "
        f"{GPT_FAST_BANDWIDTH_GBS:,.0f} GB/s effective "
        f"({share:.0%} of {a100.memory_bandwidth_gbs:,.0f})"
    )
    print(
        f"Qwen2.5-7B BF16 at that bandwidth: {qwen_at_gpt_fast * 1e3:.2f} ms/token "
        f"({1 / qwen_at_gpt_fast:.0f} tok/s)"
    )


if __name__ == "__main__":
    main()
