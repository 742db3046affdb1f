"""A Build and a PageInfo written by hand: what coursesite's stages need, without MkDocs."""

from pathlib import Path

from coursesite import Build, Languages, PageInfo

ROOT = Path(__file__).resolve().parent.parent


def a_build(lang: str = "zh", root: Path = ROOT, site: Path | None = None, **fields) -> Build:
    """The course's two languages, building `lang`."""
    return Build(
        root=root,
        docs=root / "docs",
        site=site or root / "site",
        site_url=fields.pop("site_url", "/"),
        site_name=fields.pop("site_name", "site"),
        site_description=fields.pop("site_description", ""),
        languages=fields.pop("languages", Languages("zh", ("zh", "en"))),
        lang=lang,
        **fields,
    )


def a_page(src_uri: str = "lesson.md", url: str = "lesson/", **fields) -> PageInfo:
    return PageInfo(src_uri=src_uri, url=url, **fields)
