"""The learning map and each lesson's "before this / after this" links, from docs/lessons.yml."""

import re

import pytest

from conftest import COURSE, DOCS, built_html
from coursesite import learning_map
from coursesite.manifest import CourseError, read_course
from coursesite.notation import math_spans
from coursesite.reading import notebook_markdown
from stage_inputs import a_build, a_page

MANIFEST_HEAD = """section: {zh: 课程, en: Lessons}
parts:
  - {key: p, zh: 部分, en: Part}
lessons:
"""


def _lesson(slug: str, needs: str) -> str:
    return (
        f"  - {{slug: {slug}, part: p, zh: {slug}, en: {slug}, learn_zh: x, learn_en: x"
        f", needs: {needs}}}\n"
    )


def test_a_need_that_is_not_an_earlier_lesson_fails_naming_it(tmp_path):
    manifest = tmp_path / "lessons.yml"
    manifest.write_text(MANIFEST_HEAD + _lesson("a", "[b]") + _lesson("b", "[]"), encoding="utf-8")
    with pytest.raises(CourseError, match=r"lesson 'a' needs b"):
        read_course(manifest)
    manifest.write_text(MANIFEST_HEAD + _lesson("a", "[]") + _lesson("b", "[a]"), encoding="utf-8")
    assert read_course(manifest).lessons[1].needs == ("a",)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_map_lists_every_lesson_under_its_part_with_its_needs(lang):
    text = learning_map.learning_map(COURSE, lang)
    for lesson in COURSE.lessons:
        row = next(r for r in text.splitlines() if f"[{lesson.title(lang)}]({lesson.page})" in r)
        needed = re.findall(r"\]\(([^)]+)\)", row)[1:]
        assert needed == [n.page for n in learning_map.needs_of(COURSE, lesson)], lesson.slug
    marked = learning_map.fill_map(
        f"x\n{learning_map.MAP_MARKER}\n", a_page("index.md", ""), a_build(course=COURSE)
    )
    assert learning_map.MAP_MARKER not in marked and "**Part" in marked


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_list_of_lessons_splits_back_into_its_titles(lang):
    """Titles such as "延迟指标：TTFT、TPOT 与吞吐" hold 、 and commas: the separator is in none."""
    sep = learning_map.WORDS[lang]["sep"]
    for lesson in COURSE.lessons:
        assert sep.strip() not in lesson.title(lang), lesson.slug
    needs = learning_map.needs_of(COURSE, COURSE.lessons[-1])
    plain = re.sub(r"\[([^]]+)\]\([^)]+\)", r"\1", learning_map._links(needs, lang, ""))
    assert plain.split(sep) == [n.title(lang) for n in needs]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_lesson_page_links_before_and_after_it(built_site, lang):
    order = list(COURSE.lessons)
    for at, lesson in enumerate(order):
        page = built_html(built_site.site, DOCS / lesson.page, lang).read_text(encoding="utf-8")
        headers = re.findall(r'<p class="lesson-meta">(.*?)</p>', page, re.S)
        assert len(headers) == 2, f"{lesson.slug} ({lang}): no before/after paragraph"
        links = re.findall(r'href="([^"#]+)"', headers[1])
        expected = [*lesson.needs]
        expected += [order[at - 1].slug] if at else []
        expected += [order[at + 1].slug] if at + 1 < len(order) else []
        expected += [n.slug for n in learning_map.needed_by(COURSE, lesson)]
        assert [link.rstrip("/").split("/")[-1] for link in links] == expected, lesson.slug
        # each lands on that lesson's page in this language (a notebook's links are written as
        # URLs; one "../" too many from en/ would still find a page, the Chinese one)
        here = built_html(built_site.site, DOCS / lesson.page, lang).parent
        landed = [(here / link / "index.html").resolve() for link in links]
        by_slug = {n.slug: n for n in order}
        meant = [built_html(built_site.site, DOCS / by_slug[s].page, lang) for s in expected]
        assert landed == [page.resolve() for page in meant], f"{lesson.slug} ({lang}): {links}"


def _on_the_page(formula: str, page_formulas: list[str]) -> bool:
    """The formula is one of the page's, or a whole term of one: not the head of a longer symbol
    (P of P_peak, t of t_step) nor the tail of a command (t of \\sqrt)."""
    wanted = re.sub(r"\s+", "", formula)
    for found in (re.sub(r"\s+", "", f) for f in page_formulas):
        for m in re.finditer(re.escape(wanted), found):
            after, before = found[m.end() : m.end() + 1], found[m.start() - 1 : m.start()]
            if not (after.isalnum() or (after and after in "_^{")) and not (
                before.isalpha() or before == "\\"
            ):
                return True
    return False


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_formula_the_map_quotes_is_written_so_on_its_lesson(lang):
    """The map is read before the lessons, so a formula in a lesson's line must be the lesson's
    own, in its notation: it once said P for the prompt (P is peak compute), t for the GPU count,
    E for expected tokens, and YAML had turned the \\t of \\times into a tab."""
    wrong = []
    for lesson in COURSE.lessons:
        line = lesson.learn_zh if lang == "zh" else lesson.learn_en
        assert not re.search(r"[\x00-\x1f]", line), f"{lesson.slug}: a control character"
        page = DOCS / (lesson.page if lang == "zh" else lesson.english_page)
        text = notebook_markdown(page) if lesson.notebook else page.read_text(encoding="utf-8")
        page_formulas = math_spans(text)
        wrong += [
            f"{lesson.slug}: ${f}$" for f in math_spans(line) if not _on_the_page(f, page_formulas)
        ]
    assert not wrong, wrong
