"""Chinese pages name a term's English at its first use on the page: 预填充（prefill）.

The pages: the home and about pages, every lesson and every notebook (its Markdown cells).

A reader lands on any page from a search, so "first use" is per page, not per course. The terms
are the glossary's list (docs/glossary.md, "中英术语对照"): its Chinese column, its English column.
Only prose counts: headings, code, formulas, link targets, values and HTML tags are left out, and
so is a lesson's name ("[预填充与解码]一课", 「推理流程：预填充与解码」), which names a lesson,
not the term. A longer term is not a use of a shorter one inside it (分块预填充 is not a
use of 预填充), and neither are the words in NOT_A_USE.
"""

import re
from pathlib import Path

import pytest

from conftest import COURSE, DOCS, chinese_notebooks, lesson_pages
from coursesite.notation import load_table
from markdown_source import read_page

GLOSSARY = DOCS / "glossary.md"
TERM_ROW = re.compile(r"^\| ([^|]+?) \| ([^|]+?) \| \[[^]]+\]\(#[\w-]+\) \|$", re.M)
# Words that contain a term's characters but are another word.
NOT_A_USE = ("解码器", "反量化")  # decoder (not decode), dequantize (not quantize)
PAGES = [
    "index.md",
    "about.md",
    *(p.relative_to(DOCS).as_posix() for p in [*lesson_pages(), *chinese_notebooks()]),
]

LEFT_OUT = [
    re.compile(r"`+[^`]*`+"),  # inline code
    re.compile(r"\$[^$]+\$"),  # inline math
    re.compile(r"\\\(.*?\\\)"),
    re.compile(r"\{\{.*?\}\}"),  # computed values
    re.compile(r"<[^>]+>"),  # HTML tags (an <abbr>'s title is a tooltip, not the text)
    re.compile(r"\{[#:.][^}]*\}"),  # attribute lists
]
LINK_TARGET = re.compile(r"\]\([^)]*\)|\]\[[^]]*\]")


def glossary_terms() -> list[tuple[str, str]]:
    """(Chinese, English) for every term whose Chinese is not the English word itself."""
    rows = TERM_ROW.findall(GLOSSARY.read_text(encoding="utf-8"))
    return [(zh, en) for zh, en in rows if zh != "中文术语" and not zh.isascii()]


def prose_text(page: Path) -> list[str]:
    """The page's prose lines with what is not prose blanked (line numbers kept)."""
    titles = "|".join(re.escape(lesson.zh) for lesson in COURSE.lessons)
    # a lesson named by its title, or by a link that says "the ... lesson"
    lesson_name = re.compile(
        r"\[(?:" + titles + r")\]|「(?:" + titles + r")」|\[[^]]*\](?=\s*一课)"
    )
    lines, in_front_matter, in_math = [], False, False
    for number, line in enumerate(read_page(page).prose):
        if number == 0 and line.strip() == "---":
            in_front_matter = True
        elif in_front_matter:
            in_front_matter = line.strip() != "---"
            line = ""
        if line.strip().startswith("$$"):
            in_math = not (in_math or line.strip().count("$$") == 2)
            line = ""
        if in_math or in_front_matter or re.match(r"\s*(#|\*\[|--8<--)", line):
            line = ""
        for pattern in LEFT_OUT:
            line = pattern.sub(" ", line)
        line = lesson_name.sub(" ", LINK_TARGET.sub("]", line))
        lines.append(line)
    return lines


def parenthesis_after(rest: str) -> str | None:
    """What the parenthesis right after a term holds (nested ones included), or None."""
    text = rest.lstrip()
    if not text.startswith(("（", "(")):
        return None
    depth = 0
    for i, char in enumerate(text):
        depth += char in "（("
        depth -= char in "）)"
        if depth == 0:
            return text[1:i]
    return text[1:]


def english_follows(rest: str, english: str) -> bool:
    """The text right after a term is a parenthesis holding its English (or its acronym)."""
    inside = parenthesis_after(rest)
    if inside is None:
        return False
    name = english.split(" (")[0].lower()
    acronyms = [a.lower() for a in re.findall(r"\(([^)]+)\)", english)]
    return name in inside.lower() or any(a in inside.lower() for a in acronyms)


def first_uses(page: Path) -> list[tuple[str, str, str, int]]:
    """(Chinese, English, the page's prose with longer terms masked, where the first use is) for
    every glossary term the page uses."""
    text = "\n".join(prose_text(page))
    terms = glossary_terms()
    uses = []
    for zh, en in terms:
        masked = text
        for other in [t for t, _ in terms if t != zh and zh in t] + list(NOT_A_USE):
            masked = masked.replace(other, "\0" * len(other))
        at = masked.find(zh)
        if at >= 0:
            uses.append((zh, en, masked, at))
    return uses


