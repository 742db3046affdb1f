"""Lessons lean on each other only for what they teach; shared plumbing lives in the core.

A lesson package (snippets/<slug>/) may import the core, the standard library, numpy (build-time
simulations) and its own modules. From another lesson it may import only what that lesson teaches:
each such import is listed in TAUGHT below, with the reason, and each listed name must be
- in a lesson that comes earlier in docs/lessons.yml (a reader has met it),
- defined in that module, not imported there from the core (a re-export is plumbing in disguise),
- in a module whose source that lesson's page shows (the reader has seen it).
Formatting, the reference choices, recorded lab results and chart frames are the core's
(core.display, core.reference, core.lab_results, core.svgchart); the core imports no lesson.
"""

import ast
from pathlib import Path

import pytest

from conftest import NOT_A_LESSON, ROOT, chinese_pages, lessons
from coursesite.syntax import INCLUDE_LINE
from markdown_source import read_page

SNIPPETS = ROOT / "snippets"
SLUGS = [lesson.slug for lesson in lessons()]

# (importing lesson, imported module) -> (names, what the earlier lesson teaches with them)
TAUGHT: dict[tuple[str, str], tuple[set[str], str]] = {
    ("paged_attention", "kv_cache.fit_4090"): (
        {"rtx_4090", "scenarios"},
        "the 24 GB card's KV budget and the scenarios paging is measured against",
    ),
    ("load_testing", "continuous_batching.simulate"): (
        {
            "MAX_OUTPUT",
            "MEAN_OUTPUT",
            "PROMPT_TOKENS",
            "SEED",
            "SLOTS",
            "Hardware",
            "Stream",
            "burst",
            "default_hardware",
            "request_stream",
            "simulate",
        },
        "the continuous-batching simulator and its workload, driven here at rising rates",
    ),
    ("load_testing", "latency_metrics.metrics"): (
        {"StreamedRequest", "goodput", "meets_slos", "percentile", "summarize"},
        "the metrics as vllm bench serve defines them, applied to the simulated requests",
    ),
    ("capacity_planning", "load_testing.cost"): (
        {"load_prices", "usd_per_million_tokens"},
        "the price table and cost per million tokens, applied to the plan's GPUs",
    ),
    ("capacity_planning", "continuous_batching.simulate"): (
        {"Hardware", "request_stream", "simulate"},
        "the continuous-batching simulator, run with a plan's step times for its load ceiling",
    ),
    ("serving_observability", "chunked_prefill.budget"): (
        {"plan"},
        "a prompt's steps and slowest step under a token budget: picks max_num_batched_tokens",
    ),
    ("serving_observability", "speculative_decoding.estimator"): (
        {"ALPHA", "DRAFT_TOKENS"},
        "the acceptance rate and draft length the speculation row of the tuning table assumes",
    ),
    ("playground", "roofline.chart"): ({"chart"}, "the roofline chart, for the reader's choice"),
    ("speculative_decoding", "batched_decode.batch_bound"): (
        {"CONTEXT", "configurations", "max_batch"},
        "the batched decode step's context, cards, formats and KV capacity, reused as the setting",
    ),
}


def lesson_files(slug: str) -> list[Path]:
    return sorted((SNIPPETS / slug).glob("*.py"))


def absolute_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) for each `from module import name`; (module, "*") for `import module`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "*") for alias in node.names]
    return found


def cross_lesson_imports() -> list[tuple[str, Path, str, str]]:
    """(importing slug, file, module, name) for every import of another lesson's package."""
    found = []
    for slug in SLUGS:
        for path in lesson_files(slug):
            for module, name in absolute_imports(path):
                top = module.split(".")[0]
                if top in SLUGS and top != slug:
                    found.append((slug, path, module, name))
    return found


def defined_names(module: str) -> set[str]:
    """Names a module defines itself (functions, classes, assignments), not ones it imports."""
    tree = ast.parse((SNIPPETS / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def shown_sources() -> set[str]:
    """Snippet files whose source some page shows (an executed block with source=...)."""
    shown = set()
    for page in chinese_pages():
        for block in read_page(page).executed_blocks:
            if "source" in block.options:
                shown |= {
                    m[1] for line in block.body.splitlines() if (m := INCLUDE_LINE.match(line))
                }
    return shown


def test_every_lesson_package_is_in_the_manifest():
    packages = {p.name for p in SNIPPETS.iterdir() if (p / "__init__.py").exists()}
    assert packages - set(NOT_A_LESSON) == set(SLUGS)


def test_lessons_import_another_lesson_only_for_what_it_teaches():
    unlisted = [
        f"{path.relative_to(ROOT)}: from {module} import {name}"
        for slug, path, module, name in cross_lesson_imports()
        if name not in TAUGHT.get((slug, module), (set(), ""))[0]
    ]
    assert not unlisted, (
        "a lesson imports another lesson for something that lesson does not teach; move shared "
        "plumbing into snippets/core/ (display, reference, lab_results, svgchart), or list a "
        "taught function in TAUGHT with its reason:\n" + "\n".join(unlisted)
    )


@pytest.mark.parametrize(("importer", "module"), sorted(TAUGHT))
def test_what_a_lesson_borrows_was_taught_earlier_on_its_page(importer, module):
    names, reason = TAUGHT[(importer, module)]
    teacher = module.split(".")[0]
    assert reason and SLUGS.index(teacher) < SLUGS.index(importer), f"{teacher} comes later"
    re_exported = names - defined_names(module)
    assert not re_exported, f"{module} does not define {sorted(re_exported)}: import them at home"
    assert module.replace(".", "/") + ".py" in shown_sources(), f"no page shows {module}'s code"


def test_every_taught_import_is_still_used():
    used = {(slug, module, name) for slug, _, module, name in cross_lesson_imports()}
    listed = {(s, m, n) for (s, m), (names, _) in TAUGHT.items() for n in names}
    assert listed <= used, f"TAUGHT lists imports no lesson makes: {sorted(listed - used)}"


def test_the_core_imports_no_lesson():
    for path in sorted((SNIPPETS / "core").glob("*.py")):
        lesson_imports = [m for m, _ in absolute_imports(path) if m.split(".")[0] in SLUGS]
        assert not lesson_imports, f"{path.relative_to(ROOT)} imports {lesson_imports}"


def test_the_check_catches_plumbing_through_a_lesson(tmp_path):
    """A lesson that took its formatter from another lesson's module would be caught."""
    path = tmp_path / "values.py"
    path.write_text("from latency_metrics.bounds import ms\nimport roofline.chart\n", "utf-8")
    assert absolute_imports(path) == [("latency_metrics.bounds", "ms"), ("roofline.chart", "*")]
    assert "ms" not in defined_names("latency_metrics.bounds")  # core.display's, imported there
