"""The 404 page in the reader's language: a missing URL under /en/ shows the English 404 page,
any other the Chinese one (the test server answers a missing file with 404.html, as GitHub Pages
does)."""

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser

from .pagecheck import DEFAULT_LANG

EXPECTED = {DEFAULT_LANG: ("404 - 找不到页面", "首页"), "en": ("404 - Not found", "home page")}


@pytest.mark.parametrize("lang", EXPECTED)
def test_a_missing_page_answers_in_the_readers_language(browser: Browser, site_url: str, lang):
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        url = f"{site_url}{'' if lang == DEFAULT_LANG else lang + '/'}no-such/page/"
        response = page.goto(url)
        assert response is not None and response.status == 404
        heading, home = EXPECTED[lang]
        page.wait_for_function(
            "([lang, heading]) => document.documentElement.lang === lang &&"
            " document.querySelector('h1')?.textContent === heading",
            arg=[lang, heading],
        )
        link = page.locator(f'article a:text-is("{home}")')
        prefix = urlsplit(site_url).path
        assert link.get_attribute("href") == prefix + ("" if lang == DEFAULT_LANG else f"{lang}/")
        page.wait_for_load_state("networkidle")
        assert page.evaluate("typeof document$") == "object", "Material's bundle did not run"
        assert not errors, errors
    finally:
        context.close()
