"""Decode step time against batch size for BF16, FP8 and INT4 weights on one card, as inline SVG.

Each curve is the lower bound of one decode step (core.roofline.tpot_bound) at B = 1 ... 256, every
sequence at the same context, for one weight format as vLLM runs it on the card. A hollow marker is
a batch whose KV cache does not fit next to that format's weights (vLLM's defaults). Colours follow
the page theme (currentColor); <title> and <desc> describe the chart to screen readers.

Run it: python snippets/weight_quantization/chart.py en > weight_quantization.svg
"""

import math
import sys
from html import escape

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
    y0, y1 = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    left, top, x_span, y_decade = 64, 24, 480, 160
    bottom = top + (y1 - y0) * y_decade
    width, height = left + x_span + 170, bottom + 56

    def sx(b: float) -> float:
        return left + math.log2(b) / math.log2(BATCHES[-1]) * x_span

    def sy(ms: float) -> float:
        return bottom - (math.log10(ms) - y0) * y_decade

    series = "; ".join(
        text["series"].format(
            name=n, first=f"{p[0][1] * 1e3:.2f}", last=f"{p[-1][1] * 1e3:.2f}",
            last_b=p[-1][0], fits=f"{f:,}",
        )
        for n, p, f in data
    )  # fmt: skip
    gpu = load_gpu(GPU_KEY).name
    title = text["title"].format(gpu=gpu, model=load_model(MODEL).name, context=f"{CONTEXT:,}")
    fg = 'fill="currentColor"'
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        'role="img" aria-labelledby="wq-title wq-desc" style="max-width: 100%; height: auto; '
        'color: var(--md-default-fg-color, #222); font-size: 12px">',
        f'<title id="wq-title">{escape(title)}</title>',
        f'<desc id="wq-desc">{escape(text["desc"].format(series=series))}</desc>',
    ]
    for e in range(y0, y1 + 1):  # one grid line and label per power of ten of milliseconds
        y = sy(10.0**e)
        out.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{left + x_span}" y2="{y:.1f}" '
            'stroke="currentColor" stroke-opacity="0.15"/>'
        )
        out.append(
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" {fg}>{10.0**e:g}</text>'
        )
    for b in BATCHES:
        out.append(f'<text x="{sx(b):.1f}" y="{bottom + 16}" text-anchor="middle" {fg}>{b}</text>')
    out.append(f'<path d="M{left} {top} V{bottom} H{left + x_span}" fill="none" stroke="#888"/>')
    out.append(
        f'<text x="{left + x_span / 2}" y="{height - 12}" text-anchor="middle" {fg}>'
        f"{escape(text['x'])}</text>"
    )
    out.append(
        f'<text transform="translate(16 {(top + bottom) / 2}) rotate(-90)" text-anchor="middle" '
        f"{fg}>{escape(text['y'])}</text>"
    )
    labels: list[tuple[float, str, float]] = []  # (y, format name, x) at each curve's end
    for (name, points, fits), dash in zip(data, DASHES, strict=True):
        coords = " ".join(f"{sx(b):.1f},{sy(t * 1e3):.1f}" for b, t in points)
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<polyline points="{coords}" fill="none" stroke="currentColor"{dashed}/>')
        for b, t in points:
            fill = "currentColor" if b <= fits else "var(--md-default-bg-color, #fff)"
            out.append(
                f'<circle cx="{sx(b):.1f}" cy="{sy(t * 1e3):.1f}" r="3.5" '
                f'style="fill: {fill}" stroke="currentColor"/>'
            )
        last_b, last_t = points[-1]
        labels.append((sy(last_t * 1e3) + 4, name, sx(last_b) + 8))
    labels.sort()
    for i in range(1, len(labels)):  # curves that end close together: keep the names 14 px apart
        y, name, x = labels[i]
        labels[i] = (max(y, labels[i - 1][0] + 14), name, x)
    for y, name, x in labels:
        out.append(f'<text x="{x:.1f}" y="{y:.1f}" {fg}>{escape(name)}</text>')
    out.append(f'<text x="{left + 8}" y="{top + 14}" {fg}>{escape(text["hollow"])}</text>')
    out.append("</svg>")
    return "\n".join(out)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
