"""MkDocs hook: .ipynb files stay pages, so mkdocs-jupyter renders them in both languages.

mkdocs-jupyter marks notebooks as pages by wrapping them in its own File class in `on_files`.
mkdocs-static-i18n runs after it and re-creates every file as a plain `File`, which counts only
Markdown as a page: the notebook becomes an asset, its page is the raw JSON, and `--strict` still
passes (upstream issue ultrabug/mkdocs-static-i18n#198). MkDocs decides what a page is from
`mkdocs.utils.markdown_extensions`; adding ".ipynb" there makes every File that either plugin
creates a page, with a directory URL and a language alternate like any Markdown page.
mkdocs-jupyter then renders it (its `include` in mkdocs.yml limits it to *.ipynb).

The kernel that executes the notebooks prints "WARNING | Kernel is running over TCP without
encryption" unless its manager provisions CurveZMQ keys; an nbconvert config turns that on, so a
build's output holds no warning that is not ours.
"""

import json
import os
import tempfile

import mkdocs.utils
import zmq
from mkdocs.config.defaults import MkDocsConfig

NOTEBOOK = ".ipynb"
_jupyter_config = tempfile.TemporaryDirectory(prefix="nbconvert-config-")


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    if NOTEBOOK not in mkdocs.utils.markdown_extensions:
        mkdocs.utils.markdown_extensions = (*mkdocs.utils.markdown_extensions, NOTEBOOK)
    paths = os.environ.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep)
    if zmq.has("curve") and _jupyter_config.name not in paths:
        settings = {"KernelManager": {"transport_encryption": "auto"}}
        with open(os.path.join(_jupyter_config.name, "jupyter_nbconvert_config.json"), "w") as f:
            json.dump(settings, f)
        os.environ["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
            [_jupyter_config.name, *filter(None, paths)]
        )
    return config
