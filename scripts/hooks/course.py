"""MkDocs hook: the course's lessons come from one manifest, docs/lessons.yml.

From it this hook builds the nav's lesson section (replacing the `lessons.yml` placeholder in
mkdocs.yml's nav), its English titles (static-i18n's nav_translations) and the home page's lesson
table (the `<!-- lessons -->` marker, in the page's language). Tests import load_course() so that
"a lesson" means the same thing everywhere. See docs/adr/0010-lesson-manifest.md.
"""

from dataclasses import dataclass
from pathlib import Path

import yaml
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.pages import Page

MANIFEST = "lessons.yml"  # in docs_dir
TABLE_MARKER = "<!-- lessons -->"
TABLE_HEAD = {
    "zh": ("| 部分 | 课程 | 你会学到 |", "|---|---|---|"),
    "en": ("| Part | Lesson | What you will learn |", "|---|---|---|"),
}


class CourseError(ValueError):
    """The manifest and the files disagree; the message names the manifest and the problem."""


@dataclass(frozen=True)
class Part:
    key: str  # the folder docs/<key>/
    zh: str
    en: str


@dataclass(frozen=True)
class Lesson:
    slug: str  # page docs/<part>/<slug>.md, code snippets/<slug>/, lab labs/<slug>/
    part: Part
    zh: str
    en: str
    learn_zh: str
    learn_en: str
    notebook: bool = False  # a notebook page (<slug>.ipynb), with no snippets/ folder of its own

    @property
    def page(self) -> str:
        """The Chinese page, relative to docs/."""
        return f"{self.part.key}/{self.slug}.{'ipynb' if self.notebook else 'md'}"

    @property
    def english_page(self) -> str:
        return f"{self.part.key}/{self.slug}.en.{'ipynb' if self.notebook else 'md'}"

    def title(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


@dataclass(frozen=True)
class Course:
    section_zh: str
    section_en: str
    parts: tuple[Part, ...]
    lessons: tuple[Lesson, ...]

    def nav_section(self) -> dict:
        """The nav entry {section: [{part: [{title: page}, ...]}, ...]} in Chinese titles."""
        return {
            self.section_zh: [
                {part.zh: [{n.zh: n.page} for n in self.lessons if n.part == part]}
                for part in self.parts
                if any(n.part == part for n in self.lessons)
            ]
        }

    def translations(self) -> dict[str, str]:
        """Chinese nav title -> English title, for static-i18n's nav_translations."""
        pairs = {self.section_zh: self.section_en}
        pairs |= {p.zh: p.en for p in self.parts} | {n.zh: n.en for n in self.lessons}
        return pairs

    def table(self, lang: str, page_dir: str = "") -> str:
        """The home page's lesson table in one language; links relative to `page_dir`."""
        rows = list(TABLE_HEAD[lang])
        for n in self.lessons:
            part = n.part.zh if lang == "zh" else n.part.en
            target = _relative(n.page, page_dir)
            learn = n.learn_zh if lang == "zh" else n.learn_en
            rows.append(f"| {part} | [{n.title(lang)}]({target}) | {learn} |")
        return "\n".join(rows)


def _relative(path: str, page_dir: str) -> str:
    depth = len([p for p in page_dir.split("/") if p])
    return "../" * depth + path


def _fail(manifest: Path, problem: str) -> CourseError:
    return CourseError(f"{manifest}: {problem}")


def load_course(docs: Path, snippets: Path) -> Course:
    """Read and check docs/lessons.yml against the files it names."""
    manifest = docs / MANIFEST
    try:
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise _fail(manifest, f"cannot be read: {error}") from error
    try:
        parts = tuple(Part(p["key"], p["zh"], p["en"]) for p in data["parts"])
        by_key = {p.key: p for p in parts}
        lessons = []
        for entry in data["lessons"]:
            if entry["part"] not in by_key:
                raise _fail(
                    manifest, f"lesson {entry['slug']!r} names unknown part {entry['part']!r}"
                )
            fields = {k: entry[k] for k in ("slug", "zh", "en", "learn_zh", "learn_en")}
            lessons.append(
                Lesson(**fields, part=by_key[entry["part"]], notebook=entry.get("notebook", False))
            )
        course = Course(data["section"]["zh"], data["section"]["en"], parts, tuple(lessons))
    except (KeyError, TypeError) as error:
        raise _fail(manifest, f"missing or malformed field {error}") from error
    slugs = [n.slug for n in course.lessons]
    if duplicates := sorted({s for s in slugs if slugs.count(s) > 1}):
        raise _fail(manifest, f"lesson slugs listed twice: {', '.join(duplicates)}")
    for n in course.lessons:
        for page in (n.page, n.english_page):
            if not (docs / page).is_file():
                raise _fail(manifest, f"lesson {n.slug!r}: page docs/{page} does not exist")
        if not n.notebook and not (snippets / n.slug).is_dir():
            raise _fail(
                manifest, f"lesson {n.slug!r}: its code folder snippets/{n.slug}/ is missing"
            )
    listed = {n.page for n in course.lessons} | {n.english_page for n in course.lessons}
    for part in parts:
        for page in sorted((docs / part.key).glob("*.*")):
            rel = page.relative_to(docs).as_posix()
            if page.suffix in {".md", ".ipynb"} and rel not in listed:
                raise _fail(
                    manifest, f"docs/{rel} is in a part's folder but not listed as a lesson"
                )
    return course


def _replace_placeholder(nav: list, section: dict) -> bool:
    """Put `section` where the nav says `<title>: lessons.yml`, or where an earlier call put it
    (static-i18n runs on_config again for each language's build)."""
    for i, item in enumerate(nav):
        if isinstance(item, dict):
            (title, value), *_ = item.items()
            if value == MANIFEST or title in section:
                nav[i] = section
                return True
            if isinstance(value, list) and _replace_placeholder(value, section):
                return True
    return False


_course: list[Course] = []


@event_priority(100)  # before static-i18n's on_config (-100) reads nav_translations
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    root = Path(config.config_file_path).resolve().parent
    try:
        course = load_course(Path(config.docs_dir), root / "snippets")
    except CourseError as error:
        raise PluginError(str(error)) from error
    _course[:] = [course]
    if not _replace_placeholder(config.nav or [], course.nav_section()):
        raise PluginError(f"mkdocs.yml: the nav has no '<title>: {MANIFEST}' entry for the lessons")
    i18n = config.plugins.get("i18n")
    if i18n is not None:
        for language in i18n.config.languages:
            if language.locale == "en":
                language.nav_translations = {
                    **(language.nav_translations or {}),
                    **course.translations(),
                }
    return config


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_) -> str:
    if TABLE_MARKER not in markdown:
        return markdown
    lang = "en" if page.file.src_uri.endswith(f".en{Path(page.file.src_uri).suffix}") else "zh"
    page_dir = Path(page.file.src_uri).parent.as_posix().strip(".")
    return markdown.replace(TABLE_MARKER, _course[0].table(lang, page_dir))
