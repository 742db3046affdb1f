"""coursesite.math_svg and mermaid_svg on small inputs (ADR-0013): what they write into a
page, and how a bad formula or diagram fails the build. The built site is checked in
tests/test_web_files.py and tests/browser/."""

import re

import pytest

from coursesite import StageError, math_svg, mermaid_svg

PAGE = "<html><head></head><body class='md'>{}</body></html>"


def test_arithmatex_formulas_become_svg_with_assistive_mathml_and_shared_glyphs():
    html = PAGE.format(
        '<p><span class="arithmatex">\\(x &lt; 2\\)</span></p>'
        '<div class="arithmatex">\\[x^2 + x\\]</div>'
    )
    out, found = math_svg.typeset_page(html, "t.md")
    assert found
    containers = re.findall(r"<mjx-container.*?</mjx-container>", out, re.DOTALL)
    assert len(containers) == 2 and 'display="true"' in containers[1]
    assert all("<mjx-assistive-mml" in c and "currentColor" in c for c in containers)
    assert "<mo>&lt;</mo>" in containers[0]  # the TeX was unescaped before typesetting
    # each glyph (x) defined once per page and used by both formulas
    assert out.count('id="MJX-glyph-NCM-I-1D465"') == 1
    assert all('xlink:href="#MJX-glyph-NCM-I-1D465"' in c for c in containers)
    assert "\\(" not in out and "data-latex" not in out


def test_notebook_markdown_math_is_typeset_but_not_inside_code():
    cell = (
        '<div class="jp-RenderedMarkdown"><p>load $W$ bytes, <code>$HOME</code></p>'
        "<p>$$\nW + \\kappa S\n$$</p></div>\n</div>"
    )
    out, found = math_svg.typeset_page(PAGE.format(cell), "nb.ipynb")
    assert found
    assert out.count("<mjx-container") == 2
    assert "<code>$HOME</code>" in out


@pytest.mark.parametrize("tex", ["\\frac{a}{", "\\notamacro x"])
def test_a_tex_error_fails_the_build_naming_page_and_formula(tex):
    html = PAGE.format(f'<span class="arithmatex">\\({tex}\\)</span>')
    with pytest.raises(StageError, match=r"lesson\.md: TeX error in .*" + re.escape(tex)):
        math_svg.typeset_page(html, "lesson.md")


def test_a_page_without_math_is_left_alone():
    html = PAGE.format("<p>no math, $5 and $6</p>")
    assert math_svg.typeset_page(html, "p.md") == (html, False)


@pytest.mark.skipif(not mermaid_svg.CHROMIUM.exists(), reason="needs Chromium")
def test_a_diagram_is_drawn_into_a_shadow_root_and_a_bad_one_fails_naming_the_page():
    html = '<pre class="mermaid"><code>flowchart LR\n  A[预填充] --&gt; B[解码]</code></pre>'
    out = mermaid_svg.draw_page(html, "x.md")
    assert out.startswith('<div class="mermaid"><template shadowrootmode="open"><svg ')
    assert "预填充" in out and "--md-mermaid-" in out  # Material's themeCSS: palette, dark mode
    bad = '<pre class="mermaid"><code>flowchart LR\n  A --&gt;</code></pre>'
    with pytest.raises(StageError, match=r"y\.md: Mermaid diagram 'flowchart LR…' is invalid"):
        mermaid_svg.draw_page(bad, "y.md")


def test_without_chromium_diagrams_are_left_to_the_browser(monkeypatch, tmp_path):
    monkeypatch.setattr(mermaid_svg, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setattr(mermaid_svg, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(mermaid_svg, "_drawer", [])
    html = '<pre class="mermaid"><code>flowchart LR\n  A --&gt; B</code></pre>'
    assert mermaid_svg.draw_page(html, "x.md") == html
