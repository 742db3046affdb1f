"""What the build prints for an executed block: run once per state of the repository, kept on disk.

Several tests need markdown-exec's output for the same code: the snapshot gate, the Markdown copy
and the rendered-page checks (tests tier, on several workers), and the browser tier (another
process), which compares it with what the reader's browser prints. `build_output` runs the code
as the build does (markdown-exec's own runner, from the repository root) the first time and keeps
the answer under .cache/executed/<state>/. <state> is a digest of everything a block can read
(snippets/, labs/, docs/ but its vendored assets) and of the Python and markdown-exec that ran it,
so any edit starts a fresh folder and an answer is never reused across a change. A block that
raises is not kept: every caller sees the error.
"""

import hashlib
import os
import shutil
import sys
import tempfile
from contextlib import chdir
from functools import cache
from importlib.metadata import version
from pathlib import Path

from markdown_exec._internal.formatters.python import _run_python  # what the build calls per block

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "executed"
READ_BY_BLOCKS = ("snippets", "labs", "docs")
NOT_READ = ("__pycache__", "vendor", ".ipynb_checkpoints")  # docs/assets/vendor: npm's files


@cache
def repository_state() -> str:
    """A digest of every file a block can read, and of the interpreter and runner."""
    digest = hashlib.sha256(f"{sys.version}\0{version('markdown-exec')}".encode())
    for base in READ_BY_BLOCKS:
        for path in sorted((ROOT / base).rglob("*")):
            if path.is_file() and not set(NOT_READ) & set(path.parts):
                digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:20]


def _keep(folder: Path, name: str, text: str) -> None:
    """Writes atomically (other workers may read the same folder) and drops older states."""
    if not folder.is_dir():
        for old in CACHE.glob("*"):
            shutil.rmtree(old, ignore_errors=True)
        folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, folder / name)


def build_output(code: str, block_id: str | None = None) -> str:
    """markdown-exec's output for `code` (snippets already expanded), as the build prints it."""
    folder = CACHE / repository_state()
    name = hashlib.sha256(code.encode("utf-8")).hexdigest()[:32] + ".txt"
    if (folder / name).is_file():
        return (folder / name).read_text(encoding="utf-8")
    with chdir(ROOT):
        output = _run_python(code, id=block_id)
    _keep(folder, name, output)
    return output
