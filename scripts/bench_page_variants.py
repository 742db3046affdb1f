"""Where one page's load time goes: copies of a built page, each with one thing changed.

    python scripts/bench_page_variants.py [SITE_DIR] [--page PATH/] [--rounds 15] [--only NAME...]

Copies SITE_DIR (default site/) to a temporary folder and writes the variants of PATH (default
scheduling/chunked_prefill/) beside it, at the same depth so every relative link still resolves.
Each round loads a plain page (/about/) and every variant once, cold and in a shuffled order, as
scripts/bench_pages.py does; the table shows each variant's median rendered time and its ratio to
/about/'s (the shuffled order spreads the machine's drift over every variant alike). Run it twice
before reading a small difference: a 2-core machine's runs move. ADR-0013 records what these
variants showed. --only keeps the variants whose name contains one of the words given.
"""

import argparse
import random
import re
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import sync_playwright

import adr_table
from bench_pages import is_plain, load
from serve_site import CHROMIUM, launch_chromium, page_paths, serve

ROOT = Path(__file__).resolve().parent.parent
# --adr writes the report into this ADR's block (scripts/adr_table.py)
ADR, ADR_BLOCK = "0013-build-time-rendering", "page-variants"
FORMULA = re.compile(r"<mjx-container.*?</mjx-container>", re.S)  # math_svg.py's output


def with_style(css: str) -> Callable[[str], str]:
    return lambda html: html.replace("</head>", f"<style>{css}</style></head>", 1)


def mathml_only(html: str) -> str:
    """Each formula's SVG removed and its assistive MathML shown: the browser's own MathML."""
    html = FORMULA.sub(lambda m: re.sub(r"<svg.*?</svg>", "", m.group(0), flags=re.S), html)
    return html.replace("<mjx-assistive-mml", "<mjx-mathml").replace(
        "</mjx-assistive-mml>", "</mjx-mathml>"
    )


def svg_flattened(html: str) -> str:
    """Each formula's SVG without MathJax's per-node <g> wrappers (the same picture)."""
    one_use = re.compile(
        r'<g data-mml-node="[a-z]+" transform="([^"]*)"(?: data-mjx-texclass="[A-Z]+")?>'
        r"(<use [^>]*)></use></g>"
    )
    plain_g = re.compile(r'<g data-mml-node="[a-z]+"(?: data-mjx-texclass="[A-Z]+")?>')

    def flatten(svg: str) -> str:
        svg = one_use.sub(r'\2 transform="\1"></use>', svg)
        kept, unwrapped = [], []
        for tag in re.finditer(r"<g\b[^>]*>|</g>|[^<]+|<[^>]*>", svg):
            text = tag.group(0)
            if text.startswith("<g"):
                unwrapped.append(bool(plain_g.fullmatch(text)))
                if not unwrapped[-1]:
                    kept.append(text)
            elif text == "</g>":
                if not unwrapped.pop():
                    kept.append(text)
            else:
                kept.append(text)
        return "".join(kept)

    return FORMULA.sub(lambda m: flatten(m.group(0)), html)


def glyphs_inlined(html: str) -> str:
    """Each <use> of a shared glyph replaced by the glyph's own <path> (no <use> shadow trees)."""
    glyphs = dict(re.findall(r'<path id="(MJX-glyph-[^"]+)" d="([^"]*)"', html))
    return re.sub(
        r'<use data-c="[^"]*" xlink:href="#(MJX-glyph-[^"]+)"([^>]*)></use>',
        lambda m: f'<path d="{glyphs[m.group(1)]}"{m.group(2)}></path>',
        html,
    )


def formulas_as_masks(html: str) -> str:
    """Each formula's SVG made a standalone image (its glyphs inlined) and drawn as the CSS mask of
    one <span> in the text colour: one element instead of the SVG's tree; the MathML stays."""
    attrs = re.compile(
        r'style="([^"]*)"[^>]*? width="([^"]*)" height="([^"]*)"[^>]*?viewBox="([^"]*)"'
    )

    def mask(svg: str) -> str:
        style, width, height, box = attrs.search(svg).groups()
        inner = svg[svg.index(">") + 1 : -len("</svg>")]
        inner = re.sub(r' data-(?:mml-node|mjx-texclass|c)="[^"]*"', "", inner)
        image = f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='{box}'>{inner}</svg>"
        image = image.replace('"', "'")
        encoded = "".join(
            c if c.isalnum() or c in " -.,'/=:()" else f"%{ord(c):02X}" for c in image
        )
        return (
            f'<span class="mjx-m" aria-hidden="true" style="{style} width: {width}; '
            f'height: {height}; --m: url(&quot;data:image/svg+xml,{encoded}&quot;)"></span>'
        )

    def container(m: re.Match) -> str:
        out, depth, start = [], 0, 0
        text = m.group(0)
        for tag in re.finditer(r"<svg\b[^>]*>|</svg>", text):
            if tag.group(0).startswith("<svg"):
                if depth == 0:
                    out.append(text[start : tag.start()])
                    start = tag.start()
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    out.append(mask(text[start : tag.end()]))
                    start = tag.end()
        return "".join(out) + text[start:]

    css = (
        ".mjx-m { display: inline-block; background-color: currentColor; "
        "mask: var(--m) center / 100% 100% no-repeat; }"
    )
    return with_style(css)(FORMULA.sub(container, glyphs_inlined(html)))


