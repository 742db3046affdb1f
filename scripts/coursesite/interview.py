"""The interview question bank: every lesson's interview section and self-test, at build time.

docs/interview.md and interview.en.md hold the marker `<!-- interview-bank -->`; this stage
replaces it with, part by part, each lesson's section 7 (`{#interview}`) and section 9
(`{#self-test}`) as the lesson's page in that language writes them, each under a link back to the
section. The lesson pages stay the one source: nothing is copied into the repository. Links in
the moved text are rebased onto the bank's folder; `{{ lesson.name }}` references are filled
later by coursesite.values, as on the lesson's own page.
"""

import posixpath
import re
from pathlib import Path, PurePosixPath

from coursesite import Build, PageInfo, StageError
from coursesite.manifest import Course, Lesson

BANK_MARKER = "<!-- interview-bank -->"
SECTIONS = ("interview", "self-test")
LABELS = {
    "zh": {"interview": "面试考点", "self-test": "自测", "section": "原文：第 {} 节"},
    "en": {"interview": "Interview questions", "self-test": "Self-test", "section": "section {}"},
}
_HEADING = re.compile(r"^## (\d+) · .*\{#([\w-]+)\}\s*$")
_LINK = re.compile(r"(\]\()([^)\s]+)(\))")
_SUBHEADING = re.compile(r"^(#{3,6}) (.*?)(\s*\{[^}]*\})?\s*$")
_EXTERNAL = ("http://", "https://", "mailto:", "/")


def sections(markdown: str) -> dict[str, tuple[str, str]]:
    """A page's `## N · … {#id}` sections: id -> (N, body without the heading)."""
    found: dict[str, tuple[str, list[str]]] = {}
    current: list[str] | None = None
    for line in markdown.splitlines():
        if line.startswith("## "):
            heading = _HEADING.match(line)
            current = None
            if heading:
                current = []
                found[heading.group(2)] = (heading.group(1), current)
            continue
        if current is not None:
            current.append(line)
    return {key: (number, "\n".join(body).strip()) for key, (number, body) in found.items()}


def rebase(text: str, source: str, page_dir: str) -> str:
    """Links in `text`, written for the page docs/`source`, made to work from `page_dir`."""
    up = "../" * len([p for p in page_dir.split("/") if p])

    def moved(match: re.Match) -> str:
        target = match.group(2)
        if target.startswith(_EXTERNAL):
            return match.group(0)
        if target.startswith("#"):
            resolved = source + target
        else:
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), target))
        return f"{match.group(1)}{up}{resolved}{match.group(3)}"

    lines = []
    for line in text.splitlines():
        sub = _SUBHEADING.match(line)
        lines.append(_LINK.sub(moved, f"**{sub.group(2)}**" if sub else line))
    return "\n".join(lines)


def lesson_entry(lesson: Lesson, lang: str, docs: Path, page_dir: str) -> str:
    source = lesson.page if lang == "zh" else lesson.english_page
    found = sections((docs / source).read_text(encoding="utf-8"))
    labels = LABELS[lang]
    up = "../" * len([p for p in page_dir.split("/") if p])
    entry = [f"### {lesson.title(lang)} {{#{lesson.slug.replace('_', '-')}}}"]
    for key in SECTIONS:
        if key not in found:
            raise StageError(f"docs/{source}: no section {{#{key}}} for the interview bank")
        number, body = found[key]
        if 'exec="on"' in body or "exec='on'" in body:
            raise StageError(
                f"docs/{source}: section {{#{key}}} has an executed block; the interview bank "
                "would run it twice (move it to another section)"
            )
        link = f"[{labels['section'].format(number)}]({up}{lesson.page}#{key})"
        separator = "（" if lang == "zh" else " ("
        close = "）" if lang == "zh" else ")"
        entry += [
            "",
            f"**{labels[key]}**{separator}{link}{close}",
            "",
            rebase(body, lesson.page, page_dir),
        ]
    return "\n".join(entry)


def bank(course: Course, lang: str, docs: Path, page_dir: str = "") -> str:
    """Every lesson's interview questions and self-test, grouped by part (notebooks have none)."""
    parts = []
    for part in course.parts:
        lessons = [n for n in course.lessons if n.part == part and not n.notebook]
        if not lessons:
            continue
        title = part.zh if lang == "zh" else part.en
        parts.append(f"## {title} {{#{part.key.replace('_', '-')}}}")
        parts += [lesson_entry(n, lang, docs, page_dir) for n in lessons]
    return "\n\n".join(parts)


def fill_bank(markdown: str, page: PageInfo, build: Build) -> str:
    if BANK_MARKER not in markdown or build.course is None:
        return markdown
    page_dir = PurePosixPath(page.src_uri).parent.as_posix().strip(".")
    return markdown.replace(BANK_MARKER, bank(build.course, page.lang, build.docs, page_dir))
