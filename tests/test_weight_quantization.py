"""Weight formats as vLLM 0.26.0 runs them (core.quantization) and the weight-quantization lesson.

Expected figures are written out from first principles (bits per weight, bytes / bandwidth,
FLOPs / peak) or from the vLLM facts the lesson states (FP8 W8A8 from sm 8.9, Marlin W8A16 below),
so a change to the core that moves one fails here.
"""

import itertools
import math

import pytest

from core.formats import BF16, FP8, checkpoint_format, resident_weight_bytes, streamed_weight_bytes
from core.forward import decode_bytes, decode_flops, decode_matmul_params, prefill_flops
from core.gpus import GIB, load_gpus
from core.memory import MemoryBudget
from core.models import kv_bytes_per_token, load_model
from core.quantization import (
    FORMATS,
    FP8_W8A8_MIN_SM,
    FP8_W8A16,
    INT4_G128,
    as_run_on,
    bits_per_weight,
    format_cost,
    fp8_w8a8_supported,
    kv_room_bytes,
)
from core.roofline import critical_batch, tpot_bound

GPUS = load_gpus()
RTX, A100, H100 = GPUS["rtx_4090"], GPUS["a100_80gb_sxm"], GPUS["h100_sxm"]
QWEN = load_model("qwen2.5-7b-instruct")
QWEN_AWQ = load_model("qwen2.5-7b-instruct-awq")


# --- formats and where they run ---


def test_int4_g128_with_zeros_stores_4_156_bits_per_weight():
    assert bits_per_weight(INT4_G128) == 4 + 16 / 128 + 4 / 128
    assert f"{bits_per_weight(INT4_G128):.3f}" == "4.156"
    assert bits_per_weight(BF16) == 16 and bits_per_weight(FP8) == 8


def test_int4_g128_is_the_awq_checkpoints_layout_byte_for_byte():
    awq = checkpoint_format(QWEN_AWQ)
    assert resident_weight_bytes(QWEN, INT4_G128) == resident_weight_bytes(QWEN_AWQ, awq)
    assert streamed_weight_bytes(QWEN, INT4_G128) == streamed_weight_bytes(QWEN_AWQ, awq)


def test_every_card_has_a_compute_capability_and_fp8_peaks_match_sm_89():
    # gpus.toml lists an FP8 peak exactly for the cards vLLM runs W8A8 on
    for gpu in GPUS.values():
        assert gpu.sm is not None, gpu.key
        assert fp8_w8a8_supported(gpu) == (gpu.fp8_dense_tflops is not None), gpu.key


@pytest.mark.parametrize(
    "key, w8a8", [("rtx_4090", True), ("l40s", True), ("h100_sxm", True), ("a100_80gb_sxm", False)]
)
def test_fp8_is_w8a8_from_sm_89_and_weight_only_below(key, w8a8):
    run = as_run_on(GPUS[key], FP8)
    assert (run.activation_bits == 8) == w8a8
    assert run is (FP8 if w8a8 else FP8_W8A16)
    assert as_run_on(GPUS[key], INT4_G128) is INT4_G128  # weight-only everywhere


def test_a_card_without_a_compute_capability_is_an_error_naming_it():
    from dataclasses import replace

    with pytest.raises(ValueError, match="RTX 4090"):
        fp8_w8a8_supported(replace(RTX, compute_capability=None))


# --- bounds per format ---


@pytest.mark.parametrize("gpu", [RTX, A100, H100], ids=lambda g: g.key)
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_format_cost_is_bytes_over_bandwidth_and_flops_over_the_formats_peak(gpu, fmt):
    c = format_cost(gpu, QWEN, fmt, 1024, 2048)
    w8a8 = fmt.activation_bits == 8 and fp8_w8a8_supported(gpu)
    peak = (gpu.fp8_dense_tflops if w8a8 else gpu.bf16_dense_tflops) * 1e12
    assert c.decode.memory_s == pytest.approx(decode_bytes(QWEN, 1024, c.fmt) / gpu.bandwidth_bytes)
    assert c.prefill.compute_s == pytest.approx(prefill_flops(QWEN, 2048) / peak)
    assert c.ridge == pytest.approx(peak / gpu.bandwidth_bytes)
    assert c.critical_batch_weights == pytest.approx(
        c.ridge * c.streamed_bytes / (2 * decode_matmul_params(QWEN))
    )
    assert c.decode_tokens_per_s == pytest.approx(1 / c.decode.seconds)


