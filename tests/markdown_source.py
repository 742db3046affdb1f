"""A small reader for the course's Markdown sources: fenced blocks, headings, math, tables, values.

Only what the parity and snapshot gates compare; it is not a Markdown parser.
"""

import json
import re
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
HEADING = re.compile(r"^(#{1,6})\s+\S")
ADMONITION = re.compile(r"^\s*(!!!|\?\?\?\+?)\s+\w+")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$")
DISPLAY_MATH = re.compile(r"^\s*\$\$")
VALUE = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)\s*\}\}")
INLINE_CODE = re.compile(r"(`+)[^`].*?\1")
SNIPPET = re.compile(r'^\s*--8<--\s+"([^"]+)"\s*$')


@dataclass(frozen=True)
class Fence:
    lang: str
    options: dict[str, str]
    body: str
    line: int  # 1-based line of the opening fence

    @property
    def executed(self) -> bool:
        return self.options.get("exec") in {"on", "true", "1", "yes"}

    @property
    def block_id(self) -> str | None:
        return self.options.get("id")


@dataclass
class Page:
    path: Path
    fences: list[Fence] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)  # lines outside fences

    @property
    def executed_blocks(self) -> list[Fence]:
        return [f for f in self.fences if f.executed]

    @property
    def mermaid_diagrams(self) -> int:
        return sum(f.lang == "mermaid" for f in self.fences)

    @property
    def headings(self) -> Counter:
        return Counter(f"h{len(m[1])}" for line in self.prose if (m := HEADING.match(line)))

    @property
    def display_formulas(self) -> int:
        # a $$ ... $$ block opens and closes with $$: count pairs
        return sum(len(DISPLAY_MATH.findall(line)) for line in self.prose) // 2

    @property
    def tables(self) -> int:
        return sum(bool(TABLE_RULE.match(line)) for line in self.prose)

    @property
    def admonitions(self) -> int:
        return sum(bool(ADMONITION.match(line)) for line in self.prose)

    @property
    def value_names(self) -> Counter:
        return Counter(
            name for line in self.prose for name in VALUE.findall(INLINE_CODE.sub("", line))
        )


def parse_options(info: str) -> tuple[str, dict[str, str]]:
    """`python exec="on" id="x"` -> ("python", {"exec": "on", "id": "x"})."""
    info = info.strip().lstrip("{").rstrip("}").strip()
    parts = shlex.split(info) if info else []
    lang = parts[0].lstrip(".") if parts and "=" not in parts[0] else ""
    options = dict(p.split("=", 1) for p in parts if "=" in p)
    return lang, options


def notebook_markdown(path: Path) -> str:
    """A notebook's Markdown cells, one after another (its code cells are code, not prose)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def read_page(path: Path) -> Page:
    """A Markdown page's prose lines and fenced blocks (a notebook's: its Markdown cells')."""
    page = Page(path)
    text = notebook_markdown(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opened = FENCE_OPEN.match(lines[i])
        if not opened:
            page.prose.append(lines[i])
            i += 1
            continue
        indent, marker = opened["indent"], opened["fence"]
        body, j = [], i + 1
        while j < len(lines) and not re.match(rf"^\s*{re.escape(marker)}\s*$", lines[j]):
            body.append(lines[j].removeprefix(indent))
            j += 1
        lang, options = parse_options(opened["info"])
        page.fences.append(Fence(lang, options, "\n".join(body), i + 1))
        i = j + 1
    return page


def expand_snippets(code: str, base_paths: list[Path]) -> str:
    """Replace `--8<-- "file"` lines the way pymdownx.snippets does (whole-file includes)."""
    out = []
    for line in code.splitlines():
        included = SNIPPET.match(line)
        if not included:
            out.append(line)
            continue
        for base in base_paths:
            if (base / included[1]).is_file():
                out.append((base / included[1]).read_text(encoding="utf-8").rstrip("\n"))
                break
        else:
            raise FileNotFoundError(f"snippet {included[1]!r} not found under {base_paths}")
    return "\n".join(out)
