"""Material's search (one lunr index per language, jieba-segmented Chinese), typed for real.

Each term must find a lesson or the glossary of the reader's language that contains it (anywhere
in the result list), and every result must be in the reader's language: a Chinese query on /, an
English one on /en/, and terms both languages share on both. The index is not fetched until the
reader turns to the search box (coursesite.page_assets).
"""

import html
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page

from serve_site import DESKTOP

from .pagecheck import DEFAULT_LANG, OTHER_LANGS, lang_of, unprefixed

TERMS = {
    DEFAULT_LANG: ["预填充", "解码", "算术强度", "KV 缓存", "TTFT", "Roofline"],
    "en": ["prefill", "decode", "TTFT", "intensity", "KV cache", "roofline"],
}
LANGS = [DEFAULT_LANG, *OTHER_LANGS]
ARTICLE = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)
RESULT_LINKS = ".md-search-result__item a"
INDEX = "search/search_index.json"


def is_lesson_or_glossary(path: str) -> bool:
    """Lessons live at <part>/<slug>/ (docs/<part>/<slug>.md); ADRs are not lessons."""
    rel = unprefixed(path)
    return rel == "glossary/" or (rel.count("/") == 2 and not rel.startswith("adr/"))


def article_text(site: Path, path: str) -> str:
    page = (site / path / "index.html").read_text(encoding="utf-8")
    article = ARTICLE.search(page)
    return html.unescape(re.sub(r"<[^>]+>", "", article[1] if article else ""))


def pages_with(term: str, site: Path, pages: list[str], lang: str) -> set[str]:
    """Lessons and glossary of `lang` containing `term`."""
    return {
        p
        for p in pages
        if lang_of(p) == lang
        and is_lesson_or_glossary(p)
        and term.lower() in article_text(site, p).lower()
    }


@pytest.fixture(scope="module")
def search_box(browser, site_url) -> Iterator[dict[str, Page]]:
    """One page per language, on its home page, with the search box opened by pressing "/"."""
    opened: dict[str, Page] = {}
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(30_000)
    for lang in LANGS:
        page = context.new_page()
        indexes: list[str] = []
        page.on("request", lambda r, seen=indexes: seen.append(r.url) if INDEX in r.url else None)
        page.goto(site_url if lang == DEFAULT_LANG else f"{site_url}{lang}/")
        page.wait_for_load_state("networkidle")
        assert not indexes, f"{page.url} fetched the search index before any search: {indexes}"
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.matches('.md-search__input')"), (
            f"pressing / on {page.url} did not focus the search box"
        )
        own = f"{site_url}{'' if lang == DEFAULT_LANG else lang + '/'}{INDEX}"
        page.wait_for_load_state("networkidle")
        assert indexes == [own], f"focusing the search box on {page.url} fetched {indexes}"
        opened[lang] = page
    yield opened
    context.close()


def search(page: Page, term: str) -> list[str]:
    """Type `term` with real key events; return the result links shown first."""
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    page.wait_for_selector(RESULT_LINKS, state="detached")
    page.keyboard.type(term, delay=20)
    page.keyboard.press("End")  # CJK text arrives without key events (as after an IME): one keyup
    return settled_links(page)


def more_results(page: Page) -> list[str]:
    """Material shows ten results at first and more as the list is scrolled."""
    page.eval_on_selector(".md-search__scrollwrap", "el => el.scrollTop = el.scrollHeight")
    return settled_links(page)


def settled_links(page: Page, timeout_s: float = 10) -> list[str]:
    """The result links once they stop changing (results of the partly typed term come first)."""
    previous: list[str] | None = None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        page.wait_for_timeout(300)
        links = page.eval_on_selector_all(RESULT_LINKS, "links => links.map(a => a.href)")
        if links and links == previous:
            return links
        previous = links
    return previous or []


def paths(links: list[str], prefix: str) -> set[str]:
    """Result links as page paths: http://host/prefix/en/glossary/?h=x#y -> en/glossary/"""
    return {urlsplit(link).path.removeprefix(prefix) for link in links}


@pytest.mark.parametrize(
    ("lang", "term"), [(lang, term) for lang, terms in TERMS.items() for term in terms]
)
def test_search_finds_the_page_with_the_term(search_box, built_site, pages, site_url, lang, term):
    expected = pages_with(term, built_site.site, pages, lang)
    assert expected, f"no lesson or glossary page contains {term!r}: nothing to search for"
    page = search_box[lang]
    prefix = urlsplit(site_url).path
    links, shown = search(page, term), []
    while len(links) > len(shown) and not expected & paths(links, prefix):
        links, shown = more_results(page), links
    found = paths(links, prefix)
    meta = page.inner_text(".md-search-result__meta")
    assert found & expected, (
        f"searching {term!r} on {page.url}: none of {sorted(expected)} in the results "
        f"({meta}): {sorted(found)}"
    )
    foreign = sorted(p for p in found if lang_of(p) != lang)
    assert not foreign, f"searching {term!r} on {page.url} found other languages' pages: {foreign}"
