"""Chart text is at least 11 CSS px on a 390 px-wide phone (coursesite.charts).

Static: a chart SVG scales its viewBox to the width it is drawn at, so its text is drawn at
font-size x drawn width / viewBox width. On a phone the drawn width is the larger of its
min-width and the smaller of its width attribute and the content column."""

import re
from pathlib import Path

import pytest

from conftest import ROOT
from coursesite import charts
from stage_inputs import a_build, a_page

PHONE_WIDTH = 390
# Material's content column at that width: .md-content__inner has a 0.8rem margin each side,
# and the root font size is 20 px below 1220 px (html { font-size: 125% })
PHONE_CONTENT = PHONE_WIDTH - 2 * 16
SVG = re.compile(r"<svg\b[^>]*>", re.IGNORECASE)


def _attribute(tag: str, name: str) -> str | None:
    found = re.search(rf'\b{name}="([^"]*)"', tag, re.IGNORECASE)
    return found.group(1) if found else None


def chart_tags(html: str) -> list[tuple[int, str]]:
    """(offset, tag) of every chart: an <svg> whose viewBox starts at 0 0 and whose style sets a
    font size in px."""
    found = []
    for match in SVG.finditer(html):
        tag, style = match.group(0), _attribute(match.group(0), "style") or ""
        box = _attribute(tag, "viewBox") or ""
        if box.startswith("0 0 ") and re.search(r"font-size:\s*[\d.]+px", style):
            found.append((match.start(), tag))
    return found


BOX = re.compile(r'<span class="chart-scroll" style="--chart-min-width: (\d+)px">$')


def box_min_width(html: str, offset: int) -> float | None:
    """The min-width the .chart-scroll box right before `offset` gives its chart, if any."""
    found = BOX.search(html, max(0, offset - 80), offset)
    return float(found.group(1)) if found else None


def drawn_text_px(tag: str, min_width: float | None) -> float:
    style = _attribute(tag, "style") or ""
    font = float(re.search(r"font-size:\s*([\d.]+)px", style).group(1))
    box_width = float((_attribute(tag, "viewBox") or "").split()[2])
    width_attr = float(_attribute(tag, "width") or box_width)
    drawn = max(min_width or 0, min(width_attr, PHONE_CONTENT))
    return font * drawn / box_width


def test_the_stage_gives_a_chart_a_min_width_and_a_scrolling_box():
    svg = (
        '<p><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 720 360" width="720" '
        'style="max-width: 100%; font-size: 12px"><text>x</text></svg></p>'
    )
    out = charts.readable_on_phone(svg, a_page(), a_build())
    assert out.startswith('<p><span class="chart-scroll" style="--chart-min-width: 660px"><svg')
    assert out.endswith("</svg></span></p>") and SVG.search(svg).group(0) in out  # SVG unchanged
    (offset, tag), *_ = chart_tags(out)
    assert drawn_text_px(tag, box_min_width(out, offset)) >= charts.MIN_TEXT_PX
    assert drawn_text_px(tag, None) < charts.MIN_TEXT_PX  # without the box: too small
    assert charts.readable_on_phone(out, a_page(), a_build()) == out
    formula = '<svg viewBox="0 -750 576 1000"><path d="M0"/></svg>'
    assert charts.readable_on_phone(formula, a_page(), a_build()) == formula


def test_the_stylesheet_lets_the_box_scroll():
    css = (ROOT / "docs" / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    rule = re.search(r"\.chart-scroll\s*\{([^}]*)\}", css)
    assert rule and "overflow-x: auto" in rule.group(1) and "display: block" in rule.group(1)
    svg_rule = re.search(r"\.chart-scroll\s*>\s*svg\s*\{([^}]*)\}", css)
    assert svg_rule and "min-width: var(--chart-min-width)" in svg_rule.group(1)


def _pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_chart_in_the_site_draws_its_text_at_11_px_or_more_on_a_phone(built_site):
    checked, small = 0, []
    for page in _pages(built_site.site):
        html = page.read_text(encoding="utf-8")
        for offset, tag in chart_tags(html):
            checked += 1
            min_width = box_min_width(html, offset)
            if min_width is None:
                small.append(f"{page.relative_to(built_site.site)}: a chart outside .chart-scroll")
            if (px := drawn_text_px(tag, min_width)) < charts.MIN_TEXT_PX:
                small.append(f"{page.relative_to(built_site.site)}: text at {px:.1f} px")
    assert checked >= 2, f"only {checked} charts found: the check has lost them"
    assert not small, "\n".join(small)


@pytest.mark.parametrize("width", [720, 694, 636])
def test_min_width_is_the_width_at_which_text_is_11_px(width):
    assert charts.min_width(width, 12) * 12 / width >= charts.MIN_TEXT_PX
    assert (charts.min_width(width, 12) - 1) * 12 / width < charts.MIN_TEXT_PX
