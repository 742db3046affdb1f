"""A roofline chart as inline SVG, built from plain strings: log-log axes, no plotting library.

The chart uses the page's text colour (currentColor) and Material's CSS variables, so it follows
light and dark mode; <title> and <desc> describe it to screen readers. Labels come in the page's
language: main("zh") or main("en").

Run it: python snippets/roofline/chart.py en > roofline.svg
"""

import math
import sys
from dataclasses import dataclass
from html import escape

from core.formats import WeightFormat
from core.gpus import GPU, load_gpus
from core.models import ModelSpec, load_model
from core.roofline import (
    attainable_flops,
    compute_peak,
    decode_intensity,
    prefill_intensity,
    ridge_point,
)

GPU_KEY = "rtx_4090"
MODEL_KEY = "qwen2.5-7b-instruct"
PREFILL_LENGTHS = (16, 128, 1024, 8192)
DECODE_CONTEXT = 1024

LABELS = {
    "zh": {
        "title": "{gpu} 的 Roofline：{model} 的预填充与解码（batch 为 1）",
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
    if lang not in LABELS:
        raise ValueError(f"lang must be one of {sorted(LABELS)}, got {lang!r}")
    return LABELS[lang]


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


def _tick(value: float) -> str:
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _decades(low: float, high: float) -> tuple[int, int]:
    return math.floor(math.log10(low)), math.ceil(math.log10(high))


def loglog_grid(
    sx, sy, x_decades: tuple[int, int], y_decades: tuple[int, int], corner: tuple, bottom: float
) -> list[str]:
    """Grid lines and tick labels, one per power of ten, of a log-log chart whose plot area starts
    at `corner` (left, top) and ends at `bottom` and the last x decade. The course's charts share
    it (roofline, batched decode)."""
    (x0, x1), (y0, y1), (left, top) = x_decades, y_decades, corner
    fg = 'fill="currentColor"'
    out = []
    for e in range(x0, x1 + 1):
        x = sx(10.0**e)
        out.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" '
            'stroke="currentColor" stroke-opacity="0.15"/>'
        )
        out.append(
            f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle" {fg}>{_tick(10.0**e)}</text>'
        )
    for e in range(y0, y1 + 1):
        y = sy(10.0**e)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{sx(10.0**x1):.1f}" y2="{y:.1f}" '
            'stroke="currentColor" stroke-opacity="0.15"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" {fg}>{_tick(10.0**e)}</text>'
        )
    return out


