"""What the web and its tools read besides the page text: formulas and diagrams drawn at build
time, per-page engines, per-language search
indexes, edit links, hreflang alternates, the localized 404, llms.txt, Markdown copies and
CITATION.cff.

All but the one-language 404 test (a small fixture site) read the session's strict build of the
real site (conftest.built_site)."""

import functools
import json
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from conftest import DOCS, ROOT, run_mkdocs_build
from coursesite.mermaid_svg import CHROMIUM
from executed import build_output
from markdown_source import expand_snippets, read_page
from serve_site import DEFAULT_SITE_URL, page_paths
from test_build_failures import make_site

LANGS = {"zh": "", "en": "en/"}  # language -> where its pages live
# the repository the build links to: REPO_URL if set (mkdocs.yml's !ENV), else mkdocs.yml's default
REPO_DEFAULT = re.search(
    r'^repo_url: !ENV \[REPO_URL, "([^"]+)"\]',
    (ROOT / "mkdocs.yml").read_text(encoding="utf-8"),
    re.M,
)
assert REPO_DEFAULT, 'mkdocs.yml: repo_url is not `!ENV [REPO_URL, "<default>"]`'
REPO_URL = os.environ.get("REPO_URL") or REPO_DEFAULT[1]
MERMAID = "javascripts/mermaid-esm.mjs"
MATHJAX_SCRIPT = re.compile(r"<script[^>]*src=\"[^\"]*mathjax", re.IGNORECASE)
FORMULA = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.DOTALL)
SVG_FORMULA = re.compile(
    r'<mjx-container class="MathJax" jax="SVG"[^>]*><svg .*<mjx-assistive-mml[^>]*><math ',
    re.DOTALL,
)
DRAWN_DIAGRAM = '<div class="mermaid"><template shadowrootmode="open"><svg '
LEFT_DIAGRAM = '<pre class="mermaid">'
CODE = re.compile(r"^(```|~~~).*?^\1\s*$|(`+)[^`\n].*?\2", re.MULTILINE | re.DOTALL)
SNIPPET_BASES = [ROOT / "snippets", ROOT / "labs"]


def lang_of(path: str) -> str:
    return "en" if path.startswith("en/") else "zh"


def source_of(path: str) -> Path:
    """The file a built page comes from: "en/foundations/x/" -> docs/foundations/x.en.md."""
    lang = lang_of(path)
    stem = path.removeprefix(LANGS[lang]).rstrip("/") or "index"
    suffix = "" if lang == "zh" else f".{lang}"
    for candidate in (f"{stem}{suffix}.md", f"{stem}{suffix}.ipynb", f"{stem}/index{suffix}.md"):
        if (DOCS / candidate).is_file():
            return DOCS / candidate
    raise AssertionError(f"no source for the built page {path}")


@pytest.fixture(scope="module")
def pages(built_site) -> dict[str, str]:
    """Every built page (path relative to the site root) -> its HTML."""
    site = built_site.site
    return {p: (site / p / "index.html").read_text(encoding="utf-8") for p in page_paths(site)}


def test_every_page_is_found(pages):
    assert {lang_of(p) for p in pages} == set(LANGS) and len(pages) > 10, sorted(pages)


# -- engines: loaded only where a page uses them -------------------------------------------------


def notebook_has_tex(source: Path) -> bool:
    cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
    text = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    return bool(re.search(r"\$[^$\s][^$]*\$", text))


def uses_math_and_diagrams(path: str) -> tuple[bool, int]:
    """Whether a page's source has math, and how many Mermaid diagrams."""
    source = source_of(path)
    if source.suffix == ".ipynb":
        return notebook_has_tex(source), 0
    parsed = read_page(source)
    prose = CODE.sub("", "\n".join(parsed.prose))
    math = bool(re.search(r"\$\$|\\\(|(?<![\\$])\$[^$\s`][^$`]*\$", prose))
    return math, parsed.mermaid_diagrams


