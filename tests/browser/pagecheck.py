"""Load one page in Chromium and record what a reader's browser sees: requests, errors, math,
diagrams, visible code output, the language switcher, accessibility and the layout on a phone."""

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Browser, ConsoleMessage, Page, Response
from playwright.sync_api import Error as PlaywrightError

from serve_site import DESKTOP, PHONE, RENDERED_JS

RENDER_TIMEOUT_MS = 20_000
DEFAULT_LANG = "zh"  # served at the site root
OTHER_LANGS = ("en",)  # served under /<lang>/
LOCAL_SCHEMES = {"data", "blob", "about"}
# diagrams in the served HTML: drawn at build time (div.mermaid with a declarative shadow root,
# coursesite.mermaid_svg) or left to the browser (pymdownx.superfences' <pre class="mermaid">)
MERMAID_IN_HTML = re.compile(r'<(?:pre|div) class="[^"]*\bmermaid\b')
# Where sideways scrolling is expected on a phone: code, tables, wide formulas and diagrams.
SCROLLS_INSIDE = "pre, table, .highlight, .md-typeset__scrollwrap, .arithmatex, .mermaid"

EXTRA_CSS = Path(__file__).resolve().parents[2] / "docs/stylesheets/extra.css"


def lazy_blocks_selector(css: str) -> str:
    """The selector of the rule that gives blocks `content-visibility: auto` (ADR-0013): the
    blocks the browser may skip while they are far from the viewport, read from the stylesheet so
    the checks follow it."""
    rule = re.search(
        r"([^{}]+)\{[^}]*content-visibility:\s*auto", re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    )
    if rule is None:
        raise AssertionError("extra.css has no content-visibility: auto rule")
    return " ".join(rule[1].split())


def eager_blocks_selector(css: str) -> str:
    """The selector of the blocks extra.css lays out at load on purpose: every rule that sets
    `content-visibility: visible` (the first screen, a run block whose code is folded)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules = re.findall(r"([^{}]+)\{[^}]*content-visibility:\s*visible", css)
    if not rules:
        raise AssertionError("extra.css lays out no block at load (content-visibility: visible)")
    return ", ".join(" ".join(selector.split()) for rule in rules for selector in rule.split(","))


def clipping_rules(css: str) -> list[str]:
    """The selectors of extra.css's rules that clip a block's content (`overflow: hidden`), so
    that a checker measuring a skipped block does not see its content spill (ADR-0017)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules = re.findall(r"([^{}]+)\{[^}]*(?<![-\w])overflow:\s*hidden", css)
    if not rules:
        raise AssertionError("extra.css clips no block's content (overflow: hidden)")
    return [" ".join(rule.split()) for rule in rules]


LAZY_BLOCKS = lazy_blocks_selector(EXTRA_CSS.read_text(encoding="utf-8"))
EAGER_BLOCKS = eager_blocks_selector(EXTRA_CSS.read_text(encoding="utf-8"))
# Every block laid out and extra.css's clipping undone (each rule again with the same selector,
# later, so a block's own overflow, e.g. a formula that scrolls sideways, is kept): the checks read
# each block as the reader sees it once scrolled to, and a block too wide for a phone shows.
LAY_OUT_EVERYTHING = f"{LAZY_BLOCKS} {{ content-visibility: visible !important; }}\n" + "\n".join(
    f"{selector} {{ overflow: visible; }}"
    for selector in clipping_rules(EXTRA_CSS.read_text(encoding="utf-8"))
)

