"""The course's notation: one symbol table, the page generated from it, the check pages keep it.

snippets/core/notation.toml lists every symbol the lessons write in math (`$…$`, `$$…$$`): what it
means in each language, its unit, the lesson that defines it and the pages that use it. A symbol is
a letter as TeX reads it in math (each Latin or Greek letter is one variable, so `2BM'` is B times
M'), a roman name such as `\\mathrm{BW}`, or `\\mathbb{E}`; subscripts qualify a symbol (t_step and
t_prefill are both times) and are not symbols themselves. docs/notation.md and notation.en.md hold
the marker `<!-- notation -->`; this stage replaces it with the table in the page's language.
tests/test_notation.py holds every page to the table.
"""

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from coursesite import Build, PageInfo, StageError
from coursesite.syntax import INLINE_CODE, split_fences

MARKER = "<!-- notation -->"
TABLE_NAME = "snippets/core/notation.toml"
TABLE = Path(__file__).resolve().parents[2] / TABLE_NAME
GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "chi": "χ",
    "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "ell": "ℓ",  # a script l is a letter too: it names a variable
}  # fmt: skip
# Σ and Δ as operators (a sum, a difference) are written \sum and \Delta; \Delta is kept a symbol.
DISPLAY = re.compile(r"\$\$(.+?)\$\$", re.DOTALL)
# arithmatex's rule: no space after the opening $ or before the closing one ("$3 an hour" is money)
INLINE = re.compile(r"(?<![\\$])\$(?![\s$])((?:\\.|[^\\$\n])+?)(?<![\s\\])\$")
VALUE = re.compile(r"\{\{[^}]*\}\}")
WORDS = re.compile(r"\\(?:text|textrm|texttt|operatorname|begin|end)\s*\{[^{}]*\}")
ROMAN = re.compile(r"\\mathrm\s*\{([A-Za-z]+)\}")
BLACKBOARD = re.compile(r"\\(mathbb|mathbf)\s*\{([A-Za-z])\}")  # 𝔼, and matrices in bold
COMMAND = re.compile(r"\\([A-Za-z]+)")
LETTER = re.compile(r"[A-Za-zα-ωΑ-Ω]")
PLACEHOLDER = re.compile(r"\x00(\d+)\x00")


def math_spans(markdown: str) -> list[str]:
    """The TeX of every formula in a page's prose (outside fenced blocks and code spans)."""
    _, prose = split_fences(markdown)
    text = INLINE_CODE.sub("", "\n".join(prose))
    spans = DISPLAY.findall(text)
    spans += INLINE.findall(DISPLAY.sub("", text))
    return spans


def _drop_subscripts(tex: str) -> str:
    """`t_{\\text{step}}` -> `t`, `d_h` -> `d`: a subscript says which one; it is no variable."""
    out, i = [], 0
    while i < len(tex):
        if tex[i] != "_":
            out.append(tex[i])
            i += 1
            continue
        i += 1
        while i < len(tex) and tex[i] == " ":
            i += 1
        if i < len(tex) and tex[i] == "{":
            depth = 0
            while i < len(tex):
                depth += {"{": 1, "}": -1}.get(tex[i], 0)
                i += 1
                if depth == 0:
                    break
        elif i < len(tex) and tex[i] == "\\":
            match = COMMAND.match(tex, i)
            i = match.end() if match else i + 1
        else:
            i += 1
    return "".join(out)


def symbols(tex: str) -> set[str]:
    """The symbols one formula uses (see the module's docstring for what counts as one)."""
    named: list[str] = []

    def keep(name: str) -> str:
        named.append(name)
        return f"\x00{len(named) - 1}\x00"

    tex = VALUE.sub(" ", tex)
    tex = WORDS.sub(" ", tex)
    tex = _drop_subscripts(tex)
    tex = ROMAN.sub(lambda m: keep(m[1]), tex)
    tex = BLACKBOARD.sub(lambda m: keep(f"\\{m[1]}{{{m[2]}}}"), tex)
    tex = COMMAND.sub(lambda m: keep(GREEK[m[1]]) if m[1] in GREEK else " ", tex)
    found = {named[int(i)] for i in PLACEHOLDER.findall(tex)}
    found |= set(LETTER.findall(PLACEHOLDER.sub(" ", tex)))
    return found


def page_symbols(markdown: str) -> set[str]:
    return set().union(*(symbols(span) for span in math_spans(markdown)))


