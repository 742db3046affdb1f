"""Snapshot gate: every executed block, run the way the build runs it, against a committed snapshot.

A change in output fails with a diff whose test id names the page and block.
Accept intended changes with `make snapshots` (pytest --snapshot-update), then review the git diff.
"""

import importlib

import pytest

from conftest import DOCS, ROOT, chinese_pages, english_sibling
from executed import build_output
from markdown_source import expand_snippets, read_page

SNIPPET_BASES = [ROOT / "snippets", ROOT / "labs"]


def executed_blocks():
    # Chinese pages are the reference; the parity gate holds English pages to the same blocks,
    # so an English block is snapshotted too only where its code differs (e.g. main("en")).
    for path in chinese_pages():
        zh_blocks = read_page(path).executed_blocks
        en_path = english_sibling(path)
        en_blocks = read_page(en_path).executed_blocks if en_path.exists() else []
        zh_code = {b.block_id: b.body for b in zh_blocks}
        differing = [b for b in en_blocks if zh_code.get(b.block_id) != b.body]
        for page_path, block in [
            *((path, b) for b in zh_blocks),
            *((en_path, b) for b in differing),
        ]:
            page = page_path.relative_to(DOCS).as_posix()
            yield pytest.param(page_path, block, id=f"{page}::{block.block_id}")


BLOCKS = list(executed_blocks())


def test_the_site_executes_at_least_one_block():
    assert BLOCKS, "no executed block found in docs/: the discovery is broken"


@pytest.mark.parametrize(("path", "block"), BLOCKS)
def test_executed_output_matches_snapshot(path, block, snapshot, monkeypatch):
    monkeypatch.chdir(ROOT)  # markdown-exec runs blocks in mkdocs' working directory
    code = expand_snippets(block.body, SNIPPET_BASES)
    output = build_output(code, block.block_id)
    assert output == snapshot, (
        f"executed output changed: docs/{path.relative_to(DOCS)} block {block.block_id!r} "
        "(run `make snapshots` if intended)"
    )


LESSONS_WITH_VALUES = sorted(p.parent.name for p in (ROOT / "snippets").glob("*/values.py"))


@pytest.mark.parametrize("lesson", LESSONS_WITH_VALUES)
def test_values_quoted_in_prose_match_snapshot(lesson, snapshot):
    # A changed figure changes the prose around it too: make it a reviewed change.
    values = importlib.import_module(f"{lesson}.values").values()
    assert {k: str(v) for k, v in values.items()} == snapshot, (
        f"figures quoted by docs/ pages via {{{{ {lesson}.… }}}} changed; "
        "re-read the prose around them, then run `make snapshots`"
    )
