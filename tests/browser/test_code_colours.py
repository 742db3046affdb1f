"""coursesite.code_spans changes tags, not colours: every character of a code block is drawn
the same before and after.

A lesson page of the build (Material's CSS and docs/stylesheets/extra.css) shows a block as
pymdownx.highlight writes it, then the same block after code_spans.py, in each colour scheme, and
reads each visible character's colour, weight, style and decoration. (Screenshots differ by
anti-aliasing only: Chromium places the glyphs after a span boundary at a slightly different
subpixel offset.)
"""

import markdown
import pytest

from conftest import FIRST_PAGE_LESSON, ROOT, markdown_extension_config
from coursesite import code_spans

from .pagecheck import DESKTOP

# what the page's Markdown extensions write for a fenced block, with mkdocs.yml's highlight options
EXTENSIONS = ["pymdownx.highlight", "pymdownx.superfences"]
CONFIG = {"pymdownx.highlight": markdown_extension_config("pymdownx.highlight")}
SCHEMES = ["default", "slate"]
# the block shown in the article, then (character, colour, weight, style, decoration) of each
# character that is not white space
DRAWN_CHARACTERS = """html => {
  const article = document.querySelector('article');
  article.innerHTML = html;
  const code = article.querySelector('pre code');
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  const drawn = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const s = getComputedStyle(node.parentElement);
    for (const c of node.data) if (c.trim()) drawn.push(
      [c, s.color, s.fontWeight, s.fontStyle, s.textDecorationLine].join(' '));
  }
  return drawn;
}"""


def highlighted(source: str, language: str) -> str:
    fence = f"```{language}\n{source}\n```"
    return markdown.markdown(fence, extensions=EXTENSIONS, extension_configs=CONFIG)


def samples() -> list[tuple[str, str]]:
    """Every file of the first lesson with code, and a shell block."""
    lesson = FIRST_PAGE_LESSON
    files = sorted((ROOT / "snippets" / lesson.slug).glob("*.py"))
    assert files, f"snippets/{lesson.slug}/ has no Python file"
    shell = "make serve  # 'quoted' $HOME \"and\" ${VAR:-1} | grep -c x > /dev/null"
    return [(f.read_text(encoding="utf-8"), "python") for f in files] + [(shell, "bash")]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_joined_spans_draw_every_character_the_same(browser, site_url, scheme):
    lesson = FIRST_PAGE_LESSON
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(f"{site_url}{lesson.part.key}/{lesson.slug}/")
    page.evaluate("scheme => document.body.setAttribute('data-md-color-scheme', scheme)", scheme)
    differing, joined = [], 0
    for source, language in samples():
        before = highlighted(source, language)
        after = code_spans.merge_blocks(before)
        joined += before.count("<span") - after.count("<span")
        drawn = [page.evaluate(DRAWN_CHARACTERS, html) for html in (before, after)]
        assert drawn[0], f"no character read from {source[:40]!r}"
        if drawn[0] != drawn[1]:
            first = next(i for i, (a, b) in enumerate(zip(*drawn, strict=False)) if a != b)
            where = source.splitlines()[0][:40]
            differing.append(f"{where!r}: {drawn[0][first]} -> {drawn[1][first]}")
    context.close()
    assert joined > 100, f"code_spans.py removed only {joined} spans from the samples"
    assert not differing, f"{scheme}: blocks drawn differently after code_spans.py: {differing}"
