"""Each lesson's reading time, computed from its own text in its own language.

The stage puts a line under a lesson page's title; coursesite.nav puts the same figure in the home
page's lesson table. Only the prose the reader reads on the main path counts: fenced code, display
formulas, HTML comments and folded blocks (`??? …`, the self-test answers and long code) are left
out; the code is there to run, not to be read at reading speed.

The rates, in one place. English: 220 words a minute, a little below the 238 words a minute that
Brysbaert's meta-analysis of silent reading reports for non-fiction ("How many words do we read per
minute?", Journal of Memory and Language 109, 2019), because lesson prose is dense and technical.
Chinese: 300 characters a minute, the low end of the 300–500 characters a minute usually quoted for
silent reading of Chinese prose, for the same reason. Latin words on a Chinese page (the English
terms in parentheses, symbols) are read at the English rate.
"""

import math
import re
from dataclasses import dataclass
from pathlib import Path

from coursesite import Build, PageInfo
from coursesite.manifest import Course, Lesson

WORDS_PER_MINUTE = 220  # English, and Latin words on a Chinese page
CHINESE_CHARACTERS_PER_MINUTE = 300

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_FOLDED = re.compile(r"^(\s*)\?\?\?[^+]")  # `???+` opens unfolded: it is read
_DISPLAY_MATH = re.compile(r"\$\$.*?\$\$", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_ATTRIBUTES = re.compile(r"\{[:#.][^}]*\}")
_VALUE = re.compile(r"\{\{\s*[\w.]+\s*\}\}")
_INLINE_MATH = re.compile(r"\$[^$\n]+\$")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’.,-][A-Za-z0-9]+)*")


@dataclass(frozen=True)
class ReadingTime:
    characters: int  # Chinese characters read
    words: int  # Latin words read
    minutes: int

    def line(self, lang: str) -> str:
        """The line under a lesson's title."""
        if lang == "zh":
            return (
                f"阅读时间：约 {self.minutes} 分钟（正文 {self.characters} 字；代码与折叠内容不计）"
            )
        return (
            f"Reading time: about {self.minutes} min "
            f"({self.words} words of prose; code and folded content not counted)"
        )


def read_prose(markdown: str) -> str:
    """The text a reader reads on the main path: no code, no folded blocks, no display math."""
    kept: list[str] = []
    fence: tuple[str, int] | None = None  # the open fence's marker and indentation
    folded_indent: int | None = None  # inside a folded block: its indentation
    for line in markdown.splitlines():
        indent = len(line) - len(line.lstrip())
        if fence is not None:
            if line.strip().startswith(fence[0]) and set(line.strip()) == {fence[0][0]}:
                fence = None
            continue
        if folded_indent is not None:
            if not line.strip() or indent > folded_indent:
                continue
            folded_indent = None
        if opened := _FENCE.match(line):
            fence = (opened.group(2), indent)
            continue
        if _FOLDED.match(line):
            folded_indent = indent
            continue
        if line.lstrip().startswith("--8<--"):
            continue
        kept.append(line)
    text = "\n".join(kept)
    for pattern in (_COMMENT, _DISPLAY_MATH, _LINK_TARGET, _ATTRIBUTES):
        text = pattern.sub(" ", text)
    return _INLINE_MATH.sub(" x ", _VALUE.sub(" 0 ", text))  # a formula or figure reads as a word


def reading_time(markdown: str, lang: str) -> ReadingTime:
    prose = read_prose(markdown)
    characters = len(_CJK.findall(prose)) if lang == "zh" else 0
    words = len(_WORD.findall(_CJK.sub(" ", prose)))
    minutes = characters / CHINESE_CHARACTERS_PER_MINUTE + words / WORDS_PER_MINUTE
    return ReadingTime(characters, words, max(1, math.ceil(minutes)))


def notebook_markdown(path: Path) -> str:
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join(
        "".join(cell["source"]) for cell in cells if cell.get("cell_type") == "markdown"
    )


def lesson_reading_time(lesson: Lesson, lang: str, docs: Path) -> ReadingTime:
    """A lesson's reading time from its page in `lang` (a notebook: its text cells)."""
    path = docs / (lesson.page if lang == "zh" else lesson.english_page)
    if lesson.notebook:
        return reading_time(notebook_markdown(path), lang)
    return reading_time(path.read_text(encoding="utf-8"), lang)


def lesson_of(page: PageInfo, course: Course | None, notebook: bool = False) -> Lesson | None:
    """The lesson whose Markdown page this is (either language), or with `notebook`, whose
    notebook; None for other pages."""
    for lesson in course.lessons if course else ():
        if page.src_uri in (lesson.page, lesson.english_page) and lesson.notebook == notebook:
            return lesson
    return None


META = "{: .lesson-meta }"  # the attribute line that ends a paragraph of the lesson's header


def under_title(markdown: str, paragraph: str) -> str:
    """`paragraph` (with META as its last line) under the page's `# ` title, after the header
    paragraphs already put there."""
    lines = markdown.split("\n")
    for i, text in enumerate(lines):
        if text.startswith("# "):
            at = i + 1
            while META in lines[at:]:
                end = lines.index(META, at)
                if any(line.strip() == "" for line in lines[at + 1 : end]):
                    break
                at = end + 1
            return "\n".join([*lines[:at], "", paragraph, META, *lines[at:]])
    return f"{paragraph}\n{META}\n\n{markdown}"


def state_time(markdown: str, page: PageInfo, build: Build) -> str:
    if lesson_of(page, build.course) is None:
        return markdown
    figure = reading_time(markdown, page.lang)
    return under_title(markdown, figure.line(page.lang))
