"""Chart text is at least 11 CSS px on a 390 px-wide phone (coursesite.charts).

Static: a chart SVG scales its viewBox to the width it is drawn at, so its text is drawn at
font-size x drawn width / viewBox width. On a phone the drawn width is the larger of its
min-width and the smaller of its width attribute and the content column."""

import re
import unicodedata
from html import unescape
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


TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.DOTALL)
CHART = re.compile(r"<svg\b[^>]*>.*?</svg>", re.DOTALL)
# Advance widths in em: CJK and full-width characters are square; Latin text in the sans-serif
# charts averages under 0.6 em (capitals and bold reach it), so 0.6 errs on the wide side.
WIDE_EM, NARROW_EM = 1.0, 0.6


def text_width(content: str, font_px: float) -> float:
    wide = sum(unicodedata.east_asian_width(c) in "WF" for c in content)
    return font_px * (WIDE_EM * wide + NARROW_EM * (len(content) - wide))


def clipped_text(svg: str, only_title: bool = False) -> list[str]:
    """Horizontal text that reaches past the chart's viewBox, where the SVG cuts it off at every
    width the chart is drawn at (a title too long for its chart). `only_title`: the visible text
    that repeats the chart's <title> (the estimate errs wide, too wide for tight tick labels)."""
    tag = SVG.match(svg).group(0)
    title = re.search(r"<title\b[^>]*>(.*?)</title>", svg, re.DOTALL)
    box_width = float((_attribute(tag, "viewBox") or "").split()[2])
    font = float(re.search(r"font-size:\s*([\d.]+)px", _attribute(tag, "style") or "").group(1))
    found = []
    for attributes, content in TEXT.findall(svg):
        where = f"<text{attributes}>"
        if "rotate(" in attributes and "rotate(0)" not in attributes:
            continue  # an axis title turned on its side: its height is the font's
        x = _attribute(where, "x")
        if x is None:
            x = re.search(r"translate\(([-\d.]+)", attributes).group(1)
        words = unescape(re.sub(r"<[^>]+>", "", content))
        if only_title and not (title and words == unescape(title.group(1))):
            continue
        width = text_width(words, float(_attribute(where, "font-size") or font))
        anchor = _attribute(where, "text-anchor") or "start"
        left = float(x) - {"start": 0, "middle": width / 2, "end": width}[anchor]
        if left < 0 or left + width > box_width:
            found.append(f"{words!r} spans {left:.0f}..{left + width:.0f} of 0..{box_width:.0f}")
    return found


def test_a_title_wider_than_its_chart_is_found():
    title = (
        '<text x="8" y="18" fill="currentColor">Two slots, five requests: one decode step</text>'
    )
    svg = '<svg viewBox="0 0 {} 200" style="font-size: 12px">{}</svg>'
    assert clipped_text(svg.format(240, title))  # 41 characters: about 295 px at 12 px
    assert not clipped_text(svg.format(320, title))
    centred = '<text x="40" y="9" text-anchor="middle">两个槽位、五个请求</text>'  # 9 x 12 px
    assert clipped_text(svg.format(320, centred)) and not clipped_text(svg.format(320, "<g/>"))
    named = svg.format(240, "<title>Two slots, five requests: one decode step</title>" + title)
    assert clipped_text(named, only_title=True)
    assert not clipped_text(svg.format(240, title), only_title=True)  # not the chart's title


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_continuous_batching_timeline_keeps_its_title_inside_the_chart(lang):
    """The timeline was a Mermaid gantt laid out at the width it was drawn at: on a phone its
    title ran past both edges. It is a course chart now, its title inside its viewBox."""
    from continuous_batching.timeline import TEXT as TIMELINE_TEXT
    from continuous_batching.timeline import chart

    svg = chart(lang)
    assert TIMELINE_TEXT[lang]["title"] in [unescape(t) for _, t in TEXT.findall(svg)]
    assert clipped_text(svg) == []
    out = charts.readable_on_phone(svg, a_page(), a_build())
    (offset, tag), *_ = chart_tags(out)
    assert drawn_text_px(tag, box_min_width(out, offset)) >= charts.MIN_TEXT_PX


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


def test_every_chart_in_the_site_draws_its_text_at_11_px_or_more_on_a_phone_unclipped(built_site):
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
            svg = CHART.match(html, offset).group(0)
            clipped = clipped_text(svg, only_title=True)
            small += [f"{page.relative_to(built_site.site)}: clipped title {c}" for c in clipped]
    assert checked >= 2, f"only {checked} charts found: the check has lost them"
    assert not small, "\n".join(small)


@pytest.mark.parametrize("width", [720, 694, 636])
def test_min_width_is_the_width_at_which_text_is_11_px(width):
    assert charts.min_width(width, 12) * 12 / width >= charts.MIN_TEXT_PX
    assert (charts.min_width(width, 12) - 1) * 12 / width < charts.MIN_TEXT_PX


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_playgrounds_chart_made_in_the_browser_is_in_its_phone_box(lang):
    """The playground's report() runs in the reader's browser, after the build's charts stage:
    its chart brings its own .chart-scroll box, with the same min-width the build would give."""
    from playground.web import DEFAULTS, report

    html = report(**DEFAULTS, lang=lang)
    (offset, tag), *rest = chart_tags(html)
    assert not rest
    assert charts.readable_on_phone(html, a_page(), a_build()) == html  # nothing left to wrap
    assert drawn_text_px(tag, box_min_width(html, offset)) >= charts.MIN_TEXT_PX
