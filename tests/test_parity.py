"""zh/en parity gate: both versions of a page carry the same structure, executed blocks and values.

Only the prose is translated; everything code produces must be the same on both sides.
"""

import re
from pathlib import Path

import pytest

from conftest import COURSE, DOCS, ROOT, chinese_pages, english_sibling, read_mkdocs_yml
from markdown_source import Page, read_page

PAIRS = [
    pytest.param(p, english_sibling(p), id=p.relative_to(DOCS).as_posix())
    for p in chinese_pages()
    if english_sibling(p).exists()  # a missing sibling fails test_site and the build
]


# A block may pass its page's language to main(), e.g. a chart labelled in that language:
# main("zh") on the Chinese page and main("en") on the English page count as the same code.
OWN_LANGUAGE_CALL = re.compile(r'main\((["\'])(zh|en)\1\)')


def same_code(body: str, lang: str) -> str:
    return OWN_LANGUAGE_CALL.sub(lambda m: "main(<page language>)" if m[2] == lang else m[0], body)


def differences(zh: Page, en: Page) -> list[str]:
    found = []

    def compare(what: str, a, b) -> None:
        if a != b:
            found.append(f"{what}: zh {a!r} != en {b!r}")

    compare(
        "executed blocks (id, language, options, code)",
        [(f.block_id, f.lang, f.options, same_code(f.body, "zh")) for f in zh.executed_blocks],
        [(f.block_id, f.lang, f.options, same_code(f.body, "en")) for f in en.executed_blocks],
    )
    compare("value references", dict(zh.value_names), dict(en.value_names))
    compare("Mermaid diagrams", zh.mermaid_diagrams, en.mermaid_diagrams)
    compare("display formulas", zh.display_formulas, en.display_formulas)
    compare("tables", zh.tables, en.tables)
    compare("admonitions", zh.admonitions, en.admonitions)
    compare("headings per level", dict(zh.headings), dict(en.headings))
    compare("code blocks (language)", [f.lang for f in zh.fences], [f.lang for f in en.fences])
    return found


@pytest.mark.parametrize(("zh_path", "en_path"), PAIRS)
def test_page_pair_has_the_same_structure(zh_path: Path, en_path: Path):
    problems = differences(read_page(zh_path), read_page(en_path))
    pair = f"{zh_path.relative_to(ROOT)} vs {en_path.relative_to(ROOT)}"
    assert not problems, f"{pair} differ:\n  " + "\n  ".join(problems)


def test_the_gate_reports_a_block_missing_from_one_side(tmp_path):
    block = '```python exec="on" id="b"\nprint(1)\n```\n'
    (tmp_path / "a.md").write_text("# T\n\n{{ l.x }}\n\n" + block, encoding="utf-8")
    (tmp_path / "a.en.md").write_text("# T\n\nno value here\n", encoding="utf-8")
    problems = differences(read_page(tmp_path / "a.md"), read_page(tmp_path / "a.en.md"))
    assert any(p.startswith("executed blocks") for p in problems)
    assert any(p.startswith("value references") for p in problems)


def test_the_gate_accepts_only_the_page_own_language_argument():
    assert same_code('main("zh")', "zh") == same_code('main("en")', "en")
    assert same_code('main("en")', "zh") != same_code('main("en")', "en")


def nav_titles(nav) -> list[str]:
    titles = []
    for item in nav:
        if isinstance(item, dict):
            for title, child in item.items():
                titles.append(title)
                if isinstance(child, list):
                    titles += nav_titles(child)
    return titles


def test_every_nav_title_is_translated():
    config = read_mkdocs_yml()
    i18n = next(p["i18n"] for p in config["plugins"] if isinstance(p, dict) and "i18n" in p)
    english = next(lang for lang in i18n["languages"] if lang["locale"] == "en")
    translations = (english.get("nav_translations") or {}) | COURSE.translations()
    nav = [item for item in config["nav"] if "lessons.yml" not in item.values()]
    nav.append(COURSE.nav_section())  # what coursesite.pipeline puts in the placeholder's place
    missing = [t for t in nav_titles(nav) if t not in translations]
    assert not missing, f"mkdocs.yml: nav titles without an English translation: {missing}"


def test_every_executed_block_has_a_unique_id():
    seen: dict[str, str] = {}
    for path in chinese_pages():
        for block in read_page(path).executed_blocks:
            where = f"{path.relative_to(ROOT)}:{block.line}"
            assert block.block_id, f'{where}: executed block without id="..."'
            assert block.block_id not in seen, (
                f"{where}: id {block.block_id!r} also at {seen[block.block_id]}"
            )
            seen[block.block_id] = where
