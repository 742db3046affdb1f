"""Weight bytes a decode step reads against the batch: an MoE beside a dense model of the same
active size, as inline SVG (no plotting library).

The MoE curve is core.moe.decode_weight_bytes (uniform routing: more distinct experts as the
batch grows, until all are read); the dense twin reads its whole, fixed weight set at every batch.
A diamond marks each model's critical batch (moe_bytes.critical_batches), where the step turns
compute-bound. Frame, axes and colours come from core.svgchart. Labels: main("zh") or main("en").

Run it: python snippets/moe_expert_parallelism/chart.py en > moe.svg
"""

import math
import sys

from core import svgchart as svg
from core.display import in_language
from core.gpus import load_gpu
from core.moe import decode_weight_bytes, dense_twin_weight_bytes, load_moe_model
from moe_expert_parallelism.moe_bytes import BATCHES, GPU_KEY, MODEL, critical_batches

LABELS = {
    "zh": {
        "title": "{model} 解码：每步读取的权重字节与批大小（BF16，均匀路由）",
        "desc": (
            "横轴是批大小（对数坐标），纵轴是一个解码步读取的权重（GB）。"
            "MoE 从批大小 1 时的 {first} GB 升到全部专家的 {last} GB；"
            "激活参数相同的稠密模型始终是 {dense} GB。"
            "在 {gpu} 上，MoE 的临界批大小是 {moe_b}，稠密模型是 {dense_b}。"
        ),
        "x_axis": "批大小（对数坐标）",
        "y_axis": "每步读取的权重（GB）",
        "moe": "MoE（{model}）",
        "dense": "同等激活参数的稠密模型",
        "critical": "◆ 临界批大小（{gpu}）",
    },
    "en": {
        "title": "{model} decode: weight bytes read per step against batch (BF16, uniform routing)",
        "desc": (
            "The horizontal axis is the batch size (log scale), the vertical axis the weights one "
            "decode step reads (GB). The MoE rises from {first} GB at batch 1 to {last} GB, all "
            "experts; a dense model of the same active size reads {dense} GB at every batch. "
            "On the {gpu}, the MoE's critical batch is {moe_b}, the dense model's {dense_b}."
        ),
        "x_axis": "batch size (log scale)",
        "y_axis": "weights read per step (GB)",
        "moe": "MoE ({model})",
        "dense": "dense model, same active size",
        "critical": "◆ critical batch ({gpu})",
    },
}

MARGIN = {"left": 64, "right": 200, "top": 24, "bottom": 58}
X_DECADE, HEIGHT = 110, 280


def chart(lang: str) -> str:
    text = in_language(LABELS, lang)
    model, gpu = load_moe_model(MODEL), load_gpu(GPU_KEY)
    moe = [(b, decode_weight_bytes(model, b) / 1e9) for b in BATCHES]
    dense_gb = dense_twin_weight_bytes(model) / 1e9
    moe_b, dense_b = critical_batches(gpu, model)
    x0, x1 = svg.decades(BATCHES[0], BATCHES[-1])
    high = 10 * math.ceil(max(gb for _, gb in moe) / 10)
    bottom = MARGIN["top"] + HEIGHT
    sx = svg.LogAxis(x0, x1, MARGIN["left"], X_DECADE)
    sy = svg.LinearAxis(0, high, bottom, MARGIN["top"])
    frame = svg.Frame.within(MARGIN, right=sx.end, bottom=bottom)
    title = text["title"].format(model=model.name)
    desc = text["desc"].format(
        first=f"{moe[0][1]:.1f}",
        last=f"{moe[-1][1]:.1f}",
        dense=f"{dense_gb:.1f}",
        gpu=gpu.name,
        moe_b=f"{moe_b:,}" if moe_b else "—",
        dense_b=f"{dense_b:,}" if dense_b else "—",
    )
    out = svg.open_svg(frame, "moe-chart", ("moe-title", "moe-desc"), title, desc)
    out += svg.x_ticks(frame, sx.ticks()) + svg.y_ticks(frame, sy.ticks(10))
    out += svg.axes(frame, text["x_axis"], text["y_axis"])
    out.append(svg.polyline([(sx(b), sy(gb)) for b, gb in moe], svg.LINK))
    out.append(svg.polyline([(sx(b), sy(dense_gb)) for b in BATCHES], svg.FOREGROUND, dash="6 4"))
    for b, gb, colour in ((moe_b, moe[-1][1], svg.LINK), (dense_b, dense_gb, svg.FOREGROUND)):
        if b is None:
            continue
        x, y = sx(b), sy(gb)
        out.append(
            f'<path d="M{x:.1f} {y - 7:.1f} L{x + 7:.1f} {y:.1f} L{x:.1f} {y + 7:.1f} '
            f'L{x - 7:.1f} {y:.1f} Z" style="fill: {colour}"/>'
        )
        out.append(svg.text(x, y - 12, f"B*={b:,}", "middle"))
    entries = [
        (text["moe"].format(model=model.name), svg.LINK, ""),
        (text["dense"], svg.FOREGROUND, "6 4"),
    ]
    out += svg.legend(frame.right + 16, frame.top + 10, entries)
    out += svg.notes(frame, [text["critical"].format(gpu=gpu.name)])
    return svg.close_svg(out)


def main(lang: str = "zh") -> None:
    print(chart(lang))


if __name__ == "__main__":
    main(*sys.argv[1:2])