def page_key(src_uri: str) -> str:
    """How the table names a page: its path under docs/ without the language and suffix."""
    return src_uri.removesuffix(".md").removesuffix(".ipynb").removesuffix(".en")


@dataclass(frozen=True)
class Symbol:
    """One meaning of a symbol, and the pages that use the symbol with it."""

    symbol: str  # as symbols() names it: "B", "κ", "BW", "\\mathbf{Q}"
    tex: str  # how the notation page writes it
    meaning: dict[str, str]  # language -> meaning
    unit: dict[str, str]  # language -> unit ("" for a pure number)
    defined_in: str  # the page (page_key) that introduces it
    used_in: tuple[str, ...]  # every page (page_key) whose math uses it with this meaning


def parse_table(text: str, name: str = "notation.toml") -> list[Symbol]:
    """The table's entries; a broken table (a symbol with two meanings, a defining page that does
    not use it) is an error."""
    entries: list[Symbol] = []
    for row in tomllib.loads(text)["symbol"]:
        used = tuple(row["used_in"])
        if row["defined_in"] not in used:
            raise StageError(
                f"{name}: {row['symbol']} is defined in {row['defined_in']}, not in used_in"
            )
        entries.append(
            Symbol(
                symbol=row["symbol"],
                tex=row.get("tex", row["symbol"]),
                meaning={"zh": row["zh"], "en": row["en"]},
                unit={"zh": row.get("unit_zh", ""), "en": row.get("unit", "")},
                defined_in=row["defined_in"],
                used_in=used,
            )
        )
    seen: set[str] = set()
    for entry in entries:
        if entry.symbol in seen:
            raise StageError(
                f"{name}: {entry.symbol} has more than one meaning; every symbol has one "
                "course-wide (pick another letter, or qualify this one with a subscript)"
            )
        seen.add(entry.symbol)
    return entries


def load_table(path: Path = TABLE) -> list[Symbol]:
    return parse_table(path.read_text(encoding="utf-8"), path.name)


def problems(page: str, markdown: str, table: list[Symbol]) -> list[str]:
    """What breaks the notation on one page (named by page_key): a symbol the table lacks, or one
    the table does not list this page as using: a meaning the table does not give it here."""
    by_symbol = {entry.symbol: entry for entry in table}
    found = []
    for name in sorted(page_symbols(markdown)):
        entry = by_symbol.get(name)
        if entry is None:
            found.append(f"{page}: ${name}$ is not in the notation table ({TABLE_NAME})")
        elif page not in entry.used_in:
            listed = entry.meaning["en"]
            found.append(
                f"{page}: ${name}$ is used, but the notation table does not list this page for it "
                f"(its meaning there: {listed}); use it with that meaning and add the page to "
                "used_in, or pick another symbol"
            )
    return found


LABELS = {
    "zh": ("符号", "含义", "单位", "引入于"),
    "en": ("Symbol", "Meaning", "Unit", "Introduced in"),
}


def _sort_key(symbol: Symbol) -> tuple[int, str, str]:
    """Latin letters (capital before small), then named and bold symbols, then Greek."""
    name = symbol.symbol
    kind = 0 if len(name) == 1 and name.isascii() else 2 if len(name) == 1 else 1
    return (kind, name.lower(), "0" if name[0].isupper() else "1")


def table_markdown(table: list[Symbol], lang: str, titles: dict[str, str], up: str) -> str:
    """The notation table in one language; `titles` maps page_key to a lesson's title, `up` leads
    from the notation page to docs/."""
    head = LABELS[lang]
    rows = [f"| {' | '.join(head)} |", "|---|---|---|---|"]

    def link(page: str) -> str:
        return f"[{titles.get(page, page)}]({up}{page}.md)"

    for symbol in sorted(table, key=_sort_key):
        where = link(symbol.defined_in)
        unit = symbol.unit[lang] or "—"
        rows.append(f"| ${symbol.tex}$ | {symbol.meaning[lang]} | {unit} | {where} |")
    return "\n".join(rows)


def fill_table(markdown: str, page: PageInfo, build: Build) -> str:
    if MARKER not in markdown:
        return markdown
    titles: dict[str, str] = {}
    if build.course is not None:
        titles = {page_key(n.page): n.title(page.lang) for n in build.course.lessons}
    depth = len([p for p in page.src_uri.split("/")[:-1] if p])
    return markdown.replace(MARKER, table_markdown(load_table(), page.lang, titles, "../" * depth))
