"""The course site's one MkDocs hook: every stage of the build, in the order written below.

mkdocs.yml lists this file as its only hook. Each list below is the order in which the stages of
one MkDocs event run; a stage is a plain function of the module named after it (over a page's
Markdown or HTML, with coursesite.PageInfo and coursesite.Build), so it can be tested without
MkDocs. The functions at the end are the thin adapter: they turn MkDocs' events and objects into
those calls. Where a stage must run before or after a plugin, the event has two lists, one each
side of static-i18n (priority -100): BEFORE_I18N and AFTER_I18N; the rest run at MkDocs' default
priority, after the plugins' own handlers. See docs/adr/0016-build-pipeline.md.

A fixture site (the tests') runs some stages only: it names them in mkdocs.yml as
`extra: {pipeline_stages: [values, exec_errors, ...]}` (module names); the course runs them all.
"""

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.plugins import CombinedEvent, event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import AnchorLink

from coursesite import (
    Build,
    Languages,
    NavNode,
    PageInfo,
    StageError,
    abbreviations,
    charts,
    code_spans,
    exec_errors,
    folding,
    i18n_pairs,
    interview,
    learning_map,
    llms,
    local_assets,
    material_fixes,
    math_svg,
    mermaid_svg,
    nav,
    notation,
    notebooks,
    page_assets,
    reading,
    run_in_browser,
    serve_exit,
    serve_failures,
    serve_rebuild,
    session,
    site_meta,
    values,
)
from coursesite.manifest import MANIFEST, Course, load_course

BEFORE_I18N = 100  # static-i18n's handlers run at -100
AFTER_I18N = -200

PageStage = Callable[[str, PageInfo, Build], str]
NotFoundStage = Callable[[str, Build], str]
BuildStage = Callable[[Build], None]

# --- the order ------------------------------------------------------------------------------

# A page's Markdown, before it is rendered (and its blocks executed).
MARKDOWN: list[PageStage] = [
    nav.fill_lesson_table,  # <!-- lessons --> on the home page
    reading.state_time,  # under a lesson's title, from its text as written (nothing added yet)
    learning_map.fill_map,  # <!-- learning-map --> on the home page
    learning_map.link_neighbours,  # "before this / after this", under the reading time
    interview.fill_bank,  # <!-- interview-bank -->: the lessons' sections 7 and 9
    notation.fill_table,  # <!-- notation -->: snippets/core/notation.toml in the page's language
    abbreviations.append,  # the page language's abbreviations
    values.fill,  # {{ lesson.name }} (after the table and abbreviations: none may hold one)
    exec_errors.start_page,  # a failing block is reported with this page's name
    run_in_browser.start_page,  # the buttons of this page's blocks are in its language
]
# A page's rendered content, before the theme puts it in the template.
CONTENT: list[PageStage] = [
    exec_errors.add_banner,  # under serve, the failing blocks listed above the content
    notebooks.heading_ids,  # before the search index reads the headings: the ids the TOC links to
    learning_map.head_notebook,  # a notebook lesson's reading time and before/after lines
    llms.write_copy,  # the Markdown copy: the content as rendered, without the form below
    run_in_browser.fill_forms,  # a page's own form (the playground's)
    folding.fold_long_code,  # after the Markdown copy: the copy keeps every listing open
]
# A page's whole HTML, written out after these.
PAGE: list[PageStage] = [
    notebooks.trim,  # before math_svg adds its stylesheet, which must not be trimmed
    math_svg.typeset_formulas,
    mermaid_svg.draw_diagrams,  # before page_assets decides whether Mermaid's script stays
    charts.readable_on_phone,  # a chart's text stays >= 11 px: a min-width, a scrolling box
    material_fixes.fix,
    code_spans.merge_page,
    page_assets.load_what_is_used,
    site_meta.page_links,
]
NOT_FOUND: list[NotFoundStage] = [
    page_assets.not_found_assets,
    site_meta.not_found_page,
]
# After each language's build (static-i18n builds the others inside the default's).
EACH_LANGUAGE_BUILT: list[BuildStage] = [
    llms.write_llms_txt,  # the language's llms.txt, in nav order
    run_in_browser.write_blocks,  # the runnable blocks' code and the course archive
]
# After every language is built and static-i18n has merged the search index.
SITE_BUILT: list[BuildStage] = [
    serve_rebuild.finish_build,  # the served search index mended, before page_assets splits it
    page_assets.split_site_index,
    math_svg.close,
    mermaid_svg.close,
    site_meta.write_not_found_pages,
    site_meta.write_citation,  # CITATION.cff with the build's repository address
]

