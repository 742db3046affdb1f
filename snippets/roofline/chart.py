"""A roofline chart as inline SVG, built from plain strings: log-log axes, no plotting library.

The frame (axes, grid, colours that follow light and dark mode, <title> and <desc> for screen
readers) is the course's one chart module, core.svgchart; this file draws the roof, the ridge
point and the workload on it. Labels come in the page's language: main("zh") or main("en").

Run it: python snippets/roofline/chart.py en > roofline.svg
"""

import math
import sys
from dataclasses import dataclass
from html import escape

from core import svgchart as svg
from core.display import in_language
from core.formats import WeightFormat
from core.gpus import GPU, load_gpus
from core.models import ModelSpec, load_model
from core.reference import BF16_MODEL
from core.roofline import (
    attainable_flops,
    compute_peak,
    decode_intensity,
    prefill_intensity,
    ridge_point,
)

GPU_KEY = "rtx_4090"
MODEL_KEY = BF16_MODEL
PREFILL_LENGTHS = (16, 128, 1024, 8192)
DECODE_CONTEXT = 1024

LABELS = {
    "zh": {
        "title": "{gpu} 的 Roofline：{model} 的预填充与解码（批大小为 1）",
        "desc": (
            "对数坐标。横轴是算术强度（FLOP/字节），纵轴是可达算力（TFLOP/s）。带宽上限是一条斜线，"
            "算力上限是 {peak} TFLOP/s 的水平线，两者交于脊点 {ridge} FLOP/字节。{points}"
        ),
        "point": "{label}：强度 {intensity} FLOP/字节，至多 {perf} TFLOP/s",
        "separator": "；",
        "full_stop": "。",
        "x_axis": "算术强度（FLOP/字节，对数坐标）",
        "y_axis": "可达算力（TFLOP/s，对数坐标）",
        "memory_roof": "带宽上限 {bw} GB/s",
        "compute_roof": "算力上限 {peak} TFLOP/s",
        "ridge": "脊点 {ridge}",
        "prefill": "预填充 S={n}",
        "decode": "解码 上下文={n}",
    },
    "en": {
        "title": "Roofline of the {gpu}: prefill and decode of {model} (batch 1)",
        "desc": (
            "Log-log axes. The horizontal axis is arithmetic intensity (FLOP/byte), the vertical "
            "axis attainable performance (TFLOP/s). The bandwidth ceiling is a slanted line, the "
            "compute ceiling a flat line at {peak} TFLOP/s; they meet at the ridge point, "
            "{ridge} FLOP/byte. {points}"
        ),
        "point": "{label}: intensity {intensity} FLOP/byte, at most {perf} TFLOP/s",
        "separator": "; ",
        "full_stop": ".",
        "x_axis": "Arithmetic intensity (FLOP/byte, log scale)",
        "y_axis": "Attainable performance (TFLOP/s, log scale)",
        "memory_roof": "bandwidth ceiling {bw} GB/s",
        "compute_roof": "compute ceiling {peak} TFLOP/s",
        "ridge": "ridge point {ridge}",
        "prefill": "prefill S={n}",
        "decode": "decode context={n}",
    },
}

DECADE_PX = 90  # one power of ten on either axis: equal scales make the bandwidth roof 45 degrees
MARGIN = {"left": 72, "right": 24, "top": 24, "bottom": 58}


@dataclass(frozen=True)
class Point:
    label: str
    intensity: float  # FLOP per byte
    kind: str  # "prefill" (circle) or "decode" (square)


def labels(lang: str) -> dict[str, str]:
    return in_language(LABELS, lang)


def workload_points(
    model: ModelSpec,
    lang: str,
    lengths=PREFILL_LENGTHS,
    context: int = DECODE_CONTEXT,
    fmt: WeightFormat | None = None,
) -> list[Point]:
    """Prefill at each prompt length and one decode step, as (FLOPs / bytes) of the whole pass;
    `fmt` is how the weights are stored (default: the model's checkpoint)."""
    text = labels(lang)
    points = [
        Point(text["prefill"].format(n=f"{s:,}"), prefill_intensity(model, s, fmt), "prefill")
        for s in lengths
    ]
    decode = decode_intensity(model, context, fmt)
    points.append(Point(text["decode"].format(n=f"{context:,}"), decode, "decode"))
    return points


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.2f}"