def test_formulas_are_svg_from_the_build_and_no_page_loads_mathjax(pages):
    found = []
    for path, html in pages.items():
        math, _ = uses_math_and_diagrams(path)
        formulas = [body for _, body in FORMULA.findall(html)]
        if bool(formulas) != math:
            found.append(f"{path}: math in the source: {math}, formulas: {len(formulas)}")
        found += [
            f"{path}: not typeset at build time (SVG + assistive MathML): {body[:60]!r}"
            for body in formulas
            if not SVG_FORMULA.match(body)
        ]
        if MATHJAX_SCRIPT.search(html):
            found.append(f"{path}: loads MathJax")
        if formulas and 'id="mathjax-svg-styles"' not in html:
            found.append(f"{path}: formulas without MathJax's stylesheet")
    assert not found, "\n".join(found)
    assert any(FORMULA.search(h) for h in pages.values()), "no page has math"


def test_diagrams_are_drawn_at_build_time_and_mermaid_loads_only_where_one_is_not(pages):
    """With Chromium every diagram is an SVG from the build and no page loads Mermaid; without
    it (an author's machine) the diagrams stay for the browser, with Mermaid's script."""
    found = []
    for path, html in pages.items():
        _, diagrams = uses_math_and_diagrams(path)
        drawn, left = html.count(DRAWN_DIAGRAM), html.count(LEFT_DIAGRAM)
        expected = (diagrams, 0) if CHROMIUM.exists() else (0, diagrams)
        if (drawn, left) != expected:
            found.append(f"{path}: {diagrams} diagrams, {drawn} drawn, {left} left to the browser")
        if (MERMAID in html) != bool(left):
            found.append(f"{path}: {left} diagrams left to the browser, loads Mermaid: {not left}")
    assert not found, "\n".join(found)
    assert any(DRAWN_DIAGRAM in h or LEFT_DIAGRAM in h for h in pages.values()), "no diagram"


def test_the_search_index_is_split_by_language(built_site):
    for lang, prefix in LANGS.items():
        index = json.loads(
            (built_site.site / prefix / "search/search_index.json").read_text("utf-8")
        )
        locations = [d["location"] for d in index["docs"]]
        assert locations, f"the {lang} search index is empty"
        others = [loc for loc in locations if lang_of(loc) != lang]
        assert not others, f"the {lang} index holds other languages' pages: {others[:5]}"
        pages_in_index = {loc.split("#")[0] for loc in locations}
        expected = {p for p in page_paths(built_site.site) if lang_of(p) == lang}
        assert expected <= pages_in_index | {""}, sorted(expected - pages_in_index)


def test_a_search_result_title_has_no_permalink_sign(built_site):
    """Material's search leaves a heading's permalink (`a.headerlink`) out of its title; a
    notebook's headings had mkdocs-jupyter's `a.anchor-link`, so they were found as "Setup¶"."""
    for lang, prefix in LANGS.items():
        index = json.loads(
            (built_site.site / prefix / "search/search_index.json").read_text("utf-8")
        )
        titled = [d["location"] for d in index["docs"] if "¶" in d["title"]]
        assert not titled, f"the {lang} search index: titles with '¶' at {titled[:5]}"


def test_the_search_script_runs_before_materials_bundle(pages):
    for path, html in pages.items():
        on_demand = html.find("javascripts/requests-on-demand.js")
        bundle = re.search(r"assets/javascripts/bundle\.[0-9a-f]+\.min\.js", html)
        assert 0 <= on_demand < bundle.start(), path
        own = re.search(r'data-search-index="([^"]*)"', html)[1]
        expected = f"{LANGS[lang_of(path)]}search/search_index.json"
        assert own == expected or own.endswith(f"/{expected}"), (path, own)


# -- edit links and hreflang ---------------------------------------------------------------------


def test_every_page_has_an_edit_link_to_its_own_language_file(pages):
    found = []
    for path, html in pages.items():
        links = re.findall(r'<a href="([^"]+)"[^>]*rel="edit"', html)
        expected = f"{REPO_URL}/edit/main/docs/{source_of(path).relative_to(DOCS).as_posix()}"
        if links != [expected]:
            found.append(f"{path}: {links}, expected [{expected}]")
    assert not found, "\n".join(found)


def test_no_page_asks_the_github_api_for_repository_facts(pages):
    widgets = [p for p, html in pages.items() if 'data-md-component="source"' in html]
    assert not widgets, f"Material's repository widget would fetch api.github.com on: {widgets}"
    assert all(f'href="{REPO_URL}"' in html for html in pages.values())


