"""The interview question bank (docs/interview.md) holds every lesson's interview questions and
self-test, each under a working link back to its lesson (coursesite.interview)."""

import re
from pathlib import Path

import pytest

from conftest import COURSE, DOCS, built_html
from coursesite import interview
from coursesite.interview import rebase, sections

LESSONS = [n for n in COURSE.lessons if not n.notebook]


def test_sections_are_split_at_numbered_headings():
    page = "# T\n\n## 1 · A {#a}\n\none\n\n## 7 · Q {#interview}\n\n**q**\n\n## 8 · S {#summary}\n"
    assert sections(page) == {"a": ("1", "one"), "interview": ("7", "**q**"), "summary": ("8", "")}


def test_links_are_rebased_onto_the_bank_and_subheadings_lose_their_ids():
    text = "### Sub {#sub}\n[g](../glossary.md#x) [s](#self-test) [o](other.md) [w](https://a.b/)"
    assert rebase(text, "batching/paged_attention.md", "").splitlines() == [
        "**Sub**",
        "[g](glossary.md#x) [s](batching/paged_attention.md#self-test) "
        "[o](batching/other.md) [w](https://a.b/)",
    ]


def _section(page_html: str, section_id: str) -> str:
    start = page_html.index(f'<h2 id="{section_id}"')
    end = page_html.find("<h2 ", start + 1)
    return page_html[start : end if end > 0 else None]


def _resolves(site: Path, bank_html: Path, href: str) -> bool:
    target, _, anchor = href.partition("#")
    page = (bank_html.parent / target / "index.html").resolve()
    return page.is_file() and f'id="{anchor}"' in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_lessons_questions_are_in_the_bank_with_a_working_link(built_site, lang):
    site = built_site.site
    bank_path = built_html(site, DOCS / "interview.md", lang)
    bank = bank_path.read_text(encoding="utf-8")
    for lesson in LESSONS:
        page = built_html(site, DOCS / lesson.page, lang).read_text(encoding="utf-8")
        questions = re.findall(r"<strong>(.*?)</strong>", _section(page, "interview"), re.S)
        questions += re.findall(r"<summary>(.*?)</summary>", _section(page, "self-test"), re.S)
        assert questions, f"{lesson.slug} ({lang}): no question found on the lesson page"
        for question in questions:
            assert question in bank, f"{lesson.slug} ({lang}): not in the bank: {question}"
        for key in interview.SECTIONS:
            links = re.findall(rf'href="([^"]*{lesson.slug}/#{key})"', bank)
            assert links, f"{lesson.slug} ({lang}): no link back to #{key}"
            assert all(_resolves(site, bank_path, href) for href in links), links
