"""The roofline lesson: ridge table, the build-time SVG chart, one linear layer's intensity."""

import inspect
import math
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from batched_decode.batch_bound import BF16_MODEL, GPU_KEYS
from conftest import ROOT
from core.formats import FP8, checkpoint_format
from core.forward import decode_bytes, decode_flops, prefill_bytes, prefill_flops
from core.gpus import load_gpus
from core.models import load_model
from core.roofline import critical_batch
from roofline.chart import (
    GPU_KEY,
    LABELS,
    MODEL_KEY,
    Point,
    chart,
    labels,
    main,
    roofline_svg,
    workload_points,
)
from roofline.gemm_intensity import SHAPE, gemm_intensity, intensity_limit, tokens_to_reach
from roofline.ridge_table import ridge_table
from roofline.values import longest_context_compute_bound, values

SVG = "{http://www.w3.org/2000/svg}"
GPUS = load_gpus()
RTX = GPUS["rtx_4090"]
QWEN = load_model("qwen2.5-7b-instruct")


# --- the table (the roof itself: tests/test_core.py) ---


def test_ridge_table_lists_every_gpu_sorted_with_its_source():
    rows = ridge_table(GPUS)
    assert len(rows) == 2 + len(GPUS)
    body = rows[2:]
    ridges = [float(row.split("|")[5]) for row in body]
    assert ridges == sorted(ridges)
    for gpu in GPUS.values():
        row = next(r for r in body if r.startswith(f"| {gpu.name} |"))
        assert row.rstrip(" |").endswith(gpu.source)
        assert f"| {gpu.ridge_point:.0f} |" in row


# --- the chart ---


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


@pytest.mark.parametrize("lang", sorted(LABELS))
def test_chart_is_valid_svg_with_title_and_description(lang):
    root = parse(chart(RTX, QWEN, lang))
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    ids = root.get("aria-labelledby").split()
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert [title.get("id"), desc.get("id")] == ids
    assert RTX.name in title.text and QWEN.name in title.text
    assert f"{RTX.ridge_point:.0f}" in desc.text


def test_chart_labels_follow_the_language():
    zh, en = chart(RTX, QWEN, "zh"), chart(RTX, QWEN, "en")
    assert "算术强度" in zh and "脊点" in zh and "Arithmetic intensity" not in zh
    assert "Arithmetic intensity" in en and "ridge point" in en and "脊点" not in en
    assert not [v for v in LABELS["zh"].values() if "batch" in v]  # the pages say 批大小
    assert re.sub(r">[^<]*<", "><", zh) == re.sub(r">[^<]*<", "><", en)  # same drawing


def test_chart_colours_follow_the_theme():
    svg = chart(RTX, QWEN, "en")
    colours = re.findall(r'(?:fill|stroke)="(#[0-9a-fA-F]+|[a-z]+)"', svg)
    assert set(colours) <= {"currentColor", "none"}, colours
    assert "var(--md-default-fg-color" in svg


def test_points_sit_on_the_roof_on_log_axes():
    points = [Point("a", 1.0, "decode"), Point("b", 1000.0, "prefill")]
    root = parse(roofline_svg(RTX, points, "en", "t"))
    rect, circle = root.find(f"{SVG}rect"), root.find(f"{SVG}circle")
    x_a, y_a = float(rect.get("x")) + 5, float(rect.get("y")) + 5
    x_b, y_b = float(circle.get("cx")), float(circle.get("cy"))
    # three decades apart on x; on y, from 1.008 TFLOP/s up to the 165.2 TFLOP/s peak
    decade = (x_b - x_a) / 3
    assert (y_a - y_b) / decade == pytest.approx(math.log10(165.2 / 1.008), rel=1e-3)


def test_workload_points_are_flops_over_bytes():
    points = workload_points(QWEN, "en", lengths=(128,), context=1024)
    assert [p.kind for p in points] == ["prefill", "decode"]
    assert points[0].intensity == pytest.approx(prefill_flops(QWEN, 128) / prefill_bytes(QWEN, 128))
    assert points[1].intensity == pytest.approx(decode_flops(QWEN) / decode_bytes(QWEN, 1024))
    assert points[1].intensity < 2 / 2  # BF16 decode never beats 2 FLOPs per 2-byte weight


@pytest.mark.parametrize("name", ["roofline.md", "roofline.en.md"])
def test_the_walkthrough_names_what_workload_points_calls(name):
    """The walkthrough once said workload_points divides prefill_flops by prefill_bytes itself; it
    calls the core's intensities, which a reader looking at the code should find named."""
    text = (ROOT / "docs" / "performance" / name).read_text(encoding="utf-8")
    bullet = re.search(r"^- \*\*`workload_points`\*\*.*$", text, re.M).group(0)
    called = set(re.findall(r"\b(\w+)\(", inspect.getsource(workload_points)))
    core_calls = {f for f in called if f.endswith("_intensity")}
    assert core_calls == {"prefill_intensity", "decode_intensity"}
    assert all(f"`{f}`" in bullet for f in core_calls), bullet


