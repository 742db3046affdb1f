"""Under `make serve` (`mkdocs serve --dirty`) a save rebuilds the pages it changes.

`--dirty` alone re-renders a page only when its own Markdown is newer than its output, so an
edited snippet would leave stale executed output on the page (docs/adr/0014). This stage
finds, at the start of each rebuild, which watched files changed since the last one, and marks
every page that can show them as modified:

- a module under snippets/<package>/: every page that runs it: includes it, imports it, or quotes
  the values of the package's values.py (`{{ package.name }}`), directly or through the modules
  those import (an import graph of the modules, read with `ast`);
- a data file under snippets/<package>/ (core/models/*.json), or a module added or removed: every
  page that runs any module of that package (a module may open a file by path);
- another file a page includes with `--8<--` (a lab script): the pages that include it;
- anything else (mkdocs.yml, coursesite/, docs/lessons.yml, docs/includes/, labs/results/, a file
  outside a package), or a page added or removed (the nav changes): every page, as a full build
  would. Stylesheets, scripts and images under
  docs/ are copied by MkDocs itself and need no page rebuilt.

It also mends what `--dirty` gets wrong: the nav titles of the pages it skips (MkDocs leaves a
page it did not read without a title, so the nav printed "None"), a removed page's output (MkDocs
leaves it in the served folder), and the search index
(Material's merge keeps a stale copy of every rebuilt page but the first, and with two languages
loses the second's pages): the index is written from each page's newest entries. MkDocs'
warning that a dirty build is running is dropped so that `--strict` keeps its meaning.

When a save reaches more pages than the author has open (an edit of snippets/core/ reaches most
lessons), the pages open in a browser are rebuilt first and the browser reloads; the others are
rebuilt in a second pass once that page has reloaded, and a page the second pass did not touch is
not reloaded again. A page is open while its live-reload poll (MkDocs' script in every served
page, sent only by a visible tab) is waiting on the server.
Outside `mkdocs serve --dirty` it does nothing: `make build` and `make test` build everything.
See docs/adr/0014-serve-rebuilds.md.
"""

import ast
import json
import logging
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jinja2
import jinja2.bccache
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation
from mkdocs.structure.pages import Page

from coursesite import Build
from coursesite.session import SESSION
from coursesite.syntax import VALUE_REFERENCE, includes

DIRTY_WARNING = "A 'dirty' build is being performed"
# `from a.b import c, d` and `import a.b, e` (a relative `from .x` is for modules, read by ast)
FROM_IMPORT = re.compile(r"\bfrom\s+([A-Za-z_][\w.]*)\s+import\s+(\([^)]*\)|[\w \t,]+)")
PLAIN_IMPORT = re.compile(r"\bimport\s+([A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)")
SKIPPED_PARTS = {"__pycache__", ".ipynb_checkpoints"}
FULL_REBUILD_DOCS = ("includes/", "lessons.yml")  # docs/ files every page reads
PAGE_SUFFIXES = (".md", ".ipynb")
POLL = re.compile(r"/livereload/([0-9]+)/([0-9]+)")  # MkDocs' live-reload poll: epoch, tab id
OPEN_GRACE_S = 10.0  # a page whose poll ended this recently is still open (it is reloading)
RELOAD_WAIT_S = 3.0  # the second pass starts when the open page has reloaded, or after this

_log = logging.getLogger("mkdocs.hooks.serve_rebuild")
Stamp = tuple[int, int]  # (mtime_ns, size)


