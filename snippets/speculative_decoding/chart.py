"""Speculative decoding's speed-up against batch size, as inline SVG (no plotting library).

One curve per (GPU, weight format): batched_speedup with an n-gram draft (no GPU time), alpha and
gamma as in estimator.py, every sequence at the same context, batch 1 to 1,024. The dashed
horizontal line is 1x: below it, speculation costs throughput. Frame, axes and colours come from
the course's chart module, core.svgchart. Labels: main("zh") or main("en").

Run it: python snippets/speculative_decoding/chart.py en > speculative.svg
"""

import sys

from core import svgchart as svg
from core.display import in_language
from core.speculative import batched_speedup, break_even_batch
from speculative_decoding.estimator import ALPHA, CONTEXT, DRAFT_TOKENS, configurations

BATCHES = tuple(2**i for i in range(11))  # 1 .. 1,024
LABELS = {
    "zh": {
        "title": "推测解码的加速比随批大小变化"
        "（n-gram 草稿，α = {alpha}，γ = {gamma}，上下文 {context}，按下界计算）",
        "desc": "横轴是批大小（对数坐标），纵轴是有推测与无推测的吞吐之比。{series}",
        "series": "{name}：批大小 1 时 {first:.2f} 倍，批大小 {last} 时 {end:.2f} 倍，{where}",
        "break": "从批大小 {b} 起低于 1 倍",
        "never": "到批大小 {last} 仍高于 1 倍",
        "x_axis": "批大小 B（对数坐标）",
        "y_axis": "加速比（倍）",
        "even": "1 倍：不赚不亏",
    },
    "en": {
        "title": "Speculative decoding's speed-up against batch size (n-gram draft, α = {alpha}, "
        "γ = {gamma}, context {context}, from lower bounds)",
        "desc": "Batch size on a log axis; the vertical axis is throughput with speculation over "
        "throughput without. {series}",
        "series": "{name}: {first:.2f}x at batch 1, {end:.2f}x at batch {last}, {where}",
        "break": "below 1x from batch {b}",
        "never": "still above 1x at batch {last}",
        "x_axis": "Batch size B (log scale)",
        "y_axis": "Speed-up (x)",
        "even": "1x: break-even",
    },
}
MARGIN = {"left": 56, "right": 150, "top": 24, "bottom": 50}
X_DECADE, HEIGHT, Y_MAX = 150, 260, 4
COLOURS = {"rtx_4090": svg.LINK, "h100_sxm": svg.FOREGROUND}
DASHES = {"BF16": "", "AWQ": "6 4"}


def curves(alpha: float = ALPHA, gamma: int = DRAFT_TOKENS, context: int = CONTEXT):
    """(name, gpu key, format, [(batch, speed-up)], break-even batch) for every configuration."""
    out = []
    for g, m, f in configurations():
        short = f.name.split(" ")[0]
        points = [
            (
                b,
                batched_speedup(
                    g, m, batch=b, context=context, alpha=alpha, draft_tokens=gamma, fmt=f
                ),
            )
            for b in BATCHES
        ]
        end = break_even_batch(
            g, m, context=context, alpha=alpha, draft_tokens=gamma, fmt=f, largest=BATCHES[-1]
        )
        out.append((f"{g.name} {short}", g.key, short, points, end))
    return out


def chart(lang: str = "zh") -> str:
    text = in_language(LABELS, lang)
    data = curves()
    sx = svg.LogAxis(0, 3, MARGIN["left"], X_DECADE)
    bottom = MARGIN["top"] + HEIGHT
    sy = svg.LinearAxis(0, Y_MAX, bottom, MARGIN["top"])
    frame = svg.Frame.within(MARGIN, right=sx(BATCHES[-1]), bottom=bottom)
    described = []
    for name, _, _, points, end in data:
        where = (
            text["break"].format(b=f"{end:,}")
            if end is not None
            else text["never"].format(last=f"{BATCHES[-1]:,}")
        )
        described.append(
            text["series"].format(
                name=name,
                first=points[0][1],
                end=points[-1][1],
                last=f"{BATCHES[-1]:,}",
                where=where,
            )
        )
    title = text["title"].format(alpha=ALPHA, gamma=DRAFT_TOKENS, context=f"{CONTEXT:,}")
    desc = text["desc"].format(series="; ".join(described))
    out = svg.open_svg(frame, "speculative-chart", ("spec-title", "spec-desc"), title, desc)
    x_ticks = [(sx(b), f"{b:,}") for b in BATCHES]
    out += svg.x_ticks(frame, x_ticks) + svg.y_ticks(frame, sy.ticks(1))
    out += svg.axes(frame, text["x_axis"], text["y_axis"])
    out.append(
        svg.line(
            frame.left, sy(1), frame.right, sy(1), 'stroke="currentColor" stroke-dasharray="3 3"'
        )
    )
    out.append(svg.text(frame.right - 4, sy(1) - 6, text["even"], "end"))
    entries = []
    for name, key, short, points, _ in data:
        colour, dash = COLOURS.get(key, svg.FOREGROUND), DASHES.get(short, "")
        pixels = [(sx(b), sy(min(s, Y_MAX))) for b, s in points]
        out.append(svg.polyline(pixels, colour, dash=dash))
        entries.append((name, colour, dash))
    out += svg.legend(frame.right + 12, frame.top + 10, entries)  # the curves meet at the right
    return svg.close_svg(out)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
