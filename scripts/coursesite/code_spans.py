"""Highlighted code with fewer elements and the same colours (docs/adr/0013).

Pygments wraps every token of a code block in a <span>; on a lesson page with code these are
most of the page's elements, and Chromium parses, styles and lays out each one while the page
loads (ADR-0013, scripts/bench_page_variants.py). Material colours a token by its
class, and many classes share a colour, so in pymdownx.highlight's blocks this stage

- unwraps tokens drawn in plain code colour (names, whitespace, classes Material does not colour);
- joins neighbouring tokens of one colour, also across spaces on the same line, into one <span>.

Only tags change: the text, which the copy button, search and Ctrl+F read, is the same. The colour
groups below are Material's (and docs/stylesheets/extra.css's) in both schemes;
tests/test_code_spans.py checks them against Material's installed CSS, so a theme change that
gives two joined classes different colours fails there. Comments are never joined: Material
looks for code annotations in them.
"""

import re

from coursesite import Build, PageInfo

# Tokens drawn in the code text colour: Material's `.n, .kc` use --md-code-hl-name-color, which is
# --md-code-fg-color in both schemes; `w`, `sa` and `vm` have no rule of their own.
PLAIN = frozenset({"n", "kc", "w", "sa", "vm"})
# Classes that share one colour (one CSS variable, or variables equal in both schemes).
GROUPS = {
    "muted": "o ow p na nv vc vg vi",  # operator, punctuation, variable: one grey in each scheme
    "string": "cpf l s s1 s2 sb sc si ss",
    "special": "cp se sh sr sx",
    "number": "il m mb mf mh mi mo",
    "keyword": "k kd kn kp kr kt nd ni nl nt",
    "constant": "bp nb no",
    "function": "nc ne nf nn",
}
GROUP_OF = {cls: group for group, classes in GROUPS.items() for cls in classes.split()}

# a pymdownx.highlight block (not a notebook cell: nbconvert's stylesheet colours every class)
BLOCK = re.compile(r'(<div class="language-[\w-]+ highlight">.*?<code[^>]*>)(.*?)(</code>)', re.S)
TOKEN = re.compile(r'<span class="([a-z0-9]+)">([^<]*)</span>|([^<]+)|(<[^>]*>)')
SPACES = re.compile(r"[ \t]+")


def merge_spans(code: str) -> str:
    """The inside of one <code>: plain tokens unwrapped, same-colour neighbours joined."""
    items: list[list[str] | str] = []  # [group, class, text] for a kept span; a str for the rest
    for match in TOKEN.finditer(code):
        cls, text, bare, _tag = match.groups()
        group = GROUP_OF.get(cls) if cls else None
        if cls in PLAIN:
            bare = text
        elif group:
            if items and isinstance(items[-1], list) and items[-1][0] == group:
                items[-1][2] += text
                continue
            gap = items[-1] if items else None
            if (
                isinstance(gap, str)
                and SPACES.fullmatch(gap)
                and len(items) > 1
                and isinstance(items[-2], list)
                and items[-2][0] == group
            ):
                items.pop()
                items[-1][2] += gap + text
                continue
            items.append([group, cls, text])
            continue
        if bare is not None and items and isinstance(items[-1], str) and items[-1][:1] != "<":
            items[-1] += bare
        else:
            items.append(match.group(0) if bare is None else bare)
    return "".join(
        f'<span class="{item[1]}">{item[2]}</span>' if isinstance(item, list) else item
        for item in items
    )


def merge_blocks(output: str) -> str:
    """Every highlighted block of a page's HTML, its spans merged."""
    return BLOCK.sub(lambda m: m.group(1) + merge_spans(m.group(2)) + m.group(3), output)


def merge_page(output: str, page: PageInfo, build: Build) -> str:
    return merge_blocks(output)
