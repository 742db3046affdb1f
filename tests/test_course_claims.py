"""What the course says about itself and its labs holds (issue 26, defect 9): every lesson page has
the nine numbered parts the about pages describe, with the interview heading and lead-in they
name, and as many self-test questions as they say; the GPU labs' cost lines come from prices.toml;
a lesson calls only later lessons "upcoming"."""

import re

import pytest

from conftest import COURSE, DOCS, english_sibling, lesson_pages
from load_testing import cost

PAGES = [p for zh in lesson_pages() for p in (zh, english_sibling(zh))]
PART = re.compile(r"^## (\d) · .+$", re.M)
QUESTION = re.compile(r"^\?\?\? question ", re.M)
# what docs/about.md and docs/about.en.md promise
SELF_TEST_QUESTIONS = range(3, 6)
INTERVIEW = {
    "zh": ("## 7 · 面试考点 {#interview}", "回答要点："),
    "en": ("## 7 · Interview questions {#interview}", "A strong answer covers:"),
}


def lang(page) -> str:
    return "en" if page.name.endswith(".en.md") else "zh"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_lesson_page_has_the_nine_parts_the_about_page_lists(page):
    text = page.read_text(encoding="utf-8")
    assert [int(n) for n in PART.findall(text)] == list(range(1, 10))
    heading, lead_in = INTERVIEW[lang(page)]
    assert heading in text.splitlines()
    assert lead_in in text.splitlines()
    assert len(QUESTION.findall(text)) in SELF_TEST_QUESTIONS


@pytest.mark.parametrize("name", ["about.md", "about.en.md"])
def test_the_about_pages_state_the_shape_the_lessons_have(name):
    text = (DOCS / name).read_text(encoding="utf-8")
    counts = {len(QUESTION.findall(p.read_text(encoding="utf-8"))) for p in lesson_pages()}
    low, high = min(counts), max(counts)
    assert (low, high) == (SELF_TEST_QUESTIONS[0], SELF_TEST_QUESTIONS[-1])
    stated = "三到五道题" if name == "about.md" else "three to five questions"
    assert stated in text
    assert any(lesson.notebook for lesson in COURSE.lessons)
    assert "notebook" in text.lower(), "the about page names the notebook as the exception"
    assert "面试连线" not in text and "In the interview" not in text


def test_no_page_keeps_the_old_interview_heading_or_lead_in():
    old = ("面试连线", "好的回答会覆盖", "好的回答应包括", "Interview link", "A good answer covers")
    for page in DOCS.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert not [o for o in old if o in text], page


@pytest.mark.parametrize("slug", sorted(cost.LAB_MINUTES))
def test_gpu_lab_cost_lines_are_computed_from_the_price_table(slug):
    lesson = next(lesson for lesson in COURSE.lessons if lesson.slug == slug)
    zh = DOCS / lesson.page
    for page in (zh, english_sibling(zh)):
        card = (
            page.read_text(encoding="utf-8").split('!!! example "GPU Lab"', 1)[1].split("\n\n")[1]
        )
        assert f"{{{{ load_testing.lab_cost_usd_{slug} }}}}" in card, page
        assert f"{{{{ load_testing.lab_minutes_{slug} }}}}" in card, page
        assert "¥" not in card, page
    price = cost.load_prices()[cost.GPU_KEY]
    minutes = cost.LAB_MINUTES[slug]
    assert cost.lab_cost_usd(minutes, price.usd_per_hour) == pytest.approx(
        minutes * price.usd_per_hour / 60
    )


LATER = {"zh": "后面的", "en": "that follows"}
EARLIER = {"zh": "前面", "en": "before it"}
LESSON_LINK = re.compile(r"\]\(\.\./\w+/(\w+)\.md[#)]")


@pytest.mark.parametrize("name", ["kv_cache.md", "kv_cache.en.md"])
def test_upcoming_names_only_later_lessons_and_links_them(name):
    """kv_cache's summary: the lessons it calls later come later, those it calls earlier come
    earlier, and each is a link the reader can follow."""
    order = [lesson.slug for lesson in COURSE.lessons]
    here = order.index("kv_cache")
    text = (DOCS / "model_memory" / name).read_text(encoding="utf-8")
    assert "upcoming" not in text and "即将" not in text
    summary = text.split("{#takeaways}", 1)[1].split("\n## ", 1)[0]
    language = lang(DOCS / name)
    sentences = re.split(r"(?<=[；;])|\n", summary)
    later = next(s for s in sentences if LATER[language] in s)
    earlier = next(s for s in sentences if EARLIER[language] in s)
    assert LESSON_LINK.findall(later) and LESSON_LINK.findall(earlier)
    assert all(order.index(slug) > here for slug in LESSON_LINK.findall(later))
    assert all(order.index(slug) < here for slug in LESSON_LINK.findall(earlier))


@pytest.mark.parametrize("name", ["prefill_decode.md", "prefill_decode.en.md"])
def test_the_first_lesson_introduces_the_roofline_and_links_forward_for_later_figures(name):
    """Issue 26, reader experience 3: lesson 1 introduces the ridge point and leaves the roofline
    to its lesson; a figure from the latency lesson sits next to a link to that lesson; self-test 3
    accepts the plain 2N estimate (its figures are in the answer)."""
    text = (DOCS / "foundations" / name).read_text(encoding="utf-8")
    assert r"\min\left(P_{\text{peak}}" not in text  # the attainable-FLOP/s formula is lesson 5's
    assert "../performance/roofline.md" in text
    for paragraph in text.split("\n\n"):
        if "{{ latency_metrics." in paragraph:
            assert "latency_metrics.md" in paragraph, paragraph[:120]
    answer = text.split("??? question", 3)[3]
    assert "{{ prefill_decode.quiz_prefill_plain_ms }}" in answer
    assert "{{ prefill_decode.quiz_decode_plain_ms }}" in answer
