"""Every page of the build, in both languages, as Chromium shows it.

Each test reads the session's page reports (one visit per page, see conftest.py) and lists every
offending page with the offending request or element.
"""

import re
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from conftest import COURSE, DOCS, ROOT
from executed import build_output
from markdown_source import expand_snippets, read_page

from .pagecheck import (
    DEFAULT_LANG,
    OTHER_LANGS,
    PageReport,
    counterpart,
    lang_of,
    language_round_trips,
    unprefixed,
)

SNIPPET_BASES = [ROOT / "snippets", ROOT / "labs"]
MATHJAX = re.compile(r"/mathjax")  # formulas are SVG from the build (ADR-0013)


def offenders(
    reports: dict[str, PageReport], found: Callable[[PageReport], Iterable[str]]
) -> list[str]:
    return [f"{r.url}: {item}" for r in reports.values() for item in found(r)]


def assert_none(title: str, lines: list[str]) -> None:
    if lines:
        pytest.fail(f"{title} ({len(lines)}):\n  " + "\n  ".join(lines), pytrace=False)


def test_every_page_loads_and_renders_in_time(reports):
    assert_none("pages that did not load or render", offenders(reports, lambda r: r.problems))


def test_no_request_goes_to_another_host(reports):
    assert_none("requests to another host", offenders(reports, PageReport.external_requests))


def test_no_request_fails(reports):
    assert_none("failed requests", offenders(reports, lambda r: r.failed))


def test_no_console_error_and_no_uncaught_exception(reports):
    found = offenders(reports, lambda r: [f"console error: {m}" for m in r.console_errors])
    found += offenders(reports, lambda r: [f"uncaught exception: {e}" for e in r.page_errors])
    assert_none("errors in the browser console", found)


def test_no_page_loads_mathjax_or_the_search_index(reports):
    """MathJax runs at build time only (ADR-0013); the search index loads only once the reader
    turns to the search box (tests/browser/test_search.py)."""

    def eager(r: PageReport) -> list[str]:
        return [u for u in r.requests if MATHJAX.search(u) or "search_index.json" in u]

    assert_none("requests made before any interaction", offenders(reports, eager))


def test_every_formula_is_typeset_without_error(reports):
    assert any(r.formulas for r in reports.values()), "no page has math: is discovery broken?"
    found = offenders(reports, lambda r: [f"not typeset: {f}" for f in r.unrendered_formulas])
    found += offenders(reports, lambda r: [f"MathJax error: {e}" for e in r.math_errors])
    assert_none("formulas without exactly one rendered mjx-container", found)


def test_every_mermaid_diagram_is_rendered(reports):
    assert any(r.mermaid_in_html for r in reports.values()), "no page has a Mermaid diagram"

    def problems(r: PageReport) -> list[str]:
        found = [f"{r.mermaid_left} <pre class='mermaid'> left unrendered"] * bool(r.mermaid_left)
        if r.mermaid_svgs != r.mermaid_in_html:
            found.append(f"{r.mermaid_in_html} diagrams in the HTML, {r.mermaid_svgs} SVGs drawn")
        found += [f"{r.mermaid_errors} diagrams show Mermaid's syntax error"] * bool(
            r.mermaid_errors
        )
        return found

    assert_none("Mermaid diagrams not rendered", offenders(reports, problems))


def source_page(path: str) -> Path | None:
    """The Markdown a page is built from: "en/glossary/" -> docs/glossary.en.md."""
    lang = lang_of(path)
    stem = unprefixed(path).rstrip("/") or "index"
    suffix = ".md" if lang == DEFAULT_LANG else f".{lang}.md"
    for candidate in (DOCS / f"{stem}{suffix}", DOCS / stem / f"index{suffix}"):
        if candidate.is_file():
            return candidate
    return None


def first_output_line(code: str, block_id: str | None) -> str:
    output = build_output(expand_snippets(code, SNIPPET_BASES), block_id)
    return next((line.strip() for line in output.splitlines() if line.strip()), "")


def squeeze(text: str) -> str:
    return " ".join(text.split())


def test_executed_output_is_visible(reports):
    """Each executed block shown as text (result="...") has its output in a visible <pre>.

    Blocks whose output is Markdown or HTML (no result=, or html="1") render as page content; the
    snapshot tests hold their output."""
    checked, found = 0, []
    for path, report in reports.items():
        source = source_page(path)
        for block in read_page(source).executed_blocks if source else []:
            if "result" not in block.options:
                continue
            checked += 1
            line = first_output_line(block.body, block.block_id)
            if squeeze(line) not in squeeze(report.pre_text):
                found.append(
                    f"{report.url}: block {block.block_id!r}: {line!r} in no visible <pre>"
                )
    assert checked, "no page has an executed block with result=: is discovery broken?"
    assert_none("executed output not visible", found)


