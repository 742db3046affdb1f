"""The learning map, from the manifest's parts, lessons and `needs:` (docs/lessons.yml).

The home page's `<!-- learning-map -->` marker becomes a nested list, part by part, each lesson
with what it needs first; every lesson page gets a "before this / after this" paragraph under its
title: the lessons it needs and the previous one in reading order, then the next one and the
lessons that need it. A generated list rather than a diagram: it reads on a phone, a screen reader
follows it, and the build needs no browser to draw it. Works for any lessons the manifest lists.
"""

import html
import re
from pathlib import PurePosixPath

from coursesite import Build, PageInfo, StageError
from coursesite.manifest import Course, Lesson
from coursesite.reading import lesson_of, lesson_reading_time, under_title

MAP_MARKER = "<!-- learning-map -->"
WORDS = {
    "zh": {
        "needs": "先读",
        "none": "无，从这里开始",
        "before": "本课之前",
        "after": "本课之后",
        "previous": "上一课",
        "next": "下一课",
        "needed_by": "用到本课的",
        "last": "这是最后一课",
        "first": "这是第一课",
        "sep": " · ",  # not "、": titles such as 延迟指标：TTFT、TPOT 与吞吐 contain it
    },
    "en": {
        "needs": "needs",
        "none": "nothing, start here",
        "before": "Before this",
        "after": "After this",
        "previous": "previous",
        "next": "next",
        "needed_by": "needed by",
        "last": "this is the last lesson",
        "first": "this is the first lesson",
        "sep": " · ",  # not ", ": titles such as "Latency metrics: TTFT, TPOT and throughput"
    },
}


def _link(lesson: Lesson, lang: str, page_dir: str) -> str:
    depth = len([p for p in page_dir.split("/") if p])
    return f"[{lesson.title(lang)}]({'../' * depth}{lesson.page})"


def _links(lessons: list[Lesson], lang: str, page_dir: str) -> str:
    return WORDS[lang]["sep"].join(_link(n, lang, page_dir) for n in lessons)


def needs_of(course: Course, lesson: Lesson) -> list[Lesson]:
    by_slug = {n.slug: n for n in course.lessons}
    return [by_slug[slug] for slug in lesson.needs]


def needed_by(course: Course, lesson: Lesson) -> list[Lesson]:
    return [n for n in course.lessons if lesson.slug in n.needs]


def learning_map(course: Course, lang: str, page_dir: str = "") -> str:
    """The map as a nested Markdown list: parts, their lessons, what each needs first."""
    words = WORDS[lang]
    rows = []
    for part in course.parts:
        lessons = [n for n in course.lessons if n.part == part]
        if not lessons:
            continue
        rows.append(f"- **{part.zh if lang == 'zh' else part.en}**")
        for n in lessons:
            needs = _links(needs_of(course, n), lang, page_dir) or words["none"]
            colon = "：" if lang == "zh" else ": "
            rows.append(f"    - {_link(n, lang, page_dir)} — {words['needs']}{colon}{needs}")
    return "\n".join(rows)


def fill_map(markdown: str, page: PageInfo, build: Build) -> str:
    if MAP_MARKER not in markdown or build.course is None:
        return markdown
    page_dir = PurePosixPath(page.src_uri).parent.as_posix().strip(".")
    return markdown.replace(MAP_MARKER, learning_map(build.course, page.lang, page_dir))


def neighbours(course: Course, lesson: Lesson, lang: str) -> str:
    """The "before this / after this" paragraph of one lesson's page."""
    words = WORDS[lang]
    page_dir = PurePosixPath(lesson.page).parent.as_posix()
    order = list(course.lessons)
    at = order.index(lesson)
    colon = "：" if lang == "zh" else ": "
    semicolon = "；" if lang == "zh" else "; "
    before = []
    if needs := needs_of(course, lesson):
        before.append(f"{words['needs']} {_links(needs, lang, page_dir)}")
    before.append(
        f"{words['previous']} {_link(order[at - 1], lang, page_dir)}" if at else words["first"]
    )
    after = []
    if at + 1 < len(order):
        after.append(f"{words['next']} {_link(order[at + 1], lang, page_dir)}")
    else:
        after.append(words["last"])
    if later := needed_by(course, lesson):
        after.append(f"{words['needed_by']} {_links(later, lang, page_dir)}")
    return (
        f"**{words['before']}**{colon}{semicolon.join(before)}  \n"
        f"**{words['after']}**{colon}{semicolon.join(after)}"
    )


def link_neighbours(markdown: str, page: PageInfo, build: Build) -> str:
    lesson = lesson_of(page, build.course)
    if lesson is None or build.course is None:
        return markdown
    return under_title(markdown, neighbours(build.course, lesson, page.lang))


def _as_html(line: str, depth: int) -> str:
    """A header line's Markdown (bold, links to .md/.ipynb pages, hard breaks) as HTML, with each
    link as the built site's URL: MkDocs resolves page links in Markdown, but a notebook's HTML is
    past that point. `depth`: the page's folders below docs/."""
    out = html.escape(line, quote=False)
    out = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)

    def link(m: re.Match) -> str:
        target = PurePosixPath(m.group(2).replace("../", "")).with_suffix("").as_posix()
        return f'<a href="{"../" * (depth + 1)}{target}/">{m.group(1)}</a>'

    out = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", link, out)
    return out.replace("  \n", "<br>\n")


def head_notebook(content: str, page: PageInfo, build: Build) -> str:
    """A notebook lesson's header lines (reading time, before this / after this) under its
    title, as the Markdown stages put them under every other lesson's: mkdocs-jupyter renders
    the notebook itself, so they go into its HTML, after the first heading."""
    lesson = lesson_of(page, build.course, notebook=True)
    if lesson is None or build.course is None:
        return content
    depth = len(PurePosixPath(lesson.page).parent.parts)  # folders below docs/
    lines = [
        lesson_reading_time(lesson, page.lang, build.docs).line(page.lang),
        neighbours(build.course, lesson, page.lang),
    ]
    paragraphs = [f'<p class="lesson-meta">{_as_html(line, depth)}</p>' for line in lines]
    title_end = content.find("</h1>")
    if title_end < 0:
        raise StageError(f"docs/{page.src_uri}: a notebook lesson needs a # title in a text cell")
    at = title_end + len("</h1>")
    return content[:at] + "\n" + "\n".join(paragraphs) + content[at:]