def roofline_svg(
    gpu: GPU, points: list[Point], lang: str, title: str, fmt: WeightFormat | None = None
) -> str:
    """The SVG markup: roofline of `gpu` (its FP8 peak for a W8A8 `fmt`), ridge point, and each
    point placed on the roof."""
    text = labels(lang)
    if not points:
        raise ValueError("nothing to plot: no points")
    ridge = ridge_point(gpu, fmt)
    intensities = [p.intensity for p in points] + [ridge]
    x0, x1 = _decades(min(intensities) / 2, max(intensities) * 2)
    peak_t = compute_peak(gpu, fmt) / 1e12
    y0, y1 = _decades(attainable_flops(gpu, 10.0**x0, fmt) / 1e12, peak_t * 2)
    width = MARGIN["left"] + (x1 - x0) * DECADE_PX + MARGIN["right"]
    height = MARGIN["top"] + (y1 - y0) * DECADE_PX + MARGIN["bottom"]
    bottom = MARGIN["top"] + (y1 - y0) * DECADE_PX

    def sx(intensity: float) -> float:
        return MARGIN["left"] + (math.log10(intensity) - x0) * DECADE_PX

    def sy(tflops: float) -> float:
        return bottom - (math.log10(tflops) - y0) * DECADE_PX

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
    fg = 'fill="currentColor"'
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" role="img" '
        f'aria-labelledby="roofline-title-{key} roofline-desc-{key}" '
        'class="roofline-chart" style="max-width: 100%; height: auto; '
        'color: var(--md-default-fg-color, #222); font-size: 12px">',
        f'<title id="roofline-title-{key}">{escape(title)}</title>',
        f'<desc id="roofline-desc-{key}">{escape(desc)}</desc>',
    ]
    # grid and tick labels, one per decade
    out += loglog_grid(sx, sy, (x0, x1), (y0, y1), (MARGIN["left"], MARGIN["top"]), bottom)
    # axes and their titles
    out.append(
        f'<path d="M{MARGIN["left"]} {MARGIN["top"]} V{bottom} H{sx(10.0**x1):.1f}" '
        'fill="none" stroke="currentColor"/>'
    )
    mid_x = (MARGIN["left"] + sx(10.0**x1)) / 2
    out.append(
        f'<text x="{mid_x:.1f}" y="{height - 14}" text-anchor="middle" {fg}>'
        f"{escape(text['x_axis'])}</text>"
    )
    mid_y = (MARGIN["top"] + bottom) / 2
    out.append(
        f'<text transform="translate(18 {mid_y:.1f}) rotate(-90)" text-anchor="middle" {fg}>'
        f"{escape(text['y_axis'])}</text>"
    )
    # the roof: bandwidth slope up to the ridge, then flat at peak compute
    left, right = 10.0**x0, 10.0**x1
    roof_color = "var(--md-typeset-a-color, #3f51b5)"  # the link colour: lighter in dark mode
    out.append(
        f'<polyline points="{sx(left):.1f},{sy(roof(left)):.1f} {sx(ridge):.1f},{sy(peak_t):.1f} '
        f'{sx(right):.1f},{sy(peak_t):.1f}" fill="none" stroke-width="3" '
        f'style="stroke: {roof_color}"/>'
    )
    along = 10 ** (math.log10(left) + 0.3 * (math.log10(ridge) - math.log10(left)))
    out.append(
        f'<text transform="translate({sx(along) - 10:.1f} {sy(roof(along)) - 10:.1f}) rotate(-45)" '
        f'text-anchor="middle" {fg}>'
        f"{escape(text['memory_roof'].format(bw=f'{gpu.memory_bandwidth_gbs:,.0f}'))}</text>"
    )
    out.append(
        f'<text x="{sx(right) - 4:.1f}" y="{sy(peak_t) - 12:.1f}" text-anchor="end" {fg}>'
        f"{escape(text['compute_roof'].format(peak=f'{peak_t:g}'))}</text>"
    )
    # the ridge point
    out.append(
        f'<line x1="{sx(ridge):.1f}" y1="{sy(peak_t):.1f}" x2="{sx(ridge):.1f}" y2="{bottom}" '
        'stroke="currentColor" stroke-dasharray="4 4"/>'
    )
    out.append(
        f'<text x="{sx(ridge) + 6:.1f}" y="{bottom - 8}" {fg}>'
        f"{escape(text['ridge'].format(ridge=f'{ridge:.0f}'))}</text>"
    )
    # the workload: circles for prefill, squares for decode, each on the roof at its intensity
    accent = "var(--md-accent-fg-color, #526cfe)"
    for i, p in enumerate(points):
        x, y = sx(p.intensity), sy(roof(p.intensity))
        if p.kind == "decode":
            out.append(
                f'<rect x="{x - 5:.1f}" y="{y - 5:.1f}" width="10" height="10" '
                f'style="fill: {accent}" stroke="currentColor"/>'
            )
        else:
            out.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" style="fill: {accent}" '
                'stroke="currentColor"/>'
            )
        if p.kind == "decode":  # below-right: the slope's left-hand side holds its own label
            lx, ly, anchor = x + 9, y + 18, "start"
        elif p.intensity < ridge:  # above the slope, where the chart is empty
            lx, ly, anchor = x - 10, y - 8, "end"
        else:  # under the flat roof, staggered so neighbours do not collide
            lx, ly, anchor = x + 8, y + 18 + 14 * (i % 2), "start"
        out.append(
            f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" {fg}>{escape(p.label)}</text>'
        )
    out.append("</svg>")
    return "\n".join(out)


def chart(gpu: GPU, model: ModelSpec, lang: str, **points) -> str:
    """The roofline of `gpu` with `model`'s prefill and decode points, titled in `lang`."""
    title = labels(lang)["title"].format(gpu=gpu.name, model=model.name)
    fmt = points.get("fmt")
    return roofline_svg(gpu, workload_points(model, lang, **points), lang, title, fmt)


def main(lang: str = "zh") -> None:
    print(chart(load_gpus()[GPU_KEY], load_model(MODEL_KEY), lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
