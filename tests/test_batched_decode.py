"""The batched-decode lesson: the step bound against the core, the critical batch, the chart,
the recorded-runs table, the lab's defaults and the batch sweep's checks in verify_labs."""

import ast
import copy
import itertools
import json
import math
import xml.etree.ElementTree as ET

import jsonschema
import pytest

import verify_labs  # scripts/verify_labs.py
from batched_decode import chart, lab_results
from batched_decode.batch_bound import (
    BATCHES,
    CONTEXT,
    batch_for_kv_ceiling_share,
    compute_ceiling_tokens_per_s,
    configurations,
    kv_ceiling_share,
    kv_ceiling_tokens_per_s,
    max_batch,
    mfu_ceiling,
    step,
    vanishing_context,
)
from batched_decode.values import values
from conftest import ROOT
from core import roofline
from core.formats import FP8, checkpoint_format, resident_weight_bytes, streamed_weight_bytes
from core.forward import decode_matmul_params
from core.gpus import load_gpus
from core.memory import MemoryBudget
from core.models import kv_bytes_per_token, load_model
from core.roofline import critical_batch, decode_intensity_limit
from lab_docs import QWEN_BF16, RTX_4090, results_doc

SVG = "{http://www.w3.org/2000/svg}"
GPUS = load_gpus()
RTX, H100 = GPUS["rtx_4090"], GPUS["h100_sxm"]
QWEN = load_model("qwen2.5-7b-instruct")
QWEN_AWQ = load_model("qwen2.5-7b-instruct-awq")
AWQ = checkpoint_format(QWEN_AWQ)
BF16 = checkpoint_format(QWEN)
CONFIGS = configurations()


# --- the step bound, written out from the core's primitives ---


@pytest.mark.parametrize("gpu, model, fmt", CONFIGS, ids=lambda c: getattr(c, "key", None))
@pytest.mark.parametrize("batch", [1, 7, 64, 256])
def test_step_is_the_max_of_compute_and_memory_time(gpu, model, fmt, batch):
    s = step(gpu, model, fmt, CONTEXT, batch)
    m, kappa = decode_matmul_params(model), kv_bytes_per_token(model)
    w = streamed_weight_bytes(model, fmt)
    assert s.compute_s == pytest.approx(2 * batch * m / gpu.peak_flops)
    assert s.memory_s == pytest.approx((w + batch * kappa * CONTEXT) / gpu.bandwidth_bytes)
    assert s.tpot_s == max(s.compute_s, s.memory_s)
    assert s.tokens_per_s == pytest.approx(batch / s.tpot_s)
    assert s.intensity == pytest.approx(2 * batch * m / (w + batch * kappa * CONTEXT))


@pytest.mark.parametrize("gpu, model, fmt", CONFIGS)
def test_throughput_grows_and_tpot_never_falls_with_the_batch(gpu, model, fmt):
    steps = [step(gpu, model, fmt, CONTEXT, b) for b in BATCHES]
    for a, b in itertools.pairwise(steps):
        assert b.tokens_per_s > a.tokens_per_s
        assert b.tpot_s >= a.tpot_s
        # below both ceilings, whatever the batch
        assert b.tokens_per_s <= compute_ceiling_tokens_per_s(gpu, model, fmt) * (1 + 1e-12)
        assert b.tokens_per_s < kv_ceiling_tokens_per_s(gpu, model, CONTEXT)


def test_intensity_levels_off_at_the_core_limit():
    limit = decode_intensity_limit(QWEN, CONTEXT)
    intensities = [step(RTX, QWEN, BF16, CONTEXT, b).intensity for b in (1, 10, 10**3, 10**6)]
    assert intensities == sorted(intensities)
    assert all(i < limit for i in intensities)
    assert intensities[-1] == pytest.approx(limit, rel=1e-3)
    assert intensities[0] == pytest.approx(1.0, rel=0.01)  # BF16, batch 1: about 2M / 2M


def test_critical_batch_is_where_compute_meets_memory():
    b_star = critical_batch(RTX, QWEN_AWQ, CONTEXT, AWQ)
    assert b_star is not None
    below, above = (
        step(RTX, QWEN_AWQ, AWQ, CONTEXT, math.floor(b_star)),
        step(RTX, QWEN_AWQ, AWQ, CONTEXT, math.ceil(b_star)),
    )
    assert below.memory_bound and not above.memory_bound
    # with no KV, BF16's critical batch is the ridge point (W = 2M)
    assert critical_batch(RTX, QWEN, 0, BF16) == pytest.approx(RTX.ridge_point, rel=1e-3)


