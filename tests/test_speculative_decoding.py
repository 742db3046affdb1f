"""Speculative decoding: the verification bound against the core's step bounds, E, the speed-up
and its best gamma, alpha from the mean length, the break-even batch, the simulator's counters,
the chart and the lesson's values."""

import math
import xml.etree.ElementTree as ET

import pytest

from batched_decode.batch_bound import CONTEXT, configurations
from core.gpus import load_gpus
from core.models import load_model
from core.roofline import StepCost, batch_step_bound, critical_batch, tpot_bound
from core.speculative import (
    alpha_from_mean_length,
    batched_speedup,
    best_draft_tokens,
    break_even_batch,
    expected_tokens,
    speedup,
    verify_critical_batch,
    verify_step_bound,
)
from speculative_decoding import chart, simulate
from speculative_decoding.values import values

QWEN = load_model("qwen2.5-7b-instruct")
GPUS = load_gpus()
RTX, H100 = GPUS["rtx_4090"], GPUS["h100_sxm"]


@pytest.mark.parametrize("batch", [1, 7, 64])
@pytest.mark.parametrize("gpu", [RTX, H100], ids=lambda g: g.key)
def test_verifying_no_draft_token_is_a_decode_step(gpu, batch):
    plain = tpot_bound(gpu, QWEN, CONTEXT, None, batch)
    verify = verify_step_bound(gpu, QWEN, batch=batch, context=CONTEXT, draft_tokens=0)
    assert verify.compute_s == pytest.approx(plain.compute_s)
    assert verify.memory_s == pytest.approx(plain.memory_s)


def test_verification_is_a_chunk_of_gamma_plus_one_tokens_with_every_logit():
    """batch_step_bound with one chunk of g+1 tokens per sequence after S cached reads the same
    bytes plus the KV of the bonus position; the verification adds the lm_head for g logits."""
    g, batch = 4, 3
    chunked = batch_step_bound(RTX, QWEN, chunks=((g + 1, CONTEXT, True),) * batch)
    verify = verify_step_bound(RTX, QWEN, batch=batch, context=CONTEXT, draft_tokens=g)
    cost = StepCost.of(RTX, QWEN)
    extra_logits = 2 * cost.lm_head_params * g * batch
    assert verify.compute_s * RTX.peak_flops == pytest.approx(
        chunked.compute_s * RTX.peak_flops + extra_logits
    )
    one_token_kv = cost.kv_bytes_per_token * batch / RTX.bandwidth_bytes
    assert verify.memory_s == pytest.approx(chunked.memory_s - one_token_kv)


def test_memory_bound_verification_costs_about_one_decode_step_and_compute_bound_costs_more():
    one = verify_step_bound(RTX, QWEN, batch=1, context=CONTEXT, draft_tokens=4)
    assert one.memory_bound
    assert one.seconds / tpot_bound(RTX, QWEN, CONTEXT).seconds < 1.001
    big = verify_step_bound(RTX, QWEN, batch=512, context=CONTEXT, draft_tokens=4)
    assert not big.memory_bound
    assert big.seconds > 2 * tpot_bound(RTX, QWEN, CONTEXT, None, 512).seconds


@pytest.mark.parametrize("alpha,gamma", [(0.0, 3), (0.5, 1), (0.8, 4), (0.95, 7), (1.0, 5)])
def test_expected_tokens_is_the_sum_of_the_chances_of_reaching_each_position(alpha, gamma):
    assert expected_tokens(alpha, gamma) == pytest.approx(sum(alpha**i for i in range(gamma + 1)))


def test_expected_tokens_examples_and_errors():
    assert expected_tokens(0.8, 4) == pytest.approx(3.3616)
    assert expected_tokens(0.7, 3) == pytest.approx(2.533)
    with pytest.raises(ValueError):
        expected_tokens(1.2, 3)
    with pytest.raises(ValueError):
        speedup(0.8, 3, -0.1)


def test_speedup_and_best_gamma():
    assert speedup(0.8, 4, 0.0) == pytest.approx(expected_tokens(0.8, 4))
    assert speedup(0.8, 4, 0.1) == pytest.approx(3.3616 / 1.4)
    best = best_draft_tokens(0.8, 0.1)
    assert all(speedup(0.8, best, 0.1) >= speedup(0.8, g, 0.1) for g in range(1, 17))
    # a costlier draft wants fewer draft tokens; a better one more
    assert best_draft_tokens(0.8, 0.3) < best < best_draft_tokens(0.95, 0.1)
    assert best_draft_tokens(0.3, 1.0) == 1


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.77, 0.99])
def test_alpha_from_mean_length_inverts_expected_tokens(alpha):
    assert alpha_from_mean_length(expected_tokens(alpha, 3), 3) == pytest.approx(alpha, abs=1e-9)
    with pytest.raises(ValueError):
        alpha_from_mean_length(5.5, 3)


def test_speedup_falls_with_batch_and_break_even_is_the_first_batch_below_one():
    args = dict(context=CONTEXT, alpha=0.8, draft_tokens=4)
    speeds = [batched_speedup(RTX, QWEN, batch=b, **args) for b in (1, 16, 64, 256, 1024)]
    assert speeds == sorted(speeds, reverse=True)
    assert speeds[0] == pytest.approx(expected_tokens(0.8, 4), rel=1e-3)
    # compute-bound at both ends: the round costs g+1 decode steps' FLOPs for E tokens
    assert speeds[-1] == pytest.approx(expected_tokens(0.8, 4) / 5, rel=0.02)
    end = break_even_batch(RTX, QWEN, **args)
    assert batched_speedup(RTX, QWEN, batch=end, **args) < 1
    assert batched_speedup(RTX, QWEN, batch=end - 1, **args) >= 1
    assert break_even_batch(RTX, QWEN, **args, largest=end - 1) is None


