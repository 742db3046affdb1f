"""The lesson section of the nav and the home page's lesson table, from the manifest.

The nav's `<title>: lessons.yml` placeholder (mkdocs.yml) becomes the lesson section, static-i18n
gets the English titles (nav_translations), and the home page's `<!-- lessons -->` marker becomes
the table of lessons in the page's language. See docs/adr/0010-lesson-manifest.md.
"""

from pathlib import Path, PurePosixPath

from coursesite import Build, PageInfo
from coursesite.manifest import MANIFEST, Course
from coursesite.reading import lesson_reading_time

TABLE_MARKER = "<!-- lessons -->"
TABLE_HEAD = {
    "zh": ("| 部分 | 课程 | 你会学到 | 阅读时间 |", "|---|---|---|---|"),
    "en": ("| Part | Lesson | What you will learn | Reading time |", "|---|---|---|---|"),
}


def _relative(path: str, page_dir: str) -> str:
    depth = len([p for p in page_dir.split("/") if p])
    return "../" * depth + path


MINUTES = {"zh": "{} 分钟", "en": "{} min"}


def lesson_table(course: Course, lang: str, docs: Path, page_dir: str = "") -> str:
    """The home page's lesson table in one language; links relative to `page_dir`; reading
    times from the pages in `docs` (coursesite.reading)."""
    rows = list(TABLE_HEAD[lang])
    for n in course.lessons:
        part = n.part.zh if lang == "zh" else n.part.en
        target = _relative(n.page, page_dir)
        learn = n.learn_zh if lang == "zh" else n.learn_en
        minutes = MINUTES[lang].format(lesson_reading_time(n, lang, docs).minutes)
        rows.append(f"| {part} | [{n.title(lang)}]({target}) | {learn} | {minutes} |")
    return "\n".join(rows)


def fill_lesson_table(markdown: str, page: PageInfo, build: Build) -> str:
    if TABLE_MARKER not in markdown or build.course is None:
        return markdown
    page_dir = PurePosixPath(page.src_uri).parent.as_posix().strip(".")
    table = lesson_table(build.course, page.lang, build.docs, page_dir)
    return markdown.replace(TABLE_MARKER, table)


def replace_placeholder(nav: list, section: dict) -> bool:
    """Put `section` where the nav says `<title>: lessons.yml`, or where an earlier call put it
    (static-i18n runs on_config again for each language's build)."""
    for i, item in enumerate(nav):
        if isinstance(item, dict):
            (title, value), *_ = item.items()
            if value == MANIFEST or title in section:
                nav[i] = section
                return True
            if isinstance(value, list) and replace_placeholder(value, section):
                return True
    return False
