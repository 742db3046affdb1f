"""TPOT floor of Qwen2.5-72B against the tensor-parallel size, as inline SVG (no plotting library).

One line per (GPU, weight format) through t = 1, 2, 4, 8 (tp.rows); a point only where the model
fits with room for the context (vLLM's default memory budget). Each point is labelled with the
share of the step spent in communication. Frame, axes and colours come from core.svgchart.
Labels: main("zh") or main("en").

Run it: python snippets/tensor_parallelism/chart.py en > tp.svg
"""

import math
import sys

from core import svgchart as svg
from core.display import in_language
from tensor_parallelism.tp import BATCH, CONTEXT, TP_SIZES, rows

LABELS = {
    "zh": {
        "title": "Qwen2.5-72B 解码：TPOT 下界与张量并行卡数（批大小 {batch}，上下文 {context}）",
        "desc": (
            "横轴是张量并行的卡数 TP，纵轴是 TPOT 下界（ms），"
            "点旁的百分数是通信占这一步的比例。{series}"
        ),
        "series": "{name}：{points}",
        "point": "TP={t} 时 {ms} ms（通信 {share}）",
        "none": "任何卡数都放不下",
        "x_axis": "张量并行卡数 TP",
        "y_axis": "TPOT 下界（ms）",
        "note": "没有点：放不下；点旁百分数：通信占比",
    },
    "en": {
        "title": "Qwen2.5-72B decode: TPOT floor against tensor-parallel size "
        "(batch {batch}, context {context})",
        "desc": "The horizontal axis is the number of GPUs TP, the vertical axis the TPOT floor "
        "(ms); "
        "the percentage by each point is communication's share of the step. {series}",
        "series": "{name}: {points}",
        "point": "at TP={t}, {ms} ms ({share} communication)",
        "none": "fits at no size",
        "x_axis": "tensor-parallel size TP",
        "y_axis": "TPOT floor (ms)",
        "note": "no point: does not fit; percentage: communication share",
    },
}

MARGIN = {"left": 64, "right": 190, "top": 24, "bottom": 58}
WIDTH, HEIGHT = 420, 300
COLOURS = {"h100_sxm": svg.FOREGROUND, "rtx_4090": svg.LINK}


def series() -> dict[str, list[tuple[int, float, float]]]:
    """'GPU format' -> [(t, TPOT s, communication share)] for the t that run."""
    out: dict[str, list[tuple[int, float, float]]] = {}
    for gpu, _, fmt, t, step, _, _ in rows():
        name = f"{gpu.name} {fmt.name.split(' ')[0]}"
        points = out.setdefault(name, [])
        if step is not None:
            points.append((t, step.seconds, step.comm_share))
    return out


def chart(lang: str) -> str:
    text = in_language(LABELS, lang)
    data = series()
    top_ms = max(p[1] for points in data.values() for p in points) * 1e3
    high = 5 * math.ceil(top_ms / 5)
    bottom = MARGIN["top"] + HEIGHT
    sx = svg.LinearAxis(0, len(TP_SIZES) - 1, MARGIN["left"] + 30, MARGIN["left"] + WIDTH - 30)
    sy = svg.LinearAxis(0, high, bottom, MARGIN["top"])
    frame = svg.Frame.within(MARGIN, right=MARGIN["left"] + WIDTH, bottom=bottom)
    described = []
    for name, points in data.items():
        said = [
            text["point"].format(t=t, ms=f"{s * 1e3:.1f}", share=f"{share:.0%}")
            for t, s, share in points
        ]
        described.append(text["series"].format(name=name, points=", ".join(said) or text["none"]))
    title = text["title"].format(batch=BATCH, context=f"{CONTEXT:,}")
    ids = ("tp-title", "tp-desc")
    out = svg.open_svg(
        frame, "tp-chart", ids, title, text["desc"].format(series="; ".join(described))
    )
    out += svg.x_ticks(frame, [(sx(i), f"{t}") for i, t in enumerate(TP_SIZES)])
    out += svg.y_ticks(frame, sy.ticks(5))
    out += svg.axes(frame, text["x_axis"], text["y_axis"])
    entries = []
    for name, points in data.items():
        gpu_key = "rtx_4090" if "4090" in name else "h100_sxm"
        colour, dash = COLOURS[gpu_key], "" if "BF16" in name else "6 4"
        xy = [(sx(TP_SIZES.index(t)), sy(s * 1e3)) for t, s, _ in points]
        if len(xy) > 1:
            out.append(svg.polyline(xy, colour, dash=dash))
        for (x, y), (_, _, share) in zip(xy, points, strict=True):
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" style="fill: {colour}"/>')
            # H100 labels left of their point, RTX 4090 labels right: lines that meet stay legible
            if gpu_key == "h100_sxm":
                out.append(svg.text(x - 7, y - 6, f"{share:.0%}", "end"))
            else:
                out.append(svg.text(x + 7, y + 14, f"{share:.0%}"))
        entries.append((name, colour, dash))
    out += svg.legend(frame.right + 16, frame.top + 10, entries)
    out += svg.notes(frame, [text["note"]])
    return svg.close_svg(out)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
