"""Decode step time against batch size for BF16, FP8 and INT4 weights on one card, as inline SVG.

Each curve is the lower bound of one decode step (core.roofline.tpot_bound) at B = 1 ... 256, every
sequence at the same context, for one weight format as vLLM runs it on the card. A hollow marker is
a batch whose KV cache does not fit next to that format's weights (vLLM's defaults). Colours follow
the page theme (currentColor); <title> and <desc> describe the chart to screen readers.

Run it: python snippets/weight_quantization/chart.py en > weight_quantization.svg
"""

import math
import sys

from core import svgchart as svg
from core.forward import kv_cache_bytes
from core.gpus import load_gpu
from core.memory import MemoryBudget
from core.models import load_model
from core.quantization import FORMATS, as_run_on, resident_weight_bytes
from core.roofline import tpot_bound
from weight_quantization.format_bounds import CONTEXT, MODEL

GPU_KEY = "rtx_4090"
BATCHES = tuple(2**i for i in range(9))  # 1 ... 256
DASHES = ("", "6 4", "2 3")
LABELS = {
    "zh": {
        "title": "{gpu} 上 {model} 的解码步下界随批大小变化（上下文 {context} token）",
        "desc": "对数坐标。横轴批大小，纵轴一步的时间下界（ms）。{series}",
        "series": "{name}：批大小 1 时 {first} ms，批大小 {last_b} 时 {last} ms，"
        "KV 缓存最多放 {fits} 条序列",
        "x": "批大小 B（对数坐标）",
        "y": "解码一步的时间下界（ms，对数坐标）",
        "hollow": "空心点：KV 缓存放不下",
    },
    "en": {
        "title": "{model} decode step bound against batch size on the {gpu} (context {context})",
        "desc": "Log-log axes: batch size across, lower bound of one step (ms) up. {series}",
        "series": "{name}: {first} ms at batch 1, {last} ms at batch {last_b}, "
        "KV cache holds at most {fits} sequences",
        "x": "Batch size B (log scale)",
        "y": "Decode step lower bound (ms, log scale)",
        "hollow": "hollow: KV cache does not fit",
    },
}


def curves() -> list[tuple[str, list[tuple[int, float]], int]]:
    """(format as run, [(batch, step seconds)], sequences whose KV fits) per format."""
    gpu, model = load_gpu(GPU_KEY), load_model(MODEL)
    budget, out = MemoryBudget.for_gpu(gpu), []
    for fmt in FORMATS:
        run = as_run_on(gpu, fmt)
        points = [(b, tpot_bound(gpu, model, CONTEXT, run, b).seconds) for b in BATCHES]
        tokens = budget.tokens(resident_weight_bytes(model, run), kv_cache_bytes(model, 1))
        out.append((run.name, points, tokens // CONTEXT))
    return out


def chart(lang: str = "zh") -> str:
    text, data = LABELS[lang], curves()
    ys = [t * 1e3 for _, pts, _ in data for _, t in pts]
    y0, y1 = svg.decades(min(ys), max(ys))
    frame = svg.Frame.within(
        {"left": 64, "top": 24, "right": 170, "bottom": 56}, 64 + 480, 24 + (y1 - y0) * 160
    )
    y_axis = svg.LogAxis(y0, y1, frame.bottom, -160)

    def sx(b: float) -> float:
        return frame.left + math.log2(b) / math.log2(BATCHES[-1]) * (frame.right - frame.left)

    series = "; ".join(
        text["series"].format(
            name=n, first=f"{p[0][1] * 1e3:.2f}", last=f"{p[-1][1] * 1e3:.2f}",
            last_b=p[-1][0], fits=f"{f:,}",
        )
        for n, p, f in data
    )  # fmt: skip
    gpu = load_gpu(GPU_KEY).name
    title = text["title"].format(gpu=gpu, model=load_model(MODEL).name, context=f"{CONTEXT:,}")
    desc = text["desc"].format(series=series)
    out = svg.open_svg(frame, "weight-quantization-chart", ("wq-title", "wq-desc"), title, desc)
    out += svg.y_ticks(frame, y_axis.ticks())
    out += svg.x_ticks(frame, [(sx(b), f"{b}") for b in BATCHES], grid=False)
    out += svg.axes(frame, text["x"], text["y"])
    labels: list[tuple[float, str, float]] = []  # (y, format name, x) at each curve's end
    for (name, points, fits), dash in zip(data, DASHES, strict=True):
        pixels = [(sx(b), y_axis(t * 1e3)) for b, t in points]
        out.append(svg.polyline(pixels, svg.LINK, dash=dash))
        for (b, _), (x, y) in zip(points, pixels, strict=True):
            fill = svg.ACCENT if b <= fits else svg.BACKGROUND
            out.append(
                f'<circle cx="{svg.px(x)}" cy="{svg.px(y)}" r="3.5" style="fill: {fill}" '
                f'stroke="{svg.FOREGROUND}"/>'
            )
        labels.append((pixels[-1][1] + 4, name, pixels[-1][0] + 8))
    labels.sort()
    for i in range(1, len(labels)):  # curves that end close together: keep the names 14 px apart
        y, name, x = labels[i]
        labels[i] = (max(y, labels[i - 1][0] + 14), name, x)
    out += [svg.text(x, y, name) for y, name, x in labels]
    out += svg.notes(frame, [text["hollow"]])
    return svg.close_svg(out)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
