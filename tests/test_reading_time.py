"""Each lesson states its reading time, computed from its own text (coursesite.reading)."""

import html
import re

import pytest

from conftest import COURSE, DOCS, built_html, english_sibling, lesson_pages
from coursesite import StageError, learning_map, reading
from coursesite.reading import lesson_reading_time, reading_time
from stage_inputs import a_build, a_page


def test_the_rates_turn_characters_and_words_into_minutes():
    chinese = "字" * (2 * reading.CHINESE_CHARACTERS_PER_MINUTE)
    assert reading_time(chinese, "zh").minutes == 2
    english = " ".join(["word"] * (3 * reading.WORDS_PER_MINUTE))
    assert reading_time(english, "en").minutes == 3
    # a Chinese page's Latin words are read at the English rate, and add up with the characters
    mixed = chinese + " " + " ".join(["KV"] * reading.WORDS_PER_MINUTE)
    assert reading_time(mixed, "zh").minutes == 3


def test_code_folded_blocks_and_display_math_are_not_counted():
    prose = " ".join(["word"] * 100)
    page = "\n".join(
        [
            "# Title {#top}",
            prose,
            '```python exec="on"',
            *["x = 1 + 2 + 3 + 4"] * 500,
            "```",
            '??? question "A folded question with words in it"',
            *["    answer " * 50] * 20,
            "",
            "$$",
            "a + b + c",
            "$$",
            "[link text](../some/where.md#anchor)",
        ]
    )
    assert reading_time(page, "en").words == 1 + 100 + 2


def test_the_stage_puts_the_line_under_a_lessons_title_only():
    build = a_build(course=COURSE)
    lesson = COURSE.lessons[0]
    source = "# Title\n\nBaseline line\n\n## 1 · x {#intuition}\n"
    out = reading.state_time(source, a_page(lesson.english_page, "en/x/"), build)
    assert out.splitlines()[:4] == [
        "# Title",
        "",
        reading_time(source, "en").line("en"),
        reading.META,
    ]
    assert reading.state_time(source, a_page("about.md", "about/"), build) == source


def _visible(page_html: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page_html))


@pytest.mark.parametrize("page", lesson_pages(), ids=lambda p: p.stem)
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_lesson_page_states_the_reading_time_of_its_text(built_site, page, lang):
    source = page if lang == "zh" else english_sibling(page)
    expected = reading_time(source.read_text(encoding="utf-8"), lang).line(lang)
    built = built_html(built_site.site, page, lang).read_text(encoding="utf-8")
    header = re.search(r'<p class="lesson-meta">(.*?)</p>', built, re.S)
    assert header, f"{source.relative_to(DOCS)}: no reading time under the title"
    assert _visible(header.group(1)) == expected


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_notebook_lesson_states_its_reading_time_under_its_title(built_site, lang):
    """mkdocs-jupyter renders a notebook past the Markdown stages, so its header lines are put
    into its HTML (learning_map.head_notebook); the reading time is its text cells'."""
    notebooks = [lesson for lesson in COURSE.lessons if lesson.notebook]
    assert notebooks, "the course has a notebook lesson (the playground)"
    for lesson in notebooks:
        built = built_html(built_site.site, DOCS / lesson.page, lang).read_text(encoding="utf-8")
        header = re.search(r'</h1>\s*<p class="lesson-meta">(.*?)</p>', built, re.S)
        assert header, f"{lesson.page} ({lang}): no reading time under the title"
        expected = lesson_reading_time(lesson, lang, DOCS).line(lang)
        assert _visible(header.group(1)) == expected


def test_a_notebook_without_a_title_fails_naming_it():
    lesson = next(lesson for lesson in COURSE.lessons if lesson.notebook)
    page = a_page(lesson.page, "performance/playground/")
    with pytest.raises(StageError, match=lesson.page):
        learning_map.head_notebook("<p>no heading</p>", page, a_build(course=COURSE))
    headed = learning_map.head_notebook("<h1>T</h1><p>x</p>", page, a_build(course=COURSE))
    assert headed.startswith('<h1>T</h1>\n<p class="lesson-meta">')
    assert learning_map.head_notebook("<h1>T</h1>", a_page("about.md", "about/"), a_build()) == (
        "<h1>T</h1>"
    )


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_home_table_has_each_lessons_reading_time(built_site, lang):
    home = (built_site.site / ("en/" if lang == "en" else "") / "index.html").read_text(
        encoding="utf-8"
    )
    home = home[home.index('id="lessons"') :]
    unit = "分钟" if lang == "zh" else "min"
    for lesson in COURSE.lessons:
        minutes = lesson_reading_time(lesson, lang, DOCS).minutes
        rows = [r for r in home.split("<tr>") if f'/{lesson.slug}/"' in r.split("</tr>")[0]]
        assert rows, f"{lesson.slug}: no row in the {lang} home table"
        assert f"<td>{minutes} {unit}</td>" in rows[0].split("</tr>")[0], lesson.slug


MAIN_PATH_MINUTES = 15  # issue 26: a lesson's main path reads in a quarter of an hour


@pytest.mark.parametrize(
    ("lesson", "lang"),
    [
        pytest.param(lesson, lang, id=f"{lesson.slug}-{lang}")
        for lesson in COURSE.lessons
        for lang in ("zh", "en")
    ],
)
def test_every_lessons_main_path_reads_in_at_most_15_minutes(lesson, lang):
    figure = lesson_reading_time(lesson, lang, DOCS)
    assert figure.minutes <= MAIN_PATH_MINUTES, (
        f"{lesson.page if lang == 'zh' else lesson.english_page}: {figure.line(lang)}; fold "
        "derivation details, source notes and the walkthrough into `??? note` blocks"
    )