DOM_JS = """() => {
  const formulas = [...document.querySelectorAll(".arithmatex")];
  const visible = [...document.querySelectorAll("pre")].filter(p => p.checkVisibility());
  const switcher = document.querySelectorAll(".md-header .md-select a[hreflang]");
  return {
    lang: document.documentElement.lang,
    formulas: formulas.length,
    unrendered: formulas.filter(f => f.querySelectorAll("mjx-container").length !== 1)
      .map(f => f.textContent.trim().slice(0, 80)),
    mathErrors: [...document.querySelectorAll("mjx-merror, [data-mjx-error]")]
      .map(e => e.getAttribute("data-mjx-error") || e.textContent.trim().slice(0, 80)),
    mermaidLeft: document.querySelectorAll("pre.mermaid").length,
    preText: visible.map(p => p.innerText).join("\\n"),
    switcher: Object.fromEntries([...switcher].map(a => [a.hreflang, a.href])),
    charts: [...document.querySelectorAll('.md-content svg[role="img"]')]
      .filter(s => s.checkVisibility() && s.getBoundingClientRect().width > 100).length,
  };
}"""

# One line per violated rule: its id, impact, and the first few offending elements.
AXE_JS = """async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => {
      const targets = v.nodes.map(n => n.target.join(" "));
      const more = targets.length > 3 ? `, … (${targets.length} elements)` : "";
      return `${v.id} (${v.impact}): ${targets.slice(0, 3).join(", ")}${more}`;
    });
}"""

# Which blocks the browser skipped at load (content-visibility: auto leaves a block's content
# undrawn until it nears the viewport; Chromium's margin is 150 % of the viewport), and the blocks
# more than three screens down whose content it drew anyway (but for those it draws on purpose), and
# the blocks it may skip that do not clip their content: a checker that measures a skipped block's
# content lays it out past the block's 4em placeholder, over what follows (axe took the footer's
# background for the text's), unless the block says it clips it.
LAZY_JS = """([lazyBlocks, eagerBlocks]) => {
  const blocks = [...document.querySelectorAll(lazyBlocks)].filter(b => b.firstElementChild);
  const drawn = b => b.firstElementChild.checkVisibility({ contentVisibilityAuto: true });
  return {
    notebook: !!document.querySelector(".jupyter-wrapper"),
    skipped: blocks.filter(b => !drawn(b)).length,
    drawnFar: blocks.filter(b => !b.matches(eagerBlocks))
      .filter(b => b.getBoundingClientRect().top > 3 * innerHeight && drawn(b))
      .map(b => b.tagName.toLowerCase() + "." + b.className),
    unclipped: blocks.filter(b => getComputedStyle(b).contentVisibility === "auto")
      .filter(b => getComputedStyle(b).overflowY === "visible")
      .map(b => b.tagName.toLowerCase() + "." + b.className),
  };
}"""

# Elements that stick out on the right of the viewport, outermost only, unless they are inside a
# box that scrolls or clips them (code, tables, the off-canvas navigation drawer).
WIDE_JS = """(scrollsInside) => {
  const vw = document.documentElement.clientWidth;
  const clipped = el => {
    for (let a = el.parentElement; a; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== "visible" && a.getBoundingClientRect().right <= vw + 1)
        return true;
    }
    return false;
  };
  const wide = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= vw + 1 || el.closest(scrollsInside)) continue;
    if (wide.some(w => w.contains(el)) || clipped(el)) continue;
    wide.push(el);
  }
  const describe = el => `<${el.tagName.toLowerCase()}${el.id ? " id=" + el.id : ""}` +
    `${el.className && typeof el.className === "string" ? ' class="' + el.className + '"' : ""}>` +
    ` right edge ${Math.round(el.getBoundingClientRect().right)} px:` +
    ` ${(el.innerText || "").trim().slice(0, 60)}`;
  return {
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: vw,
    wide: wide.map(describe),
  };
}"""


