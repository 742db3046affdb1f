"""'Run in browser' at build time (coursesite.run_in_browser, docs/adr/0011).

The served course archive holds snippets/ byte for byte; every executed block of every page has
a button naming a served file with exactly the code the build ran (snippets expanded, hidden lines
kept); no page loads any part of the runtime; a block that needs numpy gets a note instead.
"""

import re
import zipfile
from pathlib import Path

import pytest

from conftest import DOCS, ROOT, built_html
from coursesite import run_in_browser
from markdown_source import expand_snippets, read_page

LOADS_RUNTIME = re.compile(
    r"<(script|link|iframe|object)\b[^>]*(pyodide|run-in-browser\.js|assets/run/)[^>]*>", re.I
)
SNIPPET_BASES = [ROOT / "snippets", ROOT / "labs"]
BUTTON = re.compile(r'<button class="md-button run-in-browser"[^>]*data-run="([0-9a-f]{16}\.py)"')


def snippets_files() -> dict[str, bytes]:
    """Every file of snippets/ a reader's copy of the repository has (no caches, no builds)."""
    found = {}
    for path in (ROOT / "snippets").rglob("*"):
        rel = path.relative_to(ROOT)
        skipped = {"__pycache__", "build"} & set(rel.parts)
        if path.is_file() and not skipped and not any(p.endswith(".egg-info") for p in rel.parts):
            found[rel.as_posix()] = path.read_bytes()
    return found


def nonblank(code: str) -> list[str]:
    return [line for line in code.splitlines() if line.strip()]


def test_served_course_archive_holds_the_files_of_snippets(built_site):
    with zipfile.ZipFile(built_site.site / "assets" / "run" / "course.zip") as archive:
        served = {n: archive.read(n) for n in archive.namelist() if n.startswith("snippets/")}
        others = [n for n in archive.namelist() if not n.startswith("snippets/")]
    expected = snippets_files()
    assert any(name.endswith(".py") for name in expected) and any(
        name.endswith((".toml", ".json")) for name in expected
    ), "snippets/ holds no code or no data: is discovery broken?"
    assert sorted(served) == sorted(expected)
    assert [n for n in expected if served[n] != expected[n]] == [], "files differ from snippets/"
    assert all(re.fullmatch(r"labs/results/[^/]+/[^/]+\.json", n) for n in others), others


def test_every_executed_block_serves_the_code_the_build_ran(built_site):
    """A block the browser can run has a button serving the build's code; a block that needs a
    package Pyodide cannot get here (numpy) has the note instead, never a button."""
    checked = noted = 0
    for source in sorted(DOCS.rglob("*.md")):
        blocks = [b for b in read_page(source).executed_blocks if b.lang == "python"]
        if not blocks:
            continue
        lang = "en" if source.name.endswith(".en.md") else "zh"
        html = built_html(built_site.site, source, lang).read_text(encoding="utf-8")
        names = BUTTON.findall(html)
        runnable = [
            b
            for b in blocks
            if not run_in_browser.missing_packages(expand_snippets(b.body, SNIPPET_BASES))
        ]
        notes = html.count('class="run-unavailable"')
        assert len(names) == len(runnable), (
            f"{source}: {len(runnable)} runnable, {len(names)} buttons"
        )
        assert notes == len(blocks) - len(runnable), f"{source}: {notes} notes"
        noted += notes
        for block, name in zip(runnable, names, strict=True):
            served = (built_site.site / "assets" / "run" / name).read_text(encoding="utf-8")
            expected = expand_snippets(block.body, SNIPPET_BASES)
            assert "markdown-exec: hide" not in expected or "markdown-exec: hide" in served
            # the test's reader and pymdownx.snippets differ only in blank lines around includes
            assert nonblank(served) == nonblank(expected), (
                f"{source}: block {block.block_id!r} serves other code than the build ran"
            )
            checked += 1
    assert checked > 10, "few executed blocks found: is discovery broken?"
    assert noted > 0, "the numpy simulators' blocks should carry the note"


def test_no_page_loads_the_runtime_before_a_click(built_site):
    """The runner is imported by a button's onclick only; no page names Pyodide at all."""
    pages = list(built_site.site.rglob("index.html"))
    assert pages
    for page in pages:
        html = page.read_text(encoding="utf-8")
        assert not LOADS_RUNTIME.search(html), f"{page}: {LOADS_RUNTIME.search(html)[0]}"