def labs_collapsed(html: str) -> str:
    listing = r'<div class="language-\w+ highlight"><span class="filename">labs/.*?</code></pre>'
    closed = r"<details><summary>lab</summary>\g<0></details>"
    return re.sub(listing + "</div>", closed, html, flags=re.S)


ONE_TOKEN = re.compile(
    r'<mjx-container(?:(?!</mjx-container>).)*?<math xmlns="[^"]*"><(mi|mn)>([^<]{1,3})</\1></math>'
    r"</mjx-assistive-mml></mjx-container>",
    re.S,
)


def one_token_as_text(html: str) -> str:
    """Each formula that is one letter or number (`$B$`, `$2$`) written as text: a variable in
    italics, a number upright; every other formula as built."""
    return ONE_TOKEN.sub(lambda m: f"<i>{m[2]}</i>" if m[1] == "mi" else m[2], html)


def no_formulas(html: str) -> str:
    return FORMULA.sub("x", html)


def no_highlighting(html: str) -> str:
    """Every Pygments token unwrapped (any <span> with a class of 1-3 characters on the page)."""
    return re.sub(r'<span class="[a-z0-9]{1,3}">([^<]*)</span>', r"\1", html)


def text_only(html: str) -> str:
    """The same words with nothing drawn: formulas as "x", charts and diagrams removed, code
    unhighlighted. What the page's length costs by itself."""
    html = no_highlighting(no_formulas(html))
    article = html.index('<article class="md-content__inner')
    body, svg = html[article:], re.compile(r"<svg\b(?:(?!<svg\b).)*?</svg>", re.S)
    while svg.search(body):  # innermost first: a diagram may hold an SVG of its own
        body = svg.sub("", body)
    return html[:article] + body


BLOCKS = ".md-content .md-typeset > :not(h1, h2, h3, h4)"
VARIANTS: dict[str, Callable[[str], str]] = {
    "as built": lambda html: html,
    # a bound: what the page would cost if the browser never laid out an off-screen block
    "first screen only": with_style(
        f"{BLOCKS}:nth-child(n+12) {{ content-visibility: hidden !important; }}"
    ),
    "no content-visibility": with_style(f"{BLOCKS} {{ content-visibility: visible !important; }}"),
    "no formulas": no_formulas,
    "MathML only": mathml_only,
    "SVG only (no assistive MathML)": lambda html: re.sub(
        r"<mjx-assistive-mml.*?</mjx-assistive-mml>", "", html, flags=re.S
    ),
    "SVG groups flattened": svg_flattened,
    "glyphs inlined (no <use>)": glyphs_inlined,
    "no syntax highlighting": no_highlighting,
    "lab listings collapsed": labs_collapsed,
    "formulas as CSS masks": formulas_as_masks,
    "one-letter formulas as text": one_token_as_text,
    "text only": text_only,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", nargs="?", type=Path, default=ROOT / "site")
    parser.add_argument("--page", default="scheduling/chunked_prefill/")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="variants whose name contains one of these"
    )
    adr_table.add_argument(parser, ADR, ADR_BLOCK)
    args = parser.parse_args()
    page = args.page.strip("/") + "/"
    if not (args.site / page / "index.html").is_file():
        sys.exit(f"{args.site / page} holds no built page: run `make build` first")
    if not CHROMIUM.exists():
        sys.exit(f"{CHROMIUM} is missing: apt-get install chromium fonts-noto-cjk")
    # the reference: the plain page bench_pages.py compares bytes with (/about/ today)
    reference = next((p for p in page_paths(args.site) if is_plain(args.site, p)), None)
    if reference is None:
        sys.exit("every page has math or a diagram: no plain page to compare with")
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        shutil.copytree(args.site, site)
        html = (site / page / "index.html").read_text(encoding="utf-8")
        paths = {}
        for number, (name, change) in enumerate(VARIANTS.items()):
            if args.only and name != "as built" and not any(o in name for o in args.only):
                continue
            variant = change(html)
            if name != "as built" and variant == html:
                print(f"{name}: nothing to change on /{page}, left out")
                continue
            paths[name] = f"{page.rstrip('/')}-variant-{number}/"
            (site / paths[name]).mkdir()
            (site / paths[name] / "index.html").write_text(variant, encoding="utf-8")
        times: dict[str, list[float]] = {name: [] for name in [reference, *paths]}
        with serve(site) as base, sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            load(browser, base + reference)  # warm-up, not counted
            for seed in range(args.rounds):
                order = [reference, *paths]
                random.Random(seed).shuffle(order)
                for name in order:
                    times[name].append(load(browser, base + paths.get(name, name))[0])
            browser.close()
    print(f"/{page}: {args.rounds} rounds, cold loads in a shuffled order; medians\n")
    print(f"| variant | rendered (ms) | × /{reference} |")
    print("|---|--:|--:|")
    reference_ms = statistics.median(times[reference])
    print(f"| /{reference} | {reference_ms:.0f} | 1.00 |")
    for name in paths:
        median_ms = statistics.median(times[name])
        print(f"| {name} | {median_ms:.0f} | {median_ms / reference_ms:.2f} |")


if __name__ == "__main__":
    adr_table.run(main, ADR, ADR_BLOCK)
