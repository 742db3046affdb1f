"""Fill `{{ lesson.name }}` in prose with figures from snippets/<lesson>/values.py.

Every computable figure in prose is a named value, the same name in both languages; an unknown
name fails the build naming the page. Code (fenced or inline) is left alone (coursesite.syntax).
See docs/adr/0006-computed-values.md.
"""

import importlib
import sys
from pathlib import Path

from coursesite import Build, PageInfo, StageError
from coursesite.syntax import substitute_values, value_references

_cache: dict[str, dict[str, str]] = {}


def lesson_values(lesson: str, snippets: Path) -> dict[str, str]:
    """Values of snippets/<lesson>/values.py, computed once per build; {} if it has none."""
    if lesson not in _cache:
        if not (snippets / lesson / "values.py").is_file():
            _cache[lesson] = {}
        else:
            # snippets/ is an installed (editable) package: `make` puts it on every venv's path.
            module = importlib.import_module(f"{lesson}.values")
            _cache[lesson] = {k: str(v) for k, v in module.values().items()}
    return _cache[lesson]


def fill(markdown: str, page: PageInfo, build: Build) -> str:
    snippets = build.snippets
    unknown = sorted(
        {
            f"{lesson}.{name}"
            for lesson, name in value_references(markdown)
            if name not in lesson_values(lesson, snippets)
        }
    )
    if unknown:
        raise StageError(
            f"{page.where}: unknown value(s) {', '.join(unknown)} "
            "(each must be returned by values() in snippets/<lesson>/values.py)"
        )
    return substitute_values(markdown, lambda lesson, name: lesson_values(lesson, snippets)[name])


def forget(snippets: Path) -> None:
    """Before each build: `mkdocs serve` rebuilds in the same process, so the values are
    recomputed from the edited snippets."""
    _cache.clear()
    lessons = {p.name for p in snippets.iterdir() if p.is_dir()}
    for module in [m for m in sys.modules if m.split(".")[0] in lessons]:
        del sys.modules[module]
