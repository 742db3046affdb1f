"""Copy browser assets installed by `npm ci` into docs/assets/vendor/ (git-ignored).

The site serves Mermaid and Pyodide itself, so a reader's browser never calls a CDN. MathJax runs
at build time only (scripts/tex2svg.mjs, straight from node_modules/): pages carry SVG formulas
and load no MathJax file, so none is copied (docs/adr/0013).
Versions come from package-lock.json; nothing here is committed.
"""

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "node_modules"
VENDOR = ROOT / "docs" / "assets" / "vendor"

PYODIDE_FILES = (
    "pyodide.mjs",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
)
# destination (under VENDOR) -> source (under node_modules); a directory is copied whole
ASSETS: dict[str, str] = {
    # Mermaid's ES module build: a 30 KB entry that imports only the chunks a diagram needs
    # (the classic mermaid.min.js is 3.4 MB of every diagram type, parsed on every load)
    "mermaid/mermaid.esm.min.mjs": "mermaid/dist/mermaid.esm.min.mjs",
    "mermaid/chunks/mermaid.esm.min": "mermaid/dist/chunks/mermaid.esm.min",
    # Pyodide's core (no packages), loaded only when a reader clicks "Run in browser" (ADR 0011)
    **{f"pyodide/{name}": f"pyodide/{name}" for name in PYODIDE_FILES},
}
SKIP_MAPS = shutil.ignore_patterns("*.map")  # Mermaid's chunks need no source maps


def remove_stale() -> list[Path]:
    """Folders an earlier version of this script copied (e.g. mathjax/): not served any more."""
    keep = {dest.split("/")[0] for dest in ASSETS}
    stale = [p for p in VENDOR.glob("*") if p.is_dir() and p.name not in keep]
    for path in stale:
        shutil.rmtree(path)
    return stale


def copy_assets() -> list[Path]:
    copied = []
    for dest, src in ASSETS.items():
        source = NODE_MODULES / src
        if not source.exists():
            sys.exit(f"vendor_assets: {source} is missing; run `npm ci` first (or `make assets`).")
        target = VENDOR / dest
        if target.exists():
            shutil.rmtree(target) if target.is_dir() else target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=SKIP_MAPS)
        else:
            shutil.copy2(source, target)
        copied.append(target)
    return copied


if __name__ == "__main__":
    for path in remove_stale():
        print(f"removed {path.relative_to(ROOT)}")
    for path in copy_assets():
        print(f"vendored {path.relative_to(ROOT)}")
