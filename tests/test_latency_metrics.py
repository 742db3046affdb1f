"""The latency-metrics lesson: vllm bench serve's definitions, the roofline lower bounds, values."""

import re

import pytest

from conftest import DOCS
from core.display import ms
from core.gpus import GPU, load_gpus
from core.models import load_model
from core.reference import AWQ_MODEL, BF16_MODEL, PROMPT_LENGTHS
from latency_metrics.bounds import bounds_table
from latency_metrics.metrics import (
    TOY_SLO_MS,
    TRACE,
    StreamedRequest,
    goodput,
    meets_slos,
    percentile,
    summarize,
    total_to_output_ratio,
)
from latency_metrics.values import values

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


# --- goodput and the throughput ratio ---


def test_a_request_is_good_when_every_given_slo_holds():
    r = request([0.125, 0.25, 0.375])  # TTFT 125 ms, TPOT 125 ms, E2E 375 ms (exact in binary)
    assert meets_slos(r, {"ttft": 125, "tpot": 125, "e2el": 375})  # at the limit counts as met
    assert not meets_slos(r, {"ttft": 124})
    assert not meets_slos(r, {"ttft": 200, "tpot": 124})
    assert meets_slos(request([0.05]), {"tpot": 0})  # one token: vLLM's TPOT of 0


@pytest.mark.parametrize("slos", [{}, {"itl": 50}, {"ttft": 100, "latency": 1}], ids=str)
def test_slo_names_are_those_vllm_bench_serve_accepts(slos):
    with pytest.raises(ValueError, match="SLO names must be some of"):
        meets_slos(request([0.1]), slos)


def test_goodput_counts_good_requests_over_the_whole_run():
    # A: TTFT 120 ms > 100; B: TPOT (295 - 60) / 9 = 26.1 ms > 20; C: 50 ms, 11.7 ms: good
    assert [meets_slos(r, TOY_SLO_MS) for r in TRACE] == [False, False, True]
    assert goodput(TRACE, TOY_SLO_MS) == pytest.approx(1 / 0.315)  # B ends last, at 315 ms
    assert goodput(TRACE, {"e2el": 1000}) == pytest.approx(summarize(TRACE)["request_throughput"])


def test_total_over_output_throughput_is_prompt_plus_output_over_output():
    assert total_to_output_ratio(1024, 128) == 9  # the bench's random dataset defaults
    assert total_to_output_ratio(0, 5) == 1
    run = summarize(TRACE)
    prompts, outputs = sum(r.prompt_tokens for r in TRACE), sum(r.output_tokens for r in TRACE)
    assert run["total_token_throughput"] / run["output_throughput"] == pytest.approx(
        total_to_output_ratio(prompts, outputs)
    )
    with pytest.raises(ValueError, match="output tokens >= 1"):
        total_to_output_ratio(10, 0)


# --- the bounds table (the bounds themselves: tests/test_core.py) ---


def test_fits_marks_a_gpu_too_small_for_the_weights():
    small = GPU("toy", "Toy 8GB", 100, 1000, 8, "GDDR", "made up")
    table = bounds_table(BF16, {"toy": small, "rtx_4090": RTX}, (128,))
    assert any(row.startswith("| Toy 8GB | ✗ 8 GB") for row in table)
    assert any(row.startswith("| RTX 4090 | ✓ 24 GB") for row in table)
    assert any(row.startswith("| Toy 8GB | ✓ 8 GB") for row in bounds_table(AWQ, {"toy": small}))


def test_bounds_table_has_one_row_per_gpu_and_marks_memory_bound_prefill():
    table = bounds_table(BF16, GPUS)
    assert len(table) == 2 + len(GPUS)
    assert table[0].count("TTFT ≥") == table[0].count("TPOT ≥") == len(PROMPT_LENGTHS)
    rtx_row = next(row for row in table if row.startswith("| RTX 4090 |"))
    assert rtx_row.count("†") == 1  # only the 128-token prefill is memory-bound on this card
    with pytest.raises(ValueError, match="prompt_len"):
        bounds_table(BF16, GPUS, (0,))


def test_the_rtx_4090_row_of_the_bf16_table():
    row = next(r for r in bounds_table(BF16, GPUS) if r.startswith("| RTX 4090 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # TTFT at 1,024 and 8,192: (2 x layer matmul weights x S + 2 x lm_head) / 165.2 TFLOP/s;
    # TPOT at 128: (14,141,245,440 + 57,344 x 128) / 1008 GB/s
    matmul = 28 * (2 * 3584 * 3584 + 2 * 3584 * 512 + 3 * 3584 * 18944)
    lm_head = 152064 * 3584
    assert cells[3:5] == [ms((2 * matmul * s + 2 * lm_head) / 165.2e12) for s in (1024, 8192)]
    assert cells[2].endswith("†") and cells[5] == "14.0"


# --- values ---


def test_values_are_strings_and_the_quiz_adds_up():
    v = values()
    assert all(isinstance(x, str) and x for x in v.values())
    assert float(v["quiz_tpot_ms"]) == pytest.approx(
        (float(v["quiz_e2e_s"]) * 1e3 - float(v["quiz_ttft_ms"])) / int(v["quiz_steps"])
    )


def test_values_state_the_figures_issue_9_settled():
    v = values()
    assert (v["step_bf16_gb"], v["step_awq_gb"], v["awq_speedup"]) == ("14.14", "4.48", "3.2")
    assert v["prefill_memory_bound_below"] == "178"  # one crossover for the whole course
    assert v["random_total_ratio"] == "9" and v["bench_awq_speedup"] == "1.76"
    assert (v["tpot_4090_ms"], v["tpot_4090_awq_ms"]) == ("14.0", "4.45")
    assert v["toy_good_requests"] == "1" and v["toy_goodput_req_s"] == "3.17"


@pytest.mark.parametrize("name", ["latency_metrics.md", "latency_metrics.en.md"])
def test_each_metric_acronym_is_introduced_before_the_formulas_use_it(name):
    """The formulas write TTFT, TPOT, E2E and ITL; the zh intuition named the end-to-end latency
    without its acronym, so E2E first appeared inside a formula."""
    text = (DOCS / "foundations" / name).read_text(encoding="utf-8")
    intuition = text[: text.index("{#mental-model}")]
    for acronym in ("TTFT", "TPOT", "E2E", "ITL"):
        assert re.search(rf"[（(][^）)]*\b{acronym}[）)]", intuition), f"{name}: {acronym}"
