"""Lighthouse's mobile scores for one page of each kind of a built site, served with gzip.

    python scripts/lighthouse.py [SITE_DIR] [--check] [--runs N] [--only SUBSTR ...] [--all-english]

Builds nothing: SITE_DIR (default site/) is served on 127.0.0.1 the way GitHub Pages serves it,
text responses gzip-compressed, and Lighthouse 12.2.3 (npm, package.json's devDependencies) runs
its default mobile preset (a mid-range phone, simulated slow 4G and a 4x slower CPU) in Debian's
headless Chromium over the home page, a plain page (/about/), every lesson in Chinese, one lesson
in English (all of them with --all-english), the glossary and the playground. The table shows
performance, accessibility, cumulative layout shift, total blocking time and the number of DOM
elements per page, and which pages miss the targets of issue 26: performance >= 95,
accessibility 100, layout shift < 0.05. With --check the script exits non-zero on a miss.

A benchmark, not a test (`make lighthouse` is not part of `make test`): Lighthouse simulates the
phone from what it measures on this machine, so on a shared 2-core machine the performance score of
one page moves by a few points from run to run (layout shift, DOM size and accessibility do not).
A page that misses by a point or two is worth a second run before anything is changed for it:
--runs N runs Lighthouse N times per page and judges each page by its median performance score and
blocking time (its worst accessibility score, layout shift and DOM size), showing the range of the
performance scores beside the median.
"""

import argparse
import gzip
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

from coursesite.manifest import load_course
from serve_site import CHROMIUM, CHROMIUM_ARGS, _Handler, _Server, site_prefix

ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = ROOT / "node_modules" / ".bin" / "lighthouse"

PERFORMANCE_TARGET = 95
ACCESSIBILITY_TARGET = 100
LAYOUT_SHIFT_LIMIT = 0.05
ENGLISH_LESSON = "latency_metrics"  # the English page issue 26 measured
# What GitHub Pages compresses: text. Images, fonts and WebAssembly go as they are.
COMPRESSED_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml")


class GzipHandler(_Handler):
    """The test server's handler (prefix, 404 page) plus gzip for text, as GitHub Pages does."""

    _compressed: ClassVar[
        dict[str, bytes]
    ] = {}  # file path -> its gzip bytes; the site does not change

    def send_head(self):
        path = self.translate_path(self.path)
        if os.path.isdir(path) and urlsplit(self.path).path.endswith("/"):
            path = os.path.join(path, "index.html")
        content_type = self.guess_type(path)
        accepts_gzip = "gzip" in self.headers.get("Accept-Encoding", "")
        if (
            not self.path.startswith(self.prefix)
            or not os.path.isfile(path)
            or not accepts_gzip
            or not content_type.startswith(COMPRESSED_TYPES)
        ):
            return super().send_head()
        if path not in self._compressed:
            self._compressed[path] = gzip.compress(Path(path).read_bytes(), compresslevel=6)
        body = self._compressed[path]
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")  # GitHub Pages' header
        self.end_headers()
        return io.BytesIO(body)


@dataclass(frozen=True)
class Score:
    path: str
    performance: int
    accessibility: int
    layout_shift: float
    blocking_ms: float
    dom_elements: int
    failed_audits: tuple[str, ...]  # accessibility audits that failed
    performance_range: tuple[int, int] | None = None  # lowest and highest of several runs

    def misses(self) -> list[str]:
        out = []
        if self.performance < PERFORMANCE_TARGET:
            out.append(f"performance {self.performance} < {PERFORMANCE_TARGET}")
        if self.accessibility < ACCESSIBILITY_TARGET:
            out.append(f"accessibility {self.accessibility} ({', '.join(self.failed_audits)})")
        if self.layout_shift >= LAYOUT_SHIFT_LIMIT:
            out.append(f"CLS {self.layout_shift:.3f} >= {LAYOUT_SHIFT_LIMIT}")
        return out


def pages_of_each_kind(all_english: bool) -> list[str]:
    """Home, /about/, every lesson (Chinese; English for one or all), the glossary; the
    playground is a lesson. URL paths relative to the site root."""
    course = load_course(ROOT / "docs", ROOT / "snippets")
    lessons = [f"{lesson.part.key}/{lesson.slug}/" for lesson in course.lessons]
    english = [
        f"en/{lesson.part.key}/{lesson.slug}/"
        for lesson in course.lessons
        if all_english or lesson.slug == ENGLISH_LESSON
    ]
    return ["", "about/", *lessons, *english, "glossary/"]


def score(report: dict, path: str) -> Score:
    audits = report["audits"]
    accessibility = report["categories"]["accessibility"]
    failed = tuple(
        ref["id"]
        for ref in accessibility["auditRefs"]
        if ref["weight"] and audits[ref["id"]]["score"] == 0
    )
    return Score(
        path=path,
        performance=round(100 * report["categories"]["performance"]["score"]),
        accessibility=round(100 * accessibility["score"]),
        layout_shift=audits["cumulative-layout-shift"]["numericValue"],
        blocking_ms=audits["total-blocking-time"]["numericValue"],
        dom_elements=int(audits["dom-size"]["numericValue"]),
        failed_audits=failed,
    )