def test_build_time_charts_are_drawn(reports):
    """Executed blocks that emit HTML (html="1") draw an inline SVG chart the reader can see."""
    checked, found = 0, []
    for path, report in reports.items():
        source = source_page(path)
        blocks = read_page(source).executed_blocks if source else []
        expected = sum(b.options.get("html") in {"1", "true"} for b in blocks)
        checked += expected
        if report.charts < expected:
            found.append(
                f"{report.url}: {expected} chart blocks, {report.charts} visible SVG charts"
            )
    assert checked, 'no page has an html="1" executed block: is discovery broken?'
    assert_none("build-time charts not drawn", found)


def test_html_lang_is_the_page_language(reports):
    found = [
        f'{r.url}: <html lang="{r.lang}">, expected "{lang_of(path)}"'
        for path, r in reports.items()
        if r.lang != lang_of(path)
    ]
    assert_none("pages in the wrong language", found)


def test_language_menu_links_to_the_counterpart_page(reports, site_url):
    found = []
    for path, report in reports.items():
        other = next((lang for lang in report.switcher if lang != lang_of(path)), None)
        if other is None:
            found.append(f"{report.url}: no other language in the menu: {report.switcher}")
        elif report.switcher[other] != site_url + counterpart(path, other):
            expected = site_url + counterpart(path, other)
            found.append(f"{report.url}: {other} -> {report.switcher[other]}, not {expected}")
    assert_none("language menu links", found)


def test_language_menu_leads_there_and_back(browser, site_url, pages):
    """A real pointer on the menu, for every page of the default language: there and back."""
    own = [p for p in pages if lang_of(p) == DEFAULT_LANG]
    found = []
    for lang in OTHER_LANGS:
        trips = language_round_trips(browser, [site_url + p for p in own], lang)
        for path in own:
            expected = [site_url + counterpart(path, lang), site_url + path]
            if trips[site_url + path] != expected:
                found.append(f"{site_url + path} -> {' -> '.join(trips[site_url + path])}")
    assert_none("language menu round trips that end elsewhere", found)


def test_no_serious_or_critical_accessibility_violation(reports):
    assert_none("axe-core violations", offenders(reports, lambda r: r.axe_violations))


def test_no_page_scrolls_sideways_on_a_phone(reports):
    def problems(r: PageReport) -> list[str]:
        found = [f"sticks out on the right: {element}" for element in r.phone_wide_elements]
        if r.phone_scroll_width > r.phone_client_width + 1:
            width = f"{r.phone_scroll_width} px wide at {r.phone_client_width} px"
            found.insert(0, f"page scrolls sideways: {width}")
        return found

    assert_none("390 px wide (phone) layout", offenders(reports, problems))


def test_blocks_far_down_wait_until_the_reader_scrolls_near(reports):
    """extra.css (ADR-0013) lets the browser skip what is far below the first screen. Every lesson
    and notebook leaves some block undrawn at load (a notebook is one block: its cells must be
    lazy themselves), and no page draws a block three screens down."""
    found = offenders(reports, lambda r: r.far_blocks_drawn)
    lesson_paths = {f"{lesson.part.key}/{lesson.slug}/" for lesson in COURSE.lessons}
    lessons = [r for path, r in reports.items() if unprefixed(path) in lesson_paths or r.notebook]
    assert len(lessons) == 2 * len(COURSE.lessons), "a lesson page is missing from the reports"
    found += [f"{r.url}: every block drawn at load" for r in lessons if not r.skipped_blocks]
    assert_none("blocks far below the first screen drawn at load", found)


def test_a_block_the_browser_may_skip_clips_its_content(reports):
    """A skipped block keeps a 4em placeholder; a checker that measures its content (axe) lays
    it out at full height over what follows, the footer included, unless the block's overflow
    says it is clipped (extra.css, ADR-0017). Lighthouse's colour-contrast audit failed on
    kv_cache's further-reading list when the last blocks were left to a tail drawn at load."""
    assert_none(
        "blocks left to content-visibility: auto that do not clip their content",
        offenders(reports, lambda r: r.unclipped_lazy_blocks),
    )
