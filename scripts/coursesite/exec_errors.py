"""A failing executed block names its page; under `mkdocs serve` it shows in the page.

markdown-exec logs "Execution of python code block 'ID' exited with errors" without the page;
this adds it, so `mkdocs build --strict` points at the file to fix.

Under `mkdocs serve --strict` (`make serve`) that warning would abort the rebuild, and MkDocs'
server then holds the author's browser request with no message until the file is fixed. There,
the warning is printed but not counted, the page opens with the error (block id, page,
traceback) above the traceback markdown-exec renders in place, the rest of the site keeps
serving, and the next save rebuilds the page. A failing notebook cell renders its traceback in
the notebook page the same way. `make build` and `make test` keep the strict gate.
"""

import html
import logging

from coursesite import Build, PageInfo
from coursesite.session import SESSION

_current_page: list[str] = []
_page_errors: list[str] = []  # the current page's failing blocks (under serve)
_report = logging.getLogger("course.exec_errors")  # outside "mkdocs": --strict does not count it


class _NamePage(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not (_current_page and record.levelno >= logging.WARNING):
            return True
        message = f"{_current_page[0]}: {record.getMessage()}"
        if not SESSION.serving:
            record.msg, record.args = message, ()
            return True
        _page_errors.append(message)
        _report.warning("WARNING (shown in the page; not counted under serve) - %s", message)
        return False


_FILTER = _NamePage()


def error_banner(messages: list[str]) -> str:
    """An admonition listing each failing block's message (block id, page, traceback)."""
    items = "".join(f"<pre><code>{html.escape(m)}</code></pre>" for m in messages)
    title = f"{len(messages)} executed block(s) raised an error; the page shows what ran before"
    return (
        f'<div class="admonition failure" id="executed-block-errors">'
        f'<p class="admonition-title">{title}</p>{items}</div>'
    )


def watch_markdown_exec() -> None:
    """Name the page in markdown-exec's warnings (under serve: keep them off the strict count).
    markdown-exec logs through one child logger per module: each gets the filter."""
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("mkdocs.plugins.markdown_exec"):
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)


# Markdown is rendered (and blocks executed) after every Markdown stage, before the content ones.
def start_page(markdown: str, page: PageInfo, build: Build) -> str:
    _current_page[:] = [page.where]
    _page_errors.clear()
    return markdown


def add_banner(html_content: str, page: PageInfo, build: Build) -> str:
    _current_page.clear()
    if _page_errors:
        html_content = error_banner(_page_errors) + html_content
        _page_errors.clear()
    return html_content
