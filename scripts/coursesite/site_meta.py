"""What the web and its tools read besides the page text (docs/adr/0012).

1. Every page's <head> links its versions in every language plus x-default (the default
   language), with absolute URLs as search engines want them. (coursesite.material_fixes drops the
   relative ones static-i18n writes; javascripts/requests-on-demand.js keeps Material from
   fetching a sitemap.xml under each of them.)
2. Material's repository widget fetches star and fork counts from the GitHub API, a request to
   another host on every page: it stays a plain link (the "edit this page" links need no request).
3. The 404 page in the reader's language. static-i18n renders 404.html once per language, each
   over the last at the site root. The root keeps the default language's and carries the
   others': a reader whose missing URL is under /<lang>/ gets that language's page, written in
   by a short script before anything of the default language's page runs (not_found_switch).
   <lang>/404.html is written too, for hosts that look for the nearest 404.html. When a build
   has one language only (`make serve`'s SERVE_LANG), its 404 page says how to serve the others:
   the language menu still links to them.
4. CITATION.cff is served beside the pages with repository-code set to the build's repo_url
   (CI's REPO_URL); the committed file keeps the local placeholder.
"""

import json
import re
from collections.abc import Sequence
from urllib.parse import urljoin

from coursesite import Build, PageInfo

HEAD_END = "</head>"
# static-i18n's relative alternates: material_fixes drops them from pages, this from 404.html
RELATIVE_ALTERNATE = re.compile(r'\s*<link rel="alternate" href="[^"]*" hreflang="[^"]*">')
SOURCE_WIDGET = ' data-md-component="source"'
NOT_FOUND = "404.html"

MATERIAL_404 = "<h1>404 - Not found</h1>"  # Material's 404 heading, in English for every language
NOT_FOUND_TEXT = {
    "zh": ("404 - 找不到页面", "这个地址没有页面。请回到{home}，或用上方的搜索。", "首页"),
    "en": (
        "404 - Not found",
        "There is no page at this address. Go to the {home}, or search above.",
        "home page",
    ),
}

# a build of one language (static-i18n's build_only_locale, `make serve`): the other languages'
# pages are not there; {others}: the make commands that serve them
ONE_LANGUAGE_NOTE = {
    "zh": "这次构建只有中文页面（<code>make serve</code> 默认只构建一种语言）。"
    "要看其他语言的页面，运行 {others}；两种语言一起：<code>make serve SERVE_LANG=</code>。",
    "en": "This build has the English pages only (<code>make serve</code> builds one language). "
    "For the other pages run {others}; for both languages, <code>make serve SERVE_LANG=</code>.",
}

_not_found: dict[str, str] = {}  # language -> its rendered 404.html

CITATION = "CITATION.cff"
REPOSITORY_CODE = re.compile(r"^repository-code: .*$", re.MULTILINE)


def citation_for(text: str, repo_url: str) -> str:
    """CITATION.cff as the site serves it: repository-code names the repository built."""
    return REPOSITORY_CODE.sub(lambda _: f'repository-code: "{repo_url}"', text, count=1)


def write_citation(build: Build) -> None:
    """After the whole site: the served CITATION.cff names the repository this build is for."""
    source = build.root / CITATION
    if source.is_file() and build.repo_url:
        served = citation_for(source.read_text(encoding="utf-8"), build.repo_url)
        (build.site / CITATION).write_text(served, encoding="utf-8")


def localized_404(html: str, lang: str, home_url: str, unbuilt: Sequence[str] = ()) -> str:
    """Material's English-only 404 heading -> the page language's, with a link home; in a
    one-language build, `unbuilt` names the languages left out and how to serve them."""
    title, text, home = NOT_FOUND_TEXT.get(lang, NOT_FOUND_TEXT["en"])
    link = f'<a href="{home_url}">{home}</a>'
    body = f"<h1>{title}</h1>\n<p>{text.format(home=link)}</p>"
    if unbuilt:
        others = ", ".join(f"<code>make serve SERVE_LANG={other}</code>" for other in unbuilt)
        note = ONE_LANGUAGE_NOTE.get(lang, ONE_LANGUAGE_NOTE["en"]).format(others=others)
        body += f"\n<p>{note}</p>"
    return html.replace(MATERIAL_404, body, 1)


def alternate_links(urls: dict[str, str], default: str) -> str:
    """<link rel="alternate" hreflang> for each language's URL and x-default (the default's)."""
    links = [(lang, url) for lang, url in urls.items()] + [("x-default", urls[default])]
    return "".join(
        f'\n    <link rel="alternate" hreflang="{lang}" href="{url}">' for lang, url in links
    )


def add_alternates(html: str, urls: dict[str, str], default: str) -> str:
    return html.replace(HEAD_END, alternate_links(urls, default) + "\n  " + HEAD_END, 1)


def not_found_switch(site_path: str, pages: dict[str, str]) -> str:
    """Script for the root 404.html: under <site_path><lang>/, show that language's 404 page.

    It runs first in <head> (after <meta charset>), while the page is parsed: it writes the
    other language's page in place (its scripts run, once), then opens a <template> that takes
    in the rest of the default language's page, inert: none of its scripts run. The URL and the
    404 status stay."""
    table = {
        f"{site_path}{lang}/": re.sub(r"^\s*<!doctype html>", "", html, flags=re.I)
        for lang, html in pages.items()
    }
    # a JSON string in a <script>: "</" and "<!--" would end or confuse the script element
    data = json.dumps(table, ensure_ascii=False).replace("</", "<\\/").replace("<!--", "<\\!--")
    return (
        "<script>(() => {"
        f"const pages = {data};"
        "const hit = Object.keys(pages).find((p) => location.pathname.startsWith(p));"
        "if (!hit) return;"
        "document.write(pages[hit] + '<template>');"
        "document.documentElement.lang = hit.split('/').at(-2);"
        "})();</script>"
    )


def page_links(output: str, page: PageInfo, build: Build) -> str:
    """A page's header without the repository widget, with absolute hreflang alternates."""
    output = output.replace(SOURCE_WIDGET, "")
    alternates = page.alternates or {build.lang: page.url}
    urls = {lang: urljoin(build.site_url, url) for lang, url in alternates.items()}
    if build.languages.default not in urls:
        return output
    return add_alternates(output, urls, build.languages.default)


def not_found_page(output: str, build: Build) -> str:
    """404.html in the language being built; kept for write_not_found_pages."""
    output = RELATIVE_ALTERNATE.sub("", output.replace(SOURCE_WIDGET, ""))
    languages = build.languages
    home = build.site_path + languages.prefix(build.lang)
    output = localized_404(output, build.lang, home, languages.unbuilt)
    _not_found[build.lang] = output
    return output


def write_not_found_pages(build: Build) -> None:
    """After every language is built: the root 404.html switches to a language by URL, and
    <lang>/404.html holds each other language's."""
    languages = build.languages
    default = languages.default
    others = [lang for lang in languages.built if lang != default and lang in _not_found]
    if default not in _not_found:
        return
    for lang in others:
        (build.site / lang).mkdir(parents=True, exist_ok=True)
        (build.site / lang / NOT_FOUND).write_text(_not_found[lang], encoding="utf-8")
    switch = not_found_switch(build.site_path, {lang: _not_found[lang] for lang in others})
    # after <meta charset>: a browser looks for it in the first 1024 bytes only
    root = re.sub(
        r'(<meta charset="utf-8">)',
        lambda m: m[1] + "\n    " + switch,
        _not_found[default],
        count=1,
    )
    (build.site / NOT_FOUND).write_text(root, encoding="utf-8")
    _not_found.clear()
