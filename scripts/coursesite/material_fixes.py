"""Three fixes to Material's HTML that the browser tier checks (docs/adr/0008).

1. static-i18n turns Material's <link rel="alternate" hreflang> into links to the page's
   counterpart. Material's JavaScript expects language *roots* there and fetches
   <href>/sitemap.xml for each one: two 404s on every page (mkdocs-material#6582). These
   relative links are dropped; site_meta writes absolute ones (with x-default), and
   javascripts/requests-on-demand.js keeps Material from fetching under them (docs/adr/0012).
2. Material's search dialog (<div class="md-search" role="dialog">) has no accessible name
   (axe: aria-dialog-name); it gets the search box's label.
3. With the `content.lazy` feature, Material mounts a code block (its copy button, and a
   tabindex when the block scrolls sideways, axe: scrollable-region-focusable) only when the
   block nears the viewport, so a lesson page's load does not lay out every block
   (docs/adr/0013). Until then a block that scrolls could not be reached with Tab, so every
   code block starts with tabindex="0"; Material's mount removes it where the block does not
   scroll (or the device has no hover), as it does without the feature.
"""

import re

from coursesite import Build, PageInfo

ALTERNATE = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')
SEARCH_DIALOG = '<div class="md-search" data-md-component="search" role="dialog">'
LABEL = {"zh": "搜索", "en": "Search"}
# a highlighted block's <code> (pymdownx.highlight puts an empty <span> before it)
CODE_BLOCK = re.compile(r"(<pre[^>]*>(?:<span></span>)?)<code>")


def fix(output: str, page: PageInfo, build: Build) -> str:
    """A built page with the three fixes."""
    output = ALTERNATE.sub("", output)
    output = CODE_BLOCK.sub(r'\1<code tabindex="0">', output)
    label = LABEL.get(build.lang, "Search")
    return output.replace(SEARCH_DIALOG, SEARCH_DIALOG.replace(">", f' aria-label="{label}">'), 1)
