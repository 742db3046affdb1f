"""Append the abbreviations of the page's language: docs/includes/abbreviations.<lang>.md.

pymdownx.snippets' auto_append is global, so a hover title would be in one language only.
"""

from pathlib import Path

from coursesite import Build, PageInfo, StageError


def abbreviations_file(docs_dir: Path, lang: str) -> Path:
    return docs_dir / "includes" / f"abbreviations.{lang}.md"


def append(markdown: str, page: PageInfo, build: Build) -> str:
    path = abbreviations_file(build.docs, page.lang)
    if not path.exists():
        raise StageError(f"{page.src_uri}: no abbreviation list for '{page.lang}' at {path}")
    return markdown + "\n\n" + path.read_text(encoding="utf-8")
