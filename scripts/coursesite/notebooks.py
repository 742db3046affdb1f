"""Notebooks: .ipynb files stay pages, so mkdocs-jupyter renders them in both languages.

mkdocs-jupyter marks notebooks as pages by wrapping them in its own File class in `on_files`.
mkdocs-static-i18n runs after it and re-creates every file as a plain `File`, which counts only
Markdown as a page: the notebook becomes an asset, its page is the raw JSON, and `--strict` still
passes (upstream issue ultrabug/mkdocs-static-i18n#198). MkDocs decides what a page is from
`mkdocs.utils.markdown_extensions`; adding ".ipynb" there makes every File that either plugin
creates a page, with a directory URL and a language alternate like any Markdown page.
mkdocs-jupyter then renders it (its `include` in mkdocs.yml limits it to *.ipynb).

The kernel that executes the notebooks prints "WARNING | Kernel is running over TCP without
encryption" unless its manager provisions CurveZMQ keys; an nbconvert config turns that on, so a
build's output holds no warning that is not ours.

nbconvert's template inlines all of JupyterLab's stylesheet (about 0.56 MiB) into a notebook's
page, for every widget JupyterLab has; Chromium matches each element of the page against every
rule of it, which made the notebook page the slowest of the site (scripts/bench_pages.py). The
page keeps only the rules that can match it: PurgeCSS (npm, package.json) removes the rules
whose selectors name a class, id or element the page's HTML does not have, the keyframes and
font faces no kept rule uses, and the custom properties (JupyterLab's theme declares about 560 on
the wrapper, which every cell inherits) that no kept rule reads, directly or through another
property: 133 KB of stylesheet became 16 KB on the playground. Dark mode's rules stay because
Material's palette toggle in the page names the slate scheme. PurgeCSS drops unused properties
file by file, before it reads the next file, so JupyterLab's sheets go to it as one file, split
again by marker comments, and the properties the page's other stylesheets read (Pygments' code
colours, `var(--jp-mirror-editor-…)`) are named in one more rule of that file (a property read
only there was dropped before, and code lost its colours in dark mode). Material's stylesheets
read none of the names JupyterLab's sheets declare. The result is cached under
.cache/notebook-css/ by PurgeCSS version, stylesheet and page.

mkdocs-jupyter gives a notebook's headings ids of its own making: ASCII letters of the heading's
text, so a Chinese heading gets `id=""` and an anchor link to "#". The table of contents beside it
is Python-Markdown's, which numbers such headings `_1`, `_2`, ...; its links led nowhere on the
Chinese playground. Each heading takes the anchor of its table-of-contents entry (`heading_ids`),
and its anchor link becomes Material's permalink (`class="headerlink"`): Material's search leaves
only that class out of a section's title, so each notebook heading was found as "Setup¶".

The template also writes two loaders this site does not use, and both are removed: MathJax 2's
(an empty `<script src="">` and its configuration; the formulas of Markdown cells are SVG from
math_svg like every page's) and Mermaid's, a module that would import Mermaid from cdnjs for a
notebook's Mermaid cells. A notebook with a Mermaid cell fails the build instead: its diagram
could not be drawn without another host (draw it on a Markdown page).
"""

import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import mkdocs.utils
import zmq
from markdown.extensions.toc import TocExtension

from coursesite import Build, PageInfo, StageError

