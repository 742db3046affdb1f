"""Shared fixtures: the repository layout and one strict build of the real site per test session."""

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from coursesite.manifest import Course, Lesson, load_course

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

COURSE: Course = load_course(DOCS, ROOT / "snippets")
# snippets/ packages that are not a lesson's code, and why each may exist
NOT_A_LESSON = {
    "core": "the arithmetic core every lesson imports",
    "interview": "the interview bank's system-design answers (docs/interview.md), from the lessons",
}
# the first lesson written as a Markdown page (not a notebook): its page has code, math and a lab
FIRST_PAGE_LESSON = next(lesson for lesson in COURSE.lessons if not lesson.notebook)
MKDOCS = [sys.executable, "-m", "mkdocs"]
TRANSLATION_SUFFIX = ".en.md"


class _TagIgnoringLoader(yaml.SafeLoader):
    """mkdocs.yml as plain data: its Python and !ENV/!relative tags read as None."""


_TagIgnoringLoader.add_multi_constructor("", lambda loader, suffix, node: None)


def read_mkdocs_yml() -> dict:
    """mkdocs.yml's settings, without running MkDocs (tagged values are None)."""
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_TagIgnoringLoader)


def markdown_extension_config(name: str) -> dict:
    """The options mkdocs.yml gives one Markdown extension ({} when it lists it bare)."""
    for item in read_mkdocs_yml()["markdown_extensions"]:
        if item == name:
            return {}
        if isinstance(item, dict) and name in item:
            return item[name] or {}
    raise AssertionError(f"mkdocs.yml: markdown extension {name} not listed")


@dataclass(frozen=True)
class BuildResult:
    returncode: int
    output: str  # stdout + stderr
    site: Path


def run_mkdocs_build(config: Path, site_dir: Path) -> BuildResult:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if config.parent.resolve() != ROOT:  # a fixture site: its own snippets/, as make installs ours
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(config.parent / "snippets"), env.get("PYTHONPATH")])
        )
    proc = subprocess.run(
        [*MKDOCS, "build", "--strict", "--config-file", str(config), "--site-dir", str(site_dir)],
        cwd=config.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return BuildResult(proc.returncode, proc.stdout + proc.stderr, site_dir)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> BuildResult:
    """A strict build of the real site into a temporary folder."""
    result = run_mkdocs_build(ROOT / "mkdocs.yml", tmp_path_factory.mktemp("site"))
    assert result.returncode == 0, f"strict build of the real site failed:\n{result.output}"
    return result


def _pages() -> list[Path]:
    """Source pages (include fragments such as docs/includes/ are not pages)."""
    return sorted(p for p in DOCS.rglob("*.md") if "includes" not in p.relative_to(DOCS).parts)


def chinese_pages() -> list[Path]:
    return [p for p in _pages() if not p.name.endswith(TRANSLATION_SUFFIX)]


def english_pages() -> list[Path]:
    return [p for p in _pages() if p.name.endswith(TRANSLATION_SUFFIX)]


def _notebooks() -> list[Path]:
    """Notebook pages (x.ipynb beside x.en.ipynb), outside dot folders (.ipynb_checkpoints)."""
    notebooks = DOCS.rglob("*.ipynb")
    return sorted(
        p for p in notebooks if not any(s.startswith(".") for s in p.relative_to(DOCS).parts)
    )


def chinese_notebooks() -> list[Path]:
    return [p for p in _notebooks() if not p.stem.endswith(".en")]


def english_notebooks() -> list[Path]:
    return [p for p in _notebooks() if p.stem.endswith(".en")]


def lessons() -> list[Lesson]:
    """The lessons, as docs/lessons.yml lists them (notebook pages included)."""
    return list(COURSE.lessons)


def lesson_pages() -> list[Path]:
    """The Chinese Markdown page of every lesson that has its own snippets/<slug>/ code."""
    return [DOCS / n.page for n in COURSE.lessons if not n.notebook]


def english_sibling(page: Path) -> Path:
    """x.md -> x.en.md, x.ipynb -> x.en.ipynb."""
    return page.with_name(f"{page.stem}.en{page.suffix}")


def built_html(site: Path, page: Path, lang: str) -> Path:
    """Where a source page lands in the built site (use_directory_urls)."""
    rel = page.relative_to(DOCS).with_suffix("")
    if rel.name.endswith(".en"):
        rel = rel.with_name(rel.name.removesuffix(".en"))
    parts = [] if rel.name == "index" else [rel.name]
    base = site / "en" if lang == "en" else site
    return base.joinpath(*rel.parent.parts, *parts, "index.html")


def make_serve_args() -> list[str]:
    """The options `make serve` gives `mkdocs serve`, as the Makefile writes them."""
    found = re.search(r"/mkdocs serve ([^\n]*)", (ROOT / "Makefile").read_text(encoding="utf-8"))
    assert found, "Makefile: no `mkdocs serve` command"
    return found[1].split()
