"""Figures the latency-metrics lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ latency_metrics.<name> }}; coursesite.values fills them in.
Run `python snippets/latency_metrics/values.py` to list every name and its value.
"""

from core.display import ms
from core.formats import resident_weight_bytes, streamed_weight_bytes, weight_bytes_by_part
from core.forward import decode_flops
from core.gpus import GIB, load_gpus
from core.memory import fits
from core.models import load_model
from core.reference import (
    AWQ_MODEL,
    BF16_MODEL,
    GPT_FAST_BANDWIDTH_GBS,
    GPT_FAST_TOK_S,
    PROMPT_LENGTHS,
    QWEN_BENCH_AWQ_TOK_S,
    QWEN_BENCH_BF16_TOK_S,
    QWEN_BENCH_GPU,
    QWEN_BENCH_NEW_TOKENS,
)
from core.roofline import (
    bandwidth_utilization,
    e2e_bound_s,
    prefill_crossover_len,
    tpot_bound,
    ttft_bound,
)
from latency_metrics.metrics import (
    TOY_SLO_MS,
    TRACE,
    goodput,
    meets_slos,
    summarize,
    total_to_output_ratio,
)
from latency_metrics.published import bound_per_token_s, implied_bandwidth_gbs, mean_step_bytes

# The worked example (section 3 and self-test): a prompt of this many tokens, this many new tokens.
EXAMPLE_PROMPT = 1024
EXAMPLE_NEW_TOKENS = 256

# Self-test question 1: a request's measured TTFT and E2E, and how many tokens it produced.
QUIZ_TTFT_S = 0.2
QUIZ_E2E_S = 2.2
QUIZ_TOKENS = 101

# `vllm bench serve`'s default dataset is "random" with --random-input-len 1024 and
# --random-output-len 128 (vLLM 0.26.0, vllm/benchmarks/datasets/datasets.py, RandomDataset).
BENCH_RANDOM_INPUT_LEN = 1024
BENCH_RANDOM_OUTPUT_LEN = 128
# A generation-heavy workload for contrast: a short instruction, a long answer.
LONG_ANSWER_INPUT_LEN = 128
LONG_ANSWER_OUTPUT_LEN = 1024


def mbu(model_key: str, tok_s: float) -> float:
    """Model bandwidth utilization of the published benchmark: bytes per step x steps/s / peak."""
    a100 = load_gpus()[QWEN_BENCH_GPU]
    return bandwidth_utilization(a100, mean_step_bytes(model_key), 1 / tok_s)


