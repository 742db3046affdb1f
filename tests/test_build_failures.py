"""A broken page must fail the strict build, and the error must name the file.

Each test builds a small fixture site that uses the real site's plugins and pipeline (some of
its stages: extra.pipeline_stages).
"""

import json
import re
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, run_mkdocs_build

# builds fixture sites (their formulas and diagrams share .cache/): one xdist worker for all
pytestmark = pytest.mark.one_worker

PIPELINE = ROOT / "scripts" / "coursesite" / "pipeline.py"
# the stages a fixture site runs (it has no lesson manifest, assets or notebooks)
STAGES = "i18n_pairs, abbreviations, values, exec_errors, serve_rebuild, serve_failures, serve_exit"


def make_site(
    tmp_path: Path,
    pages: dict[str, str],
    snippets: dict[str, str] | None = None,
    *,
    notebooks: bool = False,
) -> Path:
    (tmp_path / "docs" / "includes").mkdir(parents=True)
    for lang in ("zh", "en"):
        (tmp_path / "docs" / "includes" / f"abbreviations.{lang}.md").write_text(
            "", encoding="utf-8"
        )
    for name, text in pages.items():
        path = tmp_path / "docs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    (tmp_path / "snippets").mkdir()
    for name, text in (snippets or {}).items():
        path = tmp_path / "snippets" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    text = textwrap.dedent(f"""\
            site_name: fixture
            exclude_docs: includes/
            theme: {{name: material, language: zh, font: false}}
            plugins:
              - i18n:
                  docs_structure: suffix
                  fallback_to_default: false
                  languages:
                    - {{locale: zh, name: 中文, default: true}}
                    - {{locale: en, name: English}}
              - markdown-exec:
                  languages: [python]
            extra:
              pipeline_stages: [{STAGES}]
            hooks:
              - {PIPELINE}
            markdown_extensions:
              - pymdownx.snippets:
                  base_path: [{tmp_path / "snippets"}]
                  check_paths: true
              - pymdownx.superfences
            """)
    if notebooks:
        # mkdocs-jupyter as mkdocs.yml configures it, and the stage that keeps .ipynb pages
        text = text.replace(
            "extra:\n",
            "  - mkdocs-jupyter: {include: ['*.ipynb'], execute: true, allow_errors: false}\n"
            "extra:\n",
        ).replace(f"[{STAGES}]", f"[{STAGES}, notebooks]")
    config.write_text(text, encoding="utf-8")
    return config


def test_the_fixture_stages_are_the_pipelines():
    from coursesite.pipeline import STAGES as PIPELINE_STAGES

    assert set(STAGES.split(", ")) <= set(PIPELINE_STAGES)


def page_pair(body: str) -> dict[str, str]:
    return {
        "index.md": "# 首页\n",
        "index.en.md": "# Home\n",
        "lesson.md": body,
        "lesson.en.md": body,
    }


def test_the_fixture_site_builds_when_nothing_is_broken(tmp_path):
    body = '# L\n\n```python exec="on" result="text" id="ok-block"\nprint(6 * 7)\n```\n'
    result = run_mkdocs_build(make_site(tmp_path, page_pair(body)), tmp_path / "site")
    assert result.returncode == 0, result.output
    assert "42" in (tmp_path / "site" / "en" / "lesson" / "index.html").read_text(encoding="utf-8")


def test_a_raising_executed_block_fails_the_build_and_names_the_page(tmp_path):
    body = '# L\n\n```python exec="on" id="broken-block"\nraise RuntimeError("boom")\n```\n'
    result = run_mkdocs_build(make_site(tmp_path, page_pair(body)), tmp_path / "site")
    assert result.returncode != 0
    assert "lesson.md" in result.output, result.output
    assert "boom" in result.output and "broken-block" in result.output


def test_a_missing_snippet_fails_the_build_and_names_the_file(tmp_path):
    body = '# L\n\n```python\n--8<-- "nowhere/missing.py"\n```\n'
    result = run_mkdocs_build(make_site(tmp_path, page_pair(body)), tmp_path / "site")
    assert result.returncode != 0
    assert "nowhere/missing.py" in result.output, result.output