def test_a_priced_draft_lowers_the_speedup():
    args = dict(batch=1, context=CONTEXT, alpha=0.8, draft_tokens=4)
    assert batched_speedup(RTX, QWEN, **args, draft_step_s=1e-3) < batched_speedup(
        RTX, QWEN, **args
    )


def test_verify_critical_batch_solves_compute_equals_memory():
    for gpu in (RTX, H100):
        b = verify_critical_batch(gpu, QWEN, context=CONTEXT, draft_tokens=4)
        lo = verify_step_bound(gpu, QWEN, batch=math.floor(b), context=CONTEXT, draft_tokens=4)
        hi = verify_step_bound(gpu, QWEN, batch=math.ceil(b) + 1, context=CONTEXT, draft_tokens=4)
        assert lo.memory_bound and not hi.memory_bound
    # g = 0: the plain decode's critical batch; on the H100 at this context there is none
    assert verify_critical_batch(RTX, QWEN, context=CONTEXT, draft_tokens=0) == pytest.approx(
        critical_batch(RTX, QWEN, CONTEXT)
    )
    assert critical_batch(H100, QWEN, CONTEXT) is None


def test_the_simulator_keeps_vllms_counters_consistent():
    tokens, c = simulate.simulate(steps=5_000, seed=3)
    assert c.num_drafts == 5_000 and c.num_draft_tokens == 5_000 * simulate.DRAFT_TOKENS
    assert sum(c.accepted_per_pos) == c.num_accepted_tokens == int((tokens - 1).sum())
    assert list(c.accepted_per_pos) == sorted(c.accepted_per_pos, reverse=True)
    assert c.mean_acceptance_length == pytest.approx(tokens.mean())


def test_one_kind_of_text_matches_the_formula_and_a_mix_beats_the_average_alpha():
    tokens, c = simulate.simulate(steps=50_000, easy_share=1.0, easy_alpha=0.8)
    assert tokens.mean() == pytest.approx(expected_tokens(0.8, 4), rel=0.02)
    est = simulate.alpha_estimates(c)
    assert all(v == pytest.approx(0.8, abs=0.02) for v in est.values())
    tokens, c = simulate.simulate()
    mean_alpha = 0.5 * 0.9 + 0.5 * 0.4
    assert tokens.mean() > expected_tokens(mean_alpha, 4)
    est = simulate.alpha_estimates(c)
    assert est["first position"] < est["from mean length"] < est["conditional"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_chart_is_svg_with_a_curve_per_configuration(lang):
    root = ET.fromstring(chart.chart(lang))
    curves = root.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(curves) == len(configurations())
    assert root.find("{http://www.w3.org/2000/svg}title").text


def test_values_follow_from_the_core():
    v = values()
    assert v["expected"] == f"{expected_tokens(0.8, 4):.2f}"
    rtx, bf16, f = configurations()[0]
    assert (
        v["break_rtx_bf16"]
        == f"{break_even_batch(rtx, bf16, context=CONTEXT, alpha=0.8, draft_tokens=4, fmt=f):,}"
    )
    assert float(v["speedup_rtx_bf16_large"]) < 1 < float(v["speedup_h100_bf16_large"])
    assert int(v["break_rtx_awq"]) < int(v["break_rtx_bf16"])


def test_where_plain_decode_stays_memory_bound_the_speedup_levels_off_above_e_over_g_plus_one():
    """On the H100 at this context plain decode never turns compute-bound, so at very large
    batches the ratio settles between E/(g+1) and 1 instead of at E/(g+1)."""
    h100 = load_gpus()["h100_sxm"]
    args = dict(context=CONTEXT, alpha=0.8, draft_tokens=4)
    far = batched_speedup(h100, QWEN, batch=100_000, **args)
    assert expected_tokens(0.8, 4) / 5 * 1.05 < far < 1


# vLLM 0.26.0 itself (.venv-labs): the page's list of methods and the acceptance rule's defaults
VLLM_SPECULATIVE_PROBE = """
import json
from typing import get_args
from vllm.config.speculative import SpeculativeConfig, SpeculativeMethod
fields = SpeculativeConfig.__dataclass_fields__
print("RESULT " + json.dumps({
    "methods": sorted(set(get_args(SpeculativeMethod))),
    "defaults": {name: fields[name].default for name in (
        "draft_sample_method", "rejection_sample_method", "suffix_decoding_max_tree_depth")},
}))
"""


def test_the_pages_name_every_method_and_the_defaults_of_vllm_0_26_0():
    from conftest import DOCS
    from labs_env import probe

    found = probe(VLLM_SPECULATIVE_PROBE)
    # the per-model *_mtp names are deprecated aliases that vLLM maps to "mtp"
    methods = {m for m in found["methods"] if not m.endswith("_mtp")}
    assert found["defaults"] == {
        "draft_sample_method": "greedy",  # the page: q is one-hot unless "probabilistic"
        "rejection_sample_method": "standard",  # "synthetic" is the opt-in exception
        "suffix_decoding_max_tree_depth": 24,
    }
    for name in ("speculative_decoding.md", "speculative_decoding.en.md"):
        page = (DOCS / "decoding" / name).read_text(encoding="utf-8")
        section = page[page.index("{#vllm}") : page.index("{#code}")]
        assert {m for m in methods if f"`{m}`" not in section} == set(), name
