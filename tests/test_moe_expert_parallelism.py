"""The MoE and expert-parallelism lesson: exact parameter counts from the configs against the model
cards, distinct experts under uniform routing (formula and a Monte Carlo check), the MoE decode
bound and its dense twin, expert-parallel bytes, the imbalance simulation, values and chart."""

import dataclasses
import math
import random
import xml.etree.ElementTree as ET

import pytest

from core.display import ms
from core.gpus import load_gpu
from core.moe import (
    active_params,
    all_to_all_bytes_per_token,
    allgather_reducescatter_bytes_per_token,
    critical_batch_search,
    decode_weight_bytes,
    dense_twin_bound,
    expected_distinct_experts,
    load_moe_model,
    moe_decode_bound,
    moe_param_breakdown,
    remote_ranks_per_token,
    total_params,
)
from core.parallel import allreduce_bytes_per_token, ring_allreduce_link_bytes
from moe_expert_parallelism import chart, imbalance
from moe_expert_parallelism.moe_bytes import critical_batches
from moe_expert_parallelism.values import values

SMALL, LARGE = load_moe_model("qwen3-30b-a3b"), load_moe_model("qwen3-235b-a22b")
H100 = load_gpu("h100_sxm")


def billions(n: int, digits: int, truncate: bool = False) -> str:
    if truncate:  # the 30B card prints 3.3B for 3,353,032,704 (rounding gives 3.4B)
        return f"{math.floor(n / 10 ** (9 - digits)) / 10**digits:.{digits}f}B"
    return f"{n / 1e9:.{digits}f}B"


@pytest.mark.parametrize(
    ("model", "digits"), [(SMALL, 1), (LARGE, 0)], ids=["qwen3-30b-a3b", "qwen3-235b-a22b"]
)
def test_counts_round_to_the_model_card(model, digits):
    assert billions(total_params(model), digits) == model.model_card["params"]
    active_digits = 1 if model is SMALL else 0
    card = model.model_card["active_params"]
    assert billions(active_params(model), active_digits, truncate=True) == card


def test_the_small_model_by_hand():
    d, f, e, k, layers = 2048, 768, 128, 8, 48
    attention = d * 32 * 128 * 2 + 2 * d * 4 * 128 + 2 * d + 2 * 128
    per_layer = attention + e * 3 * d * f + d * e
    total = layers * per_layer + d + 2 * 151936 * d
    assert total_params(SMALL) == total
    assert active_params(SMALL) == total - layers * (e - k) * 3 * d * f
    assert moe_param_breakdown(SMALL)["shared experts"] == 0


def test_a_shared_expert_counts_in_total_and_active():
    shared = dataclasses.replace(SMALL, shared_expert_intermediate_size=1024)
    extra = SMALL.moe_layers * (3 * 2048 * 1024 + 2048)
    assert total_params(shared) - total_params(SMALL) == extra
    assert active_params(shared) - active_params(SMALL) == extra


def test_distinct_experts_formula_and_a_monte_carlo_check():
    assert expected_distinct_experts(128, 8, 1) == 8
    assert expected_distinct_experts(128, 8, 0) == 0
    assert expected_distinct_experts(128, 8, 10_000) == pytest.approx(128)
    rng = random.Random(0)
    trials = [len({x for _ in range(16) for x in rng.sample(range(128), 8)}) for _ in range(2000)]
    # each token picks 8 DISTINCT experts; the formula treats tokens as independent: it is exact
    assert sum(trials) / len(trials) == pytest.approx(
        expected_distinct_experts(128, 8, 16), rel=0.01
    )


def test_bytes_grow_with_the_batch_until_every_expert_is_read():
    sizes = [decode_weight_bytes(SMALL, b) for b in (1, 8, 64, 1024)]
    assert sizes == sorted(sizes)
    everything = total_params(SMALL) - SMALL.vocab_size * SMALL.hidden_size + SMALL.hidden_size
    assert decode_weight_bytes(SMALL, 4096) == pytest.approx(2 * everything)


