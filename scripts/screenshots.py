"""Full-page screenshots of every page of a built site, both languages, desktop and phone width.

    python scripts/screenshots.py [SITE_DIR] [--out screenshots]     (`make screenshots`)

Builds nothing: SITE_DIR (default site/) is served the way the browser tests serve it. Writes
<out>/<width>/<page>.png (git-ignored), e.g. screenshots/390/en/foundations/prefill_decode.png.
"""

import argparse
import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from serve_site import CHROMIUM, DESKTOP, PHONE, RENDERED_JS, launch_chromium, page_paths, serve

ROOT = Path(__file__).resolve().parent.parent
RENDER_TIMEOUT_MS = 20_000


def png_name(path: str) -> str:
    """The home page is index.png, "en/" is en.png, "en/glossary/" is en/glossary.png."""
    return (path.rstrip("/") or "index") + ".png"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "site")
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args()
    if not (args.site / "index.html").is_file():
        sys.exit(f"{args.site} holds no built site: run `make build` first")
    if not CHROMIUM.exists():
        sys.exit(f"{CHROMIUM} is missing: apt-get install chromium fonts-noto-cjk")
    shutil.rmtree(args.out, ignore_errors=True)
    pages = page_paths(args.site)
    with serve(args.site) as base, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        for viewport in (DESKTOP, PHONE):
            context = browser.new_context(viewport=viewport)
            for path in pages:
                page = context.new_page()
                page.goto(base + path)
                if page.evaluate(RENDERED_JS, RENDER_TIMEOUT_MS) is None:
                    print(f"warning: {base + path} not rendered after {RENDER_TIMEOUT_MS} ms")
                target = args.out / str(viewport["width"]) / png_name(path)
                target.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=target, full_page=True)
                page.close()
                print(target.relative_to(ROOT) if target.is_relative_to(ROOT) else target)
            context.close()
        browser.close()
    print(f"{2 * len(pages)} screenshots: {len(pages)} pages at 1280 px and 390 px")


if __name__ == "__main__":
    main()
