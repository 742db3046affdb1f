"""Figures the prefix-caching lesson quotes in its prose, computed here (never typed in Markdown).

Pages refer to them as {{ prefix_caching.<name> }}; coursesite.values fills them in.
Run `python snippets/prefix_caching/values.py` to list every name and its value.
"""

from core.display import ms  # three significant figures, as on every page
from core.formats import checkpoint_format
from core.gpus import load_gpu
from core.models import load_model
from core.roofline import step_bound, ttft_bound
from prefix_caching.hit_rate import (
    CAPACITIES,
    POPULARITY,
    QUESTION,
    REQUESTS,
    SEED,
    SYSTEM_PROMPTS,
    simulate,
    stream,
)
from prefix_caching.reuse import BLOCK_SIZE, SYSTEM_PROMPT, cached_tokens, saving
from prefix_caching.reuse import QUESTION as EXAMPLE_QUESTION

# labs/prefix_caching/prefix_cache.py's defaults (tests/test_prefix_caching.py ties them)
LAB_SYSTEM_PROMPT, LAB_QUESTION = 2000, 64
# Self-test: a prompt of exactly whole blocks, sent twice.
QUIZ_PROMPT = 1024
# Transfer: a longer shared document on another model and GPU, bigger blocks.
T_MODEL, T_GPU, T_SHARED, T_QUESTION, T_BLOCK = "llama-3.1-8b-instruct", "h100_sxm", 4000, 200, 32


