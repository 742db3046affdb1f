"""The share of the floor each published run reached, as inline SVG: one line per engine and
setting, one dot per row, the share on a linear axis from 0 to 100 %.

Like the roofline chart it uses the page's text colour (currentColor) and Material's CSS
variables, and a <title>/<desc> for screen readers. Run it: python snippets/calibration/chart.py en
"""

import sys

from core import svgchart as svg
from core.display import in_language
from core.gpus import load_gpus
from core.models import load_model
from core.published import Calibrated, calibrated

LABELS = {
    "zh": {
        "title": "已发表的测量达到了下界的多少（下界时间 ÷ 实测时间）",
        "desc": "每行是一组设置，每个点是一条已发表的测量，横轴是它达到的下界比例。{rows}",
        "row": "{label}：{shares}",
        "x_axis": "达到的下界比例（批大小 1：MBU；最大负载：MFU）",
        "max_load": "最大负载",
        "gpus": "{n} 卡",
        "gpu": "1 卡",
    },
    "en": {
        "title": "How much of the floor published runs reached (floor ÷ measured time)",
        "desc": "Each line is one setting, each dot one published measurement, placed at the "
        "share of the floor it reached. {rows}",
        "row": "{label}: {shares}",
        "x_axis": "Share of the floor reached (batch 1: MBU; maximum load: MFU)",
        "max_load": "max load",
        "gpus": "{n} GPUs",
        "gpu": "1 GPU",
    },
}
LABEL_PX, PLOT_PX, ROW_PX, TOP, BOTTOM = 390, 360, 20, 12, 44  # labels up to ~56 characters


def labels(lang: str) -> dict[str, str]:
    return in_language(LABELS, lang)  # one error message course-wide for an unknown language


def group_label(c: Calibrated, lang: str, multi_gpu: frozenset[str] = frozenset()) -> str:
    """One line of the chart: engine, model, format, and what else the rows of the line share;
    the GPU count for a model that some rows run on several GPUs (`multi_gpu`)."""
    r, text = c.row, labels(lang)
    engine = r.engine.split(" (")[0].replace("Hugging Face ", "")
    parts = [engine, load_model(r.model).name.removesuffix("-Instruct"), r.format]
    if r.batch == "max":
        parts += [load_gpus()[r.gpu].name, text["max_load"]]
    elif r.model in multi_gpu:
        parts.append(text["gpus"].format(n=r.gpus) if r.gpus > 1 else text["gpu"])
    return " · ".join(parts)


def share_svg(rows: list[Calibrated], lang: str) -> str:
    text = labels(lang)
    groups: dict[str, list[Calibrated]] = {}
    multi_gpu = frozenset(c.row.model for c in rows if c.row.gpus > 1)
    for c in rows:
        groups.setdefault(group_label(c, lang, multi_gpu), []).append(c)
    width = LABEL_PX + PLOT_PX + 24
    height = TOP + ROW_PX * len(groups) + BOTTOM
    bottom = TOP + ROW_PX * len(groups)

    def sx(share: float) -> float:
        return LABEL_PX + share * PLOT_PX

    desc_rows = "; ".join(
        text["row"].format(label=g, shares=", ".join(f"{c.share:.0%}" for c in cs))
        for g, cs in groups.items()
    )
    frame = svg.Frame(width, height, LABEL_PX, TOP, LABEL_PX + PLOT_PX, bottom)
    desc = text["desc"].format(rows=desc_rows)
    ids = ("calibration-title", "calibration-desc")
    out = svg.open_svg(frame, "calibration-chart", ids, text["title"], desc)
    out += svg.x_ticks(frame, [(sx(t / 100), f"{t}%") for t in range(0, 101, 20)])
    for i, (label, cs) in enumerate(groups.items()):
        y = TOP + ROW_PX * i + ROW_PX / 2
        out.append(svg.text(LABEL_PX - 8, y + 4, label, "end"))
        for c in cs:
            out.append(
                f'<circle cx="{svg.px(sx(c.share))}" cy="{svg.px(y)}" r="4" fill-opacity="0.7" '
                f'style="fill: {svg.LINK}"/>'
            )
    out.append(svg.text(sx(0.5), height - 8, text["x_axis"], "middle"))
    return svg.close_svg(out)


def main(lang: str = "en") -> None:
    print(share_svg(calibrated(), lang))


if __name__ == "__main__":
    main(*sys.argv[1:])
