"""'Run in browser' in Chromium (coursesite.run_in_browser, javascripts/run-in-browser.js).

On the prefill/decode page, in both languages: nothing of the runtime loads before the first
click; Run prints exactly what the build printed; an edited length changes exactly its lines; an
error shows Python's message; a second run reuses the runtime; no request leaves the site; the
editor fits a phone. Expected outputs come from markdown-exec's own runner on the same code.
"""

import re
from contextlib import chdir
from html import unescape
from urllib.parse import urlsplit

import pytest
from markdown_exec._internal.formatters.base import ExecutionError
from markdown_exec._internal.formatters.python import _run_python
from playwright.sync_api import Locator, Page

import executed
from conftest import ROOT
from serve_site import DESKTOP, PHONE

from .pagecheck import LAY_OUT_EVERYTHING, SCROLLS_INSIDE, WIDE_JS

BLOCK = "prefill-decode-intensity"
PAGES = {"zh": "foundations/prefill_decode/", "en": "en/foundations/prefill_decode/"}
RUNTIME_PATHS = ("/javascripts/run-in-browser.js", "/assets/vendor/pyodide/", "/assets/run/")
FIRST_RUN_TIMEOUT_MS = 120_000  # Pyodide's first start on a busy 2-CPU machine
RUN_TIMEOUT_MS = 30_000


def build_output(code: str) -> str:
    """What markdown-exec prints for `code` (the build runs blocks from the repository root)."""
    return executed.build_output(code, BLOCK)


def build_error(code: str) -> str:
    """The last line of the traceback markdown-exec reports for failing `code`."""
    with chdir(ROOT), pytest.raises(ExecutionError) as raised:
        _run_python(code, id=BLOCK)
    return [line for line in str(raised.value).splitlines() if line.strip()][-2].strip()


def runtime_requests(urls: list[str]) -> list[str]:
    return [u for u in urls if any(p in urlsplit(u).path for p in RUNTIME_PATHS)]


