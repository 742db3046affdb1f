"""Notebook pages (docs/**/x.ipynb + x.en.ipynb): committed clean, same code in both languages,
executed and rendered by the build, and offered for download."""

import dataclasses
import json
import re
from pathlib import Path

import pytest

from conftest import DOCS, ROOT, built_html, chinese_notebooks, english_sibling

NOTEBOOKS = chinese_notebooks()
ALL = [p for nb in NOTEBOOKS for p in (nb, english_sibling(nb)) if p.exists()]
# The one line a notebook's code may change between languages: the language of its chart labels.
LANG_LINE = re.compile(r'^LANG = "(zh|en)".*$', re.MULTILINE)


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_there_is_a_notebook():
    assert NOTEBOOKS, "no notebook found under docs/: the discovery is broken"


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_committed_notebooks_have_no_outputs(path):
    dirty = [
        cell.get("id", i)
        for i, cell in enumerate(cells(path))
        if cell["cell_type"] == "code" and (cell["outputs"] or cell["execution_count"] is not None)
    ]
    assert not dirty, (
        f"{path.relative_to(ROOT)}: cells {dirty} carry outputs; clear them "
        "(the build executes the notebook)"
    )


@pytest.mark.parametrize("zh", NOTEBOOKS, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_both_languages_run_the_same_code(zh):
    en = english_sibling(zh)
    zh_cells, en_cells = cells(zh), cells(en)
    assert [(c["cell_type"], c.get("id")) for c in zh_cells] == [
        (c["cell_type"], c.get("id")) for c in en_cells
    ], f"{zh.name} and {en.name} have different cells"
    for a, b in zip(zh_cells, en_cells, strict=True):
        if a["cell_type"] == "code":
            assert LANG_LINE.sub("LANG", source(a)) == LANG_LINE.sub("LANG", source(b)), a.get("id")
        else:  # translated prose, same structure: headings per level and display formulas
            for pattern in (r"^#+ ", r"^\$\$"):
                count = [len(re.findall(pattern, source(c), re.MULTILINE)) for c in (a, b)]
                assert count[0] == count[1], f"cell {a.get('id')}: {pattern!r} {count}"
    for path, lang in ((zh, "zh"), (en, "en")):
        langs = LANG_LINE.findall("".join(source(c) for c in cells(path)))
        assert langs in ([], [lang]), f"{path.name} sets LANG to {langs}"


# A fraction over $B$: the notebook wrote bandwidth as B, which the notation table gives the batch
# size (issue 26); a decimal typed into the prose: vLLM's default utilization went stale that way.
OVER_B = re.compile(r"\}\{B\}")
TYPED_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_notebook_prose_writes_bandwidth_as_bw_and_leaves_figures_to_the_code(path):
    prose = "\n".join(source(c) for c in cells(path) if c["cell_type"] == "markdown")
    assert not OVER_B.search(prose), f"{path.name}: bandwidth is $\\mathrm{{BW}}$; $B$ is the batch"
    assert r"\mathrm{BW}" in prose, f"{path.name}: its bounds no longer name the bandwidth"
    typed = TYPED_DECIMAL.findall(prose)
    assert not typed, f"{path.name}: the prose types {typed}; print them from the code"


def test_the_notebook_prose_checks_catch_what_they_name():
    assert OVER_B.search(r"\frac{W + \kappa S}{B}") and not OVER_B.search(r"{\mathrm{BW}}")
    assert TYPED_DECIMAL.findall("utilization 0.9, less a reserve") == ["0.9"]
    assert not TYPED_DECIMAL.findall('`"qwen2.5-7b-instruct"`, 4-bit, [16, 64, 256], v0.26.0')


def test_a_notebook_without_its_translation_is_reported(tmp_path):
    from coursesite import i18n_pairs as hook

    (tmp_path / "a.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "b.en.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}", encoding="utf-8")
    problems = hook.missing_translations(tmp_path, lambda rel: False)
    assert problems == [
        "a.ipynb has no English version (a.en.ipynb)",
        "b.en.ipynb has no Chinese version (b.ipynb)",
    ]


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("zh", NOTEBOOKS, ids=lambda p: p.stem)
def test_built_notebook_page_is_rendered_and_offers_the_notebook(built_site, zh, lang):
    page = built_html(built_site.site, zh, lang)
    html = page.read_text(encoding="utf-8")
    assert "jp-Notebook" in html and '"cell_type"' not in html, f"{page}: not rendered"
    assert "jp-OutputArea-output" in html, f"{page}: the build did not execute the notebook"
    assert "Traceback" not in html
    source_nb = zh if lang == "zh" else english_sibling(zh)
    download = page.parent / source_nb.name
    assert download.is_file(), f"{source_nb.name} is not offered next to {page}"
    assert json.loads(download.read_text(encoding="utf-8"))["cells"] == cells(source_nb)
    assert f'href="{source_nb.name}"' in html, f"{page} does not link to {source_nb.name}"


def test_jupyterlab_stylesheet_is_cut_to_the_rules_the_page_can_use(monkeypatch, tmp_path):
    from coursesite import notebooks as hook

    monkeypatch.setattr(hook, "CACHE", tmp_path)
    jupyter = (
        ".jupyter-wrapper .jp-Used{color:var(--jp-x)}.jupyter-wrapper .jp-DockPanel{color:blue}"
        "[data-md-color-scheme=slate] .jupyter-wrapper{--jp-x:var(--jp-base);--jp-unread:2}"
        # a second sheet, as nbconvert writes them: what the first reads, declared here
        "</style><style>.jupyter-wrapper{--jp-base:1;--jp-code:3;--jp-dock:4}"
    )
    # Pygments' sheet is not JupyterLab's (no wrapper) but reads a property declared there
    other = ".md-typeset .unused-elsewhere{color:green}.highlight-ipynb .k{color:var(--jp-code)}"
    page = (
        f"<html><head><style>{jupyter}</style><style>{other}</style></head>"
        # Material's palette toggle names the dark scheme, so dark mode's rules stay
        '<body data-md-color-scheme="default"><input data-md-color-scheme="slate">'
        '<div class="jupyter-wrapper"><div class="jp-Used">x</div></div></body></html>'
    )
    trimmed = hook.trim_notebook_css(page, "nb.ipynb")
    assert ".jp-Used" in trimmed and "[data-md-color-scheme=slate]" in trimmed
    assert ".jp-DockPanel" not in trimmed, "a rule for a widget the page lacks was kept"
    for read in ("--jp-x:", "--jp-base:", "--jp-code:"):  # read by a kept rule, at one remove
        assert read in trimmed, f"{read} is read (directly, through another or by Pygments)"
    assert "--jp-unread" not in trimmed and "--jp-dock" not in trimmed, "unread properties kept"
    assert other in trimmed, "a stylesheet that is not JupyterLab's was changed"
    assert hook.trim_notebook_css(page, "nb.ipynb") == trimmed  # from the cache
    assert hook.trim_notebook_css("<p>no notebook</p>", "x.ipynb") == "<p>no notebook</p>"


@pytest.mark.parametrize("zh", NOTEBOOKS, ids=lambda p: p.stem)
def test_built_notebook_page_carries_a_trimmed_jupyterlab_stylesheet(built_site, zh):
    html = built_html(built_site.site, zh, "zh").read_text(encoding="utf-8")
    sheets = re.findall(r"<style[^>]*>(.*?)</style>", html, re.DOTALL)
    jupyter = [s for s in sheets if ".jupyter-wrapper" in s]
    assert jupyter, "no JupyterLab stylesheet on the notebook page: nbconvert's template changed?"
    assert all(".jp-DockPanel" not in s for s in jupyter), "JupyterLab's stylesheet was not cut"
    # nbconvert's whole stylesheet is about 560 KiB; the rules the page uses and the custom
    # properties they read are about 17 KiB on the playground (133 KiB with every property)
    assert sum(map(len, jupyter)) < 40 * 1024
    # read only by Pygments' sheet (code colours), declared in JupyterLab's
    assert "--jp-mirror-editor-keyword-color:" in "".join(jupyter), "code colours were cut"
    assert "jp-OutputArea-output" in "".join(jupyter), "rules the page uses were cut"
    assert "[data-md-color-scheme=slate]" in "".join(jupyter), "dark mode's rules were cut"


@pytest.mark.parametrize("zh", NOTEBOOKS, ids=lambda p: p.stem)
def test_built_notebook_page_has_no_unused_loader(built_site, zh):
    html = built_html(built_site.site, zh, "zh").read_text(encoding="utf-8")
    for leftover in ("x-mathjax-config", '<script src="">', "cdnjs", "mermaid.esm"):
        assert leftover not in html, f"{zh.name}: nbconvert's loader left in the page: {leftover}"


def test_a_notebook_mermaid_cell_or_a_changed_template_fails_the_build():
    from coursesite import StageError
    from coursesite import notebooks as hook

    with pytest.raises(StageError, match=r"nb\.ipynb.*Mermaid cell"):
        hook.without_loaders('<div class="jp-Mermaid"><pre class="mermaid">', "nb.ipynb")
    with pytest.raises(StageError, match="found 0 MathJax 2 and 0 Mermaid loaders"):
        hook.without_loaders("<p>a template without them</p>", "nb.ipynb")


def _nb_heading(tag: str, text: str, anchor: str, permalink: bool = False) -> str:
    # as mkdocs-jupyter's renderer writes a heading (an ASCII-only id, an anchor link inside), or
    # with the permalink a Markdown page's heading has
    link = (
        f'<a class="headerlink" href="#{anchor}" title="Permanent link">¶</a>'
        if permalink
        else f'<a class="anchor-link" href="#{anchor}">¶</a>'
    )
    return f'<{tag} id="{anchor}">{text}{link}</{tag}>'


def test_a_notebook_heading_takes_the_id_its_table_of_contents_links_to():
    from coursesite import Build, PageInfo, StageError
    from coursesite import notebooks as hook

    content = "".join(
        [
            _nb_heading("h1", "估算练习场", ""),
            "<p>准备</p>",  # text equal to a heading's, but not a heading
            _nb_heading("h2", "准备", ""),
            _nb_heading("h2", "一批 B 条序列", "b"),
            _nb_heading("h2", "A &amp; B", "a-b"),
        ]
    )
    toc = (("_1", "估算练习场"), ("_2", "准备"), ("b", "一批 B 条序列"), ("a-b", "A &amp; B"))
    page = PageInfo(src_uri="performance/playground.ipynb", url="performance/playground/", toc=toc)
    build = Build.__new__(Build)  # the stage reads nothing of the build
    out = hook.heading_ids(content, page, build)
    # the anchor link is Material's permalink, which Material's search leaves out of the title
    assert out == "".join(
        [
            _nb_heading("h1", "估算练习场", "_1", permalink=True),
            "<p>准备</p>",
            _nb_heading("h2", "准备", "_2", permalink=True),
            _nb_heading("h2", "一批 B 条序列", "b", permalink=True),
            _nb_heading("h2", "A &amp; B", "a-b", permalink=True),
        ]
    )
    markdown_page = dataclasses.replace(page, src_uri="performance/roofline.md")
    assert hook.heading_ids(content, markdown_page, build) == content
    with pytest.raises(StageError, match=r"playground\.ipynb.*'设置'"):
        hook.heading_ids(content, dataclasses.replace(page, toc=(("_3", "设置"),)), build)
    with pytest.raises(StageError, match=r"playground\.ipynb.*without an id.*准备"):
        hook.heading_ids(content, dataclasses.replace(page, toc=toc[:1]), build)


@pytest.mark.parametrize("zh", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_heading_link_is_a_permalink_as_on_a_markdown_page(built_site, zh):
    permalink = re.compile(r'<a class="headerlink" href="#[^"]*" title="([^"]*)"')
    markdown_page = built_html(built_site.site, DOCS / "about.md", "zh").read_text("utf-8")
    notebook_page = built_html(built_site.site, zh, "zh").read_text(encoding="utf-8")
    assert "anchor-link" not in notebook_page, f"{zh.name}: mkdocs-jupyter's anchor link is left"
    titles = set(permalink.findall(notebook_page))
    assert titles and titles == set(permalink.findall(markdown_page)), titles