def test_chart_rejects_unknown_language_and_no_points():
    with pytest.raises(ValueError, match="lang must be one of"):
        labels("fr")
    with pytest.raises(ValueError, match="lang must be one of"):
        chart(RTX, QWEN, "fr")
    with pytest.raises(ValueError, match="no points"):
        roofline_svg(RTX, [], "en", "t")


def test_main_prints_the_chart_in_the_requested_language(capsys):
    main("en")
    assert "ridge point" in capsys.readouterr().out
    main("zh")
    assert "脊点" in capsys.readouterr().out


# --- one linear layer ---


def test_gemm_intensity_matches_the_formula_and_its_limits():
    assert gemm_intensity(1, 4, 4, 2) == pytest.approx(2 * 16 / ((16 + 4 + 4) * 2))
    d_in, d_out = 3584, 18944
    assert gemm_intensity(1, d_in, d_out) == pytest.approx(
        1.0, rel=1e-3
    )  # BF16, one token: about 1
    assert gemm_intensity(10**9, d_in, d_out) == pytest.approx(
        intensity_limit(d_in, d_out), rel=1e-4
    )


def test_tokens_to_reach_is_the_first_t_at_or_above_the_ridge():
    d_in, d_out, ridge = 3584, 18944, RTX.ridge_point
    t = tokens_to_reach(ridge, d_in, d_out)
    assert gemm_intensity(t, d_in, d_out) >= ridge > gemm_intensity(t - 1, d_in, d_out)
    assert (
        tokens_to_reach(intensity_limit(d_in, d_out) * 1.01, d_in, d_out) is None
    )  # above the limit: never


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: gemm_intensity(0, 4, 4), "tokens"),
        (lambda: gemm_intensity(1, 0, 4), "d_in, d_out"),
        (lambda: intensity_limit(4, 4, 0), "b > 0"),
        (lambda: tokens_to_reach(0, 4, 4), "ridge point must be positive"),
    ],
)
def test_bad_gemm_inputs_are_rejected(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- values and scripts ---


def test_values_are_strings_and_agree_with_the_gpu_table():
    v = values()
    assert all(isinstance(x, str) and x for x in v.values())
    assert v["ridge"] == f"{RTX.ridge_point:.0f}" == "164"
    assert v["short_prefill"] == "128" and v["long_prefill"] == "8,192"
    # issue 9: the chart's 1,024-token prefill is the core's 941 FLOP/byte, as everywhere else
    prefill_1024 = workload_points(QWEN, "en", lengths=(1024,))[0]
    assert f"{prefill_1024.intensity:.0f}" == "941"
    assert v["decode_intensity"] == f"{decode_flops(QWEN) / decode_bytes(QWEN, 1024):.2f}"
    assert int(v["gemm_tokens_to_ridge"]) == tokens_to_reach(RTX.ridge_point, 3584, 18944)


def test_the_chart_script_takes_the_language_as_an_argument():
    script = ROOT / "snippets" / "roofline" / "chart.py"
    proc = subprocess.run(
        [sys.executable, str(script), "en"], capture_output=True, text=True, check=True
    )
    assert "Arithmetic intensity" in proc.stdout


def test_an_fp8_chart_draws_the_fp8_roof_its_table_uses():
    """The playground draws the chart beside FP8 bounds that use the FP8 peak: the roof, the ridge
    and the text for screen readers must use it too."""
    h100, qwen = load_gpus()["h100_sxm"], load_model("qwen2.5-7b-instruct")
    svg = chart(h100, qwen, "en", lengths=[300], context=300, fmt=FP8)
    assert "at 1979 TFLOP/s" in svg and "ridge point, 591 FLOP/byte" in svg
    assert "at 989.5 TFLOP/s" in chart(h100, qwen, "en", lengths=[300], context=300)


def test_the_batch_self_test_uses_the_batched_decode_lessons_card_and_model():
    # roofline's Q3 quotes batched_decode's critical batch and vanishing context next to its own
    # figures: both lessons must mean the same GPU and checkpoint
    assert (GPU_KEYS[0], BF16_MODEL) == (GPU_KEY, MODEL_KEY)


def test_a_batch_at_the_gemm_ridge_is_compute_bound_only_at_short_context():
    gpu, model = load_gpus()[GPU_KEY], load_model(MODEL_KEY)
    batch = tokens_to_reach(gpu.ridge_point, *SHAPE)
    limit = longest_context_compute_bound(gpu, model, batch)
    fmt = checkpoint_format(model)
    assert 0 < limit < 1024
    assert (
        critical_batch(gpu, model, limit, fmt) <= batch < critical_batch(gpu, model, limit + 1, fmt)
    )
