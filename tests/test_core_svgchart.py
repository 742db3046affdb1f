"""core.svgchart, the one module that draws every chart's frame: axes, grid, legend, colours."""

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from batched_decode import chart as batched_chart
from core import svgchart as svg
from core.gpus import load_gpu
from core.models import load_model
from load_testing import chart as load_chart
from roofline import chart as roofline_chart

SVG = "{http://www.w3.org/2000/svg}"
# what a chart may paint with: the page's text colour, a Material variable (with a fallback for a
# page without it), or nothing; a bare colour would stay the same in dark mode
PAGE_COLOUR = re.compile(r"^(none|currentColor|var\(--md-[a-z-]+, #[0-9a-f]{3,6}\))$")


def course_charts() -> dict[str, str]:
    rtx, qwen = load_gpu("rtx_4090"), load_model("qwen2.5-7b-instruct")
    charts = {}
    for lang in ("zh", "en"):
        charts[f"roofline-{lang}"] = roofline_chart.chart(rtx, qwen, lang)
        charts[f"batched-{lang}"] = batched_chart.chart(lang)
        charts[f"load-{lang}"] = load_chart.chart(lang)
    return charts


CHARTS = course_charts()


def test_a_log_axis_puts_each_decade_a_step_further():
    sy = svg.LogAxis(first=-1, last=2, start=300, step=-90)  # upwards
    assert [sy(v) for v in (0.1, 1, 10, 100)] == pytest.approx([300, 210, 120, 30])
    assert sy.end == pytest.approx(30)
    assert [label for _, label in sy.ticks()] == ["0.1", "1", "10", "100"]
    assert svg.tick(1000) == "1,000" and svg.decades(0.35, 1200) == (-1, 4)


def test_a_linear_axis_and_its_ticks():
    sx = svg.LinearAxis(0.0, 14, 64, 510)
    assert sx(7) == pytest.approx((64 + 510) / 2)
    assert [label for _, label in sx.ticks(every=2)] == ["0", "2", "4", "6", "8", "10", "12", "14"]


def test_the_frame_is_the_plot_area_inside_its_margins():
    frame = svg.Frame.within({"left": 64, "right": 210, "top": 20, "bottom": 50}, 510, 310)
    assert (frame.width, frame.height, frame.left, frame.top) == (720, 360, 64, 20)


def test_labels_are_escaped_and_whole_pixels_stay_whole():
    assert svg.text(10, 20.25, "a < b & c") == (
        '<text x="10" y="20.2" fill="currentColor">a &lt; b &amp; c</text>'
    )
    rotated = svg.text(18, 150.0, "TTFT", "middle", rotate=-90)
    assert 'transform="translate(18 150.0) rotate(-90)" text-anchor="middle"' in rotated


def test_axis_titles_sit_a_quarter_margin_from_the_edge():
    frame = svg.Frame.within({"left": 72, "right": 24, "top": 24, "bottom": 58}, 432.0, 294)
    path, x_title, y_title = svg.axes(frame, "x", "y")
    assert path.startswith('<path d="M72 24 V294 H432.0"')
    assert 'y="338"' in x_title and "translate(18 159.0)" in y_title  # 352 - 58 // 4, 72 // 4


def test_the_legend_has_a_sample_and_a_name_per_line():
    out = svg.legend(522, 30, [("p99", svg.FOREGROUND, ""), ("p50", svg.LINK, "6 4")])
    assert len(out) == 4 and 'stroke-dasharray="6 4"' in out[2] and ">p50</text>" in out[3]
    assert "stroke-dasharray" not in out[0]


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_every_course_chart_is_accessible_and_follows_the_page_colours(name):
    root = ET.fromstring(CHARTS[name])
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title is not None and title.text and desc is not None and desc.text
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    painted = []
    for element in root.iter():
        painted += [element.get(a) for a in ("fill", "stroke") if element.get(a)]
        style = element.get("style") or ""
        painted += [v.strip() for k, v in re.findall(r"(fill|stroke|color):([^;]+)", style)]
    bare = {c for c in painted if not PAGE_COLOUR.match(c)}
    assert not bare, f"{name} paints with colours dark mode does not change: {bare}"


def test_only_the_chart_module_opens_an_svg_or_draws_a_grid():
    """Lessons draw their marks (points, curves); frames, axes and grids are core.svgchart's."""
    snippets = Path(svg.__file__).resolve().parents[1]
    framing = ("<svg", "stroke-opacity", "<polyline", "<line ")
    offenders = [
        f"{path.relative_to(snippets)}: {token}"
        for path in sorted(snippets.glob("*/*.py"))
        if path.parent.name != "core"
        for token in framing
        if token in path.read_text(encoding="utf-8")
    ]
    assert not offenders, offenders
