"""coursesite.serve_rebuild: under `make serve` (`mkdocs serve --dirty`) a save rebuilds
exactly the pages it can change, and those pages show the change (never stale output).

Unit tests of the dependency rules, then a fixture site served the way `make serve` serves."""

import json
import os
import re
import subprocess
import threading
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import MKDOCS, ROOT, make_serve_args
from coursesite import serve_rebuild, session
from coursesite.livereload_tab import LiveReloadTab
from coursesite.session import SESSION
from test_build_failures import make_site
from test_serve_errors import fetch, free_port, wait_for

# `mkdocs serve` on a free port, with timed waits: one xdist worker for all such files
pytestmark = pytest.mark.one_worker

# ---------------------------------------------------------------- the rules, on a synthetic tree


@pytest.fixture
def layout(tmp_path) -> serve_rebuild.Layout:
    files = {
        "snippets/core/__init__.py": "",
        "snippets/core/models.py": "import json\n",
        "snippets/core/models/m.json": "{}",
        "snippets/lesson_a/__init__.py": "",
        "snippets/lesson_a/estimate.py": "from core.models import x\n",
        "snippets/lesson_b/__init__.py": "",
        "snippets/lesson_b/values.py": "def values():\n    return {}\n",
        "snippets/lesson_c/__init__.py": "",
        "snippets/lesson_c/sim.py": "import lesson_a.estimate\n",
        "snippets/lesson_a/other.py": "print(2)\n",
        "snippets/lesson_b/chart.py": "print(3)\n",
        "snippets/lesson_d/__init__.py": "",
        "snippets/lesson_d/base.py": "K = 1\n",
        "snippets/lesson_d/scale.py": "S = 2\n",
        "snippets/lesson_d/show.py": "from .base import K\nfrom . import scale\nprint(K)\n",
        "labs/lab_a/run.py": "print(1)\n",
        "labs/results/gpu/run.json": "{}",
        "docs/includes/abbreviations.zh.md": "",
        "docs/stylesheets/extra.css": "",
        "docs/lessons.yml": "",
        "hooks/h.py": "",
        "mkdocs.yml": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return serve_rebuild.Layout(
        tmp_path / "docs", tmp_path / "snippets", (tmp_path / "snippets", tmp_path / "labs")
    )


PAGES = {
    "a.md": '```python exec="on"\n--8<-- "lesson_a/estimate.py"\n```\n',
    "b.md": "B quotes {{ lesson_b.figure }}.\n",
    "c.ipynb": json.dumps({"cells": [{"source": ["from lesson_c.sim import run\n"]}]}),
    "lab.md": '```python\n--8<-- "lab_a/run.py"\n```\n',
    "plain.md": "No code. `{{ lesson_b.figure }}` written in prose as an example.\n",
    "a_other.md": '```python exec="on"\n--8<-- "lesson_a/other.py"\n```\n',
    "d.md": '```python exec="on"\n--8<-- "lesson_d/show.py"\n```\n',
    "e.md": '```python exec="on"\nfrom core import (\n    models,\n)\n```\n',
}


def rebuilt(layout: serve_rebuild.Layout, *changed: str) -> tuple[set[str], bool]:
    root = layout.docs.parent
    return serve_rebuild.pages_to_rebuild(PAGES, {root / c for c in changed}, layout)


def test_a_package_change_reaches_pages_that_include_import_or_quote_it(layout):
    # lesson_c imports lesson_a: the notebook shows lesson_a's code through lesson_c
    assert rebuilt(layout, "snippets/lesson_a/estimate.py") == ({"a.md", "c.ipynb"}, False)
    assert rebuilt(layout, "snippets/lesson_c/sim.py") == ({"c.ipynb"}, False)
    # the value is quoted in b.md; plain.md's is inside inline code... and still counted
    # (over-counting only rebuilds more), so both pages are rebuilt
    assert rebuilt(layout, "snippets/lesson_b/values.py") == ({"b.md", "plain.md"}, False)


def test_a_module_edit_reaches_the_pages_that_run_that_module_not_its_whole_package(layout):
    # a_other.md includes another module of lesson_a; nothing it runs imports estimate.py
    assert rebuilt(layout, "snippets/lesson_a/other.py") == ({"a_other.md"}, False)
    # b.md quotes lesson_b's values, computed by values.py, which does not import chart.py
    assert rebuilt(layout, "snippets/lesson_b/chart.py") == (set(), False)


def test_relative_imports_and_parenthesised_imports_are_followed(layout):
    # show.py: `from .base import K` and `from . import scale`
    assert rebuilt(layout, "snippets/lesson_d/base.py") == ({"d.md"}, False)
    assert rebuilt(layout, "snippets/lesson_d/scale.py") == ({"d.md"}, False)
    # e.md: `from core import (\n    models,\n)` runs core/models.py
    assert "e.md" in rebuilt(layout, "snippets/core/models.py")[0]


def test_a_package_init_reaches_every_page_that_runs_a_module_below_it(layout):
    # importing lesson_a.other runs lesson_a/__init__.py first
    expected = {"a.md", "a_other.md", "c.ipynb"}
    assert rebuilt(layout, "snippets/lesson_a/__init__.py") == (expected, False)


def test_a_data_file_belongs_to_its_package_and_reaches_every_importer(layout):
    # core/models.py reads it; lesson_a imports core.models, lesson_c imports lesson_a
    assert rebuilt(layout, "snippets/core/models/m.json") == ({"a.md", "c.ipynb", "e.md"}, False)


def test_a_module_added_or_removed_reaches_every_page_that_runs_its_package(layout):
    root = layout.docs.parent
    new = root / "snippets" / "lesson_a" / "new.py"
    new.write_text("print(4)\n", encoding="utf-8")
    expected = ({"a.md", "a_other.md", "c.ipynb"}, False)
    assert serve_rebuild.pages_to_rebuild(PAGES, {new}, layout, {new}) == expected
    new.unlink()
    assert serve_rebuild.pages_to_rebuild(PAGES, {new}, layout, {new}) == expected


def test_a_module_that_does_not_parse_keeps_its_imports(layout):
    # an author mid-edit: its imports are read by pattern, so its dependencies still count
    sim = layout.packages_root / "lesson_c" / "sim.py"
    sim.write_text("import lesson_a.estimate\ndef broken(:\n", encoding="utf-8")
    assert rebuilt(layout, "snippets/lesson_a/estimate.py") == ({"a.md", "c.ipynb"}, False)
    assert rebuilt(layout, "snippets/lesson_c/sim.py") == ({"c.ipynb"}, False)


def test_module_imports_resolve_relative_names_and_parent_packages(layout):
    known = serve_rebuild.snippet_modules(layout)
    graph = serve_rebuild.module_imports(known)
    assert graph["lesson_d.show"] == {"lesson_d", "lesson_d.base", "lesson_d.scale"}
    assert graph["lesson_a.estimate"] == {"lesson_a", "core", "core.models"}
    assert graph["core.models"] == {"core"}  # `import json` is not the course's
    assert "core.models" in known and known["core.models"].name == "models.py"


def test_the_import_graph_is_read_again_only_when_a_module_changes(layout):
    known, memo = serve_rebuild.snippet_modules(layout), {}
    graph = serve_rebuild.module_imports(known, memo)
    assert graph == serve_rebuild.module_imports(known) and "core" not in graph["lesson_b.chart"]
    assert serve_rebuild.module_imports(known, memo) is graph  # nothing changed: kept
    (layout.packages_root / "lesson_b" / "chart.py").write_text("import core.models\n", "utf-8")
    assert "core.models" in serve_rebuild.module_imports(known, memo)["lesson_b.chart"]


def test_an_included_lab_script_reaches_only_the_pages_that_include_it(layout):
    assert rebuilt(layout, "labs/lab_a/run.py") == ({"lab.md"}, False)


@pytest.mark.parametrize(
    "changed",
    [
        "mkdocs.yml",
        "hooks/h.py",
        "docs/includes/abbreviations.zh.md",
        "docs/lessons.yml",
        "labs/results/gpu/run.json",
    ],
)
def test_config_hooks_shared_includes_and_lab_results_rebuild_every_page(layout, changed):
    assert rebuilt(layout, changed) == (set(PAGES), True)


def test_a_stylesheet_or_a_page_of_its_own_rebuilds_nothing_here(layout):
    # MkDocs copies a changed static file, and compares a page's own times itself
    assert rebuilt(layout, "docs/stylesheets/extra.css") == (set(), False)
    assert rebuilt(layout, "docs/a.md") == (set(), False)


def test_a_page_added_or_removed_rebuilds_every_page_for_the_nav(layout):
    root = layout.docs.parent
    new_page = root / "docs" / "new.md"
    assert serve_rebuild.pages_to_rebuild(PAGES, {new_page}, layout, {new_page}) == (
        set(PAGES),
        True,
    )


def test_changed_paths_sees_edits_additions_and_removals(tmp_path):
    (tmp_path / "kept.py").write_text("a", encoding="utf-8")
    (tmp_path / "edited.py").write_text("a", encoding="utf-8")
    (tmp_path / "removed.py").write_text("a", encoding="utf-8")
    (tmp_path / "__pycache__").mkdir()
    before = serve_rebuild.stamps([tmp_path])
    (tmp_path / "edited.py").write_text("ab", encoding="utf-8")
    (tmp_path / "removed.py").unlink()
    (tmp_path / "added.py").write_text("a", encoding="utf-8")
    (tmp_path / "__pycache__" / "x.pyc").write_bytes(b"")
    changed = serve_rebuild.changed_paths(before, serve_rebuild.stamps([tmp_path]))
    assert {p.name for p in changed} == {"edited.py", "removed.py", "added.py"}


# ---------------------------------------------------------------- the open page first


def test_the_open_pages_are_rendered_first_and_the_rest_after():
    split = serve_rebuild.split_open_first
    own = {"", "a/", "b/", "c/"}
    assert split({"a/", "b/", "c/"}, {"b/"}, own) == ({"b/"}, {"a/", "c/"})
    assert split({"a/", "b/"}, {"a/", "b/"}, own) == ({"a/", "b/"}, set())  # nothing left
    assert split({"a/", "b/"}, {"c/"}, own) == ({"a/", "b/"}, set())  # the open page unaffected
    assert split({"a/", "b/"}, set(), own) == ({"a/", "b/"}, set())  # no browser
    # an English page is open: the Chinese build (first) leaves its pages for later
    assert split({"a/", "b/"}, {"en/a/"}, own) == (set(), {"a/", "b/"})


@pytest.mark.parametrize(
    "referer, mount, url",
    [
        ("http://127.0.0.1:8000/lesson/", "/", "lesson/"),
        ("http://127.0.0.1:8000/", "/", ""),
        ("http://127.0.0.1:8000/en/%E9%A6%96/?q=1", "/", "en/首/"),
        ("http://127.0.0.1:8000/a/index.html", "/", "a/"),
        ("http://127.0.0.1:8000/course/a/", "/course/", "a/"),
        ("http://127.0.0.1:8000/a/", "/course/", None),  # not a page of this site
        (None, "/", None),
    ],
)
def test_a_poll_names_the_page_it_comes_from(referer, mount, url):
    assert serve_rebuild.page_url(referer, mount) == url


class FakeServer:
    """MkDocs' app for live-reload polls: answers each with the next epoch of `answers`; an
    answer may first change the state (a build finishing)."""

    def __init__(self, state, answers: list[tuple[int, object]]) -> None:
        self.state, self.answers, self.paths = state, list(answers), []

    def __call__(self, environ, start_response):
        self.paths.append(environ["PATH_INFO"])
        assert "lesson/" in self.state.open.urls(), "a waiting poll marks its page open"
        epoch, last_build = self.answers.pop(0)
        if last_build is not None:
            self.state.last_build = last_build
        start_response("200 OK", [])
        return [b"%d" % epoch]


def poll(state, answers, epoch=100, referer="http://127.0.0.1:8000/lesson/"):
    app = FakeServer(state, answers)
    wrapped = serve_rebuild.watched_polls(app, "/", state)
    environ = {"PATH_INFO": f"/livereload/{epoch}/7", "HTTP_REFERER": referer}
    body = b"".join(wrapped(environ, lambda *args: None))
    return int(body), app.paths


@pytest.fixture
def state():
    state = types.SimpleNamespace(open=serve_rebuild.OpenPages())
    state.last_build = serve_rebuild.LastBuild(False, frozenset())
    return state


def test_a_second_pass_does_not_reload_a_page_it_left_alone(state):
    second = serve_rebuild.LastBuild(True, frozenset({"more/"}), first_pass_after_ms=50)
    # the second pass ends (epoch 200); MkDocs' next answer is its one-minute timeout
    answer, paths = poll(state, [(200, second), (200, None)])
    assert answer == 100, "the page is told nothing changed"
    assert paths == ["/livereload/100/7", "/livereload/200/7"]  # it waited for a newer build
    # ... or a build with an edit follows (epoch 300): that one reloads the page
    edit = serve_rebuild.LastBuild(False, frozenset({"lesson/"}))
    assert poll(state, [(200, second), (300, edit)])[0] == 300


@pytest.mark.parametrize(
    "last_build, epoch",
    [
        (serve_rebuild.LastBuild(True, frozenset({"lesson/"}), 50), 100),  # it rebuilt this page
        (serve_rebuild.LastBuild(True, frozenset({"more/"}), 150), 100),  # served before pass 1
        (serve_rebuild.LastBuild(False, frozenset({"more/"})), 100),  # an edit's build
    ],
)
def test_every_other_build_reloads_the_page(state, last_build, epoch):
    assert poll(state, [(200, last_build)], epoch=epoch) == (200, [f"/livereload/{epoch}/7"])


def test_requests_other_than_polls_pass_through_and_the_page_stays_open_a_while(state):
    seen = []

    def app(environ, start_response):
        seen.append(environ["PATH_INFO"])
        return [b"page"]

    wrapped = serve_rebuild.watched_polls(app, "/", state)
    assert wrapped({"PATH_INFO": "/lesson/"}, None) == [b"page"]
    assert wrapped({"PATH_INFO": "/livereload/1/2"}, None) == [b"page"]  # no Referer: not ours
    assert seen == ["/lesson/", "/livereload/1/2"] and state.open.urls() == set()
    poll(state, [(200, None)])
    assert state.open.urls() == {"lesson/"}  # reloading: its next poll is on its way


def test_the_second_pass_waits_for_the_open_page_to_reload(tmp_path, monkeypatch):
    state = types.SimpleNamespace(open=serve_rebuild.OpenPages(), trigger=tmp_path / "t")
    monkeypatch.setattr(serve_rebuild, "RELOAD_WAIT_S", 30.0)
    state.open.await_reload({"lesson/"})
    waiting = threading.Thread(target=serve_rebuild._second_pass_after_reload, args=(state,))
    waiting.start()
    time.sleep(0.3)
    assert not state.trigger.exists(), "started before the page reloaded"
    state.open.poll_started("more/")  # another page's poll does not count
    time.sleep(0.3)
    assert not state.trigger.exists()
    state.open.poll_started("lesson/")  # the reloaded page polls again
    waiting.join(timeout=5)
    assert state.trigger.exists()


# ---------------------------------------------------------------- served like `make serve`

LESSON = '# Lesson\n\n```python exec="on" result="text" id="shown"\n--8<-- "pkg/show.py"\n```\n'
OTHER = "# Other page\n\nNo code here.\n"
TIMEOUT_S = 120


class Log:
    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[str] = []
        threading.Thread(target=self._read, args=(proc,), daemon=True).start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            self.lines.append(line.rstrip())

    def wait_for(self, pattern: str, start: int = 0) -> str:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            found = [line for line in self.lines[start:] if re.search(pattern, line)]
            if found:
                return found[0]
            time.sleep(0.1)
        tail = "\n".join(self.lines[-30:])
        pytest.fail(f"mkdocs serve: no line matching {pattern!r}:\n{tail}")


def test_make_serve_is_dirty_and_the_site_loads_the_pipeline():
    assert "--dirty" in make_serve_args(), "make serve without --dirty rebuilds every page"
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "  - scripts/coursesite/pipeline.py" in config


@dataclass
class Served:
    """A two-language fixture site under `mkdocs serve` with `make serve`'s options: lesson/ and
    more/ show pkg/show.py's output, other/ shows none."""

    base: str
    log: Log
    server: subprocess.Popen
    snippet: Path

    def page(self, url: str, shows: str) -> str:
        return wait_for(f"{self.base}{url}", lambda s, b: s == 200 and shows in b, self.server)

    def search_docs(self) -> list[dict]:
        status, text = fetch(f"{self.base}search/search_index.json")
        assert status == 200
        return json.loads(text)["docs"]


@pytest.fixture
def served(tmp_path) -> Iterator[Served]:
    pages = {"index.md": "# 首页\n", "index.en.md": "# Home\n"}
    for name, text in {"lesson": LESSON, "more": LESSON.replace("# Lesson", "# More")}.items():
        pages |= {f"{name}.md": text, f"{name}.en.md": text}
    pages |= {"other.md": OTHER, "other.en.md": OTHER}
    snippets = {"pkg/__init__.py": "", "pkg/show.py": 'print("value", 6 * 7)\n'}
    config = make_site(tmp_path, pages, snippets)
    text = config.read_text(encoding="utf-8").replace("plugins:\n", "plugins:\n  - search\n", 1)
    config.write_text(text + "watch: [snippets]\n", "utf-8")
    port = free_port()
    (tmp_path / "tmp").mkdir()  # the server's temporary folders (tests/test_serve_errors.py)
    server = subprocess.Popen(
        [*MKDOCS, "serve", *make_serve_args(), "-f", str(config), "-a", f"127.0.0.1:{port}"],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    snippet = tmp_path / "snippets" / "pkg" / "show.py"
    site = Served(f"http://127.0.0.1:{port}/", Log(server), server, snippet)
    try:
        site.log.wait_for(r"Serving on")
        site.page("lesson/", "value 42")
        yield site
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_snippet_edit_rebuilds_the_pages_that_show_it_and_no_other(served):
    log = served.log
    assert not any("A 'dirty' build" in line for line in log.lines), "warning not dropped"
    start = len(log.lines)
    time.sleep(1.0)  # a new mtime the watcher can see
    served.snippet.write_text('print("value", 6 * 8)\n', "utf-8")
    for lang in ("", "en/"):
        page = served.page(f"{lang}lesson/", "value 48")
        # a page --dirty did not re-read keeps its nav title (MkDocs would print "None")
        assert "Other page" in page and ">None<" not in re.sub(r"\s+", "", page)
    log.wait_for(r"Reloading browsers", start)
    # one line per language build (static-i18n builds English inside the Chinese build)
    lines = [line for line in log.lines[start:] if "serve_rebuild:" in line]
    assert lines and all("snippets/pkg/show.py changed" in line for line in lines), lines
    named = {page for line in lines for page in line.split("rebuilding ", 1)[1].split(", ")}
    assert named == {"lesson.md", "lesson.en.md", "more.md", "more.en.md"}, lines

    docs = served.search_docs()
    locations = [d["location"] for d in docs]
    assert len(locations) == len(set(locations)), "a rebuilt page is in the index twice"
    assert {"en/lesson/", "en/other/", "lesson/", "other/"} <= set(locations)
    assert not any("value 42" in d["text"] for d in docs), "stale search entries"
    assert sum("value 48" in d["text"] for d in docs) == 4  # two pages, two languages


def test_the_page_open_in_a_browser_is_rebuilt_first_and_reloads_once(served):
    log = served.log
    tab = LiveReloadTab(f"{served.base}lesson/")
    try:
        time.sleep(1.0)  # the tab's poll is waiting; a new mtime the watcher can see
        start, edited = len(log.lines), time.perf_counter()
        served.snippet.write_text('print("value", 6 * 8)\n', "utf-8")

        first = log.wait_for(r"serve_rebuild: snippets/pkg/show.py changed", start)
        assert first.endswith("rebuilding lesson.md"), first  # the open page alone
        log.wait_for(r"serve_rebuild: second pass", start)
        for url in ("more/", "en/lesson/", "en/more/"):  # the second pass rebuilt the rest
            served.page(url, "value 48")
        time.sleep(2.0)  # the tab would have reloaded again by now if it were told to
        order = [
            line.split("] ", 1)[-1]
            for line in log.lines[start:]
            if "serve_rebuild:" in line or "Reloading browsers" in line
        ]
        first_reload = order.index("Reloading browsers")
        assert not any("second pass" in line for line in order[:first_reload]), order
        assert any("second pass" in line for line in order[first_reload:]), order
        assert order[-1] == "Reloading browsers", order  # the second pass finished
        reloads = tab.reloads_since(edited)
        assert len(reloads) == 1, f"the open page reloaded {len(reloads)} times: {order}"
        assert "value 48" in tab.html
        assert not any("value 42" in d["text"] for d in served.search_docs()), "stale entries"
    finally:
        tab.close()


def test_a_removed_page_is_gone_from_the_served_site_and_its_search(served):
    assert served.page("more/", "value 42") and served.page("en/more/", "value 42")
    docs = served.snippet.parents[2] / "docs"
    start = len(served.log.lines)
    time.sleep(1.0)
    for name in ("more.md", "more.en.md"):
        (docs / name).unlink()
    served.log.wait_for(r"rebuilding every page", start)
    served.log.wait_for(r"Reloading browsers", start)
    for url in ("more/", "en/more/", "more/index.md", "en/more/index.md"):
        assert fetch(f"{served.base}{url}")[0] == 404, f"{url} still served"
    locations = {d["location"].split("#")[0] for d in served.search_docs()}
    assert {"lesson/", "en/lesson/"} <= locations and not {"more/", "en/more/"} & locations
    assert "value 42" in served.page("lesson/", "value 42")  # the rest still served


def test_outside_serve_dirty_the_stage_does_nothing(monkeypatch):
    monkeypatch.setattr(SESSION, "serving", False)  # restored after the test
    monkeypatch.setattr(SESSION, "dirty", False)
    files = object()
    assert serve_rebuild.mark_changed_pages(files, config=None) is files
    session.start("build", dirty=True)
    assert not serve_rebuild.active()
    session.start("serve", dirty=False)
    assert not serve_rebuild.active()
    session.start("serve", dirty=True)
    assert serve_rebuild.active()


def test_a_failed_build_reloads_every_open_page_and_drops_its_deferred_pages(monkeypatch):
    monkeypatch.setattr(SESSION, "dirty", True)
    state = serve_rebuild.ServeState()
    monkeypatch.setattr(serve_rebuild, "STATE", state)
    state.last_build = serve_rebuild.LastBuild(True, frozenset({"more/"}), first_pass_after_ms=5)
    state.deferring = {"other/"}
    serve_rebuild.build_failed()
    assert not state.last_build.spares("lesson/", 100), "a page would keep the stale output"
    assert state.deferring == set()


def test_the_template_cache_returns_what_jinja_stored():
    import jinja2

    cache = serve_rebuild._TemplateCache()
    env = jinja2.Environment(loader=jinja2.DictLoader({"t": "{{ 6 * 7 }}"}), bytecode_cache=cache)
    assert env.get_template("t").render() == "42"
    fresh = jinja2.Environment(loader=jinja2.DictLoader({"t": "{{ 6 * 8 }}"}), bytecode_cache=cache)
    assert fresh.get_template("t").render() == "48", "bytecode of a changed template reused"


def test_a_failed_rebuild_shows_in_the_open_page_and_the_fix_brings_it_back(served):
    """A save that breaks the build (a page left without its translation) does not hold the
    browser: every page answers at once with the problems, and the next save restores it."""
    translation = served.snippet.parents[2] / "docs" / "more.en.md"
    text = translation.read_text(encoding="utf-8")
    tab = LiveReloadTab(f"{served.base}lesson/")
    try:
        time.sleep(1.0)
        start, broken = len(served.log.lines), time.perf_counter()
        translation.unlink()
        served.log.wait_for(r"Rebuild failed", start)
        page = wait_for(f"{served.base}lesson/", lambda s, b: s == 500, served.server)
        assert "构建失败" in page and "more.en.md" in page, page[-2000:]
        page = wait_for(f"{served.base}en/other/", lambda s, b: s == 500, served.server)
        assert "Build failed" in page and "Missing translations" in page
        assert fetch(f"{served.base}search/search_index.json")[0] == 200, "files still served"
        deadline = time.monotonic() + 30
        while "more.en.md" not in tab.html and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "Build failed" not in tab.html and "构建失败" in tab.html, "the tab was not reloaded"

        start = len(served.log.lines)
        translation.write_text(text, encoding="utf-8")
        served.log.wait_for(r"Reloading browsers", start)
        served.page("lesson/", "value 42")
        served.page("en/more/", "value 42")
        deadline = time.monotonic() + 30
        while "value 42" not in tab.html and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "value 42" in tab.html, "the tab did not come back when the build was fixed"
        assert len(tab.reloads_since(broken)) == 2  # onto the failure page, then back
    finally:
        tab.close()
