"""The real site: strict build, both languages, executed output, diagrams, math, no other host."""

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import ClassVar
from urllib.parse import unquote

import pytest

from conftest import (
    DOCS,
    ROOT,
    built_html,
    chinese_notebooks,
    chinese_pages,
    english_notebooks,
    english_pages,
    english_sibling,
    lesson_pages,
)
from executed import build_output
from markdown_source import expand_snippets, read_page

SNIPPET_BASES = [ROOT / "snippets", ROOT / "labs"]
LESSONS = lesson_pages()


def executed_output(script: Path) -> str:
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    return proc.stdout


def visible_text(html: str) -> str:
    text = re.sub(r"<[^>]+>", "", html)
    for entity, char in {
        "&gt;": ">",
        "&lt;": "<",
        "&amp;": "&",
        "&quot;": '"',
        "&#39;": "'",
    }.items():
        text = text.replace(entity, char)
    return text


def rendered_pieces(block) -> list[str]:
    """What an executed block without `result=` must put on the page: its HTML as printed, or the
    text of its printed Markdown (each table cell, each other line)."""
    output = build_output(expand_snippets(block.body, SNIPPET_BASES), block.block_id)
    if block.options.get("html"):
        return [output.strip()]
    pieces = []
    for line in filter(None, (line.strip() for line in output.splitlines())):
        if not line.startswith("|"):
            pieces.append(line)
        elif not set(line) <= set("|-: "):  # a table row, not the |---| rule
            pieces += [cell.strip() for cell in line.strip("|").split("|") if cell.strip()]
    return pieces


def test_every_chinese_page_has_an_english_sibling_and_vice_versa():
    chinese = chinese_pages() + chinese_notebooks()
    missing = [str(english_sibling(p).relative_to(ROOT)) for p in chinese]
    missing = [m for m in missing if not (ROOT / m).exists()]
    english = english_pages() + english_notebooks()
    orphans = [
        str(p.relative_to(ROOT))
        for p in english
        if not p.with_name(p.stem.removesuffix(".en") + p.suffix).exists()
    ]
    assert not missing, f"pages without an English version: {missing}"
    assert not orphans, f"English pages without a Chinese version: {orphans}"


def test_strict_build_of_the_real_site_succeeds(built_site):
    assert "WARNING" not in built_site.output, built_site.output


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_page_is_built_in_both_languages(built_site, lang):
    for page in chinese_pages() + chinese_notebooks():
        html = built_html(built_site.site, page, lang)
        assert html.is_file(), f"{page.relative_to(ROOT)} was not built for '{lang}' at {html}"
        assert f'<html lang="{lang}"' in html.read_text(encoding="utf-8")


def test_there_is_at_least_one_lesson():
    assert LESSONS, "docs/lessons.yml lists no lesson with a Markdown page"


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("page", LESSONS, ids=lambda p: p.stem)
def test_lesson_has_executed_output_mermaid_and_math(built_site, page, lang):
    html = built_html(built_site.site, page, lang).read_text(encoding="utf-8")
    slug = page.stem
    scripts = sorted((ROOT / "snippets" / slug).glob("*.py"))
    included = [s for s in scripts if f'--8<-- "{slug}/{s.name}"' in page.read_text("utf-8")]
    assert included, f"{page.name} includes no snippet from snippets/{slug}/"
    text = visible_text(html)
    source = read_page(page if lang == "zh" else english_sibling(page))
    for block in source.executed_blocks:
        if "result" in block.options:  # printed text: running the file gives the reader the same
            for script in (s for s in included if f'"{slug}/{s.name}"' in block.body):
                for line in executed_output(script).splitlines():
                    assert line in text, (
                        f"{page.name} [{lang}]: output line of {script.name} missing: {line!r}"
                    )
        else:  # printed Markdown or HTML, rendered into the page: run the block as the build does
            where = html if block.options.get("html") else text
            missing = [piece for piece in rendered_pieces(block) if piece not in where]
            assert not missing, f"{page.name} [{lang}] block {block.block_id}: missing {missing}"
    # section 2's picture: a Mermaid diagram or a chart drawn by code (CONTRIBUTING, lesson shape)
    picture = re.search(r'<(pre|div) class="mermaid">', html) or 'role="img"' in html
    assert picture, f"{page.name} [{lang}] has no diagram or chart"
    assert re.search(r'<div class="arithmatex"><mjx-container [^>]*display="true"', html), (
        f"{page.name} [{lang}] has no display math"
    )
    # a code listing may show an f-string's {{ }}; a value reference is {{ lesson.name }}
    unfilled = re.findall(r"\{\{\s*[a-z_]+\.[a-z0-9_]+\s*\}\}", text)
    assert not unfilled, f"{page.name} [{lang}] has an unfilled value reference: {unfilled[:3]}"


def test_language_switcher_points_to_the_counterpart_page(built_site):
    for page in LESSONS:
        zh = built_html(built_site.site, page, "zh").read_text(encoding="utf-8")
        en = built_html(built_site.site, page, "en").read_text(encoding="utf-8")
        url = page.relative_to(DOCS).with_suffix("").as_posix() + "/"
        assert re.search(rf'href="[^"]*/en/{re.escape(url)}"[^>]*hreflang="en"', zh), page.name
        assert re.search(rf'href="[^"]*/{re.escape(url)}"[^>]*hreflang="zh"', en), page.name


