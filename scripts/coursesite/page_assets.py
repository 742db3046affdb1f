"""A page loads what it uses, and nothing else (docs/adr/0012).

- Mermaid only on a page that still has a `<pre class="mermaid">` (coursesite.mermaid_svg draws the
  diagrams at build time when Chromium is there; ADR-0013). Decided from each page's HTML at
  build time, so a new page needs no registration. The engine stays listed in
  `extra_javascript` (local_assets checks it exists); this stage drops its <script> tag where
  unused. Formulas need no engine at all: math_svg typesets them at build time.
- Search: one index per language (search/search_index.json for the default language,
  <lang>/search/search_index.json for the others), split from static-i18n's merged index, and
  javascripts/requests-on-demand.js, put before Material's bundle, fetches the page language's
  index when the reader first turns to the search box instead of on every page load.
"""

import json
import re
from pathlib import Path

from coursesite import Build, Languages, PageInfo

# engine -> its extra_javascript entries, in the order mkdocs.yml lists them
ENGINES: dict[str, tuple[str, ...]] = {
    "mermaid": ("javascripts/mermaid-esm.mjs",),
}
ON_DEMAND_JS = "javascripts/requests-on-demand.js"
SEARCH_INDEX = "search/search_index.json"

MERMAID = re.compile(r'<pre class="[^"]*\bmermaid\b')
BUNDLE = re.compile(r'<script src="(?P<root>[^"]*?)assets/javascripts/bundle\.[0-9a-f]+\.min\.js">')


def engines_used(html: str) -> set[str]:
    """The engines a page's HTML needs."""
    used = set()
    if MERMAID.search(html):
        used.add("mermaid")
    return used


def drop_scripts(html: str, sources: list[str]) -> str:
    """Remove the <script src="…/SOURCE"></script> tags of `sources` (relative to the site root)."""
    for source in sources:
        tag = re.compile(rf'\s*<script src="(?:[^"]*/)?{re.escape(source)}"[^>]*></script>')
        html = tag.sub("", html, count=1)
    return html


def insert_on_demand_script(html: str, lang_prefix: str) -> str:
    """Put requests-on-demand.js right before Material's bundle, with the URLs it needs."""
    bundle = BUNDLE.search(html)
    if bundle is None:
        return html  # not a Material page (e.g. a redirect)
    root = bundle["root"]
    tag = (
        f'<script src="{root}{ON_DEMAND_JS}" data-default-index="{root}{SEARCH_INDEX}" '
        f'data-search-index="{root}{lang_prefix}{SEARCH_INDEX}"></script>\n      '
    )
    return html[: bundle.start()] + tag + html[bundle.start() :]


def page_assets(html: str, lang_prefix: str) -> str:
    used = engines_used(html)
    unused = [src for engine, srcs in ENGINES.items() if engine not in used for src in srcs]
    return insert_on_demand_script(drop_scripts(html, unused), lang_prefix)


def load_what_is_used(output: str, page: PageInfo, build: Build) -> str:
    return page_assets(output, build.languages.prefix(build.lang))


def not_found_assets(output: str, build: Build) -> str:
    return page_assets(output, build.languages.prefix(build.lang))


def language_of(location: str, languages: Languages) -> str:
    """The language of a search index entry: "en/glossary/#kv" -> "en", "glossary/" -> "zh"."""
    return next((o for o in languages.others if location.startswith(f"{o}/")), languages.default)


def split_search_index(index: dict, languages: Languages) -> dict[str, dict]:
    """static-i18n's merged index -> one index per language, keyed by its prefix ("", "en/")."""
    split: dict[str, dict] = {}
    for lang in (languages.default, *languages.others):
        docs = [d for d in index["docs"] if language_of(d["location"], languages) == lang]
        # lunr languages the worker loads: only Chinese pages need the Chinese segmenter
        langs = index["config"]["lang"] if lang == "zh" else [lang]
        config = {**index["config"], "lang": langs}
        split[languages.prefix(lang)] = {**index, "config": config, "docs": docs}
    return split


def config_problems(docs_dir: Path, extra_javascript: list[str]) -> list[str]:
    """The engines' scripts are listed in extra_javascript and the on-demand script exists."""
    problems = [
        f"page_assets expects {src} in extra_javascript (mkdocs.yml); update ENGINES in "
        "scripts/coursesite/page_assets.py if an engine moved"
        for srcs in ENGINES.values()
        for src in srcs
        if src not in extra_javascript
    ]
    if not (docs_dir / ON_DEMAND_JS).is_file():
        problems.append(f"{ON_DEMAND_JS} is missing under {docs_dir}")
    return problems


def split_site_index(build: Build) -> None:
    site_dir, languages = build.site, build.languages
    """static-i18n's merged search index -> one per language, after every language is built."""
    merged = site_dir / SEARCH_INDEX
    if not merged.is_file():
        return  # no search plugin
    index = json.loads(merged.read_text(encoding="utf-8"))
    for prefix, part in split_search_index(index, languages).items():
        path = site_dir / prefix / SEARCH_INDEX
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(part, ensure_ascii=False, separators=(",", ":")), "utf-8")
