"""Under `make serve` a rebuild that fails shows its errors in the browser.

When a rebuild fails (`--strict` warnings such as a page without its translation or a link to a
removed page, a hook raising, a broken mkdocs.yml), MkDocs logs it and then holds every page
request until a later rebuild succeeds: the author's browser waits with no message ("the server
will appear stuck"). Under `mkdocs serve` this stage wraps the server's builder and app: a failed
rebuild is recorded with the warnings and errors MkDocs logged during it, every page request is
answered at once with a page that lists them (in the page's language, from static-i18n's
languages), the open tabs reload to show it, and the failure page, which carries MkDocs' own
live-reload script, reloads onto the site after the next successful rebuild. Stylesheets, scripts
and images are still served from the last build. A raising executed block does not fail a serve
build at all (coursesite.exec_errors shows it in its own page). `make build` and `make test` are not
affected: they never serve. See docs/adr/0014-serve-rebuilds.md.
"""

import html
import logging
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mkdocs.exceptions import Abort

_log = logging.getLogger("mkdocs.hooks.serve_failures")
WSGIApp = Callable[[dict, Callable], Iterable[bytes]]
Inject = Callable[[bytes, int], bytes]  # MkDocs' live-reload script added to a page at an epoch

TEXT = {  # HTML
    "zh": {
        "title": "构建失败",
        "lead": "这次保存后的重新构建没有成功，下面是 MkDocs 报告的问题。"
        "修好并保存后，本页会自动重新加载。<code>make build</code> 会因同样的问题失败。",
        "logged": "构建期间记录的警告和错误",
        "error": "错误",
    },
    "en": {
        "title": "Build failed",
        "lead": "The rebuild after your last save did not succeed; MkDocs reported the problems "
        "below. Fix them and save: this page reloads by itself. <code>make build</code> fails on "
        "the same problems.",
        "logged": "Warnings and errors logged during the build",
        "error": "Error",
    },
}


def now_ms() -> int:
    """The clock of MkDocs' live-reload epochs (mkdocs.livereload._timestamp)."""
    return round(time.monotonic() * 1000)


@dataclass(frozen=True)
class Failure:
    error: str  # what the build raised: its message, or its traceback when unexpected
    logged: tuple[str, ...]  # "LEVEL - message" of each warning or error logged during it
    epoch: int  # a live-reload epoch before the next build's: a later build reloads the page


def describe(error: BaseException) -> str:
    """An Abort (strict warnings, a BuildError) is its message; anything else its traceback."""
    if isinstance(error, Abort):
        return str(error)
    return "".join(traceback.format_exception(error)).rstrip()


class LoggedProblems(logging.Handler):
    """The warnings and errors the build under way logs under `mkdocs` (what --strict counts)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("mkdocs.livereload"):
            return  # the server's own request log ("GET /x code 404"), not the build's
        self.lines.append(f"{record.levelname} - {record.getMessage()}")


class Builds:
    """The last rebuild's outcome: None after a success, its Failure after a failure."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._failure: Failure | None = None

    @property
    def failure(self) -> Failure | None:
        with self._lock:
            return self._failure

    def finished(self, failure: Failure | None) -> None:
        with self._lock:
            self._failure = failure


def reporting(builder: Callable, builds: Builds, problems: LoggedProblems) -> Callable:
    """MkDocs' builder, with a failure recorded instead of raised: MkDocs then moves on as after
    a success, so no request waits and every open tab reloads (onto the failure page)."""

    def build(*args, **kwargs) -> None:
        problems.lines = []
        try:
            builder(*args, **kwargs)
        except Exception as error:  # shown in the browser; the terminal has it too
            failure = Failure(describe(error), tuple(problems.lines), now_ms())
            builds.finished(failure)
            _log.error(
                "Rebuild failed: %s\nEvery page shows the problems until a save fixes them.",
                failure.error,
            )
        else:
            builds.finished(None)

    return build


def is_page(path: str, mount_path: str) -> bool:
    return path.startswith(mount_path) and (path.endswith("/") or path.endswith(".html"))


def language_of(path: str, mount_path: str, prefixes: dict[str, str]) -> str:
    """The language whose pages live under the path's prefix ("" is the default language's)."""
    rest = path[len(mount_path) :]
    return max(
        (lang for lang, prefix in prefixes.items() if rest.startswith(prefix)),
        key=lambda lang: len(prefixes[lang]),
    )


def failure_page(failure: Failure, language: str) -> str:
    text = TEXT.get(language, TEXT["en"])
    logged = "".join(f"<li><code>{html.escape(line)}</code></li>" for line in failure.logged)
    section = f"<h2>{text['logged']}</h2><ul>{logged}</ul>" if logged else ""
    return (
        f'<!doctype html><html lang="{"zh-Hans" if language == "zh" else "en"}"><head>'
        f'<meta charset="utf-8"><title>{text["title"]}</title>'
        "<style>body{font:16px/1.6 system-ui,sans-serif;max-width:60rem;margin:2rem auto;"
        "padding:0 1rem}pre{white-space:pre-wrap;background:#f5f5f5;padding:1rem}"
        "h1{color:#b00020}li{margin:.3rem 0}</style></head><body>"
        f'<h1 id="build-failed">{text["title"]}</h1><p>{text["lead"]}</p>'
        f"<h2>{text['error']}</h2><pre>{html.escape(failure.error)}</pre>{section}"
        "</body></html>"
    )


def failure_pages(
    app: WSGIApp, builds: Builds, mount_path: str, prefixes: dict[str, str], inject: Inject
) -> WSGIApp:
    """MkDocs' server app, with page requests answered by the failure page after a failed build
    (`prefixes`: language -> where its pages live, "" or "en/")."""

    def serve(environ: dict, start_response: Callable) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        failure = builds.failure
        if failure is None or not is_page(path, mount_path):
            return app(environ, start_response)
        page = failure_page(failure, language_of(path, mount_path, prefixes))
        body = inject(page.encode("utf-8"), failure.epoch)
        start_response(
            "500 Internal Server Error",
            [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))],
        )
        return [body]

    return serve


def watch_server(server, prefixes: dict[str, str]):
    """`prefixes`: language -> where its pages live ("" or "en/"), every configured language."""
    # Two details of MkDocs 1.6's LiveReloadServer: it calls `self.builder()` for each rebuild,
    # and `_inject_js_into_html` adds its live-reload script to a page; the served test in
    # tests/test_serve_rebuild.py and tests/browser/test_serve_failures.py fail if either changes
    builds, problems = Builds(), LoggedProblems()
    logging.getLogger("mkdocs").addHandler(problems)
    server.builder = reporting(server.builder, builds, problems)
    server.set_app(
        failure_pages(
            server.get_app(),
            builds,
            server.mount_path,
            prefixes,
            server._inject_js_into_html,
        )
    )
    return server
