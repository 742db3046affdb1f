"""Where a page's load time goes: Chromium's main-thread time per trace event, up to the load event.

    python scripts/bench_page_phases.py [SITE_DIR] [--pages PATH/ ...] [--runs 5]

Builds nothing: SITE_DIR (default site/) is served as scripts/bench_pages.py serves it. Each page
(default: about/ and scheduling/load_testing/) is loaded --runs times cold, with Chromium's
tracing on (the categories of DevTools' Performance panel). For each load, every complete event
on the renderer's main thread that starts before the load event counts its self time (its
duration less its children's) under its name; the table shows the median per name, the events
with most time first, one column per page, and each page's difference from the first. README
("Pages") cites a run; nothing is timed by a test.
"""

import argparse
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from playwright.sync_api import Browser, sync_playwright

import adr_table
from serve_site import CHROMIUM, DESKTOP, launch_chromium, serve

ROOT = Path(__file__).resolve().parent.parent
# --adr writes the report into this ADR's block (scripts/adr_table.py)
ADR, ADR_BLOCK = "0013-build-time-rendering", "page-phases"
CATEGORIES = "devtools.timeline,blink,v8,disabled-by-default-devtools.timeline"
LOAD_MS_JS = "performance.timing.loadEventStart - performance.timing.navigationStart"
ROWS = 12  # events shown


def self_times(events: list[dict], until_us: float) -> Counter:
    """Self time (ms) per event name of the complete ("X") events of the thread that parsed the
    HTML, for events that start before `until_us` after its first ParseHTML."""
    parser = next((e["tid"] for e in events if e.get("name") == "ParseHTML"), None)
    spans = sorted(
        (e for e in events if e.get("tid") == parser and e.get("ph") == "X" and "dur" in e),
        key=lambda e: (e["ts"], -e["dur"]),
    )
    if not spans:
        return Counter()
    start = min(e["ts"] for e in spans if e["name"] == "ParseHTML")
    children: defaultdict[int, float] = defaultdict(float)
    open_spans: list[tuple[int, dict]] = []
    kept = [(i, e) for i, e in enumerate(spans) if e["ts"] - start < until_us]
    for i, event in kept:
        while open_spans and open_spans[-1][1]["ts"] + open_spans[-1][1]["dur"] <= event["ts"]:
            open_spans.pop()
        if open_spans:
            children[open_spans[-1][0]] += event["dur"]
        open_spans.append((i, event))
    found: Counter = Counter()
    for i, event in kept:
        found[event["name"]] += (event["dur"] - children[i]) / 1000
    return found


def traced_load(browser: Browser, url: str) -> Counter:
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    events: list[dict] = []
    done: list[bool] = []
    cdp.on("Tracing.dataCollected", lambda message: events.extend(message["value"]))
    cdp.on("Tracing.tracingComplete", lambda _: done.append(True))
    cdp.send("Tracing.start", {"categories": CATEGORIES, "transferMode": "ReportEvents"})
    page.goto(url)
    load_ms = page.evaluate(LOAD_MS_JS)
    cdp.send("Tracing.end")
    while not done:
        page.wait_for_timeout(50)
    context.close()
    return self_times(events, load_ms * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "site")
    parser.add_argument("--pages", nargs="+", default=["about/", "scheduling/load_testing/"])
    parser.add_argument("--runs", type=int, default=5)
    adr_table.add_argument(parser, ADR, ADR_BLOCK)
    args = parser.parse_args()
    pages = [p.strip("/") + "/" if p.strip("/") else "" for p in args.pages]
    for page in pages:
        if not (args.site / page / "index.html").is_file():
            sys.exit(f"{args.site / page} holds no built page: run `make build` first")
    if not CHROMIUM.exists():
        sys.exit(f"{CHROMIUM} is missing: apt-get install chromium fonts-noto-cjk")
    medians: dict[str, dict[str, float]] = {}
    with serve(args.site) as base, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        for page in pages:
            loads = [traced_load(browser, base + page) for _ in range(args.runs)]
            names = set().union(*loads)
            medians[page] = {n: statistics.median(load[n] for load in loads) for n in names}
        browser.close()
    first, *others = pages
    total = Counter()
    for page in pages:
        total.update(medians[page])
    names = [name for name, _ in total.most_common(ROWS)]
    print(f"main-thread self time (ms) up to the load event, median of {args.runs} cold loads\n")
    print(
        "| event | "
        + " | ".join(f"/{p}" for p in pages)
        + "".join(f" | /{p} − /{first}" for p in others)
        + " |"
    )
    print("|---" + "|--:" * (len(pages) + len(others)) + "|")
    for name in names:
        cells = [medians[p].get(name, 0.0) for p in pages]
        diffs = [c - cells[0] for c in cells[1:]]
        print(
            f"| {name} | "
            + " | ".join(f"{c:.1f}" for c in cells)
            + "".join(f" | {d:+.1f}" for d in diffs)
            + " |"
        )


if __name__ == "__main__":
    adr_table.run(main, ADR, ADR_BLOCK)
