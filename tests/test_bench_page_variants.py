"""scripts/bench_page_variants.py: every variant changes a built lesson page (markup drift would
otherwise leave a variant measuring the page as built)."""

import sys

from conftest import DOCS, FIRST_PAGE_LESSON, ROOT, built_html

sys.path.insert(0, str(ROOT / "scripts"))
import bench_page_variants


def test_every_variant_changes_a_built_lesson(built_site):
    lesson = FIRST_PAGE_LESSON
    html = built_html(built_site.site, DOCS / lesson.page, "zh").read_text(encoding="utf-8")
    unchanged = [
        name
        for name, change in bench_page_variants.VARIANTS.items()
        if name != "as built" and change(html) == html
    ]
    assert not unchanged, f"{lesson.page}: these variants change nothing: {unchanged}"
