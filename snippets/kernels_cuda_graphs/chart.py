"""One layer's prefill attention traffic against prompt length, as inline SVG.

Three lines on log-log axes, from core.kernels.attention_io_bytes for the course's model: the HBM
bytes of standard attention (the S x S scores written and read twice over), of tiled attention
(no scores in HBM; K and V read once per query tile), and of Q, K, V and O read or written once
(the least any kernel can move). Frame, axes and colours come from core.svgchart.
Labels: main("zh") or main("en").

Run it: python snippets/kernels_cuda_graphs/chart.py en > attention_io.svg
"""

import sys

from core import svgchart as svg
from core.display import in_language
from core.kernels import attention_io_bytes
from core.models import load_model
from core.reference import BF16_MODEL
from kernels_cuda_graphs.attention_io import QUERY_TILE

LENGTHS = tuple(2**i for i in range(7, 16))  # 128 .. 32,768 tokens
LABELS = {
    "zh": {
        "title": "{model} 一层预填充注意力的显存读写量（16 位数值，查询块 {tile} 行）",
        "desc": "对数坐标。横轴是 prompt 长度，纵轴是一层注意力读写 HBM 的字节数。"
        "prompt 长度 {last} 时：标准实现 {naive} GB，分块计算 {tiled} GB，"
        "Q、K、V、O 各一次 {qkvo} GB。",
        "x_axis": "prompt 长度 S（token，对数坐标）",
        "y_axis": "一层的 HBM 读写（字节，对数坐标）",
        "naive": "标准：写出 S×S 分数",
        "tiled": "分块计算",
        "qkvo": "Q、K、V、O 各一次",
    },
    "en": {
        "title": "{model}: HBM traffic of one layer's prefill attention "
        "(16-bit values, query tile {tile} rows)",
        "desc": "Log-log axes. Prompt length across, bytes one attention layer reads and writes "
        "in HBM up the side. At prompt length {last}: standard {naive} GB, tiled {tiled} GB, "
        "Q, K, V and O once {qkvo} GB.",
        "x_axis": "Prompt length S (tokens, log scale)",
        "y_axis": "One layer's HBM traffic (bytes, log scale)",
        "naive": "standard: S×S scores in HBM",
        "tiled": "tiled",
        "qkvo": "Q, K, V, O once",
    },
}
MARGIN = {"left": 64, "right": 190, "top": 24, "bottom": 50}
X_DECADE, Y_DECADE = 160, 48
SERIES = (("naive", svg.FOREGROUND, ""), ("tiled", svg.LINK, ""), ("qkvo", svg.LINK, "6 4"))


def series(model, lengths=LENGTHS, tile: int = QUERY_TILE) -> dict[str, list[tuple[int, int]]]:
    ios = [(s, attention_io_bytes(model, s, tile)) for s in lengths]
    return {
        "naive": [(s, io.naive_bytes) for s, io in ios],
        "tiled": [(s, io.tiled_bytes) for s, io in ios],
        "qkvo": [(s, io.qkvo_bytes) for s, io in ios],
    }


def chart(lang: str = "zh") -> str:
    text = in_language(LABELS, lang)
    model = load_model(BF16_MODEL)
    data = series(model)
    ys = [b for points in data.values() for _, b in points]
    (x0, x1) = svg.decades(LENGTHS[0], LENGTHS[-1])
    (y0, y1) = svg.decades(min(ys), max(ys))
    sx = svg.LogAxis(x0, x1, MARGIN["left"], X_DECADE)
    bottom = MARGIN["top"] + (y1 - y0) * Y_DECADE
    sy = svg.LogAxis(y0, y1, bottom, -Y_DECADE)
    frame = svg.Frame.within(MARGIN, right=sx.end, bottom=bottom)
    last = {k: v[-1][1] / 1e9 for k, v in data.items()}
    title = text["title"].format(model=model.name, tile=QUERY_TILE)
    desc = text["desc"].format(
        last=f"{LENGTHS[-1]:,}",
        naive=f"{last['naive']:,.1f}",
        tiled=f"{last['tiled']:,.1f}",
        qkvo=f"{last['qkvo']:,.2f}",
    )
    out = svg.open_svg(frame, "attention-io-chart", ("attn-io-title", "attn-io-desc"), title, desc)
    out += svg.x_ticks(frame, sx.ticks()) + svg.y_ticks(frame, sy.ticks())
    out += svg.axes(frame, text["x_axis"], text["y_axis"])
    for key, colour, dash in SERIES:
        pixels = [(sx(s), sy(b)) for s, b in data[key]]
        out.append(svg.polyline(pixels, colour, dash=dash))
    out += svg.legend(frame.right + 12, frame.top + 10, [(text[k], c, d) for k, c, d in SERIES])
    return svg.close_svg(out)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
