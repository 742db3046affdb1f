"""Long code on a lesson page is folded: the reader's main path is the prose.

A code listing longer than FOLD_OVER_LINES (a chart program, a lab script with its argparse) is
put, as rendered, in a closed `<details class="example">` that opens on click; its "Run in
browser" button and its output stay outside, visible. Only listings are folded: executed output
(`language-text`) is what the page shows. The blocks still run at build time and their output is
still snapshot-tested: folding happens after rendering, on the HTML. Lesson pages only.
"""

import re

from coursesite import Build, PageInfo
from coursesite.reading import lesson_of

FOLD_OVER_LINES = 40
CODE_LANGUAGES = ("python", "py", "bash", "sh", "shell", "console", "yaml", "toml", "json")
_LISTING = re.compile(
    r'<div class="language-(?P<lang>[\w-]+) highlight">'
    r'(?:<span class="filename">(?P<filename>[^<]*)</span>)?<pre>.*?</pre></div>',
    re.S,
)
SUMMARY = {
    "zh": "代码（{lines} 行，点击展开）",
    "en": "Code ({lines} lines, click to open)",
}


def listing_lines(listing: str) -> int:
    code = re.sub(r"<[^>]+>", "", listing[listing.index("<pre>") : listing.rindex("</pre>")])
    return code.rstrip("\n").count("\n") + 1


def fold(html: str, lang: str) -> str:
    """Every code listing over FOLD_OVER_LINES lines, in a closed details box."""

    def folded(match: re.Match) -> str:
        listing = match.group(0)
        if match["lang"] not in CODE_LANGUAGES:
            return listing
        lines = listing_lines(listing)
        if lines <= FOLD_OVER_LINES:
            return listing
        label = SUMMARY[lang].format(lines=lines)
        if match["filename"]:
            label = f"{match['filename']} · {label}"
        return f'<details class="example folded-code"><summary>{label}</summary>{listing}</details>'

    return _LISTING.sub(folded, html)


def fold_long_code(html: str, page: PageInfo, build: Build) -> str:
    if lesson_of(page, build.course) is None:
        return html
    return fold(html, page.lang)
