"""The prefix-caching lesson: what a request reuses, the prefill saved, the hit-rate simulation."""

import ast

import numpy as np
import pytest

from conftest import ROOT
from core.forward import prefill_attention_flops, prefill_flops
from core.gpus import load_gpu
from core.models import layer_matmul_params, load_model
from core.roofline import ttft_bound
from lab_docs import TINY_RECORD, results_doc
from prefix_caching import hit_rate
from prefix_caching import values as lesson
from prefix_caching.reuse import cached_tokens, saving

QWEN = load_model("qwen2.5-7b-instruct")


@pytest.mark.parametrize(
    ("shared", "prompt", "block", "expected"),
    [
        (1500, 1600, 16, 1488),  # the system prompt's full blocks only
        (1600, 1600, 16, 1584),  # the same prompt again: 1599 rounded down
        (1024, 1024, 16, 1008),  # whole blocks: the last block is recomputed
        (15, 100, 16, 0),  # less than a block shared: nothing
        (300, 340, 128, 256),  # the CPU backend's block size
        (0, 50, 16, 0),
    ],
)
def test_cached_tokens_are_full_blocks_below_the_last_prompt_token(shared, prompt, block, expected):
    assert cached_tokens(shared, prompt, block) == expected


@pytest.mark.parametrize(("shared", "prompt", "block"), [(-1, 10, 16), (11, 10, 16), (5, 10, 0)])
def test_cached_tokens_rejects_bad_input(shared, prompt, block):
    with pytest.raises(ValueError, match="shared"):
        cached_tokens(shared, prompt, block)


def test_weight_flops_saved_are_2mh_and_attention_saved_is_the_cached_tokens_own():
    s = saving(QWEN, 1600, 1488)
    assert s.weight_flops_saved == 2 * layer_matmul_params(QWEN) * 1488
    assert s.weight_flops_full == prefill_flops(QWEN, 1600)
    assert s.attention_flops_saved == prefill_attention_flops(QWEN, 1488)
    # what is left: the 112 computed tokens attend to positions 1489..1600 each
    left = s.attention_flops_full - s.attention_flops_saved
    per_position = 4 * QWEN.num_layers * QWEN.q_dim
    assert left == per_position * sum(range(1489, 1601))
    assert saving(QWEN, 100, 0).weight_flops_saved == 0
    with pytest.raises(ValueError, match="cached tokens"):
        saving(QWEN, 100, 100)


def test_the_cached_prefill_is_bandwidth_bound_as_the_page_says():
    gpu = load_gpu("rtx_4090")
    assert not ttft_bound(gpu, QWEN, 1600).memory_bound
    assert ttft_bound(gpu, QWEN, 112).memory_bound
    llama, h100 = load_model("llama-3.1-8b-instruct"), load_gpu("h100_sxm")
    assert ttft_bound(h100, llama, 200).memory_bound  # the transfer answer's claim


def test_hit_rate_reaches_the_ceiling_with_an_ample_cache_and_falls_when_tight():
    prompts, questions = hit_rate.stream()
    rates = [hit_rate.simulate(prompts, questions, c) for c in hit_rate.CAPACITIES]
    assert rates[0].cached_tokens == rates[0].ideal_tokens
    assert rates[0].hit_rate > rates[1].hit_rate > rates[2].hit_rate > 0


def test_per_prompt_tallies_add_up_to_the_whole_run():
    prompts, questions = hit_rate.stream()
    for capacity in hit_rate.CAPACITIES:
        r = hit_rate.simulate(prompts, questions, capacity)
        assert sum(t.prompt_tokens for t in r.by_prompt) == r.prompt_tokens
        assert sum(t.cached_tokens for t in r.by_prompt) == r.cached_tokens
        assert sum(r.lost_share(k) for k in range(len(r.by_prompt))) == pytest.approx(
            1.0 if r.lost_tokens else 0.0
        )


def test_a_tight_cache_costs_the_rare_long_prompt_its_own_hits_not_the_popular_ones():
    """Issue 26, defect 2: at 400 blocks the popular prompt loses nothing (LRU evicts the rare
    prompt itself); at 250 blocks the rare prompt still accounts for about 60 % of lost tokens."""
    popular = hit_rate.POPULARITY.index(max(hit_rate.POPULARITY))
    rare = hit_rate.POPULARITY.index(min(hit_rate.POPULARITY))
    assert hit_rate.SYSTEM_PROMPTS[rare] == max(hit_rate.SYSTEM_PROMPTS)
    prompts, questions = hit_rate.stream()
    _, tight, tighter = (hit_rate.simulate(prompts, questions, c) for c in hit_rate.CAPACITIES)
    assert tight.capacity == 400 and tighter.capacity == 250
    assert tight.by_prompt[popular].lost_tokens == 0
    assert tight.lost_share(rare) > 0.9
    assert tighter.by_prompt[popular].lost_tokens > 0
    assert tighter.lost_share(rare) == pytest.approx(0.60, abs=0.02)