def run_and_wait(page: Page, block: Locator, timeout_ms: int, pointer: bool = True) -> str:
    """Click Run and wait until that run is over; returns the printed text.

    `pointer`: a real mouse click, after Playwright's checks that the button is visible, enabled
    and holds still for two animation frames. Without it the click event is sent to the button
    directly, and the wait polls on a timer: nothing waits for an animation frame, which headless
    Chromium with no GPU may not draw for seconds on a loaded machine (a CI run timed out after
    30 s in that check with no retry logged, on a button that held still in every local run)."""
    runs = int(block.get_attribute("data-runs") or 0)
    button = block.locator(".run-in-browser")
    if pointer:
        button.click()
    else:
        button.dispatch_event("click")
    page.wait_for_function(
        "([el, n]) => Number(el.dataset.runs || 0) > n",
        arg=[block.element_handle(), runs],
        timeout=timeout_ms,
        polling="raf" if pointer else 100,
    )
    return block.locator(".run-output").text_content()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_run_edit_and_error_on_the_seed_estimator(browser, site_url, lang):
    viewport = PHONE if lang == "zh" else DESKTOP  # one language at phone width, one at desktop
    context = browser.new_context(viewport=viewport)
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(site_url + PAGES[lang])
        page.wait_for_load_state("networkidle")
        assert runtime_requests(requests) == [], "the runtime loaded before any click"
        # blocks far from the viewport are not laid out (content-visibility, ADR-0013) and read
        # as empty text; lay them all out, as the page checks do, so the width check sees them too
        page.add_style_tag(content=LAY_OUT_EVERYTHING)

        block = page.locator(f".run-block:has(.run-in-browser[data-id='{BLOCK}'])")
        label = block.locator(".run-in-browser").inner_text()
        assert label == {"zh": "在浏览器中运行", "en": "Run in browser"}[lang]
        shown_build_output = block.locator(".language-text pre").text_content()
        code_url = (
            site_url + "assets/run/" + block.locator(".run-in-browser").get_attribute("data-run")
        )

        printed = run_and_wait(page, block, FIRST_RUN_TIMEOUT_MS)
        code = page.evaluate("url => fetch(url).then(r => r.text())", code_url)
        expected = build_output(code)
        assert len(expected.splitlines()) == 6
        assert printed == expected
        assert printed.strip() == shown_build_output.strip()
        first_load = runtime_requests(requests)
        assert any(u.endswith("pyodide.asm.wasm") for u in first_load)
        assert any(u.endswith("course.zip") for u in first_load)

        editor = block.locator("textarea.run-editor")
        folded = block.locator("details.folded-code:not([open]) > summary")
        if folded.count():  # a long listing is folded (coursesite.folding): open it to edit
            folded.first.click()
        shown = editor.input_value()
        assert "markdown-exec: hide" not in shown and "def main()" in shown
        assert "LENGTHS = (128, 1024, 8192)" in shown
        editor.fill(shown.replace("LENGTHS = (128, 1024, 8192)", "LENGTHS = (128, 1024, 4096)"))
        edited = run_and_wait(page, block, RUN_TIMEOUT_MS)
        edited_code = code.replace("LENGTHS = (128, 1024, 8192)", "LENGTHS = (128, 1024, 4096)")
        assert edited == build_output(edited_code)
        changed = [
            i
            for i, (a, b) in enumerate(zip(expected.splitlines(), edited.splitlines(), strict=True))
            if a != b
        ]
        assert changed == [2, 5], f"lines changed by 8192 -> 4096: {changed}"
        assert runtime_requests(requests) == first_load, "a second run fetched the runtime again"

        editor.fill(shown.replace("LENGTHS = (128, 1024, 8192)", "LENGTHS = (0, 1024, 8192)"))
        failed = run_and_wait(page, block, RUN_TIMEOUT_MS)
        message = build_error(code.replace("(128, 1024, 8192)", "(0, 1024, 8192)"))
        assert message.startswith("ValueError: prompt_len must be a positive")
        assert message in failed
        assert "Traceback" in failed
        assert "run-error" in block.locator(".run-output").get_attribute("class")

        block.locator(".run-reset").click()
        assert editor.input_value() == shown

        if viewport == PHONE:
            wide = page.evaluate(WIDE_JS, SCROLLS_INSIDE)
            assert wide["wide"] == [] and wide["scrollWidth"] <= wide["clientWidth"] + 1, wide
            box = editor.bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]

        origin = urlsplit(site_url).netloc
        assert [
            u
            for u in requests
            if urlsplit(u).scheme.startswith("http") and urlsplit(u).netloc != origin
        ] == []
        assert errors == []
    finally:
        context.close()


PLAYGROUND = {"zh": "performance/playground/", "en": "en/performance/playground/"}