def test_every_head_has_hreflang_alternates_for_each_language_and_x_default(pages, built_site):
    found = []
    for path, html in pages.items():
        head = html.split("</head>", 1)[0]
        links = dict(re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)">', head))
        stem = path.removeprefix(LANGS[lang_of(path)])
        expected = {lang: DEFAULT_SITE_URL + prefix + stem for lang, prefix in LANGS.items()}
        expected["x-default"] = expected["zh"]
        if links != expected:
            found.append(f"{path}: {links}, expected {expected}")
        for url in links.values():
            target = built_site.site / urlsplit(url).path.lstrip("/") / "index.html"
            if not target.is_file():
                found.append(f"{path}: alternate {url} is not a built page")
    assert not found, "\n".join(found)


# -- the 404 page --------------------------------------------------------------------------------


def test_each_language_has_its_404_page_and_the_root_one_switches(built_site):
    site = built_site.site
    root = (site / "404.html").read_text(encoding="utf-8")
    english = (site / "en" / "404.html").read_text(encoding="utf-8")
    assert '<html lang="zh"' in root and '<html lang="en"' in english
    assert "<h1>404 - Not found</h1>" in english and "<h1>404 - 找不到页面</h1>" in root
    assert '<a href="/en/">home page</a>' in english and '<a href="/">首页</a>' in root
    assert 'const pages = {"/en/": "' in root, "the root 404 page carries no English page"
    assert root.index('{"/en/"') < root.index("<script src="), "the switch must run first"


def test_a_full_build_has_no_one_language_note(built_site):
    for path in ("404.html", "en/404.html"):
        assert "SERVE_LANG" not in (built_site.site / path).read_text(encoding="utf-8"), path


@pytest.mark.parametrize("only, unbuilt", [("zh", "en"), ("en", "zh")])
def test_a_one_language_build_says_on_its_404_page_how_to_serve_the_other(tmp_path, only, unbuilt):
    pages = {"index.md": "# 首页\n", "index.en.md": "# Home\n"}
    config = make_site(tmp_path, pages)
    text = config.read_text(encoding="utf-8")
    text = text.replace("  - i18n:\n", f"  - i18n:\n      build_only_locale: {only}\n", 1)
    text = text.replace("pipeline_stages: [", "pipeline_stages: [site_meta, ", 1)
    config.write_text(text, encoding="utf-8")
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode == 0, result.output
    page = (tmp_path / "site" / "404.html").read_text(encoding="utf-8")
    assert f"<code>make serve SERVE_LANG={unbuilt}</code>" in page
    assert (only == "zh") == ("这次构建只有中文页面" in page)


# -- llms.txt and the Markdown copies ------------------------------------------------------------


def test_llms_txt_lists_every_page_of_its_language(built_site):
    site = built_site.site
    for lang, prefix in LANGS.items():
        text = (site / prefix / "llms.txt").read_text(encoding="utf-8")
        assert text.startswith("# ") and "\n> " in text, f"{prefix}llms.txt is not llms.txt-shaped"
        linked = set(re.findall(r"\]\((http[^)]+)\)", text))
        for url in linked:
            assert (site / urlsplit(url).path.lstrip("/")).is_file(), f"{prefix}llms.txt: {url}"
        # llms.txt follows the nav: the ADRs, for authors, are out of it (mkdocs.yml not_in_nav)
        pages = {
            p
            for p in page_paths(site)
            if lang_of(p) == lang and not p.removeprefix(prefix).startswith("adr/")
        }
        listed = {urlsplit(u).path.lstrip("/").removesuffix("index.md") for u in linked}
        assert pages <= listed, f"{prefix}llms.txt misses {sorted(pages - listed)}"


def test_every_page_has_a_markdown_copy_without_placeholders(pages, built_site):
    found = []
    for path in pages:
        copy = built_site.site / path / "index.md"
        if not copy.is_file():
            found.append(f"{path}: no index.md")
            continue
        text = CODE.sub("", copy.read_text(encoding="utf-8"))
        found += [f"{path}: placeholder {m}" for m in re.findall(r"\{\{.*?\}\}", text)]
        found += [f"{path}: snippet include left" for _ in re.findall(r"--8<--", text)]
    assert not found, "\n".join(found)


