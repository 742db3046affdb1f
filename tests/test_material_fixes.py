"""coursesite.material_fixes on its own, and on a built lesson page."""

import re

from conftest import DOCS, FIRST_PAGE_LESSON, built_html
from coursesite import material_fixes
from stage_inputs import a_build, a_page


def fix(html: str) -> str:
    return material_fixes.fix(html, a_page(), a_build("en"))


def test_every_code_block_starts_focusable_until_material_mounts_it():
    # content.lazy: Material sets or removes the tabindex only when the block nears the viewport
    block = '<div class="highlight"><pre><span></span><code>x = 1\n</code></pre></div>'
    assert '<pre><span></span><code tabindex="0">x = 1' in fix(block)
    assert fix("<p>inline <code>x</code></p>") == "<p>inline <code>x</code></p>"


def test_built_lesson_code_blocks_carry_the_tabindex(built_site):
    lesson = FIRST_PAGE_LESSON
    html = built_html(built_site.site, DOCS / lesson.page, "zh").read_text(encoding="utf-8")
    blocks = re.findall(r"<pre[^>]*>(?:<span></span>)?<code[^>]*>", html)
    assert blocks, f"{lesson.page}: no code block found; pymdownx.highlight's markup changed?"
    missing = [b for b in blocks if 'tabindex="0"' not in b]
    assert not missing, f"{lesson.page}: no tabindex (material_fixes.py): {missing[:3]}"