@pytest.mark.parametrize("gpu", [RTX, H100])
def test_critical_batch_vanishes_at_the_vanishing_context(gpu):
    s = vanishing_context(gpu, QWEN, BF16)
    assert critical_batch(gpu, QWEN, math.floor(s), BF16) is not None
    assert critical_batch(gpu, QWEN, math.ceil(s), BF16) is None
    assert decode_intensity_limit(QWEN, math.ceil(s)) <= gpu.ridge_point


def test_fp8_w8a8_runs_against_the_fp8_peak():
    # twice the H100's 16-bit peak: the compute ceiling doubles, the vanishing context halves
    ratio = compute_ceiling_tokens_per_s(H100, QWEN, FP8) / compute_ceiling_tokens_per_s(
        H100, QWEN, BF16
    )
    assert ratio == pytest.approx(2.0)
    assert vanishing_context(H100, QWEN, FP8) == pytest.approx(
        vanishing_context(H100, QWEN, BF16) / 2
    )


def test_h100_kv_ceiling_lies_below_its_compute_ceiling_at_the_page_context():
    assert critical_batch(H100, QWEN, CONTEXT, BF16) is None
    assert kv_ceiling_tokens_per_s(H100, QWEN, CONTEXT) < compute_ceiling_tokens_per_s(
        H100, QWEN, BF16
    )


@pytest.mark.parametrize("gpu, model, fmt", CONFIGS)
def test_max_batch_is_the_most_sequences_whose_kv_fits(gpu, model, fmt):
    n = max_batch(gpu, model, fmt, CONTEXT)
    budget = MemoryBudget.for_gpu(gpu)
    room = budget.kv_bytes(resident_weight_bytes(model, fmt))
    kappa = kv_bytes_per_token(model)
    assert n * CONTEXT * kappa <= room
    assert (n + 1) * CONTEXT * kappa > room - budget.block_size * kappa  # whole blocks only


def test_mfu_ceiling_is_compute_over_memory_time_while_memory_bound():
    s = step(RTX, QWEN, BF16, CONTEXT, 16)
    assert s.memory_bound
    assert mfu_ceiling(RTX, QWEN, BF16, s) == pytest.approx(s.compute_s / s.memory_s)
    s = step(RTX, QWEN_AWQ, AWQ, CONTEXT, 256)
    assert not s.memory_bound and mfu_ceiling(RTX, QWEN_AWQ, AWQ, s) == pytest.approx(1.0)


# --- the chart ---


@pytest.mark.parametrize("lang", sorted(chart.LABELS))
def test_chart_is_valid_svg_with_title_desc_and_every_point(lang):
    root = ET.fromstring(chart.chart(lang))
    assert root.find(f"{SVG}title").text.strip()
    desc = root.find(f"{SVG}desc").text
    curves = chart.all_series()
    for c in curves:
        assert c.name in desc
    assert len(root.findall(f"{SVG}polyline")) == len(curves)
    markers = root.findall(f"{SVG}circle") + root.findall(f"{SVG}rect")
    assert len(markers) == sum(len(c.points) for c in curves)
    hollow = [m for m in markers if "md-default-bg-color" in m.get("style", "")]
    assert len(hollow) == sum(1 for c in curves for b, *_ in c.points if b > c.fits)
    diamonds = [p for p in root.findall(f"{SVG}path") if p.get("d", "").endswith("Z")]
    assert len(diamonds) == sum(1 for c in curves if c.critical_point is not None)


def test_chart_marks_only_the_critical_batches_inside_the_sweep():
    by_name = {c.name: c for c in chart.all_series()}
    assert by_name["RTX 4090 AWQ"].critical_point is not None
    assert by_name["RTX 4090 BF16"].critical_point is None  # B* above 256
    assert by_name["H100 SXM BF16"].critical is None  # none at all
    tps, _ = by_name["RTX 4090 AWQ"].critical_point
    assert tps == pytest.approx(compute_ceiling_tokens_per_s(RTX, QWEN_AWQ, AWQ))


def test_chart_labels_differ_by_language_and_reject_unknown_ones():
    assert chart.chart("zh") != chart.chart("en")
    with pytest.raises(ValueError, match="lang"):
        chart.labels("fr")


