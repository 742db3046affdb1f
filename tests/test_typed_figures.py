"""No computed figure is typed by hand: prose must not contain a value's text outside `{{ … }}`.

If a page writes "164" where `{{ prefill_decode.ridge_4090 }}` exists, the figure would silently go
stale when the code changes. Digits that only coincide with a value (a config fact that equals a
computed figure) are listed in COINCIDENCES with the reason. ADRs are left out: they are dated
records of decisions and of what was measured then (page times, element counts), not figures a
lesson computes, and a record must not change when a lesson's figure does.
"""

import functools
import importlib
import re

import pytest

from conftest import COURSE, DOCS, ROOT, chinese_notebooks, chinese_pages, english_sibling
from coursesite.syntax import INLINE_CODE, VALUE_REFERENCE
from markdown_source import read_page

NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?%?(?![\w]|\.\d)")  # not a version: 1.12.6
MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.DOTALL)
LINK_TARGET = re.compile(r"\]\([^)]*\)|\{#[^}]*\}")
# a place in vLLM's source ("lines 512–522", "第 124–125 行"): where a fact was read, not a figure
SOURCE_LINES = re.compile(r"\blines? \d+(?:[–-]\d+)?|第 ?\d+(?:[–-]\d+)? ?行")

# text: why the same digits may appear typed
COINCIDENCES = {
    "128": "config facts typed in derivations: head dimension d_h, AWQ group size",
    "4.5": "WCAG's minimum contrast ratio 4.5:1 (ADR 0008), not a step time",
    "4%": "vLLM's long_prefill_token_threshold default (4% of max_model_len), a config fact typed "
    "in chunked_prefill; load_testing's rate grid step is computed",
}


@functools.cache  # values() run simulations: compute them once per test session
def lesson_values() -> dict[str, dict[str, str]]:
    found = {}
    for values_py in sorted((ROOT / "snippets").glob("*/values.py")):
        module = importlib.import_module(f"{values_py.parent.name}.values")
        found[values_py.parent.name] = {k: str(v) for k, v in module.values().items()}
    return found


def typed_numbers(prose: list[str]) -> set[str]:
    text = "\n".join(prose)
    for pattern in (INLINE_CODE, VALUE_REFERENCE, MATH, LINK_TARGET, SOURCE_LINES):
        text = pattern.sub(" ", text)
    return set(NUMBER.findall(text))


def significant(value: str) -> bool:
    """Figures worth guarding: with a decimal point, a percent sign, or at least three digits."""
    return bool(re.fullmatch(r"[\d,.]+%?", value)) and (
        "." in value or "%" in value or sum(c.isdigit() for c in value) >= 3
    )


PAGES = [p for p in chinese_pages() if p.parent != DOCS and p.parent != DOCS / "adr"]
# a notebook's text cells are prose too (they cannot hold `{{ … }}`: a figure there is printed)
PAGES += chinese_notebooks()
PAGES += [english_sibling(p) for p in PAGES if english_sibling(p).exists()]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_prose_does_not_retype_a_computed_value(page):
    values = lesson_values()
    typed = typed_numbers(read_page(page).prose)
    offenders = [
        f"'{text}' (= {{{{ {lesson}.{name} }}}})"
        for lesson, named in values.items()
        for name, text in named.items()
        if significant(text) and text in typed and text not in COINCIDENCES
    ]
    assert not offenders, f"{page.relative_to(ROOT)} types computed figures by hand: {offenders}"


def test_the_check_finds_a_retyped_figure():
    assert "1.12" not in typed_numbers(["markdown-exec 1.12.6 runs the blocks"])  # a version
    assert "164" in typed_numbers(["脊点约 164 FLOP/字节，见 `163.9` 与 {{ a.b }}"])
    assert "163.9" not in typed_numbers(["code `163.9` is skipped"])


def test_every_lesson_page_is_checked_in_both_languages():
    checked = {p.relative_to(DOCS).as_posix() for p in PAGES}
    for lesson in COURSE.lessons:
        if not lesson.notebook:
            english = lesson.page.removesuffix(".md") + ".en.md"
            assert {lesson.page, english} <= checked, lesson.slug


def test_a_source_line_number_is_not_a_figure_but_a_typed_figure_still_is():
    assert typed_numbers(["(`config/vllm.py` lines 512–522)", "（第 124–125 行）"]) == set()
    assert typed_numbers(["line 70 sets 512 sequences"]) == {"512"}
