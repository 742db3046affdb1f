"""MkDocs hook: every extra_javascript/extra_css file is served by the site itself and exists.

MkDocs does not fail on a missing extra_javascript file; the browser would just miss it. Vendored
files come from npm via `make assets` (scripts/vendor_assets.py); the ones hooks load themselves
(Mermaid, Pyodide) are checked by tests/test_site.py and tests/test_run_in_browser.py.
"""

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    docs_dir = Path(config.docs_dir)
    problems = []
    for item in [*config.extra_javascript, *config.extra_css]:
        path = str(getattr(item, "path", item))
        if "://" in path or path.startswith("//"):
            problems.append(f"{path} is on another host; serve it from docs/ instead")
        elif not (docs_dir / path).is_file():
            hint = " (run `make assets`)" if path.startswith("assets/vendor/") else ""
            problems.append(f"{path} does not exist under {docs_dir}{hint}")
    if problems:
        raise PluginError("Site assets:\n  " + "\n  ".join(problems))
    return config
