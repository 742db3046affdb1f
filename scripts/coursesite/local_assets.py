"""Every extra_javascript/extra_css file is served by the site itself and exists.

MkDocs does not fail on a missing extra_javascript file; the browser would just miss it. Vendored
files come from npm via `make assets` (scripts/vendor_assets.py); the ones stages load themselves
(Mermaid, Pyodide) are checked by tests/test_site.py and tests/test_run_in_browser.py.
"""

from pathlib import Path


def asset_problems(docs_dir: Path, assets: list[str]) -> list[str]:
    """What is wrong with the site's extra_javascript and extra_css entries."""
    problems = []
    for path in assets:
        if "://" in path or path.startswith("//"):
            problems.append(f"{path} is on another host; serve it from docs/ instead")
        elif not (docs_dir / path).is_file():
            hint = " (run `make assets`)" if path.startswith("assets/vendor/") else ""
            problems.append(f"{path} does not exist under {docs_dir}{hint}")
    return problems
