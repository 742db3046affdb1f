"""scripts/adr_table.py: each benchmark writes its one current report into the ADR it supports."""

import importlib.util
import re
import sys
from datetime import UTC, datetime

import pytest

from conftest import ROOT

_spec = importlib.util.spec_from_file_location("adr_table", ROOT / "scripts" / "adr_table.py")
adr_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(adr_table)

BENCHMARKS = sorted((ROOT / "scripts").glob("bench_*.py"))
TARGET = re.compile(r'^ADR, ADR_BLOCK = "([^"]+)", "([^"]+)"$', re.MULTILINE)


def test_the_block_is_replaced_and_the_rest_of_the_adr_kept():
    text = "# ADR\n\nbefore\n<!-- bench:pages -->\nold table\n<!-- /bench:pages -->\nafter\n"
    new = adr_table.replace_block(text, "pages", "| a |\n|---|\n| 1 |\n")
    assert new == text.replace("old table", "| a |\n|---|\n| 1 |")
    assert adr_table.replace_block(new, "pages", "x") == text.replace("old table", "x")


@pytest.mark.parametrize(
    "text", ["no block", "<!-- bench:pages -->\nno end", "<!-- bench:build -->"]
)
def test_an_adr_without_the_block_is_an_error(text):
    with pytest.raises(ValueError, match="bench:pages"):
        adr_table.replace_block(text, "pages", "x")


def test_the_report_says_when_at_which_commit_and_how():
    argv = [str(ROOT / "scripts" / "bench_pages.py"), "site", "--runs", "15", "--adr"]
    line = adr_table.provenance(argv, "abc1234", datetime(2026, 12, 3, 6, 5, tzinfo=UTC))
    assert line == (
        "Measured 2026-12-03 06:05 UTC at `abc1234` with "
        "`python scripts/bench_pages.py site --runs 15 --adr`:"
    )


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.stem)
def test_every_benchmark_has_its_block_in_both_languages(script):
    target = TARGET.search(script.read_text(encoding="utf-8"))
    assert target, f"{script.name} names no ADR block (ADR, ADR_BLOCK = ...)"
    adr, block = target.groups()
    start, end = adr_table.markers(block)
    for path in adr_table.adr_files(adr):
        text = path.read_text(encoding="utf-8")
        assert text.count(start) == 1 and text.count(end) == 1, f"{path.name}: {start}"
        assert text.index(start) < text.index(end)


def test_run_with_adr_writes_what_the_benchmark_printed(tmp_path, monkeypatch, capsys):
    for lang in ("", ".en"):
        (tmp_path / f"0099-x{lang}.md").write_text(
            f"# X{lang}\n<!-- bench:t -->\nold\n<!-- /bench:t -->\n", encoding="utf-8"
        )
    monkeypatch.setattr(adr_table, "ADR_DIR", tmp_path)
    monkeypatch.setattr(adr_table, "ROOT", tmp_path)
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "bench_x.py"), "--adr"])
    adr_table.run(lambda: print("| a |\n|---|\n| 2 |"), "0099-x", "t")
    assert "| 2 |" in capsys.readouterr().out  # still printed
    for lang in ("", ".en"):
        text = (tmp_path / f"0099-x{lang}.md").read_text(encoding="utf-8")
        assert "old" not in text and "| a |\n|---|\n| 2 |\n<!-- /bench:t -->" in text
        assert "with `python bench_x.py --adr`:" in text


def test_run_without_adr_leaves_the_adr_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(adr_table, "ADR_DIR", tmp_path)  # empty: a write would fail
    monkeypatch.setattr(sys, "argv", ["bench_x.py"])
    adr_table.run(lambda: print("report"), "0099-x", "t")
