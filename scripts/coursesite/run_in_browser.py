"""A "Run in browser" button on every executed Python block (docs/adr/0011).

markdown-exec runs each `python exec="on"` block at build time. This stage wraps its fence
formatter: the block's HTML is unchanged, and gets a button above it. The button carries only
the name of a file written into the site, `assets/run/<sha>.py`, holding the exact code the
build ran (snippets expanded, `# markdown-exec: hide` lines included). Nothing else loads until
the reader clicks: the click imports docs/javascripts/run-in-browser.js, which loads Pyodide
(self-hosted, assets/vendor/pyodide/ from npm) and mounts `assets/run/course.zip`, an archive of
snippets/ (and recorded lab results) built here from the same files the build imported.

A block whose imports (followed through the course's own modules) need a package that is neither
in the standard library nor in snippets/ gets a note instead of the button, in the page's language.

A page that needs a form of its own (the playground) says so with a marker naming the module
that writes it, `<div data-run-form="playground.form"></div>`; the module's `form_html(lang,
runner_url)` replaces the marker. The stage knows no lesson: it imports whatever module is named.
"""

import ast
import hashlib
import html
import importlib
import re
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mkdocs.utils import get_relative_url

from coursesite import Build, PageInfo, StageError

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "snippets"
LAB_RESULTS = ROOT / "labs" / "results"  # read by core/lab_results.py
RUN_DIR = "assets/run"  # in the site: the course archive and one file per block
ARCHIVE = "course.zip"
RUNNER = "javascripts/run-in-browser.js"
SKIPPED_PARTS = {"__pycache__", "build"}
# Standard-library modules that Pyodide leaves out (it has no terminal, GUI or subprocesses).
NOT_IN_PYODIDE = {"curses", "dbm", "ensurepip", "idlelib", "readline", "tkinter", "turtle", "venv"}
LABELS = {
    "zh": {
        "run": "在浏览器中运行",
        "missing": "这段代码需要 {names}，浏览器里的 Python（Pyodide）拿不到，只能在本地运行。",
    },
    "en": {
        "run": "Run in browser",
        "missing": "This block needs {names}, which the in-browser Python (Pyodide) cannot load"
        " here: run it locally.",
    },
}

# a page's form written by a module of snippets/ (its dotted name): form_html(lang, runner_url)
FORM_MARKER = re.compile(r'<div data-run-form="(?P<module>[A-Za-z_][\w.]*)"></div>')


@dataclass(frozen=True)
class Block:
    code: str  # exactly what markdown-exec executed
    block_id: str

    @property
    def name(self) -> str:
        return hashlib.sha256(self.code.encode("utf-8")).hexdigest()[:16] + ".py"


_page: dict[str, str] = {}  # "lang" and "url" of the page being rendered
_blocks: dict[str, Block] = {}  # file name -> block, for on_post_build


# --- which blocks can run -------------------------------------------------------------------


def _module_file(dotted: str, snippets: Path) -> Path | None:
    base = snippets.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports(tree: ast.AST, package: str) -> set[str]:
    """Dotted names imported by `tree`; relative imports resolved against `package`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(filter(None, [*parts, node.module or ""]))
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def missing_packages(code: str, snippets: Path = SNIPPETS) -> list[str]:
    """Top-level packages the code needs that Pyodide here cannot import, following imports
    through the course's own modules in `snippets`. [] when the block can run in the browser."""
    missing: set[str] = set()
    seen: set[Path] = set()
    todo: list[tuple[str, str]] = [(code, "")]
    while todo:
        source, package = todo.pop()
        for name in _imports(ast.parse(source), package):
            top = name.split(".")[0]
            if top in sys.stdlib_module_names:
                if top in NOT_IN_PYODIDE:
                    missing.add(top)
            elif (snippets / top).is_dir() or (snippets / f"{top}.py").is_file():
                path = _module_file(name, snippets)
                if path is not None and path not in seen:
                    seen.add(path)
                    is_package = path.name == "__init__.py"
                    pkg = name if is_package else name.rpartition(".")[0]
                    todo.append((path.read_text(encoding="utf-8"), pkg))
            elif top:
                missing.add(top)
    return sorted(missing)


