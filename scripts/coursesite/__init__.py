"""The course site's build: MkDocs glue as one package, its stages in one written order.

coursesite.pipeline is the one MkDocs hook (mkdocs.yml `hooks:`); it calls the stages, plain
functions over Markdown and HTML in the modules beside it, in the order its lists give.
coursesite.syntax owns the author's syntax and coursesite.manifest the lesson manifest.
See docs/adr/0016-build-pipeline.md.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

from coursesite.manifest import Course
from coursesite.syntax import page_language


class StageError(Exception):
    """A stage's reason to fail the build; the message names the page or file to fix.
    The pipeline hands it to MkDocs as a PluginError."""


@dataclass(frozen=True)
class PageInfo:
    """What a stage knows of the page it works on."""

    src_uri: str  # relative to docs/: "model_memory/kv_cache.en.md"
    url: str  # relative to the site root: "en/model_memory/kv_cache/", "" for the home page
    # language -> this page's URL in it (static-i18n's alternates); {} outside static-i18n
    alternates: dict[str, str] = field(default_factory=dict)
    title: str = ""
    dest_uri: str = ""  # its output file, relative to the site: "en/glossary/index.html"
    # its table of contents as (anchor, title), in reading order; empty until it is rendered
    toc: tuple[tuple[str, str], ...] = ()

    @property
    def lang(self) -> str:
        return page_language(self.src_uri)

    @property
    def where(self) -> str:
        """The source file, as messages name it."""
        return f"docs/{self.src_uri}"


@dataclass(frozen=True)
class Languages:
    """The site's languages, as static-i18n builds them."""

    default: str
    built: tuple[str, ...]  # this build's, in mkdocs.yml's order (`make serve` builds one)
    unbuilt: tuple[str, ...] = ()  # configured but left out of this build

    @property
    def others(self) -> tuple[str, ...]:
        return tuple(lang for lang in self.built if lang != self.default)

    def prefix(self, lang: str) -> str:
        """Where a language's pages live, relative to the site root: "" or "en/"."""
        return "" if lang == self.default else f"{lang}/"

    def prefixes(self) -> dict[str, str]:
        """Each built language -> its prefix: {"zh": "", "en": "en/"}."""
        return {lang: self.prefix(lang) for lang in self.built}


@dataclass(frozen=True)
class NavNode:
    """A page (url set) or a section (children) of the nav, in order."""

    title: str
    url: str | None = None
    children: tuple["NavNode", ...] = ()


@dataclass(frozen=True)
class Build:
    """What the stages of one build read: taken from MkDocs' config by coursesite.pipeline, or
    written by hand in a test."""

    root: Path  # the repository: mkdocs.yml's folder
    docs: Path
    site: Path
    site_url: str  # "/" when mkdocs.yml sets none
    site_name: str  # in the language being built
    site_description: str
    languages: Languages
    lang: str  # the language static-i18n is building now
    course: Course | None = None  # None in a fixture site without a manifest
    nav: tuple[NavNode, ...] = ()  # the language's nav, once its pages are built
    repo_url: str = ""  # mkdocs.yml's repo_url (CI's REPO_URL): the served CITATION.cff names it

    @property
    def snippets(self) -> Path:
        return self.root / "snippets"

    @property
    def site_path(self) -> str:
        """The path the site is published under: "/" or "/course/"."""
        path = re.sub(r"^[a-z]+://[^/]+", "", self.site_url) or "/"
        return path if path.endswith("/") else path + "/"
