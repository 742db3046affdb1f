"""Figures the serving-observability lesson quotes in its prose, computed here (never typed).

Pages refer to them as {{ serving_observability.<name> }}; scripts/hooks/values.py fills them in.
Run `python snippets/serving_observability/values.py` to list every name and its value.
"""

from dataclasses import replace

from core.batch_defaults import LARGE_GPU_BYTES, batch_defaults
from core.engine import GPU_MEMORY_UTILIZATION
from core.gpus import GIB, load_gpus
from core.long_context import kv_tokens, sequence_kv_bytes
from core.roofline import tpot_bound
from serving_observability import metrics
from serving_observability.recipe import BUDGETS, WORKLOAD, recipe, speedups

# self-test: two scrapes of the prefix-cache counters, QUIZ_INTERVAL_S apart
QUIZ_INTERVAL_S = 60
QUIZ_QUERIES = 120_000
QUIZ_HITS = 90_000
QUIZ_SLO_S = 1.5  # a p99 TTFT SLO that falls inside the bucket holding the true p99
# transfer question of the self-test: the same product on an H100
XFER_GPU = "h100_sxm"
# and the same card with prompts twice as long
LONG = replace(WORKLOAD, max_prompt=2 * WORKLOAD.max_prompt)


def decision_values(prefix: str, r) -> dict[str, str]:
    by_flag = {d.flag: d for d in r.decisions}
    return {
        f"{prefix}_gpu": r.gpu.name,
        f"{prefix}_fmt": r.fmt.name,
        f"{prefix}_tp": f"{r.tp:,}",
        f"{prefix}_kv_dtype": r.kv_cache_dtype,
        f"{prefix}_kv_tokens": f"{r.kv_tokens:,}",
        f"{prefix}_fit_auto": f"{r.seqs_fit['auto']:,}",
        f"{prefix}_fit_fp8": f"{r.seqs_fit['fp8']:,}",
        f"{prefix}_tpot_batch_auto": f"{r.tpot_batch['auto']:,}",
        f"{prefix}_tpot_batch_fp8": f"{r.tpot_batch['fp8']:,}",
        f"{prefix}_seqs": f"{r.max_num_seqs:,}",
        f"{prefix}_budget": f"{r.budget:,}",
        f"{prefix}_steps": f"{r.prefill_steps:,}",
        f"{prefix}_worst_step_ms": f"{r.worst_step_s * 1e3:.0f}",
        f"{prefix}_spec": by_flag["--speculative-config"].value,
        f"{prefix}_serve_seqs": f"{batch_defaults(r.gpu, 'serve').max_num_seqs:,}",
        f"{prefix}_serve_tokens": f"{batch_defaults(r.gpu, 'serve').max_num_batched_tokens:,}",
    }


