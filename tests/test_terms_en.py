"""English pages spell out a glossary acronym at its first use: time to first token (TTFT).

The pages: the home and about pages, every lesson's English page and every English notebook's
Markdown cells (the glossary defines the acronyms; it is not checked). The acronyms are the ones
the glossary's English column writes with one (docs/glossary.md, "中英术语对照"): "time to first
token (TTFT)", "EOS (end of sequence)", "prefill/decode disaggregation (PD disaggregation)".
Acronyms it does not list (GPU, API, BF16) are not checked, and neither are names it gives no
expansion (KV cache, PagedAttention).

A reader lands on any page from a search, so "first use" is per page. The first prose use of an
acronym (a plural "SLOs" counts) must come with the glossary's expansion, either way round:
"time to first token (TTFT)", or the acronym and then a parenthesis that holds the expansion,
"TTFT (time to first token)", "EOS (the end-of-sequence token)". Case does not matter, and
neither does a plural "s" or a hyphen for a space. Where the expansion's last words follow the
acronym, "end-to-end (E2E) latency" and "prefill/decode (PD) disaggregation" are fine too.
Prose is what test_terms counts (no headings, code, formulas, link targets, values or HTML
tags), less the English names of lessons: "Latency metrics: TTFT, TPOT and throughput" names a
lesson, as does a link followed by "lesson".
"""

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import COURSE, DOCS, english_notebooks, english_sibling, lesson_pages
from test_terms import GLOSSARY, TERM_ROW, parenthesis_after, prose_text

PAGES = [
    "index.en.md",
    "about.en.md",
    *(english_sibling(p).relative_to(DOCS).as_posix() for p in lesson_pages()),
    *(p.relative_to(DOCS).as_posix() for p in english_notebooks()),
]
ACRONYM = re.compile(r"[A-Z][A-Z0-9]+")


@dataclass(frozen=True)
class Acronym:
    short: str  # as the text uses it: "TTFT", "PD disaggregation"
    long: str  # what it stands for: "time to first token", "prefill/decode disaggregation"

    @property
    def letters(self) -> str:
        return self.short.split()[0]


def glossary_acronyms() -> list[Acronym]:
    """Every English term the glossary writes with an acronym: "long (ACR)" or "ACR (long)"."""
    found = []
    for _, english in TERM_ROW.findall(GLOSSARY.read_text(encoding="utf-8")):
        pair = re.fullmatch(r"(.+?) \((.+)\)", english)
        if not pair:
            continue
        outside, inside = pair.groups()
        if ACRONYM.fullmatch(inside.split()[0]):  # time to first token (TTFT)
            found.append(Acronym(inside, outside))
        elif ACRONYM.fullmatch(outside.split()[0]):  # EOS (end of sequence)
            found.append(Acronym(outside, inside))
    return found


def english_prose(page: Path) -> str:
    """test_terms's prose of the page, less English lesson names and emphasis, on one line."""
    titles = "|".join(re.escape(lesson.en) for lesson in COURSE.lessons)
    lesson_name = re.compile(
        r"\[(?:" + titles + r")\]|[\"“](?:" + titles + r")[\"”]|\[[^]]*\](?=\s*lesson)"
    )
    text = lesson_name.sub(" ", "\n".join(prose_text(page)))
    return re.sub(r"\s+", " ", re.sub(r"\*+|\[|\]", "", text))


def _plural(text: str) -> str:
    """A pattern for the words, a space or hyphen between any two, and a plural "s"."""
    return r"[\s-]".join(re.escape(word) for word in re.split(r"[\s-]", text)) + "s?"


def expanded_at(text: str, at: int, term: Acronym) -> bool:
    """The use of the acronym at `at` is "ACR (… long …)", or "long (ACR)" around it."""
    short = re.match(_plural(term.short) + r"|" + _plural(term.letters), text[at:])
    inside = parenthesis_after(text[at + len(short[0]) :])
    if inside is not None and re.search(_plural(term.long), inside, re.I):
        return True
    if not text[:at].endswith("(") or text[at + len(short[0]) : at + len(short[0]) + 1] != ")":
        return False
    before, after = text[: at - 1].rstrip(), text[at + len(short[0]) + 1 :]
    words = term.long.split(" ")
    for cut in range(len(words), 0, -1):  # long (ACR), or a head of it (ACR) and the rest
        head, tail = " ".join(words[:cut]), " ".join(words[cut:])
        tail_follows = not tail or re.match(r"\s*" + _plural(tail), after, re.I)
        if tail_follows and re.search(_plural(head) + "$", before, re.I):
            return True
    return False


def first_uses_unexpanded(page: Path, root: Path = DOCS) -> list[str]:
    """One line for each glossary acronym whose first prose use on the page is not spelled out."""
    text = english_prose(page)
    found = []
    for term in glossary_acronyms():
        use = re.search(rf"\b{re.escape(term.letters)}s?\b", text)
        if use is None or expanded_at(text, use.start(), term):
            continue
        context = text[max(0, use.start() - 40) : use.end() + 40]
        found.append(
            f"{page.relative_to(root)}: {term.letters} first used without "
            f"'{term.long} ({term.short})': …{context.strip()}…"
        )
    return found


def test_the_glossary_defines_acronyms():
    letters = {term.letters: term.long for term in glossary_acronyms()}
    assert letters["TTFT"] == "time to first token"
    assert letters["EOS"] == "end of sequence"
    assert len(letters) >= 10


def test_the_check_finds_a_first_use_without_its_expansion(tmp_path):
    page = tmp_path / "page.en.md"
    page.write_text(
        "# TTFT\n\n`TTFT` and TTFT grow; time to first token (TTFT) is later.\n"
        "[EOS](glossary.md#eos) (see below) ends it: the end of sequence (EOS).\n"
    )
    found = first_uses_unexpanded(page, tmp_path)
    assert [line.split(": ")[1] for line in found] == [
        "EOS first used without 'end of sequence (EOS)'",
        "TTFT first used without 'time to first token (TTFT)'",
    ]
    page.write_text(
        "# TTFT and TPOT\n\nRead [Latency metrics: TTFT, TPOT and throughput](x.md). "
        "Time to first token (TTFT) grows; **TPOT** (time per output token) does not;\n"
        "nor do SLOs (service-level objectives), end-to-end (E2E) latency or the\n"
        "[EOS](glossary.md#eos) (the end-of-sequence token). TTFT, TPOT, EOS, SLO, E2E.\n"
    )
    assert first_uses_unexpanded(page, tmp_path) == []


@pytest.mark.parametrize("name", PAGES)
def test_first_use_of_an_acronym_spells_it_out(name):
    found = first_uses_unexpanded(DOCS / name)
    assert not found, "\n".join(found)
