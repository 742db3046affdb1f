"""scripts/hooks/serve_rebuild.py: under `make serve` (`mkdocs serve --dirty`) a save rebuilds
exactly the pages it can change, and those pages show the change (never stale output).

Unit tests of the dependency rules, then a fixture site served the way `make serve` serves."""

import json
import re
import subprocess
import threading
import time

import pytest

import serve_rebuild  # scripts/hooks/serve_rebuild.py
from conftest import MKDOCS, ROOT, make_serve_args
from test_build_failures import make_site
from test_serve_errors import fetch, free_port, wait_for

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


def test_make_serve_is_dirty_and_the_site_loads_the_hook():
    assert "--dirty" in make_serve_args(), "make serve without --dirty rebuilds every page"
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "scripts/hooks/serve_rebuild.py" in config


def test_a_snippet_edit_rebuilds_the_pages_that_show_it_and_no_other(tmp_path):
    pages = {
        "index.md": "# 首页\n",
        "index.en.md": "# Home\n",
        "lesson.md": LESSON,
        "lesson.en.md": LESSON,
        "more.md": LESSON.replace("# Lesson", "# More"),  # two pages rebuilt per language
        "more.en.md": LESSON.replace("# Lesson", "# More"),
        "other.md": OTHER,
        "other.en.md": OTHER,
    }
    snippets = {"pkg/__init__.py": "", "pkg/show.py": 'print("value", 6 * 7)\n'}
    config = make_site(tmp_path, pages, snippets)
    text = config.read_text(encoding="utf-8").replace("plugins:\n", "plugins:\n  - search\n", 1)
    config.write_text(text + "watch: [snippets]\n", "utf-8")
    port = free_port()
    server = subprocess.Popen(
        [*MKDOCS, "serve", *make_serve_args(), "-f", str(config), "-a", f"127.0.0.1:{port}"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    log = Log(server)
    base = f"http://127.0.0.1:{port}/"
    try:
        log.wait_for(r"Serving on")
        wait_for(f"{base}lesson/", lambda s, b: s == 200 and "value 42" in b, server)
        assert not any("A 'dirty' build" in line for line in log.lines), "warning not dropped"

        start = len(log.lines)
        time.sleep(1.0)  # a new mtime the watcher can see
        (tmp_path / "snippets" / "pkg" / "show.py").write_text('print("value", 6 * 8)\n', "utf-8")
        for lang in ("", "en/"):
            page = wait_for(f"{base}{lang}lesson/", lambda s, b: "value 48" in b, server)
            # a page --dirty did not re-read keeps its nav title (MkDocs would print "None")
            assert "Other page" in page and ">None<" not in re.sub(r"\s+", "", page)
        log.wait_for(r"Reloading browsers", start)
        # one line per language build (static-i18n builds English inside the Chinese build)
        lines = [line for line in log.lines[start:] if "serve_rebuild:" in line]
        assert lines and all("snippets/pkg/show.py changed" in line for line in lines), lines
        named = {page for line in lines for page in line.split("rebuilding ", 1)[1].split(", ")}
        assert named == {"lesson.md", "lesson.en.md", "more.md", "more.en.md"}, lines

        status, text = fetch(f"{base}search/search_index.json")
        assert status == 200
        locations = [d["location"] for d in json.loads(text)["docs"]]
        assert len(locations) == len(set(locations)), "a rebuilt page is in the index twice"
        assert {"en/lesson/", "en/other/", "lesson/", "other/"} <= set(locations)
        docs = json.loads(text)["docs"]
        assert not any("value 42" in d["text"] for d in docs), "stale search entries"
        assert sum("value 48" in d["text"] for d in docs) == 4  # two pages, two languages
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_outside_serve_dirty_the_hook_does_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(serve_rebuild.DIRTY_MARKER, "0")
    files = object()
    assert serve_rebuild.on_files(files, config=None) is files
    serve_rebuild.on_startup("build", dirty=True)
    assert not serve_rebuild.active()
    serve_rebuild.on_startup("serve", dirty=False)
    assert not serve_rebuild.active()


def test_the_template_cache_returns_what_jinja_stored():
    import jinja2

    cache = serve_rebuild._TemplateCache()
    env = jinja2.Environment(loader=jinja2.DictLoader({"t": "{{ 6 * 7 }}"}), bytecode_cache=cache)
    assert env.get_template("t").render() == "42"
    fresh = jinja2.Environment(loader=jinja2.DictLoader({"t": "{{ 6 * 8 }}"}), bytecode_cache=cache)
    assert fresh.get_template("t").render() == "48", "bytecode of a changed template reused"
