"""The author's loop: a cold strict build, the share of it spent executing code, and `make serve`.

    python scripts/bench_build.py [--runs 1] [--edits 5] [--snippet snippets/<lesson>/<file>.py]
                                  [--broad-edits 1] [--open-page PATH/] [--serve-only]

1. Cold `mkdocs build --strict` of both languages into an empty folder, in a fresh process.
2. The same build with execution off (markdown-exec registered for no language, so executed
   blocks render as plain code; mkdocs-jupyter with `execute: false`; not --strict, since links
   to anchors that executed output defines break): on / off as a ratio, and the share of the
   build that executing blocks and notebooks takes.
3. `mkdocs serve` with the options `make serve` gives it (read from the Makefile: --strict,
   --livereload, --dirty) and its SERVE_LANG (one language, zh, unless --serve-lang says
   otherwise; --serve-lang "" builds both): append a print to a snippet that an executed block
   includes (--snippet, or the first one a Chinese page shows), then time until the page shows
   the new output and until MkDocs tells the browser to reload; median of --edits edits.
   MkDocs' log lines split each rebuild into its parts: waiting for the edits to settle, the
   default language, the others (static-i18n builds them one after the other, in the same
   rebuild). Then --broad-edits edits of snippets/core/formats.py, which most lessons import:
   a save there rebuilds every page that can show it (scripts/coursesite/serve_rebuild.py), the page
   open in a browser first. A tab (tests/livereload_tab.py, the requests MkDocs' live-reload
   script sends) shows that page (--open-page, or the page of the snippet edits): timed until
   it has reloaded, and until every page is rebuilt.

Prints a Markdown table; nothing is timed by a test. The snippet is restored afterwards.
"""

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import adr_table
from bench_pages import cpu_model
from coursesite.livereload_tab import LiveReloadTab
from coursesite.pipeline import STAGES
from coursesite.syntax import INCLUDE_LINE, executed_fences

ROOT = Path(__file__).resolve().parent.parent
# --adr writes the report into this ADR's block (scripts/adr_table.py)
ADR, ADR_BLOCK = "0014-serve-rebuilds", "build"

MKDOCS = [sys.executable, "-m", "mkdocs"]
# unbuffered: serve's log lines must arrive when written, they time the parts of a rebuild
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONUNBUFFERED": "1"}
WITHOUT_RUN_IN_BROWSER = [stage for stage in STAGES if stage != "run_in_browser"]
# mkdocs.yml text -> the same with execution off; each must occur exactly once
BLOCKS_OFF = {
    "  - markdown-exec:\n      languages: [python]": "  - markdown-exec:\n      languages: []",
    # its button wraps markdown-exec's python fence, which no longer exists
    "hooks:\n": f"extra:\n  pipeline_stages: [{', '.join(WITHOUT_RUN_IN_BROWSER)}]\nhooks:\n",
}
NOTEBOOKS_OFF = {"      execute: true": "      execute: false"}
SERVE_TIMEOUT_S = 300
BROAD_SNIPPET = ROOT / "snippets" / "core" / "formats.py"  # imported by most lessons


def make_serve_args() -> list[str]:
    """The options `make serve` passes to `mkdocs serve`, as the Makefile writes them."""
    found = re.search(r"/mkdocs serve ([^\n]*)", (ROOT / "Makefile").read_text(encoding="utf-8"))
    if found is None:
        sys.exit(f"Makefile: no `mkdocs serve` command; update {__file__}")
    return found[1].split()


def timed_build(config: Path, strict: bool = True) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-build-") as site:
        start = time.perf_counter()
        proc = subprocess.run(
            [*MKDOCS, "build", *(["--strict"] * strict), "-f", str(config), "-d", site],
            cwd=ROOT,
            env=ENV,
            capture_output=True,
            text=True,
        )
        elapsed = time.perf_counter() - start
    if proc.returncode:
        sys.exit(f"mkdocs build -f {config.name} failed:\n{proc.stdout}{proc.stderr}")
    return elapsed