class _TemplateCache(jinja2.BytecodeCache):
    """Jinja bytecode in memory: each rebuild makes a new theme environment, which would compile
    every Material template again. Jinja discards an entry whose template source changed."""

    def __init__(self) -> None:
        self._code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self._code:
            bucket.bytecode_from_string(self._code[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self._code[bucket.key] = bucket.bytecode_to_string()


def active() -> bool:
    return SESSION.dirty


@dataclass
class ServeState:
    """What a `mkdocs serve` process remembers from one rebuild to the next. MkDocs loads the
    hook again for every rebuild; this module is imported once, so STATE lives as long as the
    process."""

    stamps: "dict[str, Stamp] | None" = None  # path -> Stamp at the last finished build
    titles: dict = field(default_factory=dict)  # src_uri -> title, of every page rendered so far
    search: dict = field(default_factory=dict)  # page URL -> its search index entries, newest
    templates: "_TemplateCache" = field(default_factory=lambda: _TemplateCache())
    module_graph: dict = field(default_factory=dict)  # module_imports' memo
    page_urls: dict = field(default_factory=dict)  # a page's source path -> its URL, last built
    outputs: dict = field(default_factory=dict)  # a page's URL -> its output, relative to site
    removed: list = field(default_factory=list)  # pages removed since the last finished build
    open: "OpenPages" = field(default_factory=lambda: OpenPages())  # pages a poll waits on
    trigger: Path | None = None  # a watched file: writing it starts the second pass
    deferred: set = field(default_factory=set)  # URLs of pages left for the second pass
    deferring: set = field(default_factory=set)  # ... collected by the build under way
    building: set = field(default_factory=set)  # URLs the build under way renders
    saw_change: bool = False  # whether the build under way has an edit of its own
    last_build: "LastBuild" = field(
        default_factory=lambda: LastBuild(second_pass=False, urls=frozenset())
    )
    last_end_ms: int = 0  # when the last build ended
    first_pass_after_ms: int = 0  # the build before the pending first pass ended then
    pending: "dict[str, Stamp] | None" = None  # this build's snapshot, kept once it finishes


class _DropDirtyWarning(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(DIRTY_WARNING)


# --- what changed -------------------------------------------------------------------------


def stamps(roots: list[Path]) -> dict[str, Stamp]:
    """(mtime, size) of every file under `roots` (files or folders), caches left out."""
    found: dict[str, Stamp] = {}
    for root in roots:
        paths = [root] if root.is_file() else root.rglob("*") if root.is_dir() else []
        for path in paths:
            if SKIPPED_PARTS & set(path.parts) or path.suffix == ".pyc" or not path.is_file():
                continue
            if any(part.endswith(".egg-info") for part in path.parts):
                continue
            stat = path.stat()
            found[str(path)] = (stat.st_mtime_ns, stat.st_size)
    return found


def changed_paths(before: dict[str, Stamp], now: dict[str, Stamp]) -> set[Path]:
    """Files added, removed or changed between two snapshots."""
    return {Path(p) for p in before.keys() | now.keys() if before.get(p) != now.get(p)}


# --- what a page reads ----------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    docs: Path
    packages_root: Path  # snippets/: every folder in it is an importable package
    include_roots: tuple[Path, ...]  # pymdownx.snippets' base paths, in order

    def packages(self) -> set[str]:
        if not self.packages_root.is_dir():
            return set()
        return {
            p.name for p in self.packages_root.iterdir() if p.is_dir() and p.name.isidentifier()
        }

    def package_of(self, path: Path) -> str | None:
        """The snippets package a file belongs to, None outside snippets/<package>/."""
        try:
            rel = path.resolve().relative_to(self.packages_root.resolve())
        except ValueError:
            return None
        return rel.parts[0] if len(rel.parts) > 1 and rel.parts[0] in self.packages() else None

    def resolve_include(self, name: str) -> Path | None:
        for root in self.include_roots:
            if (root / name).is_file():
                return (root / name).resolve()
        return None


@dataclass
class Reads:
    """What a page can show: files it includes, snippets modules it runs or quotes."""

    files: set[Path] = field(default_factory=set)
    modules: set[str] = field(default_factory=set)


def module_name(path: Path, layout: Layout) -> str | None:
    """snippets/core/models.py -> "core.models", snippets/core/__init__.py -> "core"."""
    if layout.package_of(path) is None or path.suffix != ".py":
        return None
    parts = path.resolve().relative_to(layout.packages_root.resolve()).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def snippet_modules(layout: Layout) -> dict[str, Path]:
    """Every module and package folder under snippets/<package>/: dotted name -> path."""
    found: dict[str, Path] = {}
    root = layout.packages_root
    for package in layout.packages():
        for path in [root / package, *(root / package).rglob("*")]:
            if SKIPPED_PARTS & set(path.parts):
                continue
            if path.is_dir():  # a folder beside a module of its name (core/models/) is data
                found.setdefault(".".join(path.relative_to(root).parts), path)
            elif (name := module_name(path, layout)) is not None:
                found[name] = path
    return found


def named_in_text(text: str) -> set[str]:
    """Dotted names a text imports, found by pattern (pages, notebooks' JSON, broken modules):
    `from a.b import c, d` gives a.b, a.b.c, a.b.d; `import a.b, e` gives a.b and e."""
    names: set[str] = set()
    for base, imported in FROM_IMPORT.findall(text):
        names.add(base)
        names |= {f"{base}.{name}" for name in re.findall(r"[A-Za-z_]\w*", imported)}
    for imported in PLAIN_IMPORT.findall(text):
        names |= {name.strip() for name in imported.split(",")}
    return names


def named_in_module(source: str, module: str, is_package: bool) -> set[str]:
    """Dotted names a module's source imports, relative imports resolved; by pattern if the
    source does not parse (an author mid-edit)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return named_in_text(source)
    package = module.split(".") if is_package else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            anchor = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join([*anchor, *([node.module] if node.module else [])])
            names.add(base)
            names |= {f"{base}.{alias.name}" for alias in node.names}
    return names


def resolve(names: set[str], known: dict[str, Path]) -> set[str]:
    """The known modules that importing `names` runs: each name and the packages above it."""
    found = set()
    for name in names:
        parts = name.split(".")
        found |= {m for i in range(1, len(parts) + 1) if (m := ".".join(parts[:i])) in known}
    return found


def module_imports(known: dict[str, Path], memo: dict | None = None) -> dict[str, set[str]]:
    """module -> the modules importing it runs directly (its imports and its parent packages).
    With `memo` (kept between rebuilds), read again only when a module file changed."""
    if memo is not None:
        files = [path / "__init__.py" if path.is_dir() else path for path in known.values()]
        key = tuple(sorted((str(f), *stamps([f]).get(str(f), (0, 0))) for f in files))
        if memo.get("key") != key:
            memo.update(key=key, graph=module_imports(known))
        return memo["graph"]
    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        init = path / "__init__.py" if path.is_dir() else path
        source = init.read_text(encoding="utf-8", errors="replace") if init.is_file() else ""
        names = named_in_module(source, module, path.is_dir() or path.name == "__init__.py")
        graph[module] = resolve(names | {module.rsplit(".", 1)[0]}, known) - {module}
    return graph


def page_reads(text: str, layout: Layout, known: dict[str, Path]) -> Reads:
    """Found in the page's source as written (a notebook's JSON included): over-counting only
    rebuilds a page more often, never shows stale output."""
    reads = Reads()
    names = named_in_text(text)
    for name in includes(text):
        path = layout.resolve_include(name)
        if path is not None:
            reads.files.add(path)
            # an included snippet runs as part of the page's block: its imports are the page's
            names |= named_in_text(path.read_text(encoding="utf-8", errors="replace"))
            if (module := module_name(path, layout)) is not None:
                names.add(module)
    # a value reference is computed by snippets/<package>/values.py (coursesite.values); one in
    # code counts too: that only rebuilds the page more often
    names |= {f"{package}.values" for package, _ in VALUE_REFERENCE.findall(text)}
    reads.modules = resolve(names, known)
    return reads


def closure(modules: set[str], graph: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), list(modules)
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def needs_full_rebuild(path: Path, layout: Layout) -> bool:
    """A change that can reach every page (config, hooks, manifest, shared includes, data)."""
    if layout.package_of(path) is not None:
        return False
    path = path.resolve()
    if path.is_relative_to(layout.docs.resolve()):
        rel = path.relative_to(layout.docs.resolve()).as_posix()
        # else a page (MkDocs compares its times) or a static file (MkDocs copies it)
        return rel.startswith(FULL_REBUILD_DOCS)
    # a lab script is handled per page that includes it; recorded lab results are data that
    # lessons read through their packages; everything else (config, hooks) reaches every page
    included = any(path.is_relative_to(root) for root in layout.include_roots)
    return not included or "results" in path.parts


def pages_to_rebuild(
    pages: dict[str, str],
    changed: set[Path],
    layout: Layout,
    added_or_removed: set[Path] = frozenset(),
    memo: dict | None = None,
) -> tuple[set[str], bool]:
    """(src_uris of the pages a change can reach, whether that is every page).

    `pages`: src_uri -> the page's source text. A page added or removed changes every page's nav.
    An edited module reaches the pages that run it; a data file, or a module added or removed,
    reaches the pages that run any module of its package (a module may open the file by path,
    and a page may import a module that did not exist).
    """
    new_or_gone_page = any(
        path.suffix in PAGE_SUFFIXES and path.resolve().is_relative_to(layout.docs.resolve())
        for path in added_or_removed
    )
    if new_or_gone_page or any(needs_full_rebuild(path, layout) for path in changed):
        return set(pages), True
    known = snippet_modules(layout)
    graph = module_imports(known, memo)
    changed_modules: set[str] = set()
    changed_packages: set[str] = set()
    for path in changed:
        if (package := layout.package_of(path)) is None:
            continue
        module = module_name(path, layout)
        if module is None or path in added_or_removed:
            changed_packages.add(package)
        else:
            changed_modules.add(module)
    changed_files = {path.resolve() for path in changed}
    hit = set()
    for src_uri, text in pages.items():
        reads = page_reads(text, layout, known)
        runs = closure(reads.modules, graph)
        if (
            runs & changed_modules
            or {module.split(".")[0] for module in runs} & changed_packages
            or reads.files & changed_files
        ):
            hit.add(src_uri)
    return hit, False


# --- pages open in a browser first ----------------------------------------------------------


def now_ms() -> int:
    """The clock of MkDocs' live-reload epochs (mkdocs.livereload._timestamp)."""
    return round(time.monotonic() * 1000)


@dataclass(frozen=True)
class LastBuild:
    second_pass: bool  # it rendered deferred pages only, for no edit of its own
    urls: frozenset[str]  # the pages it rendered
    # a page served at a later epoch has seen the first pass: when the build before it ended
    first_pass_after_ms: int = 0

    def spares(self, url: str, epoch: int) -> bool:
        """Whether a page at `epoch` shows nothing this build changed (no reload needed)."""
        return self.second_pass and url not in self.urls and epoch > self.first_pass_after_ms


class OpenPages:
    """The pages browsers show, from MkDocs' live-reload polls: a visible tab keeps one poll
    waiting on the server (a hidden tab stops polling); a reloading tab polls again at its
    load event."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[str, int] = {}
        self._ended: dict[str, float] = {}
        self.reloaded = threading.Event()  # a page of `awaited` polled again: it has reloaded
        self.awaited: set[str] = set()

    def poll_started(self, url: str) -> None:
        with self._lock:
            self._waiting[url] = self._waiting.get(url, 0) + 1
            if url in self.awaited:
                self.reloaded.set()

    def poll_ended(self, url: str) -> None:
        with self._lock:
            self._waiting[url] -= 1
            self._ended[url] = time.monotonic()

    def urls(self) -> set[str]:
        recent = time.monotonic() - OPEN_GRACE_S
        with self._lock:
            return {u for u, n in self._waiting.items() if n > 0} | {
                u for u, t in self._ended.items() if t > recent
            }

    def await_reload(self, urls: set[str]) -> None:
        with self._lock:
            self.awaited = set(urls)
            self.reloaded.clear()


def page_url(referer: str | None, mount_path: str) -> str | None:
    """The page a poll comes from, as MkDocs' File.url ("lesson/", "" for the home page)."""
    if not referer:
        return None
    path = unquote(urlsplit(referer).path)
    if not path.startswith(mount_path):
        return None
    url = path[len(mount_path) :]
    return url[: -len("index.html")] if url.endswith("index.html") else url


def split_open_first(
    wanted: set[str], open_urls: set[str], own: set[str]
) -> tuple[set[str], set[str]]:
    """(URLs to render now, URLs left for the second pass) of one language's build, whose pages
    are `own`: the open ones first when a save reaches more pages than those; none at all when
    the open page is another language's (static-i18n builds that language next)."""
    first = wanted & open_urls
    if first:
        return (first, wanted - first) if first != wanted else (wanted, set())
    if open_urls - own:
        return set(), wanted
    return wanted, set()


WSGIApp = Callable[[dict, Callable], Iterable[bytes]]


def answer_poll(app: WSGIApp, environ: dict, epoch: int, tab: str) -> int:
    """MkDocs' answer to a poll from a page at `epoch`: the newest epoch, once it is newer (or
    the same after MkDocs' one-minute timeout)."""
    inner = {**environ, "PATH_INFO": f"/livereload/{epoch}/{tab}"}
    return int(b"".join(app(inner, lambda *args: None)))


def watched_polls(app: WSGIApp, mount_path: str, state: ServeState) -> WSGIApp:
    """MkDocs' server app, with its live-reload polls recorded (which pages are open) and a page
    that the last build left alone kept from reloading when that build was a second pass."""

    def serve(environ: dict, start_response: Callable) -> Iterable[bytes]:
        match = POLL.fullmatch(environ.get("PATH_INFO", ""))
        url = page_url(environ.get("HTTP_REFERER"), mount_path)
        if match is None or url is None:
            return app(environ, start_response)
        epoch, tab = int(match[1]), match[2]
        state.open.poll_started(url)
        try:
            newest = answer_poll(app, environ, epoch, tab)
            while newest > epoch and state.last_build.spares(url, epoch):
                later = answer_poll(app, environ, newest, tab)
                if later == newest:  # MkDocs' timeout: nothing this page shows has changed
                    newest = epoch
                    break
                newest = later
        finally:
            state.open.poll_ended(url)
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"%d" % newest]

    return serve


def _second_pass_after_reload(state: ServeState) -> None:
    if state.open.awaited:
        state.open.reloaded.wait(RELOAD_WAIT_S)
    state.trigger.write_text(str(time.monotonic_ns()), encoding="utf-8")  # the watcher sees it


STATE = ServeState()


# --- the events ------------------------------------------------------------------------------


def _layout(config: MkDocsConfig) -> Layout:
    root = Path(config.config_file_path).resolve().parent
    bases = config.mdx_configs.get("pymdownx.snippets", {}).get("base_path", [])
    bases = [bases] if isinstance(bases, str) else bases
    return Layout(
        Path(config.docs_dir), root / "snippets", tuple(Path(str(b)).resolve() for b in bases)
    )


def _watched(config: MkDocsConfig) -> list[Path]:
    root = Path(config.config_file_path).resolve().parent
    return [Path(config.docs_dir), Path(config.config_file_path), *(root / w for w in config.watch)]


def drop_dirty_warning() -> None:
    if active():
        logger = logging.getLogger("mkdocs.commands.build")
        if not any(isinstance(f, _DropDirtyWarning) for f in logger.filters):
            logger.addFilter(_DropDirtyWarning())


def mark_changed_pages(files: Files, config: MkDocsConfig) -> Files:
    """The pages a change reaches marked modified (after static-i18n made its File objects)."""
    if not active():
        return files
    state = STATE
    now = stamps(_watched(config))
    state.pending = now
    for file in files.documentation_pages():
        if file.abs_src_path:
            state.page_urls[str(Path(file.abs_src_path))] = file.url
    if state.stamps is None:  # the first build renders every page anyway
        state.stamps = now  # and if it fails, the fix is a change against this
        return files
    changed = changed_paths(state.stamps, now)
    pages = {
        f.src_uri: Path(f.abs_src_path).read_text(encoding="utf-8", errors="replace")
        for f in files.documentation_pages()
        if f.abs_src_path and f.src_uri.endswith(PAGE_SUFFIXES)
    }
    added_or_removed = {Path(p) for p in state.stamps.keys() ^ now.keys()}
    if _outer_build(config):
        state.removed = [p for p in state.stamps.keys() - now.keys() if p in state.page_urls]
    hit, full = pages_to_rebuild(
        pages, changed, _layout(config), added_or_removed, state.module_graph
    )
    if _outer_build(config):
        state.deferring, state.building, state.saw_change = set(), set(), False
    documentation = files.documentation_pages()
    wanted = {f.url for f in documentation if f.src_uri in hit or f.url in state.deferred}
    now_urls, later_urls = wanted, set()
    if changed and not full and state.trigger is not None:  # a second pass renders them all
        own = {f.url for f in documentation}
        now_urls, later_urls = split_open_first(wanted, state.open.urls(), own)
    for file in documentation:
        if file.url in now_urls:
            file.is_modified = lambda: True  # MkDocs --dirty re-reads and renders these
    state.deferring |= later_urls
    state.building |= now_urls
    state.saw_change = state.saw_change or bool(changed)

    def names_of(urls: set[str]) -> str:
        return ", ".join(sorted(f.src_uri for f in documentation if f.url in urls))

    if changed:
        root = Path(config.config_file_path).resolve().parent
        names = sorted(
            str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in changed
        )
        what = "every page" if full else (names_of(now_urls) or "no page")
        _log.info("serve_rebuild: %s changed; rebuilding %s", ", ".join(names[:5]), what)
    elif now_urls:
        _log.info("serve_rebuild: second pass; rebuilding %s", names_of(now_urls))
    if later_urls:
        _log.info("serve_rebuild: after the open page reloads: %s", names_of(later_urls))
    return files


def _outer_build(config: MkDocsConfig) -> bool:
    """False in static-i18n's build of another language, which runs inside the first one's."""
    i18n = config.plugins.get("i18n")
    return not (i18n is not None and getattr(i18n, "building", False))


def cache_templates(env: jinja2.Environment) -> jinja2.Environment:
    if active():
        env.bytecode_cache = STATE.templates
    return env


def keep_titles(nav: Navigation) -> Navigation:
    """The pages --dirty skips keep their titles (after static-i18n rebuilt the nav)."""
    if not active():
        return nav
    titles = STATE.titles
    for page in nav.pages:
        if not page.file.is_modified() and page.file.src_uri in titles:
            page.title = titles[page.file.src_uri]  # a page --dirty skips keeps its title
    return nav


def _search_entries(config: MkDocsConfig) -> list[dict] | None:
    for name in ("material/search", "search"):
        plugin = config.plugins.get(name)
        if plugin is not None and hasattr(plugin, "search_index"):
            return plugin.search_index.entries
    return None


def record_page(page: Page, config: MkDocsConfig) -> None:
    """A rendered page's title, output and search entries (after the search plugin's own
    on_page_context: this page's entries are in its index now)."""
    if active():
        state = STATE
        state.titles[page.file.src_uri] = page.title
        state.outputs[page.file.url] = page.file.dest_uri
        entries = _search_entries(config)
        if entries is not None:
            state.search[page.url] = [
                entry for entry in entries if entry.get("location", "").split("#")[0] == page.url
            ]


def finish_build(build: Build) -> None:
    """Once every language is built (the pipeline runs it after static-i18n's merge of the search
    index, before page_assets splits it)."""
    if not active():
        return
    state = STATE
    for source in state.removed:  # MkDocs leaves a dirty build's old output in place
        url = state.page_urls.pop(source)
        state.search.pop(url, None)
        if (output := state.outputs.pop(url, None)) is not None:
            remove_output(build.site, output)
    state.removed = []
    index = build.site / "search" / "search_index.json"
    if state.stamps is not state.pending and index.is_file():
        # a rebuild: the index from every page's newest entries (Material's dirty merge keeps
        # the first rebuilt page's entries only, and loses another language's)
        data = json.loads(index.read_text(encoding="utf-8"))
        data["docs"] = [entry for entries in state.search.values() for entry in entries]
        index.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    state.stamps = state.pending  # only a finished build moves the baseline
    if state.deferring and (state.saw_change or not state.deferred):
        # a first pass (the pages the browser shows, for an edit): pages served after the
        # build before it have seen it
        state.first_pass_after_ms = state.last_end_ms
    second_pass = bool(state.deferred) and not state.saw_change
    state.last_build = LastBuild(
        second_pass, frozenset(state.building), state.first_pass_after_ms if second_pass else 0
    )
    state.deferred, state.last_end_ms = state.deferring, now_ms()
    if state.deferred and state.trigger is not None:
        # the second pass starts once the open pages just rendered have reloaded
        state.open.await_reload(state.building & state.open.urls())
        threading.Thread(target=_second_pass_after_reload, args=(state,), daemon=True).start()


def build_failed() -> None:
    # a failed build reloads every open page (serve_failures.py shows the failure there), and
    # its first pass, if it was one, did not happen: the next build starts over from the edit
    if active():
        state = STATE
        state.last_build = LastBuild(second_pass=False, urls=frozenset())
        state.deferring = set()


def remove_output(site: Path, output: str) -> None:
    """A removed page's HTML and its Markdown copy (llms.py), and their folder if that is empty."""
    page = site / output
    for path in (page, page.with_suffix(".md")):
        path.unlink(missing_ok=True)
    if page.parent != site and page.parent.is_dir() and not any(page.parent.iterdir()):
        page.parent.rmdir()


def watch_server(server):
    """Record which pages the browsers show (their live-reload polls) and watch the file that
    starts a second pass."""
    if not active():
        return server
    state = STATE
    folder = Path(tempfile.mkdtemp(prefix="course_serve_"))
    state.trigger = folder / "second-pass"
    server.watch(str(folder))
    server.set_app(watched_polls(server.get_app(), server.mount_path, state))
    return server


def shutdown() -> None:
    if STATE.trigger is not None:
        shutil.rmtree(STATE.trigger.parent, ignore_errors=True)
