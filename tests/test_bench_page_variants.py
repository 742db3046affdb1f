"""scripts/bench_page_variants.py: every variant changes a built lesson page (markup drift would
otherwise leave a variant measuring the page as built)."""

import re
from urllib.parse import unquote
from xml.etree import ElementTree

import bench_page_variants
from conftest import DOCS, FIRST_PAGE_LESSON, built_html


def first_lesson_html(built_site) -> str:
    lesson = FIRST_PAGE_LESSON
    return built_html(built_site.site, DOCS / lesson.page, "zh").read_text(encoding="utf-8")


def test_every_variant_changes_a_built_lesson(built_site):
    html = first_lesson_html(built_site)
    unchanged = [
        name
        for name, change in bench_page_variants.VARIANTS.items()
        if name != "as built" and change(html) == html
    ]
    assert not unchanged, f"{FIRST_PAGE_LESSON.page}: these variants change nothing: {unchanged}"


def test_the_mask_variant_draws_each_formula_from_a_well_formed_image(built_site):
    html = first_lesson_html(built_site)
    masked = bench_page_variants.formulas_as_masks(html)
    images = re.findall(r"--m: url\(&quot;data:image/svg\+xml,(.*?)&quot;\)", masked)
    # one image per SVG MathJax drew: a formula broken over lines is one SVG per line
    pieces = sum(f.count("<mjx-break") + 1 for f in bench_page_variants.FORMULA.findall(html))
    assert images and len(images) == pieces, (len(images), pieces)
    for image in images:  # a broken image draws nothing, and the variant would look fast
        ElementTree.fromstring(unquote(image))
    assert not any("<svg" in f for f in bench_page_variants.FORMULA.findall(masked))


def test_text_only_keeps_the_words_and_draws_nothing(built_site):
    html = first_lesson_html(built_site)
    text = bench_page_variants.text_only(html)
    article = text[text.index('<article class="md-content__inner') :]
    assert "<svg" not in article and "<mjx-container" not in article
    heading = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S).group(1)
    assert heading in text