@contextmanager
def config_without(changes: dict[str, str]) -> Iterator[Path]:
    """A copy of mkdocs.yml beside it (its paths are relative to its folder), with `changes`."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for before, after in changes.items():
        if text.count(before) != 1:
            sys.exit(f"mkdocs.yml: expected {before!r} once; update {__file__}")
        text = text.replace(before, after)
    path = ROOT / ".bench-build-no-execution.yml"
    path.write_text(text, encoding="utf-8")
    try:
        yield path
    finally:
        path.unlink()


@dataclass(frozen=True)
class Target:
    snippet: Path  # the file edited
    url_path: str  # the page that shows its output, relative to the site root


def find_target(snippet: Path | None = None) -> Target:
    """The first Chinese page with a text-output block that includes `snippet` (by default any
    snippet: the first such block of the first such page)."""
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if page.name.endswith(".en.md") or "includes" in page.parts:
            continue
        for block in executed_fences(page.read_text(encoding="utf-8")):
            if "result" not in block.options:
                continue
            for line in block.body.splitlines():
                if not (included := INCLUDE_LINE.match(line)):
                    continue
                path = ROOT / "snippets" / included[1]
                if path.is_file() and (snippet is None or path.resolve() == snippet.resolve()):
                    rel = page.relative_to(ROOT / "docs").with_suffix("")
                    url = "" if rel.name == "index" else f"{rel.as_posix()}/"
                    return Target(path, url)
    what = snippet if snippet is not None else "a snippet"
    sys.exit(f"no page has a result= block that includes {what}: nothing to edit")


class ServeLog:
    """mkdocs serve's output lines with the time each arrived."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            with self._lock:
                self.lines.append((time.perf_counter(), line.rstrip()))

    def last_between(self, since: float, until: float, pattern: str) -> float | None:
        with self._lock:
            found = [t for t, line in self.lines if since < t < until and re.search(pattern, line)]
        return found[-1] if found else None

    def between(self, since: float, until: float, pattern: str) -> list[str]:
        with self._lock:
            lines = list(self.lines)
        return [line for t, line in lines if since < t <= until and re.search(pattern, line)]

    def first_after(self, since: float, pattern: str) -> float | None:
        with self._lock:
            return next(
                (t for t, line in self.lines if t > since and re.search(pattern, line)), None
            )

    def wait_for(self, since: float, pattern: str, timeout_s: float = SERVE_TIMEOUT_S) -> float:
        deadline = time.perf_counter() + timeout_s
        while time.perf_counter() < deadline:
            if (found := self.first_after(since, pattern)) is not None:
                return found
            time.sleep(0.02)
        tail = "\n".join(line for _, line in self.lines[-30:])
        sys.exit(f"mkdocs serve: no line matching {pattern!r} after {timeout_s} s:\n{tail}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def page_text(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode("utf-8")
    except OSError:
        return ""


@dataclass(frozen=True)
class Edit:
    visible_s: float  # the served page shows the new output
    reload_s: float  # MkDocs tells the browser to reload ("Reloading browsers")
    settle_s: float  # edit -> the rebuild starts (MkDocs waits for edits to stop)
    default_lang_s: float  # rebuild start -> static-i18n starts the next language
    other_langs_s: float  # -> the rebuild is done
    pages: int  # pages the rebuild rendered (serve_rebuild.py's log line)


@dataclass(frozen=True)
class BroadEdit:
    shown_s: float  # edit -> the page open in the browser has reloaded with its rebuild
    done_s: float  # edit -> every page it reaches is rebuilt (serve_rebuild's second pass)
    first_pages: int  # pages rebuilt before the open page reloaded
    pages: int  # pages rebuilt in all


def rebuild_done(log: "ServeLog", since: float) -> tuple[float, float]:
    """(the first reload after `since`, the reload that ends the rebuild): serve_rebuild.py
    rebuilds the pages open in a browser first and the others in a second pass."""
    first = log.wait_for(since, r"Reloading browsers")
    deferred = log.between(since, first, r"serve_rebuild: after the open page reloads")
    return first, log.wait_for(first, r"Reloading browsers") if deferred else first


def broad_edit(log: "ServeLog", snippet: Path, n: int, tab: LiveReloadTab) -> BroadEdit:
    """Append a comment to a file most lessons import, with a browser tab open on a page that
    imports it: time until that tab has reloaded, and until every page is rebuilt."""
    original = snippet.read_text(encoding="utf-8")
    time.sleep(1.0)
    start = time.perf_counter()
    try:
        snippet.write_text(f"{original}\n# bench-edit {n}\n", encoding="utf-8")
        first, done = rebuild_done(log, start)
        while not (reloads := tab.reloads_since(start)):
            if time.perf_counter() - start > SERVE_TIMEOUT_S:
                sys.exit(f"{tab.url} did not reload after {SERVE_TIMEOUT_S} s")
            time.sleep(0.02)
    finally:
        snippet.write_text(original, encoding="utf-8")
    rebuild_done(log, done)  # the rebuild the restore starts
    return BroadEdit(
        reloads[0] - start,
        done - start,
        rebuilt_pages(log, start, first),
        rebuilt_pages(log, start, done),
    )


def rebuilt_pages(log: "ServeLog", start: float, reload: float) -> int:
    """How many pages serve_rebuild.py marked for the rebuild between `start` and `reload`."""
    lines = log.between(start, reload, r"serve_rebuild: .* rebuilding ")
    if any(line.endswith("rebuilding every page") for line in lines):
        # a file every page reads (serve_rebuild.needs_full_rebuild): no snippet edit to time
        sys.exit(f"the edit rebuilt every page, not the pages that show it: {lines[0]}")
    named = [line.split("rebuilding ", 1)[1] for line in lines]
    return sum(len(pages.split(", ")) for pages in named if pages != "no page")


def serve_edits(
    edits: int, lang: str, broad: int = 0, snippet: Path | None = None, open_page: str = ""
) -> tuple[Target, list[Edit], list[BroadEdit]]:
    """`lang`: the one language `make serve` builds (COURSE_ONLY_LANG, mkdocs.yml); "" for both.
    `snippet`: the file edited (find_target). Then `broad` edits of BROAD_SNIPPET, which most
    pages import, with a browser tab on `open_page` (default: the page the snippet edits
    showed)."""
    target = find_target(snippet)
    original = target.snippet.read_text(encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen(
        [*MKDOCS, "serve", *make_serve_args(), "-a", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env={**ENV, "COURSE_ONLY_LANG": lang} if lang else ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log = ServeLog(proc)
    url = f"http://127.0.0.1:{port}/{target.url_path}"
    results = []
    try:
        log.wait_for(0, r"Serving on")
        for n in range(edits):
            marker = f"bench-edit-{os.getpid()}-{n}"
            time.sleep(1.0)  # let the watcher settle after the previous rebuild
            start = time.perf_counter()
            target.snippet.write_text(f'{original}\nprint("{marker}")\n', encoding="utf-8")
            while marker not in page_text(url):
                if time.perf_counter() - start > SERVE_TIMEOUT_S:
                    sys.exit(f"{url} did not show the edit after {SERVE_TIMEOUT_S} s")
                time.sleep(0.02)
            visible = time.perf_counter()
            reload = log.wait_for(start, r"Reloading browsers")
            began = log.wait_for(start, r"Building documentation\.\.\.")
            # static-i18n logs "Building '<lang>' documentation" for each language; the last one
            # before the reload starts the last language
            other = log.last_between(began, reload, r"Building '\w+' documentation") or reload
            pages = rebuilt_pages(log, start, reload)
            results.append(
                Edit(
                    visible - start,
                    reload - start,
                    began - start,
                    other - began,
                    reload - other,
                    pages,
                )
            )
        restored = time.perf_counter()
        target.snippet.write_text(original, encoding="utf-8")
        log.wait_for(restored, r"Reloading browsers")
        # the author's browser, on the page the lesson edits showed or the one asked for
        tab = LiveReloadTab(f"http://127.0.0.1:{port}/{open_page}" if open_page else url)
        time.sleep(1.0)  # its poll is waiting
        try:
            broad_results = [broad_edit(log, BROAD_SNIPPET, n, tab) for n in range(broad)]
        finally:
            tab.close()
    finally:
        target.snippet.write_text(original, encoding="utf-8")
        proc.terminate()
        proc.wait(timeout=30)
    return target, results, broad_results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="builds of each kind (default 1)")
    parser.add_argument(
        "--edits", type=int, default=5, help="snippet edits under serve (default 5)"
    )
    parser.add_argument(
        "--serve-lang",
        default="zh",
        help='the language `make serve` builds (default zh, as SERVE_LANG); "" for both',
    )
    parser.add_argument(
        "--broad-edits",
        type=int,
        default=1,
        help="edits of snippets/core/formats.py, which most pages import (default 1)",
    )
    parser.add_argument("--serve-only", action="store_true", help="skip the cold builds")
    parser.add_argument(
        "--open-page",
        default="",
        help="the page a browser tab shows during the core edits, e.g. scheduling/load_testing/ "
        "(default: the page the snippet edits show)",
    )
    parser.add_argument(
        "--snippet",
        type=Path,
        help="the file the serve edits change, e.g. snippets/prefill_decode/kv_growth.py "
        "(default: the first snippet a Chinese page shows the text output of)",
    )
    adr_table.add_argument(parser, ADR, ADR_BLOCK)
    args = parser.parse_args()
    if (
        shutil.which("git")
        and subprocess.run(["git", "diff", "--quiet", "--", "snippets"], cwd=ROOT).returncode
    ):
        sys.exit(
            "snippets/ has uncommitted changes: commit or stash them (the serve loop edits one)"
        )

    def build(changes: dict[str, str]) -> float:
        if not changes:
            return statistics.median(timed_build(ROOT / "mkdocs.yml") for _ in range(args.runs))
        with config_without(changes) as config:
            # not strict: links to anchors that executed output defines break without it
            return statistics.median(timed_build(config, strict=False) for _ in range(args.runs))

    if not args.serve_only:
        on = build({})
        off = build(BLOCKS_OFF | NOTEBOOKS_OFF)
        no_blocks = build(BLOCKS_OFF)
        no_notebooks = build(NOTEBOOKS_OFF)
    open_page = args.open_page.strip("/") + "/" if args.open_page.strip("/") else ""
    target, edits, broad = serve_edits(
        args.edits, args.serve_lang, args.broad_edits, args.snippet, open_page
    )

    def median(field: str) -> float:
        return statistics.median(getattr(e, field) for e in edits)

    print(
        f"{os.cpu_count()} CPUs ({cpu_model()}), Python {sys.version.split()[0]}, "
        f"median of {args.runs} build(s) and {len(edits)} edits\n"
    )
    print("| measure | seconds | ratio |")
    print("|---|--:|--:|")
    if not args.serve_only:
        print_builds(on, off, no_blocks, no_notebooks)
    languages = f"{args.serve_lang} only" if args.serve_lang else "both languages"
    print(
        f"| `make serve` ({languages}): edit of {target.snippet.relative_to(ROOT)} → "
        f"/{target.url_path} shows it ({pages_rebuilt(median('pages'))}) "
        f"| {median('visible_s'):.1f} | ÷ 2 s target {median('visible_s') / 2:.2f} |"
    )
    print(f"| `make serve`: snippet edit → browser reload | {median('reload_s'):.1f} | |")
    # MkDocs polls the watched files every 0.5 s, then waits 0.1 s for the edits to stop
    print(f"|   of which: the watcher notices the edit | {median('settle_s'):.1f} | |")
    if args.serve_lang:
        rebuild = median("reload_s") - median("settle_s")
        print(f"|   of which: the rebuild (config, changed pages, post-build) | {rebuild:.1f} | |")
    else:  # static-i18n logs where the second language starts
        print(f"|   of which: first language (zh) | {median('default_lang_s'):.1f} | |")
        other = median("other_langs_s")
        print(f"|   of which: second language (en), static-i18n | {other:.1f} | |")
    if broad:
        shown = statistics.median(b.shown_s for b in broad)
        done = statistics.median(b.done_s for b in broad)
        first = statistics.median(b.first_pages for b in broad)
        pages = statistics.median(b.pages for b in broad)
        print(
            f"| `make serve`: edit of {BROAD_SNIPPET.relative_to(ROOT)} → "
            f"/{open_page or target.url_path} "
            f"(open in a browser) reloaded, rebuilt first ({first:.0f} of {pages:.0f} pages) "
            f"| {shown:.1f} | ÷ 2 s target {shown / 2:.2f} |"
        )
        print(
            f"| `make serve`: same edit → all {pages:.0f} pages rebuilt (the others after "
            f"the reload) | {done:.1f} | |"
        )


def pages_rebuilt(n: float) -> str:
    return f"{n:.0f} page{'' if n == 1 else 's'} rebuilt"


def print_builds(on: float, off: float, no_blocks: float, no_notebooks: float) -> None:
    print(f"| cold `mkdocs build --strict`, both languages | {on:.1f} | |")
    print(f"| same, execution off (blocks and notebooks) | {off:.1f} | on/off {on / off:.2f} |")
    print(f"| share of the build spent executing | | {(on - off) / on:.0%} |")
    print(
        f"|   of which: executed blocks (markdown-exec) | {on - no_blocks:.1f} | "
        f"{(on - no_blocks) / on:.0%} |"
    )
    print(
        f"|   of which: notebooks (mkdocs-jupyter) | {on - no_notebooks:.1f} | "
        f"{(on - no_notebooks) / on:.0%} |"
    )


if __name__ == "__main__":
    adr_table.run(main, ADR, ADR_BLOCK)
