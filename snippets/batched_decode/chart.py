"""TPOT against output throughput as the decode batch grows, as inline SVG (no plotting library).

One curve per (GPU, weight format): the lower bound of a decode step at each batch size
B = 1, 2, 4, ..., 256 (batch_bound.step), every sequence at the same context. Each point is
(B / TPOT, TPOT): moving right is more tokens per second for the server, moving up is a slower
stream for each user. A diamond marks the critical batch B* where the step turns compute-bound;
a hollow marker is a batch whose KV cache does not fit next to the weights (vLLM's defaults).
Colours follow the page (currentColor, Material's CSS variables), so light and dark mode work;
<title> and <desc> describe the chart to screen readers. Labels: main("zh") or main("en").

Run it: python snippets/batched_decode/chart.py en > batched_decode.svg
"""

import math
import sys
from dataclasses import dataclass
from html import escape

from batched_decode.batch_bound import BATCHES, CONTEXT, configurations, max_batch, step
from core.formats import WeightFormat
from core.gpus import GPU
from core.models import ModelSpec
from core.roofline import critical_batch, tpot_bound
from roofline.chart import loglog_grid

LABELS = {
    "zh": {
        "title": "{model} 解码：TPOT 与输出吞吐随批大小变化（上下文 {context} token，下界）",
        "desc": (
            "对数坐标。横轴是输出吞吐（token/s），纵轴是 TPOT（ms），都是下界。"
            "每条曲线是一种 GPU 与权重格式的组合，"
            "从左下方的批大小 {first} 走到右上方的批大小 {last}。{series}"
        ),
        "series": (
            "{name}：批大小 {first} 时 TPOT {tpot_first} ms、{tps_first} token/s，"
            "批大小 {last} 时 TPOT {tpot_last} ms、{tps_last} token/s；"
            "{critical}；KV 缓存最多容纳 {fits} 条序列"
        ),
        "critical": "临界批大小 {b}",
        "no_critical": "没有临界批大小（始终带宽受限）",
        "separator": "。",
        "x_axis": "输出吞吐（token/s，对数坐标）",
        "y_axis": "TPOT 下界（ms，对数坐标）",
        "legend_batches": "每条曲线从左到右：B = {batches}",
        "legend_critical": "◆ 临界批大小 B*",
        "legend_hollow": "空心点：KV 缓存放不下",
        "batch": "B={b}",
    },
    "en": {
        "title": "{model} decode: TPOT against output throughput as the batch grows "
        "(context {context} tokens, lower bounds)",
        "desc": (
            "Log-log axes. The horizontal axis is output throughput (tokens/s), the vertical "
            "axis TPOT (ms), both bounds. Each curve is one GPU and weight format, from batch "
            "size {first} at the lower left to batch size {last} at the upper right. {series}"
        ),
        "series": (
            "{name}: at batch {first}, TPOT {tpot_first} ms and {tps_first} tokens/s; "
            "at batch {last}, TPOT {tpot_last} ms and {tps_last} tokens/s; {critical}; "
            "the KV cache holds at most {fits} sequences"
        ),
        "critical": "critical batch {b}",
        "no_critical": "no critical batch (memory-bound at every size)",
        "separator": ". ",
        "x_axis": "Output throughput (tokens/s, log scale)",
        "y_axis": "TPOT lower bound (ms, log scale)",
        "legend_batches": "each curve, left to right: B = {batches}",
        "legend_critical": "◆ critical batch B*",
        "legend_hollow": "hollow: KV cache does not fit",
        "batch": "B={b}",
    },
}

X_DECADE, Y_DECADE = 120, 150
MARGIN = {"left": 64, "right": 150, "top": 24, "bottom": 58}
COLOURS = {"rtx_4090": "var(--md-typeset-a-color, #3f51b5)", "h100_sxm": "currentColor"}
DASHES = {"BF16": "", "AWQ": "6 4"}


@dataclass(frozen=True)
class Series:
    name: str  # "RTX 4090 BF16"
    gpu_key: str
    fmt_short: str  # "BF16" or "AWQ"
    points: tuple[tuple[int, float, float], ...]  # (batch, tokens/s, TPOT s)
    fits: int  # sequences whose KV cache fits
    critical: float | None  # B*, where compute time meets memory time
    critical_point: tuple[float, float] | None  # (tokens/s, TPOT s) at B*


def labels(lang: str) -> dict[str, str]:
    if lang not in LABELS:
        raise ValueError(f"lang must be one of {sorted(LABELS)}, got {lang!r}")
    return LABELS[lang]


def series(
    gpu: GPU, model: ModelSpec, fmt: WeightFormat, context: int = CONTEXT, batches=BATCHES
) -> Series:
    short = fmt.name.split(" ")[0]
    points = []
    for b in batches:
        s = step(gpu, model, fmt, context, b)
        points.append((b, s.tokens_per_s, s.tpot_s))
    b_star = critical_batch(gpu, model, context, fmt)
    at = None
    if b_star is not None and batches[0] <= b_star <= batches[-1]:
        tpot = b_star * tpot_bound(gpu, model, context, fmt, 1).compute_s  # compute = memory
        at = (b_star / tpot, tpot)
    return Series(
        f"{gpu.name} {short}",
        gpu.key,
        short,
        tuple(points),
        max_batch(gpu, model, fmt, context),
        b_star,
        at,
    )


def all_series(context: int = CONTEXT) -> list[Series]:
    return [series(g, m, f, context) for g, m, f in configurations()]


