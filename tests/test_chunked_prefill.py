"""The chunked-prefill lesson's estimator, simulator and preemption cost."""

import math

import numpy as np
import pytest

from chunked_prefill import budget, itl_sim, preemption
from chunked_prefill.budget import chunks, course_setup, plan, prefill_steps
from core.formats import SIXTEEN_BIT
from core.models import kv_bytes_per_token
from core.roofline import StepCost, step_bound, ttft_bound
from labs_env import probe

GPU, MODEL, FMT = course_setup()


@pytest.mark.parametrize(("prompt", "t", "d"), [(6000, 2048, 16), (100, 101, 0), (10, 1000, 999)])
def test_chunks_fill_t_minus_d_and_add_up_to_the_prompt(prompt, t, d):
    sizes = chunks(prompt, t, d)
    assert sum(sizes) == prompt and len(sizes) == prefill_steps(prompt, t, d)
    assert all(s == t - d for s in sizes[:-1]) and 0 < sizes[-1] <= t - d
    assert len(sizes) == math.ceil(prompt / (t - d))


def test_a_budget_the_decodes_use_up_is_refused():
    with pytest.raises(ValueError, match="leaves nothing"):
        prefill_steps(100, 16, 16)


def test_a_budget_that_holds_the_prompt_is_one_step_of_prompt_and_decodes():
    p = plan(GPU, MODEL, FMT, budget.PROMPT + budget.DECODES)
    one = step_bound(
        GPU,
        MODEL,
        prefill_tokens=budget.PROMPT,
        decode_batch=budget.DECODES,
        decode_context=budget.CONTEXT,
        fmt=FMT,
    )
    assert p.steps == 1 and p.worst_step_s == p.prefill_s == one.seconds


def test_a_smaller_budget_shortens_the_worst_step_and_lengthens_the_prefill():
    plans = [plan(GPU, MODEL, FMT, t) for t in sorted(budget.BUDGETS)]
    worst = [p.worst_step_s for p in plans]
    total = [p.prefill_s for p in plans]
    assert worst == sorted(worst) and total == sorted(total, reverse=True)
    alone = budget.decode_step_s(GPU, MODEL, FMT, budget.DECODES, budget.CONTEXT)
    assert all(w > alone for w in worst)


def test_preemption_recomputes_prompt_and_output_as_one_prefill():
    cost = preemption.preemption_cost(GPU, MODEL, FMT, prompt=1000, generated=300)
    assert cost.recomputed_tokens == 1300
    assert cost.recompute_s == ttft_bound(GPU, MODEL, 1300, FMT).seconds
    assert cost.freed_bytes == 1300 * kv_bytes_per_token(MODEL, SIXTEEN_BIT)
    assert cost.recompute_s < 300 * cost.decode_step_s  # cheaper than generating again


# ---------------------------------------------------------------- the simulator


@pytest.fixture(scope="module")
def small_mix() -> itl_sim.Mix:
    return itl_sim.request_mix(seed=3, n=60, rate=4.0)


def test_the_mix_is_seeded(small_mix):
    again = itl_sim.request_mix(seed=3, n=60, rate=4.0)
    assert np.array_equal(small_mix.prompts, again.prompts)
    assert np.array_equal(small_mix.outputs, again.outputs)
    assert set(small_mix.prompts) <= {itl_sim.SHORT_PROMPT, itl_sim.LONG_PROMPT}


@pytest.mark.parametrize(("t", "chunked"), [(8192, False), (8192, True), (512, True)])
def test_every_request_gets_exactly_its_tokens_in_order(small_mix, t, chunked):
    run = itl_sim.simulate(small_mix, t, chunked, GPU, MODEL, FMT)
    assert [len(ts) for ts in run.token_times] == list(small_mix.outputs)
    assert all(np.all(np.diff(ts) > 0) for ts in run.token_times if len(ts) > 1)
    assert np.all(run.ttft_s(small_mix) > 0)


def test_a_small_budget_caps_every_gap_at_one_budget_step(small_mix):
    run = itl_sim.simulate(small_mix, 512, True, GPU, MODEL, FMT)
    unchunked = itl_sim.simulate(small_mix, 8192, False, GPU, MODEL, FMT)
    # the longest a 512-token step can take: its tokens all prefill, reading a whole long prompt
    cap = StepCost.of(GPU, MODEL, FMT).bound(((512, itl_sim.LONG_PROMPT, True),), (5000,) * 8)
    assert run.itl_s().max() <= cap.seconds < unchunked.itl_s().max()


def test_unchunked_refuses_a_budget_below_the_longest_prompt(small_mix):
    with pytest.raises(ValueError, match="never admit"):
        itl_sim.simulate(small_mix, 2048, False, GPU, MODEL, FMT)


def test_a_budget_above_p_plus_d_still_cuts_the_next_prompt():
    """Issue 26, defect 7: with the default budget no prompt needs cutting, yet chunking on cuts
    the next long prompt with the leftover budget, and the largest ITL grows (647.3 vs 555.3 ms)."""
    default = budget.LLM_DEFAULT_BUDGET
    assert default > itl_sim.LONG_PROMPT  # every prompt fits whole in one step
    runs = {(s.label, s.budget): s for s in itl_sim.compare(itl_sim.request_mix())}
    chunked, whole = runs[("chunked", default)], runs[("unchunked", default)]
    assert chunked.itl_max_ms > whole.itl_max_ms
    assert (round(chunked.itl_max_ms, 1), round(whole.itl_max_ms, 1)) == (647.3, 555.3)


KV_OFFLOADING_PROBE = """
import json
from vllm.config import CacheConfig, VllmConfig
config = VllmConfig(cache_config=CacheConfig(kv_offloading_size=4.0))
print("RESULT " + json.dumps(config.kv_transfer_config.kv_connector))
"""


def test_kv_offloading_size_wires_a_connector_that_stores_kv_on_cpu():
    """Issue 26, defect 7: the scheduler preempts by recompute only, but kv_offloading_size
    turns on a KV connector that offloads blocks to CPU memory ("no path to CPU" is too strong)."""
    result = probe(KV_OFFLOADING_PROBE)
    assert result in (
        "OffloadingConnector",
        "SimpleCPUOffloadConnector",
    )


def test_vllm_serves_default_budget_cuts_the_scenes_prompt_that_llms_does_not():
    """Pitfall 1 says the LLM class's default leaves the prompt whole; a reader who runs
    `vllm serve` on the same card gets a smaller default that does cut it (the page says so)."""
    from chunked_prefill.values import values
    from core.batch_defaults import batch_defaults

    serve = batch_defaults(GPU, "serve").max_num_batched_tokens
    llm = batch_defaults(GPU, "llm").max_num_batched_tokens
    assert llm == budget.LLM_DEFAULT_BUDGET
    assert serve < budget.PROMPT + budget.DECODES <= llm
    v = values()
    assert v["serve_default_steps"] == str(prefill_steps(budget.PROMPT, serve, budget.DECODES))
    assert float(v["serve_default_p99"]) < float(v[f"sim_chunked_{llm}_p99"])
