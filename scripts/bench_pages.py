"""Every page of a built site in Chromium: time until math and diagrams are done, bytes, requests.

    python scripts/bench_pages.py [SITE_DIR] [--runs 5]

Builds nothing: SITE_DIR (default site/) is served the way the browser tests serve it. Each page is
loaded --runs times, each time in a fresh browser context (a first visit, nothing cached), and
nothing is clicked or typed: the bytes are what a page costs before any interaction. The table
shows medians, the ratio to a plain page (no math, no diagram) of the same site, and the ratio to
the floor: that plain page with nothing but its HTML and Material's own CSS, JavaScript and
images (every other request refused). Bytes are as this local server sends them: uncompressed
(a web server that gzips sends fewer).

The loads run in rounds: each round loads the floor and then every page once, in a shuffled order
(seeded), and a page's "× plain time" is the median over rounds of its time divided by the median
time of all plain pages (no math, no diagram) in the same round. A 2-core machine's speed drifts by
±20 % over the minutes a run takes; comparing within a round keeps the drift out, and the median
of some thirty plain pages spread through the round keeps out the bias of any one reference load
(loaded first in each round, /about/ came out faster than the same page loaded later).

First paint (first contentful paint, Paint Timing) is when the reader first sees text; "rendered"
is when the page has finished loading. scripts/bench_page_variants.py takes one page apart.
"""

import argparse
import os
import platform
import random
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

import adr_table
from serve_site import CHROMIUM, DESKTOP, RENDERED_JS, launch_chromium, page_paths, serve

ROOT = Path(__file__).resolve().parent.parent
# --adr writes the report into this ADR's block (scripts/adr_table.py)
ADR, ADR_BLOCK = "0013-build-time-rendering", "pages"
RENDER_TIMEOUT_MS = 60_000


# a formula or a diagram (drawn at build time, ADR-0013, or left to the browser's engine)
MATH_OR_DIAGRAM = re.compile(
    r'<script src="[^"]*(?:mathjax|mermaid)[^"]*"|class="arithmatex"|<(?:pre|div) class="mermaid"'
)


def is_plain(site: Path, path: str) -> bool:
    """A page with no formula and no diagram."""
    return not MATH_OR_DIAGRAM.search((site / path / "index.html").read_text(encoding="utf-8"))


# What the floor refuses: everything of ours (Material's own assets stay: assets/stylesheets/,
# assets/javascripts/, assets/images/). Blocked inside Chromium, so no round trip through here.
NOT_MATERIAL = ("javascripts/*", "stylesheets/*", "assets/vendor/*", "search/*", "en/search/*")
PLAIN_KIB_TARGET = 1024  # issue 13: a plain page at most 1 MiB before interaction
LESSON_TIME_TARGET = 1.5  # ... and a lesson page's rendered time at most 1.5x a plain page's
# when the browser first drew text or an image of the page (Paint Timing), or null after `timeoutMs`
FIRST_CONTENTFUL_PAINT_JS = """timeoutMs => new Promise(resolve => {
  new PerformanceObserver((list, observer) => {
    const paint = list.getEntriesByName("first-contentful-paint")[0];
    if (paint) { observer.disconnect(); resolve(paint.startTime); }
  }).observe({ type: "paint", buffered: true });
  setTimeout(() => resolve(null), timeoutMs);
})"""


def load(browser: Browser, url: str, floor_of: str | None = None) -> tuple[float, int, int, float]:
    """One cold load: (ms until rendered, bytes received, HTTP requests, ms until first contentful
    paint). With `floor_of` (the site's base URL), every request but the page and Material's own
    assets is refused."""
    context = browser.new_context(viewport=DESKTOP)
    finished = []
    context.on("requestfinished", lambda request: finished.append(request))
    page = context.new_page()
    if floor_of:
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.setBlockedURLs", {"urls": [floor_of + p for p in NOT_MATERIAL]})
    page.goto(url)
    rendered_ms = page.evaluate(RENDERED_JS, RENDER_TIMEOUT_MS)
    if rendered_ms is None:
        sys.exit(f"{url}: math or diagrams not rendered after {RENDER_TIMEOUT_MS} ms")
    first_paint_ms = page.evaluate(FIRST_CONTENTFUL_PAINT_JS, RENDER_TIMEOUT_MS)
    if first_paint_ms is None:
        sys.exit(f"{url}: nothing painted after {RENDER_TIMEOUT_MS} ms")
    page.wait_for_load_state("networkidle")  # the search index and fonts count too
    requests = [r for r in finished if r.url.startswith("http")]
    sizes = [r.sizes() for r in requests]
    received = sum(s["responseBodySize"] + s["responseHeadersSize"] for s in sizes)
    context.close()
    return rendered_ms, received, len(requests), first_paint_ms


# (ms until rendered, bytes received, HTTP requests, ms until first contentful paint)
Load = tuple[float, int, int, float]


