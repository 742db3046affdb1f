"""The capacity-planning capstone: the estimator's chain, the simulated load ceiling, the values."""

import json
import math
from dataclasses import replace

import pytest

from capacity_planning import estimate, plan_sim
from capacity_planning.estimate import CANDIDATES, PRODUCT, Candidate, plan, usd_per_million
from capacity_planning.values import values
from core.gpus import load_gpus
from core.models import load_model
from core.reference import AWQ_MODEL, BF16_MODEL
from core.roofline import tpot_bound, ttft_bound

FP8_H100 = Candidate("h100_sxm", BF16_MODEL, "fp8")


def test_mean_value_rate_and_tpot_follow_from_the_step_times():
    p = plan(FP8_H100)
    o = PRODUCT.mean_output
    assert p.mean_rate == pytest.approx(p.batch / (o * p.step_s + p.batch * p.prefill_s))
    assert p.tpot_s == pytest.approx(p.step_s + p.batch * p.prefill_s / o)
    assert p.tpot_s * 1e3 <= PRODUCT.tpot_p99_ms
    assert p.rate == pytest.approx(p.mean_rate * estimate.LOAD_CEILING)


def test_the_batch_is_the_largest_within_tpot_and_kv():
    p = plan(FP8_H100)
    assert p.batch <= p.kv_batch
    if p.batch < p.kv_batch:  # TPOT-bound: one more sequence would miss the target
        step = estimate.step_s(p.gpu, p.model, p.fmt, p.batch + 1, 1024 + 128, p.tp, p.share)
        assert (step + (p.batch + 1) * p.prefill_s / PRODUCT.mean_output) * 1e3 > 50


def test_step_times_are_the_floors_divided_by_the_measured_share():
    p = plan(FP8_H100)
    context = PRODUCT.prompt_tokens + PRODUCT.mean_output // 2
    floor = tpot_bound(p.gpu, p.model, context, p.fmt, p.batch).seconds
    assert p.step_s == pytest.approx(floor / p.share)
    prefill = ttft_bound(p.gpu, p.model, PRODUCT.prompt_tokens, p.fmt).seconds
    assert p.prefill_s == pytest.approx(prefill / p.share)
    assert 0 < p.share < 1  # measured runs are slower than their floors
    on_floors = plan(FP8_H100, floors_only=True)
    assert on_floors.share == 1 and on_floors.mean_rate > p.mean_rate


def test_each_share_is_the_closest_published_batch1_run_of_its_format():
    from core.published import calibrated, closest_published

    for c in CANDIDATES:
        p = plan(c)
        row = p.measured.row
        assert p.share == p.measured.share == row.value / p.measured.floor_tok_s
        assert row.phase == "decode" and row.model == BF16_MODEL and row.engine == "vLLM"
        assert p.measured in calibrated()
        wanted = estimate.published_format(c)
        searched = estimate.STAND_IN_FORMAT.get(wanted, wanted)
        assert p.measured == closest_published(BF16_MODEL, c.gpu_key, searched, "decode")
        assert row.format == searched
    # no published batch-1 row measures FP8, so its stand-in is used; AWQ and BF16 have their own
    assert {estimate.published_format(c) for c in CANDIDATES} == {"AWQ", "BF16", "FP8"}
    assert "FP8" not in {r.row.format for r in estimate.decode_rows()}
    assert plan(FP8_H100).measured.row.format == estimate.STAND_IN_FORMAT["FP8"]
    # another format's row changes the share and with it the plan
    on_int8 = plan(FP8_H100, share_format="GPTQ-Int8")
    assert on_int8.measured.row.format == "GPTQ-Int8" and on_int8.share < plan(FP8_H100).share
    assert on_int8.gpus >= plan(FP8_H100).gpus


def test_replicas_cover_the_peak_plus_the_spare_and_cost_pays_every_gpu():
    for c in CANDIDATES:
        p = plan(c)
        assert (p.replicas - estimate.SPARE_REPLICAS) * p.rate >= PRODUCT.peak_rate
        assert (p.replicas - estimate.SPARE_REPLICAS - 1) * p.rate < PRODUCT.peak_rate
        tokens_per_h = PRODUCT.peak_rate * PRODUCT.mean_output * 3600
        assert usd_per_million(p) == pytest.approx(p.gpus * p.usd_per_gpu_hour / tokens_per_h * 1e6)


