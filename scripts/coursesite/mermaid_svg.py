"""Mermaid diagrams drawn to SVG at build time, so no page loads Mermaid (ADR-0013).

Mermaid lays a diagram out with the browser's text measurement, so it cannot run in Node alone.
This stage draws each `<pre class="mermaid">` the way Material's own JavaScript would in the
reader's browser, but once, in Debian's headless Chromium driven by Playwright: the npm package's
`mermaid.min.js`, Material's CSS, and Material's own Mermaid settings (its `themeCSS`, read from
Material's bundle, which colours diagrams with `--md-mermaid-*` variables, so dark mode still
works). The SVG goes into the page inside a declarative shadow root, where Material puts it too.

Drawings are cached under .cache/mermaid-svg/ by diagram source, Mermaid's version and Material's
settings; Chromium starts only on a cache miss. Without Chromium (an author's machine without
it), the diagrams stay `<pre class="mermaid">`, page_assets keeps Mermaid's script on those
pages and the reader's browser draws them as before; the build says so once. A diagram Mermaid
cannot parse fails the build, naming the page.
"""

import atexit
import contextlib
import hashlib
import html
import json
import logging
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import material

from coursesite import Build, PageInfo, StageError

ROOT = Path(__file__).resolve().parents[2]
MERMAID_DIST = ROOT / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
MERMAID_PACKAGE = ROOT / "node_modules" / "mermaid" / "package.json"
MATERIAL_ASSETS = Path(material.__file__).parent / "templates" / "assets"
CACHE = ROOT / ".cache" / "mermaid-svg"
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]

PRE = re.compile(r'<pre class="mermaid"><code>(?P<source>.*?)</code></pre>', re.DOTALL)
# Material's Mermaid stylesheet is a string literal in its bundle that uses --md-mermaid-* variables
THEME_CSS = re.compile(r'"((?:[^"\\\n]|\\.)*?--md-mermaid-(?:[^"\\\n]|\\.)*)"')
# Material 9.x's call: mermaid.initialize({startOnLoad: false, themeCSS, sequence: {...}})
SEQUENCE = {"actorFontSize": "16px", "messageFontSize": "16px", "noteFontSize": "16px"}
RENDER_JS = """async ([id, source]) => {
  try { return { svg: (await mermaid.render(id, source)).svg }; }
  catch (error) {
    document.getElementById("d" + id)?.remove();  // Mermaid's leftover error drawing
    return { error: String(error?.message ?? error) };
  }
}"""

log = logging.getLogger("mkdocs.hooks.mermaid_svg")


def material_theme_css() -> str:
    bundles = sorted((MATERIAL_ASSETS / "javascripts").glob("bundle.*.min.js"))
    if not bundles:
        raise StageError(f"mermaid_svg.py: no bundle.*.min.js under {MATERIAL_ASSETS}")
    match = THEME_CSS.search(bundles[0].read_text(encoding="utf-8"))
    if match is None:
        raise StageError(
            f"mermaid_svg.py: Material's Mermaid themeCSS not found in {bundles[0].name}; "
            "Material changed how it draws diagrams: update THEME_CSS in "
            "scripts/coursesite/mermaid_svg.py"
        )
    return json.loads(f'"{match[1]}"')


def shadowed(svg: str) -> str:
    """The drawing as Material places it: a div.mermaid whose shadow root holds the SVG."""
    return f'<div class="mermaid"><template shadowrootmode="open">{svg}</template></div>'


class Drawer:
    """Chromium with Mermaid loaded behind a cache; Chromium starts on the first cache miss.

    Playwright's sync API refuses to start in a thread whose asyncio loop is running (a test
    session that already drives a browser, a server's thread), so every Playwright call runs in
    one worker thread of its own; its objects never leave that thread.
    """

    def __init__(self) -> None:
        if not MERMAID_PACKAGE.is_file():
            raise StageError(f"mermaid_svg.py: {MERMAID_PACKAGE} is missing: run `npm ci`")
        self.theme_css = material_theme_css()
        version = json.loads(MERMAID_PACKAGE.read_text(encoding="utf-8"))["version"]
        key = version + self.theme_css + Path(__file__).read_text(encoding="utf-8")
        self.key = hashlib.sha256(key.encode()).hexdigest()[:16]
        self.playwright: Any = None
        self.browser: Any = None
        self.page: Any = None
        self.worker: ThreadPoolExecutor | None = None
        self.available = CHROMIUM.exists()
        if not self.available:
            log.info(
                "%s not found: Mermaid diagrams are left to the reader's browser "
                "(set CHROMIUM to a Chromium binary to draw them at build time)",
                CHROMIUM,
            )

    def _start(self) -> Any:
        if self.page is None:
            from playwright.sync_api import sync_playwright

            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
            )
            self.page = self.browser.new_page(viewport={"width": 1280, "height": 800})
            self.page.set_content('<html><body class="md-typeset"></body></html>')
            for css in sorted((MATERIAL_ASSETS / "stylesheets").glob("*.min.css")):
                self.page.add_style_tag(path=str(css))
            self.page.add_script_tag(path=str(MERMAID_DIST))
            self.page.evaluate(
                "([themeCSS, sequence]) => mermaid.initialize("
                "{startOnLoad: false, themeCSS, sequence})",
                [self.theme_css, SEQUENCE],
            )
        return self.page

    def draw(self, source: str) -> str | None:
        """The diagram's SVG, or None without Chromium; ValueError if Mermaid rejects it."""
        digest = hashlib.sha256(source.encode()).hexdigest()
        cached = CACHE / self.key / f"{digest}.svg"
        if cached.is_file():
            return cached.read_text(encoding="utf-8")
        if not self.available:
            return None
        if self.worker is None:
            self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mermaid-svg")
        args = [f"mermaid-{digest[:12]}", source]
        answer = self.worker.submit(lambda: self._start().evaluate(RENDER_JS, args)).result()
        if "error" in answer:
            raise ValueError(answer["error"])
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(answer["svg"], encoding="utf-8")
        return answer["svg"]

    def _stop(self) -> None:
        if self.browser is not None:
            self.browser.close()
            self.playwright.stop()
        self.playwright = self.browser = self.page = None

    def close(self) -> None:
        if self.worker is not None:
            # at interpreter exit concurrent.futures has already stopped its threads; Playwright's
            # driver (and the browser with it) then exits when its pipe closes
            with contextlib.suppress(RuntimeError):
                self.worker.submit(self._stop).result()
            self.worker.shutdown()
            self.worker = None


_drawer: list[Drawer] = []


def drawer() -> Drawer:
    if not _drawer:
        _drawer.append(Drawer())
        atexit.register(_drawer[0].close)
    return _drawer[0]


def draw_page(output: str, where: str) -> str:
    def one(match: re.Match[str]) -> str:
        source = html.unescape(match["source"])
        try:
            svg = drawer().draw(source)
        except ValueError as error:
            first = source.strip().splitlines()[0] if source.strip() else ""
            raise StageError(f"{where}: Mermaid diagram '{first}…' is invalid: {error}") from None
        return match[0] if svg is None else shadowed(svg)

    return PRE.sub(one, output)


def draw_diagrams(output: str, page: PageInfo, build: Build) -> str:
    return draw_page(output, page.src_uri)


def close(build: Build) -> None:
    """At the end of a build: Chromium exits."""
    if _drawer:
        _drawer[0].close()