@dataclass
class PageReport:
    url: str
    requests: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # "URL (reason)"
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the page did not load or render
    lang: str = ""
    formulas: int = 0  # .arithmatex elements, one formula each
    unrendered_formulas: list[str] = field(default_factory=list)
    math_errors: list[str] = field(default_factory=list)
    mermaid_in_html: int = 0  # diagrams in the served HTML, drawn or not
    mermaid_left: int = 0  # <pre class="mermaid"> still in the DOM after rendering
    mermaid_svgs: int = 0  # div.mermaid whose (closed) shadow root holds an <svg>
    mermaid_errors: int = 0  # Mermaid's "Syntax error" diagrams
    pre_text: str = ""  # text of the visible <pre> elements
    charts: int = 0  # visible inline <svg role="img"> in the content, e.g. build-time charts
    switcher: dict[str, str] = field(default_factory=dict)  # hreflang -> absolute URL
    axe_violations: list[str] = field(default_factory=list)
    phone_scroll_width: int = 0
    phone_client_width: int = 0
    phone_wide_elements: list[str] = field(default_factory=list)
    notebook: bool = False  # a page converted from a notebook (mkdocs-jupyter)
    skipped_blocks: int = 0  # blocks of the article left undrawn at load
    far_blocks_drawn: list[str] = field(default_factory=list)  # three screens down, drawn at load
    unclipped_lazy_blocks: list[str] = field(default_factory=list)  # may be skipped, do not clip

    def external_requests(self) -> list[str]:
        """Requests to any host but the one that served the page."""
        origin = urlsplit(self.url).netloc
        return [
            u
            for u in self.requests
            if urlsplit(u).scheme not in LOCAL_SCHEMES and urlsplit(u).netloc != origin
        ]


def visit(browser: Browser, url: str, axe_source: str | None = None) -> PageReport:
    """Load `url` in a fresh context at desktop width, then look at it at phone width."""
    report = PageReport(url)

    def on_response(response: Response) -> None:
        if response.status >= 400:
            report.failed.append(f"{response.url} (HTTP {response.status})")

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            report.console_errors.append(f"{message.text} [{message.location.get('url')}]")

    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    context.on("request", lambda request: report.requests.append(request.url))
    context.on("requestfailed", lambda r: report.failed.append(f"{r.url} ({r.failure})"))
    context.on("response", on_response)  # pages and workers (the search index is a worker's)
    page = context.new_page()
    page.on("console", on_console)
    page.on("pageerror", lambda error: report.page_errors.append(str(error)))
    try:
        response = page.goto(url)
        html = response.text() if response else ""
        report.mermaid_in_html = len(MERMAID_IN_HTML.findall(html))
        if page.evaluate(RENDERED_JS, RENDER_TIMEOUT_MS) is None:
            report.problems.append(f"math or diagrams not rendered after {RENDER_TIMEOUT_MS} ms")
        lazy = page.evaluate(LAZY_JS, [LAZY_BLOCKS, EAGER_BLOCKS])
        report.notebook, report.skipped_blocks = lazy["notebook"], lazy["skipped"]
        report.far_blocks_drawn = lazy["drawnFar"]
        report.unclipped_lazy_blocks = lazy["unclipped"]
        # extra.css lets the browser skip laying out blocks far from the viewport until the
        # reader scrolls near them; the checks below read every block as the reader then sees it
        page.add_style_tag(content=LAY_OUT_EVERYTHING)
        _read_dom(page, report)
        _read_mermaid_shadow_roots(page, report)
        if axe_source is not None:
            page.add_script_tag(content=axe_source)
            report.axe_violations = page.evaluate(AXE_JS)
        page.set_viewport_size(PHONE)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
        wide = page.evaluate(WIDE_JS, SCROLLS_INSIDE)
        report.phone_scroll_width = wide["scrollWidth"]
        report.phone_client_width = wide["clientWidth"]
        report.phone_wide_elements = wide["wide"]
        page.wait_for_load_state("networkidle")  # late requests (search index, fonts) are in
    except Exception as error:  # reported for this page; the other pages still run
        report.problems.append(f"{type(error).__name__}: {error}")
    finally:
        context.close()
    return report


