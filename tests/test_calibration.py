"""The calibration lesson: published measurements, each beside the core's floor for its setting."""

import dataclasses
import datetime
import json
import re
import tomllib

import pytest

from conftest import ROOT
from core.gpus import load_gpus
from core.models import load_model
from core.published import (
    FORMATS,
    PUBLISHED_FILE,
    Published,
    calibrated,
    closest_published,
    floor_tok_s,
    load_published,
    tensor_parallel,
    validate,
)
from core.roofline import e2e_bound_s, tpot_bound

ROWS = load_published()
RAW = tomllib.loads(PUBLISHED_FILE.read_text(encoding="utf-8"))["row"]


def test_every_row_validates_and_there_are_enough_of_them():
    assert len(ROWS) == len(RAW) >= 40
    assert len({r.publisher for r in ROWS}) >= 3
    assert len({r.url for r in ROWS}) >= 3


def test_every_row_names_a_commit_pinned_page_read_on_a_date():
    for r in ROWS:
        assert r.url.startswith("https://github.com/") and "/blob/" in r.url, r.url
        commit = r.url.split("/blob/")[1].split("/")[0]
        assert len(commit) == 40 and int(commit, 16) >= 0, f"{r.url}: pin the page to a commit"
        assert datetime.date(2024, 1, 1) <= r.read <= datetime.date.today()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("url", "github.com/x", "https://"),
        ("read", "2026-12-03", "date"),
        ("read", datetime.date.today() + datetime.timedelta(days=1), "past date"),
        ("gpu", "a100_40gb", "unknown GPU"),
        ("model", "qwen3-8b", "unknown model"),
        ("format", "NF4", "unknown format"),
        ("batch", 0, "batch"),
        ("batch", "many", "batch"),
        ("gpus", 1.5, "gpus"),
        ("input_len", 0, "input_len"),
        ("value", 0, "positive"),
        ("value", True, "positive"),
        ("engine_version", "", "non-empty"),
    ],
)
def test_a_bad_field_is_an_error_naming_it(field, value, message):
    with pytest.raises(ValueError, match=message):
        validate({**RAW[0], field: value})


def test_a_missing_or_unknown_field_is_an_error():
    row = dict(RAW[0])
    del row["metric"]
    with pytest.raises(ValueError, match="missing fields: \\['metric'\\]"):
        validate(row)
    with pytest.raises(ValueError, match="unknown fields: \\['speed'\\]"):
        validate({**RAW[0], "speed": 1.0})


