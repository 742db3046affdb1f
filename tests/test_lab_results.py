"""Lab results: the schema, recorded runs in labs/results/, and the claims verify_labs.py checks.

The documents built here are synthetic test inputs (never written under labs/results/): timings
from a straight-line model so each claim's pass and fail cases are known.
"""

import copy
import json
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

import verify_labs  # scripts/verify_labs.py
from conftest import ROOT
from core.formats import BF16, checkpoint_format
from core.lab_results import model_for
from core.models import load_model
from lab_docs import RTX_4090, TEST_CPU, results_doc
from prefill_decode import lab_results

RESULTS = ROOT / "labs" / "results"


def recorded_files() -> list[Path]:
    return sorted(p for p in RESULTS.glob("*/*.json"))


def all_errors(files: list[Path]) -> list[str]:
    errors = []
    for path in files:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            errors.append(f"{path}: not JSON: {error}")
            continue
        errors += [
            f"{path.relative_to(path.parents[1])}: {e}"
            for e in verify_labs.recorded_run_errors(doc, path)
        ]
    return errors


def measurement(series, prompt, new, repeat=0, *, prefill_per_token=1e-4, step=0.01, label=None):
    """A GPU-like call: TTFT grows with the prompt, every decode step costs `step` seconds."""
    ttft = 0.01 + prefill_per_token * prompt
    decode = step * (new - 1)
    return {
        "series": series,
        "label": label or f"prompt {prompt}, {new} new",
        "repeat": repeat,
        "prompt_tokens": prompt,
        "new_tokens": new,
        "wall_s": ttft + decode + 0.002,
        "ttft_s": ttft,
        "queue_s": 0.0001,
        "prefill_s": ttft - 0.001,
        "decode_s": decode,
        "tpot_s": decode / (new - 1) if new > 1 else None,
        "cached_tokens": 0,
    }


def document(lab: str, kind: str = "cuda", **timing) -> dict:
    if lab == "phases":
        calls = [
            ("short prompt, few new", 8, 8),
            ("long prompt, few new", 2000, 8),
            ("short prompt, many new", 8, 256),
        ]
        parameters = {
            "calls": [{"label": c, "prompt_tokens": p, "new_tokens": n} for c, p, n in calls]
        }
        rows = [measurement("phases", p, n, label=c, **timing) for c, p, n in calls]
    else:
        parameters = {
            "repeats": 2,
            "prompt_lens": [128, 1024, 8192],
            "context_new": 32,
            "output_lens": [16, 64, 256],
            "short_prompt": 32,
        }
        rows = [
            m
            for r in range(2)
            for m in [measurement("prompt_sweep", s, 32, r, **timing) for s in (128, 1024, 8192)]
            + [measurement("output_sweep", 32, n, r, **timing) for n in (16, 64, 256)]
        ]
    return results_doc(
        lab,
        {
            "max_model_len": 8224,
            "enable_prefix_caching": False,
            "warmup": 1,
            **parameters,
        },
        rows,
        device=TEST_CPU if kind == "cpu" else RTX_4090,
    )


# ---------------------------------------------------------------- schema and recorded runs


def test_the_schema_is_valid_draft_2020_12():
    schema = verify_labs.results_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"]["const"] == 1


@pytest.mark.parametrize("lab", ["phases", "sweep"])
def test_synthetic_documents_are_valid(lab):
    assert verify_labs.schema_errors(document(lab)) == []


def test_every_recorded_run_is_valid():
    errors = all_errors(recorded_files())
    assert not errors, "invalid recorded run(s) in labs/results/:\n  " + "\n  ".join(errors)


