"""Code listings longer than ~40 lines are folded on lesson pages (coursesite.folding)."""

import re

import pytest

from conftest import COURSE, DOCS, built_html
from coursesite import folding
from coursesite.folding import FOLD_OVER_LINES, fold

LISTING = re.compile(r'<div class="language-([\w-]+) highlight">.*?</pre></div>', re.S)


def _listing(lines: int, lang: str = "python") -> str:
    code = "\n".join(f"<span>x = {i}</span>" for i in range(lines))
    return (
        f'<div class="language-{lang} highlight">'
        f"<pre><span></span><code>{code}\n</code></pre></div>"
    )


def test_a_listing_over_the_threshold_is_folded_and_one_at_it_is_not():
    long, short = _listing(FOLD_OVER_LINES + 1), _listing(FOLD_OVER_LINES)
    out = fold(f"<p>a</p>{long}<p>b</p>{short}", "en")
    assert out.count("<details") == 1
    summary = f"<summary>Code ({FOLD_OVER_LINES + 1} lines"
    assert f'<details class="example folded-code">{summary}' in out
    assert out.endswith(short)
    output = _listing(FOLD_OVER_LINES + 20, "text")  # executed output stays shown
    assert fold(output, "zh") == output


def unfolded_long_listings(page_html: str) -> list[int]:
    """Line counts of code listings over the threshold that no <details> holds."""
    found = []
    for match in LISTING.finditer(page_html):
        if match.group(1) not in folding.CODE_LANGUAGES:
            continue
        before = page_html[: match.start()]
        inside_details = before.count("<details") > before.count("</details>")
        lines = folding.listing_lines(match.group(0))
        if lines > FOLD_OVER_LINES and not inside_details:
            found.append(lines)
    return found


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_no_lesson_page_shows_an_unfolded_listing_over_the_threshold(built_site, lang):
    problems, folded = [], 0
    for lesson in COURSE.lessons:
        if lesson.notebook:
            continue
        page = built_html(built_site.site, DOCS / lesson.page, lang).read_text(encoding="utf-8")
        folded += page.count('class="example folded-code"')
        if lines := unfolded_long_listings(page):
            problems.append(f"{lesson.slug} ({lang}): unfolded listings of {lines} lines")
    assert not problems, "\n".join(problems)
    assert folded, "no listing folded anywhere: the check has lost the listings"
