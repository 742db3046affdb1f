"""coursesite: one hook with a written order, stages testable without MkDocs, no sys.path edits.

See docs/adr/0016-build-pipeline.md.
"""

import re
import subprocess
from pathlib import Path

import pytest

from conftest import COURSE, ROOT, read_mkdocs_yml
from coursesite import StageError, abbreviations, nav, pipeline, run_in_browser, syntax, values
from coursesite.manifest import CourseError, load_course
from stage_inputs import a_build, a_page

PACKAGE = ROOT / "scripts" / "coursesite"
SYS_PATH_EDIT = re.compile(r"sys\.path\.(insert|append|extend)\(|sys\.path\s*(\+=|=)")


def test_mkdocs_yml_has_one_hook_the_pipeline():
    assert read_mkdocs_yml()["hooks"] == ["scripts/coursesite/pipeline.py"]


def test_every_stage_module_is_named_and_every_ordered_stage_belongs_to_one():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    not_stages = {"__init__", "pipeline", "syntax", "manifest", "session", "livereload_tab"}
    assert set(pipeline.STAGES) == modules - not_stages
    ordered = [
        *pipeline.MARKDOWN,
        *pipeline.CONTENT,
        *pipeline.PAGE,
        *pipeline.NOT_FOUND,
        *pipeline.EACH_LANGUAGE_BUILT,
        *pipeline.SITE_BUILT,
    ]
    assert {pipeline._stage_name(stage) for stage in ordered} <= set(pipeline.STAGES)


def test_only_the_pipeline_speaks_to_mkdocs_events():
    # the order lives in pipeline.py's lists, not in priorities or event names spread over modules
    for path in PACKAGE.glob("*.py"):
        if path.name == "pipeline.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^def on_\w+\(", text, re.M), f"{path.name}: an MkDocs event"
        assert "event_priority" not in text, f"{path.name}: an event priority"


def test_no_python_file_edits_sys_path():
    tracked = subprocess.run(
        ["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    offenders = [
        name
        for name in tracked
        if (ROOT / name).is_file()
        and SYS_PATH_EDIT.search((ROOT / name).read_text(encoding="utf-8", errors="replace"))
        and name != "tests/test_pipeline.py"
    ]
    assert not offenders, f"sys.path edits (install the package instead): {offenders}"


def test_the_sys_path_pattern_finds_each_form_of_edit():
    for line in ('sys.path.insert(0, "x")', "sys.path.append(p)", "sys.path += [p]"):
        assert SYS_PATH_EDIT.search(line), line
    assert not SYS_PATH_EDIT.search("old = sys.path.copy()")


def test_the_page_language_is_one_function():
    assert syntax.page_language("model_memory/kv_cache.en.md") == "en"
    assert syntax.page_language("performance/playground.en.ipynb") == "en"
    assert syntax.page_language("model_memory/kv_cache.md") == "zh"
    assert syntax.page_language("index.md") == "zh"
    assert a_page("a/b.en.md").lang == "en"


def test_value_references_skip_code_and_name_lesson_and_value():
    markdown = "a {{ kv.x }} `{{ kv.y }}`\n```\n{{ kv.z }}\n```\n{{kv.w}}"
    assert syntax.value_references(markdown) == [("kv", "x"), ("kv", "w")]
    filled = syntax.substitute_values(markdown, lambda lesson, name: name.upper())
    assert filled == "a X `{{ kv.y }}`\n```\n{{ kv.z }}\n```\nW"


def test_includes_and_executed_fences():
    text = 'x\n```python exec="on" id="a"\n--8<-- "kv/show.py"\n```\n```text\nno\n```\n'
    assert syntax.includes(text) == ["kv/show.py"]
    (fence,) = syntax.executed_fences(text)
    assert (fence.lang, fence.block_id, fence.line) == ("python", "a", 2)
    assert syntax.INCLUDE_LINE.match(fence.body)[1] == "kv/show.py"


def test_values_stage_fills_from_a_lesson_package_and_names_the_page(tmp_path, monkeypatch):
    lesson = tmp_path / "snippets" / "fixture_lesson"
    lesson.mkdir(parents=True)
    (lesson / "__init__.py").write_text("", encoding="utf-8")
    (lesson / "values.py").write_text("def values():\n    return {'n': 42}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "snippets"))  # what `make` installs for snippets/
    build = a_build(root=tmp_path)
    values.forget(build.snippets)
    page = a_page("lesson.md")
    assert values.fill("n = {{ fixture_lesson.n }}", page, build) == "n = 42"
    with pytest.raises(StageError, match=r"docs/lesson\.md: unknown value\(s\) fixture_lesson\.m"):
        values.fill("{{ fixture_lesson.m }}", page, build)
    values.forget(build.snippets)


def test_lesson_table_and_abbreviations_stages_work_on_plain_text():
    build = a_build("en", course=COURSE)
    table = nav.fill_lesson_table("x\n<!-- lessons -->\n", a_page("index.en.md", "en/"), build)
    assert "| Part | Lesson |" in table and f"]({COURSE.lessons[0].page})" in table
    appended = abbreviations.append("text", a_page("glossary.en.md"), build)
    assert appended.startswith("text\n\n") and len(appended) > len("text\n\n")


def test_a_page_form_comes_from_the_module_its_marker_names():
    page = a_page("performance/playground.en.ipynb", "en/performance/playground/")
    marker = '<p>a</p><div data-run-form="playground.form"></div>'
    html = run_in_browser.fill_forms(marker, page, a_build("en"))
    assert '<form class="run-playground"' in html and "Compute in browser" in html
    assert "../../../javascripts/run-in-browser.js" in html
    with pytest.raises(StageError, match=r"data-run-form names no_such_lesson\.form"):
        run_in_browser.fill_forms(
            '<div data-run-form="no_such_lesson.form"></div>', page, a_build("en")
        )


def test_the_site_stages_know_no_lesson():
    slugs = {lesson.slug for lesson in COURSE.lessons} | {"playground"}
    for path in PACKAGE.glob("*.py"):
        code = path.read_text(encoding="utf-8")
        imported = re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", code, re.M)
        assert not set(imported) & slugs, f"{path.name} imports a lesson: {set(imported) & slugs}"


def test_a_lesson_folder_without_init_fails_the_manifest(tmp_path: Path):
    docs, snippets = tmp_path / "docs", tmp_path / "snippets"
    (docs / "foundations").mkdir(parents=True)
    lesson = COURSE.lessons[0]
    manifest = (ROOT / "docs" / "lessons.yml").read_text(encoding="utf-8")
    (docs / "lessons.yml").write_text(manifest, encoding="utf-8")
    for n in COURSE.lessons:
        for page in (n.page, n.english_page):
            (docs / page).parent.mkdir(parents=True, exist_ok=True)
            (docs / page).write_text("# x\n", encoding="utf-8")
        if not n.notebook:
            (snippets / n.slug).mkdir(parents=True)
            (snippets / n.slug / "__init__.py").write_text("", encoding="utf-8")
    assert load_course(docs, snippets).lessons == COURSE.lessons
    (snippets / lesson.slug / "__init__.py").unlink()
    with pytest.raises(CourseError, match=rf"snippets/{lesson.slug}/ has no __init__\.py"):
        load_course(docs, snippets)