def test_a_broken_recorded_run_fails_naming_file_and_field(tmp_path):
    doc = document("sweep")
    doc["measurements"][3]["ttft_s"] = -0.5
    del doc["device"]["driver"]
    path = tmp_path / "rtx_4090" / "sweep-broken.json"
    path.parent.mkdir()
    path.write_text(json.dumps(doc), encoding="utf-8")
    errors = all_errors([path])
    assert any("rtx_4090/sweep-broken.json" in e and "measurements[3].ttft_s" in e for e in errors)
    assert any("device: 'driver' is a required property" in e for e in errors)


def test_a_cpu_run_or_a_misfiled_run_is_not_a_recorded_run(tmp_path):
    for doc, folder, field in [
        (document("phases", "cpu"), "cpu", "device.kind"),
        (document("phases"), "h100_sxm", "device.slug"),
    ]:
        path = tmp_path / folder / "phases.json"
        path.parent.mkdir()
        errors = verify_labs.recorded_run_errors(doc, path)
        assert any(e.startswith(field) for e in errors), errors


# ---------------------------------------------------------------- the lesson's claims


@pytest.mark.parametrize("lab", ["phases", "sweep"])
def test_gpu_timings_that_follow_the_lesson_pass(lab):
    checks = verify_labs.checks_for(document(lab), [], 0.3)
    assert {c.status for c in checks} <= {"PASS", "SKIP"}, checks
    assert sum(c.status == "PASS" for c in checks) >= 4


def test_a_cpu_run_checks_structure_only():
    checks = verify_labs.checks_for(document("sweep", "cpu"), [], 0.3)
    assert [c.status for c in checks] == ["PASS", "PASS", "SKIP"]
    assert "only structure and completeness" in checks[-1].detail


def test_flat_ttft_fails_the_prefill_claim():
    doc = document("sweep", prefill_per_token=0.0)
    failed = [c.name for c in verify_labs.checks_for(doc, [], 0.3) if c.status == "FAIL"]
    assert failed == ["TTFT grows with prompt length"]


def test_decode_that_slows_with_context_fails_the_flat_claim():
    doc = document("sweep")
    for m in doc["measurements"]:
        if m["series"] == "prompt_sweep" and m["prompt_tokens"] == 8192:
            m["tpot_s"] *= 3
    failed = [c.name for c in verify_labs.checks_for(doc, [], 0.3) if c.status == "FAIL"]
    assert failed == ["time per output token nearly flat as the prompt grows"]


def test_non_linear_wall_time_fails_the_r2_claim():
    doc = document("sweep")
    for m in doc["measurements"]:
        if m["series"] == "output_sweep" and m["new_tokens"] == 64:
            m["wall_s"] *= 3
    failed = [c.name for c in verify_labs.checks_for(doc, [], 0.3) if c.status == "FAIL"]
    assert failed == ["wall time grows linearly with new tokens"]


def test_missing_or_wrong_token_counts_fail_completeness():
    doc = document("sweep")
    doc["measurements"][0]["new_tokens"] = 31  # stopped early at EOS
    doc["measurements"][1]["cached_tokens"] = 16
    check = verify_labs.claims_module("prefill_decode").completeness(doc)
    assert check.status == "FAIL"
    assert "missing" in check.detail and "prefix-cache hits" in check.detail


def test_a_recorded_run_of_the_same_gpu_bounds_new_figures(tmp_path):
    recorded = document("sweep")
    runs = [(tmp_path / "rtx_4090" / "sweep-old.json", recorded)]
    same = verify_labs.against_recorded(copy.deepcopy(recorded), runs, 0.3)
    assert same.status == "PASS"
    slower = verify_labs.against_recorded(document("sweep", step=0.02), runs, 0.3)
    assert slower.status == "FAIL" and "TPOT output_sweep prompt 32 new 256: x2.00" in slower.detail
    other_gpu = document("sweep")
    other_gpu["device"]["name"] = "NVIDIA H100 80GB HBM3"
    assert verify_labs.against_recorded(other_gpu, runs, 0.3).status == "SKIP"