# --- values ---


def test_values_are_strings_and_quote_the_core():
    v = values()
    assert all(isinstance(x, str) for x in v.values())
    assert v["bstar_awq"] == f"{critical_batch(RTX, QWEN_AWQ, CONTEXT, AWQ):,.0f}"
    assert v["bstar_bf16"] == f"{critical_batch(RTX, QWEN, CONTEXT, BF16):,.0f}"
    assert v["transfer_bstar_long"] == "—"
    assert v["bf16_fits"] == f"{max_batch(RTX, QWEN, BF16, CONTEXT):,}"


# --- the lab: defaults, recorded runs, verify_labs ---


def lab_constants() -> dict[str, object]:
    tree = ast.parse((ROOT / "labs/batched_decode/batch_sweep.py").read_text(encoding="utf-8"))
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id in {"BATCHES", "PROMPT_TOKENS", "NEW_TOKENS", "SHORT_NEW_TOKENS"}
    }


def test_page_quotes_the_labs_own_defaults():
    c = lab_constants()
    assert tuple(c["BATCHES"]) == lab_results.LAB_BATCHES
    assert c["PROMPT_TOKENS"] == lab_results.LAB_PROMPT_TOKENS
    assert c["NEW_TOKENS"] == lab_results.LAB_NEW_TOKENS
    assert c["SHORT_NEW_TOKENS"] == lab_results.LAB_SHORT_NEW_TOKENS


def synthetic_run(
    batches=(1, 2, 4, 8), tpot_ms=(20.0, 20.2, 20.5, 21.0), gpu="rtx_4090", overlapped=True
):
    """A GPU batch_sweep document with a known shape (a test input, never written to labs/):
    every decode step of a batch takes its tpot_ms, so the two calls differ by exactly that."""
    prompt, new, short = 512, 128, 64
    measurements, summaries = [], []
    for b, t in zip(batches, tpot_ms, strict=True):
        tpot = t / 1e3
        for _ in range(b):
            measurements.append(
                {
                    "series": "batch_sweep",
                    "label": f"batch {b}",
                    "repeat": 0,
                    "prompt_tokens": prompt,
                    "new_tokens": new,
                    "wall_s": 3.0,
                    "ttft_s": 0.1,
                    "queue_s": 0.0,
                    "prefill_s": 0.1,
                    "decode_s": tpot * (new - 1),
                    "tpot_s": tpot,
                    "cached_tokens": 0,
                }
            )
        span = 0.1 + tpot * (new - 1)
        summaries.append(
            {
                "batch": b,
                "repeat": 0,
                "tpot_s": tpot,
                "decode_step_s": tpot,
                "decode_window_s": tpot * (new - 1),
                "short_decode_window_s": tpot * (short - 1),
                "short_all_running": overlapped,
                "output_tokens_per_s": b * new / span,
                "span_s": span,
                "wall_s": span,
            }
        )
    return results_doc(
        "batch_sweep",
        {
            "max_model_len": prompt + new,
            "enable_prefix_caching": False,
            "warmup": 1,
            "repeats": 1,
            "batches": list(batches),
            "prompt_tokens": prompt,
            "new_tokens": new,
            "short_new_tokens": short,
            "max_num_seqs": max(batches),
        },
        measurements,
        device=RTX_4090 | {"slug": gpu},
        model=QWEN_BF16,
        batch_summaries=summaries,
    )


def test_synthetic_run_is_valid_and_passes_every_claim():
    doc = synthetic_run()
    assert verify_labs.schema_errors(doc) == []
    checks = verify_labs.checks_for(doc, [], 0.3)
    status = {c.name: c.status for c in checks}
    assert status["completeness"] == "PASS", checks
    assert status["full-batch decode step measured"] == "PASS", checks
    assert status["output throughput grows with the batch size"] == "PASS", checks
    assert status["TPOT nearly flat up to B=8"] == "PASS", checks
    assert status["every TPOT at or above its lower bound"] == "PASS", checks


def test_schema_requires_batch_summaries_only_for_the_batch_sweep():
    doc = synthetic_run()
    del doc["batch_summaries"]
    assert any("batch_summaries" in e for e in verify_labs.schema_errors(doc))


