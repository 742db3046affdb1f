"""Every lesson snippet is a real file a reader can run: on its own, from any directory,
and an executed block prints exactly what `python snippets/<slug>/<file>.py` prints.

`snippets/` is an installed (editable) package, so a snippet runs from any directory with no
sys.path lines (tests/test_course.py checks that none remain).
"""

import re
import subprocess
import sys

import pytest
from markdown_exec._internal.formatters.python import _run_python

from conftest import ROOT, chinese_pages
from coursesite.syntax import INCLUDE_LINE
from markdown_source import read_page

SNIPPETS = ROOT / "snippets"
LIBRARIES = {"core"}  # the arithmetic core, imported by lessons; it prints nothing
FILES = sorted(
    p for p in SNIPPETS.glob("*/*.py") if p.name != "__init__.py" and p.parent.name not in LIBRARIES
)
PLAIN_MAIN = re.compile(r"^main\(\)\s*# markdown-exec: hide$", re.MULTILINE)


def run_standalone(path, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(path)], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(SNIPPETS).as_posix())
def test_snippet_runs_on_its_own_from_any_directory(path, tmp_path):
    proc = run_standalone(path, tmp_path)
    assert proc.returncode == 0, f"{path.relative_to(ROOT)} failed on its own:\n{proc.stderr}"
    assert proc.stdout.strip(), f"{path.relative_to(ROOT)} printed nothing when run on its own"


def included_plain_main_blocks():
    for page in chinese_pages():
        for block in read_page(page).executed_blocks:
            includes = [m[1] for line in block.body.splitlines() if (m := INCLUDE_LINE.match(line))]
            if len(includes) == 1 and PLAIN_MAIN.search(block.body):
                yield pytest.param(SNIPPETS / includes[0], block.block_id, id=block.block_id)


@pytest.mark.parametrize(("path", "block_id"), list(included_plain_main_blocks()))
def test_build_prints_what_the_reader_gets(path, block_id, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    built = _run_python(path.read_text(encoding="utf-8") + "\nmain()\n", id=block_id)
    assert built == run_standalone(path, tmp_path).stdout, f"{block_id}: build and reader differ"
