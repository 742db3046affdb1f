"""MkDocs hook: every page exists in both languages (x.md Chinese beside x.en.md English).

static-i18n would otherwise fall back silently or leave a language without the page;
this makes a missing translation a build error that names the file.
"""

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError

TRANSLATION_SUFFIX = ".en.md"


def missing_translations(docs_dir: Path, excluded) -> list[str]:
    problems = []
    for page in sorted(docs_dir.rglob("*.md")):
        rel = page.relative_to(docs_dir).as_posix()
        if excluded(rel):
            continue
        if page.name.endswith(TRANSLATION_SUFFIX):
            sibling = page.with_name(page.name.removesuffix(TRANSLATION_SUFFIX) + ".md")
            lang = "Chinese"
        else:
            sibling = page.with_name(page.name.removesuffix(".md") + TRANSLATION_SUFFIX)
            lang = "English"
        if not sibling.exists():
            problems.append(f"{rel} has no {lang} version ({sibling.relative_to(docs_dir)})")
    return problems


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    spec = config.exclude_docs

    def excluded(rel: str) -> bool:
        return bool(spec and spec.match_file(rel))

    problems = missing_translations(Path(config.docs_dir), excluded)
    if problems:
        raise PluginError("Missing translations:\n  " + "\n  ".join(problems))
    return config
