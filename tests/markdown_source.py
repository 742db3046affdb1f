"""A small reader for the course's Markdown sources: fenced blocks, headings, math, tables, values.

Only what the parity and snapshot gates compare; it is not a Markdown parser.
"""

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from coursesite.syntax import INCLUDE_LINE, INLINE_CODE, VALUE_REFERENCE, Fence, split_fences

HEADING = re.compile(r"^(#{1,6})\s+\S")
ADMONITION = re.compile(r"^\s*(!!!|\?\?\?\+?)\s+\w+")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$")
DISPLAY_MATH = re.compile(r"^\s*\$\$")


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
            f"{lesson}.{name}"
            for line in self.prose
            for lesson, name in VALUE_REFERENCE.findall(INLINE_CODE.sub("", line))
        )


def notebook_markdown(path: Path) -> str:
    """A notebook's Markdown cells, one after another (its code cells are code, not prose)."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def read_page(path: Path) -> Page:
    """A Markdown page's prose lines and fenced blocks (a notebook's: its Markdown cells')."""
    text = notebook_markdown(path) if path.suffix == ".ipynb" else path.read_text(encoding="utf-8")
    fences, prose = split_fences(text)
    return Page(path, fences, prose)


def expand_snippets(code: str, base_paths: list[Path]) -> str:
    """Replace `--8<-- "file"` lines the way pymdownx.snippets does (whole-file includes)."""
    out = []
    for line in code.splitlines():
        included = INCLUDE_LINE.match(line)
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
