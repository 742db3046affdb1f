"""Under `make serve`, a tab open on a page shows a failed rebuild's problems (MkDocs' live-reload
script reloads it onto the failure page) and comes back by itself when a save fixes the build
(the failure page's own script). The server side: tests/test_serve_rebuild.py."""

from test_serve_rebuild import served  # noqa: F401 - the fixture site under `mkdocs serve`

TIMEOUT_MS = 60_000


def test_an_open_tab_shows_the_failure_and_recovers_with_the_fix(browser, served):  # noqa: F811
    translation = served.snippet.parents[2] / "docs" / "more.en.md"
    text = translation.read_text(encoding="utf-8")
    page = browser.new_page()
    try:
        page.goto(f"{served.base}lesson/")
        page.get_by_text("value 42").first.wait_for(timeout=TIMEOUT_MS)
        translation.unlink()
        page.locator("#build-failed").wait_for(timeout=TIMEOUT_MS)
        assert "more.en.md" in page.inner_text("body")
        translation.write_text(text, encoding="utf-8")
        page.get_by_text("value 42").first.wait_for(timeout=TIMEOUT_MS)
        assert page.locator("#build-failed").count() == 0
    finally:
        page.close()