def test_w4a16_keeps_the_16_bit_prefill_floor_and_w8a8_halves_it():
    bf16, fp8, int4 = (format_cost(RTX, QWEN, f, 1024, 2048) for f in FORMATS)
    assert not bf16.prefill.memory_bound  # 2,048 tokens: compute sets the floor
    assert int4.prefill.compute_s == bf16.prefill.compute_s
    assert fp8.prefill.compute_s == pytest.approx(bf16.prefill.compute_s / 2, rel=1e-3)
    # on the A100 FP8 is weight-only: same prefill floor as BF16
    a_bf16, a_fp8 = (format_cost(A100, QWEN, f, 1024, 2048) for f in (BF16, FP8))
    assert a_fp8.prefill.compute_s == a_bf16.prefill.compute_s


def test_batch_1_decode_floor_shrinks_with_the_bytes_read():
    floors = [format_cost(RTX, QWEN, f, 1024, 2048).decode for f in FORMATS]
    assert all(f.memory_bound for f in floors)
    assert floors[0].seconds > floors[1].seconds > floors[2].seconds
    ratio = streamed_weight_bytes(QWEN) / streamed_weight_bytes(QWEN, INT4_G128)
    # KV at 1,024 tokens keeps the ratio a little under the weights' ratio
    assert 3.0 < floors[0].seconds / floors[2].seconds < ratio


def test_w4a16_reaches_compute_bound_sooner_by_the_byte_ratio():
    bf16, int4 = (format_cost(RTX, QWEN, f, 0, 1) for f in (BF16, INT4_G128))
    ratio = streamed_weight_bytes(QWEN) / streamed_weight_bytes(QWEN, INT4_G128)
    assert bf16.critical_batch_weights / int4.critical_batch_weights == pytest.approx(ratio)
    # the 16-bit lm_head keeps it under 16 / 4.156
    assert ratio < 16 / bits_per_weight(INT4_G128)


def test_w8a8_doubles_the_ridge_so_kv_makes_the_critical_batch_vanish_sooner():
    bf16, fp8 = (format_cost(RTX, QWEN, f, 1024, 1) for f in (BF16, FP8))
    assert fp8.ridge == pytest.approx(2 * bf16.ridge, rel=1e-3)
    assert bf16.critical_batch_context is not None and fp8.critical_batch_context is None
    # on the A100 (weight-only) FP8 halves B*_0 instead, as INT4 does
    a_bf16, a_fp8 = (format_cost(A100, QWEN, f, 0, 1) for f in (BF16, FP8))
    assert a_fp8.critical_batch_weights < 0.6 * a_bf16.critical_batch_weights


def test_kv_room_is_the_engines_budget_after_the_weights():
    budget = MemoryBudget.for_gpu(RTX)
    for fmt in FORMATS:
        expected = budget.kv_bytes(resident_weight_bytes(QWEN, fmt))
        assert kv_room_bytes(RTX, QWEN, fmt) == pytest.approx(expected)
    q72 = load_model("qwen2.5-72b-instruct")
    assert kv_room_bytes(H100, q72, BF16) < 0  # 72B in BF16 does not fit one 80 GB card
    assert kv_room_bytes(H100, q72, INT4_G128) > 0


# --- the kv_bytes option the KV lesson adds to the bounds ---


def test_an_fp8_kv_cache_halves_the_kv_term_of_a_decode_step():
    kappa = kv_bytes_per_token(QWEN)
    full = decode_bytes(QWEN, 4096, batch=8)
    half = decode_bytes(QWEN, 4096, batch=8, kv_bytes=1)
    assert full - half == pytest.approx(kappa * 4096 * 8 / 2)
    t = tpot_bound(H100, QWEN, 4096, None, 8, kv_bytes=1)
    assert t.memory_s == pytest.approx(half / H100.bandwidth_bytes)
    assert t.compute_s == pytest.approx(decode_flops(QWEN, 8) / H100.peak_flops)


def test_an_fp8_kv_cache_at_twice_the_context_has_the_same_critical_batch():
    awq = checkpoint_format(QWEN_AWQ)
    once = critical_batch(RTX, QWEN_AWQ, 1024, awq)
    assert critical_batch(RTX, QWEN_AWQ, 2048, awq, kv_bytes=1) == pytest.approx(once)
    assert critical_batch(RTX, QWEN_AWQ, 2048, awq) is None


