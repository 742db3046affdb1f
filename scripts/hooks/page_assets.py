"""MkDocs hook: a page loads what it uses, and nothing else (docs/adr/0012).

- Mermaid only on a page that still has a `<pre class="mermaid">` (mermaid_svg.py draws the
  diagrams at build time when Chromium is there; ADR-0013). Decided from each page's HTML at
  build time, so a new page needs no registration. The engine stays listed in
  `extra_javascript` (local_assets.py checks it exists); this hook drops its <script> tag where
  unused. Formulas need no engine at all: math_svg.py typesets them at build time.
- Search: one index per language (search/search_index.json for the default language,
  <lang>/search/search_index.json for the others), split from static-i18n's merged index, and
  javascripts/requests-on-demand.js, put before Material's bundle, fetches the page language's
  index when the reader first turns to the search box instead of on every page load.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.pages import Page

# engine -> its extra_javascript entries, in the order mkdocs.yml lists them
ENGINES: dict[str, tuple[str, ...]] = {
    "mermaid": ("javascripts/mermaid-esm.mjs",),
}
ON_DEMAND_JS = "javascripts/requests-on-demand.js"
SEARCH_INDEX = "search/search_index.json"

MERMAID = re.compile(r'<pre class="[^"]*\bmermaid\b')
BUNDLE = re.compile(r'<script src="(?P<root>[^"]*?)assets/javascripts/bundle\.[0-9a-f]+\.min\.js">')


@dataclass(frozen=True)
class Languages:
    default: str
    others: tuple[str, ...]

    def prefix(self, lang: str) -> str:
        """Where a language's pages live, relative to the site root: "" or "en/"."""
        return "" if lang == self.default else f"{lang}/"


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


def _languages(config: MkDocsConfig) -> Languages:
    i18n = config.plugins.get("i18n")
    if i18n is None:
        lang = config.theme["language"]
        return Languages(lang, ())
    langs = [lang for lang in i18n.config.languages if lang.build]
    default = next(lang.locale for lang in langs if lang.default)
    return Languages(default, tuple(lang.locale for lang in langs if not lang.default))


def _page_lang(config: MkDocsConfig) -> str:
    i18n = config.plugins.get("i18n")
    return i18n.current_language if i18n is not None else config.theme["language"]


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    listed = {str(getattr(item, "path", item)) for item in config.extra_javascript}
    missing = [src for srcs in ENGINES.values() for src in srcs if src not in listed]
    if missing:
        raise PluginError(
            f"page_assets.py expects {', '.join(missing)} in extra_javascript (mkdocs.yml); "
            "update ENGINES in scripts/hooks/page_assets.py if an engine moved"
        )
    if not (Path(config.docs_dir) / ON_DEMAND_JS).is_file():
        raise PluginError(f"{ON_DEMAND_JS} is missing under {config.docs_dir}")
    return config


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    return page_assets(output, _languages(config).prefix(_page_lang(config)))


def on_post_template(output: str, template_name: str, config: MkDocsConfig) -> str:
    if template_name != "404.html":
        return output
    return page_assets(output, _languages(config).prefix(_page_lang(config)))


@event_priority(-200)  # after static-i18n (-100) has built every language and merged the index
def on_post_build(config: MkDocsConfig) -> None:
    i18n = config.plugins.get("i18n")
    if i18n is not None and i18n.building:
        return  # an inner build of another language: the outer one splits the merged index
    languages = _languages(config)
    merged = Path(config.site_dir) / SEARCH_INDEX
    if not merged.is_file():
        return  # no search plugin
    index = json.loads(merged.read_text(encoding="utf-8"))
    for prefix, part in split_search_index(index, languages).items():
        path = Path(config.site_dir) / prefix / SEARCH_INDEX
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(part, ensure_ascii=False, separators=(",", ":")), "utf-8")