def test_the_comparison_names_the_quantities_it_compared(tmp_path):
    runs = [(tmp_path / "rtx_4090" / "sweep-old.json", document("sweep"))]
    check = verify_labs.against_recorded(document("sweep"), runs, 0.3)
    assert "TPOT at 6 points (output_sweep 3, prompt_sweep 3)" in check.detail
    assert "TTFT at prompts of 8,192 tokens" in check.detail  # 128 and 1,024: too short
    assert "same lab, GPU, model, weight format, vLLM version and driver major" in check.detail
    phases = [(tmp_path / "rtx_4090" / "phases-old.json", document("phases"))]
    check = verify_labs.against_recorded(document("phases"), phases, 0.3)
    assert "TPOT at 3 points (phases 3) and TTFT at prompts of 2,000 tokens" in check.detail


def test_short_prompts_ttft_which_is_host_cpu_time_is_not_compared(tmp_path):
    recorded = document("sweep")
    runs = [(tmp_path / "rtx_4090" / "sweep-old.json", recorded)]
    other_host = document("sweep")
    for m in other_host["measurements"]:
        if m["prompt_tokens"] < verify_labs.LONG_PROMPT:
            m["ttft_s"] *= 2  # a slower host CPU: +10 ms on a ~20 ms TTFT
            m["wall_s"] += m["ttft_s"] / 2
    assert verify_labs.against_recorded(other_host, runs, 0.3).status == "PASS"
    slower_prefill = document("sweep", prefill_per_token=2e-4)  # long-prompt TTFT x2
    check = verify_labs.against_recorded(slower_prefill, runs, 0.3)
    assert check.status == "FAIL" and "TTFT prompt_sweep prompt 8192 new 32: x1.99" in check.detail


@pytest.mark.parametrize(
    ("change", "differs"),
    [
        (lambda d: d["device"].update(driver="570.86.10"), "driver major 570 vs 580"),
        (lambda d: d["software"].update(vllm="0.27.0"), "vLLM version 0.27.0 vs 0.26.0"),
        (lambda d: d["model"].update(quantization=None), "weight format bf16 vs awq"),
        (lambda d: d["model"].update(id="Qwen/Qwen2.5-7B-Instruct"), "model Qwen/Qwen2.5-7B"),
    ],
)
def test_runs_are_compared_only_with_the_same_software_and_weights(tmp_path, change, differs):
    runs = [(tmp_path / "rtx_4090" / "sweep-old.json", document("sweep"))]
    new = document("sweep", step=0.02)  # twice as slow: would fail if compared
    change(new)
    check = verify_labs.against_recorded(new, runs, 0.3)
    assert check.status == "SKIP", check
    assert f"sweep-old.json: {differs}" in check.detail


def test_vllms_names_for_one_weight_format_are_the_same_format(tmp_path):
    recorded = document("sweep")
    recorded["model"]["quantization"] = "awq_marlin"  # an older release's name for AWQ
    runs = [(tmp_path / "rtx_4090" / "sweep-old.json", recorded)]
    assert verify_labs.against_recorded(document("sweep"), runs, 0.3).status == "PASS"


def test_the_report_exits_non_zero_on_a_failed_claim(tmp_path, capsys):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(document("phases")), encoding="utf-8")
    bad.write_text(json.dumps(document("sweep", prefill_per_token=0.0)), encoding="utf-8")
    empty = tmp_path / "no-recorded-runs"
    empty.mkdir()
    assert verify_labs.main([str(good), "--results-dir", str(empty)]) == 0
    assert verify_labs.main([str(good), str(bad), "--results-dir", str(empty)]) == 1
    out = capsys.readouterr().out
    assert "FAIL  TTFT grows with prompt length" in out and "result: FAIL (1 failed" in out


# ---------------------------------------------------------------- the lesson's table of runs


