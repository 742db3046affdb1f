"""The tensor-parallelism lesson: the core's TP arithmetic (core.parallel) against hand
derivations, the KV-head and AWQ-group limits as vLLM 0.26.0 enforces them, the table and chart."""

import xml.etree.ElementTree as ET

import pytest

from core.formats import resident_weight_bytes, streamed_weight_bytes
from core.gpus import load_gpu
from core.links import load_link
from core.models import kv_bytes_per_token, load_model
from core.moe import load_moe_model
from core.parallel import (
    ASSUMED_STEP_LATENCY_S,
    allreduce_bytes_per_token,
    decode_comm_seconds,
    embedding_allreduce_bytes,
    group_misaligned,
    kv_bytes_per_token_per_gpu,
    kv_heads_per_gpu,
    logits_allgather_bytes,
    pipeline_bytes_per_token,
    pipeline_hop_seconds,
    ring_allreduce_link_bytes,
    ring_allreduce_seconds,
    tp_decode_step,
    weight_bytes_per_gpu,
    weight_bytes_per_gpu_resident,
)
from core.roofline import tpot_bound
from tensor_parallelism import chart
from tensor_parallelism.tp import rows
from tensor_parallelism.values import values

SMALL, BIG = load_model("qwen2.5-7b-instruct"), load_model("qwen2.5-72b-instruct")
NVLINK, PCIE = load_link("nvlink4_h100"), load_link("pcie4_x16")


def test_bytes_per_token_for_the_7b_model():
    assert allreduce_bytes_per_token(SMALL) == 2 * 28 * 3584 * 2 == 401_408
    assert embedding_allreduce_bytes(SMALL) == 3584 * 2
    assert logits_allgather_bytes(SMALL, 2) == 152_064 * 2 / 2
    assert logits_allgather_bytes(SMALL, 1) == 0


def test_ring_allreduce_time_is_2_t_minus_1_over_t_of_the_payload_plus_latency():
    nbytes = 1e6
    assert ring_allreduce_seconds(nbytes, 4, PCIE, 0.0) == pytest.approx(
        1.5 * nbytes / PCIE.bandwidth_bytes
    )
    assert ring_allreduce_seconds(nbytes, 4, PCIE, 1e-5) == pytest.approx(
        1.5 * nbytes / PCIE.bandwidth_bytes + 6e-5
    )
    assert ring_allreduce_seconds(nbytes, 1, PCIE) == 0
    with pytest.raises(ValueError):
        ring_allreduce_seconds(-1, 2, PCIE)


def test_one_gpu_is_the_plain_decode_bound():
    step = tp_decode_step(load_gpu("h100_sxm"), SMALL, 1, NVLINK, context=512, batch=4)
    plain = tpot_bound(load_gpu("h100_sxm"), SMALL, 512, batch=4)
    assert step.comm_s == 0
    assert step.seconds == pytest.approx(plain.seconds)
    assert weight_bytes_per_gpu(SMALL, 1) == streamed_weight_bytes(SMALL)
    assert weight_bytes_per_gpu_resident(SMALL, 1) == resident_weight_bytes(SMALL)


def test_split_weights_and_kv_shrink_t_fold_while_heads_split():
    for t in (2, 4):
        assert weight_bytes_per_gpu(SMALL, t) == pytest.approx(streamed_weight_bytes(SMALL) / t)
        assert kv_bytes_per_token_per_gpu(SMALL, t) == kv_bytes_per_token(SMALL) / t


def test_kv_heads_replicate_beyond_their_count():
    moe = load_moe_model("qwen3-30b-a3b")  # 32 query heads, 4 KV heads
    assert [kv_heads_per_gpu(moe, t) for t in (1, 2, 4, 8)] == [4, 2, 1, 1]
    assert kv_bytes_per_token_per_gpu(moe, 8) == kv_bytes_per_token_per_gpu(moe, 4)
    with pytest.raises(ValueError, match="query heads"):
        kv_heads_per_gpu(SMALL, 8)  # 28 query heads do not split 8 ways (vLLM asserts)


