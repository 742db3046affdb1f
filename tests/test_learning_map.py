"""The learning map and each lesson's "before this / after this" links, from docs/lessons.yml."""

import re

import pytest

from conftest import COURSE, DOCS, built_html
from coursesite import learning_map
from coursesite.manifest import CourseError, read_course
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
        if lesson.notebook:
            continue
        page = built_html(built_site.site, DOCS / lesson.page, lang).read_text(encoding="utf-8")
        headers = re.findall(r'<p class="lesson-meta">(.*?)</p>', page, re.S)
        assert len(headers) == 2, f"{lesson.slug} ({lang}): no before/after paragraph"
        links = re.findall(r'href="([^"#]+)"', headers[1])
        expected = [*lesson.needs]
        expected += [order[at - 1].slug] if at else []
        expected += [order[at + 1].slug] if at + 1 < len(order) else []
        expected += [n.slug for n in learning_map.needed_by(COURSE, lesson)]
        assert [link.rstrip("/").split("/")[-1] for link in links] == expected, lesson.slug


def _math(tex: str) -> str:
    """A formula with spacing left out, so $2Ldb$ and $2\\,L\\,d\\,b$ compare equal."""
    return re.sub(r"\s|\\[,;!]|\\cdot", "", tex)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_formula_in_the_lesson_table_is_the_one_its_lesson_writes(lang):
    """The home page's table said ⌈P/(T−D)⌉, κP, E = … and "on t GPUs" where the lessons write
    n_in, τ and TP (P, E and t mean other things in the notation table), and a YAML "\\t" turned
    $S \\times S$ into S, a tab, "imes S". Each formula of a "learn" line is one its page has."""
    for lesson in COURSE.lessons:
        learn = lesson.learn_zh if lang == "zh" else lesson.learn_en
        assert not re.search(r"[\x00-\x1f]", learn), f"{lesson.slug}: a control character"
        page = DOCS / (lesson.page if lang == "zh" else lesson.english_page)
        text = _math(page.read_text(encoding="utf-8"))
        missing = [f for f in re.findall(r"\$([^$]+)\$", learn) if _math(f) not in text]
        assert not missing, f"{lesson.slug} ({lang}): not on its page: {missing}"