@pytest.mark.parametrize("removed", ["lesson.en.md", "lesson.md"])
def test_a_missing_translation_fails_the_build_and_names_the_file(tmp_path, removed):
    pages = page_pair("# L\n")
    del pages[removed]
    result = run_mkdocs_build(make_site(tmp_path, pages), tmp_path / "site")
    assert result.returncode != 0
    assert "Missing translations" in result.output and removed in result.output, result.output


def test_an_unknown_value_reference_fails_the_build_naming_page_and_name(tmp_path):
    snippets = {
        "demo/__init__.py": "",
        "demo/values.py": "def values():\n    return {'answer': '42'}\n",
    }
    body = "# L\n\nKnown {{ demo.answer }}, unknown {{ demo.nonexistent }}.\n"
    result = run_mkdocs_build(make_site(tmp_path, page_pair(body), snippets), tmp_path / "site")
    assert result.returncode != 0
    assert "lesson.md" in result.output and "demo.nonexistent" in result.output, result.output


def notebook(*cells: tuple[str, str]) -> str:
    """An .ipynb with (cell type, source) cells and no outputs."""
    made = [
        {"cell_type": kind, "id": f"c{i}", "metadata": {}, "source": source}
        | ({"execution_count": None, "outputs": []} if kind == "code" else {})
        for i, (kind, source) in enumerate(cells)
    ]
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return json.dumps(
        {"cells": made, "metadata": {"kernelspec": kernel}, "nbformat": 4, "nbformat_minor": 5}
    )


def notebook_pair(code: str) -> dict[str, str]:
    return {
        "index.md": "# 首页\n",
        "index.en.md": "# Home\n",
        "nb.ipynb": notebook(("markdown", "# 笔记本"), ("code", code)),
        "nb.en.ipynb": notebook(("markdown", "# Notebook"), ("code", code)),
    }


def test_a_fixture_notebook_is_executed_and_rendered_in_both_languages(tmp_path):
    config = make_site(tmp_path, notebook_pair("print(6 * 7)"), notebooks=True)
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode == 0, result.output
    for lang, title in (("", "笔记本"), ("en", "Notebook")):
        html = (tmp_path / "site" / lang / "nb" / "index.html").read_text(encoding="utf-8")
        assert "jp-Notebook" in html and title in html
        assert '"cell_type"' not in html  # rendered, not the raw JSON
        assert re.search(r"<pre>\s*42\s*</pre>", html), "the cell was not executed"


def test_without_the_notebooks_stage_the_notebook_page_is_raw_json(tmp_path):
    # Upstream ultrabug/mkdocs-static-i18n#198; if this starts failing, the stage may be obsolete.
    config = make_site(tmp_path, notebook_pair("print(6 * 7)"), notebooks=True)
    text = config.read_text(encoding="utf-8")
    config.write_text(text.replace(", notebooks]", "]"), encoding="utf-8")
    result = run_mkdocs_build(config, tmp_path / "site")
    assert result.returncode == 0, result.output  # --strict does not notice
    page = (tmp_path / "site" / "nb" / "index.html").read_text(encoding="utf-8")
    assert '"cell_type"' in page and "jp-Notebook" not in page


def test_a_notebook_with_a_failing_cell_fails_the_build_and_names_it(tmp_path):
    code = 'raise RuntimeError("notebook boom")'
    result = run_mkdocs_build(
        make_site(tmp_path, notebook_pair(code), notebooks=True), tmp_path / "s"
    )
    assert result.returncode != 0
    assert "nb.ipynb" in result.output and "notebook boom" in result.output, result.output


def test_a_notebook_without_its_translation_fails_the_build(tmp_path):
    pages = notebook_pair("print(1)")
    del pages["nb.en.ipynb"]
    result = run_mkdocs_build(make_site(tmp_path, pages, notebooks=True), tmp_path / "site")
    assert result.returncode != 0
    assert "Missing translations" in result.output and "nb.en.ipynb" in result.output
