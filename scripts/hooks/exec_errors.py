"""MkDocs hook: a failing markdown-exec block names the page it is on.

markdown-exec logs "Execution of python code block 'ID' exited with errors" without the page;
this adds it, so `mkdocs build --strict` points at the file to fix.
"""

import logging

from mkdocs.structure.pages import Page

_current_page: list[str] = []


class _NamePage(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if _current_page and record.levelno >= logging.WARNING:
            record.msg = f"{_current_page[0]}: {record.msg}"
        return True


_FILTER = _NamePage()


def on_config(config, **_):
    # markdown-exec logs through one child logger per module: filter each of them.
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("mkdocs.plugins.markdown_exec"):
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
    return config


# Markdown is rendered (and blocks executed) after every on_page_markdown, before on_page_content.
def on_page_markdown(markdown: str, page: Page, **_) -> str:
    _current_page[:] = [f"docs/{page.file.src_uri}"]
    return markdown


def on_page_content(html: str, **_) -> str:
    _current_page.clear()
    return html
