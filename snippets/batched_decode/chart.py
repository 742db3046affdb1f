"""TPOT against output throughput as the decode batch grows, as inline SVG (no plotting library).

One curve per (GPU, weight format): the lower bound of a decode step at each batch size
B = 1, 2, 4, ..., 256 (batch_bound.step), every sequence at the same context. Each point is
(B / TPOT, TPOT): moving right is more tokens per second for the server, moving up is a slower
stream for each user. A diamond marks the critical batch B* where the step turns compute-bound;
a hollow marker is a batch whose KV cache does not fit next to the weights (vLLM's defaults).
The frame, axes, grid, notes and colours (which follow light and dark mode) come from the course's
chart module, core.svgchart; <title> and <desc> describe the chart to screen readers.
Labels: main("zh") or main("en").

Run it: python snippets/batched_decode/chart.py en > batched_decode.svg
"""

import sys
from dataclasses import dataclass

from batched_decode.batch_bound import BATCHES, CONTEXT, configurations, max_batch, step
from core import svgchart as svg
from core.display import in_language
from core.formats import WeightFormat
from core.gpus import GPU
from core.models import ModelSpec
from core.roofline import critical_batch, tpot_bound

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
COLOURS = {"rtx_4090": svg.LINK, "h100_sxm": svg.FOREGROUND}
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
    return in_language(LABELS, lang)


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
    (x0, x1), (y0, y1) = svg.decades(min(xs), max(xs)), svg.decades(min(ys), max(ys))
    bottom = MARGIN["top"] + (y1 - y0) * Y_DECADE
    sx = svg.LogAxis(x0, x1, MARGIN["left"], X_DECADE)  # output tokens/s
    sy = svg.LogAxis(y0, y1, bottom, -Y_DECADE)  # TPOT ms, upwards
    frame = svg.Frame.within(MARGIN, right=sx.end, bottom=bottom)

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
    ids = ("batched-title", "batched-desc")
    out = svg.open_svg(frame, "batched-decode-chart", ids, title, desc.strip())
    out += svg.x_ticks(frame, sx.ticks()) + svg.y_ticks(frame, sy.ticks())
    out += svg.axes(frame, text["x_axis"], text["y_axis"])
    for c in curves:
        colour = COLOURS.get(c.gpu_key, svg.FOREGROUND)
        points = [(sx(tps), sy(t * 1e3)) for _, tps, t in c.points]
        out.append(svg.polyline(points, colour, dash=DASHES.get(c.fmt_short, "")))
        for (b, _, _), (x, y) in zip(c.points, points, strict=True):
            fill = f"fill: {colour}" if b <= c.fits else f"fill: {svg.BACKGROUND}"
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
                f'L{x - 8:.1f} {y:.1f} Z" {svg.FILL} stroke="currentColor"/>'
            )
            out.append(svg.text(x - 10, y + 20, f"B*={c.critical:,.0f}", "end"))
        (x_first, y_first), (x_last, y_last) = points[0], points[-1]
        first_batch, last_batch = (
            text["batch"].format(b=p[0]) for p in (c.points[0], c.points[-1])
        )
        out.append(svg.text(x_last + 9, y_last + 4, f"{c.name} {last_batch}"))
        if c is curves[0]:  # the other curves start at B=1 too (the legend says so)
            out.append(svg.text(x_first + 8, y_first + 16, first_batch))
    legend = text["legend_batches"].format(batches=", ".join(map(str, batches)))
    out += svg.notes(frame, [f"{text['legend_critical']} · {text['legend_hollow']}", legend])
    return svg.close_svg(out)


def chart(lang: str, context: int = CONTEXT) -> str:
    curves = all_series(context)
    model = "Qwen2.5-7B-Instruct"
    title = labels(lang)["title"].format(model=model, context=f"{context:,}")
    return chart_svg(curves, lang, title)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
