"""Shared fixtures: the repository layout and one strict build of the real site per test session."""

import fcntl
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


# scripts/test_tiers.py (`make test`, `make check`) builds the site once, strictly, before the
# tests and names the build here, so the tests read it instead of building it again.
BUILT_SITE_VAR = "COURSE_BUILT_SITE"  # the site folder of that build
BUILD_OUTPUT_VAR = "COURSE_BUILD_OUTPUT"  # a file holding that build's stdout + stderr


def _prebuilt_site() -> BuildResult | None:
    """The build test_tiers.py made in this run, or None outside it."""
    site = os.environ.get(BUILT_SITE_VAR)
    if not site:
        return None
    output = Path(os.environ[BUILD_OUTPUT_VAR]).read_text(encoding="utf-8")
    assert (Path(site) / "index.html").is_file(), f"{BUILT_SITE_VAR}={site}: no index.html there"
    return BuildResult(0, output, Path(site))


def _shared_build(folder: Path) -> BuildResult:
    """One strict build of the real site in `folder`, made by whichever pytest-xdist worker gets
    there first; the others wait on the lock and read it."""
    site, output, returncode = folder / "site", folder / "output.txt", folder / "returncode"
    with open(folder / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not returncode.exists():
            result = run_mkdocs_build(ROOT / "mkdocs.yml", site)
            output.write_text(result.output, encoding="utf-8")
            returncode.write_text(str(result.returncode), encoding="utf-8")
    return BuildResult(int(returncode.read_text()), output.read_text(encoding="utf-8"), site)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> BuildResult:
    """A strict build of the real site: test_tiers.py's, or else one made for this test run."""
    result = _prebuilt_site()
    if result is None:
        base = tmp_path_factory.getbasetemp()
        # pytest-xdist gives each worker <run>/gwN: the build goes to <run>, which they share
        result = _shared_build(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)
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


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist turns the groups into work units
def pytest_collection_modifyitems(config, items) -> None:
    """Under `pytest -n N --dist loadgroup` (scripts/test_tiers.py): a file's tests run on one
    worker, as with `--dist loadfile`, and the files marked one_worker all run on the same one."""
    if config.getoption("dist", "no") != "loadgroup":
        return
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        one_worker = item.get_closest_marker("one_worker") is not None
        file = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group("one_worker" if one_worker else file))


# (wall-clock, CPU) seconds of each lab smoke run (tests/test_labs_smoke.py fills it), shown at
# the end so that the labs tier's log says what each lab costs: a new lab's budget is 90 s on a
# quiet machine, where the wall clock is about the CPU time (a run is mostly one busy thread)
LAB_SMOKE_SECONDS: dict[str, tuple[float, float]] = {}


def pytest_terminal_summary(terminalreporter) -> None:
    if not LAB_SMOKE_SECONDS:
        return
    terminalreporter.section("lab smoke runs: wall-clock and CPU seconds each")
    for lab, (wall, cpu) in sorted(LAB_SMOKE_SECONDS.items(), key=lambda item: -item[1][1]):
        terminalreporter.write_line(f"{wall:6.0f} {cpu:6.0f}  {lab}")
    walls, cpus = zip(*LAB_SMOKE_SECONDS.values(), strict=True)
    terminalreporter.write_line(f"{sum(walls):6.0f} {sum(cpus):6.0f}  in all")