# --- the lesson's values and chart ---


def test_lesson_values_are_the_cores():
    from weight_quantization.values import values

    v = values()
    assert v["wq_int4_bits"] == "4.156"
    assert v["wq_a100_fp8_name"] == FP8_W8A16.name
    c = format_cost(RTX, QWEN, FP8, 1024, 2048)
    assert v["wq_rtx_fp8_tpot_ms"] == f"{c.decode.seconds * 1e3:.2f}"
    assert v["wq_rtx_fp8_bstar"] == "—"
    assert v["wq_fp8_gib"] == f"{resident_weight_bytes(QWEN, FP8) / GIB:.2f}"
    assert all(name.startswith("wq_") for name in v)


def test_published_accuracy_is_cited_with_url_and_date():
    from weight_quantization.accuracy import QWEN2_7B, QWEN25_7B_FP8

    for ev in (QWEN2_7B, QWEN25_7B_FP8):
        assert ev.url.startswith("https://") and len(ev.read_on) == 10
        assert ev.released_on is None or ev.released_on < ev.read_on
        for scores in ev.scores.values():
            assert len(scores) == len(ev.benchmarks)
            assert all(0 < s < 100 for s in scores)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_chart_draws_one_curve_per_format_with_hollow_points_where_kv_does_not_fit(lang):
    import xml.etree.ElementTree as ET

    from weight_quantization.chart import BATCHES, chart, curves

    svg = ET.fromstring(chart(lang))
    ns = "{http://www.w3.org/2000/svg}"
    assert len(svg.findall(f"{ns}polyline")) == len(FORMATS)
    circles = svg.findall(f"{ns}circle")
    assert len(circles) == len(FORMATS) * len(BATCHES)
    hollow = sum("bg-color" in c.get("style", "") for c in circles)
    data = curves()
    assert hollow == sum(sum(b > fits for b in BATCHES) for _, _, fits in data)
    for _, points, _ in data:
        for (b, t), (b2, t2) in itertools.pairwise(points):
            assert b2 > b and t2 >= t  # a bigger batch never makes a step faster
        assert math.isfinite(points[-1][1])
    assert svg.find(f"{ns}title").text and svg.find(f"{ns}desc").text


VLLM_PROBE = """
import json
from unittest import mock
from vllm.model_executor.layers.quantization import auto_awq, auto_gptq
from vllm.model_executor.kernels.linear.scaled_mm import marlin
awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}
names = {}
for platform, is_cpu in (("cpu", True), ("cuda", False)):
    with mock.patch.object(auto_awq.current_platform, "is_cpu", lambda: is_cpu):
        names[platform] = auto_awq.AutoAWQConfig.override_quantization_method(awq, None)
gptq = auto_gptq.AutoGPTQConfig.override_quantization_method({"quant_method": "gptq"}, None)
with mock.patch.object(marlin.current_platform, "is_cuda", lambda: True), mock.patch.object(
    marlin, "is_fp8_marlin_supported", lambda: True
):
    marlin_takes = {
        cc: marlin.MarlinFP8ScaledMMLinearKernel.is_supported(cc)[0] for cc in CAPABILITIES
    }
print("RESULT " + json.dumps([names, gptq, marlin_takes]))
"""


def test_vllm_names_awq_by_platform_and_runs_fp8_through_marlin_below_sm_89():
    """vLLM 0.26.0 itself, on the CPU with the platform checks patched: AWQ becomes auto_awq on
    CUDA only (None keeps the checkpoint's "awq"), GPTQ becomes auto_gptq everywhere, and the
    weight-only FP8 Marlin kernel takes exactly the cards below the core's W8A8 threshold."""
    from labs_env import probe

    capabilities = [75, 80, 86, 89, 90, 100, 120]
    names, gptq, marlin_takes = probe(f"CAPABILITIES = {capabilities}\n" + VLLM_PROBE)
    assert names == {"cpu": None, "cuda": "auto_awq"} and gptq == "auto_gptq"
    threshold = 10 * FP8_W8A8_MIN_SM[0] + FP8_W8A8_MIN_SM[1]
    assert {int(cc): takes for cc, takes in marlin_takes.items()} == {
        cc: cc < threshold for cc in capabilities
    }