NOTEBOOK = ".ipynb"
ROOT = Path(__file__).resolve().parents[2]
PURGECSS = ROOT / "node_modules" / "purgecss"
CACHE = ROOT / ".cache" / "notebook-css"
STYLE = re.compile(r"(<style[^>]*>)(.*?)(</style>)", re.DOTALL)
# what marks nbconvert's inline stylesheets for JupyterLab's widgets (scoped under it)
JUPYTER_CSS = ".jupyter-wrapper"
# also removed: keyframes, font faces and custom properties no kept rule uses
PURGE_OPTIONS = ("--keyframes", "--font-face", "--variables")
# between the sheets in PurgeCSS's one input file ("/*!" comments are kept)
SHEET_MARKER = "/*! notebooks.py: next sheet */"
VAR_READ = re.compile(r"var\(\s*(--[\w-]+)")
# nbconvert's MathJax 2 loader (no URL: mkdocs-jupyter sets none) and its configuration
MATHJAX2_LOADER = re.compile(
    r'<!-- Load mathjax -->\s*<script src=""> </script>\s*<!-- MathJax configuration -->\s*'
    r'<script type="text/x-mathjax-config">.*?</script>\s*',
    re.DOTALL,
)
# nbconvert's Mermaid loader: returns at once unless the page has a Mermaid cell
MERMAID_LOADER = re.compile(
    r'<script type="module">\s*document\.addEventListener\("DOMContentLoaded", async \(\) => \{'
    r'\s*const diagrams = document\.querySelectorAll\("\.jp-Mermaid.*?</script>\s*',
    re.DOTALL,
)
MERMAID_CELL = 'class="jp-Mermaid'
# a heading as nbconvert writes it, up to its closing tag (its anchor link inside)
HEADING = re.compile(r'<(?P<tag>h[1-6]) id="(?P<id>[^"]*)">(?P<inner>.*?)(?=</h[1-6]>)', re.DOTALL)
# the title a Markdown page's permalinks get (mkdocs.yml sets no permalink_title for toc)
PERMALINK_TITLE = TocExtension().getConfig("permalink_title")
ANCHOR_LINK = re.compile(r'<a class="anchor-link" href="#[^"]*"')
ANCHOR_LINK_WHOLE = re.compile(
    r'<a class="(?:anchor-link|headerlink)" href="[^"]*">.*?</a>', re.DOTALL
)
_jupyter_config = tempfile.TemporaryDirectory(prefix="nbconvert-config-")


def keep_notebooks_pages() -> None:
    """.ipynb counts as a page for MkDocs, and the kernel's connection is encrypted."""
    if NOTEBOOK not in mkdocs.utils.markdown_extensions:
        mkdocs.utils.markdown_extensions = (*mkdocs.utils.markdown_extensions, NOTEBOOK)
    paths = os.environ.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep)
    if zmq.has("curve") and _jupyter_config.name not in paths:
        settings = {"KernelManager": {"transport_encryption": "auto"}}
        with open(os.path.join(_jupyter_config.name, "jupyter_nbconvert_config.json"), "w") as f:
            json.dump(settings, f)
        os.environ["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
            [_jupyter_config.name, *filter(None, paths)]
        )


def heading_ids(content: str, page: PageInfo, build: Build) -> str:
    """A notebook page's headings with the ids its table of contents links to (see the module
    docstring), matched by their text in reading order. A heading of the table of contents that
    the page does not have, or one left without an id, fails the build."""
    if not page.src_uri.endswith(NOTEBOOK):
        return content
    pieces, end = [], 0
    for anchor, title in page.toc:
        heading = next(
            (
                h
                for h in HEADING.finditer(content, end)
                if _heading_text(h["inner"]) == html.unescape(title)
            ),
            None,
        )
        if heading is None:
            raise StageError(
                f"notebooks.py (docs/{page.src_uri}): the table of contents lists a heading "
                f"{title!r} that the rendered notebook does not have"
            )
        inner = ANCHOR_LINK.sub(
            f'<a class="headerlink" href="#{anchor}" title="{PERMALINK_TITLE}"', heading["inner"]
        )
        pieces += [content[end : heading.start()], f'<{heading["tag"]} id="{anchor}">{inner}']
        end = heading.end()
    content = "".join(pieces) + content[end:]
    if nameless := [_heading_text(h["inner"]) for h in HEADING.finditer(content) if not h["id"]]:
        raise StageError(
            f"notebooks.py (docs/{page.src_uri}): headings the table of contents does not list "
            f"are left without an id: {nameless}"
        )
    return content


