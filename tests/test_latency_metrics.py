"""The latency-metrics lesson: vllm bench serve's definitions, the roofline lower bounds, values."""

import dataclasses

import pytest

from latency_metrics.bounds import (
    AWQ_MODEL,
    BF16_MODEL,
    bounds_table,
    decode_bytes,
    decode_flops,
    e2e_bound_s,
    fits,
    layer_matmul_params,
    lm_head_params,
    ms,
    prefill_bytes,
    prefill_flops,
    prefill_memory_bound_below,
    resident_weight_bytes,
    streamed_weight_bytes,
    tpot_bound,
    ttft_bound,
    weight_bytes,
)
from latency_metrics.metrics import TRACE, StreamedRequest, percentile, summarize
from latency_metrics.values import values
from specs import GPU, load_gpus
from specs.models import load_model

GPUS = load_gpus()
RTX = GPUS["rtx_4090"]
BF16 = load_model(BF16_MODEL)
AWQ = load_model(AWQ_MODEL)


def request(times, tokens=None, name="r", sent=0.0, prompt=10):
    return StreamedRequest(name, sent, prompt, tuple(times), tuple(tokens or [1] * len(times)))


# --- metrics, as vllm/benchmarks/serve.py defines them ---


def test_tpot_excludes_the_first_token():
    r = request([0.100, 0.120, 0.140, 0.160])  # TTFT 100 ms, three more tokens 20 ms apart
    assert r.ttft_s == pytest.approx(0.100)
    assert r.e2e_s == pytest.approx(0.160)
    assert r.tpot_s == pytest.approx(0.020)  # (E2E - TTFT) / (4 - 1), not E2E / 4
    assert r.e2e_s == pytest.approx(r.ttft_s + (r.output_tokens - 1) * r.tpot_s)


def test_a_one_token_answer_has_no_tpot_and_stays_out_of_the_mean():
    one = request([0.05])
    assert one.tpot_s is None and one.itl_s == []
    run = summarize([one, request([0.1, 0.2, 0.3])])
    assert run["mean_tpot_s"] == pytest.approx(0.1)


def test_itl_counts_chunks_while_tpot_counts_tokens():
    r = request([0.1, 0.2, 0.3], tokens=[1, 3, 1])  # five tokens in three chunks
    assert r.itl_s == pytest.approx([0.1, 0.1])
    assert r.tpot_s == pytest.approx(0.2 / 4)


def test_itl_is_pooled_over_gaps_not_averaged_per_request():
    short = request([0.1, 0.2])  # one gap of 100 ms
    long = request([0.1, 0.11, 0.12, 0.13, 0.14])  # four gaps of 10 ms
    run = summarize([short, long])
    assert run["mean_itl_s"] == pytest.approx((0.1 + 4 * 0.01) / 5)
    assert run["mean_tpot_s"] == pytest.approx((0.1 + 0.01) / 2)


def test_throughput_divides_by_the_whole_run():
    a = request([0.1, 0.2], sent=0.0, prompt=100)
    b = request([0.1, 0.2, 0.3], sent=0.5, prompt=50)  # ends at 0.8 s
    run = summarize([a, b])
    assert run["duration_s"] == pytest.approx(0.8)
    assert run["output_throughput"] == pytest.approx(5 / 0.8)
    assert run["total_token_throughput"] == pytest.approx((5 + 150) / 0.8)
    assert run["request_throughput"] == pytest.approx(2 / 0.8)


def test_percentile_matches_numpy_linear_interpolation():
    values = [1.0, 2.0, 3.0, 4.0]
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 4.0
    assert percentile(values, 50) == pytest.approx(2.5)
    assert percentile(values, 99) == pytest.approx(3.97)
    assert percentile([7.0], 99) == 7.0


@pytest.mark.parametrize(
    ("times", "tokens", "match"),
    [
        ([], [], "at least one chunk"),
        ([0.1, 0.2], [1], "one token count per chunk"),
        ([0.0, 0.1], [1, 1], "positive and non-decreasing"),
        ([0.2, 0.1], [1, 1], "positive and non-decreasing"),
        ([0.1], [0], "at least 1"),
    ],
)
def test_bad_request_records_are_rejected_naming_the_request(times, tokens, match):
    with pytest.raises(ValueError, match=match) as error:
        StreamedRequest("bad-one", 0.0, 10, tuple(times), tuple(tokens))
    assert "bad-one" in str(error.value)


def test_bad_summaries_and_percentiles_are_rejected():
    with pytest.raises(ValueError, match="no requests"):
        summarize([])
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)
    with pytest.raises(ValueError, match="within"):
        percentile([1.0], 101)


def test_the_toy_trace_shows_what_the_lesson_says():
    by_name = {r.name: r for r in TRACE}
    assert max(by_name["B"].itl_s) > 5 * min(by_name["B"].itl_s)  # B stalls once
    assert by_name["C"].tpot_s < min(by_name["C"].itl_s)  # C got several tokens in one chunk
    run = summarize(TRACE)
    assert run["mean_itl_s"] != pytest.approx(run["mean_tpot_s"])
    assert run["total_token_throughput"] > 10 * run["output_throughput"]


# --- bytes and FLOPs of Qwen2.5-7B-Instruct ---


def test_bf16_weights_are_two_bytes_per_parameter():
    assert resident_weight_bytes(BF16) == 2 * BF16.params


def test_a_decode_step_reads_the_lm_head_but_only_one_embedding_row():
    parts = weight_bytes(BF16)
    assert parts["lm_head"] == parts["embedding"] == 152064 * 3584 * 2
    assert streamed_weight_bytes(BF16) == parts["layers"] + parts["lm_head"] + 3584 * 2


