"""MkDocs hook: a "Run in browser" button on every executed Python block (docs/adr/0011).

markdown-exec runs each `python exec="on"` block at build time. This hook wraps its fence
formatter: the block's HTML is unchanged, and gets a button above it. The button carries only
the name of a file written into the site, `assets/run/<sha>.py`, holding the exact code the
build ran (snippets expanded, `# markdown-exec: hide` lines included). Nothing else loads until
the reader clicks: the click imports docs/javascripts/run-in-browser.js, which loads Pyodide
(self-hosted, assets/vendor/pyodide/ from npm) and mounts `assets/run/course.zip`, an archive of
snippets/ (and recorded lab results) built here from the same files the build imported.

A block whose imports (followed through the course's own modules) need a package that is neither
in the standard library nor in snippets/ gets a note instead of the button, in the page's language.
"""

import ast
import hashlib
import html
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.pages import Page
from mkdocs.utils import get_relative_url

ROOT = Path(__file__).resolve().parents[2]
SNIPPETS = ROOT / "snippets"
LAB_RESULTS = ROOT / "labs" / "results"  # read by prefill_decode/lab_results.py
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

PLAYGROUND_SLOT = '<div id="run-playground"></div>'  # in docs/performance/playground*.ipynb
# Only the playground page carries the form, so its style travels with it (no site-wide CSS).
PLAYGROUND_STYLE = """<style>
.md-typeset .run-playground { display: flex; flex-wrap: wrap; gap: .6em 1.2em; align-items: end; }
.md-typeset .run-playground label { display: flex; flex-direction: column; gap: .2em;
  max-width: 100%; }
.md-typeset .run-playground select, .md-typeset .run-playground input { max-width: 100%;
  padding: .3em; font: inherit; color: var(--md-default-fg-color);
  background: var(--md-default-bg-color); border: 1px solid var(--md-default-fg-color--light); }
.md-typeset .run-playground p { flex-basis: 100%; margin: 0; }
.md-typeset .run-playground-result { overflow-x: auto; }
</style>"""
PLAYGROUND = {
    "zh": {
        "model": "模型",
        "fmt": "权重格式",
        "gpu": "GPU",
        "prompt_lengths": "prompt 长度 S（逗号分隔）",
        "new_tokens": "生成的 token 数 n",
        "submit": "在浏览器中计算",
    },
    "en": {
        "model": "Model",
        "fmt": "Weight format",
        "gpu": "GPU",
        "prompt_lengths": "Prompt lengths S (comma-separated)",
        "new_tokens": "Tokens to generate n",
        "submit": "Compute in browser",
    },
}


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


def _language(src_uri: str) -> str:
    parts = src_uri.rsplit("/", 1)[-1].split(".")
    return parts[-2] if len(parts) > 2 and parts[-2] in LABELS else "zh"


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


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    fences = config.mdx_configs.get("pymdownx.superfences", {}).get("custom_fences", [])
    python = [f for f in fences if f.get("name") == "python"]
    if not python:
        raise PluginError("run_in_browser: markdown-exec registered no python fence")
    for fence in python:
        if not getattr(fence["format"], "_run_in_browser", False):
            fence["format"] = _wrap(fence["format"])
            fence["format"]._run_in_browser = True
    return config


def on_page_markdown(markdown: str, page: Page, **_) -> str:
    _page.update(lang=_language(page.file.src_uri), runner=get_relative_url(RUNNER, page.url))
    return markdown


def playground_form(lang: str, runner_url: str) -> str:
    """The playground's form, its options from the core (snippets/playground/web.py)."""
    from playground.web import DEFAULTS, choices  # snippets/ is installed for the build

    text = PLAYGROUND[lang]
    fields = []
    for name, options in choices(lang).items():
        items = "".join(
            f'<option value="{html.escape(value)}"'
            f"{' selected' if value == DEFAULTS[name] else ''}>{html.escape(label)}</option>"
            for value, label in options
        )
        fields.append(f'<label>{text[name]}<select name="{name}">{items}</select></label>')
    for name, kind in (("prompt_lengths", "text"), ("new_tokens", "number")):
        extra = ' min="1" step="1"' if kind == "number" else ""
        fields.append(
            f'<label>{text[name]}<input name="{name}" type="{kind}"{extra}'
            f' value="{html.escape(str(DEFAULTS[name]))}" required></label>'
        )
    onsubmit = f"event.preventDefault();import('{runner_url}').then(m=>m.playground(this))"
    return PLAYGROUND_STYLE + (
        f'<form class="run-playground" onsubmit="{onsubmit}">{"".join(fields)}'
        f'<p><button class="md-button md-button--primary" type="submit">{text["submit"]}'
        '</button> <span class="run-status" role="status"></span></p></form>'
        '<div class="run-playground-result"></div>'
    )


def on_page_content(html_: str, page: Page, **_) -> str:
    if PLAYGROUND_SLOT in html_:
        form = playground_form(_language(page.file.src_uri), get_relative_url(RUNNER, page.url))
        html_ = html_.replace(PLAYGROUND_SLOT, form, 1)
    _page.clear()
    return html_


def on_post_build(config: MkDocsConfig) -> None:
    run_dir = Path(config.site_dir) / RUN_DIR
    run_dir.mkdir(parents=True, exist_ok=True)
    for name, block in _blocks.items():
        (run_dir / name).write_text(block.code, encoding="utf-8")
    write_archive(run_dir / ARCHIVE, course_files())
