"""Every published row beside the core's floor for its setting, as a Markdown table (each
row's source address is in published.toml; the lesson links the three pages).

Run it: python snippets/calibration/table.py en
"""

import sys

from calibration.chart import labels
from core.gpus import load_gpus
from core.models import load_model
from core.published import calibrated

HEADERS = {
    "zh": (
        "发布者",
        "模型",
        "GPU",
        "引擎",
        "格式",
        "批大小",
        "输入/输出",
        "发表值 tok/s",
        "下界 tok/s",
        "达到的比例",
    ),
    "en": (
        "Publisher",
        "Model",
        "GPU",
        "Engine",
        "Format",
        "Batch",
        "In/out",
        "Published tok/s",
        "Floor tok/s",
        "Share",
    ),
}


def table(lang: str = "en") -> str:
    labels(lang)  # rejects an unknown language
    gpus = load_gpus()
    lines = ["| " + " | ".join(HEADERS[lang]) + " |", "|" + "---|" * len(HEADERS[lang])]
    for c in calibrated():
        r = c.row
        batch = labels(lang)["max_load"] if r.batch == "max" else f"{r.batch}"
        cells = (
            r.publisher,
            load_model(r.model).name,
            f"{r.gpus} × {gpus[r.gpu].name}",
            f"{r.engine} {r.engine_version}",
            r.format,
            batch,
            f"{r.input_len:,} / {r.output_len:,}",
            f"{r.value:,.2f}",
            f"{c.floor_tok_s:,.1f}",
            f"{c.share:.0%} ({c.utilization})",
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(lang: str = "en") -> None:
    print(table(lang))


if __name__ == "__main__":
    main(*sys.argv[1:])
