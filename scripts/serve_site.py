"""Serve a built site on 127.0.0.1 and open it in Debian's Chromium.

Shared by tests/browser/, scripts/screenshots.py and scripts/bench_pages.py. The site is served
under the path of `site_url` (the SITE_URL environment variable, as in mkdocs.yml), because the
language switcher and search use that path.
"""

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = Path("/usr/bin/chromium")
DEFAULT_SITE_URL = "http://127.0.0.1:8000/"  # mkdocs.yml's default for site_url
# Quiet offline Chromium (CONTRIBUTING.md). The resolver rule makes every host except the test
# server unresolvable, so a page that asks another host is reported and never reaches the network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

# Resolves to performance.now() once MathJax has typeset the page and Mermaid has replaced every
# <pre class="mermaid">, or to null after `timeoutMs`.
RENDERED_JS = """async (timeoutMs) => {
  const rendered = (async () => {
    if (window.MathJax?.startup?.promise) await window.MathJax.startup.promise;
    while (document.querySelector("pre.mermaid")) await new Promise(r => setTimeout(r, 50));
    return performance.now();
  })();
  return Promise.race([rendered, new Promise(r => setTimeout(() => r(null), timeoutMs))]);
}"""


def site_prefix() -> str:
    """The path the site is published under, e.g. "/" or "/course/"."""
    path = urlsplit(os.environ.get("SITE_URL") or DEFAULT_SITE_URL).path or "/"
    return path if path.endswith("/") else path + "/"


def page_paths(site: Path) -> list[str]:
    """Every page of the build, as a URL path relative to the site root: "", "en/glossary/"..."""
    pages = []
    for html in sorted(site.rglob("index.html")):
        rel = html.parent.relative_to(site)
        if rel.parts and rel.parts[0] in {"assets", "search", "404"}:
            continue
        pages.append("".join(f"{part}/" for part in rel.parts))
    return pages


class _Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a real web server

    def __init__(self, *args, prefix: str, **kwargs) -> None:
        self.prefix = prefix
        super().__init__(*args, **kwargs)

    def send_head(self):
        if not self.path.startswith(self.prefix):
            self.send_error(404, f"outside the site prefix {self.prefix}")
            return None
        return super().send_head()

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """A missing file gets the site's 404.html, as GitHub Pages and most web servers do."""
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def translate_path(self, path: str) -> str:
        return super().translate_path("/" + path.removeprefix(self.prefix))

    def log_message(self, *args) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a closed tab is not an error
            super().handle_error(request, client_address)


@contextmanager
def serve(site: Path, prefix: str | None = None) -> Iterator[str]:
    """Serve `site` on a free port; yields the site's base URL, e.g. http://127.0.0.1:41234/."""
    prefix = prefix or site_prefix()
    handler = partial(_Handler, directory=str(site), prefix=prefix)
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}{prefix}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def launch_chromium(playwright):
    """Debian's Chromium through Playwright (never `playwright install`)."""
    return playwright.chromium.launch(
        executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
    )