def test_a_block_that_needs_numpy_says_so_in_the_page_language(tmp_path: Path):
    (tmp_path / "lesson").mkdir()
    (tmp_path / "lesson" / "__init__.py").write_text("")
    (tmp_path / "lesson" / "sim.py").write_text("from . import helper\n")
    (tmp_path / "lesson" / "helper.py").write_text("import numpy as np\nimport json\n")
    (tmp_path / "lesson" / "plain.py").write_text("import json, statistics\n")

    assert run_in_browser.missing_packages("import numpy\nprint(1)", tmp_path) == ["numpy"]
    assert run_in_browser.missing_packages("from lesson.sim import x", tmp_path) == ["numpy"]
    assert run_in_browser.missing_packages("from lesson import plain", tmp_path) == []
    assert run_in_browser.missing_packages("import tomllib, dataclasses", tmp_path) == []

    block = run_in_browser.Block("import numpy", "sim")
    zh = run_in_browser.control(block, "zh", "r.js", ["numpy"])
    en = run_in_browser.control(block, "en", "r.js", ["numpy"])
    assert "<button" not in zh + en
    assert "numpy" in zh and "本地运行" in zh
    assert "numpy" in en and "run it locally" in en
    assert "在浏览器中运行" in run_in_browser.control(block, "zh", "r.js", [])


def test_only_the_numpy_simulators_need_a_note():
    """Estimators stay standard-library only (ADR 0011); numpy is for build-time simulations."""
    for source in sorted(DOCS.rglob("*.md")):
        for block in read_page(source).executed_blocks:
            missing = run_in_browser.missing_packages(expand_snippets(block.body, SNIPPET_BASES))
            assert missing in ([], ["numpy"]), f"{source}: {block.block_id} needs {missing}"


@pytest.mark.parametrize("name", ["pyodide.mjs", "pyodide.asm.wasm", "python_stdlib.zip"])
def test_pyodide_is_served_by_the_site(built_site, name):
    assert (built_site.site / "assets" / "vendor" / "pyodide" / name).is_file()


FORM_ARGS = ("qwen2.5-7b-instruct-awq", "checkpoint", "h20", "100, 2000", "8")


def test_playground_report_is_the_cores_bounds_and_rejects_bad_input():
    from core.display import ms
    from core.formats import checkpoint_format
    from core.forward import kv_cache_bytes
    from core.gpus import GIB, load_gpu
    from core.models import load_model
    from core.roofline import tpot_bound, ttft_bound
    from playground.web import kv_token_budget, report

    model, gpu = load_model("qwen2.5-7b-instruct-awq"), load_gpu("h20")
    fmt = checkpoint_format(model)
    budget = kv_token_budget(gpu, model, fmt)
    batch = budget // (2000 + 8) + 1  # 2,000-token sequences no longer fit, 100-token ones do
    html = report(*FORM_ARGS, "en", batch)
    cells = re.findall(r"<td>(.*?)</td>", html)
    for row, s in zip([cells[:7], cells[7:]], (100, 2000), strict=True):
        step = tpot_bound(gpu, model, s, fmt, batch=batch).seconds
        assert row[1] == ms(ttft_bound(gpu, model, s, fmt).seconds)  # one request's prefill
        assert row[3] == ms(step)  # the batched step
        assert row[4] == f"{batch / step:,.0f}"
        assert row[5] == f"{kv_cache_bytes(model, s + 8, batch=batch) / GIB:.2f}"
    assert [cells[6], cells[13]] == ["yes", "NO"]
    assert ms(tpot_bound(gpu, model, 100, fmt).seconds) != cells[3]  # the batch is used
    assert "AWQ" in html and html.count("<svg") == 1
    # the caption says what the cells are: TPOT at context S (the first step), KV at S + n
    caption = {
        lang: re.search(r"<caption>(.*?)</caption>", report(*FORM_ARGS, lang, batch)).group(1)
        for lang in ("zh", "en")
    }
    assert "at context S" in caption["en"] and "S + 8 tokens each" in caption["en"]
    assert "在上下文 S 处" in caption["zh"] and "S + 8 个 token" in caption["zh"]
    bad_inputs = ({"prompt_lengths": "12, x"}, {"new_tokens": "0"}, {"gpu": "tpu"}, {"fmt": "int3"})
    for bad in (*bad_inputs, {"batch": "-2"}):
        args = {"model": "qwen2.5-7b-instruct", "fmt": "bf16", "gpu": "h20"}
        args |= {"prompt_lengths": "128", "new_tokens": "4"} | bad
        with pytest.raises(ValueError, match=re.escape(next(iter(bad.values())))):
            report(**args, lang="en")