@dataclass
class Round:
    floor: Load
    pages: dict[str, Load]

    def plain_ms(self, plain_pages: list[str], column: int = 0) -> float:
        """The median rendered time (or another time `column`) of the plain pages in this round."""
        return statistics.median(self.pages[p][column] for p in plain_pages)


def measure_round(browser: Browser, base: str, plain: str, pages: list[str], seed: int) -> Round:
    """The floor, then every page in a shuffled order: one load each."""
    order = list(pages)
    random.Random(seed).shuffle(order)
    floor = load(browser, base + plain, floor_of=base)
    loads = {path: load(browser, base + path) for path in order}
    return Round(floor=floor, pages={path: loads[path] for path in pages})


def median_loads(loads: list[Load]) -> list[float]:
    return [statistics.median(column) for column in zip(*loads, strict=True)]


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "site")
    parser.add_argument("--runs", type=int, default=5, help="loads per page (default 5)")
    adr_table.add_argument(parser, ADR, ADR_BLOCK)
    args = parser.parse_args()
    if not (args.site / "index.html").is_file():
        sys.exit(f"{args.site} holds no built site: run `make build` first")
    if not CHROMIUM.exists():
        sys.exit(f"{CHROMIUM} is missing: apt-get install chromium fonts-noto-cjk")
    pages = page_paths(args.site)
    plain = next((p for p in pages if is_plain(args.site, p)), None)
    if plain is None:
        sys.exit("every page has math or a diagram: no plain page to compare with")
    with serve(args.site) as base, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        load(browser, base + plain)  # warm-up, not counted
        rounds = [measure_round(browser, base, plain, pages, seed) for seed in range(args.runs)]
        version = browser.version
        browser.close()
    medians = {path: median_loads([r.pages[path] for r in rounds]) for path in pages}
    floor = median_loads([r.floor for r in rounds])
    plain_pages = [p for p in pages if is_plain(args.site, p)]
    # per-round ratios: (× plain time, × floor time, × plain first paint) of each page
    time_ratios = {
        path: (
            statistics.median(r.pages[path][0] / r.plain_ms(plain_pages) for r in rounds),
            statistics.median(r.pages[path][0] / r.floor[0] for r in rounds),
            statistics.median(r.pages[path][3] / r.plain_ms(plain_pages, 3) for r in rounds),
        )
        for path in pages
    }

    print(f"{os.cpu_count()} CPUs ({cpu_model()}), Chromium {version}, {args.runs} runs per page")
    print(f"median of cold loads; × plain time: against the median of the {len(plain_pages)} plain")
    print(f"pages in the same round; × plain KiB: against /{plain}; × floor: against /{plain} with")
    print("only its HTML and Material's own CSS/JS/images (no engine, no index); first paint:")
    print("first contentful paint, against the plain pages' median in the same round; time ratios")
    print("are medians over rounds\n")
    print(
        "| page | rendered (ms) | KiB before interaction | requests "
        "| × plain time | × plain KiB | × floor time | × floor KiB | first paint (ms) "
        "| × plain first paint |"
    )
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    _, base_bytes, _, _ = medians[plain]
    floor_ms, floor_bytes, floor_requests, floor_paint_ms = floor
    print(
        f"| floor (/{plain}, Material only) | {floor_ms:.0f} | {floor_bytes / 1024:.0f} "
        f"| {floor_requests:.0f} | | | 1.00 | 1.00 | {floor_paint_ms:.0f} | |"
    )
    for path, (ms, received, requests, paint_ms) in medians.items():
        x_plain, x_floor, x_paint = time_ratios[path]
        print(
            f"| /{path} | {ms:.0f} | {received / 1024:.0f} | {requests:.0f} "
            f"| {x_plain:.2f} | {received / base_bytes:.2f} "
            f"| {x_floor:.2f} | {received / floor_bytes:.2f} | {paint_ms:.0f} | {x_paint:.2f} |"
        )
    worst_plain = max(medians[p][1] for p in plain_pages) / 1024
    heavy = [p for p in pages if not is_plain(args.site, p)]
    worst_ratio = max((time_ratios[p][0] for p in heavy), default=0)
    worst_paint = max((time_ratios[p][2] for p in heavy), default=0)
    print(
        f"\nlargest plain page before interaction: {worst_plain:.0f} KiB "
        f"(target ≤ {PLAIN_KIB_TARGET}: {worst_plain / PLAIN_KIB_TARGET:.2f} of it)"
    )
    print(
        f"slowest page with math or diagrams: {worst_ratio:.2f} × the plain page's rendered time "
        f"(target ≤ {LESSON_TIME_TARGET})"
    )
    print(f"latest first paint of a page with math or diagrams: {worst_paint:.2f} × plain pages'")


if __name__ == "__main__":
    adr_table.run(main, ADR, ADR_BLOCK)