@functools.cache  # values() run simulations: once per lesson per session
def lesson_values(lesson: str) -> dict[str, str]:
    module = __import__(f"{lesson}.values", fromlist=["values"])
    return {k: str(v) for k, v in module.values().items()}


def test_markdown_copies_hold_the_computed_values_and_executed_output(pages, built_site):
    checked_values = checked_blocks = 0
    found = []
    for path in pages:
        source = source_of(path)
        if source.suffix != ".md":
            continue
        copy = (built_site.site / path / "index.md").read_text(encoding="utf-8")
        parsed = read_page(source)
        for name in parsed.value_names:
            lesson, key = name.split(".")
            checked_values += 1
            if lesson_values(lesson)[key] not in copy:
                found.append(f"{path}: value {name} = {lesson_values(lesson)[key]!r} missing")
        for block in parsed.executed_blocks:
            if "result" not in block.options:
                continue
            checked_blocks += 1
            output = build_output(expand_snippets(block.body, SNIPPET_BASES), block.block_id)
            line = next((ln.strip() for ln in output.splitlines() if ln.strip()), "")
            if line not in copy:
                found.append(f"{path}: output of block {block.block_id!r} missing: {line!r}")
    assert checked_values and checked_blocks, "no value or executed block found: discovery broken?"
    assert not found, "\n".join(found)


def test_the_markdown_copy_keeps_formulas_and_diagrams_as_source(built_site):
    copy = (built_site.site / "en/foundations/prefill_decode/index.md").read_text(encoding="utf-8")
    assert "```mermaid\nflowchart" in copy
    assert re.search(r"\$\$\s*\S", copy), "display math lost its $$ delimiters"


# -- CITATION.cff --------------------------------------------------------------------------------


def test_citation_cff_is_complete_and_keeps_the_local_placeholder():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    for key in ("cff-version", "message", "title", "authors", "license", "repository-code"):
        assert cff.get(key), f"CITATION.cff has no {key}"
    # the committed file names mkdocs.yml's placeholder; the served copy names the build's address
    assert cff["repository-code"] == REPO_DEFAULT[1], "CITATION.cff and mkdocs.yml disagree"
    assert set(cff["license"]) == {"CC-BY-4.0", "MIT"}  # the site's copyright line


def test_the_served_citation_names_the_repository_the_site_links_to(built_site):
    committed = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    served = yaml.safe_load((built_site.site / "CITATION.cff").read_text(encoding="utf-8"))
    assert served["repository-code"] == REPO_URL
    assert {k: v for k, v in served.items() if k != "repository-code"} == {
        k: v for k, v in committed.items() if k != "repository-code"
    }


def test_a_build_with_repo_url_links_and_cites_that_repository(tmp_path, monkeypatch):
    """What CI does (.github/workflows/docs.yml): REPO_URL names the repository it builds."""
    real = "https://github.com/someone/llm-course"
    config = make_site(tmp_path, {"index.md": "# 首页\n", "index.en.md": "# Home\n"})
    text = (
        config.read_text(encoding="utf-8")
        .replace("pipeline_stages: [", "pipeline_stages: [site_meta, ", 1)
        .replace("font: false}", "font: false, features: [content.action.edit]}")
    )
    repo_url = '!ENV [REPO_URL, "https://github.com/example/placeholder"]'
    config.write_text(f"repo_url: {repo_url}\nedit_uri: edit/main/docs/\n{text}", encoding="utf-8")
    (tmp_path / "CITATION.cff").write_bytes((ROOT / "CITATION.cff").read_bytes())
    monkeypatch.setenv("REPO_URL", real)
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode == 0, result.output
    served = yaml.safe_load((tmp_path / "site" / "CITATION.cff").read_text(encoding="utf-8"))
    assert served["repository-code"] == real
    index = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert f'href="{real}"' in index and f'href="{real}/edit/main/docs/index.md"' in index
    committed = yaml.safe_load((tmp_path / "CITATION.cff").read_text(encoding="utf-8"))
    assert committed["repository-code"] == REPO_DEFAULT[1], "the build rewrote the committed file"
