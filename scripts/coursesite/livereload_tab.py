"""A browser tab showing a page under `mkdocs serve`, as MkDocs' live-reload script behaves: it
polls /livereload/<epoch>/<tab id> with the page as Referer while it is visible, and loads the
page again when the answer is a newer epoch. Used by tests/test_serve_rebuild.py and
scripts/bench_build.py; a real browser sends the same requests."""

import re
import threading
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit

SCRIPT = re.compile(r"livereload\((\d+), (\d+)\);")  # MkDocs' script at the end of each page
POLL_TIMEOUT_S = 90  # MkDocs answers a waiting poll within a minute


class LiveReloadTab:
    def __init__(self, url: str) -> None:
        self.url = url
        self.loads: list[tuple[float, str]] = []  # (time.perf_counter(), page HTML) per load
        self._closed = False
        self._lock = threading.Lock()
        self._load()
        threading.Thread(target=self._poll, daemon=True).start()

    def _load(self) -> None:
        try:
            with urllib.request.urlopen(self.url, timeout=POLL_TIMEOUT_S) as response:
                html = response.read().decode("utf-8")
        except urllib.error.HTTPError as error:  # a browser shows an error page too
            html = error.read().decode("utf-8")
        with self._lock:
            self.loads.append((time.perf_counter(), html))

    def _poll(self) -> None:
        parts = urlsplit(self.url)
        while not self._closed:
            epoch, tab = SCRIPT.search(self.html).groups()
            request = urllib.request.Request(
                f"{parts.scheme}://{parts.netloc}/livereload/{epoch}/{tab}",
                headers={"Referer": self.url},
            )
            try:
                with urllib.request.urlopen(request, timeout=POLL_TIMEOUT_S) as response:
                    answer = int(response.read())
            except OSError:
                return  # the server stopped
            if answer > int(epoch) and not self._closed:
                self._load()

    @property
    def html(self) -> str:
        with self._lock:
            return self.loads[-1][1]

    def reloads_since(self, since: float) -> list[float]:
        with self._lock:
            return [t for t, _ in self.loads if t > since]

    def close(self) -> None:
        """Stop polling (its waiting poll ends when the server answers or stops)."""
        self._closed = True
