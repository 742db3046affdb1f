"""The author's syntax, in one place: what a lesson page may write besides Markdown.

- `{{ lesson.name }}`: a value computed by snippets/<lesson>/values.py (docs/adr/0006), never
  inside code (a fenced block or an inline code span shows code verbatim);
- `--8<-- "path"`: pymdownx.snippets' include of a file under snippets/ or labs/;
- a fenced block whose options say `exec="on"`: markdown-exec runs it at build time;
- the page's language: x.md is Chinese (the default), x.en.md (x.en.ipynb) English.

Every stage of the build (coursesite.pipeline), the serve rebuild, run-in-browser, the scripts and
the tests read pages through these definitions, so that changing the syntax is one edit here.
"""

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

DEFAULT_LANGUAGE = "zh"
OTHER_LANGUAGES = ("en",)  # x.<lang>.md beside x.md
LANGUAGES = (DEFAULT_LANGUAGE, *OTHER_LANGUAGES)

# {{ lesson.name }}: groups (lesson, name)
VALUE_REFERENCE = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\s*\}\}")
# Fenced blocks and inline code spans show code verbatim: never substituted.
CODE = re.compile(r"^(```|~~~).*?^\1\s*$|(`+)[^`].*?\2", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"(`+)[^`].*?\1")
# --8<-- "path" or --8<-- "path:lines", anywhere in a line: group 1 is the path
INCLUDE = re.compile(r"""--8<--\s+["']([^"':]+)(?::[^"']*)?["']""")
# a line that is one whole-file include (the form lesson pages use inside executed blocks)
INCLUDE_LINE = re.compile(r'^\s*--8<--\s+"([^"]+)"\s*$')
FENCE_OPEN = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
EXECUTED = frozenset({"on", "true", "1", "yes"})  # markdown-exec's truthy values of exec=


def page_language(path: str) -> str:
    """The language of a page from its source path: "a/b.en.md" -> "en", "a/b.md" -> "zh"."""
    parts = PurePosixPath(path).name.split(".")
    return parts[-2] if len(parts) > 2 and parts[-2] in OTHER_LANGUAGES else DEFAULT_LANGUAGE


def value_references(markdown: str) -> list[tuple[str, str]]:
    """(lesson, name) of every `{{ lesson.name }}` outside code, in order."""
    return VALUE_REFERENCE.findall(CODE.sub("", markdown))


def substitute_values(markdown: str, value: Callable[[str, str], str]) -> str:
    """Every reference outside code replaced by value(lesson, name)."""

    def substitute(text: str) -> str:
        return VALUE_REFERENCE.sub(lambda m: value(m[1], m[2]), text)

    pieces, last = [], 0
    for code in CODE.finditer(markdown):
        pieces += [substitute(markdown[last : code.start()]), code.group(0)]
        last = code.end()
    pieces.append(substitute(markdown[last:]))
    return "".join(pieces)


def includes(text: str) -> list[str]:
    """The paths of every `--8<--` include in a text, in order."""
    return [name.strip() for name in INCLUDE.findall(text)]


@dataclass(frozen=True)
class Fence:
    lang: str
    options: dict[str, str]
    body: str
    line: int  # 1-based line of the opening fence

    @property
    def executed(self) -> bool:
        return self.options.get("exec") in EXECUTED

    @property
    def block_id(self) -> str | None:
        return self.options.get("id")


def parse_options(info: str) -> tuple[str, dict[str, str]]:
    """`python exec="on" id="x"` -> ("python", {"exec": "on", "id": "x"})."""
    info = info.strip().lstrip("{").rstrip("}").strip()
    parts = shlex.split(info) if info else []
    lang = parts[0].lstrip(".") if parts and "=" not in parts[0] else ""
    options = dict(p.split("=", 1) for p in parts if "=" in p)
    return lang, options


def split_fences(text: str) -> tuple[list[Fence], list[str]]:
    """(the fenced blocks, the prose lines outside them) of a Markdown text."""
    fences: list[Fence] = []
    prose: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opened = FENCE_OPEN.match(lines[i])
        if not opened:
            prose.append(lines[i])
            i += 1
            continue
        indent, marker = opened["indent"], opened["fence"]
        body, j = [], i + 1
        while j < len(lines) and not re.match(rf"^\s*{re.escape(marker)}\s*$", lines[j]):
            body.append(lines[j].removeprefix(indent))
            j += 1
        lang, options = parse_options(opened["info"])
        fences.append(Fence(lang, options, "\n".join(body), i + 1))
        i = j + 1
    return fences, prose


def executed_fences(text: str) -> list[Fence]:
    return [fence for fence in split_fences(text)[0] if fence.executed]