def chart_svg(curves: list[Series], lang: str, title: str) -> str:
    text = labels(lang)
    if not curves:
        raise ValueError("nothing to plot: no series")
    xs = [p[1] for c in curves for p in c.points]
    ys = [p[2] * 1e3 for c in curves for p in c.points]
    x0, x1 = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)))
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    width = MARGIN["left"] + (x1 - x0) * X_DECADE + MARGIN["right"]
    bottom = MARGIN["top"] + (y1 - y0) * Y_DECADE
    height = bottom + MARGIN["bottom"]
    right = MARGIN["left"] + (x1 - x0) * X_DECADE

    def sx(tps: float) -> float:
        return MARGIN["left"] + (math.log10(tps) - x0) * X_DECADE

    def sy(ms: float) -> float:
        return bottom - (math.log10(ms) - y0) * Y_DECADE

    def fmt_ms(seconds: float) -> str:
        return f"{seconds * 1e3:.2f}"

    described = []
    for c in curves:
        first, last = c.points[0], c.points[-1]
        crit = (
            text["critical"].format(b=f"{c.critical:,.0f}")
            if c.critical is not None
            else text["no_critical"]
        )
        described.append(
            text["series"].format(
                name=c.name,
                tpot_first=fmt_ms(first[2]),
                tps_first=f"{first[1]:,.0f}",
                tpot_last=fmt_ms(last[2]),
                tps_last=f"{last[1]:,.0f}",
                critical=crit,
                fits=f"{c.fits:,}",
                first=first[0],
                last=last[0],
            )
        )
    batches = [p[0] for p in curves[0].points]
    desc = text["desc"].format(
        series=text["separator"].join(described) + text["separator"],
        first=batches[0],
        last=batches[-1],
    )
    fg = 'fill="currentColor"'
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" role="img" aria-labelledby="batched-title batched-desc" '
        'class="batched-decode-chart" style="max-width: 100%; height: auto; '
        'color: var(--md-default-fg-color, #222); font-size: 12px">',
        f'<title id="batched-title">{escape(title)}</title>',
        f'<desc id="batched-desc">{escape(desc.strip())}</desc>',
    ]
    out += loglog_grid(sx, sy, (x0, x1), (y0, y1), (MARGIN["left"], MARGIN["top"]), bottom)
    out.append(
        f'<path d="M{MARGIN["left"]} {MARGIN["top"]} V{bottom} H{right:.1f}" '
        'fill="none" stroke="currentColor"/>'
    )
    out.append(
        f'<text x="{(MARGIN["left"] + right) / 2:.1f}" y="{height - 14}" text-anchor="middle" '
        f"{fg}>{escape(text['x_axis'])}</text>"
    )
    out.append(
        f'<text transform="translate(16 {(MARGIN["top"] + bottom) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" {fg}>{escape(text["y_axis"])}</text>'
    )
    for c in curves:
        colour = COLOURS.get(c.gpu_key, "currentColor")
        dash = DASHES.get(c.fmt_short, "")
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        coords = " ".join(f"{sx(tps):.1f},{sy(t * 1e3):.1f}" for _, tps, t in c.points)
        out.append(
            f'<polyline points="{coords}" fill="none" stroke-width="2"{dash_attr} '
            f'style="stroke: {colour}"/>'
        )
        for b, tps, t in c.points:
            x, y = sx(tps), sy(t * 1e3)
            fill = f"fill: {colour}" if b <= c.fits else "fill: var(--md-default-bg-color, #fff)"
            style = f'style="{fill}; stroke: {colour}" stroke-width="1.5"'
            if c.gpu_key == "h100_sxm":
                out.append(f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" {style}/>')
            else:
                out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" {style}/>')
        if c.critical_point is not None:
            tps, t = c.critical_point
            x, y = sx(tps), sy(t * 1e3)
            out.append(
                f'<path d="M{x:.1f} {y - 8:.1f} L{x + 8:.1f} {y:.1f} L{x:.1f} {y + 8:.1f} '
                f'L{x - 8:.1f} {y:.1f} Z" {fg} stroke="currentColor"/>'
            )
            out.append(
                f'<text x="{x - 10:.1f}" y="{y + 20:.1f}" text-anchor="end" {fg}>'
                f"B*={c.critical:,.0f}</text>"
            )
        first, last = c.points[0], c.points[-1]
        out.append(
            f'<text x="{sx(last[1]) + 9:.1f}" y="{sy(last[2] * 1e3) + 4:.1f}" {fg}>'
            f"{escape(c.name)} {text['batch'].format(b=last[0])}</text>"
        )
        if c is curves[0]:  # the other curves start at B=1 too (the legend says so)
            out.append(
                f'<text x="{sx(first[1]) + 8:.1f}" y="{sy(first[2] * 1e3) + 16:.1f}" {fg}>'
                f"{text['batch'].format(b=first[0])}</text>"
            )
    out.append(
        f'<text x="{MARGIN["left"] + 8}" y="{MARGIN["top"] + 14}" {fg}>'
        f"{escape(text['legend_critical'])} · {escape(text['legend_hollow'])}</text>"
    )
    out.append(
        f'<text x="{MARGIN["left"] + 8}" y="{MARGIN["top"] + 30}" {fg}>'
        f"{escape(text['legend_batches'].format(batches=', '.join(map(str, batches))))}</text>"
    )
    out.append("</svg>")
    return "\n".join(out)


def chart(lang: str, context: int = CONTEXT) -> str:
    curves = all_series(context)
    model = "Qwen2.5-7B-Instruct"
    title = labels(lang)["title"].format(model=model, context=f"{context:,}")
    return chart_svg(curves, lang, title)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