def record(tmp_path: Path, doc: dict, name: str) -> Path:
    results = tmp_path / "labs" / "results"
    path = results / doc["device"]["slug"] / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return results


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [("zh", "目前还没有记录在案的 GPU 运行"), ("en", "No GPU run is recorded yet")],
)
def test_without_recorded_runs_the_page_says_so(tmp_path, capsys, lang, sentence):
    (tmp_path / "labs" / "results").mkdir(parents=True)
    lab_results.main(lang, tmp_path / "labs" / "results")
    assert capsys.readouterr().out.startswith(sentence)


# Qwen2.5-7B-Instruct, written out from its config.json
H, VOCAB, KAPPA = 3584, 152064, 2 * 28 * 4 * 128 * 2
LAYER_MATMUL = 28 * (2 * H * H + 2 * H * 512 + 3 * H * 18944)  # the 7 matrices of every layer
AWQ_BYTES = 5_570_747_392  # the checkpoint's weights in GPU memory (tests/test_core.py)


def long_prompt_cells(out: str) -> list[str]:
    line = next(line for line in out.splitlines() if "long prompt" in line)
    return [c.strip() for c in line.strip("|").split("|")]


def test_a_recorded_run_is_shown_with_provenance_and_lower_bounds(tmp_path, capsys):
    results = record(tmp_path, document("phases"), "phases-20261129T120000Z.json")
    lab_results.main("en", results)
    out = capsys.readouterr().out
    assert "RTX 4090 (NVIDIA GeForce RTX 4090, driver 580.95.05, CUDA 13.0)" in out
    assert "vLLM 0.26.0 · torch 2.11.0" in out and "2026-11-30" in out
    assert "· labs/results/rtx_4090/phases-20261129T120000Z.json" in out
    cells = long_prompt_cells(out)
    # RTX 4090, S = 2000: compute-bound, (2 x layer matmuls x S + 2 x lm_head once) / 165.2 TFLOP/s
    assert cells[4] == f"{(2 * LAYER_MATMUL * 2000 + 2 * VOCAB * H) / 165.2e12 * 1e3:,.1f}"
    # 7 decode steps over contexts 2000..2006 (mean 2003); AWQ weights as loaded, without the
    # input embedding table but with one row of it: (W - 2V h + 2h + kappa c) / 1008 GB/s
    streamed = AWQ_BYTES - 2 * VOCAB * H + 2 * H
    assert cells[6] == f"{(streamed + KAPPA * 2003) / 1008e9 * 1e3:,.1f}"
    assert "Lower bounds, not predictions" in out


@pytest.mark.parametrize("quantization", ["awq", "awq_marlin", "auto_awq"])
def test_every_name_vllm_gives_awq_gets_the_awq_bounds(tmp_path, capsys, quantization):
    doc = document("phases")
    doc["model"]["quantization"] = quantization
    assert model_for(doc)[1] == checkpoint_format(load_model("qwen2.5-7b-instruct-awq"))
    lab_results.main("en", record(tmp_path, doc, "phases.json"))
    cells = long_prompt_cells(capsys.readouterr().out)
    assert cells[6] == f"{(AWQ_BYTES - 2 * VOCAB * H + 2 * H + KAPPA * 2003) / 1008e9 * 1e3:,.1f}"


@pytest.mark.parametrize("model_id", ["Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b-instruct"])
def test_a_bf16_run_gets_the_bf16_bounds(tmp_path, capsys, model_id):
    # a real run names its Hugging Face repo; a dummy run names its config folder
    doc = document("phases")
    doc["model"].update(id=model_id, quantization=None, dtype="bfloat16")
    spec, fmt = model_for(doc)
    assert (spec.key, fmt) == ("qwen2.5-7b-instruct", BF16)
    lab_results.main("en", record(tmp_path, doc, "phases.json"))
    cells = long_prompt_cells(capsys.readouterr().out)
    streamed = 2 * 7_615_616_512 - 2 * VOCAB * H + 2 * H  # BF16: 2 bytes per parameter
    assert cells[6] == f"{(streamed + KAPPA * 2003) / 1008e9 * 1e3:,.1f}"


