"""Every page exists in both languages (x.md Chinese beside x.en.md English).

Notebooks pair the same way: x.ipynb beside x.en.ipynb.

static-i18n would otherwise fall back silently or leave a language without the page;
this makes a missing translation a build error that names the file.
"""

from collections.abc import Callable
from pathlib import Path

PAGE_EXTENSIONS = (".md", ".ipynb")
TRANSLATION = ".en"  # x.en.md is the English version of x.md


def missing_translations(docs_dir: Path, excluded: Callable[[str], bool]) -> list[str]:
    problems = []
    pages = [p for ext in PAGE_EXTENSIONS for p in docs_dir.rglob(f"*{ext}")]
    for page in sorted(pages):
        rel = page.relative_to(docs_dir).as_posix()
        # MkDocs skips dot folders too (e.g. Jupyter's .ipynb_checkpoints/)
        if excluded(rel) or any(part.startswith(".") for part in rel.split("/")):
            continue
        if page.stem.endswith(TRANSLATION):
            sibling = page.with_name(page.stem.removesuffix(TRANSLATION) + page.suffix)
            lang = "Chinese"
        else:
            sibling = page.with_name(page.stem + TRANSLATION + page.suffix)
            lang = "English"
        if not sibling.exists():
            problems.append(f"{rel} has no {lang} version ({sibling.relative_to(docs_dir)})")
    return problems
