"""labs/calibration, an engine-free lab (PyTorch only): the reference loop and machine roofline.

The runs use .venv-labs (it has torch); the pre-flight and the core's comparison are checked with
the site's Python, which has no torch on purpose.
"""

import json
import subprocess
import sys
from dataclasses import replace

import jsonschema
import pytest

from conftest import ROOT
from core.formats import BF16
from core.gpus import load_gpu
from core.measured import compare, floor, measured_gpu
from core.models import load_models, params
from core.roofline import tpot_bound, ttft_bound
from labs_env import lab_environment, require_labs_python

LAB = ROOT / "labs" / "calibration"
SCHEMA = json.loads((LAB / "schema.json").read_text(encoding="utf-8"))


def run(python, script: str, *args, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(python), str(LAB / script), *map(str, args)],
        cwd=ROOT,
        env=lab_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# ---------------------------------------------------------------- with torch (.venv-labs)

COUNT = """
import json, torch
import reference_model as m
from core.models import load_models
from reference_loop import model_spec
specs = {k: s for k, s in load_models().items() if s.quantization is None}
specs["tiny"] = model_spec("tiny")
meta = torch.device("meta")
counts = {k: m.parameter_count(m.build(s, 8, torch.bfloat16, meta)) for k, s in specs.items()}
print(json.dumps(counts))
"""


def test_the_pytorch_model_has_exactly_the_cores_parameter_count(tmp_path):
    """Built on the meta device (no memory): every 16-bit model of the core, and the CI config."""
    # `python -c` imports from its working directory: the lab's folder, as when a script runs
    proc = subprocess.run(
        [str(require_labs_python()), "-c", COUNT],
        cwd=LAB,
        env=lab_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    counted = json.loads(proc.stdout)
    expected = {k: params(s) for k, s in load_models().items() if s.quantization is None}
    assert {k: counted[k] for k in expected} == expected
    # the CI config by hand: d=128, 2 layers, 2 heads of 64 (1 KV head), MLP 256, vocab 1024, untied
    q, kv, o, mlp, norms = 128 * 128 + 128, 2 * (128 * 64 + 64), 128 * 128, 3 * 128 * 256, 2 * 128
    assert counted["tiny"] == 2 * (q + kv + o + mlp + norms) + 2 * 1024 * 128 + 128
    assert "qwen2.5-0.5b-instruct" in expected  # the model the recorded CPU run uses


@pytest.mark.labs_smoke
def test_machine_roofline_smoke_run_writes_valid_results(tmp_path):
    out = tmp_path / "calibration.json"
    proc = run(
        require_labs_python(), "machine_roofline.py", "--model", "tiny", "--smoke", "--out", out
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    doc = json.loads(out.read_text(encoding="utf-8"))
    jsonschema.validate(doc, SCHEMA)
    assert [(m["phase"], m["tokens"]) for m in doc["measurements"]] == [
        ("prefill", 8),
        ("prefill", 16),
        ("decode", 16),
        ("decode", 16),
    ]
    assert doc["machine"]["bandwidth_gbs"] > 0 and doc["machine"]["bf16_tflops"] > 0
    assert "share" in proc.stdout and "results:" in proc.stdout


# ---------------------------------------------------------------- pre-flight (no torch needed)


def test_without_torch_the_preflight_says_so_and_writes_nothing(tmp_path):
    out = tmp_path / "r.json"
    proc = run(sys.executable, "reference_loop.py", "--model", "tiny", "--smoke", "--out", out)
    assert proc.returncode == 1
    assert "pre-flight: PyTorch is not installed" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_a_run_that_does_not_fit_is_refused_before_anything_is_allocated(tmp_path):
    out = tmp_path / "r.json"
    proc = run(
        require_labs_python(),
        "reference_loop.py",
        "--model",
        "qwen2.5-7b-instruct",
        "--batches",
        "4096",
        "--context",
        "32000",
        "--out",
        out,
    )
    assert proc.returncode == 1, proc.stdout
    assert "pre-flight: the run needs about" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()


def test_a_quantized_or_unknown_model_is_refused_by_name():
    python = require_labs_python()
    awq = run(python, "reference_loop.py", "--model", "qwen2.5-7b-instruct-awq", "--smoke")
    assert awq.returncode == 1 and "16-bit weights only" in awq.stderr
    unknown = run(python, "reference_loop.py", "--model", "no-such-model", "--smoke")
    assert unknown.returncode == 1 and "no model 'no-such-model'" in unknown.stderr


# ---------------------------------------------------------------- the core's comparison

MACHINE = {
    "name": "Test CPU",
    "slug": "cpu_test",
    "memory_bytes": 8 * 2**30,
    "date": "2026-12-03",
    "bandwidth_gbs": 20.0,
    "bf16_tflops": 0.5,
}


def test_a_measured_machine_becomes_the_cores_gpu():
    gpu = measured_gpu(MACHINE)
    assert gpu.bandwidth_bytes == 20e9 and gpu.peak_flops == 0.5e12
    assert gpu.memory_bytes == 8 * 2**30 and "2026-12-03" in gpu.source


def test_floors_are_the_lessons_bounds_on_the_measured_machine():
    gpu, model = measured_gpu(MACHINE), load_models()["qwen2.5-7b-instruct"]
    assert floor(gpu, model, "prefill", 1, 512) == ttft_bound(gpu, model, 512, BF16)
    assert floor(gpu, model, "decode", 8, 1024) == tpot_bound(gpu, model, 1024, BF16, 8)
    with pytest.raises(ValueError, match="phase"):
        floor(gpu, model, "train", 1, 1)
    # twice the bandwidth halves a memory-bound floor; an H100's datasheet gives another one
    faster = replace(gpu, memory_bandwidth_gbs=40.0)
    assert floor(faster, model, "decode", 1, 1024).seconds == pytest.approx(
        floor(gpu, model, "decode", 1, 1024).seconds / 2
    )
    assert floor(load_gpu("h100_sxm"), model, "decode", 1, 1024) != floor(
        gpu, model, "decode", 1, 1024
    )


def test_share_is_floor_over_measured():
    gpu, model = measured_gpu(MACHINE), load_models()["qwen2.5-7b-instruct"]
    bound = floor(gpu, model, "decode", 1, 1024).seconds
    (c,) = compare(
        gpu, model, [{"phase": "decode", "batch": 1, "tokens": 1024, "median_s": 4 * bound}]
    )
    assert c.share == pytest.approx(0.25) and c.bound_by == "memory"
