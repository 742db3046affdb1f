"""Under `make serve` (`mkdocs serve --strict --dirty`) a raising executed block shows its error
in the page while the site keeps serving, and the page recovers on the next save; `mkdocs build
--strict` still fails (tests/test_build_failures.py)."""

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from subprocess import Popen

import pytest

from conftest import MKDOCS, make_serve_args
from test_build_failures import make_site, page_pair

# `mkdocs serve` on a free port, with timed waits: one xdist worker for all such files
pytestmark = pytest.mark.one_worker

BROKEN = '# L\n\n```python exec="on" id="broken-block"\nraise RuntimeError("boom")\n```\n'
FIXED = '# L\n\n```python exec="on" result="text" id="broken-block"\nprint(6 * 7)\n```\n'
TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def wait_for(url: str, ready: Callable[[int, str], bool], server: subprocess.Popen) -> str:
    deadline = time.monotonic() + TIMEOUT_S
    status, body = 0, ""
    while time.monotonic() < deadline:
        assert server.poll() is None, f"mkdocs serve exited:\n{server.stdout.read()}"
        try:
            status, body = fetch(url)
            if ready(status, body):
                return body
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.5)
    pytest.fail(f"{url} not as expected after {TIMEOUT_S} s (HTTP {status}):\n{body[-2000:]}")


def start_server(site: Path, body: str, *, prefix: tuple[str, ...] = ()) -> tuple[str, Popen]:
    """`mkdocs serve` with `make serve`'s options (--strict, --livereload, --dirty) on a fixture
    site whose lesson page is `body`; its temporary folders go to site/tmp, never to /tmp."""
    config = make_site(site, page_pair(body))
    (site / "tmp").mkdir()
    port = free_port()
    server = subprocess.Popen(
        [
            *prefix,
            *MKDOCS,
            "serve",
            *make_serve_args(),
            "-f",
            str(config),
            "-a",
            f"127.0.0.1:{port}",
        ],
        cwd=site,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "TMPDIR": str(site / "tmp")},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    return f"http://127.0.0.1:{port}/", server


@pytest.fixture
def served(tmp_path) -> Iterator[tuple[str, Path, Popen]]:
    base, server = start_server(tmp_path, BROKEN)
    try:
        yield base, tmp_path, server
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stopped_server_leaves_no_temporary_folder(served, stop):
    """coursesite.serve_exit: stopped by a signal instead of Ctrl-C, MkDocs still removes
    its temporary site (~30 MB for the course) and the build's folders."""
    base, site, server = served
    wait_for(f"{base}lesson/", lambda s, b: s == 200, server)
    assert any((site / "tmp").iterdir()), "the server built into no temporary folder"
    server.send_signal(stop)
    assert server.wait(timeout=30) == 0, server.stdout.read()
    assert not any((site / "tmp").iterdir()), sorted(p.name for p in (site / "tmp").iterdir())


SLOW = (
    '# L\n\n```python exec="on" id="slow-block"\n'
    'import pathlib, time\npathlib.Path("building").touch()\ntime.sleep(60)\n```\n'
)


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_server_stopped_during_its_first_build_leaves_no_temporary_folder(tmp_path, stop):
    """The first build is the longest phase of `make serve`; a signal then exits cleanly too."""
    _, server = start_server(tmp_path, SLOW)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not (tmp_path / "building").exists():  # the page's block runs: mid-build
            assert server.poll() is None and time.monotonic() < deadline, server.stdout.read()
            time.sleep(0.2)
        assert any((tmp_path / "tmp").iterdir())
        server.send_signal(stop)
        server.wait(timeout=30)  # well before the block's 60 s
        assert not any((tmp_path / "tmp").iterdir()), sorted((tmp_path / "tmp").iterdir())
    finally:
        server.kill()
        server.wait(timeout=30)


def test_an_ignored_hangup_stays_ignored(tmp_path):
    """`nohup make serve`: started to ignore SIGHUP, so a logout must not stop the server."""
    base, server = start_server(tmp_path, FIXED, prefix=("nohup",))
    try:
        wait_for(f"{base}lesson/", lambda s, b: s == 200, server)
        server.send_signal(signal.SIGHUP)
        time.sleep(2)
        assert server.poll() is None, "SIGHUP stopped a server started under nohup"
        wait_for(f"{base}lesson/", lambda s, b: s == 200, server)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_raising_block_shows_in_the_page_and_the_page_recovers(served):
    base, site, server = served
    for lang in ("", "en/"):
        page = wait_for(f"{base}{lang}lesson/", lambda s, b: s == 200, server)
        assert 'id="executed-block-errors"' in page, page[-2000:]
        assert "broken-block" in page and "docs/lesson" in page
        assert "RuntimeError: boom" in page, "the traceback is not in the page"
    home = wait_for(base, lambda s, b: s == 200, server)
    assert "executed-block-errors" not in home, "a page without a failing block shows an error"

    (site / "docs" / "lesson.md").write_text(FIXED, encoding="utf-8")
    # the output itself: a bare "42" can also be part of the server's port in the page
    page = wait_for(f"{base}lesson/", lambda s, b: s == 200 and ">42\n<" in b, server)
    assert "executed-block-errors" not in page and "RuntimeError" not in page
