"""coursesite.code_spans: same text, fewer spans, colour groups as in Material's CSS."""

import re
from pathlib import Path

import material
import pytest

from conftest import DOCS, FIRST_PAGE_LESSON, ROOT, built_html
from coursesite import code_spans

STYLESHEETS = Path(material.__file__).parent / "templates" / "assets" / "stylesheets"
EXTRA_CSS = ROOT / "docs" / "stylesheets" / "extra.css"


def block(code: str, language: str = "python") -> str:
    pre = '<pre><span></span><code tabindex="0">'
    return f'<div class="language-{language} highlight">{pre}{code}</code></pre></div>'


def span(cls: str, text: str) -> str:
    return f'<span class="{cls}">{text}</span>'


def text_of(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def test_plain_tokens_are_unwrapped_and_one_colour_is_one_span():
    code = (
        span("n", "x")
        + span("w", " ")
        + span("o", "=")
        + span("w", " ")
        + span("sa", "f")
        + span("s2", "&quot;a")
        + span("si", "{")
        + span("n", "y")
        + span("si", "}")
        + span("s2", "&quot;")
        + span("p", ")")
        + " "
        + span("o", "+")
        + "\n"
    )
    merged = code_spans.merge_blocks(block(code))
    assert text_of(merged) == text_of(block(code))
    assert merged == block(
        'x <span class="o">=</span> f<span class="s2">&quot;a{</span>y'
        '<span class="si">}&quot;</span><span class="p">) +</span>\n'
    )


def test_lines_comments_and_other_markup_are_never_joined():
    code = span("p", ")") + "\n" + span("p", "(")  # a newline between: two spans, as written
    code += span("c1", "# a") + span("c1", "# b")  # comments: Material's code annotations
    code += '<span class="hll">' + span("k", "if") + "</span>" + span("k", "else")
    assert code_spans.merge_blocks(block(code)) == block(code)


def test_notebook_cells_and_inline_code_are_left_alone():
    # nbconvert's own stylesheet colours every Pygments class, names included
    cell = '<div class="highlight-ipynb hl-python"><pre><span></span>' + span("n", "x") + "</pre>"
    inline = "<p><code>" + span("n", "x") + "</code></p>"
    assert code_spans.merge_blocks(cell + inline) == cell + inline


# --- the colour groups against the CSS a reader gets -------------------------------------------


def declarations(css: str, selector: str) -> dict[str, str]:
    """The custom properties set in the first rule whose selector list starts with `selector`."""
    match = re.search(re.escape(selector) + r"[^{]*\{([^}]*)\}", css)
    assert match, f"no rule for {selector}: Material's stylesheet changed?"
    return dict(re.findall(r"(--[\w-]+)\s*:\s*([^;]+?)\s*(?:;|$)", match.group(1)))


def resolve(value: str, variables: dict[str, str]) -> str:
    while (match := re.fullmatch(r"var\((--[\w-]+)\)", value)) and match.group(1) in variables:
        value = variables[match.group(1)]
    return value


@pytest.fixture(scope="module")
def colours() -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """(class -> the variable its colour comes from, scheme -> variable -> value)."""
    main = next(STYLESHEETS.glob("main.*.min.css")).read_text(encoding="utf-8")
    palette = next(STYLESHEETS.glob("palette.*.min.css")).read_text(encoding="utf-8")
    extra = EXTRA_CSS.read_text(encoding="utf-8")
    rule_of = {}
    for selectors, variable in re.findall(
        r"((?:\.highlight \.[a-z0-9]+,?)+)\{color:var\((--md-code-hl-[a-z]+-color)\)", main
    ):
        for cls in re.findall(r"\.highlight \.([a-z0-9]+)", selectors):
            rule_of[cls] = variable
    root = declarations(main, ":root,[data-md-color-scheme=default]")
    schemes = {
        "default": root | declarations(extra, '[data-md-color-scheme="default"]'),
        "slate": root | declarations(palette, "[data-md-color-scheme=slate]"),
    }
    assert len(rule_of) > 40, f"found {len(rule_of)} token colour rules in Material's CSS"
    return rule_of, schemes


def test_each_group_is_one_colour_in_both_schemes(colours):
    rule_of, schemes = colours
    for group, classes in code_spans.GROUPS.items():
        for cls in classes.split():
            assert cls in rule_of, f"code_spans.py group {group}: Material has no colour for .{cls}"
        for scheme, variables in schemes.items():
            seen = {cls: resolve(f"var({rule_of[cls]})", variables) for cls in classes.split()}
            assert len(set(seen.values())) == 1, f"{group} in {scheme}: {seen}"


def test_plain_tokens_are_drawn_in_the_code_text_colour(colours):
    rule_of, schemes = colours
    main = next(STYLESHEETS.glob("main.*.min.css")).read_text(encoding="utf-8")
    extra = EXTRA_CSS.read_text(encoding="utf-8")
    for cls in code_spans.PLAIN:
        assert not re.search(rf"\.highlight \.{cls}\b", extra), f"extra.css styles .{cls}"
        if cls not in rule_of:  # then no rule of Material's names it: the code's own colour
            assert not re.search(rf"\.highlight \.{cls}\b", main), f"Material styles .{cls}"
            continue
        for scheme, variables in schemes.items():
            assert resolve(f"var({rule_of[cls]})", variables) == resolve(
                "var(--md-code-fg-color)", variables
            ), f".{cls} in {scheme} is not the code text colour"


def test_a_built_lesson_has_no_plain_token_spans(built_site):
    lesson = FIRST_PAGE_LESSON
    html = built_html(built_site.site, DOCS / lesson.page, "zh").read_text(encoding="utf-8")
    blocks = [m.group(2) for m in code_spans.BLOCK.finditer(html)]
    assert blocks, f"{lesson.page}: no highlighted block; pymdownx.highlight's markup changed?"
    classes = "|".join(sorted(code_spans.PLAIN))
    plain = [s for b in blocks for s in re.findall(rf'<span class="(?:{classes})">', b)]
    assert not plain, f"{lesson.page}: {len(plain)} plain-token spans left (code_spans not run?)"


def test_each_class_has_one_role():
    listed = [cls for classes in code_spans.GROUPS.values() for cls in classes.split()]
    assert len(listed) == len(set(listed)), "a class is in two colour groups"
    assert not code_spans.PLAIN & set(listed), "a class is both plain and in a colour group"
