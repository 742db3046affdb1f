"""CONTRIBUTING.md's promise: every authoring rule it lists names the test or build check that
enforces it, and each named check exists. Also the rules that had no check of their own:
a lesson's code folder is a package, lessons import earlier lessons only, the core imports only
the standard library."""

import ast
import re
import sys
from pathlib import Path

import pytest

from conftest import COURSE, NOT_A_LESSON, ROOT

GUIDE = ROOT / "CONTRIBUTING.md"
SNIPPETS = ROOT / "snippets"
RULE = re.compile(r"^- \*\*(R\d+) ", re.MULTILINE)  # a rule in "Authoring rules"
ROW = re.compile(r"^\| (R\d+) \| (.*) \|\s*$", re.MULTILINE)  # a row of "Rules and their checks"
CHECK = re.compile(r"`([^`]+)`")


def section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def rules_and_checks(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """(the rules listed, rule -> the checks its row names)"""
    rules = RULE.findall(section(text, "Authoring rules"))
    rows = {rule: CHECK.findall(cells) for rule, cells in ROW.findall(section(text, "Rules and"))}
    return rules, rows


def missing_checks(checks: list[str], root: Path) -> list[str]:
    """The named checks that do not exist: tests/<file>.py::<function> (a def in that file) or a
    file the build runs."""
    missing = []
    for check in checks:
        path, _, function = check.partition("::")
        defines = rf"^(async )?def {re.escape(function)}\("
        exists = (root / path).is_file() and (
            not function or re.search(defines, (root / path).read_text("utf-8"), re.M)
        )
        if not exists:
            missing.append(check)
    return missing


def test_every_rule_names_a_check():
    rules, rows = rules_and_checks(GUIDE.read_text(encoding="utf-8"))
    assert rules, "CONTRIBUTING.md lists no rule"
    assert sorted(rows) == sorted(rules), "each rule has one row in 'Rules and their checks'"
    assert all(rows.values()), [rule for rule, checks in rows.items() if not checks]


def test_every_check_the_guide_names_exists():
    _, rows = rules_and_checks(GUIDE.read_text(encoding="utf-8"))
    missing = {rule: m for rule, checks in rows.items() if (m := missing_checks(checks, ROOT))}
    assert not missing, f"CONTRIBUTING.md names checks that do not exist: {missing}"


def test_the_table_check_finds_a_renamed_test_and_a_missing_file():
    checks = [
        "tests/test_contributing.py::test_every_rule_names_a_check",  # exists
        "tests/test_contributing.py::test_that_was_renamed",
        "scripts/hooks/no_such_hook.py",
    ]
    assert missing_checks(checks, ROOT) == checks[1:]


# --- rules that had no check -------------------------------------------------------------------

SHAPE = ["intuition", "mental-model", "principle", "code", "lab|try-it"]
SHAPE += ["pitfalls", "interview", "summary", "self-test"]
SECTION = re.compile(r"^## (\d) · .*\{#([a-z-]+)\}\s*$", re.MULTILINE)
LESSON_PAGES = [
    path
    for lesson in COURSE.lessons
    if not lesson.notebook
    for path in (lesson.page, lesson.english_page)
]


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_every_lesson_page_has_the_nine_sections_in_order(page):
    sections = SECTION.findall((ROOT / "docs" / page).read_text(encoding="utf-8"))
    assert [int(n) for n, _ in sections] == list(range(1, 10)), f"{page}: {sections}"
    wrong = [
        (n, i) for (n, i), want in zip(sections, SHAPE, strict=True) if i not in want.split("|")
    ]
    assert not wrong, f"{page}: sections with another id than CONTRIBUTING.md's shape: {wrong}"


def imported_packages(path: Path) -> set[str]:
    """Top-level names of the absolute imports in a Python file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


LESSON_FOLDERS = [lesson.slug for lesson in COURSE.lessons if (SNIPPETS / lesson.slug).is_dir()]


@pytest.mark.parametrize("slug", LESSON_FOLDERS)
def test_every_lesson_code_folder_is_a_package(slug):
    assert (SNIPPETS / slug / "__init__.py").is_file(), f"snippets/{slug}/ has no __init__.py"


@pytest.mark.parametrize("slug", LESSON_FOLDERS)
def test_lessons_import_only_earlier_lessons(slug):
    order = [lesson.slug for lesson in COURSE.lessons]
    later = set(order[order.index(slug) + 1 :])
    found = {
        f"{path.relative_to(ROOT).as_posix()} imports {name}"
        for path in sorted((SNIPPETS / slug).rglob("*.py"))
        for name in imported_packages(path) & later
    }
    assert not found, f"{slug} imports lessons that come after it: {sorted(found)}"


def test_the_core_imports_only_the_standard_library():
    allowed = set(sys.stdlib_module_names) | {"core"}
    found = {
        f"{path.relative_to(ROOT).as_posix()} imports {name}"
        for path in sorted((SNIPPETS / "core").rglob("*.py"))
        for name in imported_packages(path) - allowed
    }
    assert not found, f"snippets/core/ runs in the browser, standard library only: {sorted(found)}"


def test_the_import_check_sees_a_later_lesson(tmp_path):
    module = tmp_path / "x.py"
    module.write_text("import numpy as np\nfrom roofline.chart import grid\nfrom . import y\n")
    assert imported_packages(module) == {"numpy", "roofline"}


# --- the README: a front page, not the guide ----------------------------------------------------

README_LINES = 100
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_readme_stays_a_front_page():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_LINES, "README.md: move detail to CONTRIBUTING.md"
    head = text[: text.index("\n## ", text.index("## Two commands") + 1)]
    assert "make serve" in head and "make test" in head, "the two commands come first"


@pytest.mark.parametrize("guide", ["README.md", "CONTRIBUTING.md"])
def test_the_guides_link_only_to_files_that_exist(guide):
    text = (ROOT / guide).read_text(encoding="utf-8")
    targets = [t for t in LINK.findall(text) if "://" not in t]
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"{guide} links to missing files: {missing}"


def test_every_adr_is_listed_in_both_indexes():
    adrs = sorted(
        p.name
        for p in (ROOT / "docs" / "adr").glob("[0-9][0-9][0-9][0-9]-*.md")
        if not p.name.endswith(".en.md")
    )
    assert adrs
    for index in ("index.md", "index.en.md"):
        text = (ROOT / "docs" / "adr" / index).read_text(encoding="utf-8")
        missing = [name for name in adrs if f"]({name})" not in text]
        assert not missing, f"docs/adr/{index} does not list {missing}"


def test_rule_r3_names_every_package_that_is_not_a_lesson():
    rule = re.search(r"^- \*\*R3 .*?(?=^- \*\*R\d)", GUIDE.read_text("utf-8"), re.M | re.S)
    assert rule, "CONTRIBUTING.md has no rule R3"
    unnamed = [name for name in NOT_A_LESSON if f"`{name}`" not in rule.group(0)]
    assert not unnamed, f"CONTRIBUTING.md R3 does not name the non-lesson packages {unnamed}"
