"""Every formula is typeset at build time, so no page loads MathJax (docs/adr/0013).

pymdownx.arithmatex (`generic: true`) writes `<span class="arithmatex">\\(…\\)</span>` and
`<div class="arithmatex">\\[…\\]</div>`; nbconvert leaves `$…$` and `$$…$$` in a notebook's
Markdown cells. This stage hands each formula, after coursesite.values has filled `{{ … }}`, to
scripts/tex2svg.mjs (MathJax 4 in Node, one process per build, started only when a formula is
not in the cache) and puts the answer in its place: an `<mjx-container>` with the formula as SVG
paths in currentColor (dark mode follows the text colour) and MathJax's assistive MathML for
screen readers. MathJax's small stylesheet goes into the page's <head>. A TeX error fails the
build, naming the page and the formula. Answers are cached under .cache/math-svg/ by formula,
MathJax version and renderer script, so a rebuild under `mkdocs serve` rarely starts Node.
"""

import atexit
import hashlib
import html
import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from coursesite import Build, PageInfo, StageError

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "tex2svg.mjs"
MATHJAX_PACKAGE = ROOT / "node_modules" / "mathjax" / "package.json"
CACHE = ROOT / ".cache" / "math-svg"

ARITHMATEX = re.compile(r'<(?P<tag>span|div) class="arithmatex">(?P<tex>.*?)</(?P=tag)>', re.DOTALL)
# a rendered Markdown cell of a notebook (mkdocs-jupyter / nbconvert)
NOTEBOOK_MARKDOWN = re.compile(
    r'(<div class="[^"]*\bjp-RenderedMarkdown\b[^"]*"[^>]*>)(.*?)(</div>\s*</div>)', re.DOTALL
)
NOTEBOOK_TEX = re.compile(
    r"\$\$(?P<d1>.+?)\$\$|(?<![\\$])\$(?P<i1>[^$\s][^$]*?)\$|\\\((?P<i2>.+?)\\\)|\\\[(?P<d2>.+?)\\\]",
    re.DOTALL,
)
TAG = re.compile(r"(<[^>]+>)")
# tex2svg.mjs's fontCache "local": each formula defines its glyphs as <path id="MJX-<n>-<glyph>">
GLYPH_DEFS = re.compile(r'<defs>((?:<path id="MJX-\d+-[^"]+" d="[^"]*"></path>)+)</defs>')
GLYPH = re.compile(r'<path id="MJX-\d+-(?P<glyph>[^"]+)" d="(?P<d>[^"]*)"></path>')
GLYPH_USE = re.compile(r'xlink:href="#MJX-\d+-')
# the TeX of every node, for MathJax's menu and speech, which pages do not load
DATA_LATEX = re.compile(r' data-latex="[^"]*"')
BODY = re.compile(r"<body[^>]*>")
CODE_TAGS = ("code", "pre")


@dataclass(frozen=True)
class Formula:
    tex: str
    display: bool


def arithmatex_formula(tag: str, body: str) -> Formula:
    """The TeX of arithmatex's generic output, without its \\( \\) or \\[ \\] delimiters."""
    tex = html.unescape(body).strip()
    for opening, closing in (("\\(", "\\)"), ("\\[", "\\]")):
        if tex.startswith(opening) and tex.endswith(closing):
            tex = tex[len(opening) : -len(closing)]
            break
    return Formula(tex.strip(), tag == "div")