def test_verify_labs_catches_a_missing_request_and_a_tpot_below_the_bound():
    doc = synthetic_run()
    doc["measurements"].pop()
    assert verify_labs.claims_module("batched_decode").batch_completeness(doc).status == "FAIL"
    fast = synthetic_run(tpot_ms=(1.0, 1.0, 1.0, 1.0))  # faster than reading the weights allows
    checks = {c.name: c for c in verify_labs.checks_for(fast, [], 0.3)}
    assert checks["every TPOT at or above its lower bound"].status == "FAIL"
    steep = synthetic_run(tpot_ms=(20.0, 30.0, 45.0, 80.0))  # TPOT grows nearly with B
    checks = {c.name: c for c in verify_labs.checks_for(steep, [], 0.3)}
    assert checks["TPOT nearly flat up to B=8"].status == "FAIL"
    assert checks["output throughput grows with the batch size"].status == "FAIL"


def test_the_claims_use_the_full_batch_step_and_need_the_short_call_to_overlap():
    doc = synthetic_run()
    for s in doc["batch_summaries"]:  # requests' TPOT inflated by shared prefill steps
        s["tpot_s"] *= s["batch"]
    checks = {c.name: c for c in verify_labs.checks_for(doc, [], 0.3)}
    assert checks["TPOT nearly flat up to B=8"].status == "PASS"
    assert "1: 20.0 ms" in checks["TPOT nearly flat up to B=8"].detail  # the step, not tpot_s
    apart = synthetic_run(overlapped=False)
    checks = {c.name: c for c in verify_labs.checks_for(apart, [], 0.3)}
    assert checks["full-batch decode step measured"].status == "FAIL"
    assert "--short-new-tokens" in checks["full-batch decode step measured"].detail


def test_lab_results_says_no_run_is_recorded_without_numbers(tmp_path, capsys):
    lab_results.main("en", tmp_path / "labs" / "results")
    out = capsys.readouterr().out
    assert "No batch-sweep run is recorded yet" in out
    assert not any(ch.isdigit() for ch in out)


def test_lab_results_tables_a_recorded_run_beside_its_bounds(tmp_path, capsys):
    results = tmp_path / "labs" / "results"
    (results / "rtx_4090").mkdir(parents=True)
    doc = synthetic_run()
    (results / "rtx_4090" / "batch_sweep-x.json").write_text(json.dumps(doc), encoding="utf-8")
    lab_results.main("en", results)
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [r.split(" | ")[0] for r in rows] == ["| 1", "| 2", "| 4", "| 8"]
    bound = roofline.batch_tpot_bound_s(RTX, QWEN, BF16, 512, 128, 8, after=64)
    assert rows[-1].split(" | ")[2] == f"{bound * 1e3:,.2f}"  # the steps the difference measures
    assert bound > step(RTX, QWEN, BF16, 512, 8).tpot_s  # mean over growing contexts


def test_results_schema_is_still_valid_json_schema():
    schema = verify_labs.results_schema()  # labs/results/schema.json with every lab's part
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "batch_sweep" in copy.deepcopy(schema)["properties"]["lab"]["enum"]


def test_the_h100_only_approaches_its_kv_ceiling_and_cannot_reach_90_percent():
    """Issue 26, defect 5: at batch 256 the bound is 52 % of the KV ceiling; 90 % needs
    B = 9 W / (kappa S), more than the sequences that fit, so about 81 % is the most attainable."""
    _, _, (h100, bf16, fmt), _ = configurations()
    assert kv_ceiling_share(h100, bf16, fmt, CONTEXT, 256) == pytest.approx(0.52, abs=0.005)
    fits = max_batch(h100, bf16, fmt, CONTEXT)
    near = batch_for_kv_ceiling_share(bf16, fmt, CONTEXT, 0.9)
    assert near == pytest.approx(
        9 * streamed_weight_bytes(bf16, fmt) / (kv_bytes_per_token(bf16) * CONTEXT)
    )
    assert near > fits
    assert kv_ceiling_share(h100, bf16, fmt, CONTEXT, round(near)) == pytest.approx(0.9, abs=1e-3)
    assert kv_ceiling_share(h100, bf16, fmt, CONTEXT, fits) == pytest.approx(0.81, abs=0.005)
    v = values()
    assert v["h100_kv_share_last"] == "52%" and v["h100_kv_share_at_fits"] == "81%"
    with pytest.raises(ValueError, match="share"):
        batch_for_kv_ceiling_share(bf16, fmt, CONTEXT, 1.0)