# every stage module, by the name a fixture site's `pipeline_stages` gives it
STAGES = (
    "nav",
    "reading",
    "learning_map",
    "interview",
    "notation",
    "i18n_pairs",
    "local_assets",
    "abbreviations",
    "values",
    "exec_errors",
    "notebooks",
    "math_svg",
    "mermaid_svg",
    "charts",
    "folding",
    "material_fixes",
    "code_spans",
    "page_assets",
    "site_meta",
    "llms",
    "run_in_browser",
    "serve_rebuild",
    "serve_failures",
    "serve_exit",
)

# --- the adapter ----------------------------------------------------------------------------

_course: list[Course] = []  # this build's manifest, read in on_config
_nav: list[Navigation] = []  # this language's nav, for llms.txt


def _stage_name(stage: Callable) -> str:
    return stage.__module__.rsplit(".", 1)[-1]


def _enabled(config: MkDocsConfig, name: str) -> bool:
    only = (config.extra or {}).get("pipeline_stages")
    if only is not None and set(only) - set(STAGES):
        raise PluginError(f"mkdocs.yml: extra.pipeline_stages: unknown {set(only) - set(STAGES)}")
    return only is None or name in only


def _languages(config: MkDocsConfig) -> Languages:
    i18n = config.plugins.get("i18n")
    if i18n is None:
        return Languages(config.theme["language"], (config.theme["language"],))
    configured = i18n.config.languages
    built = tuple(lang.locale for lang in configured if lang.build)
    default = next(lang.locale for lang in configured if lang.default and lang.build)
    return Languages(default, built, tuple(lang.locale for lang in configured if not lang.build))


def _inner_build(config: MkDocsConfig) -> bool:
    """static-i18n's build of another language, which runs inside the default language's."""
    i18n = config.plugins.get("i18n")
    return i18n is not None and bool(getattr(i18n, "building", False))


def _build(config: MkDocsConfig) -> Build:
    i18n = config.plugins.get("i18n")
    return Build(
        root=Path(config.config_file_path).resolve().parent,
        docs=Path(config.docs_dir),
        site=Path(config.site_dir),
        site_url=config.site_url or "/",
        site_name=config.site_name,
        site_description=config.site_description or "",
        repo_url=config.repo_url or "",
        languages=_languages(config),
        lang=i18n.current_language if i18n is not None else config.theme["language"],
        course=_course[0] if _course else None,
    )


def _page(page: Page) -> PageInfo:
    alternates = getattr(page.file, "alternates", None) or {}
    return PageInfo(
        src_uri=page.file.src_uri,
        url=page.url,
        alternates={lang: file.url for lang, file in alternates.items()},
        title=page.title or "",
        dest_uri=page.file.dest_uri,
        toc=tuple(_toc_entries(page.toc or ())),
    )


def _toc_entries(items: Iterable[AnchorLink]) -> Iterator[tuple[str, str]]:
    for item in items:
        yield item.id, item.title
        yield from _toc_entries(item.children)


def _run(stages: list, config: MkDocsConfig, text: str, *args) -> str:
    for stage in stages:
        if _enabled(config, _stage_name(stage)):
            try:
                text = stage(text, *args)
            except StageError as error:
                raise PluginError(str(error)) from error
    return text


def _run_build_stages(stages: list[BuildStage], config: MkDocsConfig) -> None:
    build = dataclasses.replace(_build(config), nav=_nav_nodes(_nav[0].items) if _nav else ())
    for stage in stages:
        if _enabled(config, _stage_name(stage)):
            stage(build)


def _fail_on(problems: list[str], heading: str) -> None:
    if problems:
        raise PluginError(f"{heading}:\n  " + "\n  ".join(problems))


def on_startup(command: str, dirty: bool = False, **_) -> None:
    session.start(command, dirty)  # the one place that decides whether this process serves
    if session.SESSION.serving:
        serve_exit.install()


@event_priority(BEFORE_I18N)  # static-i18n reads nav_translations in its on_config
def _lessons_in_nav(config: MkDocsConfig) -> MkDocsConfig:
    if not _enabled(config, "nav"):
        return config
    root = Path(config.config_file_path).resolve().parent
    try:
        course = load_course(Path(config.docs_dir), root / "snippets")
    except ValueError as error:
        raise PluginError(str(error)) from error
    _course[:] = [course]
    if not nav.replace_placeholder(config.nav or [], course.nav_section()):
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