def test_the_stream_is_reproducible_from_its_seed():
    a, b = hit_rate.stream(), hit_rate.stream()
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    other = hit_rate.stream(seed=hit_rate.SEED + 1)
    assert not np.array_equal(a[0], other[0])


def test_a_single_prompt_stream_hits_all_but_the_first():
    prompts = np.zeros(5, dtype=int)  # system prompt 0 every time
    questions = np.full(5, 50)
    r = hit_rate.simulate(prompts, questions, 10_000)
    system = hit_rate.SYSTEM_PROMPTS[0]
    assert r.cached_tokens == 4 * cached_tokens(system, system + 50, hit_rate.BLOCK_SIZE)


def test_lru_evicts_the_rarely_used_prompt_first():
    # prompts 0 and 1 alternate, prompt 2 (the longest) once: with room for 0 and 1 only,
    # the pass over 2 evicts the least recently used blocks, which come back as misses
    prompts = np.array([0, 1, 0, 1, 2, 0, 1])
    questions = np.full(len(prompts), 20)
    ample = hit_rate.simulate(prompts, questions, 10_000)
    tight = hit_rate.simulate(prompts, questions, 300)
    assert tight.cached_tokens < ample.cached_tokens
    assert tight.by_prompt[2].lost_tokens == 0  # used once: nothing to lose


def test_a_pool_smaller_than_one_request_is_refused():
    prompts, questions = hit_rate.stream(n=10)
    with pytest.raises(ValueError, match="cannot hold one request"):
        hit_rate.simulate(prompts, questions, 50)


def test_values_agree_with_the_functions():
    v = lesson.values()
    assert v["cached"] == "1,488" == f"{cached_tokens(1500, 1600, 16):,}"
    assert v["quiz_cached"] == f"{cached_tokens(1024, 1024, 16):,}"
    assert int(v["quiz_recomputed"]) == 16  # one whole block
    assert v["t_cached"] == "4,000"  # a multiple of the block, below P - 1
    assert v["sim_ample_rate"] == v["sim_ideal"]


def prefix_doc(block: int = 128, system: int = 300, question: int = 40) -> dict:
    """A prefix_cache results document as labs/prefix_caching/prefix_cache.py writes one."""
    rows = []
    for series in ("prefix_cache_off", "prefix_cache_on"):
        for r in range(2):
            for k in range(2):
                shared = system if series == "prefix_cache_on" and r > 0 else 0
                rows.append(
                    {"series": series, "label": f"system {k} question {r}", "repeat": 0,
                     "prompt_tokens": system + question, "new_tokens": 4, "wall_s": 0.1,
                     "ttft_s": 0.05 if shared else 0.08, "queue_s": 0.0, "prefill_s": 0.04,
                     "decode_s": 0.03, "tpot_s": 0.01,
                     "cached_tokens": cached_tokens(shared, system + question, block)}
                )  # fmt: skip
    return results_doc(
        "prefix_cache",
        {"max_model_len": 344, "enable_prefix_caching": True, "warmup": 1,
         "system_prompt_tokens": system, "question_tokens": question,
         "system_prompts": 2, "requests": 2, "new_tokens": 4, "block_size": block},
        rows,
        model=TINY_RECORD,
    )  # fmt: skip


def verify(doc: dict) -> dict[str, str]:

    import verify_labs

    return {c.name: c.status for c in verify_labs.checks_for(doc, [], 0.3)}


def test_verify_labs_passes_a_consistent_prefix_run_and_catches_wrong_reuse():
    checks = verify(prefix_doc())
    assert set(checks.values()) == {"PASS"}, checks
    doc = prefix_doc()
    doc["measurements"][-1]["cached_tokens"] = 300  # a partial block cannot be reused
    assert verify(doc)["tokens reused equal the lesson's cached_tokens()"] == "FAIL"
    doc = prefix_doc()
    for m in doc["measurements"]:
        m["ttft_s"] = 0.08  # no TTFT gain with the cache on
    assert verify(doc)["repeat requests' TTFT lower with the cache on"] == "FAIL"
    doc = prefix_doc()
    del doc["measurements"][0]
    assert verify(doc)["completeness"] == "FAIL"


def test_the_lab_bounds_on_the_page_use_the_lab_scripts_defaults():
    """The lab card quotes bounds for the lab's own lengths: values.py's constants are the
    defaults of labs/prefix_caching/prefix_cache.py (read without running it)."""
    tree = ast.parse((ROOT / "labs/prefix_caching/prefix_cache.py").read_text(encoding="utf-8"))
    defaults = {}
    for node in ast.walk(tree):
        first = node.args[0] if isinstance(node, ast.Call) and node.args else None
        if isinstance(first, ast.Constant) and first.value in {"--system-prompt", "--question"}:
            defaults[first.value] = next(
                ast.literal_eval(k.value) for k in node.keywords if k.arg == "default"
            )
    assert defaults == {
        "--system-prompt": lesson.LAB_SYSTEM_PROMPT,
        "--question": lesson.LAB_QUESTION,
    }
