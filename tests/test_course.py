"""The lesson manifest (docs/lessons.yml) and the rules every lesson's values follow.

- the manifest agrees with the files: every lesson has both pages and its code folder, and no page
  in a part's folder is left out of it (coursesite.manifest fails the build the same way);
- one quantity, one value: a value name that two lessons' values() both define must be equal;
- no page shows sys.path boilerplate, and snippets/ imports as an installed package.
"""

import functools
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import COURSE, DOCS, NOT_A_LESSON, ROOT, run_mkdocs_build
from coursesite.manifest import CourseError, load_course

SNIPPETS = ROOT / "snippets"


@functools.cache  # values() run simulations: compute them once per test session
def lesson_values() -> dict[str, dict[str, str]]:
    """values() of every lesson that has a values.py, as the values hook computes them."""
    import importlib

    found = {}
    for lesson in COURSE.lessons:
        if (SNIPPETS / lesson.slug / "values.py").is_file():
            module = importlib.import_module(f"{lesson.slug}.values")
            found[lesson.slug] = {k: str(v) for k, v in module.values().items()}
    return found


def test_manifest_lists_every_lesson_with_both_pages_and_its_code():
    assert COURSE.lessons, "docs/lessons.yml lists no lesson"
    for lesson in COURSE.lessons:
        assert (DOCS / lesson.page).is_file() and (DOCS / lesson.english_page).is_file()
        assert lesson.notebook or (SNIPPETS / lesson.slug).is_dir()


def test_every_snippets_package_belongs_to_a_lesson_or_is_the_core():
    packages = {p.name for p in SNIPPETS.iterdir() if (p / "__init__.py").is_file()}
    lessons = {n.slug for n in COURSE.lessons}
    assert packages - lessons == set(NOT_A_LESSON), (
        f"snippets/ packages without a lesson: {packages - lessons}"
    )


def _copy_course(tmp_path: Path) -> tuple[Path, Path]:
    docs, snippets = tmp_path / "docs", tmp_path / "snippets"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("assets"))
    shutil.copytree(SNIPPETS, snippets, ignore=shutil.ignore_patterns("__pycache__"))
    return docs, snippets


def test_a_page_left_out_of_the_manifest_is_an_error_naming_it(tmp_path):
    docs, snippets = _copy_course(tmp_path)
    (docs / "foundations" / "extra.md").write_text("# Extra\n", encoding="utf-8")
    with pytest.raises(CourseError, match=r"lessons\.yml: docs/foundations/extra\.md .*not listed"):
        load_course(docs, snippets)


def test_a_reference_folder_is_not_taken_for_a_lesson(tmp_path):
    docs, snippets = _copy_course(tmp_path)
    (docs / "reference").mkdir()
    (docs / "reference" / "units.md").write_text("# Units\n", encoding="utf-8")
    assert load_course(docs, snippets).lessons == COURSE.lessons


def test_a_lesson_without_its_code_folder_is_an_error_naming_it(tmp_path):
    docs, snippets = _copy_course(tmp_path)
    shutil.rmtree(snippets / "kv_cache")
    with pytest.raises(CourseError, match=r"lesson 'kv_cache': its code folder snippets/kv_cache/"):
        load_course(docs, snippets)


def test_a_lesson_without_its_english_page_is_an_error_naming_it(tmp_path):
    docs, snippets = _copy_course(tmp_path)
    (docs / "model_memory" / "kv_cache.en.md").unlink()
    with pytest.raises(CourseError, match=r"docs/model_memory/kv_cache\.en\.md does not exist"):
        load_course(docs, snippets)


def test_the_build_fails_on_a_broken_manifest_naming_it(tmp_path):
    shutil.copytree(DOCS, tmp_path / "site-src" / "docs", ignore=shutil.ignore_patterns("assets"))
    root = tmp_path / "site-src"
    shutil.copy(ROOT / "mkdocs.yml", root / "mkdocs.yml")
    shutil.copytree(ROOT / "scripts", root / "scripts")
    shutil.copytree(SNIPPETS, root / "snippets", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "docs" / "assets").symlink_to(DOCS / "assets")
    (root / "labs").symlink_to(ROOT / "labs")
    manifest = root / "docs" / "lessons.yml"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("part: foundations", "part: nowhere", 1),
        encoding="utf-8",
    )
    result = run_mkdocs_build(root / "mkdocs.yml", tmp_path / "out")
    assert result.returncode != 0
    assert "lessons.yml: lesson 'prefill_decode' names unknown part 'nowhere'" in result.output


def test_home_pages_list_every_lesson_in_their_language(built_site):
    from conftest import built_html

    for lang in ("zh", "en"):
        html = built_html(built_site.site, DOCS / "index.md", lang).read_text(encoding="utf-8")
        for lesson in COURSE.lessons:
            assert lesson.title(lang) in html, f"home ({lang}) does not list {lesson.slug}"


def test_a_value_name_two_lessons_define_has_one_value():
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for lesson, values in lesson_values().items():
        for name, value in values.items():
            if name in seen and seen[name][1] != value:
                clashes.append(f"{name}: {seen[name][0]}={seen[name][1]!r}, {lesson}={value!r}")
            seen.setdefault(name, (lesson, value))
    assert not clashes, "one quantity, two values:\n" + "\n".join(clashes)


# The figures a review found stated twice with two values: each is now defined in one lesson and
# referenced from the others. A lesson that defines one of them again fails here.
DEFINED_ONCE = {
    "prefill_memory_bound_below": "latency_metrics",  # prefill's compute-bound crossover
    "tpot_4090_ms": "latency_metrics",
    "step_bf16_gb": "latency_metrics",
    "bench_bf16_bandwidth_share": "latency_metrics",
    "params": "transformer_infra",
    "kappa": "kv_cache",
}


def test_shared_figures_are_defined_in_one_lesson_only():
    values = lesson_values()
    for name, home in DEFINED_ONCE.items():
        owners = sorted(lesson for lesson, v in values.items() if name in v)
        assert owners == [home], f"{name} is defined by {owners}; define it in {home} only"


def test_prefill_intensity_at_a_length_is_one_value_across_lessons():
    # The roofline lesson's figure is the core's; the first lesson's estimator prints the simple
    # model 2NS / (Nb + kappa S), which its page labels as such, and states no other value.
    from core.models import load_model
    from core.roofline import prefill_intensity

    roofline = lesson_values()["roofline"]
    qwen = load_model("qwen2.5-7b-instruct")
    short = int(roofline["short_prefill"].replace(",", ""))
    assert roofline["short_prefill_intensity"] == f"{prefill_intensity(qwen, short):.0f}"


def test_no_snippet_or_shown_code_edits_sys_path():
    import json
    import re

    fenced = re.compile(r"^(```|~~~).*?^\1\s*$", re.MULTILINE | re.DOTALL)
    shown = {p: p.read_text(encoding="utf-8") for p in SNIPPETS.rglob("*.py")}
    for page in DOCS.rglob("*.md"):
        shown[page] = "\n".join(m[0] for m in fenced.finditer(page.read_text(encoding="utf-8")))
    for notebook in DOCS.rglob("*.ipynb"):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        shown[notebook] = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    offenders = [p.relative_to(ROOT).as_posix() for p, code in shown.items() if "sys.path" in code]
    assert not offenders, f"sys.path edits (snippets/ is an installed package): {offenders}"


def test_snippets_import_from_anywhere_as_an_installed_package(tmp_path):
    code = "import core.roofline, kv_cache.values; print(core.roofline.__file__)"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert Path(proc.stdout.strip()).is_relative_to(SNIPPETS)