class _AssetRefs(HTMLParser):
    """Collects src/href of scripts, stylesheets, fonts, images and other fetched resources."""

    FETCHED_LINK_RELS: ClassVar[set[str]] = {
        "stylesheet",
        "preload",
        "modulepreload",
        "icon",
        "manifest",
        "prefetch",
    }

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in {"script", "img", "iframe", "source", "audio", "video", "embed"} and a.get("src"):
            self.refs.append(a["src"])
        if tag == "link" and set((a.get("rel") or "").split()) & self.FETCHED_LINK_RELS:
            self.refs.append(a.get("href", ""))


EXTERNAL = re.compile(r"^(?:https?:)?//", re.IGNORECASE)
CSS_EXTERNAL = re.compile(r"(?:url\(\s*['\"]?|@import\s+['\"])((?:https?:)?//[^'\")\s]+)", re.I)


def test_no_built_page_fetches_from_another_host(built_site):
    offenders = []
    for html in built_site.site.rglob("*.html"):
        parser = _AssetRefs()
        parser.feed(html.read_text(encoding="utf-8"))
        offenders += [
            f"{html.relative_to(built_site.site)}: {r}" for r in parser.refs if EXTERNAL.match(r)
        ]
        offenders += [
            f"{html.relative_to(built_site.site)}: {m}"
            for m in CSS_EXTERNAL.findall(html.read_text(encoding="utf-8"))
        ]
    for css in built_site.site.rglob("*.css"):
        offenders += [
            f"{css.relative_to(built_site.site)}: {m}"
            for m in CSS_EXTERNAL.findall(css.read_text(encoding="utf-8", errors="replace"))
        ]
    assert not offenders, "resources from another host:\n" + "\n".join(offenders)


def test_the_offline_scan_catches_an_external_script():
    parser = _AssetRefs()
    parser.feed(
        '<script src="https://cdn.example.org/x.js"></script>'
        '<link rel="stylesheet" href="//f.io/a.css">'
    )
    assert [r for r in parser.refs if EXTERNAL.match(r)] == [
        "https://cdn.example.org/x.js",
        "//f.io/a.css",
    ]
    assert CSS_EXTERNAL.findall("@font-face{src:url(https://fonts.example/x.woff2)}")


def test_vendored_assets_are_served_by_the_site(built_site):
    mermaid = built_site.site / "assets/vendor/mermaid/mermaid.esm.min.mjs"
    assert mermaid.is_file(), "Mermaid missing: a diagram left to the browser would not draw"
    # formulas are SVG from the build (ADR-0013): the site serves no MathJax
    assert not list(built_site.site.glob("assets/vendor/mathjax*")), "MathJax is still vendored"


ID_ATTR = re.compile(r'\sid="([^"]*)"')
# a link to a place on a page of this site: "#x" or a relative path with "#x" (not another host)
FRAGMENT_LINK = re.compile(r'\shref="(?![a-z][a-z0-9+.-]*:|//)([^"#]*)#([^"]*)"')


def broken_fragments(site: Path, pages: dict[Path, str]) -> list[str]:
    """Each link to a place on a page of the site whose page has no element with that id, and
    each element with an empty id, as 'page: href'."""
    ids = {page: set(ID_ATTR.findall(html)) for page, html in pages.items()}
    found = []
    for page, html in pages.items():
        where = page.relative_to(site).as_posix()
        if ' id=""' in html:
            found.append(f'{where}: an element with id=""')
        for path, fragment in FRAGMENT_LINK.findall(html):
            target = (page.parent / unquote(path)).resolve() if path else page
            if target.is_dir():
                target = target / "index.html"
            if target in ids and unquote(fragment) not in ids[target]:
                found.append(f"{where}: {path}#{fragment}")
    return found


def test_every_link_to_a_place_on_a_page_lands_on_it(built_site):
    """Tables of contents, header links, the learning map, glossary and source notes: every
    fragment resolves to an element of its page (mkdocs --strict checks only what Markdown
    links; the Chinese playground's table of contents once led nowhere)."""
    site = built_site.site.resolve()
    pages = {p: p.read_text(encoding="utf-8") for p in site.rglob("*.html")}
    assert not (found := broken_fragments(site, pages)), "\n".join(found)


def test_the_fragment_check_finds_a_link_that_leads_nowhere(tmp_path):
    (tmp_path / "a").mkdir()
    pages = {
        tmp_path / "index.html": '<h2 id="">x</h2><a href="#_2">x</a><a href="a/#y">y</a>'
        '<a href="https://example.org/#z">z</a><a href="#top">t</a><p id="top"></p>',
        tmp_path / "a/index.html": '<h2 id="x">x</h2>',
    }
    assert broken_fragments(tmp_path, pages) == [
        'index.html: an element with id=""',
        "index.html: #_2",
        "index.html: a/#y",
    ]