@pytest.mark.parametrize(
    ("model_id", "quantization"),
    [
        ("tiny-qwen2", None),  # the labs' tiny dummy model: no course model file
        ("Qwen/Qwen2.5-7B-Instruct", "awq"),  # AWQ weights of a model the course has in BF16
        ("someone/other-model", None),
    ],
)
def test_a_model_the_course_cannot_bound_gets_no_bound(tmp_path, capsys, model_id, quantization):
    doc = document("phases")
    doc["model"].update(id=model_id, quantization=quantization)
    assert model_for(doc) is None
    lab_results.main("en", record(tmp_path, doc, "phases.json"))
    cells = long_prompt_cells(capsys.readouterr().out)
    assert cells[4] == cells[6] == "—" and cells[3] != "—"


def test_a_gpu_without_specs_gets_no_bound(tmp_path, capsys):
    doc = document("sweep")
    doc["device"].update(name="NVIDIA Future GPU", slug="future_gpu")
    lab_results.main("zh", record(tmp_path, doc, "sweep.json"))
    out = capsys.readouterr().out
    assert "| prompt 扫描 | 8,192 | 32 |" in out
    assert "| — |" in out and "没有下界" in out


def test_an_awq_run_on_cuda_gets_the_awq_lower_bound(tmp_path, capsys):
    # the model block as the lab writes it when vLLM on CUDA reports "auto_awq"
    common = verify_labs.labkit
    spec = common.resolve_model(common.DEFAULT_MODEL, False, None)
    config = SimpleNamespace(
        quantization="auto_awq", dtype="torch.float16", get_vocab_size=lambda: 152064
    )
    doc = document("phases")
    doc["model"] = common.model_record(spec, config)
    lab_results.main("en", record(tmp_path, doc, "phases-20261129T120000Z.json"))
    many = next(line for line in capsys.readouterr().out.splitlines() if "many new" in line)
    bound_ms = float([c.strip() for c in many.strip("|").split("|")][6])
    # (W - 2E + kappa c) / 1008 GB/s with AWQ's ~5.57e9 bytes: ~4.4 ms, not BF16's ~14.0 ms
    assert bound_ms == pytest.approx(4.4, abs=0.1)


# ---------------------------------------------------------------- labs found by convention


def test_every_lab_folder_declares_claims_schema_and_smoke_runs():
    folders = verify_labs.lab_folders()
    assert [f.name for f in folders][:2] == ["prefill_decode", "batched_decode"]
    scripts = set(verify_labs.lab_scripts())
    smoked = set()
    for folder in folders:
        claims = verify_labs.claims_module(folder.name)
        fragment = json.loads((folder / "schema.json").read_text(encoding="utf-8"))
        assert set(fragment["labs"]) == set(claims.CLAIMS), folder
        smoked |= {f"{folder.name}/{Path(s.script).stem}" for s in claims.SMOKE}
    assert smoked == scripts  # every lab script has a CPU smoke run
    # a folder under labs/ with a script but no lesson, or no claims.py, would be silently skipped
    lessons = set(verify_labs.lesson_slugs())
    with_scripts = {p.parent for p in (ROOT / "labs").glob("*/*.py")}
    engine_free = {ROOT / "labs" / slug for slug in verify_labs.ENGINE_FREE_LABS}
    assert with_scripts == set(folders) | engine_free, "labs/<slug>/ needs a lesson and a claims.py"
    assert not engine_free & set(folders), "an engine-free lab has no vLLM claims"
    assert {f.name for f in engine_free} <= lessons
    assert {f.name for f in folders} <= lessons


