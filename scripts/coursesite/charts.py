"""Charts stay readable on a phone: their text never shrinks below MIN_TEXT_PX.

A chart (snippets/core/svgchart.py and the lessons' own) is an inline SVG whose viewBox scales to
the width it is given (`max-width: 100%`), its text with it: on a 390 px phone a 720-unit chart at
12 px would be drawn at under 7 px. This stage gives each chart a min-width at which its text is
drawn at MIN_TEXT_PX or more, through the `--chart-min-width` of the `.chart-scroll` box it is
wrapped in (docs/stylesheets/extra.css), which scrolls sideways when the screen is narrower than
that. The SVG itself is left as the snippet printed it. Wider screens see no change.
"""

import re

from core.svgchart import MIN_TEXT_PX, PHONE_BOX, min_width
from coursesite import Build, PageInfo

__all__ = ["MIN_TEXT_PX", "min_width", "readable_on_phone"]
# an inline SVG with a viewBox from the origin and a font size in its style: a chart (formulas
# and icons have neither a font size nor, mostly, a viewBox starting at 0 0)
_CHART = re.compile(
    r'<svg\b(?=[^>]*\bviewBox="0 0 (?P<width>[\d.]+) [\d.]+")'
    r'(?=[^>]*\bstyle="(?P<style>[^"]*font-size:\s*(?P<font>[\d.]+)px[^"]*)")[^>]*>',
    re.IGNORECASE,
)
WRAPPER = PHONE_BOX
_WRAPPED = re.compile(r'<span class="chart-scroll" style="--chart-min-width: \d+px">$')


def readable_on_phone(html: str, page: PageInfo, build: Build) -> str:
    out, at = [], 0
    for match in _CHART.finditer(html):
        if match.start() < at or _WRAPPED.search(html, max(0, match.start() - 80), match.start()):
            continue  # inside a chart, or wrapped already
        end = html.find("</svg>", match.end())
        if end < 0:
            continue
        end += len("</svg>")
        width = min_width(float(match["width"]), float(match["font"]))
        out.append(html[at : match.start()])
        out.append(f"{WRAPPER.format(width)}{html[match.start() : end]}</span>")
        at = end
    out.append(html[at:])
    return "".join(out)