def values() -> dict[str, str]:
    qwen = load_model("qwen2.5-7b-instruct")
    awq = load_model("qwen2.5-7b-instruct-awq")  # the lab's default checkpoint
    awq_fmt = checkpoint_format(awq)
    gpu = load_gpu("rtx_4090")
    prompt = SYSTEM_PROMPT + EXAMPLE_QUESTION
    hit = cached_tokens(SYSTEM_PROMPT, prompt, BLOCK_SIZE)
    s = saving(qwen, prompt, hit)
    bf16_cached = ttft_bound(gpu, qwen, s.computed)
    awq_cached = ttft_bound(gpu, awq, s.computed, awq_fmt)
    if not bf16_cached.memory_bound or awq_cached.memory_bound:
        raise ValueError("the page says the cached prefill is memory-bound in BF16, not in AWQ")
    lab_prompt = LAB_SYSTEM_PROMPT + LAB_QUESTION
    lab_computed = lab_prompt - cached_tokens(LAB_SYSTEM_PROMPT, lab_prompt, BLOCK_SIZE)
    lab_full = ttft_bound(gpu, awq, lab_prompt, awq_fmt).seconds
    lab_cached = ttft_bound(gpu, awq, lab_computed, awq_fmt).seconds
    prompts, questions = stream()
    ample, tight, tighter = (simulate(prompts, questions, c) for c in CAPACITIES)
    llama, h100 = load_model(T_MODEL), load_gpu(T_GPU)
    t_prompt = T_SHARED + T_QUESTION
    t_hit = cached_tokens(T_SHARED, t_prompt, T_BLOCK)
    t = saving(llama, t_prompt, t_hit)
    return {
        "system_prompt": f"{SYSTEM_PROMPT:,}",
        "question": f"{EXAMPLE_QUESTION}",
        "full_prompt": f"{prompt:,}",
        "cached": f"{hit:,}",
        "cached_blocks": f"{hit // BLOCK_SIZE}",
        "uncached_system": f"{SYSTEM_PROMPT - hit}",
        "computed": f"{s.computed}",
        "same_prompt_cached": f"{cached_tokens(prompt, prompt, BLOCK_SIZE):,}",
        "weight_gflops_full": f"{s.weight_flops_full / 1e9:,.0f}",
        "weight_gflops_left": f"{(s.weight_flops_full - s.weight_flops_saved) / 1e9:,.0f}",
        "weight_saved_share": f"{s.weight_flops_saved / s.weight_flops_full:.1%}",
        "attention_gflops_full": f"{s.attention_flops_full / 1e9:,.0f}",
        "attention_gflops_left": f"{(s.attention_flops_full - s.attention_flops_saved) / 1e9:,.0f}",
        "attention_saved_share": f"{s.attention_flops_saved / s.attention_flops_full:.1%}",
        "ttft_full_ms": ms(ttft_bound(gpu, qwen, prompt).seconds),
        "ttft_cached_ms": ms(bf16_cached.seconds),
        "ttft_full_awq_ms": ms(ttft_bound(gpu, awq, prompt, awq_fmt).seconds),
        "ttft_cached_awq_ms": ms(awq_cached.seconds),
        # the lab's own defaults, AWQ weights as it loads them
        "lab_system_prompt": f"{LAB_SYSTEM_PROMPT:,}",
        "lab_question": f"{LAB_QUESTION}",
        "lab_ttft_full_ms": ms(lab_full),
        "lab_ttft_cached_ms": ms(lab_cached),
        "lab_ttft_ratio": f"{lab_full / lab_cached:.0f}",
        # the simulated stream
        "sim_requests": f"{REQUESTS:,}",
        "sim_seed": f"{SEED}",
        "sim_prompts": " / ".join(f"{p:,}" for p in SYSTEM_PROMPTS),
        "sim_popularity": " / ".join(f"{p:.0%}" for p in POPULARITY),
        "sim_question_min": f"{QUESTION[0]}",
        "sim_question_max": f"{QUESTION[1] - 1}",
        "sim_ideal": f"{ample.ideal_rate:.1%}",
        "sim_ample_blocks": f"{CAPACITIES[0]:,}",
        "sim_ample_rate": f"{ample.hit_rate:.1%}",
        "sim_tight_blocks": f"{CAPACITIES[1]}",
        "sim_tight_rate": f"{tight.hit_rate:.1%}",
        "sim_tighter_blocks": f"{CAPACITIES[2]}",
        "sim_tighter_rate": f"{tighter.hit_rate:.1%}",
        **{f"sim_p{k}_tokens": f"{t:,}" for k, t in enumerate(SYSTEM_PROMPTS)},
        # who lost what: per system prompt (0 the popular one, 2 the rare long one)
        **{
            f"sim_{name}_p{k}_{field}": text
            for name, r in (("tight", tight), ("tighter", tighter))
            for k, t in enumerate(r.by_prompt)
            for field, text in (
                ("rate", f"{t.hit_rate:.1%}"),
                ("ideal", f"{t.ideal_rate:.1%}"),
                ("lost", f"{r.lost_share(k):.0%}"),
            )
        },
        # self-test
        "quiz_whole_prompt": f"{QUIZ_PROMPT:,}",
        "quiz_blocks": f"{QUIZ_PROMPT // BLOCK_SIZE}",
        "quiz_cached": f"{cached_tokens(QUIZ_PROMPT, QUIZ_PROMPT, BLOCK_SIZE):,}",
        "quiz_recomputed": f"{QUIZ_PROMPT - cached_tokens(QUIZ_PROMPT, QUIZ_PROMPT, BLOCK_SIZE)}",
        # transfer
        "t_model": llama.name,
        "t_gpu": h100.name,
        "t_shared": f"{T_SHARED:,}",
        "t_question": f"{T_QUESTION}",
        "t_block": f"{T_BLOCK}",
        "t_cached": f"{t_hit:,}",
        "t_computed": f"{t.computed:,}",
        "t_weight_saved_share": f"{t.weight_flops_saved / t.weight_flops_full:.1%}",
        "t_ttft_full_ms": ms(ttft_bound(h100, llama, t_prompt).seconds),
        "t_ttft_cached_ms": ms(ttft_bound(h100, llama, t.computed).seconds),
        # the same step reading the cached tokens' KV too (what section 3 leaves out)
        "t_ttft_cached_kv_ms": ms(
            step_bound(h100, llama, prefill_tokens=t.computed, prefill_cached=t_hit).seconds
        ),
    }


if __name__ == "__main__":
    for name, value in values().items():
        print(f"{name} = {value}")
