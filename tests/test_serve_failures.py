"""coursesite.serve_failures: under `make serve` a failed rebuild answers every page at once
with its problems, in the page's language, instead of holding the request until a fix.

Unit tests here; tests/test_serve_rebuild.py serves a fixture site, breaks it and mends it."""

import logging

import pytest
from mkdocs.exceptions import Abort

from coursesite import serve_failures


def builder_that(*outcomes):
    """A builder that, on each call, logs and raises (or returns) the next of `outcomes`."""
    pending = list(outcomes)

    def build(*args, **kwargs):
        warning, error = pending.pop(0)
        # a request served meanwhile: the server's log, not the build's
        logging.getLogger("mkdocs.livereload").warning('"GET /gone/ HTTP/1.1" code 404')
        if warning:
            logging.getLogger("mkdocs.plugins.x").warning(warning)
        if error:
            raise error

    return build


@pytest.fixture
def problems():
    handler = serve_failures.LoggedProblems()
    logging.getLogger("mkdocs").addHandler(handler)
    yield handler
    logging.getLogger("mkdocs").removeHandler(handler)


def test_a_failed_build_is_recorded_not_raised_and_a_success_clears_it(problems):
    builds = serve_failures.Builds()
    build = serve_failures.reporting(
        builder_that(
            ("Doc file 'index.md' contains a link 'gone.md'", Abort("Aborted with 1 warnings")),
            (None, None),
            (None, KeyError("a hook's bug")),
        ),
        builds,
        problems,
    )
    build()  # does not raise: MkDocs moves on and no request waits
    failure = builds.failure
    assert failure is not None and failure.error == "Aborted with 1 warnings"
    assert failure.logged == ("WARNING - Doc file 'index.md' contains a link 'gone.md'",)
    assert failure.epoch >= serve_failures.now_ms() - 1000

    build()
    assert builds.failure is None, "a successful build still shows the failure"

    build()  # each build lists only its own problems; an unexpected error keeps its traceback
    assert builds.failure.logged == ()
    error = builds.failure.error
    assert error.startswith("Traceback") and error.endswith('KeyError: "a hook\'s bug"')


def app(environ, start_response):
    start_response("200 OK", [])
    return [b"from the site"]


def get(wrapped, path):
    answer = {}

    def start_response(status, headers):
        answer.update(status=status, headers=dict(headers))

    body = b"".join(wrapped({"PATH_INFO": path}, start_response)).decode("utf-8")
    return answer["status"], body


PREFIXES = {"zh": "", "en": "en/"}


def inject(page: bytes, epoch: int) -> bytes:
    """Stands in for MkDocs' _inject_js_into_html: records the epoch the page reloads after."""
    return page + b"<!-- reloads after %d -->" % epoch


def test_pages_show_the_failure_in_their_language_and_other_files_are_served():
    builds = serve_failures.Builds()
    wrapped = serve_failures.failure_pages(app, builds, "/", PREFIXES, inject)
    assert get(wrapped, "/lesson/") == ("200 OK", "from the site")

    failure = serve_failures.Failure("Aborted <strict>", ("WARNING - a & b",), epoch=1234)
    builds.finished(failure)
    status, page = get(wrapped, "/lesson/")
    assert status.startswith("500") and "构建失败" in page and 'lang="zh-Hans"' in page
    assert "Aborted &lt;strict&gt;" in page and "WARNING - a &amp; b" in page, "not escaped"
    assert page.endswith("<!-- reloads after 1234 -->"), "no reload when the build is fixed"
    status, page = get(wrapped, "/en/lesson/index.html")
    assert status.startswith("500") and "Build failed" in page and 'lang="en"' in page
    for path in ("/assets/stylesheets/main.css", "/search/search_index.json", "/livereload/1/2"):
        assert get(wrapped, path) == ("200 OK", "from the site"), path

    builds.finished(None)
    assert get(wrapped, "/en/lesson/") == ("200 OK", "from the site")


def test_a_mount_path_is_respected():
    builds = serve_failures.Builds()
    builds.finished(serve_failures.Failure("x", (), 1))
    wrapped = serve_failures.failure_pages(app, builds, "/course/", PREFIXES, inject)
    assert get(wrapped, "/course/en/")[1].count("Build failed") == 2  # title and heading
    assert get(wrapped, "/elsewhere/") == ("200 OK", "from the site")


@pytest.mark.parametrize(
    "path, language",
    [("/", "en"), ("/en/x/", "en"), ("/fr/x/", "fr"), ("/fresh/", "en"), ("/zh/", "en")],
)
def test_a_page_belongs_to_the_language_of_its_prefix(path, language):
    # a site whose default is English, with French under fr/
    assert serve_failures.language_of(path, "/", {"en": "", "fr": "fr/"}) == language
