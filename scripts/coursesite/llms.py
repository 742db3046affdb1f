"""llms.txt per language and a Markdown copy of every page (docs/adr/0012).

The copy is made from the page's built HTML (markdownify), so it holds what the reader sees:
computed values filled in, executed output, notebook output; formulas stay TeX, diagrams stay
Mermaid source. It sits beside the page: foundations/prefill_decode/index.md. llms.txt
(https://llmstxt.org) lists every page of the language in nav order: /llms.txt for the default
language, /<lang>/llms.txt for the others. The mkdocs-llmstxt plugin does the same for a
one-language site; under static-i18n each language build overwrote the other's llms.txt and
every build warned about the other language's pages.
"""

import re
from pathlib import Path
from urllib.parse import urljoin

from bs4 import BeautifulSoup
from markdownify import ATX, MarkdownConverter

from coursesite import Build, NavNode, PageInfo

LLMS_TXT = "llms.txt"
INTRO = {
    "zh": "本课程每个数字都由课程代码在构建网站时算出；"
    "这些 Markdown 副本里是算好的数字和代码的实际输出。",
    "en": "Every figure in this course is computed by its code when the site is built; these "
    "Markdown copies hold the computed figures and the code's actual output.",
}
OTHER_LANGUAGES = {"zh": "其他语言", "en": "Other languages"}
LANGUAGE_NAMES = {"zh": "简体中文", "en": "English"}
# permalinks, tab labels, copy buttons, notebook prompts ("In [1]:"), anything not text
DROP = (
    "a.headerlink, a.anchor-link, .tabbed-labels, .md-source-file, .zeroclipboard-container, "
    ".clipboard-copy-txt, .jp-InputPrompt, .jp-OutputPrompt, script, style, img, svg, button"
)

# Pygments wraps every token of a code block in a <span>: nine elements in ten on a lesson page.
# The copy keeps only a block's text, so they go before parsing (same output, 4-10x faster).
PRE = re.compile(r"<pre\b.*?</pre>", re.DOTALL)
SPAN_TAG = re.compile(r"</?span\b[^>]*>")


class _Converter(MarkdownConverter):
    def convert_pre(self, el, text, parent_tags):
        if "mermaid" in (el.get("class") or []):  # a diagram: its source, as a Mermaid fence
            return f"\n\n```mermaid\n{el.get_text().strip()}\n```\n\n"
        return super().convert_pre(el, text, parent_tags)


def _language(pre) -> str:
    for node in (pre, pre.parent):
        for css in (node.get("class") or []) if node is not None else []:
            if css.startswith("language-"):
                return css.removeprefix("language-")
    return ""


_CONVERTER = _Converter(
    heading_style=ATX, bullets="-", escape_underscores=False, code_language_callback=_language
)


def page_markdown(html: str, title: str, page_url: str) -> str:
    """A page's content HTML -> Markdown, links absolute (`page_url` is the page's own URL)."""
    html = PRE.sub(lambda pre: SPAN_TAG.sub("", pre[0]), html)
    soup = BeautifulSoup(html, "html.parser")
    for element in soup.select(DROP):
        element.decompose()
    for link in soup.select("a[href]"):
        if not link["href"].startswith("#"):
            link["href"] = urljoin(page_url, link["href"])
    for math in soup.select(".arithmatex"):  # TeX as written: \(…\) inline, \[…\] display
        tex = math.get_text().strip()
        tex = re.sub(r"^\\\((.*)\\\)$", r"$\1$", tex, flags=re.S)
        tex = re.sub(r"^\\\[(.*)\\\]$", r"$$\1$$", tex, flags=re.S)
        math.replace_with(tex)
    text = _CONVERTER.convert_soup(soup).strip()
    if not text.startswith("# "):
        text = f"# {title}\n\n{text}"
    return re.sub(r"\n{3,}", "\n\n", text) + "\n"


def markdown_url(url: str) -> str:
    """A page URL -> its Markdown copy's: "en/glossary/" -> "en/glossary/index.md"."""
    return f"{url}index.md" if url.endswith("/") or not url else re.sub(r"\.html$", ".md", url)


def nav_lines(items: tuple[NavNode, ...], site_url: str) -> list[tuple[str, list[str]]]:
    """(section title, "- [page](url)" lines) for the nav, sections flattened in order."""
    sections: list[tuple[str, list[str]]] = []

    def walk(nodes: tuple[NavNode, ...], trail: list[str]) -> None:
        links = [
            f"- [{node.title}]({urljoin(site_url, markdown_url(node.url))})"
            for node in nodes
            if node.url is not None
        ]
        if links:
            sections.append((" › ".join(trail), links))
        for node in nodes:
            if node.url is None:
                walk(node.children, [*trail, node.title])

    walk(items, [])
    return sections


def llms_txt(
    name: str, description: str, intro: str, sections, others: dict[str, str], heading: str
) -> str:
    lines = [f"# {name}", "", f"> {description}", "", intro, ""]
    for title, links in sections:
        lines += [f"## {title or name}", "", *links, ""]
    if others:
        lines += [f"## {heading}", "", *(f"- [{n}]({u})" for n, u in others.items()), ""]
    return "\n".join(lines)


def write_copy(html: str, page: PageInfo, build: Build) -> str:
    """Write the page's Markdown copy beside its HTML; the page is unchanged."""
    path = build.site / Path(page.dest_uri).with_suffix(".md")
    path.parent.mkdir(parents=True, exist_ok=True)
    page_url = urljoin(build.site_url, page.url)
    path.write_text(page_markdown(html, page.title, page_url), encoding="utf-8")
    return html


def write_llms_txt(build: Build) -> None:
    """The language's llms.txt, its pages in nav order."""
    prefixes = build.languages.prefixes()
    others = {
        LANGUAGE_NAMES.get(other, other): urljoin(build.site_url, prefix + LLMS_TXT)
        for other, prefix in prefixes.items()
        if other != build.lang
    }
    text = llms_txt(
        build.site_name,
        build.site_description,
        INTRO.get(build.lang, INTRO["en"]),
        nav_lines(build.nav, build.site_url),
        others,
        OTHER_LANGUAGES.get(build.lang, OTHER_LANGUAGES["en"]),
    )
    target = build.site / prefixes.get(build.lang, "") / LLMS_TXT
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