def _checks_and_setup(config: MkDocsConfig) -> MkDocsConfig:
    # after the plugins' on_config: markdown-exec has registered its python fence
    if _enabled(config, "serve_rebuild"):
        serve_rebuild.drop_dirty_warning()
    if _enabled(config, "i18n_pairs"):
        spec = config.exclude_docs

        def excluded(rel: str) -> bool:
            return bool(spec and spec.match_file(rel))

        problems = i18n_pairs.missing_translations(Path(config.docs_dir), excluded)
        _fail_on(problems, "Missing translations")
    extra_javascript = [str(getattr(item, "path", item)) for item in config.extra_javascript]
    if _enabled(config, "local_assets"):
        extra_css = [str(getattr(item, "path", item)) for item in config.extra_css]
        problems = local_assets.asset_problems(
            Path(config.docs_dir), [*extra_javascript, *extra_css]
        )
        _fail_on(problems, "Site assets")
    if _enabled(config, "exec_errors"):
        exec_errors.watch_markdown_exec()
        jupyter = config.plugins.get("mkdocs-jupyter")
        if session.SESSION.serving and jupyter is not None:
            jupyter.config.allow_errors = True  # the cell's traceback shows in the notebook page
    if _enabled(config, "page_assets"):
        problems = page_assets.config_problems(Path(config.docs_dir), extra_javascript)
        if problems:
            raise PluginError("; ".join(problems))
    if _enabled(config, "notebooks"):
        notebooks.keep_notebooks_pages()
    if _enabled(config, "run_in_browser"):
        try:
            run_in_browser.wrap_python_fences(config.mdx_configs)
        except StageError as error:
            raise PluginError(str(error)) from error
    return config


on_config = CombinedEvent(_lessons_in_nav, _checks_and_setup)


def on_pre_build(config: MkDocsConfig) -> None:
    if _enabled(config, "values"):
        values.forget(Path(config.config_file_path).resolve().parent / "snippets")


@event_priority(AFTER_I18N)  # static-i18n's on_files makes new File objects
def on_files(files: Files, config: MkDocsConfig) -> Files:
    if _enabled(config, "serve_rebuild"):
        files = serve_rebuild.mark_changed_pages(files, config)
    return files


def _nav_for_llms(nav_: Navigation, config: MkDocsConfig, **_) -> Navigation:
    _nav[:] = [nav_]  # before static-i18n's on_nav, as llms.txt has always listed it
    return nav_


@event_priority(AFTER_I18N)  # static-i18n's on_nav rebuilds the nav
def _nav_titles(nav_: Navigation, config: MkDocsConfig, **_) -> Navigation:
    if _enabled(config, "serve_rebuild"):
        nav_ = serve_rebuild.keep_titles(nav_)
    return nav_


on_nav = CombinedEvent(_nav_for_llms, _nav_titles)


def on_env(env, config: MkDocsConfig, files: Files):
    if _enabled(config, "serve_rebuild"):
        env = serve_rebuild.cache_templates(env)
    return env


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_) -> str:
    return _run(MARKDOWN, config, markdown, _page(page), _build(config))


def on_page_content(html: str, page: Page, config: MkDocsConfig, **_) -> str:
    return _run(CONTENT, config, html, _page(page), _build(config))


def on_page_context(context, page: Page, config: MkDocsConfig, nav: Navigation):
    # after the search plugin's own on_page_context: the page's entries are in its index
    if _enabled(config, "serve_rebuild"):
        serve_rebuild.record_page(page, config)
    return context


def on_post_page(output: str, page: Page, config: MkDocsConfig) -> str:
    return _run(PAGE, config, output, _page(page), _build(config))


def on_post_template(output: str, template_name: str, config: MkDocsConfig) -> str:
    if template_name != site_meta.NOT_FOUND:
        return output
    return _run(NOT_FOUND, config, output, _build(config))


def _nav_nodes(items) -> tuple[NavNode, ...]:
    return tuple(
        NavNode(item.title or "", children=_nav_nodes(item.children))
        if isinstance(item, Section)
        else NavNode(item.title or "", url=item.url)
        for item in items
        if isinstance(item, Section | Page)
    )


def _each_language_built(config: MkDocsConfig) -> None:
    _run_build_stages(EACH_LANGUAGE_BUILT, config)


@event_priority(AFTER_I18N)  # static-i18n's on_post_build builds the other languages
def _site_built(config: MkDocsConfig) -> None:
    if not _inner_build(config):
        _run_build_stages(SITE_BUILT, config)


on_post_build = CombinedEvent(_each_language_built, _site_built)


def on_build_error(error: Exception, **_) -> None:
    serve_rebuild.build_failed()


def on_serve(server, config: MkDocsConfig, builder: Callable):
    if _enabled(config, "serve_rebuild"):
        server = serve_rebuild.watch_server(server)
    if _enabled(config, "serve_failures"):
        languages = _languages(config)
        prefixes = {lang: languages.prefix(lang) for lang in (*languages.built, *languages.unbuilt)}
        server = serve_failures.watch_server(server, prefixes)
    if _enabled(config, "serve_exit"):
        serve_exit.install()
    return server


def on_shutdown() -> None:
    serve_rebuild.shutdown()