def test_batch_one_reads_what_the_dense_twin_reads():
    assert moe_decode_bound(H100, SMALL, 1, 0).seconds == pytest.approx(
        dense_twin_bound(H100, SMALL, 1, 0).seconds
    )


def test_the_moe_critical_batch_is_about_total_over_active_times_the_dense_one():
    moe, dense = critical_batches(H100, SMALL)
    assert moe > dense
    assert moe / dense == pytest.approx(total_params(SMALL) / active_params(SMALL), rel=0.15)
    assert critical_batch_search(lambda b: moe_decode_bound(H100, SMALL, b, 100_000)) is None


def test_expert_parallel_bytes():
    d_b = 2048 * 2
    assert allgather_reducescatter_bytes_per_token(SMALL, 1) == 0
    assert allgather_reducescatter_bytes_per_token(SMALL, 8) == 48 * 2 * 7 * d_b
    missed = math.comb(112, 8) / math.comb(128, 8)
    assert remote_ranks_per_token(SMALL, 8) == pytest.approx(7 * (1 - missed))
    assert all_to_all_bytes_per_token(SMALL, 8) < allgather_reducescatter_bytes_per_token(SMALL, 8)
    with pytest.raises(ValueError):
        remote_ranks_per_token(SMALL, 3)


def test_uniform_routing_is_nearly_balanced_and_skew_is_not():
    uniform = imbalance.simulate(0.0, seed=0, steps=20)
    skewed = imbalance.simulate(1.0, seed=0, steps=20)
    assert 1 < uniform.rank_max_over_mean < 1.2
    assert skewed.rank_max_over_mean > uniform.rank_max_over_mean
    assert skewed.expert_max_over_mean <= imbalance.E / imbalance.K + 1e-9  # one pick per token
    assert imbalance.simulate(0.5, seed=3, steps=5) == imbalance.simulate(0.5, seed=3, steps=5)


def test_values():
    v = values()
    assert v["m30_total"] == f"{total_params(SMALL):,}"
    assert v["touched_b1"] == "8.0"
    assert float(v["crit_ratio"]) > 5


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_chart_is_valid_svg_with_a_description(lang):
    root = ET.fromstring(chart.chart(lang))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f"{ns}title").text and root.find(f"{ns}desc").text
    assert len(root.findall(f"{ns}polyline")) == 2


def test_tensor_parallel_traffic_exceeds_the_default_backend_by_the_attention_all_reduces():
    # the page: TP's ring all-reduces send more than allgather_reducescatter by the all-reduce
    # after attention; every layer of this model is an MoE layer, so exactly twice as much
    tp = ring_allreduce_link_bytes(allreduce_bytes_per_token(SMALL), 8)
    assert SMALL.moe_layers == SMALL.num_layers
    assert tp == 2 * allgather_reducescatter_bytes_per_token(SMALL, 8)
    assert values()["tp_link_ep8_mb"] == f"{tp / 1e6:.2f}"


def test_the_all_to_all_figure_is_a_floor_that_nearly_meets_the_default_at_two_gpus():
    # one copy per remote GPU holding an expert: never more GPUs than k or than the other n - 1
    for ep in (2, 4, 8):
        assert remote_ranks_per_token(SMALL, ep) <= min(SMALL.experts_per_token, ep - 1)
    two = all_to_all_bytes_per_token(SMALL, 2)
    assert two < allgather_reducescatter_bytes_per_token(SMALL, 2)  # "nearly", not "the same"
    v = values()
    assert v["a2a_ep2_mb"] == v["ag_ep2_mb"]  # equal as the page shows them


def test_the_quoted_decode_floors_leave_the_kv_out():
    # the page says "leaving out the KV reads" for these figures
    v = values()
    for b in (1, 32):
        assert v[f"moe_ms_b{b}"] == ms(moe_decode_bound(H100, SMALL, b, 0).seconds)
        assert v[f"dense_ms_b{b}"] == ms(dense_twin_bound(H100, SMALL, b, 0).seconds)
