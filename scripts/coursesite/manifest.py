"""The course's manifest, docs/lessons.yml: its parts and lessons, and the checks it must pass.

"A lesson" means the same thing everywhere: the nav and the home page's table (coursesite.nav),
scripts/verify_labs.py (which labs exist) and the tests all read it through load_course(), which
fails, naming the manifest and the problem, when the manifest and the files disagree.
See docs/adr/0010-lesson-manifest.md. Needs pyyaml only (the labs' environment imports it too).
"""

from dataclasses import dataclass
from pathlib import Path

import yaml

MANIFEST = "lessons.yml"  # in docs_dir


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
    needs: tuple[str, ...] = ()  # the slugs of earlier lessons to read first (the learning map)

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


def _fail(manifest: Path, problem: str) -> CourseError:
    return CourseError(f"{manifest}: {problem}")


def read_course(manifest: Path) -> Course:
    """The manifest's parts and lessons, as written (no check against the files)."""
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
            needs = entry.get("needs", [])
            if not isinstance(needs, list) or not all(isinstance(n, str) for n in needs):
                raise _fail(manifest, f"lesson {entry['slug']!r}: needs must be a list of slugs")
            earlier = {n.slug for n in lessons}
            if unknown := [n for n in needs if n not in earlier]:
                raise _fail(
                    manifest,
                    f"lesson {entry['slug']!r} needs {', '.join(unknown)}, "
                    "which is not a lesson listed before it",
                )
            lessons.append(
                Lesson(
                    **fields,
                    part=by_key[entry["part"]],
                    notebook=entry.get("notebook", False),
                    needs=tuple(needs),
                )
            )
        return Course(data["section"]["zh"], data["section"]["en"], parts, tuple(lessons))
    except (KeyError, TypeError) as error:
        raise _fail(manifest, f"missing or malformed field {error}") from error


def problems(course: Course, docs: Path, snippets: Path) -> list[str]:
    """What the files say against the manifest: each lesson's two pages exist, its code folder
    snippets/<slug>/ is an importable package (an __init__.py), no slug is listed twice, and every
    page in a part's folder is a listed lesson."""
    found = []
    slugs = [n.slug for n in course.lessons]
    if duplicates := sorted({s for s in slugs if slugs.count(s) > 1}):
        found.append(f"lesson slugs listed twice: {', '.join(duplicates)}")
    for n in course.lessons:
        for page in (n.page, n.english_page):
            if not (docs / page).is_file():
                found.append(f"lesson {n.slug!r}: page docs/{page} does not exist")
        if n.notebook:
            continue
        if not (snippets / n.slug).is_dir():
            found.append(f"lesson {n.slug!r}: its code folder snippets/{n.slug}/ is missing")
        elif not (snippets / n.slug / "__init__.py").is_file():
            found.append(
                f"lesson {n.slug!r}: snippets/{n.slug}/ has no __init__.py "
                f"(its modules import as the package {n.slug})"
            )
    listed = {n.page for n in course.lessons} | {n.english_page for n in course.lessons}
    for part in course.parts:
        for page in sorted((docs / part.key).glob("*.*")):
            rel = page.relative_to(docs).as_posix()
            if page.suffix in {".md", ".ipynb"} and rel not in listed:
                found.append(f"docs/{rel} is in a part's folder but not listed as a lesson")
    return found


def load_course(docs: Path, snippets: Path) -> Course:
    """Read docs/lessons.yml and check it against the files it names (the first problem fails)."""
    manifest = docs / MANIFEST
    course = read_course(manifest)
    if found := problems(course, docs, snippets):
        raise _fail(manifest, found[0])
    return course