# --- the course archive ---------------------------------------------------------------------


def course_files(snippets: Path = SNIPPETS, lab_results: Path = LAB_RESULTS) -> dict[str, Path]:
    """Archive name -> file: every file of snippets/ (code and data, no caches or build output)
    and every recorded lab run labs/results/<gpu>/*.json, under their repository paths."""
    files = {}
    for path in sorted(snippets.rglob("*")):
        rel = path.relative_to(snippets)
        skipped = SKIPPED_PARTS & set(rel.parts) or any(p.endswith(".egg-info") for p in rel.parts)
        if path.is_file() and not skipped and path.suffix != ".pyc":
            files[f"snippets/{rel.as_posix()}"] = path
    for path in sorted(lab_results.glob("*/*.json")):
        files[f"labs/results/{path.relative_to(lab_results).as_posix()}"] = path
    return files


def write_archive(target: Path, files: dict[str, Path]) -> None:
    """A zip of `files` with fixed timestamps: the same sources give the same bytes."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, path in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes(), zipfile.ZIP_DEFLATED)


# --- the HTML around each block -------------------------------------------------------------


def control(block: Block, lang: str, runner_url: str, missing: list[str]) -> str:
    """The button (or the note saying why there is none) shown above a block."""
    text = LABELS[lang]
    if missing:
        names = ", ".join(missing)
        return f'<p class="run-unavailable">{html.escape(text["missing"].format(names=names))}</p>'
    onclick = f"import('{runner_url}').then(m=>m.start(this))"
    return (
        f'<button class="md-button run-in-browser" type="button" data-run="{block.name}"'
        f' data-id="{html.escape(block.block_id)}" onclick="{onclick}">{text["run"]}</button>'
    )


def _wrap(original: Callable[..., str]) -> Callable[..., str]:
    def format_block(source: str, language: str, css_class: str, options: dict, md, **kwargs):
        output = original(source, language, css_class, options, md, **kwargs)
        if not _page:  # a block rendered outside a page (never in this site)
            return output
        block = Block(source, options.get("id") or "")
        missing = missing_packages(source)
        if not missing:
            _blocks[block.name] = block
        button = control(block, _page["lang"], _page["runner"], missing)
        return f'<div class="run-block">{button}\n{output}\n</div>'

    return format_block


def wrap_python_fences(mdx_configs: dict) -> None:
    """markdown-exec's python fence, wrapped so that each block gets its button."""
    fences = mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", [])
    python = [f for f in fences if f.get("name") == "python"]
    if not python:
        raise StageError("run_in_browser: markdown-exec registered no python fence")
    for fence in python:
        if not getattr(fence["format"], "_run_in_browser", False):
            fence["format"] = _wrap(fence["format"])
            fence["format"]._run_in_browser = True


def start_page(markdown: str, page: PageInfo, build: Build) -> str:
    _page.update(lang=page.lang, runner=get_relative_url(RUNNER, page.url))
    return markdown


def fill_forms(html_: str, page: PageInfo, build: Build) -> str:
    """Each form marker replaced by the form its module writes (see the module docstring)."""

    def form(match: re.Match[str]) -> str:
        try:
            module = importlib.import_module(match["module"])
        except ImportError as error:
            message = f"{page.where}: data-run-form names {match['module']}: {error}"
            raise StageError(message) from error
        return module.form_html(page.lang, get_relative_url(RUNNER, page.url))

    html_ = FORM_MARKER.sub(form, html_)
    _page.clear()
    return html_


def write_blocks(build: Build) -> None:
    """Each runnable block's code, and the course archive, into the site."""
    run_dir = build.site / RUN_DIR
    run_dir.mkdir(parents=True, exist_ok=True)
    for name, block in _blocks.items():
        (run_dir / name).write_text(block.code, encoding="utf-8")
    write_archive(run_dir / ARCHIVE, course_files())