def median_score(runs: list[Score]) -> Score:
    """One page's several runs as one: the median performance score and blocking time (the
    noisy, simulated figures), the worst of what does not depend on the machine's load."""
    performance = [run.performance for run in runs]
    return Score(
        path=runs[0].path,
        performance=round(statistics.median(performance)),
        accessibility=min(run.accessibility for run in runs),
        layout_shift=max(run.layout_shift for run in runs),
        blocking_ms=statistics.median(run.blocking_ms for run in runs),
        dom_elements=max(run.dom_elements for run in runs),
        failed_audits=tuple(sorted({audit for run in runs for audit in run.failed_audits})),
        performance_range=(min(performance), max(performance)) if len(runs) > 1 else None,
    )


def shifted_elements(report: dict) -> list[str]:
    """The elements Lighthouse blames for layout shift, with their share."""
    items = report["audits"].get("layout-shifts", {}).get("details", {}).get("items", [])
    return [
        f"{item['score']:.3f} {item.get('node', {}).get('selector', '?')}" for item in items[:5]
    ]


def accessibility_failures(report: dict) -> list[str]:
    """The accessibility audits a page fails, each with the first elements it names."""
    audits = report["audits"]
    refs = report["categories"]["accessibility"]["auditRefs"]
    found = []
    for ref in refs:
        audit = audits.get(ref["id"], {})
        if ref.get("weight", 0) and audit.get("score") not in (None, 1):
            items = audit.get("details", {}).get("items", [])
            where = [item.get("node", {}).get("snippet", "?")[:100] for item in items[:3]]
            found.append(f"{ref['id']}: {len(items)} element(s): {' | '.join(where)}")
    return found


def _chrome_flag(flag: str) -> str:
    if flag == "--headless":
        return "--headless=new"
    name, _, value = flag.partition("=")
    return f'{name}="{value}"' if " " in value else flag


def run_lighthouse(url: str, out: Path) -> dict:
    """Lighthouse's default (mobile) run of `url` in headless Chromium; its JSON report."""
    # the tests' offline flags (every other host unresolvable); Lighthouse parses --chrome-flags
    # as a command line, so a value with spaces (the resolver rule) goes in quotes
    flags = " ".join(map(_chrome_flag, CHROMIUM_ARGS))
    command = [
        str(LIGHTHOUSE),
        url,
        "--only-categories=performance,accessibility",
        f"--chrome-path={CHROMIUM}",
        f"--chrome-flags={flags}",
        "--output=json",
        f"--output-path={out}",
        "--quiet",
    ]
    subprocess.run(command, check=True, env={**os.environ, "CHROME_PATH": str(CHROMIUM)})
    return json.loads(out.read_text(encoding="utf-8"))


def table(scores: list[Score]) -> str:
    head = f"{'page':44} {'perf':>4} {'a11y':>4} {'CLS':>6} {'TBT ms':>6} {'DOM':>6}"
    rows = [
        f"/{s.path:43} {s.performance:4d} {s.accessibility:4d} {s.layout_shift:6.3f} "
        f"{s.blocking_ms:6.0f} {s.dom_elements:6d}{'  MISS' if s.misses() else ''}"
        + (
            f"  (perf {s.performance_range[0]}-{s.performance_range[1]})"
            if s.performance_range
            else ""
        )
        for s in scores
    ]
    return "\n".join([head, *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "site")
    parser.add_argument("--check", action="store_true", help="exit 1 if a page misses a target")
    parser.add_argument("--all-english", action="store_true", help="every English lesson too")
    parser.add_argument(
        "--only", nargs="+", metavar="SUBSTRING", help="only the pages whose path contains one"
    )
    parser.add_argument(
        "--runs", type=int, default=1, metavar="N", help="N runs per page, judged by the median"
    )
    parser.add_argument("--verbose", action="store_true", help="the elements that shift")
    parser.add_argument("--reports", type=Path, help="keep each page's JSON report in this folder")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs needs at least 1")
    if not (args.site / "index.html").is_file():
        sys.exit(f"{args.site} holds no built site: run `make build` first")
    if not LIGHTHOUSE.exists():
        sys.exit(f"{LIGHTHOUSE} is missing: run `npm ci` (package.json's devDependencies)")
    if not CHROMIUM.exists():
        sys.exit(f"{CHROMIUM} is missing: `apt-get install chromium`")
    paths = pages_of_each_kind(args.all_english)
    if args.only:
        paths = [p for p in paths if any(s in "/" + p for s in args.only)]
    prefix = site_prefix()
    server = _Server(
        ("127.0.0.1", 0), partial(GzipHandler, directory=str(args.site), prefix=prefix)
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}{prefix}"
    scores = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            folder = args.reports or Path(tmp)
            folder.mkdir(parents=True, exist_ok=True)
            name = path.strip("/").replace("/", "_") or "home"
            runs = []
            for run in range(1, args.runs + 1):
                suffix = f".{run}" if args.runs > 1 else ""
                report = run_lighthouse(base + path, folder / f"{name}{suffix}.json")
                runs.append(score(report, path))
                print(table(runs[-1:]).splitlines()[1], flush=True)
                for line in accessibility_failures(report):
                    print("    a11y", line, flush=True)
                if args.verbose:
                    for line in shifted_elements(report):
                        print("    shift", line)
            scores.append(median_score(runs))
    server.shutdown()
    print()
    print(table(scores))
    misses = [(s.path, s.misses()) for s in scores if s.misses()]
    print(f"\n{len(misses)} of {len(scores)} pages miss a target", end="")
    print(":" if misses else ".")
    for path, why in misses:
        print(f"  /{path}: {'; '.join(why)}")
    print(
        "(performance is simulated from this machine's timings: on a shared 2-core machine it "
        "moves by a few points between runs)"
    )
    if args.check and misses:
        sys.exit(1)


if __name__ == "__main__":
    main()
