"""One notation (CONTRIBUTING.md, R19): every symbol a page writes in math is in the table
snippets/core/notation.toml, which lists the pages that use it with its meaning; the notation page
is generated from that table in both languages (coursesite.notation)."""

import re
from types import SimpleNamespace

import pytest

from conftest import (
    COURSE,
    DOCS,
    built_html,
    chinese_notebooks,
    chinese_pages,
    english_notebooks,
    english_pages,
)
from coursesite import PageInfo, StageError
from coursesite.notation import (
    MARKER,
    fill_table,
    load_table,
    math_spans,
    page_key,
    page_symbols,
    parse_table,
    problems,
    symbols,
)
from coursesite.reading import notebook_markdown

TABLE = load_table()
NOTATION_PAGES = {DOCS / "notation.md", DOCS / "notation.en.md"}
PAGES = [
    page
    for page in chinese_pages() + english_pages() + chinese_notebooks() + english_notebooks()
    if page not in NOTATION_PAGES and page.relative_to(DOCS).parts[0] != "adr"
]


def _key(page) -> str:
    return page_key(page.relative_to(DOCS).as_posix())


def _text(page) -> str:
    """A page's Markdown; a notebook's is its text cells (its formulas are there)."""
    if page.suffix == ".ipynb":
        return notebook_markdown(page)
    return page.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_page_keeps_to_the_notation_table(page):
    found = problems(_key(page), _text(page), TABLE)
    assert not found, "\n".join(found)


def test_every_page_a_symbol_lists_uses_it():
    """A listing the pages no longer need would let a page take the symbol with another meaning."""
    used = {
        _key(page): page_symbols(_text(page)) for page in PAGES if not page.stem.endswith(".en")
    }
    stale = [
        f"{entry.symbol}: {page}"
        for entry in TABLE
        for page in entry.used_in
        if entry.symbol not in used.get(page, set())
    ]
    assert not stale, f"the notation table lists pages that do not use the symbol: {stale}"


def test_symbols_are_read_as_tex_reads_math():
    assert symbols(r"2BM'/P_{\text{peak}}") == {"B", "M", "P"}  # 2BM' is B times M'
    assert symbols(r"(W + B\kappa S)/\mathrm{BW}") == {"W", "B", "κ", "S", "BW"}
    assert symbols(r"t_{\text{step}}(B) + n_{\text{kv}} d_h") == {"t", "B", "n", "d"}
    assert symbols(r"\mathbf{Q}\mathbf{K}^\top,\ \mathbb{E}[n]") == {
        r"\mathbf{Q}",
        r"\mathbf{K}",
        r"\mathbb{E}",
        "n",
    }
    assert symbols(r"\text{TPOT} \le \max(x, {{ lesson.value }})") == {"x"}


def test_only_math_counts():
    page = "about $3 an hour, or $4 a day\n\n`$Z$` in code\n\n```python\n$Y$\n```\n\n$$\nA\n$$"
    assert math_spans(page) == ["\nA\n"]


def test_a_symbol_outside_the_table_fails_naming_page_and_symbol():
    found = problems("batching/batched_decode", "The ratio $Z = B/2$ of the batch.", TABLE)
    assert len(found) == 1  # B is listed for this page; Z is in no row
    assert "batching/batched_decode" in found[0] and "$Z$" in found[0]


def test_a_symbol_with_another_meaning_fails_naming_page_and_symbol():
    """The roofline lesson once wrote the bandwidth B, the batch size elsewhere; the table does not
    list it for B, so writing it again fails."""
    found = problems("performance/roofline", r"$t \ge Q/B$", TABLE)
    assert len(found) == 1
    assert "performance/roofline" in found[0] and "$B$" in found[0] and "batch" in found[0]


def _row(symbol: str, pages: list[str]) -> str:
    listed = ", ".join(f'"{p}"' for p in pages)
    return (
        f'[[symbol]]\nsymbol = "{symbol}"\nzh = "x"\nen = "x"\n'
        f'defined_in = "{pages[0]}"\nused_in = [{listed}]\n'
    )


def test_every_symbol_has_one_meaning_course_wide():
    """Upper or lower case, Latin or Greek: a letter with a second meaning breaks the table."""
    for letter in ("B", "k", "κ"):
        with pytest.raises(StageError, match=f"{letter} has more than one meaning"):
            parse_table(_row(letter, ["a"]) + _row(letter, ["b"]))
    assert len({entry.symbol for entry in TABLE}) == len(TABLE)


def test_a_script_l_is_a_symbol():
    """`\\ell` names a variable like any letter, so a page cannot slip one past the table."""
    assert symbols(r"2Vd\,\ell + \ell_0") == {"V", "d", "ℓ"}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_notation_page_is_generated_from_the_table(lang):
    source = DOCS / ("notation.md" if lang == "zh" else "notation.en.md")
    text = source.read_text(encoding="utf-8")
    assert MARKER in text
    page = PageInfo(src_uri=source.relative_to(DOCS).as_posix(), url="")
    filled = fill_table(text, page, SimpleNamespace(course=COURSE))  # the stage reads .course only
    rows = [line for line in filled.splitlines() if line.startswith("| $")]
    assert len(rows) == len(TABLE)
    for entry in TABLE:
        assert any(row.startswith(f"| ${entry.tex}$ | {entry.meaning[lang]} |") for row in rows)
    lesson = COURSE.lessons[0]
    assert f"[{lesson.title(lang)}]({page_key(lesson.page)}.md)" in filled


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_built_notation_page_is_in_the_nav_next_to_the_glossary(built_site, lang):
    html = built_html(built_site.site, DOCS / "notation.md", lang).read_text(encoding="utf-8")
    assert html.count("<tr>") >= len(TABLE)
    nav = re.findall(r'href="[^"]*(glossary|notation)/"', html)
    assert "glossary" in nav and "notation" in nav


# One quantity, one subscript: the query heads are $n_h$ in the table and in transformer_infra's
# config table; prefill_decode's attention intensity once wrote them $n_{\text{heads}}$.
SUBSCRIPT_ALIASES = {r"n_{\text{heads}}": "n_h"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_a_quantity_keeps_the_subscript_the_table_gives_it(page):
    math = "\n".join(math_spans(_text(page)))
    found = [f"{alias} -> {kept}" for alias, kept in SUBSCRIPT_ALIASES.items() if alias in math]
    assert not found, f"{page.name}: " + ", ".join(found)


def test_a_symbol_is_defined_in_the_first_lesson_that_uses_it():
    """The notation page says which lesson introduces each symbol; a reader going in order meets it
    there first. (\\mathbf{V} once named the kernels lesson, though the first lesson writes it.)"""
    order = [page_key(lesson.page) for lesson in COURSE.lessons]
    late = []
    for entry in TABLE:
        lessons = [page for page in entry.used_in if page in order]
        if lessons and entry.defined_in != min(lessons, key=order.index):
            late.append(f"{entry.symbol}: {entry.defined_in}, first used in {lessons}")
    assert not late, late