NEW_LAB_CLAIMS = """
from labkit import Check, Claims, Smoke

def counted(doc):
    n = len(doc["measurements"])
    return [Check("PASS" if n == doc["parameters"]["calls"] else "FAIL", "completeness", str(n))]

CLAIMS = {"demo": Claims(counted, lambda doc: [Check("PASS", "fast", "")], "CPU run: slow")}
SMOKE = (Smoke("demo.py", ("--config", "tiny")),)
"""
NEW_LAB_SCHEMA = {
    "labs": {
        "demo": {
            "parameters": {"$ref": "#/$defs/demo_parameters"},
            "measurement": {"$ref": "#/$defs/measurement"},
            "series": ["demo"],
        }
    },
    "$defs": {
        "demo_parameters": {"required": ["calls"], "properties": {"calls": {"type": "integer"}}}
    },
}


@pytest.fixture
def new_lab(tmp_path, monkeypatch):
    """A lab added the documented way only: its folder (script, claims.py, schema.json) and the
    lesson's manifest entry; nothing central edited."""
    labs = tmp_path / "labs"
    folder = labs / "demo_lesson"
    folder.mkdir(parents=True)
    (folder / "demo.py").write_text("print('demo')\n", encoding="utf-8")
    (folder / "claims.py").write_text(NEW_LAB_CLAIMS, encoding="utf-8")
    (folder / "schema.json").write_text(json.dumps(NEW_LAB_SCHEMA), encoding="utf-8")
    manifest = tmp_path / "lessons.yml"
    manifest.write_text(
        "section: {zh: 课程, en: Lessons}\nparts:\n  - {key: p, zh: P, en: P}\nlessons:\n"
        "  - {slug: demo_lesson, part: p, zh: 演示, en: Demo, learn_zh: 演示, learn_en: Demo}\n"
        "  - {slug: no_lab, part: p, zh: 无, en: None, learn_zh: 无, learn_en: None}\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(verify_labs, "LABS", labs)
    monkeypatch.setattr(verify_labs, "MANIFEST", manifest)


def test_a_new_lab_is_found_checked_and_validated_by_convention(new_lab):
    assert verify_labs.lab_scripts(verify_labs.MANIFEST) == ["demo_lesson/demo"]
    m = measurement("demo", 8, 4)
    doc = results_doc("demo", {"max_model_len": 64, "calls": 1}, [m], device=TEST_CPU)
    checks = verify_labs.checks_for(doc, [], 0.3)
    assert checks[0].status == "PASS", checks[0].detail
    assert [(c.status, c.name) for c in checks] == [
        ("PASS", "structure"),
        ("PASS", "completeness"),
        ("SKIP", "timing claims"),
    ]
    doc["parameters"]["calls"] = "one"  # the lab's own schema part applies
    assert "parameters.calls" in verify_labs.checks_for(doc, [], 0.3)[0].detail
    doc["lab"] = "phases"  # the course's labs are not in this manifest
    assert verify_labs.checks_for(doc, [], 0.3)[0].status == "FAIL"


# ---------------------------------------------------------------- --run goes on after a failure


def test_run_goes_on_after_a_failed_lab_and_says_which_failed(tmp_path, monkeypatch, capsys):
    labs = tmp_path / "labs" / "x"
    labs.mkdir(parents=True)
    (labs / "broken.py").write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    writes = "import sys\nopen(sys.argv[sys.argv.index('--out') + 1], 'w').write('{}')\n"
    (labs / "ok.py").write_text(writes, encoding="utf-8")
    monkeypatch.setattr(verify_labs, "LABS", tmp_path / "labs")
    monkeypatch.setattr(verify_labs, "lab_arguments", lambda opts: {"x/broken": [], "x/ok": []})
    empty = tmp_path / "recorded"
    empty.mkdir()
    status = verify_labs.main(
        ["--run", "--out-dir", str(tmp_path / "out"), "--results-dir", str(empty)]
    )
    out = capsys.readouterr().out
    assert status == 1
    assert "labs/x/broken.py failed" in out
    assert "x-ok.json" in out  # the lab after the failed one ran, and its results were checked
    assert "1 of 2 labs ran, failed: x/broken" in out
