"""CPU smoke run of the max_num_seqs lab (labs/continuous_batching/max_num_seqs.py).

Random weights, the tiny Qwen2 config, a 16-request stream served with max_num_seqs 1 and 8 (one
engine each, in child processes): proves the lab draws the stream, serves every request with its
exact output length, reads the request metrics and writes results that verify_labs.py accepts on
structure. CPU timings prove nothing about the lesson.
Select with `pytest -m labs_smoke`; needs .venv-labs (`make labs-env`).
"""

import json

import pytest

from conftest import ROOT
from labs_env import run_lab, verify

pytestmark = pytest.mark.labs_smoke

ARGS = [
    "--config",
    "tiny",
    "--values",
    "1,8",
    "--requests",
    "16",
    "--prompt-tokens",
    "32",
    "--mean-output",
    "8",
    "--max-output",
    "32",
]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("lab-results") / "max_num_seqs.json"
    return out, run_lab(ROOT / "labs" / "continuous_batching" / "max_num_seqs.py", ARGS, out)


def test_every_request_is_served_with_its_drawn_output_length(smoke):
    out, stdout = smoke
    assert "stream: 16 requests, 32-token prompts" in stdout
    doc = json.loads(out.read_text(encoding="utf-8"))
    lengths = doc["parameters"]["output_lengths"]
    assert len(lengths) == 16 and max(lengths) <= 32
    for value in (1, 8):
        got = sorted(
            m["new_tokens"] for m in doc["measurements"] if m["label"] == f"max_num_seqs {value}"
        )
        assert got == sorted(lengths)
    assert [s["max_num_seqs"] for s in doc["max_num_seqs_summaries"]] == [1, 8]


def test_verify_labs_passes_the_smoke_results_on_structure_only(smoke):
    out, _ = smoke
    proc = verify(out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS  completeness" in proc.stdout
    assert "SKIP  timing claims: CPU run" in proc.stdout