def test_a_bad_row_in_the_file_names_its_position(tmp_path):
    bad = tmp_path / "published.toml"
    text = PUBLISHED_FILE.read_text(encoding="utf-8")
    bad.write_text(text + '\n[[row]]\npublisher = "x"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=f"row {len(RAW) + 1}: missing fields"):
        load_published(bad)


def test_every_share_is_a_fraction_of_the_floor():
    # above 1 would mean the floor (or the row) is wrong: the roofline cannot be beaten
    for c in calibrated():
        assert 0 < c.share <= 1, f"{c.row.published_model} {c.row.format} {c.row.input_len}"


def test_a_batch_one_floor_is_the_cores_request_time_per_token():
    row = next(r for r in ROWS if r.model == "qwen2.5-7b-instruct" and r.format == "BF16")
    gpu, model = load_gpus()[row.gpu], load_model(row.model)
    expected = row.output_len / e2e_bound_s(gpu, model, row.input_len, row.output_len)
    assert floor_tok_s(row) == pytest.approx(expected)
    # a one-token prompt: almost all of it is decode steps, each no faster than one TPOT floor
    assert floor_tok_s(row) < 1 / tpot_bound(gpu, model, 1).seconds


def test_quantized_formats_lower_the_floor_time_as_their_bytes_do():
    setting = next(r for r in ROWS if r.format == "BF16" and r.batch == 1 and r.gpus == 1)
    floors = {f: floor_tok_s(dataclasses.replace(setting, format=f)) for f in FORMATS}
    assert floors["BF16"] < floors["GPTQ-Int8"] < floors["GPTQ-Int4"] == floors["AWQ"]


def test_tensor_parallel_floors_divide_by_the_gpu_count():
    row = next(r for r in ROWS if r.gpus == 1 and r.batch == 1)
    for n in (2, 4, 8):
        assert floor_tok_s(dataclasses.replace(row, gpus=n)) == pytest.approx(n * floor_tok_s(row))
    h100 = load_gpus()["h100_sxm"]
    assert tensor_parallel(h100, 4).fp8_dense_tflops == 4 * h100.fp8_dense_tflops


def test_a_max_load_floor_is_compute_only_and_grows_with_the_peak():
    row = next(r for r in ROWS if r.batch == "max")
    assert row.phase == "serving"
    share_h100 = Published(**{**dataclasses.asdict(row), "gpu": "h100_sxm"})
    share_h20 = Published(**{**dataclasses.asdict(row), "gpu": "h20"})
    assert floor_tok_s(share_h100) > floor_tok_s(share_h20)  # H20: far less compute, more bandwidth


def test_closest_published_prefers_the_same_model_gpu_and_format():
    exact_setting = ("qwen2.5-7b-instruct", "a100_80gb_sxm", "AWQ", "decode")
    exact = closest_published(*exact_setting)
    assert exact is not None
    assert (exact.row.model, exact.row.format, exact.row.gpus) == ("qwen2.5-7b-instruct", "AWQ", 1)
    # Transformers ran the same setting: the course's engine wins, whatever the order of the rows
    backwards = closest_published(*exact_setting, rows=calibrated()[::-1])
    assert exact.row.engine == backwards.row.engine == "vLLM"
    assert exact.row.input_len == min(
        r.input_len for r in ROWS if r.model == exact.row.model and r.format == "AWQ"
    )
    elsewhere = closest_published("qwen2.5-7b-instruct", "rtx_4090", "BF16", "decode")
    assert elsewhere.row.model == "qwen2.5-7b-instruct" and elsewhere.row.format == "BF16"
    serving = closest_published("llama-3.1-8b-instruct", "h200_sxm", "FP8", "serving")
    assert serving.row.phase == "serving" and serving.row.gpu == "h200_sxm"
    assert serving.utilization == "MFU" and exact.utilization == "MBU"
    with pytest.raises(ValueError, match="phase"):
        closest_published("qwen2.5-7b-instruct", "a100_80gb_sxm", "AWQ", "prefill")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_chart_has_one_dot_per_row_and_describes_every_line(lang):
    import xml.etree.ElementTree as ET

    from calibration.chart import share_svg

    rows = calibrated()
    root = ET.fromstring(share_svg(rows, lang))
    svg = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{svg}circle")) == len(rows)
    desc = root.find(f"{svg}desc").text
    assert f"{max(c.share for c in rows):.0%}" in desc
    # the share is floor time over measured time (at most 1), in both languages' titles
    title = root.find(f"{svg}title").text
    assert {"zh": "下界时间 ÷ 实测时间", "en": "floor ÷ measured time"}[lang] in title
    with pytest.raises(ValueError, match="lang"):
        share_svg(rows, "fr")


def test_the_table_lists_every_row_with_its_share():
    from calibration.table import table

    lines = table("en").splitlines()
    assert len(lines) == 2 + len(ROWS)
    assert all(line.count("|") == lines[0].count("|") for line in lines)
    for c, line in zip(calibrated(), lines[2:], strict=True):
        assert line.endswith(f"| {c.share:.0%} ({c.utilization}) |")


# ---------------------------------------------------------------- the course's own recorded runs

REFERENCE_SCHEMA = ROOT / "labs" / "calibration" / "schema.json"


def test_at_least_one_reference_run_is_recorded_and_each_validates():
    import jsonschema

    from calibration.reference_run import recorded_runs

    schema = json.loads(REFERENCE_SCHEMA.read_text(encoding="utf-8"))
    runs = recorded_runs()
    assert runs, "labs/results/<machine>/calibration-*.json: no recorded run"
    for path, doc in runs:
        jsonschema.validate(doc, schema)
        assert "machine" in doc, f"{path.name}: record runs with machine_roofline.py"
        assert path.parent.name == doc["device"]["slug"] == doc["machine"]["slug"], path


def test_the_page_shows_every_recorded_time_beside_its_floor(tmp_path):
    from calibration.reference_run import comparisons, recorded_runs, report

    (_, doc), *_ = recorded_runs()
    table = report("en")
    for c in comparisons(doc):
        assert (
            f"| {c.measured_s * 1e3:,.1f} | {c.floor.seconds * 1e3:,.1f} | {c.share:.0%} |" in table
        )
    assert min(c.share for c in comparisons(doc)) > 0
    assert report("zh", results=tmp_path).startswith("还没有记录")  # no run: a sentence, no table


# ---------------------------------------------------------------- lab cards without a run


def has_lab(page) -> bool:
    return (ROOT / "labs" / page.name.split(".")[0] / "claims.py").is_file()


LAB_PAGES = sorted(p for p in (ROOT / "docs").glob("*/*.md") if has_lab(p))


def test_a_lab_card_quotes_the_closest_row_until_a_run_is_recorded(tmp_path):
    from core.published import lab_card

    args = ({"phases"}, "qwen2.5-7b-instruct", "rtx_4090", "AWQ", "decode")
    empty = tmp_path / "results"
    empty.mkdir()
    line = lab_card("en", *args, results_dir=empty)
    c = closest_published(*args[1:])
    assert line.startswith("No run of this lab is recorded yet.")
    assert f"{c.share:.0%} of the floor" in line and c.row.url in line
    assert lab_card("zh", *args, results_dir=empty).startswith("这个实验还没有记录在案的运行")
    recorded = empty / "rtx_4090"
    recorded.mkdir()
    (recorded / "phases-x.json").write_text(
        json.dumps({"lab": "phases", "date": "2026-12-03T00:00:00Z"}), encoding="utf-8"
    )
    assert lab_card("en", *args, results_dir=empty) == ""


def test_an_moe_lab_quotes_no_dense_row_while_no_publisher_measured_its_model(tmp_path):
    from core.published import lab_card

    model = "qwen3-30b-a3b"
    assert model not in {r.model for r in load_published()}
    empty = tmp_path / "results"
    empty.mkdir()
    line = lab_card("en", {"moe_decode"}, model, "h100_sxm", "BF16", "decode", results_dir=empty)
    assert line.startswith("No run of this lab is recorded yet") and "Qwen3-30B-A3B" in line
    assert "closest published measurement" not in line and "no publisher" in line
    zh = lab_card("zh", {"moe_decode"}, model, "h100_sxm", "BF16", "decode", results_dir=empty)
    assert "Qwen3-30B-A3B" in zh and "离它最近的一条" not in zh
    # a dense model with no row of its own still gets the closest row of another model
    small = "qwen2.5-0.5b-instruct"
    assert small not in {r.model for r in load_published()}
    dense = lab_card("en", {"x"}, small, "rtx_4090", "BF16", "decode", results_dir=empty)
    assert "closest published measurement" in dense


@pytest.mark.parametrize("page", LAB_PAGES, ids=lambda p: p.name)
def test_every_lab_page_quotes_the_closest_published_row(page, built_site):
    import verify_labs
    from core.lab_results import recorded_runs

    slug = page.name.split(".")[0]
    labs = set(verify_labs.claims_module(slug).CLAIMS)
    text = page.read_text(encoding="utf-8")
    assert re.search(r"from core\.published import [^\n]*\blab_card\b", text), page
    html_path = built_site.site / ("en/" if page.name.endswith(".en.md") else "")
    html = (html_path / page.parent.name / slug / "index.html").read_text(encoding="utf-8")
    # two languages each; lab_folders() leaves out calibration's engine-free lab, which has no card
    assert len(LAB_PAGES) == 2 * len(verify_labs.lab_folders())
    if not recorded_runs(labs=labs):
        en = ".en." in page.name
        quote = "closest published measurement" if en else "离它最近的一条"
        no_row = "no publisher in the course" if en else "里也没有"  # an MoE model nobody measured
        assert quote in html or no_row in html, page


def test_the_qwen_benchmarks_gpu_is_named_as_published_not_as_the_floors_sxm_card():
    """The Qwen page says "NVIDIA A100 80GB"; SXM is only the card the floor assumes (pitfall 6)."""
    from batched_decode.values import values as batched_values
    from calibration.values import values as calibration_values
    from core.reference import BF16_MODEL, QWEN_BENCH_GPU

    published = closest_published(BF16_MODEL, QWEN_BENCH_GPU, "BF16", "decode").row.hardware
    assert "SXM" not in published and "PCIe" not in published
    assert calibration_values()["vllm_bf16_hardware"] == published
    assert batched_values()["bench_gpu"] == published
    for page in ("calibration.md", "calibration.en.md"):
        assert "a100_name" not in (ROOT / "docs" / "performance" / page).read_text(encoding="utf-8")