def values() -> dict[str, str]:
    gpus = load_gpus()
    bf16, awq = load_model(BF16_MODEL), load_model(AWQ_MODEL)
    rtx, h100, h20, a100 = gpus["rtx_4090"], gpus["h100_sxm"], gpus["h20"], gpus[QWEN_BENCH_GPU]
    shortest, middle, longest = PROMPT_LENGTHS
    if not all(fits(g, bf16, longest) for g in gpus.values()):
        raise ValueError("a GPU no longer holds the BF16 weights: the lesson's prose says all do")
    parts = weight_bytes_by_part(bf16)
    tpot_4090 = tpot_bound(rtx, bf16, shortest).seconds
    tpot_4090_awq = tpot_bound(rtx, awq, shortest).seconds
    example_ttft = ttft_bound(rtx, bf16, EXAMPLE_PROMPT).seconds
    example_e2e = e2e_bound_s(rtx, bf16, EXAMPLE_PROMPT, EXAMPLE_NEW_TOKENS)
    example_tpot = (example_e2e - example_ttft) / (EXAMPLE_NEW_TOKENS - 1)
    example_awq_decode = (
        e2e_bound_s(rtx, awq, EXAMPLE_PROMPT, EXAMPLE_NEW_TOKENS)
        - ttft_bound(rtx, awq, EXAMPLE_PROMPT).seconds
    )
    h20_long = ttft_bound(h20, bf16, longest).seconds
    trace = {r.name: r for r in TRACE}
    run = summarize(TRACE)
    bf16_floor = bound_per_token_s(BF16_MODEL)
    bf16_bw = implied_bandwidth_gbs(BF16_MODEL, QWEN_BENCH_BF16_TOK_S)
    prompts = sum(r.prompt_tokens for r in TRACE)
    outputs = sum(r.output_tokens for r in TRACE)
    random_ratio = total_to_output_ratio(BENCH_RANDOM_INPUT_LEN, BENCH_RANDOM_OUTPUT_LEN)
    long_answer_ratio = total_to_output_ratio(LONG_ANSWER_INPUT_LEN, LONG_ANSWER_OUTPUT_LEN)
    at_gpt_fast = mean_step_bytes(BF16_MODEL) / (GPT_FAST_BANDWIDTH_GBS * 1e9)
    smallest = min(gpus.values(), key=lambda g: g.memory_bytes)  # what `fits` compares with
    return {
        # the table
        "gpu_count": f"{len(gpus)}",
        "min_memory_card": smallest.name,
        "min_memory_gb": f"{smallest.memory_gb:g}",
        "min_memory_gib": f"{smallest.memory_bytes / GIB:.2f}",
        "shortest_len": f"{shortest:,}",
        "middle_len": f"{middle:,}",
        "longest_len": f"{longest:,}",
        # bytes of Qwen2.5-7B-Instruct
        "weights_bf16_gb": f"{resident_weight_bytes(bf16) / 1e9:.2f}",
        "weights_awq_gb": f"{resident_weight_bytes(awq) / 1e9:.2f}",
        "step_bf16_gb": f"{streamed_weight_bytes(bf16) / 1e9:.2f}",
        "step_awq_gb": f"{streamed_weight_bytes(awq) / 1e9:.2f}",
        "embedding_gb": f"{parts['embedding'] / 1e9:.2f}",
        "lm_head_gb": f"{parts['lm_head'] / 1e9:.2f}",
        "decode_gflop": f"{decode_flops(bf16) / 1e9:.1f}",
        # the RTX 4090
        "rtx_name": rtx.name,
        "rtx_bandwidth_gbs": f"{rtx.memory_bandwidth_gbs:,.0f}",
        "tpot_4090_ms": ms(tpot_4090),
        "ceiling_4090_tok_s": f"{1 / tpot_4090:.0f}",
        "tpot_4090_awq_ms": ms(tpot_4090_awq),
        "awq_speedup": f"{tpot_4090 / tpot_4090_awq:.1f}",
        "ttft_4090_short_ms": ms(ttft_bound(rtx, bf16, shortest).seconds),
        "ttft_4090_middle_ms": ms(ttft_bound(rtx, bf16, middle).seconds),
        "ttft_4090_long_ms": ms(ttft_bound(rtx, bf16, longest).seconds),
        "prefill_memory_bound_below": f"{prefill_crossover_len(rtx, bf16):.0f}",
        # fewer weight bytes: the prompt's FLOPs outweigh them sooner
        "prefill_memory_bound_below_awq": f"{prefill_crossover_len(rtx, awq):.0f}",
        # H20 against H100: bandwidth buys TPOT, compute buys TTFT
        "h20_name": h20.name,
        "h100_name": h100.name,
        "h20_tpot_ms": ms(tpot_bound(h20, bf16, shortest).seconds),
        "h100_tpot_ms": ms(tpot_bound(h100, bf16, shortest).seconds),
        "h20_ttft_long_ms": ms(h20_long),
        "h100_ttft_long_ms": ms(ttft_bound(h100, bf16, longest).seconds),
        "h20_ttft_ratio": f"{h20_long / ttft_bound(h100, bf16, longest).seconds:.1f}",
        # the worked example on the RTX 4090
        "example_prompt": f"{EXAMPLE_PROMPT:,}",
        "example_new_tokens": f"{EXAMPLE_NEW_TOKENS:,}",
        "example_steps": f"{EXAMPLE_NEW_TOKENS - 1:,}",
        "example_ttft_ms": ms(example_ttft),
        "example_mean_tpot_ms": ms(example_tpot),
        "example_e2e_s": f"{example_e2e:.2f}",
        # the decode part of the bound, BF16 over AWQ: the weights' ratio, less the KV both read
        "example_awq_decode_ratio": f"{(example_e2e - example_ttft) / example_awq_decode:.1f}",
        "example_tok_s": f"{EXAMPLE_NEW_TOKENS / example_e2e:.0f}",
        # self-test question 1: TPOT from TTFT and E2E
        "quiz_ttft_ms": f"{QUIZ_TTFT_S * 1e3:.0f}",
        "quiz_e2e_s": f"{QUIZ_E2E_S:g}",
        "quiz_tokens": f"{QUIZ_TOKENS}",
        "quiz_steps": f"{QUIZ_TOKENS - 1}",
        "quiz_tpot_ms": f"{(QUIZ_E2E_S - QUIZ_TTFT_S) / (QUIZ_TOKENS - 1) * 1e3:.0f}",
        # the toy trace
        "toy_b_tpot_ms": f"{trace['B'].tpot_s * 1e3:.1f}",
        "toy_b_max_itl_ms": f"{max(trace['B'].itl_s) * 1e3:.0f}",
        "toy_gap_ms": f"{min(trace['A'].itl_s) * 1e3:.0f}",
        "toy_c_tpot_ms": f"{trace['C'].tpot_s * 1e3:.1f}",
        "toy_mean_tpot_ms": f"{run['mean_tpot_s'] * 1e3:.1f}",
        "toy_mean_itl_ms": f"{run['mean_itl_s'] * 1e3:.1f}",
        "toy_median_itl_ms": f"{run['median_itl_s'] * 1e3:.1f}",
        "toy_p99_itl_ms": f"{run['p99_itl_s'] * 1e3:.1f}",
        "toy_output_tok_s": f"{run['output_throughput']:.0f}",
        "toy_total_tok_s": f"{run['total_token_throughput']:,.0f}",
        "toy_total_ratio": f"{total_to_output_ratio(prompts, outputs):.0f}",
        "toy_request_per_s": f"{run['request_throughput']:.2f}",
        "toy_slo_ttft_ms": f"{TOY_SLO_MS['ttft']:g}",
        "toy_slo_tpot_ms": f"{TOY_SLO_MS['tpot']:g}",
        "toy_good_requests": f"{sum(meets_slos(r, TOY_SLO_MS) for r in TRACE)}",
        "toy_requests": f"{len(TRACE)}",
        "toy_goodput_req_s": f"{goodput(TRACE, TOY_SLO_MS):.2f}",
        # total token throughput against output throughput, for stated workloads
        "random_input_len": f"{BENCH_RANDOM_INPUT_LEN:,}",
        "random_output_len": f"{BENCH_RANDOM_OUTPUT_LEN:,}",
        "random_total_ratio": f"{random_ratio:g}",
        "long_answer_input_len": f"{LONG_ANSWER_INPUT_LEN:,}",
        "long_answer_output_len": f"{LONG_ANSWER_OUTPUT_LEN:,}",
        "long_answer_total_ratio": f"{long_answer_ratio:.1f}",
        # published measurements against the bound (A100 80GB, batch 1)
        "a100_name": a100.name,
        "a100_bandwidth_gbs": f"{a100.memory_bandwidth_gbs:,.0f}",
        "bench_new_tokens": f"{QWEN_BENCH_NEW_TOKENS:,}",
        "bench_bf16_tok_s": f"{QWEN_BENCH_BF16_TOK_S:.2f}",
        "bench_awq_tok_s": f"{QWEN_BENCH_AWQ_TOK_S:.2f}",
        "gpt_fast_tok_s": f"{GPT_FAST_TOK_S:g}",
        "gpt_fast_bandwidth_gbs": f"{GPT_FAST_BANDWIDTH_GBS:,.0f}",
        "bench_bf16_ms": f"{1e3 / QWEN_BENCH_BF16_TOK_S:.2f}",
        "bench_bf16_bound_ms": f"{bf16_floor * 1e3:.2f}",
        "bench_bf16_ratio": f"{1 / QWEN_BENCH_BF16_TOK_S / bf16_floor:.2f}",
        "bench_bf16_bandwidth_gbs": f"{bf16_bw:,.0f}",
        "bench_bf16_bandwidth_share": f"{mbu(BF16_MODEL, QWEN_BENCH_BF16_TOK_S):.0%}",
        "bench_awq_bandwidth_share": f"{mbu(AWQ_MODEL, QWEN_BENCH_AWQ_TOK_S):.0%}",
        "bench_awq_ratio": f"{1 / QWEN_BENCH_AWQ_TOK_S / bound_per_token_s(AWQ_MODEL):.2f}",
        "bench_awq_speedup": f"{QWEN_BENCH_AWQ_TOK_S / QWEN_BENCH_BF16_TOK_S:.2f}",
        "gpt_fast_share": f"{GPT_FAST_BANDWIDTH_GBS / a100.memory_bandwidth_gbs:.0%}",
        "qwen_at_gpt_fast_ms": f"{at_gpt_fast * 1e3:.2f}",
        "qwen_at_gpt_fast_tok_s": f"{1 / at_gpt_fast:.0f}",
        "qwen_at_gpt_fast_ratio": f"{at_gpt_fast / bf16_floor:.2f}",
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