def roofline_svg(
    gpu: GPU, points: list[Point], lang: str, title: str, fmt: WeightFormat | None = None
) -> str:
    """The SVG markup: roofline of `gpu` (its FP8 peak for a W8A8 `fmt`), ridge point, and each
    point placed on the roof. The frame, axes and grid come from core.svgchart."""
    text = labels(lang)
    if not points:
        raise ValueError("nothing to plot: no points")
    ridge = ridge_point(gpu, fmt)
    intensities = [p.intensity for p in points] + [ridge]
    x0, x1 = svg.decades(min(intensities) / 2, max(intensities) * 2)
    peak_t = compute_peak(gpu, fmt) / 1e12
    y0, y1 = svg.decades(attainable_flops(gpu, 10.0**x0, fmt) / 1e12, peak_t * 2)
    bottom = MARGIN["top"] + (y1 - y0) * DECADE_PX
    sx = svg.LogAxis(x0, x1, MARGIN["left"], DECADE_PX)  # intensity, FLOP/byte
    sy = svg.LogAxis(y0, y1, bottom, -DECADE_PX)  # attainable TFLOP/s, upwards
    frame = svg.Frame.within(MARGIN, right=sx.end, bottom=bottom)

    def roof(intensity: float) -> float:
        return attainable_flops(gpu, intensity, fmt) / 1e12

    key = escape(gpu.key)
    point_text = text["separator"].join(
        text["point"].format(
            label=p.label, intensity=_number(p.intensity), perf=_number(roof(p.intensity))
        )
        for p in points
    )
    desc = text["desc"].format(
        peak=f"{peak_t:g}", ridge=f"{ridge:.0f}", points=point_text + text["full_stop"]
    )
    ids = (f"roofline-title-{key}", f"roofline-desc-{key}")
    out = svg.open_svg(frame, "roofline-chart", ids, title, desc)
    out += svg.x_ticks(frame, sx.ticks()) + svg.y_ticks(frame, sy.ticks())
    out += svg.axes(frame, text["x_axis"], text["y_axis"])
    # the roof: bandwidth slope up to the ridge, then flat at peak compute
    left, right = 10.0**x0, 10.0**x1
    roof_line = [(sx(left), sy(roof(left))), (sx(ridge), sy(peak_t)), (sx(right), sy(peak_t))]
    out.append(svg.polyline(roof_line, svg.LINK, width=3))
    along = 10 ** (math.log10(left) + 0.3 * (math.log10(ridge) - math.log10(left)))
    bandwidth = text["memory_roof"].format(bw=f"{gpu.memory_bandwidth_gbs:,.0f}")
    out.append(svg.text(sx(along) - 10, sy(roof(along)) - 10, bandwidth, "middle", rotate=-45))
    ceiling = text["compute_roof"].format(peak=f"{peak_t:g}")
    out.append(svg.text(sx(right) - 4, sy(peak_t) - 12, ceiling, "end"))
    # the ridge point
    out.append(svg.vertical_rule(sx(ridge), sy(peak_t), bottom, "4 4"))
    out.append(svg.text(sx(ridge) + 6, bottom - 8, text["ridge"].format(ridge=f"{ridge:.0f}")))
    # the workload: circles for prefill, squares for decode, each on the roof at its intensity
    for i, p in enumerate(points):
        x, y = sx(p.intensity), sy(roof(p.intensity))
        if p.kind == "decode":
            out.append(
                f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" '
                f'style="fill: {svg.ACCENT}" stroke="currentColor"/>'
            )
        else:
            out.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" style="fill: {svg.ACCENT}" '
                'stroke="currentColor"/>'
            )
        if p.kind == "decode":  # below-right: the slope's left-hand side holds its own label
            lx, ly, anchor = x + 9, y + 18, "start"
        elif p.intensity < ridge:  # above the slope, where the chart is empty
            lx, ly, anchor = x - 10, y - 8, "end"
        else:  # under the flat roof, staggered so neighbours do not collide
            lx, ly, anchor = x + 8, y + 18 + 14 * (i % 2), "start"
        out.append(svg.text(lx, ly, p.label, anchor))
    return svg.close_svg(out)


def chart(gpu: GPU, model: ModelSpec, lang: str, **points) -> str:
    """The roofline of `gpu` with `model`'s prefill and decode points, titled in `lang`."""
    title = labels(lang)["title"].format(gpu=gpu.name, model=model.name)
    fmt = points.get("fmt")
    return roofline_svg(gpu, workload_points(model, lang, **points), lang, title, fmt)


def main(lang: str = "zh") -> None:
    print(chart(load_gpus()[GPU_KEY], load_model(MODEL_KEY), lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
