"""MkDocs hook: fill `{{ lesson.name }}` in prose with figures from snippets/<lesson>/values.py.

Every computable figure in prose is a named value, the same name in both languages; an unknown
name fails the build naming the page. Code (fenced or inline) is left alone.
See docs/adr/0006-computed-values.md.
"""

import importlib
import re
import sys
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page

REFERENCE = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\s*\}\}")
# Fenced blocks and inline code spans show code verbatim: never substituted.
CODE = re.compile(r"^(```|~~~).*?^\1\s*$|(`+)[^`].*?\2", re.MULTILINE | re.DOTALL)

_snippets: list[Path] = []
_cache: dict[str, dict[str, str]] = {}


def lesson_values(lesson: str) -> dict[str, str]:
    """Values of snippets/<lesson>/values.py, computed once per build; {} if it has none."""
    if lesson not in _cache:
        snippets = _snippets[0]
        if not (snippets / lesson / "values.py").is_file():
            _cache[lesson] = {}
        else:
            module = importlib.import_module(f"{lesson}.values")
            _cache[lesson] = {k: str(v) for k, v in module.values().items()}
    return _cache[lesson]


def references(markdown: str) -> list[tuple[str, str]]:
    """(lesson, name) of every reference outside code, in order."""
    return REFERENCE.findall(CODE.sub("", markdown))


def fill(markdown: str, page_name: str) -> str:
    unknown = sorted(
        {
            f"{lesson}.{name}"
            for lesson, name in references(markdown)
            if name not in lesson_values(lesson)
        }
    )
    if unknown:
        raise PluginError(
            f"{page_name}: unknown value(s) {', '.join(unknown)} "
            "(each must be returned by values() in snippets/<lesson>/values.py)"
        )

    def substitute(text: str) -> str:
        return REFERENCE.sub(lambda m: lesson_values(m[1])[m[2]], text)

    pieces, last = [], 0
    for code in CODE.finditer(markdown):
        pieces += [substitute(markdown[last : code.start()]), code.group(0)]
        last = code.end()
    pieces.append(substitute(markdown[last:]))
    return "".join(pieces)


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    # snippets/ is an installed (editable) package: `make` puts it on every venv's path.
    _snippets[:] = [Path(config.config_file_path).resolve().parent / "snippets"]
    return config


def on_pre_build(config: MkDocsConfig) -> None:
    # `mkdocs serve` rebuilds in the same process: recompute from the edited snippets.
    _cache.clear()
    lessons = {p.name for p in _snippets[0].iterdir() if p.is_dir()}
    for module in [m for m in sys.modules if m.split(".")[0] in lessons]:
        del sys.modules[module]


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_) -> str:
    return fill(markdown, f"docs/{page.file.src_uri}")
