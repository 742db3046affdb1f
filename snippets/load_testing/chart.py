"""p50 and p99 TTFT against request rate (sweep.py's simulation), as inline SVG.

Linear request-rate axis, logarithmic TTFT axis; one solid line per percentile for Poisson
arrivals, dashed for bursty ones, named in a legend on the right; a vertical line marks the
simulated capacity. Colours follow the
page (currentColor, Material's CSS variables); <title> and <desc> describe the chart to screen
readers. Labels: main("zh") or main("en").

Run it: python snippets/load_testing/chart.py en > load_testing.svg
"""

import math
import sys
from html import escape

from load_testing.sweep import BURSTY, RATES, Point, capacity, sweep

LABELS = {
    "zh": {
        "title": "模拟：TTFT 的 p50 与 p99 随请求速率变化（每步耗时取下界）",
        "desc": (
            "横轴是请求速率（请求/秒，线性），纵轴是 TTFT（秒，对数坐标）。竖线是模拟得到的容量 "
            "{cap} 请求/秒。{series}"
        ),
        "series": "{name}：速率 {first} 时 {v_first} s，速率 {last} 时 {v_last} s",
        "separator": "；",
        "end": "。",
        "x_axis": "请求速率（请求/秒）",
        "y_axis": "TTFT（s，对数坐标）",
        "poisson": "泊松",
        "bursty": "突发（gamma {b}）",
        "capacity": "容量 {cap}",
    },
    "en": {
        "title": "Simulation: p50 and p99 TTFT against request rate (step times = lower bounds)",
        "desc": (
            "The horizontal axis is the request rate (requests/s, linear), the vertical axis TTFT "
            "(seconds, log scale). The vertical line is the simulated capacity, {cap} requests/s. "
            "{series}"
        ),
        "series": "{name}: {v_first} s at rate {first}, {v_last} s at rate {last}",
        "separator": "; ",
        "end": ".",
        "x_axis": "Request rate (requests/s)",
        "y_axis": "TTFT (s, log scale)",
        "poisson": "Poisson",
        "bursty": "bursty (gamma {b})",
        "capacity": "capacity {cap}",
    },
}
WIDTH, HEIGHT = 720, 360
MARGIN = {"left": 64, "right": 210, "top": 20, "bottom": 50}
COLOURS = {"p50": "var(--md-typeset-a-color, #3f51b5)", "p99": "currentColor"}


def labels(lang: str) -> dict[str, str]:
    if lang not in LABELS:
        raise ValueError(f"lang must be one of {sorted(LABELS)}, got {lang!r}")
    return LABELS[lang]


def curves(lang: str) -> list[tuple[str, str, str, list[tuple[float, float]]]]:
    """(name, percentile, dash, [(rate, TTFT s)]) for each line."""
    text = labels(lang)
    out = []
    for b, dash in ((1.0, ""), (BURSTY, "6 4")):
        kind = text["poisson"] if b == 1.0 else text["bursty"].format(b=f"{b:g}")
        points: tuple[Point, ...] = sweep(b)
        out.append((f"{kind} p99", "p99", dash, [(p.rate, p.ttft_p99_s) for p in points]))
        out.append((f"{kind} p50", "p50", dash, [(p.rate, p.ttft_p50_s) for p in points]))
    return out


def chart(lang: str) -> str:
    text = labels(lang)
    lines = curves(lang)
    cap, _ = capacity()
    ys = [v for *_, pts in lines for _, v in pts]
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    x0, x1 = 0.0, math.ceil(max(RATES))
    left, top = MARGIN["left"], MARGIN["top"]
    right, bottom = WIDTH - MARGIN["right"], HEIGHT - MARGIN["bottom"]

    def sx(rate: float) -> float:
        return left + (rate - x0) / (x1 - x0) * (right - left)

    def sy(seconds: float) -> float:
        return bottom - (math.log10(seconds) - y0) / (y1 - y0) * (bottom - top)

    described = text["separator"].join(
        text["series"].format(
            name=name,
            first=f"{pts[0][0]:g}",
            v_first=f"{pts[0][1]:.2f}",
            last=f"{pts[-1][0]:g}",
            v_last=f"{pts[-1][1]:.2f}",
        )
        for name, _, _, pts in lines
    )
    desc = text["desc"].format(cap=f"{cap:.1f}", series=described + text["end"])
    fg = 'fill="currentColor"'
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        'role="img" aria-labelledby="load-title load-desc" class="load-testing-chart" '
        'style="max-width: 100%; height: auto; color: var(--md-default-fg-color, #222); '
        'font-size: 12px">',
        f'<title id="load-title">{escape(text["title"])}</title>',
        f'<desc id="load-desc">{escape(desc)}</desc>',
    ]
    for e in range(y0, y1 + 1):
        y = sy(10.0**e)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="currentColor" '
            'stroke-opacity="0.15"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" {fg}>{10.0**e:g}</text>'
        )
    for r in range(int(x0), int(x1) + 1, 2):
        x = sx(r)
        out.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle" {fg}>{r}</text>')
    out.append(f'<path d="M{left} {top} V{bottom} H{right}" fill="none" stroke="currentColor"/>')
    out.append(
        f'<text x="{(left + right) / 2:.1f}" y="{HEIGHT - 12}" text-anchor="middle" {fg}>'
        f"{escape(text['x_axis'])}</text>"
    )
    out.append(
        f'<text transform="translate(16 {(top + bottom) / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" {fg}>{escape(text["y_axis"])}</text>'
    )
    xc = sx(cap)
    out.append(
        f'<line x1="{xc:.1f}" y1="{top}" x2="{xc:.1f}" y2="{bottom}" stroke="currentColor" '
        'stroke-dasharray="2 3"/>'
    )
    out.append(
        f'<text x="{xc - 4:.1f}" y="{top + 12}" text-anchor="end" {fg}>'
        f"{escape(text['capacity'].format(cap=f'{cap:.1f}'))}</text>"
    )
    for _name, pct, dash, pts in lines:
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        coords = " ".join(f"{sx(r):.1f},{sy(v):.1f}" for r, v in pts)
        colour = COLOURS[pct]
        out.append(
            f'<polyline points="{coords}" fill="none" stroke-width="2"{dash_attr} '
            f'style="stroke: {colour}"/>'
        )
        for r, v in pts:
            out.append(f'<circle cx="{sx(r):.1f}" cy="{sy(v):.1f}" r="3" style="fill: {colour}"/>')
    for i, (name, pct, dash, _) in enumerate(lines):  # legend in the right margin
        y = top + 10 + 20 * i
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<line x1="{right + 12}" y1="{y}" x2="{right + 40}" y2="{y}" stroke-width="2"'
            f'{dash_attr} style="stroke: {COLOURS[pct]}"/>'
        )
        out.append(f'<text x="{right + 46}" y="{y + 4}" {fg}>{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