def cell_texts(table_html: str) -> list[str]:
    return [unescape(c) for c in re.findall(r"<td>(.*?)</td>", table_html)]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_playground_computes_bounds_and_chart_in_the_browser(browser, site_url, lang):
    """The form runs snippets/playground/web.py's report() in Pyodide: the same cells as the
    build's Python computes for the same choice, a chart, and Python's message for bad input."""
    from playground.web import report

    viewport = PHONE if lang == "en" else DESKTOP
    context = browser.new_context(viewport=viewport)
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    page = context.new_page()
    try:
        page.goto(site_url + PLAYGROUND[lang])
        page.wait_for_load_state("networkidle")
        assert runtime_requests(requests) == []
        form = page.locator("form.run-playground")
        choice = {
            "model": "qwen2.5-72b-instruct",
            "fmt": "awq",
            "gpu": "h100_sxm",
            "prompt_lengths": "16, 4096",
            "new_tokens": "64",
            "batch": "32",
        }
        for name in ("model", "fmt", "gpu"):
            form.locator(f"select[name={name}]").select_option(choice[name])
        for name in ("prompt_lengths", "new_tokens", "batch"):
            form.locator(f"input[name={name}]").fill(choice[name])

        def submit(runs: int) -> None:
            form.locator("button[type=submit]").click()
            page.wait_for_function(
                "([el, n]) => Number(el.dataset.runs || 0) > n",
                arg=[form.element_handle(), runs],
                timeout=FIRST_RUN_TIMEOUT_MS,
            )

        submit(0)
        result = page.locator(".run-playground-result")
        shown = result.locator("td").all_text_contents()
        assert shown == cell_texts(report(**choice, lang=lang))
        assert len(shown) == 2 * 7
        assert result.locator("svg[role=img]").count() == 1
        assert "H100 SXM" in result.locator("svg title").first.text_content()
        if viewport == PHONE:
            # readable, not squeezed: the table keeps its min-width and scrolls in its box, no
            # cell cuts its text off; the chart sits in its phone box (text >= 11 px)
            cells = result.locator("th, td").evaluate_all(
                "cells => cells.filter(c => c.scrollWidth > c.clientWidth + 1)"
                ".map(c => c.textContent)"
            )
            assert cells == []
            table_px = result.locator("table").evaluate("t => t.getBoundingClientRect().width")
            assert table_px > PHONE["width"] - 32  # wider than the content column: it scrolls
            assert result.locator(".chart-scroll > svg[role=img]").count() == 1

        form.locator("input[name=prompt_lengths]").fill("0")
        submit(1)
        with pytest.raises(ValueError) as expected:
            report(**{**choice, "prompt_lengths": "0"}, lang=lang)
        assert result.locator("pre.run-error").text_content() == f"ValueError: {expected.value}"

        if viewport == PHONE:
            wide = page.evaluate(WIDE_JS, SCROLLS_INSIDE + ", .run-playground-result")
            assert wide["wide"] == [] and wide["scrollWidth"] <= wide["clientWidth"] + 1, wide
        origin = urlsplit(site_url).netloc
        assert [u for u in requests if urlsplit(u).netloc not in {origin, ""}] == []
    finally:
        context.close()


def test_every_block_prints_in_the_browser_what_the_build_printed(browser, site_url, built_site):
    """Every button of every Chinese page (the English pages serve the same files, checked by
    tests/test_run_in_browser.py): unchanged code prints exactly markdown-exec's output."""
    pages = [
        p
        for p in sorted(built_site.site.rglob("index.html"))
        if 'class="md-button run-in-browser"' in p.read_text(encoding="utf-8")
        and p.relative_to(built_site.site).parts[0] != "en"
    ]
    assert len(pages) >= 4, "few pages with runnable blocks: is discovery broken?"
    checked, found = 0, []
    # one tab for every page, as a reader moving through the course: a fresh context would start
    # with an empty cache and fetch Pyodide's files again for each page
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    try:
        for html in pages:
            path = "".join(f"{part}/" for part in html.parent.relative_to(built_site.site).parts)
            page.goto(site_url + path)
            # blocks with a button; a numpy simulator's block carries a note instead
            blocks = page.locator(".run-block").filter(has=page.locator(".run-in-browser"))
            for i in range(blocks.count()):
                block = blocks.nth(i)
                button = block.locator(".run-in-browser")
                name, block_id = button.get_attribute("data-run"), button.get_attribute("data-id")
                # what this test checks is the output; the seed test above clicks as a reader
                printed = run_and_wait(page, block, FIRST_RUN_TIMEOUT_MS, pointer=False)
                code = (built_site.site / "assets" / "run" / name).read_text(encoding="utf-8")
                expected = executed.build_output(code, block_id)
                checked += 1
                if printed != expected:
                    found.append(
                        f"/{path} block {block_id!r}: {printed[:120]!r} != {expected[:120]!r}"
                    )
    finally:
        context.close()
    assert checked >= 10
    assert found == [], "\n".join(found)
