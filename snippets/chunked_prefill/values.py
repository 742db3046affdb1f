"""Figures the chunked-prefill lesson quotes in its prose, computed here (never typed).

Pages refer to them as {{ chunked_prefill.<name> }}; coursesite.values fills them in.
Run `python snippets/chunked_prefill/values.py` to list every name and its value.
"""

import functools

from chunked_prefill import budget, itl_sim, preemption
from core.batch_defaults import batch_defaults
from core.display import ms_tenths
from core.formats import checkpoint_format
from core.gpus import load_gpus
from core.models import load_model

QUIZ_PROMPT, QUIZ_BUDGET, QUIZ_DECODES = 10000, 1024, 24
XFER_GPU, XFER_MODEL, XFER_BUDGET = "h100_sxm", "qwen2.5-7b-instruct", 2048


@functools.cache  # the simulator runs once per build
def values() -> dict[str, str]:
    gpu, model, fmt = budget.course_setup()
    alone = budget.decode_step_s(gpu, model, fmt, budget.DECODES, budget.CONTEXT)
    v = {
        "gpu": gpu.name,
        "model": model.name,
        "format": fmt.name,
        "scene_prompt": f"{budget.PROMPT:,}",
        "scene_decodes": f"{budget.DECODES}",
        "scene_context": f"{budget.CONTEXT:,}",
        "default_budget": f"{budget.LLM_DEFAULT_BUDGET:,}",
        "alone_ms": ms_tenths(alone),
    }
    for t in budget.BUDGETS:
        p = budget.plan(gpu, model, fmt, t)
        v[f"budget_{t}"] = f"{t:,}"
        v[f"steps_{t}"] = f"{p.steps}"
        v[f"worst_{t}_ms"] = ms_tenths(p.worst_step_s)
        v[f"worst_{t}_x"] = f"{p.worst_step_s / alone:.0f}"
        v[f"prefill_{t}_ms"] = ms_tenths(p.prefill_s)
        v[f"chunk_{t}"] = f"{t - budget.DECODES:,}"
    small, big = (
        budget.plan(gpu, model, fmt, 512),
        budget.plan(gpu, model, fmt, budget.LLM_DEFAULT_BUDGET),
    )
    v["prefill_cost_pct"] = f"{small.prefill_s / big.prefill_s - 1:.1%}"
    # where that cost comes from: the prompt alone takes as long at every budget (its chunk steps
    # are compute-bound, so reading the weights again is free; with the decodes only the short
    # last step is not); the difference is the decodes' work riding along in every step, work that
    # unchunked runs as separate decode-only steps afterwards
    alone_prefill = {
        t: budget.plan(gpu, model, fmt, t, decodes=0).prefill_s for t in budget.BUDGETS
    }
    if max(alone_prefill.values()) > 1.001 * min(alone_prefill.values()):
        raise ValueError(
            f"the prompt alone no longer takes the same time at every budget: {alone_prefill}"
        )
    v["prompt_alone_ms"] = ms_tenths(alone_prefill[512])
    extra_steps = small.steps - big.steps
    v["extra_steps"] = f"{extra_steps}"
    v["same_work_unchunked_ms"] = ms_tenths(big.prefill_s + extra_steps * alone)
    if not big.prefill_s + extra_steps * alone > small.prefill_s:
        raise ValueError("chunked no longer does the same work faster than unchunked")
    # the estimator keeps decode contexts fixed; over the most steps a prefill takes they grow by
    # that many tokens: what that does to a decode-only step, where the KV share is largest
    grown = budget.decode_step_s(gpu, model, fmt, budget.DECODES, budget.CONTEXT + small.steps)
    v["context_growth_pct"] = f"{grown / alone - 1:.2%}"
    # preemption
    cost = preemption.preemption_cost(gpu, model, fmt)
    v["pre_prompt"] = f"{preemption.PROMPT:,}"
    v["pre_generated"] = f"{preemption.GENERATED}"
    v["pre_tokens"] = f"{cost.recomputed_tokens:,}"
    v["pre_freed_mb"] = f"{cost.freed_bytes / 1e6:,.0f}"
    v["pre_recompute_ms"] = ms_tenths(cost.recompute_s)
    v["pre_decode_ms"] = ms_tenths(cost.decode_step_s)
    v["pre_steps"] = f"{cost.recompute_s / cost.decode_step_s:.0f}"
    # simulator
    mix = itl_sim.request_mix()
    v.update(
        mix_seed=f"{itl_sim.SEED}",
        mix_requests=f"{itl_sim.REQUESTS}",
        mix_rate=f"{itl_sim.RATE:g}",
        mix_short_prompt=f"{itl_sim.SHORT_PROMPT}",
        mix_long_prompt=f"{itl_sim.LONG_PROMPT:,}",
        mix_long_share=f"{itl_sim.LONG_SHARE:.0%}",
        mix_mean_output=f"{itl_sim.MEAN_OUTPUT}",
        mix_max_output=f"{itl_sim.MAX_OUTPUT:,}",
        mix_drawn_long=f"{int((mix.prompts == itl_sim.LONG_PROMPT).sum())}",
    )
    for s in itl_sim.compare(mix):
        key = f"sim_{s.label}_{s.budget}"
        v[f"{key}_p50"] = f"{s.itl_p50_ms:.1f}"
        v[f"{key}_p99"] = f"{s.itl_p99_ms:.1f}"
        v[f"{key}_max"] = f"{s.itl_max_ms:.1f}"
        v[f"{key}_long_ttft"] = f"{s.long_ttft_p50_s * 1e3:.0f}"
        v[f"{key}_short_ttft"] = f"{s.short_ttft_p50_s * 1e3:.0f}"
    # `vllm serve` on the same card has a smaller default budget, one the page simulates
    serve_budget = batch_defaults(gpu, "serve").max_num_batched_tokens
    if serve_budget not in budget.BUDGETS:
        raise ValueError(f"`vllm serve`'s default budget {serve_budget} is not simulated")
    v["serve_default_budget"] = f"{serve_budget:,}"
    v["serve_default_steps"] = v[f"steps_{serve_budget}"]
    v["serve_default_p99"] = v[f"sim_chunked_{serve_budget}_p99"]
    # self-test
    v["quiz_long_prompt"] = f"{QUIZ_PROMPT:,}"
    v["quiz_budget"] = f"{QUIZ_BUDGET:,}"
    v["quiz_decodes"] = f"{QUIZ_DECODES}"
    v["quiz_per_step"] = f"{QUIZ_BUDGET - QUIZ_DECODES:,}"
    v["quiz_chunk_steps"] = f"{budget.prefill_steps(QUIZ_PROMPT, QUIZ_BUDGET, QUIZ_DECODES)}"
    xmodel = load_model(XFER_MODEL)
    xgpu, xfmt = load_gpus()[XFER_GPU], checkpoint_format(xmodel)
    xalone = budget.decode_step_s(xgpu, xmodel, xfmt, budget.DECODES, budget.CONTEXT)
    whole = budget.plan(xgpu, xmodel, xfmt, budget.LLM_DEFAULT_BUDGET)
    chunked = budget.plan(xgpu, xmodel, xfmt, XFER_BUDGET)
    course_chunked = budget.plan(gpu, model, fmt, XFER_BUDGET)
    v.update(
        xfer_gpu=xgpu.name,
        xfer_model=xmodel.name,
        xfer_format=xfmt.name,
        xfer_budget=f"{XFER_BUDGET:,}",
        xfer_steps=f"{chunked.steps}",
        xfer_alone_ms=ms_tenths(xalone),
        xfer_whole_ms=ms_tenths(whole.worst_step_s),
        xfer_worst_ms=ms_tenths(chunked.worst_step_s),
        xfer_prefill_ms=ms_tenths(chunked.prefill_s),
        xfer_4090_ratio=f"{course_chunked.worst_step_s / chunked.worst_step_s:.1f}",
    )
    v["kappa_kb"] = f"{cost.freed_bytes / cost.recomputed_tokens / 1e3:.1f}"
    return v


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