def test_tp_is_one_for_the_7b_model_and_more_for_the_72b():
    assert all(plan(c).tp == 1 for c in CANDIDATES)
    big = plan(Candidate("h100_sxm", "qwen2.5-72b-instruct", "fp8"))
    assert big.tp > 1
    # the all-reduces: nothing at TP 1, and more over PCIe than over NVLink
    gpus, model = load_gpus(), load_model(BF16_MODEL)
    assert estimate.all_reduce_s(gpus["h100_sxm"], model, 64, 1) == 0
    pcie = estimate.all_reduce_s(gpus["rtx_4090"], model, 64, 2)
    assert pcie > estimate.all_reduce_s(gpus["h100_sxm"], model, 64, 2) > 0


def test_kv_heads_split_across_tp_until_each_gpu_holds_one():
    from core.models import kv_bytes_per_token

    model = load_model(BF16_MODEL)  # 4 KV heads
    assert estimate.kv_bytes_per_gpu(model, 1) == kv_bytes_per_token(model)
    assert estimate.kv_bytes_per_gpu(model, 2) == kv_bytes_per_token(model) / 2
    assert estimate.kv_bytes_per_gpu(model, 8) == estimate.kv_bytes_per_gpu(model, 4)


def test_the_kv_cache_is_the_checkpoints_own_16_bit_type_as_the_page_says():
    """--kv-cache-dtype auto keeps the KV cache in the model's dtype: the page calls it FP16 for the
    AWQ checkpoint and BF16 for the BF16 one (FP8 weights included), two bytes a value each."""
    from core.models import MODELS_DIR

    dtypes = {
        c.model_key: json.loads((MODELS_DIR / f"{c.model_key}.json").read_text())["config"][
            "torch_dtype"
        ]
        for c in CANDIDATES
    }
    assert dtypes == {AWQ_MODEL: "float16", BF16_MODEL: "bfloat16"}


def test_a_product_the_cards_cannot_serve_gets_no_plan():
    impossible = replace(PRODUCT, tpot_p99_ms=0.1)  # below every card's floor at TP 8
    assert all(plan(c, impossible) is None for c in CANDIDATES)


def test_the_default_load_ceiling_is_the_simulators_lowest_accepted_one():
    ceilings, plans = plan_sim.ceilings(), plan_sim.simulated_plans()
    accepted = [min(found) for c, found in ceilings.items() if plans[c] is not None]
    assert min(accepted) == estimate.LOAD_CEILING


def test_the_simulated_p99s_grow_with_the_load():
    p = plan(FP8_H100)
    low = plan_sim.p99s(p, plan_sim.LOADS[0], plan_sim.SEEDS[0])
    high = plan_sim.p99s(p, 1.2, plan_sim.SEEDS[0])
    assert high[0] > low[0] and high[1] > low[1]
    assert not plan_sim.meets(p, 1.2, plan_sim.SEEDS[0])  # beyond the mean-value rate


def test_values_quote_the_plan():
    v = values()
    best = plan_sim.cheapest()
    assert v["flags"] == estimate.flags(best)
    assert v["h100_fp8_sim_gpus"] == f"{best.gpus}"
    assert int(v["doubled_gpus"]) > best.gpus
    assert math.isclose(float(v["doubled_peak"]), 2 * PRODUCT.peak_rate)


def test_batch_defaults_follow_vllm_get_batch_defaults():
    from core.batch_defaults import batch_defaults

    gpus = load_gpus()
    assert batch_defaults(gpus["h100_sxm"], "serve") == (1024, 8192)
    assert batch_defaults(gpus["h100_sxm"], "llm").max_num_batched_tokens == 16384
    assert batch_defaults(gpus["a100_80gb_sxm"], "serve") == (256, 2048)  # 80 GB, but an A100
    assert batch_defaults(gpus["rtx_4090"], "llm") == (256, 8192)
    with pytest.raises(ValueError, match="usage"):
        batch_defaults(gpus["rtx_4090"], "offline")