def _read_dom(page: Page, report: PageReport) -> None:
    dom = page.evaluate(DOM_JS)
    report.lang = dom["lang"]
    report.formulas = dom["formulas"]
    report.unrendered_formulas = dom["unrendered"]
    report.math_errors = dom["mathErrors"]
    report.mermaid_left = dom["mermaidLeft"]
    report.pre_text = dom["preText"]
    report.switcher = dom["switcher"]
    report.charts = dom["charts"]


def _read_mermaid_shadow_roots(page: Page, report: PageReport) -> None:
    """Mermaid's SVG sits in a shadow root (closed when Material draws it in the browser): only
    CDP's pierced DOM shows it."""
    cdp = page.context.new_cdp_session(page)
    root = cdp.send("DOM.getDocument", {"depth": -1, "pierce": True})["root"]
    cdp.detach()
    for node in _walk(root):
        if node.get("nodeName") != "DIV" or "mermaid" not in _attrs(node).get("class", "").split():
            continue
        svgs = [
            n
            for shadow in node.get("shadowRoots", [])
            for n in _walk(shadow)
            if n.get("nodeName", "").lower() == "svg"
        ]
        report.mermaid_svgs += bool(svgs)
        report.mermaid_errors += any(_attrs(s).get("aria-roledescription") == "error" for s in svgs)


def _attrs(node: dict) -> dict[str, str]:
    flat = node.get("attributes", [])  # CDP lists attributes as [name, value, name, value, ...]
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _walk(node: dict) -> Iterator[dict]:
    yield node
    for child in (
        node.get("children", []) + node.get("shadowRoots", []) + [node.get("contentDocument")]
    ):
        if child:
            yield from _walk(child)


def lang_of(path: str) -> str:
    """The page's language: "en/glossary/" -> "en", "glossary/" -> "zh"."""
    first = path.split("/", 1)[0]
    return first if first in OTHER_LANGS else DEFAULT_LANG


def unprefixed(path: str) -> str:
    """The page's path within its language: "en/glossary/" -> "glossary/"."""
    lang = lang_of(path)
    return path if lang == DEFAULT_LANG else path.removeprefix(f"{lang}/")


def counterpart(path: str, lang: str) -> str:
    """The same page in `lang`: ("glossary/", "en") -> "en/glossary/" and back."""
    return unprefixed(path) if lang == DEFAULT_LANG else f"{lang}/{unprefixed(path)}"


def language_round_trips(browser: Browser, urls: list[str], lang: str) -> dict[str, list[str]]:
    """For each URL: pick `lang` in the header's language menu, then the page's own language on
    the page it led to; returns the URLs visited (or the error). Clicks wait for DOMContentLoaded,
    so Material's own handling of language links is in place. MathJax and Mermaid are not
    loaded: the menu needs neither, and without them each step takes a fraction of a second."""
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(RENDER_TIMEOUT_MS)
    context.route("**/assets/vendor/**", lambda route: route.abort())
    page = context.new_page()
    trips: dict[str, list[str]] = {}
    try:
        for url in urls:
            trips[url] = []
            try:
                page.goto(url, wait_until="domcontentloaded")
                own = page.evaluate("document.documentElement.lang")
                trips[url].append(_pick_language(page, lang, "domcontentloaded"))
                trips[url].append(_pick_language(page, own, "commit"))
            except (PlaywrightError, AssertionError) as error:
                trips[url].append(f"failed: {str(error).splitlines()[0]}")
    finally:
        context.close()
    return trips


def _pick_language(page: Page, lang: str, wait_until: str) -> str:
    menu = page.locator(".md-header .md-select").bounding_box()
    assert menu, f"{page.url} has no language menu"
    page.mouse.move(menu["x"] + menu["width"] / 2, menu["y"] + menu["height"] / 2)  # opens it
    with page.expect_navigation(wait_until=wait_until):
        page.click(f'.md-header .md-select a[hreflang="{lang}"]')
    return page.url