def around(masked: str, at: int) -> str:
    """The text near a use, for a failure message."""
    return masked[max(0, at - 20) : at + 30].replace("\0", "").replace("\n", " ").strip()


def first_uses_without_english(page: Path, root: Path = DOCS) -> list[str]:
    return [
        f"{page.relative_to(root)}: {zh}（{en}） first used without it: …{around(masked, at)}…"
        for zh, en, masked, at in first_uses(page)
        if not english_follows(masked[at + len(zh) :], en)
    ]


def first_uses_inside_a_parenthesis(page: Path, root: Path = DOCS) -> list[str]:
    """First uses inside another parenthesis, so glosses nest: （泊松到达（Poisson arrivals））."""
    found = []
    for zh, _, masked, at in first_uses(page):
        line = masked[masked.rfind("\n", 0, at) + 1 : at]
        if line.count("（") > line.count("）"):
            found.append(
                f"{page.relative_to(root)}: {zh} first used inside a parenthesis: …{line[-30:]}…"
            )
    return found


def glossed_again(page: Path, root: Path = DOCS) -> list[str]:
    """Terms whose English is given twice on the page: after the first use, Chinese only."""
    found = []
    for zh, en, masked, at in first_uses(page):
        later = masked.find(zh, at + len(zh))
        while later >= 0:
            if english_follows(masked[later + len(zh) :], en):
                found.append(
                    f"{page.relative_to(root)}: {zh}（{en}） again: …{around(masked, later)}…"
                )
                break
            later = masked.find(zh, later + len(zh))
    return found


def test_the_glossary_lists_terms():
    assert len(glossary_terms()) > 40


def test_the_check_finds_a_first_use_without_english(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# 预填充\n\n分块预填充（chunked prefill）先算；预填充慢。\n")
    found = first_uses_without_english(page, tmp_path)
    assert [line.split(": ")[1] for line in found] == ["预填充（prefill） first used without it"]
    page.write_text("[推理流程：预填充与解码]一课。`预填充` 之后，预填充（prefill）很慢。\n")
    assert first_uses_without_english(page, tmp_path) == []


SELF_TESTS = [  # (check, a page it must flag once, the same page written right)
    (
        first_uses_inside_a_parenthesis,
        "到达间隔服从指数分布（泊松到达（Poisson arrivals），每秒 8 个）。",
        "到达间隔服从指数分布，即泊松到达（Poisson arrivals），每秒 8 个。",
    ),
    (
        glossed_again,
        "预填充（prefill）很快。之后的预填充（prefill）也快。",
        "预填充（prefill）很快。之后的预填充也快。",
    ),
]
RULES = [first_uses_without_english, glossed_again, first_uses_inside_a_parenthesis]


@pytest.mark.parametrize("check, bad, good", SELF_TESTS, ids=lambda x: getattr(x, "__name__", ""))
def test_the_check_flags_a_bad_page_and_passes_the_mended_one(tmp_path, check, bad, good):
    page = tmp_path / "page.md"
    page.write_text(bad + "\n")
    assert len(check(page, tmp_path)) == 1
    page.write_text(good + "\n")
    assert check(page, tmp_path) == []


@pytest.mark.parametrize("rule", RULES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("name", PAGES)
def test_the_page_glosses_each_term_once_at_its_first_use(name, rule):
    found = rule(DOCS / name)
    assert not found, "\n".join(found)


# Words other Chinese texts use for a glossary term; the course writes the glossary's term.
OTHER_WORDS = {
    "利特尔定律": "Little 定律",
    "吞吐量": "吞吐",
    "键值缓存": "KV 缓存",
    "批量大小": "批大小",
    "首字延迟": "首 token 延迟",
    "预填阶段": "预填充",
    "屋脊点": "脊点",
}


@pytest.mark.parametrize("name", [*PAGES, "glossary.md"])
def test_the_glossary_term_and_no_other_word_for_it(name):
    text = "\n".join(prose_text(DOCS / name))
    found = [f"{other} -> {term}" for other, term in OTHER_WORDS.items() if other in text]
    assert not found, f"{name}: " + ", ".join(found)


def test_the_notation_table_says_the_glossary_term_and_no_other_word_for_it():
    """The notation page's meanings come from snippets/core/notation.toml, not from a page's prose:
    its I* was 屋脊点 while every lesson and the glossary say 脊点."""
    meanings = "\n".join(entry.meaning["zh"] for entry in load_table())
    found = [f"{other} -> {term}" for other, term in OTHER_WORDS.items() if other in meanings]
    assert not found, "notation.toml: " + ", ".join(found)
