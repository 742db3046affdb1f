"""p50 and p99 TTFT against request rate (sweep.py's simulation), as inline SVG.

Linear request-rate axis, logarithmic TTFT axis; one solid line per percentile for Poisson
arrivals, dashed for bursty ones, named in a legend on the right; a vertical line marks the
simulated capacity. The frame, axes, legend and colours (which follow light and dark mode) come
from the course's chart module, core.svgchart; <title> and <desc> describe the chart to screen
readers. Labels: main("zh") or main("en").

Run it: python snippets/load_testing/chart.py en > load_testing.svg
"""

import math
import sys

from core import svgchart as svg
from core.display import in_language
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
COLOURS = {"p50": svg.LINK, "p99": svg.FOREGROUND}


def labels(lang: str) -> dict[str, str]:
    return in_language(LABELS, lang)


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
    y0, y1 = svg.decades(min(ys), max(ys))
    right, bottom = WIDTH - MARGIN["right"], HEIGHT - MARGIN["bottom"]
    frame = svg.Frame.within(MARGIN, right=right, bottom=bottom)
    sx = svg.LinearAxis(0.0, math.ceil(max(RATES)), frame.left, frame.right)  # requests/s
    decade = (frame.bottom - frame.top) / (y1 - y0)
    sy = svg.LogAxis(y0, y1, frame.bottom, -decade)  # TTFT s, upwards
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
    ids = ("load-title", "load-desc")
    out = svg.open_svg(frame, "load-testing-chart", ids, text["title"], desc)
    out += svg.y_ticks(frame, sy.ticks()) + svg.x_ticks(frame, sx.ticks(every=2), grid=False)
    out += svg.axes(frame, text["x_axis"], text["y_axis"])
    xc = sx(cap)
    out.append(svg.vertical_rule(xc, frame.top, frame.bottom, "2 3"))
    out.append(svg.text(xc - 4, frame.top + 12, text["capacity"].format(cap=f"{cap:.1f}"), "end"))
    for _name, pct, dash, pts in lines:
        colour = COLOURS[pct]
        out.append(svg.polyline([(sx(r), sy(v)) for r, v in pts], colour, dash=dash))
        for r, v in pts:
            out.append(f'<circle cx="{sx(r):.1f}" cy="{sy(v):.1f}" r="3" style="fill: {colour}"/>')
    entries = [(name, COLOURS[pct], dash) for name, pct, dash, _ in lines]
    out += svg.legend(frame.right + 12, frame.top + 10, entries)  # in the right margin
    return svg.close_svg(out)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
