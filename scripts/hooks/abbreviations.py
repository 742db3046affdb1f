"""MkDocs hook: append the abbreviations of the page's language.

They live in docs/includes/abbreviations.<lang>.md.

pymdownx.snippets' auto_append is global, so a hover title would be in one language only.
"""

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page


def abbreviations_file(docs_dir: str, locale: str) -> Path:
    return Path(docs_dir) / "includes" / f"abbreviations.{locale}.md"


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_) -> str:
    locale = getattr(page.file, "locale", None) or config.theme["language"]
    path = abbreviations_file(config.docs_dir, locale)
    if not path.exists():
        raise PluginError(f"{page.file.src_uri}: no abbreviation list for '{locale}' at {path}")
    return markdown + "\n\n" + path.read_text(encoding="utf-8")