def _heading_text(inner: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", ANCHOR_LINK_WHOLE.sub("", inner))).strip()


def trim(output: str, page: PageInfo, build: Build) -> str:
    """A notebook page without the loaders it does not use, its stylesheet cut to its rules."""
    if not page.src_uri.endswith(NOTEBOOK):
        return output
    return trim_notebook_css(without_loaders(output, page.src_uri), page.src_uri)


def without_loaders(output: str, name: str) -> str:
    """The page without nbconvert's MathJax 2 and Mermaid loaders (see the module docstring)."""
    if MERMAID_CELL in output:
        raise StageError(
            f"notebooks.py ({name}): a Mermaid cell; its diagram would need Mermaid from another "
            "host. Draw it on a Markdown page (```mermaid), which the build renders"
        )
    output, mathjax = MATHJAX2_LOADER.subn("", output)
    output, mermaid = MERMAID_LOADER.subn("", output)
    if (mathjax, mermaid) != (1, 1):
        raise StageError(
            f"notebooks.py ({name}): found {mathjax} MathJax 2 and {mermaid} Mermaid loaders "
            "where nbconvert's template writes one each; the template changed, update the patterns"
        )
    return output


def trim_notebook_css(output: str, name: str) -> str:
    """The page with each of nbconvert's JupyterLab stylesheets cut to the rules it can use."""
    sheets = [m for m in STYLE.finditer(output) if JUPYTER_CSS in m.group(2)]
    if not sheets:
        return output
    # the page without its stylesheets: their own selectors must not count as used
    content = STYLE.sub(r"\1\3", output)
    others = [m.group(2) for m in STYLE.finditer(output) if JUPYTER_CSS not in m.group(2)]
    read_elsewhere = sorted({v for css in others for v in VAR_READ.findall(css)})
    trimmed = purge([m.group(2) for m in sheets], content, name, read_elsewhere)
    pieces, end = [], 0
    for match, css in zip(sheets, trimmed, strict=True):
        pieces += [output[end : match.start(2)], css]
        end = match.end(2)
    return "".join(pieces) + output[end:]


def purge(
    sheets: list[str], content: str, name: str, read_elsewhere: Sequence[str] = ()
) -> list[str]:
    """PurgeCSS over `content`, one answer per stylesheet, cached; the custom properties in
    `read_elsewhere` are kept if declared (the page's other stylesheets read them)."""
    package = PURGECSS / "package.json"
    if not package.is_file():
        raise StageError(f"notebooks.py ({name}): {PURGECSS} is missing: run `npm ci`")
    version = json.loads(package.read_text(encoding="utf-8"))["version"]
    key = hashlib.sha256(
        "\0".join([version, *PURGE_OPTIONS, content, *sheets, *read_elsewhere]).encode()
    ).hexdigest()[:24]
    cached = [CACHE / key / f"{i}.css" for i in range(len(sheets))]
    if all(path.is_file() for path in cached):
        return [path.read_text(encoding="utf-8") for path in cached]
    node = shutil.which("node")
    if node is None:
        raise StageError(f"notebooks.py ({name}): PurgeCSS needs `node` on PATH (Node >= 20)")
    with tempfile.TemporaryDirectory(prefix="notebook-css-") as tmp:
        work = Path(tmp)
        (work / "page.html").write_text(content, encoding="utf-8")
        # one file: PurgeCSS drops a custom property before it reads the next file (module doc);
        # the last part reads the properties other stylesheets use (`html` is on every page)
        reads = " ".join(f"var({v})" for v in read_elsewhere)
        parts = [*sheets, f"html{{content:{reads}}}" if reads else ""]
        (work / "sheets.css").write_text(SHEET_MARKER.join(parts), encoding="utf-8")
        out = work / "out"
        proc = subprocess.run(
            [
                node,
                str(PURGECSS / "bin" / "purgecss.js"),
                "--css",
                str(work / "sheets.css"),
                "--content",
                str(work / "page.html"),
                *PURGE_OPTIONS,
                "--output",
                str(out),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if proc.returncode:
            raise StageError(f"notebooks.py ({name}): PurgeCSS failed:\n{proc.stderr}")
        pieces = (out / "sheets.css").read_text(encoding="utf-8").split(SHEET_MARKER)
        if len(pieces) != len(parts):
            raise StageError(f"notebooks.py ({name}): PurgeCSS dropped a sheet marker comment")
        trimmed = pieces[: len(sheets)]
    for path, css in zip(cached, trimmed, strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(css, encoding="utf-8")
    return trimmed