def test_tied_embeddings_are_read_once_as_the_lm_head():
    tied = dataclasses.replace(BF16, tie_word_embeddings=True)
    parts = weight_bytes(tied)
    assert parts["lm_head"] == 0
    assert streamed_weight_bytes(tied) == parts["layers"] + parts["embedding"]


def test_awq_bytes_match_the_published_checkpoint():
    # Qwen/Qwen2.5-7B-Instruct-AWQ ships shards of 4 GB and 1.57 GB (FACTS.md).
    assert resident_weight_bytes(AWQ) / 1e9 == pytest.approx(5.57, abs=0.01)
    # 4-bit weights + FP16 scales + 4-bit zeros per group of 128: 0.5 + 2/128 + 0.5/128 bytes each
    quantized = layer_matmul_params(AWQ) * (0.5 + 2 / 128 + 0.5 / 128)
    others = (AWQ.params - layer_matmul_params(AWQ)) * 2
    assert resident_weight_bytes(AWQ) == pytest.approx(quantized + others)


def test_unknown_quantization_and_bad_group_sizes_are_rejected():
    gptq = dataclasses.replace(AWQ, quantization={"method": "gptq", "bits": 4, "group_size": 128})
    with pytest.raises(ValueError, match="gptq"):
        weight_bytes(gptq)
    odd = dataclasses.replace(AWQ, quantization={**AWQ.quantization, "group_size": 100})
    with pytest.raises(ValueError, match="multiple of group size 100"):
        weight_bytes(odd)


def test_prefill_computes_logits_for_the_last_token_only():
    one, two = prefill_flops(BF16, 1), prefill_flops(BF16, 2)
    assert two - one == 2 * layer_matmul_params(BF16)
    assert one == decode_flops(BF16) == 2 * (layer_matmul_params(BF16) + lm_head_params(BF16))


def test_kv_bytes_grow_with_the_context():
    kappa = 2 * 28 * 4 * 128 * 2
    assert decode_bytes(BF16, 1000) - decode_bytes(BF16, 0) == 1000 * kappa
    assert prefill_bytes(BF16, 1000) == decode_bytes(BF16, 1000)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "8"])
def test_bad_lengths_are_rejected(bad):
    with pytest.raises(ValueError, match="prompt_len"):
        prefill_flops(BF16, bad)
    with pytest.raises(ValueError, match="prompt_len"):
        ttft_bound(RTX, BF16, bad)


def test_a_negative_context_is_rejected_but_zero_is_allowed():
    assert decode_bytes(BF16, 0) == streamed_weight_bytes(BF16)
    with pytest.raises(ValueError, match="context_len"):
        tpot_bound(RTX, BF16, -1)
    with pytest.raises(ValueError, match="new_tokens"):
        e2e_bound_s(RTX, BF16, 10, 0)


# --- the lower bounds ---


def test_tpot_bound_is_bytes_over_bandwidth_at_batch_one():
    b = tpot_bound(RTX, BF16, 128)
    assert b.memory_bound
    assert b.seconds == pytest.approx(decode_bytes(BF16, 128) / 1008e9)


def test_ttft_bound_turns_compute_bound_at_the_crossover():
    crossover = prefill_memory_bound_below(RTX, BF16)
    assert ttft_bound(RTX, BF16, int(crossover)).memory_bound
    assert not ttft_bound(RTX, BF16, int(crossover) + 1).memory_bound
    long = ttft_bound(RTX, BF16, 8192)
    assert long.seconds == pytest.approx(prefill_flops(BF16, 8192) / 165.2e12)


def test_e2e_bound_is_one_prefill_plus_n_minus_one_growing_steps():
    e2e = e2e_bound_s(RTX, BF16, 100, 3)
    steps = tpot_bound(RTX, BF16, 100).seconds + tpot_bound(RTX, BF16, 101).seconds
    assert e2e == pytest.approx(ttft_bound(RTX, BF16, 100).seconds + steps)
    assert e2e_bound_s(RTX, BF16, 100, 1) == ttft_bound(RTX, BF16, 100).seconds


def test_fits_marks_a_gpu_too_small_for_the_weights():
    small = GPU("toy", "Toy 8GB", 100, 1000, 8, "GDDR", "made up")
    assert not fits(small, BF16) and fits(small, AWQ)
    table = bounds_table(BF16, {"toy": small, "rtx_4090": RTX}, (128,))
    assert any(row.startswith("| Toy 8GB | ✗ 8 GB") for row in table)
    assert any(row.startswith("| RTX 4090 | ✓ 24 GB") for row in table)


def test_bounds_table_has_one_row_per_gpu_and_marks_memory_bound_prefill():
    table = bounds_table(BF16, GPUS)
    assert len(table) == 2 + len(GPUS)
    rtx_row = next(row for row in table if row.startswith("| RTX 4090 |"))
    assert rtx_row.count("†") == 1  # only the 128-token prefill is memory-bound on this card
    with pytest.raises(ValueError, match="prompt length"):
        bounds_table(BF16, GPUS, (0,))


def test_ms_keeps_three_significant_figures():
    assert [ms(s) for s in (0.002953, 0.01403, 0.6472, 1.5062)] == ["2.95", "14.0", "647", "1,506"]


# --- values and scripts ---


def test_values_are_strings_and_agree_with_the_first_lesson():
    v = values()
    assert all(isinstance(x, str) and x for x in v.values())
    from prefill_decode.values import values as first_lesson

    first = first_lesson()
    assert v["tpot_4090_ms"] == first["tpot_floor_ms"]
    assert v["step_bf16_gb"] == first["decode_step_gb"]
    assert float(v["quiz_tpot_ms"]) == pytest.approx(
        (float(v["quiz_e2e_s"]) * 1e3 - float(v["quiz_ttft_ms"])) / int(v["quiz_steps"])
    )