def test_communication_grows_with_t_and_batch():
    one = decode_comm_seconds(BIG, 2, NVLINK, batch=1)
    assert decode_comm_seconds(BIG, 8, NVLINK, batch=1) > one
    assert decode_comm_seconds(BIG, 2, NVLINK, batch=64) > one
    assert decode_comm_seconds(BIG, 2, PCIE, batch=64) > decode_comm_seconds(
        BIG, 2, NVLINK, batch=64
    )


def test_awq_shards_must_hold_whole_groups():
    awq_sized_like_bf16 = load_model("qwen2.5-7b-instruct-awq")  # 18,944 = 148 groups
    assert group_misaligned(awq_sized_like_bf16, 2) is None
    assert group_misaligned(awq_sized_like_bf16, 8) is not None  # 2,368 inputs: not whole groups
    padded = load_model("qwen2.5-72b-instruct-awq")
    assert padded.intermediate_size == 29_696
    assert all(group_misaligned(padded, t) is None for t in (1, 2, 4, 8))
    assert group_misaligned(BIG, 8) is None  # BF16 has no groups


def test_the_table_marks_what_cannot_run():
    table = rows()
    bf16_4090 = [r for r in table if r[0].key == "rtx_4090" and r[2].bits == 16]
    assert [r[4] is None for r in bf16_4090] == [True, True, True, False]
    for _, _, _, _, step, tokens, why in table:
        assert (step is None) == (why is not None)
        if step is not None:
            assert tokens > 0 and 0 <= step.comm_share < 1


def test_values_are_the_table():
    v = values()
    assert v["ar_bytes"] == "401,408"
    assert v["h100_bf16_t1_ms"] == "—"  # 72B BF16 does not fit one H100
    assert int(v["h100_bf16_best_t"]) in (2, 4, 8)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_chart_is_valid_svg_with_a_description(lang):
    root = ET.fromstring(chart.chart(lang))
    ns = "{http://www.w3.org/2000/svg}"
    assert root.find(f"{ns}title").text and root.find(f"{ns}desc").text
    assert len(root.findall(f"{ns}circle")) == sum(1 for r in rows() if r[4] is not None)


def test_of_the_power_of_two_sizes_the_7b_model_splits_1_2_or_4_ways():
    # the page: "of 1, 2, 4 and 8 it splits 1, 2 or 4 ways only"
    def splits(t):
        try:
            kv_heads_per_gpu(SMALL, t)
        except ValueError:
            return False
        return True

    assert [t for t in (1, 2, 4, 8) if splits(t)] == [1, 2, 4]


def test_a_pipeline_stage_hands_on_the_hidden_states_and_the_residual():
    # vLLM 0.26.0's Qwen2 returns IntermediateTensors of hidden_states and residual
    assert pipeline_bytes_per_token(BIG) == 2 * 8192 * 2
    assert values()["pp_hop_bytes"] == "32,768"
    hop = pipeline_hop_seconds(BIG, NVLINK, step_latency_s=0.0)
    assert hop == pytest.approx(32_768 / NVLINK.bandwidth_bytes)


def test_the_quoted_latency_term_is_2_t_minus_1_steps_alone():
    assert values()["ar_t8_us"] == f"{14 * ASSUMED_STEP_LATENCY_S * 1e6:.0f}"
    assert ring_allreduce_link_bytes(1000.0, 8) == 14_000.0
    assert ring_allreduce_link_bytes(1000.0, 1) == 0


def test_the_labs_bandwidth_only_floor_halves_at_batch_1_and_less_at_batch_32():
    # the page: at batch 1 it roughly halves with each doubling of TP; at batch 32 it shrinks less
    v = values()
    for small, large in ((1, 2), (2, 4)):
        b1 = float(v[f"lab_t{small}_b1_bw_ms"]) / float(v[f"lab_t{large}_b1_bw_ms"])
        b32 = float(v[f"lab_t{small}_b32_bw_ms"]) / float(v[f"lab_t{large}_b32_bw_ms"])
        assert 1.85 < b1 < 2.05
        assert b32 < 1.75