class Renderer:
    """scripts/tex2svg.mjs behind a cache; the Node process starts on the first cache miss."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None
        self.css = ""
        self.key = self._key()

    @staticmethod
    def _key() -> str:
        if not MATHJAX_PACKAGE.is_file():
            raise StageError(
                f"math_svg.py: {MATHJAX_PACKAGE} is missing: run `npm ci` (or `make assets`)"
            )
        version = json.loads(MATHJAX_PACKAGE.read_text(encoding="utf-8"))["version"]
        return hashlib.sha256(version.encode() + SCRIPT.read_bytes()).hexdigest()[:16]

    def _cached(self, name: str) -> Path:
        return CACHE / self.key / name

    def _start(self) -> subprocess.Popen[str]:
        if self.process is None:
            node = shutil.which("node")
            if node is None:
                raise StageError(
                    "math_svg.py typesets formulas with Node (scripts/tex2svg.mjs): "
                    "`node` is not on PATH; install Node >= 20"
                )
            self.process = subprocess.Popen(
                [node, str(SCRIPT)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                cwd=ROOT,
            )
            self.css = json.loads(self._read_line())["css"]
            self._cached("style.css").parent.mkdir(parents=True, exist_ok=True)
            self._cached("style.css").write_text(self.css, encoding="utf-8")
        return self.process

    def _read_line(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise StageError(f"math_svg.py: {SCRIPT.name} exited ({self.process.poll()})")
        return line

    def stylesheet(self) -> str:
        if not self.css:
            cached = self._cached("style.css")
            self.css = cached.read_text(encoding="utf-8") if cached.is_file() else ""
        if not self.css:
            self._start()
        return self.css

    def render(self, formula: Formula) -> str:
        digest = hashlib.sha256(f"{formula.display}\n{formula.tex}".encode()).hexdigest()
        cached = self._cached(f"{digest[:2]}/{digest}.html")
        if cached.is_file():
            return cached.read_text(encoding="utf-8")
        process = self._start()
        assert process.stdin is not None
        process.stdin.write(json.dumps({"tex": formula.tex, "display": formula.display}) + "\n")
        process.stdin.flush()
        answer = json.loads(self._read_line())
        if "error" in answer:
            raise ValueError(answer["error"])
        svg = DATA_LATEX.sub("", answer["html"])
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(svg, encoding="utf-8")
        return svg

    def close(self) -> None:
        if self.process is not None:
            if self.process.stdin is not None:
                self.process.stdin.close()
            self.process.wait(timeout=10)
            self.process = None


_renderer: list[Renderer] = []


def renderer() -> Renderer:
    if not _renderer:
        _renderer.append(Renderer())
        atexit.register(_renderer[0].close)
    return _renderer[0]


def typeset(formula: Formula, where: str) -> str:
    try:
        return renderer().render(formula)
    except ValueError as error:
        delimiters = ("\\[", "\\]") if formula.display else ("\\(", "\\)")
        raise StageError(
            f"{where}: TeX error in {delimiters[0]}{formula.tex}{delimiters[1]}: {error}"
        ) from None


def typeset_text(text: str, where: str) -> str:
    """$…$, $$…$$, \\(…\\) and \\[…\\] in a run of (HTML-escaped) text."""

    def one(match: re.Match[str]) -> str:
        display = match["d1"] is not None or match["d2"] is not None
        tex = html.unescape(next(g for g in match.groups() if g is not None)).strip()
        return f'<span class="arithmatex">{typeset(Formula(tex, display), where)}</span>'

    return NOTEBOOK_TEX.sub(one, text)


def typeset_notebook_markdown(cell: str, where: str) -> str:
    """TeX in the text of a rendered Markdown cell, never inside <code> or <pre>."""
    parts, inside_code = [], 0
    for part in TAG.split(cell):
        if TAG.fullmatch(part):
            name = part.strip("</>").split()[0].lower() if part.strip("</>") else ""
            if name in CODE_TAGS:
                inside_code += -1 if part.startswith("</") else 1
            parts.append(part)
        else:
            parts.append(part if inside_code else typeset_text(part, where))
    return "".join(parts)


def typeset_page(output: str, where: str) -> tuple[str, bool]:
    """The page with every formula typeset, and whether it had any."""
    found = False

    def arithmatex(match: re.Match[str]) -> str:
        nonlocal found
        found = True
        formula = arithmatex_formula(match["tag"], match["tex"])
        tag = match["tag"]
        return f'<{tag} class="arithmatex">{typeset(formula, where)}</{tag}>'

    def notebook(match: re.Match[str]) -> str:
        nonlocal found
        body = typeset_notebook_markdown(match[2], where)
        found = found or body != match[2]
        return match[1] + body + match[3]

    output = ARITHMATEX.sub(arithmatex, output)
    output = NOTEBOOK_MARKDOWN.sub(notebook, output)
    return (share_glyphs(output), True) if found else (output, False)


def share_glyphs(output: str) -> str:
    """Every glyph's path once per page, in one hidden <svg> after <body>, as MathJax's own
    "global" font cache does in a browser; each formula <use>s it. Formulas are rendered one by
    one (and cached), so each arrives with its own copy of its glyphs."""
    glyphs: dict[str, str] = {}

    def collect(match: re.Match[str]) -> str:
        for path in GLYPH.finditer(match[1]):
            glyphs.setdefault(path["glyph"], path["d"])
        return ""

    output = GLYPH_USE.sub('xlink:href="#MJX-glyph-', GLYPH_DEFS.sub(collect, output))
    if not glyphs:
        return output
    paths = "".join(f'<path id="MJX-glyph-{g}" d="{d}"></path>' for g, d in glyphs.items())
    cache = (
        '<svg id="MJX-SVG-global-cache" style="display: none" aria-hidden="true">'
        f"<defs>{paths}</defs></svg>"
    )
    body = BODY.search(output)
    if body is None:
        raise StageError("math_svg.py: a page with formulas has no <body>")
    return output[: body.end()] + cache + output[body.end() :]


def with_stylesheet(output: str, css: str) -> str:
    style = f'<style id="mathjax-svg-styles">{css}</style>\n  </head>'
    return output.replace("</head>", style, 1)


def typeset_formulas(output: str, page: PageInfo, build: Build) -> str:
    """A built page with its formulas as SVG, and MathJax's stylesheet if it has any."""
    output, found = typeset_page(output, page.src_uri)
    return with_stylesheet(output, renderer().stylesheet()) if found else output


def close(build: Build) -> None:
    """At the end of a build: Node exits."""
    if _renderer:
        _renderer[0].close()
