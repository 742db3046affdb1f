"""MkDocs hook: two fixes to Material's HTML that the browser tier checks (docs/adr/0008).

1. static-i18n turns Material's <link rel="alternate" hreflang> into links to the page's
   counterpart. Material's JavaScript expects language *roots* there and fetches
   <href>/sitemap.xml for each one: two 404s on every page (mkdocs-material#6582). These
   relative links are dropped; site_meta.py writes absolute ones (with x-default), and
   javascripts/requests-on-demand.js keeps Material from fetching under them (docs/adr/0012).
2. Material's search dialog (<div class="md-search" role="dialog">) has no accessible name
   (axe: aria-dialog-name); it gets the search box's label.
"""

import re

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.pages import Page

ALTERNATE = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')
SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
LABEL = {"zh": "搜索", "en": "Search"}


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    output = ALTERNATE.sub("", output)
    label = LABEL.get(config.theme["language"], "Search")
    return output.replace(SEARCH_DIALOG, SEARCH_DIALOG.replace(">", f' aria-label="{label}">'), 1)