def values() -> dict[str, str]:
    gpus = load_gpus()
    r = recipe()
    w = r.workload
    model = r.model
    one, full = speedups(r)
    l40s, h100 = gpus["l40s"], gpus["h100_sxm"]
    sample = metrics.ttft_sample()
    (_, e50, b50), (_, e90, b90), (_, e99, b99) = metrics.quantile_table(sample)
    edges = metrics.TTFT_BUCKETS_S
    above = min(e for e in edges if e >= e99)
    below = max(e for e in edges if e < e99)
    counts = metrics.bucket_counts(sample)
    over_edge = 1 - counts[edges.index(above)][1] / len(sample)
    over_low_edge = 1 - counts[edges.index(below)][1] / len(sample)
    if not over_edge < 0.01 < over_low_edge:  # the answer: the stricter SLO missed, the looser met
        raise ValueError("the p99 must fall between the two edges around the self-test's SLO")
    if not (below < QUIZ_SLO_S < above and e99 < QUIZ_SLO_S < b99):
        raise ValueError("the self-test's SLO must sit between the true and the bucketed p99")
    step_fp8 = tpot_bound(r.gpu, model, w.decode_context, r.fmt, r.max_num_seqs, kv_bytes=1)
    v = {
        # the case
        "case_model": model.name,
        "case_gpu": r.gpu.name,
        "case_gpu_gb": f"{r.gpu.memory_gb:g}",
        "case_max_prompt": f"{w.max_prompt:,}",
        "case_mean_prompt": f"{w.mean_prompt:,}",
        "case_max_output": f"{w.max_output:,}",
        "case_mean_output": f"{w.mean_output}",
        "case_tpot_ms": f"{w.tpot_ms:g}",
        "case_max_model_len": f"{w.max_model_len:,}",
        "case_model_max_len": f"{model.max_position_embeddings:,}",
        "case_decode_context": f"{w.decode_context:,}",
        "seq_kv_gib": f"{sequence_kv_bytes(model, w.max_model_len) / GIB:.2f}",
        "model_len_kv_gib": f"{sequence_kv_bytes(model, model.max_position_embeddings) / GIB:.1f}",
        "model_len_seqs": f"{kv_tokens(r.gpu, model, r.fmt) // model.max_position_embeddings}",
        "kv_tokens_auto": f"{kv_tokens(r.gpu, model, r.fmt):,}",
        "step_ms_at_seqs": f"{step_fp8.seconds * 1e3:.1f}",
        "budgets": ", ".join(f"{b:,}" for b in BUDGETS),
        "spec_speedup_one": f"{one:.2f}",
        "spec_speedup_full": f"{full:.2f}",
        # server against LLM(...)
        "large_gpu_gib": f"{LARGE_GPU_BYTES / GIB:g}",
        "small_serve_tokens": f"{batch_defaults(l40s, 'serve').max_num_batched_tokens:,}",
        "small_seqs": f"{batch_defaults(l40s, 'serve').max_num_seqs}",
        "large_llm_tokens": f"{batch_defaults(h100, 'llm').max_num_batched_tokens:,}",
        "large_serve_tokens": f"{batch_defaults(h100, 'serve').max_num_batched_tokens:,}",
        "large_seqs": f"{batch_defaults(h100, 'serve').max_num_seqs:,}",
        # metrics
        "catalogue_size": f"{len(metrics.CATALOGUE)}",
        "ttft_requests": f"{metrics.TTFT_REQUESTS:,}",
        "ttft_median_ms": f"{metrics.TTFT_MEDIAN_S * 1e3:.0f}",
        "ttft_buckets": f"{len(edges)}",
        "q50_exact_ms": f"{e50 * 1e3:.0f}",
        "q50_bucket_ms": f"{b50 * 1e3:.0f}",
        "q90_exact_ms": f"{e90 * 1e3:.0f}",
        "q90_bucket_ms": f"{b90 * 1e3:.0f}",
        "q99_exact_ms": f"{e99 * 1e3:.0f}",
        "q99_bucket_ms": f"{b99 * 1e3:.0f}",
        "q99_edge_low_s": f"{below:g}",
        "q99_edge_high_s": f"{above:g}",
        "quiz_interval_s": f"{QUIZ_INTERVAL_S}",
        "quiz_queries": f"{QUIZ_QUERIES:,}",
        "quiz_hits": f"{QUIZ_HITS:,}",
        "quiz_hit_rate": f"{QUIZ_HITS / QUIZ_QUERIES:.2f}",
        "quiz_queries_per_s": f"{QUIZ_QUERIES / QUIZ_INTERVAL_S:,.0f}",
        "quiz_hits_per_s": f"{QUIZ_HITS / QUIZ_INTERVAL_S:,.0f}",
        "quiz_slo_s": f"{QUIZ_SLO_S:g}",
        "over_edge_share": f"{over_edge:.1%}",
        "over_low_edge_share": f"{over_low_edge:.1%}",
        "gpu_mem_util": f"{GPU_MEMORY_UTILIZATION:g}",
    }
    v.update(decision_values("rec", r))
    on_h100 = recipe(gpu_key=XFER_GPU)
    if on_h100.tpot_batch["fp8"] != batch_defaults(on_h100.gpu, "serve").max_num_seqs:
        raise ValueError("the H100 self-test says the TPOT search reaches the server's default")
    v.update(decision_values("h100", on_h100))
    long = recipe(w=LONG)
    v.update(
        {
            "long_max_prompt": f"{LONG.max_prompt:,}",
            "long_max_model_len": f"{LONG.max_model_len:,}",
            "long_fit": f"{long.seqs_fit[long.kv_cache_dtype]}",
            "long_seqs": f"{long.max_num_seqs}",
            "long_budget": f"{long.budget:,}",
            "long_steps": f"{long.prefill_steps}",
        }
    )
    return v


def main() -> None:
    for name, value in values().items():
        print(f"{name:<24} {value}")


if __name__ == "__main__":
    main()
