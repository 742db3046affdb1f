"""Browser tier: the strict build, served on 127.0.0.1 under the `site_url` path, in Chromium.

One Chromium and one visit per page for the whole session; the tests then read the page reports.
Without /usr/bin/chromium the tier is skipped (and fails when CI is set).
"""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from serve_site import CHROMIUM, launch_chromium, page_paths, serve

from .pagecheck import PageReport, visit

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in {"", "0", "false"}


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        reason = f"browser tests need {CHROMIUM}: apt-get install chromium fonts-noto-cjk"
        if _in_ci():
            pytest.fail(f"{reason} (CI is set, so the browser tier may not be skipped)")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def site_url(built_site) -> Iterator[str]:
    """Base URL of the served build, e.g. http://127.0.0.1:41234/ (or .../<prefix>/)."""
    with serve(built_site.site) as base:
        yield base


@pytest.fixture(scope="session")
def pages(built_site) -> list[str]:
    """Every page of the build, relative to the site root: "", "en/", "en/glossary/", ..."""
    found = page_paths(built_site.site)
    assert found, f"no index.html found under {built_site.site}"
    return found


@pytest.fixture(scope="session")
def reports(browser, site_url, pages) -> dict[str, PageReport]:
    """One visit per page, with axe-core from node_modules/ (npm ci)."""
    assert AXE.is_file(), f"{AXE} is missing: run `npm ci` (or `make assets`)"
    axe = AXE.read_text(encoding="utf-8")
    return {path: visit(browser, site_url + path, axe) for path in pages}
